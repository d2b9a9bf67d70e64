"""Delivering the outbox: one task per delivery, at least once, and a sweep for lost ones
(docs/contract.md, 'Publishing and the outbox').

Each attempt is taken with a conditional ``UPDATE ... WHERE status='pending' AND attempts=n AND
next_attempt_at <= now`` (the row count says who won), which also pushes ``next_attempt_at`` a lease
ahead: a worker killed mid-request leaves a pending row that the sweep sends again once the lease
is over. A failure schedules the next attempt with exponential backoff; after
``DELIVERY_MAX_ATTEMPTS`` the row is dead-lettered (``failed``) for a person to retry. The receiver
gets the delivery's ``key`` as ``Idempotency-Key`` on every attempt, so it can drop duplicates.

Task names are kept from before the concerns had a package each, so queued messages still run.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from reviewer.models import Delivery, DeliveryChannel, StatusSnapshot
from reviewer.outbox import anchor
from reviewer.outbox.channels import DeliveryFailed, NotSent, send

log = logging.getLogger("agents.deliveries")

MAX_ERROR_CHARS = 500
EARLY = timedelta(seconds=1)
LOST = "the worker was lost during the last attempt"


def backoff(attempts: int) -> timedelta:
    """The wait after the ``attempts``-th failed attempt: base, 2x base, 4x base, ... up to the cap."""
    seconds = settings.DELIVERY_BACKOFF_SECONDS * 2 ** max(attempts - 1, 0)
    return timedelta(seconds=min(seconds, settings.DELIVERY_BACKOFF_MAX_SECONDS))


def take_attempt(delivery_pk: int) -> Delivery | None:
    """Take the next attempt of a due delivery, or None when it is not due, done, or taken."""
    now = timezone.now()
    row = Delivery.objects.filter(pk=delivery_pk).values("attempts").first()
    if row is None:
        return None
    if row["attempts"] >= settings.DELIVERY_MAX_ATTEMPTS:
        # Every attempt was taken and the last one never reported back (its worker died): dead letter.
        Delivery.objects.due(now + EARLY).filter(pk=delivery_pk, attempts=row["attempts"]).update(
            status=Delivery.Status.FAILED, last_error=LOST)
        return None
    # A countdown may fire a moment before the row's own clock says it is due.
    won = Delivery.objects.due(now + EARLY).filter(pk=delivery_pk, attempts=row["attempts"]).update(
        attempts=F("attempts") + 1, next_attempt_at=now + timedelta(seconds=settings.DELIVERY_LEASE_SECONDS))
    if not won:
        return None
    # The subscriber is read now, after the attempt was taken: one who unsubscribed before is not sent to.
    return (Delivery.objects.select_related("channel", "update", "update__incident", "update__published_by",
                                            "subscriber")
            .prefetch_related("update__component_statuses__component").get(pk=delivery_pk))


def attempt(delivery_pk: int) -> str:
    """One delivery attempt; returns what happened (``delivered``, ``retry``, ``failed``, ``not sent``, or
    ``skipped`` when there was no attempt to take)."""
    delivery = take_attempt(delivery_pk)
    if delivery is None:
        return "skipped"
    try:
        send(delivery)
    except NotSent as why:  # final: a person's retry would not send it either
        Delivery.objects.filter(pk=delivery.pk, status=Delivery.Status.PENDING).update(
            status=Delivery.Status.SKIPPED, last_error=str(why))
        return "not sent"
    except DeliveryFailed as error:
        return _failed(delivery, str(error))
    except Exception as error:  # a bug must not leave the row pending for ever: count it as a failure
        log.exception("delivery %s failed unexpectedly", delivery.key)
        return _failed(delivery, f"unexpected error: {type(error).__name__}")
    delivered = Delivery.objects.filter(pk=delivery.pk, status=Delivery.Status.PENDING).update(
        status=Delivery.Status.DELIVERED, delivered_at=timezone.now(), last_error="")
    if delivered and delivery.channel.kind == DeliveryChannel.Kind.STATUS:
        StatusSnapshot.objects.outdate()  # the update is public now: the status page shows it
    return "delivered"


def _failed(delivery: Delivery, error: str) -> str:
    error = error[:MAX_ERROR_CHARS]
    pending = Delivery.objects.filter(pk=delivery.pk, status=Delivery.Status.PENDING, attempts=delivery.attempts)
    if delivery.attempts >= settings.DELIVERY_MAX_ATTEMPTS:
        pending.update(status=Delivery.Status.FAILED, last_error=error)
        log.warning("delivery %s dead-lettered after %s attempts: %s", delivery.key, delivery.attempts, error)
        return "failed"
    wait = backoff(delivery.attempts)
    pending.update(last_error=error, next_attempt_at=timezone.now() + wait)
    deliver.apply_async((delivery.pk,), countdown=wait.total_seconds())
    return "retry"


@shared_task(name="reviewer.tasks.deliver", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def deliver(delivery_pk: int) -> str:
    return attempt(delivery_pk)


@shared_task(name="reviewer.tasks.sweep_deliveries", ignore_result=True)
def sweep_deliveries() -> int:
    """Enqueue every pending delivery that has been due for a lease period without being claimed:
    its message was lost (a killed worker, a countdown held in a dead worker's memory, a crash
    between commit and enqueue) or its attempt's worker died. Moving ``next_attempt_at`` to now
    keeps the next sweep from enqueueing it again before another lease period has passed."""
    now = timezone.now()
    stale = now - timedelta(seconds=settings.DELIVERY_LEASE_SECONDS)
    lost = list(Delivery.objects.due(stale).values_list("pk", flat=True)[:1000])
    for pk in lost:
        if Delivery.objects.due(stale).filter(pk=pk).update(next_attempt_at=now):
            transaction.on_commit(lambda pk=pk: deliver.delay(pk))
    return len(lost)


@shared_task(name="reviewer.tasks.anchor_ledger", bind=True, ignore_result=True, max_retries=3)
def anchor_ledger(self) -> str:
    """Send the ledger's head hash out (reviewer.outbox.anchor); retried, then left to the next hour."""
    try:
        sent = anchor.send_head()
    except DeliveryFailed as error:
        log.warning("the ledger's head was not anchored: %s", error)
        raise self.retry(countdown=60) from None
    return "sent" if sent else "not configured"

"""Delivering the outbox: one task per delivery, and a sweep for lost ones (docs/contract.md,
'Publishing and the outbox'; the guarantees per channel in docs/publishing.md, 'Delivery guarantees').

Each attempt is taken with a conditional ``UPDATE ... WHERE status='pending' AND attempts=n AND
next_attempt_at <= now`` (the row count says who won), which also pushes ``next_attempt_at`` a lease
ahead: a worker killed mid-request leaves a pending row that the sweep sends again once the lease
is over. A failure schedules the next attempt with exponential backoff; after
``DELIVERY_MAX_ATTEMPTS`` the row is dead-lettered (``failed``) for a person to retry. The receiver
gets the delivery's ``key`` as ``Idempotency-Key`` on every attempt, so it can drop duplicates: the
webhook and the status page are delivered at least once.

Email, the subscribers' emails and Slack cannot drop a duplicate, so they are delivered at most once
(a webhook subscriber drops duplicates by the key, so it gets at least once, as the webhook does):
the attempt is committed as ``sending`` before the send starts. The receiver's answer (an SMTP 250
after DATA, an HTTP 2xx) is kept on the worker's disk the moment it arrives (``reviewer.outbox.answers``),
then the outcome is written to the database (tried again while the database is unreachable, with
short waits, until the attempt's lease ends; the send is never repeated for it). A failure where the
message did not leave is retried as above. Held (``held``) for a person to send again or mark as sent
means unknown: the message may have left and no answer came (a timeout, a connection dropped after
the message was written), or a ``sending`` row's lease ended with no answer kept on disk nor in the
database (the sweep finds it within ``SWEEP_SECONDS``, after writing the answers kept on disk). Every
row keeps the evidence of its last attempt: what the receiver said, when, and the attempt's number.

Task names are kept from before the concerns had a package each, so queued messages still run.
"""

from __future__ import annotations

import contextlib
import logging
import time
from datetime import timedelta

from celery import shared_task
from django import db
from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from reviewer.celery import enqueue_on_commit
from reviewer.models import Delivery, DeliveryChannel, StatusSnapshot
from reviewer.outbox import anchor, answers
from reviewer.outbox.channels import DeliveryFailed, MayHaveBeenSent, NotSent, RateLimited, send

log = logging.getLogger("agents.deliveries")

MAX_ERROR_CHARS = 500
EARLY = timedelta(seconds=1)
LOST = "the worker was lost during the last attempt"
UNRECORDED = "the send may have gone out: its outcome was never recorded (the worker or the database was lost)"
NO_ANSWER = "no answer recorded: the worker or the database was lost while the send was under way"
IN_FLIGHT = (Delivery.Status.PENDING, Delivery.Status.SENDING, Delivery.Status.HELD)
RECORD_FIRST_WAIT, RECORD_MAX_WAIT = 0.5, 2.0  # seconds between tries to record an outcome
# How long one try waits for a pooled connection: the workers' pool waits DATABASE_POOL_TIMEOUT (30 s),
# which would let a lease hold one or two tries.
RECORD_CONNECTION_WAIT = 2.0
pause = time.sleep  # the waits between those tries (tests count them instead)
clock = time.monotonic  # the lease's clock in this worker (tests move it instead)


def backoff(attempts: int) -> timedelta:
    """The wait after the ``attempts``-th failed attempt: base, 2x base, 4x base, ... up to the cap."""
    seconds = settings.DELIVERY_BACKOFF_SECONDS * 2 ** max(attempts - 1, 0)
    return timedelta(seconds=min(seconds, settings.DELIVERY_BACKOFF_MAX_SECONDS))


def take_attempt(delivery_pk: int) -> Delivery | None:
    """Take the next attempt of a due delivery, or None when it is not due, done, or taken.

    On a channel sent at most once the row becomes ``sending`` in the same committed update, before
    anything is sent: a worker that dies, or cannot record the outcome, leaves a row the sweep holds
    for a person instead of sending it again."""
    now, lease_ends = timezone.now(), clock() + settings.DELIVERY_LEASE_SECONDS
    row = Delivery.objects.filter(pk=delivery_pk).values("attempts", "channel__kind", "subscriber__kind").first()
    if row is None:
        return None
    if row["attempts"] >= settings.DELIVERY_MAX_ATTEMPTS:
        # Every attempt was taken and the last one never reported back (its worker died): dead letter.
        Delivery.objects.due(now + EARLY).filter(pk=delivery_pk, attempts=row["attempts"]).update(
            status=Delivery.Status.FAILED, last_error=LOST)
        return None
    once = DeliveryChannel.at_most_once(row["channel__kind"], row["subscriber__kind"])
    # A countdown may fire a moment before the row's own clock says it is due.
    won = Delivery.objects.due(now + EARLY).filter(pk=delivery_pk, attempts=row["attempts"]).update(
        attempts=F("attempts") + 1, next_attempt_at=now + timedelta(seconds=settings.DELIVERY_LEASE_SECONDS),
        status=Delivery.Status.SENDING if once else Delivery.Status.PENDING)
    if not won:
        return None
    # The subscriber is read now, after the attempt was taken: one who unsubscribed before is not sent to.
    delivery = (Delivery.objects.select_related("channel", "update", "update__incident", "update__published_by",
                                                "subscriber")
                .prefetch_related("update__component_statuses__component").get(pk=delivery_pk))
    delivery.lease_ends = lease_ends  # on this worker's clock: recording the outcome stops there
    return delivery


def attempt(delivery_pk: int) -> str:
    """One delivery attempt; returns what happened (``delivered``, ``retry``, ``failed``, ``held``, ``not
    sent``, ``unrecorded`` when the outcome could not be written, or ``skipped`` when there was no attempt
    to take)."""
    delivery = take_attempt(delivery_pk)
    if delivery is None:
        return "skipped"
    once = DeliveryChannel.at_most_once(delivery.channel.kind, delivery.subscriber and delivery.subscriber.kind)
    answer: dict = {}

    def answered(said: str) -> None:
        # First of all, before anything that can fail: on disk when this channel cannot take a duplicate.
        kept = answers.keep(delivery.pk, delivery.attempts, said) if once else None
        answer.update(kept or answers.evidence(said, delivery.attempts))

    try:
        send(delivery, answered)
    except NotSent as why:  # final: a person's retry would not send it either
        reason = str(why)
        return _record(delivery, "not sent", lambda: _this_attempt(delivery).update(
            status=Delivery.Status.SKIPPED, last_error=reason))
    except RateLimited as error:  # nothing was taken; the destination says when to come back
        return _failed(delivery, str(error), wait_at_least=_pause_destination(delivery, error.retry_after))
    except MayHaveBeenSent as error:
        if answer:  # it had answered that it took the message: what broke afterwards changes nothing
            return _delivered_now(delivery, answer)
        if once:
            return _held(delivery, f"{error} (it may have been sent)")
        return _failed(delivery, str(error))  # at least once: the receiver drops a repeated key
    except DeliveryFailed as error:
        return _failed(delivery, str(error))
    except Exception as error:  # a bug must not leave the row pending for ever
        log.exception("delivery %s failed unexpectedly", delivery.key)
        if answer:
            return _delivered_now(delivery, answer)
        if once:  # nobody knows whether it left
            return _held(delivery, f"unexpected error: {type(error).__name__} (it may have been sent)")
        return _failed(delivery, f"unexpected error: {type(error).__name__}")
    return _delivered_now(delivery, answer)


def _delivered_now(delivery: Delivery, answer: dict) -> str:
    """Write ``delivered`` with the receiver's answer; once the database has it, the answer's copy on
    disk goes. Should the database stay unreachable for the whole lease, the copy stays: the sweep
    writes it, and the row is never held for it."""
    outcome = _record(delivery, "delivered", lambda: _delivered(delivery, answer))
    if outcome == "delivered":
        answers.forget(delivery.pk, delivery.attempts)
    elif answer.get("recorded"):
        log.warning("delivery %s: its answer (%s) is kept on disk; the sweep records it", delivery.key,
                    answer["said"])
    return outcome


def _this_attempt(delivery: Delivery):
    """The row, as long as this attempt still holds it (no sweep, person or later attempt took it since)."""
    return Delivery.objects.filter(pk=delivery.pk, status=delivery.status, attempts=delivery.attempts)


def _delivered(delivery: Delivery, answer: dict) -> int:
    # Also from held: the send did go out, only its outcome came late (a slow database).
    delivered = Delivery.objects.filter(pk=delivery.pk, status__in=IN_FLIGHT).update(
        status=Delivery.Status.DELIVERED, delivered_at=timezone.now(), last_error="", evidence=answer)
    if delivered and delivery.channel.kind == DeliveryChannel.Kind.STATUS:
        StatusSnapshot.objects.outdate()  # the update is public now: the status page shows it
    return delivered


def _held(delivery: Delivery, error: str) -> str:
    log.warning("delivery %s held: %s", delivery.key, error)

    def hold():
        # next_attempt_at: when it was held (a held row is never due); ops' channels hear of it once.
        now = timezone.now()
        if _this_attempt(delivery).update(status=Delivery.Status.HELD, last_error=error[:MAX_ERROR_CHARS],
                                          next_attempt_at=now,
                                          evidence=answers.evidence(error, delivery.attempts, now)):
            tell_ops_held(delivery.pk)

    return _record(delivery, "held", hold)


def tell_ops_held(delivery_pk: int) -> None:
    """Once a delivery became held: ops' notification channels are told, after commit
    (``reviewer.alerts`` sends it; enqueued by name, as the imports run the other way)."""
    enqueue_on_commit("reviewer.tasks.notify_held", delivery_pk, robust=True)


def _pause_destination(delivery: Delivery, seconds: float) -> timedelta:
    """A destination that answered 429 with ``Retry-After``: its channel's other pending deliveries
    wait as long too (at most ``DELIVERY_BACKOFF_MAX_SECONDS``), so nothing more goes to it before
    then. Their messages already queued find them not due and do nothing; the sweep sends them
    again once due. Returns the pause."""
    pause = timedelta(seconds=min(seconds, settings.DELIVERY_BACKOFF_MAX_SECONDS))
    if pause:
        until = timezone.now() + pause
        Delivery.objects.filter(channel_id=delivery.channel_id, status=Delivery.Status.PENDING,
                                next_attempt_at__lt=until).exclude(pk=delivery.pk).update(next_attempt_at=until)
    return pause


def _failed(delivery: Delivery, error: str, wait_at_least: timedelta = timedelta(0)) -> str:
    """A failed attempt whose message did not leave (or may be sent again): back off (at least
    ``wait_at_least``), or dead-letter."""
    error = error[:MAX_ERROR_CHARS]
    if delivery.attempts >= settings.DELIVERY_MAX_ATTEMPTS:
        log.warning("delivery %s dead-lettered after %s attempts: %s", delivery.key, delivery.attempts, error)
        return _record(delivery, "failed", lambda: _this_attempt(delivery).update(
            status=Delivery.Status.FAILED, last_error=error))
    wait = max(backoff(delivery.attempts), wait_at_least)
    outcome = _record(delivery, "retry", lambda: _this_attempt(delivery).update(
        status=Delivery.Status.PENDING, last_error=error, next_attempt_at=timezone.now() + wait))
    if outcome == "retry":
        deliver.apply_async((delivery.pk,), countdown=wait.total_seconds())
    return outcome


def _record(delivery: Delivery, outcome: str, write) -> str:
    """Write an attempt's outcome with ``write``, trying again while the database is unreachable until
    the attempt's lease ends (then the sweep decides: sent again if it was a pending row, held if it
    was ``sending``). Each try waits at most ``RECORD_CONNECTION_WAIT`` for a connection, and the
    tries are half a second apart, doubling up to ``RECORD_MAX_WAIT``: a database back within the
    lease gets the outcome within seconds. The send itself is never repeated here."""
    deadline = getattr(delivery, "lease_ends", None) or clock() + settings.DELIVERY_LEASE_SECONDS
    wait, waited = RECORD_FIRST_WAIT, 0.0
    while True:
        try:
            _connect_within(min(RECORD_CONNECTION_WAIT, max(deadline - clock(), 0.1)))
            write()
            return outcome
        except db.Error as error:
            # The pauses alone never outlast a lease, whatever the clock says.
            if clock() + wait >= deadline or waited + wait > settings.DELIVERY_LEASE_SECONDS:
                log.error("delivery %s: could not record %r before its lease ended: %s", delivery.key, outcome,
                          error)
                return "unrecorded"
            log.warning("delivery %s: recording %r failed (%s); trying again in %.1f s", delivery.key, outcome,
                        type(error).__name__, wait)
            _drop_connection()
            pause(wait)
            waited += wait
            wait = min(wait * 2, RECORD_MAX_WAIT)


def _connect_within(seconds: float) -> None:
    """Make sure this thread has a connection, waiting at most ``seconds`` for the pool (PostgreSQL);
    raises ``db.OperationalError`` when none came. Without a pool, or with a connection, nothing to do."""
    wrapper = db.connection
    pool = getattr(wrapper, "pool", None)
    if pool is None or wrapper.connection is not None:
        return
    with wrapper.wrap_database_errors:
        pool.open()
        # Taken and handed back at once: Django's own request for it comes next and finds it ready.
        pool.putconn(pool.getconn(timeout=seconds))


def _drop_connection() -> None:
    """Give up a connection the database dropped, so the next try takes a fresh one, and throw away
    the pool's idle connections that died with the server: otherwise the next request checks them
    one by one, pausing 1 s, 2 s, 4 s, ... between them (psycopg_pool), for longer than a lease. A
    connection inside a transaction belongs to that transaction: it is left alone."""
    if not db.connection.in_atomic_block:
        with contextlib.suppress(db.Error):
            db.connection.close()
    pool = getattr(db.connection, "pool", None)
    if pool is not None:
        with contextlib.suppress(Exception):  # a pool closed meanwhile: nothing to throw away
            pool.check()


@shared_task(name="reviewer.tasks.deliver", acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def deliver(delivery_pk: int) -> str:
    return attempt(delivery_pk)


@shared_task(name="reviewer.tasks.sweep_deliveries", ignore_result=True)
def sweep_deliveries() -> int:
    """Enqueue every pending delivery that has been due for a lease period without being taken:
    its message was lost (a killed worker, a countdown held in a dead worker's memory, a crash
    between commit and enqueue) or its attempt's worker died. Moving ``next_attempt_at`` to now
    keeps the next sweep from enqueueing it again before another lease period has passed.

    First the answers kept on disk are written (``reviewer.outbox.answers``): an attempt the receiver
    answered is delivered, whatever happened to its worker or to the database since. Then a
    ``sending`` row whose lease ended is held (``held``) for a person: its worker died or could not
    record the outcome (it stops trying when the lease ends), no answer was kept, and its message may
    have gone out. An outcome that comes later still turns a held row into delivered, never into a
    send. Returns how many deliveries it enqueued."""
    answers.replay()
    now = timezone.now()
    stale = now - timedelta(seconds=settings.DELIVERY_LEASE_SECONDS)
    # A send at most once whose outcome never came back: it may have gone out, so it is held, never resent.
    # Row by row, so each row that this sweep holds (and only those) is told to ops once.
    held = 0
    for pk, attempt in Delivery.objects.filter(status=Delivery.Status.SENDING, next_attempt_at__lte=now).values_list(
            "pk", "attempts")[:1000]:
        if Delivery.objects.filter(pk=pk, status=Delivery.Status.SENDING, next_attempt_at__lte=now).update(
                status=Delivery.Status.HELD, last_error=UNRECORDED, next_attempt_at=now,
                evidence=answers.evidence(NO_ANSWER, attempt, now)):
            held += 1
            tell_ops_held(pk)
    if held:
        log.warning("%s deliveries held: their sends may have gone out, their outcomes were never recorded", held)
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


@shared_task(name="reviewer.tasks.sweep_maintenance", ignore_result=True)
def sweep_maintenance() -> int:
    """Sent by beat: scheduled maintenance's reminders and its moves at its times (idempotent)."""
    from reviewer.outbox.maintenance import advance

    return advance()

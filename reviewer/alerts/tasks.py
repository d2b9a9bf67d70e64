"""Celery tasks of escalation deadlines and notifications: ``sweep_deadlines`` (Celery beat) takes each
escalation's reminder and breach once; ``notify_opened`` tells the channels about a new escalation;
``send_notification`` sends one notification with retries and exponential backoff, recording every
failure on its row and never raising into the worker.

Task names are kept from before the concerns had a package each, so queued messages still run.
"""

from __future__ import annotations

from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from reviewer.alerts import deadlines, notifications
from reviewer.celery import enqueue_on_commit
from reviewer.models import Delivery, Notification, NotificationChannel

NOTIFICATION_RETRIES = 4  # five attempts in all: retried after 10 s, 20 s, 40 s, 80 s
# A notification whose first attempt has not ended this long after it was made lost its message or its
# worker: far longer than a send (apprise gives up on a receiver within seconds) or the queue's wait.
FIRST_ATTEMPT_LOST_SECONDS = 30
# One whose retries have not ended this long after it was made lost a retry's message (a countdown is
# kept in the worker's memory): longer than all the retries' backoff.
RETRIES_LOST_SECONDS = 600
SENT_AGAIN = (f"its first attempt did not end within {FIRST_ATTEMPT_LOST_SECONDS} s (a lost message or worker): "
              "sent again")


@shared_task(name="reviewer.tasks.sweep_deadlines", ignore_result=True)
def sweep_deadlines() -> dict:
    """Reminders and breaches that are due, each once; "opened" notices whose message was lost. One
    sweep takes at most ``DEADLINE_SWEEP_BATCH`` of them, so it ends well within beat's 30 s; one
    that used its whole batch sends a follow-up at once for the rest."""
    counts = deadlines.sweep(timezone.now())
    if sum(counts.values()) >= settings.DEADLINE_SWEEP_BATCH:
        enqueue_on_commit("reviewer.tasks.sweep_deadlines")
    resend_pending()
    return counts


@shared_task(name="reviewer.tasks.notify_opened", ignore_result=True)
def notify_opened(escalation_pk: int) -> None:
    with transaction.atomic():
        if deadlines.take_event(escalation_pk, NotificationChannel.Event.OPENED, timezone.now()):
            notifications.enqueue(escalation_pk, NotificationChannel.Event.OPENED)


# max_retries=None: the row's own attempts bound the retries (NOTIFICATION_RETRIES), across redeliveries too.
@shared_task(name="reviewer.tasks.send_notification", bind=True, ignore_result=True, acks_late=True, max_retries=None)
def send_notification(self, notification_pk: int) -> str:
    """Send one notification. Safe twice: a sent or failed row is left alone. (Celery's Django fixup
    closes stale connections around each task in a worker.)"""
    row = Notification.objects.select_related("channel").filter(pk=notification_pk).first()
    if row is None or row.status != Notification.Status.PENDING:
        return "skipped"
    attempt = row.attempts + 1
    # Taken with a conditional update: of two messages for one row (the sweep's and a slow original),
    # one sends.
    if not Notification.objects.filter(pk=row.pk, status=Notification.Status.PENDING,
                                       attempts=row.attempts).update(attempts=attempt):
        return "skipped"
    try:
        notifications.send(row)
    except Exception as error:  # a failure is recorded, never raised into the worker
        failed = isinstance(error, notifications.NotificationFailed)
        text = str(error) if failed else f"{type(error).__name__}"
        final = attempt > NOTIFICATION_RETRIES or (failed and error.permanent)
        notifications.record_attempt(row.pk, error=text, final=final)
        notifications.log.warning("notification %s failed (attempt %d%s): %s", row.pk, attempt,
                    ", giving up" if final else "", text)
        if final:
            return "failed"
        raise self.retry(countdown=10 * 2 ** (attempt - 1)) from None
    notifications.record_attempt(row.pk)
    return "sent"


def resend_pending() -> int:
    """Send again the notifications whose message or worker was lost; returns how many.

    - one whose first attempt never ended (no error recorded) ``FIRST_ATTEMPT_LOST_SECONDS`` after it
      was made: its message was lost, or the worker that took it died (a breach notice must not wait
      for the broker's visibility timeout). It is sent again once, and says so on the row;
    - any still pending ``RETRIES_LOST_SECONDS`` after it was made: a retry's message was lost.

    The row's attempts bound the retries in all, and the task takes each attempt with a conditional
    update, so a slow original message and the sweep's never send one attempt twice."""
    now = timezone.now()
    pending = Notification.objects.filter(status=Notification.Status.PENDING)
    first = pending.filter(last_error="", created_at__lt=now - timedelta(seconds=FIRST_ATTEMPT_LOST_SECONDS))
    pks = list(first.values_list("pk", flat=True)[:500])
    pks = [pk for pk in pks if first.filter(pk=pk).update(last_error=SENT_AGAIN)]
    pks += list(pending.filter(created_at__lt=now - timedelta(seconds=RETRIES_LOST_SECONDS))
                .exclude(pk__in=pks).values_list("pk", flat=True)[:100])
    for pk in pks:
        send_notification.delay(pk)
    return len(pks)


@shared_task(name="reviewer.tasks.notify_held", ignore_result=True)
def notify_held(delivery_pk: int) -> int:
    """Tell ops' channels that a delivery is held, one message per channel (each retried on its own).
    Nothing to tell once a person decided it. Returns how many channels it sends to."""
    if not Delivery.objects.filter(pk=delivery_pk, status=Delivery.Status.HELD).exists():
        return 0
    channels = notifications.ops_channels()
    for channel in channels:
        send_held_notice.delay(delivery_pk, channel.pk)
    return len(channels)


@shared_task(name="reviewer.tasks.send_held_notice", bind=True, ignore_result=True, max_retries=NOTIFICATION_RETRIES)
def send_held_notice(self, delivery_pk: int, channel_pk: int) -> str:
    """One channel's notice of a held delivery, retried with backoff; a failure is logged, never raised."""
    delivery = (Delivery.objects.select_related("update__incident", "channel")
                .filter(pk=delivery_pk, status=Delivery.Status.HELD).first())
    channel = NotificationChannel.objects.filter(pk=channel_pk, active=True).first()
    if delivery is None or channel is None:
        return "skipped"
    try:
        notifications.send_to(channel, *notifications.held_message(delivery))
    except Exception as error:  # recorded in the log, never raised into the worker
        failed = isinstance(error, notifications.NotificationFailed)
        text = str(error) if failed else type(error).__name__
        final = self.request.retries >= NOTIFICATION_RETRIES or (failed and error.permanent)
        notifications.log.warning("notice of held delivery %s to channel %s failed%s: %s", delivery_pk,
                                  channel_pk, ", giving up" if final else "", text)
        if final:
            return "failed"
        raise self.retry(countdown=10 * 2 ** self.request.retries) from None
    return "sent"

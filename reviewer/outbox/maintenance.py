"""Scheduled maintenance (docs/status-page.md, 'Scheduled maintenance'): ops schedule a window, its
text passes the guard like a published update's, and the sweep (``advance``, sent by beat) moves it
to in progress and to completed at its times and reminds subscribers before it starts.

A move at its time tells no subscriber unless ops ticked "notify" when scheduling; what a person
writes (the announcement, an extension, a cancellation) is emailed to the subscribers of the
window's components. Each email is recorded (``MaintenanceNotice``) before it is sent, one per step
and subscriber, so a sweep run twice sends nothing twice (at most once, like every subscriber email).
"""

from __future__ import annotations

import logging
import uuid
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.core.mail import EmailMessage
from django.db import IntegrityError, models, transaction
from django.utils import timezone

from agents.core.guard import check_final_answer
from agents.core.policy import GuardRules
from reviewer.models import (
    Maintenance,
    MaintenanceNotice,
    MaintenanceStatus,
    MaintenanceUpdate,
    StatusComponent,
    StatusSnapshot,
    Subscriber,
    absolute_url,
    status_page_name,
)
from reviewer.outbox.channels import send_to_subscriber_url, slack_escaped

logger = logging.getLogger(__name__)

MAX_TEXT_CHARS = 2000
# How far back the sweep looks for an update whose emails a stopped process did not finish sending.
CATCH_UP = timedelta(hours=6)
# A title is a name, not a sentence: the checks of prose do not apply to it (as for an update's title).
NOT_FOR_TITLES = {"invalid_answer:malformed_text", "invalid_answer:uninformative",
                  "invalid_answer:unsupported_statement"}
# The words of the automatic moves: the product's, never a person's.
STARTED_TEXT = "The scheduled maintenance is in progress."
COMPLETED_TEXT = "The scheduled maintenance is completed."
# The guard's state for each window status (agents.core.guard.incident_claims.MAINTENANCE_STATES).
GUARD_STATE = {MaintenanceStatus.SCHEDULED: "scheduled", MaintenanceStatus.IN_PROGRESS: "in_progress",
               MaintenanceStatus.COMPLETED: "completed", MaintenanceStatus.CANCELLED: "completed"}


class MaintenanceRefused(Exception):
    """The window or its text cannot be published; the message says why, for ops."""


def _utc(value: datetime) -> str:
    return f"{value.astimezone(UTC):%Y-%m-%d %H:%M} UTC"


def guard_findings(text: str, status: str, *, title: str, components, starts_at: datetime,
                   ends_at: datetime) -> list[dict]:
    """The guard's findings on a window's text, as on a published update's: its facts are the window
    itself (components, start, end), its state the one the window will be in when the text is read."""
    names = ", ".join(c.name for c in components)
    facts = [f"Planned maintenance “{title}” of {names} from {_utc(starts_at)} to {_utc(ends_at)}."]
    context = {"incident": {"state": GUARD_STATE[status], "facts": facts}}
    rules = GuardRules()
    titled = check_final_answer(title, context, rules, max_answer_chars=MAX_TEXT_CHARS)
    findings = [{**v, "field": "title"} for v in titled.violations if v["check"] not in NOT_FOR_TITLES]
    result = check_final_answer(text, context, rules, max_answer_chars=MAX_TEXT_CHARS)
    return findings + [{**v, "field": "text"} for v in result.violations]


def _refuse_findings(findings: list[dict]) -> None:
    if findings:
        raise MaintenanceRefused("The guard stopped the text: " + " ".join(f["message"] for f in findings))


def _changed() -> None:
    StatusSnapshot.objects.outdate()


@transaction.atomic
def schedule(*, title: str, text: str, components: list[StatusComponent], starts_at: datetime, ends_at: datetime,
             actor=None, notify_moves: bool = False) -> Maintenance:
    """Publish a window as scheduled and announce it to its components' subscribers."""
    title, text = title.strip(), text.strip()
    if not title or not text:
        raise MaintenanceRefused("A maintenance needs a title and a text.")
    if not components:
        raise MaintenanceRefused("Choose the components the maintenance touches.")
    if ends_at <= starts_at:
        raise MaintenanceRefused("The maintenance must end after it starts.")
    if ends_at <= timezone.now():
        raise MaintenanceRefused("The maintenance must end in the future.")
    _refuse_findings(guard_findings(text, MaintenanceStatus.SCHEDULED, title=title, components=components,
                                    starts_at=starts_at, ends_at=ends_at))
    maintenance = Maintenance.objects.create(title=title, starts_at=starts_at, ends_at=ends_at, created_by=actor,
                                             notify_moves=notify_moves)
    maintenance.components.set(components)
    update = MaintenanceUpdate.objects.create(maintenance=maintenance, status=MaintenanceStatus.SCHEDULED,
                                              text=text, notified=True)
    transaction.on_commit(lambda: notify(update))
    _changed()
    return maintenance


@transaction.atomic
def post_update(maintenance: Maintenance, *, text: str, ends_at: datetime | None = None,
                cancel: bool = False) -> MaintenanceUpdate:
    """Extend a window (a later end) or cancel it, with a text subscribers are sent."""
    maintenance = Maintenance.objects.select_for_update().get(pk=maintenance.pk)
    if maintenance.status in (MaintenanceStatus.COMPLETED, MaintenanceStatus.CANCELLED):
        raise MaintenanceRefused("The maintenance is over; it cannot change any more.")
    text = text.strip()
    if not text:
        raise MaintenanceRefused("An update needs a text.")
    if ends_at is not None and (ends_at <= maintenance.starts_at or ends_at <= timezone.now()):
        raise MaintenanceRefused("The new end must be after the start and in the future.")
    status = MaintenanceStatus.CANCELLED if cancel else maintenance.status
    _refuse_findings(guard_findings(text, status, title=maintenance.title,
                                    components=list(maintenance.components.all()),
                                    starts_at=maintenance.starts_at, ends_at=ends_at or maintenance.ends_at))
    if ends_at is not None:
        maintenance.ends_at = ends_at
    if cancel:
        maintenance.status, maintenance.finished_at = MaintenanceStatus.CANCELLED, timezone.now()
    maintenance.save()
    update = MaintenanceUpdate.objects.create(maintenance=maintenance, status=maintenance.status, text=text,
                                              notified=True)
    transaction.on_commit(lambda: notify(update))
    _changed()
    return update


def _move(maintenance: Maintenance, status: str, text: str, now: datetime) -> MaintenanceUpdate | None:
    """One automatic move, conditional on the window still being where the sweep found it."""
    before = (MaintenanceStatus.SCHEDULED,) if status == MaintenanceStatus.IN_PROGRESS else (
        MaintenanceStatus.SCHEDULED, MaintenanceStatus.IN_PROGRESS)
    at = "started_at" if status == MaintenanceStatus.IN_PROGRESS else "finished_at"
    with transaction.atomic():
        if not Maintenance.objects.filter(pk=maintenance.pk, status__in=before).update(status=status, **{at: now}):
            return None  # another sweep moved it
        update = MaintenanceUpdate.objects.create(maintenance=maintenance, status=status, text=text, created_at=now,
                                                  automatic=True, notified=maintenance.notify_moves)
    if update.notified:
        notify(update)
    return update


def advance(now: datetime | None = None) -> int:
    """The sweep: send due reminders, then move every window whose time has come (a window whose
    whole span passed between two sweeps goes straight to completed). Returns the moves made."""
    now = now or timezone.now()
    remind(now)
    for update in MaintenanceUpdate.objects.filter(notified=True, created_at__gte=now - CATCH_UP):
        notify(update)  # only those not emailed yet: a web process may have stopped half-way
    moves = 0
    for maintenance in Maintenance.objects.filter(status=MaintenanceStatus.SCHEDULED, starts_at__lte=now,
                                                  ends_at__gt=now):
        moves += _move(maintenance, MaintenanceStatus.IN_PROGRESS, STARTED_TEXT, now) is not None
    for maintenance in Maintenance.objects.filter(
            status__in=(MaintenanceStatus.SCHEDULED, MaintenanceStatus.IN_PROGRESS), ends_at__lte=now):
        moves += _move(maintenance, MaintenanceStatus.COMPLETED, COMPLETED_TEXT, now) is not None
    if moves:
        _changed()
    return moves


def remind(now: datetime | None = None) -> int:
    """Remind subscribers of each window starting within MAINTENANCE_REMINDER_MINUTES, once."""
    now = now or timezone.now()
    soon = now + timedelta(minutes=settings.MAINTENANCE_REMINDER_MINUTES)
    sent = 0
    for maintenance in Maintenance.objects.filter(status=MaintenanceStatus.SCHEDULED, reminded_at__isnull=True,
                                                  starts_at__gt=now, starts_at__lte=soon):
        if Maintenance.objects.filter(pk=maintenance.pk, reminded_at__isnull=True).update(reminded_at=now):
            sent += _send_all(maintenance, None, MaintenanceNotice.Kind.REMINDER)
    return sent


def subscribers_of(maintenance: Maintenance):
    """The active subscribers of every update, and those who chose one of the window's public components;
    nobody for a window on an audience's components only (it is not on the public page)."""
    named = maintenance.components.public().values("pk")
    if not named.exists():
        return Subscriber.objects.none()
    return Subscriber.objects.active().filter(
        models.Q(components__isnull=True) | models.Q(components__in=named)).distinct()


def notify(update: MaintenanceUpdate) -> int:
    return _send_all(update.maintenance, update, MaintenanceNotice.Kind.UPDATE)


def _send_all(maintenance: Maintenance, update: MaintenanceUpdate | None, kind: str) -> int:
    sent = 0
    for subscriber in subscribers_of(maintenance):
        try:  # recorded before it is sent: a second run finds the row and sends nothing
            with transaction.atomic():
                MaintenanceNotice.objects.create(maintenance=maintenance, update=update, subscriber=subscriber,
                                                 kind=kind)
        except IntegrityError:
            continue
        try:
            _send(maintenance, update, subscriber)
        except Exception:  # at most once: recorded, not sent again; the others still go
            logger.exception("A maintenance email to subscriber %s was not sent", subscriber.pk)
            continue
        sent += 1
    return sent


def email_subject(maintenance: Maintenance, update: MaintenanceUpdate | None) -> str:
    step = "Reminder" if update is None else update.get_status_display()
    return f"[{status_page_name()}] {step}: {maintenance.title}"


def email_body(maintenance: Maintenance, update: MaintenanceUpdate | None, unsubscribe_url: str,
               medium: str = "email") -> str:
    lines = [maintenance.title, ""]
    if update is None:
        lines.append(f"Reminder: this maintenance starts at {_utc(maintenance.starts_at)}.")
    else:
        lines.append(f"Status: {update.get_status_display()}")
    lines += [f"Scheduled: {_utc(maintenance.starts_at)} to {_utc(maintenance.ends_at)}",
              "Components: " + ", ".join(c.name for c in maintenance.components.all() if c.public)]
    text = update.text if update is not None else maintenance.updates.order_by("created_at", "id").first().text
    lines += ["", text, "", f"Status page: {absolute_url('status')}",
              "", "-- ", f"You get this {medium} because you subscribed to {status_page_name()}.",
              f"Unsubscribe: {unsubscribe_url}"]
    return "\n".join(lines) + "\n"


def webhook_body(maintenance: Maintenance, update: MaintenanceUpdate | None, subscriber: Subscriber) -> dict:
    """A webhook subscriber's JSON of a window's step (or its reminder), with the unsubscribe link."""
    text = update.text if update is not None else maintenance.updates.order_by("created_at", "id").first().text
    return {"type": "maintenance_reminder" if update is None else "maintenance_update", "title": maintenance.title,
            "status": maintenance.status if update is None else update.status, "text": text,
            "scheduled_for": maintenance.starts_at.isoformat(), "scheduled_until": maintenance.ends_at.isoformat(),
            "components": [{"name": c.name} for c in maintenance.components.all()],
            "url": absolute_url("status"), "unsubscribe_url": subscriber.unsubscribe_url}


def _send(maintenance: Maintenance, update: MaintenanceUpdate | None, subscriber: Subscriber) -> None:
    if subscriber.kind != Subscriber.Kind.EMAIL:
        # The same key for a step and subscriber on every run, so a receiver can drop a duplicate.
        key = str(uuid.uuid5(uuid.NAMESPACE_URL, f"maintenance:{maintenance.pk}:{update.pk if update else 'reminder'}"
                                                  f":{subscriber.pk}"))
        if subscriber.kind == Subscriber.Kind.SLACK:
            url = subscriber.unsubscribe_url
            text = email_subject(maintenance, update) + "\n\n" + email_body(maintenance, update, url, "message")
            body = {"text": slack_escaped(text), "mrkdwn": False, "unfurl_links": False, "unfurl_media": False}
        else:
            body = webhook_body(maintenance, update, subscriber)
        return send_to_subscriber_url(subscriber, body, key)
    url = subscriber.unsubscribe_url
    headers = {"List-Unsubscribe": f"<{url}>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}
    EmailMessage(email_subject(maintenance, update), email_body(maintenance, update, url),
                 settings.DEFAULT_FROM_EMAIL, [subscriber.email], headers=headers).send()

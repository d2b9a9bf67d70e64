""""Not now": a lead snoozes a pending escalation until a time, without deciding it (docs/desk.md).

The inbox leaves it out until then and lists it under "Snoozed"; when the time comes it is back by
itself (the inbox compares ``snoozed_until`` with the clock: nothing has to run). Each snooze is a
:class:`~reviewer.models.Snooze` row (who, when, until when; who brought it back early), shown in the
escalation's history and recorded in the ledger (a ``snooze`` entry when it starts, another when a
lead ends it early). A snooze changes nothing else: the deadline, its reminders and its breach run
as before, and any lead may still decide it.
"""

from __future__ import annotations

from datetime import datetime, time, timedelta

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from reviewer.desk.decisions import DECIDE_PERMISSION, DecisionInvalid
from reviewer.ledger.events import record_snooze
from reviewer.models import Escalation, Snooze

# What the page offers: minutes from now, or "tomorrow" (09:00 the next day, in the lead's zone).
CHOICES = (("30", "30 minutes"), ("60", "1 hour"), ("120", "2 hours"), ("240", "4 hours"),
           ("tomorrow", "until tomorrow 09:00"))
LONGEST = timedelta(days=7)


def until_for(choice: str, now: datetime | None = None) -> datetime:
    """The time a choice of the page's list means, from ``now`` (in the active time zone)."""
    now = now or timezone.now()
    if choice == "tomorrow":
        local = timezone.localtime(now)
        return timezone.make_aware(datetime.combine(local.date() + timedelta(days=1), time(9)), local.tzinfo)
    if choice.isdigit() and choice in dict(CHOICES):
        return now + timedelta(minutes=int(choice))
    raise DecisionInvalid(f"“{choice[:40]}” is not a time to snooze until; choose one of the list.")


def snooze(escalation_pk: int, user, until: datetime) -> Snooze:
    """Leave a pending escalation out of the inbox until ``until`` (in the future, within 7 days)."""
    if not user.has_perm(DECIDE_PERMISSION):
        raise PermissionDenied("Only support leads can snooze escalations.")
    now = timezone.now()
    if until <= now:
        raise DecisionInvalid("Snooze until a time still to come.")
    if until > now + LONGEST:
        raise DecisionInvalid("Snooze for at most 7 days; decide it, or ask another lead to take it.")
    with transaction.atomic():
        if not Escalation.objects.filter(pk=escalation_pk, status=Escalation.Status.PENDING).update(
                snoozed_until=until):
            raise DecisionInvalid("This escalation is already decided; there is nothing to snooze.")
        _end_running(escalation_pk, user, now)  # a new snooze replaces the one running
        snooze = Snooze.objects.create(escalation_id=escalation_pk, by=user, at=now, until=until)
        record_snooze(snooze)
        return snooze


def _end_running(escalation_pk: int, user, now) -> None:
    """End by hand the snooze still running (recorded, each in the ledger)."""
    for running in Snooze.objects.filter(escalation_id=escalation_pk, ended_at__isnull=True, until__gt=now):
        running.ended_at, running.ended_by = now, user
        running.save(update_fields=["ended_at", "ended_by"])
        record_snooze(running)


def wake(escalation_pk: int, user) -> bool:
    """Bring a snoozed escalation back to the inbox now ("Back now"); False when it was not snoozed."""
    if not user.has_perm(DECIDE_PERMISSION):
        raise PermissionDenied("Only support leads can bring back a snoozed escalation.")
    now = timezone.now()
    with transaction.atomic():
        if not Escalation.objects.filter(pk=escalation_pk, snoozed_until__gt=now).update(snoozed_until=None):
            return False
        _end_running(escalation_pk, user, now)
    return True


def current(escalation: Escalation) -> Snooze | None:
    """The snooze that keeps the escalation out of the inbox now (None when none does)."""
    if not escalation.is_snoozed:
        return None
    return escalation.snoozes.select_related("by").filter(ended_at__isnull=True).order_by("-at").first()

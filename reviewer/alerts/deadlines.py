"""Deadlines of escalations, their reminders and breaches, and holding statements
(docs/contract.md, 'Deadlines and notifications').

An escalation gets its deadline when it opens, from the most specific :class:`DeadlineRule`. The
sweep (``reviewer.alerts.tasks.sweep_deadlines``, Celery beat) takes each event of an escalation once, by a
conditional ``UPDATE ... WHERE <field> IS NULL`` (the healthchecks ``sendalerts`` trick), a bounded batch
at a time (``DEADLINE_SWEEP_BATCH``): "opened"
(a safety net for a lost message), the reminder before the deadline and the breach. A breach is
recorded and notified; it never decides anything. When the incident has a holding statement an admin
approved, and it still passes the guard against the incident's current facts, ops are offered it to
publish instead.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from agents.core.guard import check_final_answer, strict_claims_for
from agents.core.inputs import control_character
from agents.core.policy import default_policy
from agents.models import Incident
from agents.policy_rows import load_policy
from reviewer.alerts import notifications
from reviewer.ledger import events as ledger
from reviewer.models import DeadlineBreach, DeadlineRule, Escalation, HoldingStatement, NotificationChannel
from reviewer.outbox import publishing

log = logging.getLogger(__name__)

Event = NotificationChannel.Event
# A freshly opened escalation is notified by the task its opening enqueues; the sweep only steps in
# for one whose message was lost (the embedded broker has no redelivery).
OPENED_GRACE = timedelta(minutes=1)
# ... and only for a day: escalations that waited before notifications existed are not announced late.
OPENED_WINDOW = timedelta(days=1)
# Time left under which an inbox row reads "due soon" when its rule has no reminder lead time.
DUE_SOON = timedelta(minutes=5)


class HoldingStatementRefused(Exception):
    """The holding statement cannot be approved or offered; the message says why (the guard's own)."""


def rule_for(severity: str, pipeline: str) -> DeadlineRule | None:
    """The most specific rule for an incident's severity and a pipeline: severity and pipeline, then
    severity alone, then pipeline alone, then the catch-all (both blank); None if no rule fits."""
    severity = (severity or "").strip().upper()
    fitting = DeadlineRule.objects.filter(Q(severity=severity) | Q(severity=""), Q(pipeline=pipeline) | Q(pipeline=""))
    return min(fitting, key=lambda rule: (rule.severity == "", rule.pipeline == ""), default=None)


def deadline_fields(run, opened_at: datetime) -> dict:
    """``deadline_at`` and ``remind_at`` for an escalation of ``run`` opened at ``opened_at``
    (both None when no rule fits: such an escalation waits without a deadline, as before)."""
    incident = run.incident if run.incident_id else None
    rule = rule_for(incident.severity if incident else "", run.pipeline)
    if rule is None:
        return {"deadline_at": None, "remind_at": None}
    deadline = opened_at + timedelta(minutes=rule.minutes)
    remind = deadline - timedelta(minutes=rule.reminder_minutes) if rule.reminder_minutes else None
    return {"deadline_at": deadline, "remind_at": remind}


# -- the sweep ------------------------------------------------------------------------------------------


EVENT_FIELDS = {Event.OPENED: "notified_at", Event.REMINDER: "reminded_at", Event.BREACH: "breached_at"}


def take_event(escalation_pk: int, event: str, now: datetime) -> bool:
    """Mark ``event`` as done for a pending escalation, once: True for the one caller that won."""
    field = EVENT_FIELDS[event]
    return bool(Escalation.objects.filter(pk=escalation_pk, status=Escalation.Status.PENDING, **{field: None})
                .update(**{field: now}))


def due(event: str, now: datetime):
    """Pending escalations with ``event`` to take, oldest deadline first."""
    pending = Escalation.objects.pending().order_by("deadline_at", "opened_at", "pk")
    if event == Event.OPENED:
        return pending.filter(notified_at=None, opened_at__lte=now - OPENED_GRACE, opened_at__gt=now - OPENED_WINDOW)
    if event == Event.REMINDER:
        return pending.filter(reminded_at=None, breached_at=None, remind_at__lte=now, deadline_at__gt=now)
    return pending.filter(breached_at=None, deadline_at__lte=now)


# The most urgent first: a sweep's batch goes to breaches before reminders, and to both before the
# "opened" safety net.
SWEEP_ORDER = (Event.BREACH, Event.REMINDER, Event.OPENED)


def sweep(now: datetime | None = None, batch: int | None = None) -> dict[str, int]:
    """Take and notify due events, at most ``batch`` (``DEADLINE_SWEEP_BATCH``) in all, oldest
    deadline first; record each breach. Returns how many of each. What the batch leaves is the next
    sweep's (the task sends a follow-up at once when a sweep used its whole batch).

    Nothing here changes an escalation's status: a deadline never approves (or rejects) anything.
    """
    now = now or timezone.now()
    budget = settings.DEADLINE_SWEEP_BATCH if batch is None else batch
    counts = dict.fromkeys((Event.OPENED, Event.REMINDER, Event.BREACH), 0)
    for event in SWEEP_ORDER:
        if budget > 0:
            counts[event] = _sweep_event(event, now, budget)
            budget -= counts[event]
    if counts[Event.BREACH]:
        log.warning("%d escalation deadline(s) breached", counts[Event.BREACH])
    return counts


def _sweep_event(event: str, now: datetime, limit: int) -> int:
    """Take up to ``limit`` due escalations for ``event`` and notify them, in one transaction and a
    fixed number of queries. PostgreSQL skips rows another sweep holds locked; where there are no
    row locks, the take's condition refuses a batch another sweep took part of, and it waits for
    the next sweep."""
    with transaction.atomic():
        pks = list(due(event, now).select_for_update(skip_locked=True).values_list("pk", flat=True)[:limit])
        if not pks:
            return 0
        if not take(event, pks, now):
            transaction.set_rollback(True)
            log.warning("another sweep took part of a batch of %d %s events; left for the next sweep", len(pks),
                        event)
            return 0
        if event == Event.BREACH:
            record_breaches(pks, now)
        notifications.enqueue_many(pks, event)
    return len(pks)


def take(event: str, pks: list[int], now: datetime) -> bool:
    """Mark ``event`` as done for the pending escalations ``pks`` by one conditional UPDATE: True when
    every one of them was still waiting for it (the caller rolls back otherwise)."""
    field = EVENT_FIELDS[event]
    won = Escalation.objects.filter(pk__in=pks, status=Escalation.Status.PENDING, **{field: None}).update(
        **{field: now})
    return won == len(pks)


def record_breaches(escalation_pks: list[int], now: datetime) -> list[DeadlineBreach]:
    """A breach row for each escalation that has none yet, offering its incident's holding statement if
    one still passes the guard, and its ledger entry; a fixed number of queries whatever their number.
    Returns the breaches recorded now."""
    recorded = set(DeadlineBreach.objects.filter(escalation_id__in=escalation_pks)
                   .values_list("escalation_id", flat=True))
    escalations = list(Escalation.objects.filter(pk__in=escalation_pks).exclude(pk__in=recorded)
                       .select_related("run__incident").order_by("pk"))
    incidents = {e.run.incident_id: e.run.incident for e in escalations if e.run.incident_id}
    offers = offerable_statements(list(incidents.values())) if incidents else {}
    DeadlineBreach.objects.bulk_create(
        [DeadlineBreach(escalation=e, deadline_at=e.deadline_at or now, at=now,
                        holding_statement=offers.get(e.run.incident_id)) for e in escalations],
        ignore_conflicts=True)
    breaches = list(DeadlineBreach.objects.filter(escalation__in=escalations, at=now).order_by("escalation_id"))
    ledger.record_breaches(breaches)
    return breaches


# -- holding statements ---------------------------------------------------------------------------------


def statement_policy():
    """The policy a holding statement is checked under: the active reflection policy, else its defaults."""
    try:
        return load_policy("reflection")
    except Exception:  # no active policy row: the defaults still guard
        return default_policy("reflection")


def guard_statement(incident: Incident, text: str, policy=None) -> dict:
    """The patch guard's final-answer checks of ``text`` against the incident's current facts, under
    the active reflection policy: the same checks a published update passed."""
    policy = policy or statement_policy()
    context = incident.context()
    result = check_final_answer(text, context, policy.guard, max_answer_chars=policy.max_answer_chars,
                                strict_claims=strict_claims_for(context))
    return {"ok": result.ok, "stop_reason": result.stop_reason, "violations": list(result.violations)}


def guard_message(check: dict) -> str:
    messages = "; ".join(v["message"] for v in check["violations"]) or check["stop_reason"] or ""
    return f"The guard refused the holding statement against the incident's current facts: {messages}"


def approve_holding_statement(statement: HoldingStatement, user) -> HoldingStatement:
    """Approve ``statement`` if it passes the guard against the incident's current facts, recording
    who, when, the facts' version and the guard's result; else :class:`HoldingStatementRefused`."""
    if found := control_character(statement.text):
        raise HoldingStatementRefused(f"The text contains a control character (U+{ord(found):04X}).")
    check = guard_statement(statement.incident, statement.text)
    if not check["ok"]:
        raise HoldingStatementRefused(guard_message(check))
    statement.approved_by, statement.approved_at = user, timezone.now()
    statement.approved_version = statement.incident.latest_version() or statement.incident.record_version(user)
    statement.guard = check
    return statement


def offerable_statement(incident: Incident) -> HoldingStatement | None:
    """The incident's newest approved holding statement if it still passes the guard against the
    incident's facts now (they may have changed since the admin approved it), else None."""
    return offerable_statements([incident]).get(incident.pk)


def offerable_statements(incidents: list[Incident]) -> dict[int, HoldingStatement | None]:
    """:func:`offerable_statement` for many incidents in a fixed number of queries (a list page)."""
    pks = {incident.pk for incident in incidents}
    offers: dict[int, HoldingStatement | None] = dict.fromkeys(pks)
    newest: dict[int, HoldingStatement] = {}
    for statement in HoldingStatement.objects.filter(incident__in=pks, approved_at__isnull=False):
        newest.setdefault(statement.incident_id, statement)  # Meta ordering: newest approval first
    if not newest:
        return offers
    policy = statement_policy()
    # The facts of now, read afresh (never a caller's cached rows), for all incidents in one query.
    for incident in Incident.objects.filter(pk__in=newest).prefetch_related("fact_rows"):
        statement = newest[incident.pk]
        if guard_statement(incident, statement.text, policy)["ok"]:
            offers[incident.pk] = statement
        else:
            log.warning("holding statement %s no longer passes the guard; not offered", statement.pk)
    return offers


def time_left(escalation: Escalation, now: datetime | None = None) -> timedelta | None:
    if escalation.deadline_at is None:
        return None
    return escalation.deadline_at - (now or timezone.now())


def urgency(escalation: Escalation, now: datetime | None = None) -> str:
    """``overdue``, ``due-soon`` (past its reminder, or within five minutes), ``on-time`` or ``""``
    (no deadline): the inbox row's class."""
    now = now or timezone.now()
    left = time_left(escalation, now)
    if left is None:
        return ""
    if left <= timedelta(0):
        return "overdue"
    if (escalation.remind_at and escalation.remind_at <= now) or left <= DUE_SOON:
        return "due-soon"
    return "on-time"


def publish_holding_statement(breach_pk: int, user):
    """Ops' one click on a breach: publish the incident's approved holding statement (through
    ``reviewer.outbox.publishing.publish``), once per breach. The statement is checked by the guard again,
    against the facts of now; the escalation itself stays pending for a lead. A statement that repeats
    the last update is refused (``NeedsConfirmation``): customers were told it already. Raises
    :class:`HoldingStatementRefused`, or ``publishing.PublishRefused`` / ``PermissionDenied``."""
    breach = DeadlineBreach.objects.select_related("escalation__run__incident", "published_by").get(pk=breach_pk)
    if breach.published_at is not None:
        who = breach.published_by.get_username() if breach.published_by else "someone"
        raise HoldingStatementRefused(f"The holding statement was already published for this breach, by {who}.")
    if breach.escalation.status != Escalation.Status.PENDING:
        raise HoldingStatementRefused("A lead decided the escalation meanwhile: publish the decided text instead.")
    incident = breach.escalation.run.incident
    statement = offerable_statement(incident) if incident is not None else None
    if statement is None:
        raise HoldingStatementRefused("No approved holding statement passes the guard against the incident's "
                                      "current facts; an admin must approve one in admin.")
    with transaction.atomic():
        won = DeadlineBreach.objects.filter(pk=breach_pk, published_at=None).update(
            published_at=timezone.now(), published_by=user, holding_statement=statement)
        if not won:
            raise HoldingStatementRefused("The holding statement was already published for this breach.")
        # The one click is the confirmation (an emergency has no form): the statement affects the
        # components the last update affects and those it names, and its impact is at least the
        # severity's; with none named, the status page says the components are not named yet.
        suggested = publishing.suggested_components(incident, statement.text)
        fields = publishing.PublicFields(components={c.pk: status for c, status in suggested.items()} or None,
                                         confirmed=frozenset({publishing.CONFIRM_IMPACT}))
        return publishing.publish(incident, statement.text, actor=user, fields=fields,
                                  reason=f"holding statement (deadline of escalation #{breach.escalation_id} "
                                         "breached)")

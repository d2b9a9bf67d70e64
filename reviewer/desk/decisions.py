"""People's decisions on escalations: approve, edit then approve, reject; taking and releasing.

Plain domain logic, no HTTP: the inbox views and the JSON API both call it. Each escalation is
decided exactly once by a conditional ``UPDATE ... WHERE status = 'pending'`` whose row count says
who won (the healthchecks ``sendalerts`` trick), so two leads clicking at the same moment need no
lock: one wins, the other is told who decided, and nothing is overwritten. Decisions are
append-only; nothing here updates or deletes one.

An escalation under a quorum (:mod:`reviewer.desk.approvals`) is approved by the approval that
completes it: each approval before it is counted and leaves the escalation pending, and an edit
replaces the text to approve instead of approving it. Under an approval rule only members of its
group approve or reject.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import timedelta

from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from agents import tracing
from agents.core.evidence import Mark, mark_facts
from agents.core.guard import check_final_answer, check_revision, guard_config
from agents.core.inputs import control_character
from agents.core.llm.client import effective_policy
from agents.core.llm.endpoints import redact
from agents.core.pipelines.requested_changes import run_requested_changes
from agents.core.policy import POLICY_CLASSES, TEXT_PIPELINES, ReflectionPolicy, TextPolicy
from agents.core.stops import opens_escalation
from agents.core.text import normalize, text_hash
from agents.models import PipelinePolicy
from agents.policy_rows import PolicyMissing, load_policy
from agents.slots import DatabaseSlots
from agents.tasks import llm_for, model_settings_record
from reviewer.alerts import notifications
from reviewer.alerts.deadlines import deadline_fields
from reviewer.celery import enqueue_on_commit
from reviewer.desk import approvals
from reviewer.ledger.events import record_decision
from reviewer.models import Approval, ChangeRequest, Decision, Escalation, NotificationChannel, PostIncidentReport
from reviewer.outbox import translations

DECIDE_PERMISSION = "reviewer.decide_escalation"
# The final decisions; "request_changes" is recorded by :func:`request_changes` and decides nothing,
# and "edit" is what "edit_approve" records under a quorum.
ACTIONS = {choice.value for choice in Decision.Action} - {"request_changes", "edit"}
INSTRUCTIONS_MAX_CHARS = 2000
REPORT_NEEDS_APPROVAL = ("A post-incident report: it passed every gate, and is published only once a person "
                         "approved it.")
JUSTIFICATION_NEEDED = "Approving despite guard violations needs a written justification."

# A person is not revising the model's draft: an unchanged text is simply an approval.
_NOT_FOR_PEOPLE = {"invalid_revised:no_changes"}


class DecisionInvalid(Exception):
    """The decision cannot be recorded as submitted; the message is for the person who sent it."""


class ChangeInFlight(DecisionInvalid):
    """Changes requested earlier are still being made: a second request is refused."""


@dataclass(frozen=True)
class Outcome:
    """``won``: this decision (or approval, or edit) was recorded; ``decision`` is None for an approval
    that counted without completing a quorum (``approval`` says which)."""
    won: bool
    escalation: Escalation
    decision: Decision | None = None
    approval: Approval | None = None


@dataclass(frozen=True)
class _Judged:
    """A decision as it will be recorded if it wins."""
    action: str  # an edit that changes nothing is an approval
    status: str  # the escalation's: "approved" or "rejected"
    final_text: str
    guard_results: dict
    # An edit records the policy its check used (the one that applies now); an approval or a
    # rejection of the blocked text, the run's snapshot it was blocked under.
    policy: dict
    note: str
    translation_hashes: dict | None = None  # an approval's: the set it covers (reviewer.outbox.translations)


def _text_policy(run) -> TextPolicy:
    """The policy snapshot the run executed under (defaults for a pipeline without text budgets)."""
    policy = POLICY_CLASSES.get(run.pipeline, ReflectionPolicy).from_dict(run.policy or {})
    return policy if isinstance(policy, TextPolicy) else ReflectionPolicy()


def policy_now(run) -> tuple[TextPolicy, dict]:
    """The policy a lead's edit is checked under: the pipeline's active policy as it is now (its
    budgets, restricted claims, regions), not the run's snapshot, since the edit is published now.
    Without an active policy, the run's snapshot, and the label says so. Returns the policy and a
    label recording which it was (``source``: "current" or "snapshot", and a sentence for the page)."""
    checked_at = timezone.now()
    row = None
    if run.pipeline in TEXT_PIPELINES:
        row = (PipelinePolicy.objects.filter(pipeline=run.pipeline, active=True)
               .only("pk", "name", "updated_at").first())
    if row is not None:
        try:
            policy = load_policy(run.pipeline)
        except PolicyMissing:  # deactivated between the two reads
            row = None
    if row is None:
        return _text_policy(run), {
            "source": "snapshot", "checked_at": checked_at.isoformat(),
            "text": f"the run's policy snapshot (no active {run.pipeline.replace('_', '-')} policy now)"}
    return policy, {
        "source": "current", "policy_id": row.pk, "name": row.name, "updated_at": row.updated_at.isoformat(),
        "checked_at": checked_at.isoformat(),
        "text": (f"the current policy “{row.name}” (#{row.pk}, updated {row.updated_at:%Y-%m-%d %H:%M} UTC) "
                 f"with the restricted claims and regions as of {checked_at:%Y-%m-%d %H:%M:%S} UTC")}


def guard_edit(escalation: Escalation, text: str, *, under: tuple[TextPolicy, dict] | None = None) -> dict:
    """Run a lead's edit through the patch guard against the run's context (docs/contract.md, 'The patch guard').

    The configuration of the policy that applies now (:func:`policy_now`; ``under`` passes one
    already read), without phrase rules: a person is not bound to the model's fix plan. The
    final-answer checks run too (a draft is not its own evidence), so an unsupported number
    the lead kept from the draft is shown, once. The result says which policy the check used.
    """
    run = escalation.run
    context = run.context or {}
    policy, label = under or policy_now(run)
    config = guard_config(policy, context)
    strict = config.strict_claims
    original = escalation.draft or escalation.candidate
    result = check_revision(original=original, revised=text, context=context, config=config)
    violations = [v for v in result.violations if v["check"] not in _NOT_FOR_PEOPLE]
    if normalize(text) and not any(v["check"].startswith("invalid_revised:") for v in violations):
        final = check_final_answer(text, context, policy.guard, max_answer_chars=policy.max_answer_chars,
                                   strict_claims=strict, goal=run.goal or "")
        seen = {(v["check"].split(":", 1)[1], (v["found"] or "").lower()) for v in violations}
        violations += [v for v in final.violations
                       if (v["check"].split(":", 1)[1], (v["found"] or "").lower()) not in seen]
    return {
        "ok": not violations,
        "violations": violations,
        "measurements": result.measurements,
        "original": "draft" if escalation.draft else "candidate",
        "policy": label,
    }


def open_escalation(sender, *, run, result, draft: str, **kwargs) -> None:
    """Open an escalation for a finished run that a person must decide, with its deadline; the
    notification channels are told once it commits.

    Connected to ``agents.signals.run_finished``, which is sent inside the transaction that stores
    the result: the escalation commits with it. ``get_or_create`` keeps a redelivered task harmless.
    """
    reason, candidate = result.escalation_reason or "", result.candidate or draft
    escalates = opens_escalation(result.stop_reason)
    if not escalates and (result.stop_reason != "success" or not result.answer):
        return
    report = PostIncidentReport.objects.filter(run=run).exists()
    if not escalates:
        if not report:
            return
        # A post-incident report that passed every gate still waits for a person's approval.
        reason, candidate = REPORT_NEEDS_APPROVAL, result.answer
    opened_at = timezone.now()
    # A report is written after the incident: the deadlines of live updates (and their breaches, which offer a
    # holding statement) do not apply to it.
    deadlines = {"deadline_at": None, "remind_at": None} if report else deadline_fields(run, opened_at)
    escalation, created = Escalation.objects.get_or_create(run=run, defaults={
        "stop_reason": result.stop_reason,
        "reason": reason,
        "draft": draft,
        "candidate": candidate,
        "guard": result.guard,
        "opened_at": opened_at,
        **deadlines,
        **approvals.approval_fields(run, result.stop_reason, result.guard),
    })
    if created:
        # Told after the commit, by a task: never in the run's transaction. robust: a broker that is
        # down must not fail the run's commit; the deadline sweep sends the notice instead.
        enqueue_on_commit("reviewer.tasks.notify_opened", escalation.pk, robust=True)
        if approvals.under_rule(escalation):  # a rule its group cannot meet from the start says so too
            approvals.tell_if_unmeetable([escalation.pk])


def _block_results(escalation: Escalation) -> dict:
    """The guard results of the block itself, recorded with an approval or a rejection."""
    guard = escalation.guard or {}
    if guard.get("source") == "change_request":  # the candidate is a requested revision the guard passed
        return {"ok": True, "source": "change_request", "change_request": guard.get("change_request"),
                "violations": [], "measurements": guard.get("measurements", {})}
    if guard.get("source") == "edit":  # the candidate is a lead's edit, under a quorum: what its check found
        return {"ok": not guard.get("violations"), "source": "edit", "edit": guard.get("decision"),
                "violations": guard.get("violations", []), "measurements": guard.get("measurements", {}),
                "policy": guard.get("policy")}
    return {"ok": False, "source": "block", "stop_reason": escalation.stop_reason,
            "violations": guard.get("violations", []), "measurements": guard.get("measurements", {})}


def _already_decided(escalation_pk: int) -> Outcome:
    return Outcome(won=False, escalation=Escalation.objects.select_related("decided_by").get(pk=escalation_pk))


def facts_changed_message(escalation: Escalation) -> str:
    return (f"The incident's facts changed since this draft ({escalation.facts_changed_text}). "
            "Confirm that the text still holds to approve it.")


def decide(escalation_pk: int, user, action: str, *, text: str = "", note: str = "",
           confirm_changed_facts: bool = False, text_version: int | None = None) -> Outcome:
    """Record a person's decision exactly once. Raises :class:`DecisionInvalid` for a decision that
    cannot stand as sent (:class:`approvals.ApprovalRefused` for an approval that cannot count);
    returns ``Outcome(won=False)`` when someone else decided first.

    Approving a text whose incident changed its facts since the run needs ``confirm_changed_facts``.
    The decision records the hash of the text approved, the incident version and the policy snapshot.
    Under a quorum, an approval counts and decides only when it completes the quorum, and an edit
    replaces the text to approve; ``text_version``, the version the person read, refuses an approval
    of a text that changed since."""
    _check_may_decide(user, action)
    escalation = Escalation.objects.select_related("run", "run__incident_version").get(pk=escalation_pk)
    if escalation.status != Escalation.Status.PENDING:
        return _already_decided(escalation_pk)  # don't judge a form for an escalation that is gone
    _refuse_control_characters(action, text, note)
    judged = _judge(escalation, action, text, note.strip())
    if judged.status == "approved":
        judged = _with_translations(escalation, judged)
    if judged.status == "approved" and escalation.facts_changes and not confirm_changed_facts:
        raise DecisionInvalid(facts_changed_message(escalation))
    counted = judged.status == "approved" and escalation.under_quorum  # add() checks the approver's group
    if approvals.under_rule(escalation) and not counted:
        # Under a rule its group decides: a rejection (or the one approval a rule asks) from outside it is refused.
        approvals.check_member(escalation, user, "reject" if judged.status == "rejected" else "approve")
    if counted:
        if judged.action == Decision.Action.EDIT_APPROVE:
            outcome = _record_edit(escalation_pk, user, judged, _incident_version(escalation))
        else:
            outcome = _count_approval(escalation_pk, user, note.strip(), _incident_version(escalation), text_version)
    else:
        outcome = _record_once(escalation_pk, user, judged, _incident_version(escalation))
    if outcome.won:
        # an approval that counted towards a quorum without completing it is a verdict too
        _trace_decision(escalation, outcome.decision.action if outcome.decision is not None else "approval")
    return outcome


def _trace_decision(escalation: Escalation, action: str) -> None:
    """With tracing on, the decision is an evaluation on the run's trace, once it is committed."""
    run = escalation.run
    if tracing.enabled() and run.trace_span:
        transaction.on_commit(lambda: tracing.record_evaluation(run.trace_span, run_id=run.pk,
                                                                escalation_id=escalation.pk, action=action))


def _check_may_decide(user, action: str) -> None:
    if not user.has_perm(DECIDE_PERMISSION):
        raise PermissionDenied("Only support leads can decide escalations.")
    if action not in ACTIONS:
        raise DecisionInvalid(f"Unknown action “{action}”: approve, edit_approve or reject.")


def _refuse_control_characters(action: str, text: str, note: str) -> None:
    # PostgreSQL cannot store a NUL (a 500 before), and no page should show the other controls.
    typed = [(note, "reason" if action == Decision.Action.REJECT else "justification")]
    if action == Decision.Action.EDIT_APPROVE:
        typed.append((text, "edited text"))
    for value, what in typed:
        if found := control_character(value):
            raise DecisionInvalid(f"The {what} contains a control character (U+{ord(found):04X}); "
                                  "remove it and try again.")


def _judge(escalation: Escalation, action: str, text: str, note: str) -> _Judged:
    """What the decision approves or rejects, and with which guard results (``note`` comes stripped)."""
    if action == Decision.Action.EDIT_APPROVE and normalize(text) == normalize(escalation.candidate):
        action = Decision.Action.APPROVE
    snapshot = escalation.run.policy or {}
    if action == Decision.Action.APPROVE:
        return _Judged(action, "approved", escalation.candidate, _block_results(escalation), snapshot, note)
    if action == Decision.Action.EDIT_APPROVE:
        return _judge_edit(escalation, action, text, note)
    if not note:
        raise DecisionInvalid("Rejecting needs a reason.")
    return _Judged(action, "rejected", "", _block_results(escalation), snapshot, note)


def _with_translations(escalation: Escalation, judged: _Judged) -> _Judged:
    """An approval covers the text and its translations: refused while one is stopped."""
    try:
        return replace(judged, translation_hashes=translations.set_hashes(escalation, judged.final_text))
    except translations.TranslationRefused as refused:
        raise DecisionInvalid(str(refused)) from None


def _judge_edit(escalation: Escalation, action: str, text: str, note: str) -> _Judged:
    if not normalize(text):
        raise DecisionInvalid("The edited text is empty. Reject the escalation instead, with a reason.")
    checked_under = policy_now(escalation.run)
    guard_results = guard_edit(escalation, text, under=checked_under)
    if guard_results["violations"] and not note:
        raise DecisionInvalid(JUSTIFICATION_NEEDED)
    return _Judged(action, "approved", text.strip(), guard_results, checked_under[0].to_dict(), note)


def _incident_version(escalation: Escalation):
    """The incident's version the decision is taken on (None for a run on no incident)."""
    incident = escalation.run.incident
    return incident.latest_version() if incident is not None else None


def _record_once(escalation_pk: int, user, judged: _Judged, version) -> Outcome:
    """The conditional UPDATE says who won; only the winner appends its decision."""
    now = timezone.now()
    with transaction.atomic():
        won = Escalation.objects.filter(pk=escalation_pk, status=Escalation.Status.PENDING).update(
            status=judged.status, decided_by=user, decided_at=now, final_text=judged.final_text)
        if not won:
            return _already_decided(escalation_pk)
        decision = Decision.objects.create(
            escalation_id=escalation_pk, actor=user, at=now, action=judged.action, final_text=judged.final_text,
            guard_results=judged.guard_results, note=judged.note, policy=judged.policy, incident_version=version,
            text_hash=text_hash(judged.final_text) if judged.final_text else "",
            translation_hashes=judged.translation_hashes or {})
        record_decision(decision)
        if judged.status == Escalation.Status.APPROVED:
            # Every door (page, API, bulk) decides here: ops' channels learn the text is ready to
            # publish. The rows commit with the decision; they are sent after the commit.
            notifications.enqueue(escalation_pk, NotificationChannel.Event.APPROVED)
    return Outcome(won=True, escalation=Escalation.objects.select_related("decided_by").get(pk=escalation_pk),
                   decision=decision)


def _count_approval(escalation_pk: int, user, note: str, version, seen_version: int | None) -> Outcome:
    """Count an approval under a quorum with the escalation's row locked, so simultaneous approvals
    count one after the other; the one that completes the quorum records the decision."""
    with transaction.atomic():
        escalation = approvals.lock(escalation_pk)
        if escalation.status != Escalation.Status.PENDING:
            return _already_decided(escalation_pk)
        approval, counted = approvals.add(escalation, user, seen_version=seen_version)
        if counted < escalation.required_approvals:
            return Outcome(won=True, escalation=_already_decided(escalation_pk).escalation, approval=approval)
        # Judged on the locked row: the text approved is the one the approvals are on.
        judged = _with_translations(escalation, _judge(escalation, Decision.Action.APPROVE, "", note))
        return replace(_record_once(escalation_pk, user, judged, version), approval=approval)


def _record_edit(escalation_pk: int, user, judged: _Judged, version) -> Outcome:
    """Under a quorum an edit is not an approval: it becomes the text to approve (by others), and the
    approvals of the text it replaces stop counting."""
    now = timezone.now()
    with transaction.atomic():
        escalation = approvals.lock(escalation_pk)
        if escalation.status != Escalation.Status.PENDING:
            return _already_decided(escalation_pk)
        decision = Decision.objects.create(
            escalation_id=escalation_pk, actor=user, at=now, action=Decision.Action.EDIT,
            final_text=judged.final_text, guard_results=judged.guard_results, note=judged.note, policy=judged.policy,
            incident_version=version, text_hash=text_hash(judged.final_text))
        record_decision(decision)
        guard = {**judged.guard_results, "source": "edit", "decision": decision.pk}
        approvals.reset(escalation_pk, because=approvals.EDITED, by=user, at=now,
                        candidate=judged.final_text, guard=guard, text_by=user)
    return Outcome(won=True, escalation=_already_decided(escalation_pk).escalation, decision=decision)


def take(escalation_pk: int, user) -> bool:
    """Take a pending escalation that nobody else holds. Taking is a courtesy: it never stops
    another lead from deciding."""
    free = Q(taken_by__isnull=True) | Q(taken_by=user)
    return bool(Escalation.objects.filter(free, pk=escalation_pk, status=Escalation.Status.PENDING)
                .update(taken_by=user, taken_at=timezone.now()))


def release(escalation_pk: int, user) -> bool:
    """Give back an escalation you took (someone else's stays theirs)."""
    return bool(Escalation.objects.filter(pk=escalation_pk, taken_by=user)
                .update(taken_by=None, taken_at=None))


# ---------------------------------------------------------------- request changes

CHANGE_LOST_AFTER = timedelta(minutes=10)
IN_FLIGHT_MESSAGE = ("Changes requested earlier are still being made by the model; wait for that revision, "
                     "then decide or request changes again.")


def request_changes(escalation_pk: int, user, instructions: str, *, enqueue: bool = True) -> ChangeRequest:
    """Record a lead's request for changes and queue the one revision it asks for. Not a decision:
    the escalation stays pending. Raises :class:`DecisionInvalid` for instructions that cannot
    stand, for a decided escalation, and while another request on it is in flight."""
    if not user.has_perm(DECIDE_PERMISSION):
        raise PermissionDenied("Only support leads can request changes.")
    instructions = (instructions or "").strip()
    if not instructions:
        raise DecisionInvalid("Write the changes you want: the model revises the text following them.")
    if found := control_character(instructions):
        raise DecisionInvalid(f"The instructions contain a control character (U+{ord(found):04X}); "
                              "remove it and try again.")
    if len(instructions) > INSTRUCTIONS_MAX_CHARS:
        raise DecisionInvalid(f"The instructions are {len(instructions)} characters long; "
                              f"at most {INSTRUCTIONS_MAX_CHARS} are allowed.")
    escalation = Escalation.objects.select_related("run").get(pk=escalation_pk)
    if escalation.status != Escalation.Status.PENDING:
        raise DecisionInvalid("This escalation is already decided; changes can no longer be requested.")
    # A request whose worker or message was lost would block the escalation for good: after
    # CHANGE_LOST_AFTER (far longer than a model call's whole budget) it is recorded as lost.
    now = timezone.now()
    escalation.change_requests.filter(status__in=ChangeRequest.IN_FLIGHT,
                                      requested_at__lt=now - CHANGE_LOST_AFTER).update(
        status=ChangeRequest.Status.FAILED, stop_reason="worker_lost", finished_at=now)
    if escalation.change_requests.filter(status__in=ChangeRequest.IN_FLIGHT).exists():
        raise ChangeInFlight(IN_FLIGHT_MESSAGE)
    _, label = policy_now(escalation.run)
    try:
        with transaction.atomic():
            decision = Decision.objects.create(
                escalation=escalation, actor=user, action=Decision.Action.REQUEST_CHANGES, note=instructions,
                policy=escalation.run.policy or {}, guard_results={"policy": label})
            record_decision(decision)
            # The lead asked for another text: approvals of this one stop counting.
            approvals.reset(escalation.pk, because=approvals.CHANGES_REQUESTED, by=user, at=decision.at)
            change = ChangeRequest.objects.create(
                escalation=escalation, decision=decision, requested_by=user, requested_at=decision.at,
                instructions=instructions, text_before=escalation.candidate)
            if enqueue:
                enqueue_on_commit("reviewer.tasks.execute_change_request", change.pk)
            _trace_decision(escalation, Decision.Action.REQUEST_CHANGES)
    except IntegrityError:  # another lead's request won the race for the one in-flight slot
        raise ChangeInFlight(IN_FLIGHT_MESSAGE) from None
    return change


def _call_record(record) -> dict:
    return {"stage": record.stage, "attempt": record.attempt, "try_number": record.try_number, "model": record.model,
            "latency_ms": round(record.latency_ms, 1), "prompt_tokens": record.prompt_tokens,
            "completion_tokens": record.completion_tokens, "outcome": record.outcome, "raw": record.raw[:4000],
            "error": record.error[:500]}


class _Collector:
    """Keeps what the core reports for a change request (steps come back in the result)."""

    def __init__(self):
        self.calls: list[dict] = []

    def on_step(self, run_id, entry) -> None:
        pass

    def on_model_call(self, run_id, record) -> None:
        self.calls.append(_call_record(redact(record)))


def make_requested_changes(change_pk: int, *, llm=None) -> ChangeRequest | None:
    """Run one change request (a worker calls this): the model revises the candidate following the
    instructions, the patch guard checks it under the policy that applies now, and the result is
    recorded on the request. A revision that passes becomes the escalation's candidate (the
    escalation stays pending for a decision); a model failure or a blocked revision leaves the
    escalation unchanged. Safe to call twice: the second call finds the request taken (None)."""
    if not ChangeRequest.objects.filter(pk=change_pk, status=ChangeRequest.Status.QUEUED).update(
            status=ChangeRequest.Status.RUNNING):
        return None
    change = ChangeRequest.objects.select_related("escalation", "escalation__run").get(pk=change_pk)
    escalation, run = change.escalation, change.escalation.run
    policy, label = policy_now(run)
    collector = _Collector()
    settings_record: dict = {}
    try:
        policy = effective_policy(policy, slots=DatabaseSlots())
        llm = llm or llm_for(policy)
        settings_record = model_settings_record(policy, llm)
        result = run_requested_changes(run.goal, run.context or {}, policy, llm, text=change.text_before,
                                       instructions=change.instructions, observer=collector,
                                       run_id=f"change-{change.pk}")
        result = redact(result)
    except ValueError as error:  # bad model settings: recorded, no request sent
        change.status, change.stop_reason = ChangeRequest.Status.FAILED, "llm_misconfigured"
        change.details = {"error": str(error)[:500]}
    else:
        revision = result.answer or result.candidate or ""
        change.revision, change.stop_reason = revision, result.stop_reason
        change.guard = result.guard
        change.trace, change.details = result.trace, {**result.details, "usage": result.usage}
        change.ok = result.ok
        change.status = ChangeRequest.Status.DONE if revision else ChangeRequest.Status.FAILED
    change.calls, change.policy = collector.calls, label
    change.details = {**change.details, "model_settings": settings_record}
    change.finished_at = timezone.now()
    fields = ("status", "revision", "ok", "stop_reason", "guard", "policy", "trace", "calls", "details",
              "finished_at")
    with transaction.atomic():
        # Only while still ours: a request given up as lost (see request_changes) stays as recorded.
        if not ChangeRequest.objects.filter(pk=change.pk, status=ChangeRequest.Status.RUNNING).update(
                **{name: getattr(change, name) for name in fields}):
            return ChangeRequest.objects.get(pk=change.pk)
        if change.ok:
            guard = {**(change.guard or {}), "ok": True, "source": "change_request", "change_request": change.pk}
            approvals.reset(escalation.pk, because=approvals.REVISED, by=change.requested_by, at=change.finished_at,
                            candidate=change.revision, guard=guard, text_by=change.requested_by)
    return change


def other_holder(escalation: Escalation, user):
    """The other lead who took what ``user`` would decide (None if none): taking never stops a
    decision, but nobody should overrule a colleague by accident, so every door asks for a
    "decide anyway" first (the desk's tick, the API's ``decide_anyway``)."""
    holder = escalation.taken_by
    if escalation.status != Escalation.Status.PENDING or holder is None or holder.pk == user.pk:
        return None
    return holder


def taken_by_other(escalation: Escalation, user) -> str:
    """The warning a lead gets on the desk before deciding an escalation another lead took ("" if none)."""
    holder = other_holder(escalation, user)
    if holder is None:
        return ""
    name = holder.get_full_name() or holder.username
    return f"{name} took this escalation. Tick “decide anyway” to decide it in their place."


def reject_many(escalation_pks: list[int], user, note: str) -> dict[str, list[int]]:
    """Reject the pending escalations ``escalation_pks`` with one reason; each is decided once, as
    :func:`decide` does. Returns the ids rejected and those already decided by then."""
    done: dict[str, list[int]] = {"rejected": [], "already_decided": []}
    for pk in escalation_pks:
        outcome = decide(pk, user, Decision.Action.REJECT, note=note)
        done["rejected" if outcome.won else "already_decided"].append(pk)
    return done


def fact_marks(escalation: Escalation, text: str | None = None) -> list[Mark]:
    """Every fact the text (the candidate by default) states, supported by a context fact or not, as
    the final-answer guard judges it under the run's policy (``agents.core.evidence``)."""
    run = escalation.run
    context = run.context or {}
    policy = _text_policy(run)
    strict = guard_config(policy, context).strict_claims
    return mark_facts(escalation.candidate if text is None else text, context, policy.guard, strict_claims=strict)

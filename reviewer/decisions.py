"""People's decisions on escalations (SPEC §7): approve, edit then approve, reject; claims.

Plain domain logic, no HTTP: the inbox views and the JSON API both call it. Each escalation is
decided exactly once by a conditional ``UPDATE ... WHERE status = 'pending'`` whose row count says
who won (the healthchecks ``sendalerts`` trick), so two leads clicking at the same moment need no
lock: one wins, the other is told who decided, and nothing is overwritten. Decisions are
append-only; nothing here updates or deletes one.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from agents.core.evidence import Mark, mark_facts
from agents.core.guard import check_final_answer, check_revision, guard_config
from agents.core.inputs import control_character
from agents.core.policy import POLICY_CLASSES, ReflectionPolicy, TextPolicy
from agents.core.stops import opens_escalation
from agents.core.text import normalize, text_hash
from reviewer.models import Decision, Escalation

DECIDE_PERMISSION = "reviewer.decide_escalation"
ACTIONS = {choice.value for choice in Decision.Action}
JUSTIFICATION_NEEDED = "Approving despite guard violations needs a written justification."

# A person is not revising the model's draft: an unchanged text is simply an approval.
_NOT_FOR_PEOPLE = {"invalid_revised:no_changes"}


class DecisionInvalid(Exception):
    """The decision cannot be recorded as submitted; the message is for the person who sent it."""


@dataclass(frozen=True)
class Outcome:
    won: bool
    escalation: Escalation
    decision: Decision | None = None


def _text_policy(run) -> TextPolicy:
    """The policy snapshot the run executed under (defaults for a pipeline without text budgets)."""
    policy = POLICY_CLASSES.get(run.pipeline, ReflectionPolicy).from_dict(run.policy or {})
    return policy if isinstance(policy, TextPolicy) else ReflectionPolicy()


def guard_edit(escalation: Escalation, text: str) -> dict:
    """Run a lead's edit through the patch guard against the run's context (SPEC §3.4, §7).

    The same configuration the pipeline used, without phrase rules: a person is not bound to the
    model's fix plan. The final-answer checks run too (§3.5.5: a draft is not its own evidence),
    so an unsupported number the lead kept from the draft is shown, once.
    """
    run = escalation.run
    context = run.context or {}
    policy = _text_policy(run)
    config = guard_config(policy, context)
    strict = config.strict_claims
    original = escalation.draft or escalation.candidate
    result = check_revision(original=original, revised=text, context=context, config=config)
    violations = [v for v in result.violations if v["check"] not in _NOT_FOR_PEOPLE]
    if normalize(text) and not any(v["check"].startswith("invalid_revised:") for v in violations):
        final = check_final_answer(text, context, policy.guard, max_answer_chars=policy.max_answer_chars,
                                   strict_claims=strict)
        seen = {(v["check"].split(":", 1)[1], (v["found"] or "").lower()) for v in violations}
        violations += [v for v in final.violations
                       if (v["check"].split(":", 1)[1], (v["found"] or "").lower()) not in seen]
    return {
        "ok": not violations,
        "violations": violations,
        "measurements": result.measurements,
        "original": "draft" if escalation.draft else "candidate",
    }


def open_escalation(sender, *, run, result, draft: str, **kwargs) -> None:
    """Open an escalation for a finished run that a person must decide (SPEC §7).

    Connected to ``agents.signals.run_finished``, which is sent inside the transaction that stores
    the result: the escalation commits with it. ``get_or_create`` keeps a redelivered task harmless.
    """
    if not opens_escalation(result.stop_reason):
        return
    Escalation.objects.get_or_create(run=run, defaults={
        "stop_reason": result.stop_reason,
        "reason": result.escalation_reason or "",
        "draft": draft,
        "candidate": result.candidate or draft,
        "guard": result.guard,
    })


def _block_results(escalation: Escalation) -> dict:
    """The guard results of the block itself, recorded with an approval or a rejection."""
    guard = escalation.guard or {}
    return {"ok": False, "source": "block", "stop_reason": escalation.stop_reason,
            "violations": guard.get("violations", []), "measurements": guard.get("measurements", {})}


def _already_decided(escalation_pk: int) -> Outcome:
    return Outcome(won=False, escalation=Escalation.objects.select_related("decided_by").get(pk=escalation_pk))


def facts_changed_message(escalation: Escalation) -> str:
    return (f"The incident's facts changed since this draft ({escalation.facts_changed_text}). "
            "Confirm that the text still holds to approve it.")


def decide(escalation_pk: int, user, action: str, *, text: str = "", note: str = "",
           confirm_changed_facts: bool = False) -> Outcome:
    """Record a person's decision exactly once. Raises :class:`DecisionInvalid` for a decision that
    cannot stand as sent; returns ``Outcome(won=False)`` when someone else decided first.

    Approving a text whose incident changed its facts since the run needs ``confirm_changed_facts``.
    The decision records the hash of the text approved, the incident version and the policy snapshot."""
    if not user.has_perm(DECIDE_PERMISSION):
        raise PermissionDenied("Only support leads can decide escalations.")
    if action not in ACTIONS:
        raise DecisionInvalid(f"Unknown action “{action}”: approve, edit_approve or reject.")
    escalation = Escalation.objects.select_related("run", "run__incident_version").get(pk=escalation_pk)
    if escalation.status != Escalation.Status.PENDING:
        return _already_decided(escalation_pk)  # don't judge a form for an escalation that is gone
    # PostgreSQL cannot store a NUL (a 500 before), and no page should show the other controls.
    typed = [(note, "reason" if action == Decision.Action.REJECT else "justification")]
    if action == Decision.Action.EDIT_APPROVE:
        typed.append((text, "edited text"))
    for value, what in typed:
        if found := control_character(value):
            raise DecisionInvalid(f"The {what} contains a control character (U+{ord(found):04X}); "
                                  "remove it and try again.")

    note = note.strip()
    if action == Decision.Action.EDIT_APPROVE and normalize(text) == normalize(escalation.candidate):
        action = Decision.Action.APPROVE
    if action == Decision.Action.APPROVE:
        final_text, guard_results, status = escalation.candidate, _block_results(escalation), "approved"
    elif action == Decision.Action.EDIT_APPROVE:
        if not normalize(text):
            raise DecisionInvalid("The edited text is empty. Reject the escalation instead, with a reason.")
        guard_results = guard_edit(escalation, text)
        if guard_results["violations"] and not note:
            raise DecisionInvalid(JUSTIFICATION_NEEDED)
        final_text, status = text.strip(), "approved"
    else:
        if not note:
            raise DecisionInvalid("Rejecting needs a reason.")
        final_text, guard_results, status = "", _block_results(escalation), "rejected"

    if status == "approved" and escalation.facts_changes and not confirm_changed_facts:
        raise DecisionInvalid(facts_changed_message(escalation))
    incident = escalation.run.incident
    version = incident.latest_version() if incident is not None else None
    recorded = {"text_hash": text_hash(final_text) if final_text else "", "incident_version": version,
                "policy": escalation.run.policy or {}}

    now = timezone.now()
    with transaction.atomic():
        won = Escalation.objects.filter(pk=escalation_pk, status=Escalation.Status.PENDING).update(
            status=status, decided_by=user, decided_at=now, final_text=final_text)
        if not won:
            return _already_decided(escalation_pk)
        decision = Decision.objects.create(escalation_id=escalation_pk, actor=user, at=now, action=action,
                                           final_text=final_text, guard_results=guard_results, note=note,
                                           **recorded)
    return Outcome(won=True, escalation=Escalation.objects.select_related("decided_by").get(pk=escalation_pk),
                   decision=decision)


def claim(escalation_pk: int, user) -> bool:
    """Take a pending escalation that nobody else holds. A claim is a courtesy: it never stops
    another lead from deciding."""
    free = Q(claimed_by__isnull=True) | Q(claimed_by=user)
    return bool(Escalation.objects.filter(free, pk=escalation_pk, status=Escalation.Status.PENDING)
                .update(claimed_by=user, claimed_at=timezone.now()))


def release(escalation_pk: int, user) -> bool:
    """Give back your own claim (someone else's stays theirs)."""
    return bool(Escalation.objects.filter(pk=escalation_pk, claimed_by=user)
                .update(claimed_by=None, claimed_at=None))


def claimed_by_other(escalation: Escalation, user) -> str:
    """The warning a lead gets before deciding an escalation another lead claimed ("" if none):
    a claim never stops a decision, but nobody should overrule a colleague by accident."""
    holder = escalation.claimed_by
    if escalation.status != Escalation.Status.PENDING or holder is None or holder.pk == user.pk:
        return ""
    name = holder.get_full_name() or holder.username
    return f"{name} claimed this escalation. Tick “decide anyway” to decide it in their place."


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

"""Amendments: what the miner proposes, replayed in the policy lab before anyone sees it, and an admin's
acceptance or dismissal (docs/learning-loop.md).

Nothing here changes a policy row by itself: :func:`propose` writes proposals and their replay cards
only; a row changes in :func:`accept` alone, called by an admin (a loosening once the approval rule's
quorum of admins approved it). Every acceptance is a change in the policy history (``PolicyChange``,
which the ledger records as it does every policy change), with the replay card and the reason; a
dismissal is kept in the same history as a proposed change dismissed, with its reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone

from agents.core.policy import TEXT_PIPELINES
from agents.lab import KINDS, LabInputError, PreviewStopped, preview, proposed_row
from agents.models import PolicyChange, RestrictedClaim, snapshot, split_words
from reviewer.learning.miner import Proposal, mine
from reviewer.models import Amendment, AmendmentApproval, ApprovalRule

GROUNDING = "unsupported_statement"
SHOWN = 50  # runs and decided texts listed on a card; the counts cover them all


class AmendmentRefused(Exception):
    """The admin's action cannot stand; the message says why."""


@dataclass(frozen=True)
class Outcome:
    done: bool  # applied (accepted) or dismissed; False: an approval counted towards the quorum
    message: str


def replay(amendment_or_proposal) -> dict:
    """The replay card: the proposed row replayed over the newest stored runs and the decided texts,
    with the runs that would flip, the decided texts it would contradict (first) and agree with, and
    the agreement gain. Reads only."""
    try:
        row = proposed_row(amendment_or_proposal.target, amendment_or_proposal.target_key or None,
                           amendment_or_proposal.changes)
        # Bounded as a preview from the admin is: mining runs in the admin's request.
        report = preview(row, last=settings.LEARNING_REPLAY_RUNS, cpu_seconds=settings.POLICY_LAB_CPU_SECONDS)
    except (LabInputError, PreviewStopped) as error:
        return {"error": str(error)}
    contradicts = [f for f in report.text_flips if f.contradicts]
    agrees = [f for f in report.text_flips if not f.contradicts]
    gain = len(agrees) - len(contradicts)

    def text(flip):
        return {"label": flip.decided.label, "url": flip.decided.url, "decided_by": flip.decided.decided_by,
                "decision": flip.decided.decision, "passes_proposed": flip.passes_proposed, "sentence": flip.sentence}

    return {
        "headline": report.headline(), "window": report.window, "runs": report.runs,
        "counts": {name: count for name, _, count in report.verdicts},
        "run_flips": [{"run": f.run_id, "url": reverse("run", args=[f.run_id]), "pipeline": f.pipeline,
                       "before": f.replayed.before.stop_reason,
                       "after": f.replayed.after.stop_reason if f.replayed.after else ""}
                      for f in report.flips[:SHOWN]],
        "run_flip_count": len(report.flips),
        "texts_judged": report.texts_judged,
        "contradicts": [text(f) for f in contradicts[:SHOWN]], "contradict_count": len(contradicts),
        "agrees": [text(f) for f in agrees[:SHOWN]], "agree_count": len(agrees),
        "agreement_gain": gain,
        "agreement_gain_points": round(100 * gain / report.texts_judged, 1) if report.texts_judged else 0.0,
    }


def loosening_rule(check: str) -> ApprovalRule | None:
    """The approval rule a loosening of ``check`` needs: the strictest rule on overriding the guard that
    fits a text pipeline and the check's stops (as an override of that check by a lead would need)."""
    fitting = [rule for rule in ApprovalRule.objects.filter(overrides_guard=True).select_related("group")
               if (not rule.pipeline or rule.pipeline in TEXT_PIPELINES)
               and (not rule.stop_reason or any(f"{prefix}:{check}" == rule.stop_reason
                                                or (rule.stop_reason.endswith(":")
                                                    and f"{prefix}:{check}".startswith(rule.stop_reason))
                                                for prefix in ("invalid_answer", "patch_violation")))]
    return min(fitting, key=lambda rule: (-rule.required_approvals, rule.pk), default=None)


def _quorum(proposal: Proposal) -> dict:
    if proposal.kind not in Amendment.LOOSENING:
        return {}
    rule = loosening_rule(proposal.evidence.get("check", GROUNDING))
    if rule is None:
        return {}
    group = rule.group.name if rule.group_id else "policy admins"
    text = f"“{rule.name}” (rule {rule.pk}): {rule.required_approvals} approvals from {group}"
    return {"required_approvals": rule.required_approvals, "approval_group_id": rule.group_id,
            "approval_rule_text": text[:300]}


def propose(decisions=None) -> list[Amendment]:
    """Mine the decisions and write each new proposal with its replay card; a proposal made before
    (proposed, accepted or dismissed) is not made again. Returns the new amendments."""
    made = []
    known = set(Amendment.objects.values_list("fingerprint", flat=True))
    for proposal in mine(decisions):
        if proposal.fingerprint in known:
            continue
        card = replay(proposal)
        made.append(Amendment.objects.create(
            kind=proposal.kind, target=proposal.target, target_key=proposal.target_key, changes=proposal.changes,
            title=proposal.title[:300], fingerprint=proposal.fingerprint, evidence=proposal.evidence, replay=card,
            **_quorum(proposal)))
    return made


def _permission(amendment: Amendment) -> str:
    model = KINDS[amendment.target]._meta
    return f"{model.app_label}.{'change' if amendment.target_key else 'add'}_{model.model_name}"


def _check(amendment: Amendment, user, reason: str) -> None:
    if not user.has_perm(_permission(amendment)):
        raise PermissionDenied("Only policy admins who may change this policy row decide its amendments.")
    if not reason.strip():
        raise AmendmentRefused("Write the reason: it is kept with the decision in the policy history.")
    if amendment.status != Amendment.Status.PROPOSED:
        raise AmendmentRefused(f"This amendment is {amendment.status} already.")


def _lock(pk: int) -> Amendment:
    return Amendment.objects.select_for_update().get(pk=pk)


def accept(pk: int, user, reason: str) -> Outcome:
    """Accept an amendment: apply it as a policy change now, or, for a loosening under a quorum, count
    this admin's approval and apply it with the approval that completes the quorum."""
    with transaction.atomic():
        amendment = _lock(pk)
        _check(amendment, user, reason)
        approvers: list[str] = []
        if amendment.loosening and amendment.required_approvals > 1:
            _check_group(amendment, user)
            try:
                with transaction.atomic():
                    AmendmentApproval.objects.create(amendment=amendment, user=user, reason=reason.strip())
            except IntegrityError:
                raise AmendmentRefused("You approved this amendment already; another admin must approve it.") from None
            approvers = [a.user.get_username() for a in amendment.approvals.select_related("user")]
            if len(approvers) < amendment.required_approvals:
                left = amendment.required_approvals - len(approvers)
                return Outcome(False, f"Your approval counts: {len(approvers)} of {amendment.required_approvals}. "
                                      f"It needs {left} more before it applies.")
        change = _apply(amendment, user, reason.strip(), approvers)
        Amendment.objects.filter(pk=pk).update(status=Amendment.Status.ACCEPTED, decided_by=user,
                                               decided_at=change.at, reason=reason.strip(), policy_change=change)
    return Outcome(True, f"Accepted: {amendment.title}. It is in the policy history (change {change.pk}).")


def _check_group(amendment: Amendment, user) -> None:
    if amendment.approval_group_id and not user.groups.filter(pk=amendment.approval_group_id).exists():
        raise PermissionDenied(f"Only members of the approval rule's group approve this loosening "
                               f"({amendment.approval_rule_text}).")


def _changes_now(amendment: Amendment) -> dict:
    """The values to apply: a hedge joins the family's hedges as they are now (another admin may have
    changed them since the proposal), the other kinds as proposed."""
    if amendment.kind != Amendment.Kind.HEDGE:
        return amendment.changes
    row = RestrictedClaim.objects.filter(family=amendment.target_key).first()
    hedges = list(split_words(row.hedges)) if row is not None else []
    word = amendment.evidence.get("hedge", "")
    return {"hedges": ", ".join(hedges if word.lower() in {h.lower() for h in hedges} else [*hedges, word])}


def _apply(amendment: Amendment, user, reason: str, approvers: list[str]) -> PolicyChange:
    try:
        row = proposed_row(amendment.target, amendment.target_key or None, _changes_now(amendment))
    except LabInputError as error:
        raise AmendmentRefused(f"The policy row cannot take this change any more: {error}") from None
    before = snapshot(type(row).objects.get(pk=row.pk)) if row.pk is not None else None
    row.save()
    return PolicyChange.record(user, row, PolicyChange.CHANGED if before else PolicyChange.ADDED, before=before,
                               after=snapshot(row), preview=_summary(amendment, reason, approvers))


def _summary(amendment: Amendment, reason: str, approvers: list[str]) -> dict:
    card = amendment.replay or {}
    return {"amendment": amendment.pk, "title": amendment.title, "reason": reason, "approved_by": approvers,
            "headline": card.get("headline", ""), "agreement_gain": card.get("agreement_gain"),
            "contradicts": card.get("contradict_count"), "agrees": card.get("agree_count"),
            "run_flips": card.get("run_flip_count")}


def dismiss(pk: int, user, reason: str) -> Outcome:
    """Dismiss an amendment with a reason: kept in the policy history as a proposed change dismissed
    (the row unchanged); the same proposal is not made again."""
    with transaction.atomic():
        amendment = _lock(pk)
        _check(amendment, user, reason)
        model = KINDS[amendment.target]
        row = model.objects.filter(**{_key_field(amendment): amendment.target_key}).first() \
            if amendment.target_key else None
        shown = row or model(**{k: v for k, v in amendment.changes.items() if k in _fields(model)})
        change = PolicyChange.record(user, shown, PolicyChange.DISMISSED, before=snapshot(row) if row else None,
                                     after=amendment.changes, object_id=row.pk if row else "new",
                                     preview=_summary(amendment, reason.strip(), []))
        Amendment.objects.filter(pk=pk).update(status=Amendment.Status.DISMISSED, decided_by=user,
                                               decided_at=timezone.now(), reason=reason.strip(), policy_change=change)
    return Outcome(True, f"Dismissed: {amendment.title}. It is in the policy history (change {change.pk}).")


def _key_field(amendment: Amendment) -> str:
    return {"claim": "family", "term": "text"}[amendment.target]


def _fields(model) -> set[str]:
    return {f.name for f in model._meta.concrete_fields}

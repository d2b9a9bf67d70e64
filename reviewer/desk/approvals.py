"""Approvals by more than one person: which escalations need them, and counting them.

An :class:`~reviewer.models.ApprovalRule` says how many distinct approvals of the current text an
escalation needs, and from which group. The strictest rule that fits applies, and the escalation keeps
what applied when it opened (its ``required_approvals``, ``approval_group`` and the rule as it read),
so editing a rule never changes what a pending escalation needs. Without a rule an escalation needs
one approval, from any support lead, exactly as before.

Each approval is a row on the version of the text it approved; an edit, a requested revision and a
request for changes raise the version, and the approvals of the old one stay, superseded. Counting
happens with the escalation's row locked (``select_for_update``), and a unique constraint on (escalation,
person, text version) backs it: two leads approving at once are both counted, one after the other,
and only the approval that completes the quorum decides (``reviewer.desk.decisions``).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone

from agents.core.text import text_hash
from reviewer.alerts import notifications
from reviewer.ledger.events import record_approval, record_approvals_reset
from reviewer.models import Approval, ApprovalRule, Escalation, NotificationChannel
from reviewer.roles import SUPPORT_LEAD

# Why approvals stopped counting (Approval.superseded_because), as the history says it.
EDITED = "edited"
REVISED = "revised"
CHANGES_REQUESTED = "changes requested"


class ApprovalRefused(Exception):
    """This person's approval cannot count; ``status`` is the HTTP status a door answers with
    (403: not theirs to give, 409: given already, or the text changed since they read it)."""

    def __init__(self, message: str, *, status: int = 403):
        super().__init__(message)
        self.status = status


def _fits(rule: ApprovalRule, *, pipeline: str, severity: str, stop_reason: str, violations: bool) -> bool:
    if rule.pipeline and rule.pipeline != pipeline:
        return False
    if rule.severity and rule.severity != severity:
        return False
    if rule.stop_reason and not (stop_reason == rule.stop_reason
                                 or (rule.stop_reason.endswith(":") and stop_reason.startswith(rule.stop_reason))):
        return False
    return violations or not rule.overrides_guard


def rule_for(run, stop_reason: str, guard: dict | None) -> ApprovalRule | None:
    """The strictest rule that fits an escalation of ``run``: the most approvals; on a tie, the oldest rule."""
    incident = run.incident if run.incident_id else None
    facts = {"pipeline": run.pipeline, "severity": (incident.severity if incident else "").strip().upper(),
             "stop_reason": stop_reason, "violations": bool((guard or {}).get("violations"))}
    fitting = [rule for rule in ApprovalRule.objects.filter(Q(pipeline=run.pipeline) | Q(pipeline=""))
               if _fits(rule, **facts)]
    return min(fitting, key=lambda rule: (-rule.required_approvals, rule.pk), default=None)


def approval_fields(run, stop_reason: str, guard: dict | None) -> dict:
    """What an escalation opened now needs, kept on it (one approval from any lead when no rule fits)."""
    rule = rule_for(run, stop_reason, guard)
    if rule is None:
        return {}
    group = rule.group.name if rule.group_id else SUPPORT_LEAD
    text = f"“{rule.name}” (rule {rule.pk}): {rule.required_approvals} approvals from {group}"
    return {"required_approvals": rule.required_approvals, "approval_group_id": rule.group_id,
            "approval_rule": rule, "approval_rule_text": text[:300]}


def group_of(escalation: Escalation) -> Group:
    """The group whose members' approvals count."""
    if escalation.approval_group_id:
        return escalation.approval_group
    return Group.objects.get(name=SUPPORT_LEAD)


def group_name(escalation: Escalation) -> str:
    """The name of the group whose members' approvals count (no query past the escalation's own)."""
    return escalation.approval_group.name if escalation.approval_group_id else SUPPORT_LEAD


def under_rule(escalation: Escalation) -> bool:
    """An approval rule applied when the escalation opened (what it kept: a group, or a quorum)."""
    return escalation.approval_group_id is not None or escalation.under_quorum


def check_member(escalation: Escalation, user, verb: str) -> Group:
    """The approval group, if ``user`` is in it; else :class:`ApprovalRefused` saying whose it is to ``verb``."""
    group = group_of(escalation)
    if not user.groups.filter(pk=group.pk).exists():
        raise ApprovalRefused(f"Only members of “{group.name}” can {verb} this escalation; you are not one.")
    return group


def needed_text(count: int) -> str:
    return f"{count} more approval{'s' if count != 1 else ''}"


def lock(escalation_pk: int) -> Escalation:
    """The escalation, its row locked until the transaction ends (the run read with it, not locked)."""
    return (Escalation.objects.select_for_update(of=("self",))
            .select_related("run", "run__incident_version", "approval_group").get(pk=escalation_pk))


def current(escalation: Escalation):
    return Approval.objects.filter(escalation=escalation, text_version=escalation.text_version,
                                   superseded_at__isnull=True)


def add(escalation: Escalation, user, *, seen_version: int | None = None) -> tuple[Approval, int]:
    """Count ``user``'s approval of the current text of a locked, pending escalation: the approval and
    how many the text has now. Raises :class:`ApprovalRefused` with the reason it cannot count."""
    if seen_version is not None and seen_version != escalation.text_version:
        raise ApprovalRefused(
            f"The text changed since you read it (it is version {escalation.text_version} now, you read version "
            f"{seen_version}); read it again before approving.", status=409)
    group = check_member(escalation, user, "approve")
    required = escalation.required_approvals
    if escalation.text_by_id == user.pk:
        raise ApprovalRefused(
            "You wrote this version of the text (your edit, or the revision you requested), so your approval "
            f"cannot count: {needed_text(required - current(escalation).count())} from other members of "
            f"“{group.name}” must approve it.")
    given = current(escalation).filter(user=user).first()
    if given is not None:
        raise ApprovalRefused(
            f"You already approved this text at {given.at:%Y-%m-%d %H:%M:%S} UTC; it needs "
            f"{needed_text(required - current(escalation).count())} from other members of “{group.name}”.",
            status=409)
    try:
        with transaction.atomic():
            approval = Approval.objects.create(escalation=escalation, user=user, text_version=escalation.text_version,
                                               text_hash=text_hash(escalation.candidate), at=timezone.now())
    except IntegrityError:  # the row lock makes this unreachable on PostgreSQL; the constraint backs it
        raise ApprovalRefused("You already approved this text.", status=409) from None
    counted = current(escalation).count()
    record_approval(approval, required=required, counted=counted)
    return approval, counted


def reset(escalation_pk: int, *, because: str, by, at, **changes) -> bool:
    """A new version of the text (with ``changes`` to the escalation, e.g. its new candidate), inside the
    caller's transaction: the earlier approvals stay, superseded, and the ledger records the reset.
    False when the escalation is decided already (nothing changes then)."""
    if not Escalation.objects.filter(pk=escalation_pk, status=Escalation.Status.PENDING).update(
            text_version=F("text_version") + 1, **changes):
        return False
    superseded = list(Approval.objects.filter(escalation_id=escalation_pk, superseded_at__isnull=True))
    if superseded:
        Approval.objects.filter(pk__in=[a.pk for a in superseded]).update(superseded_at=at, superseded_because=because)
        escalation = Escalation.objects.get(pk=escalation_pk)
        record_approvals_reset(escalation, superseded, because=because, by=by, at=at)
    if "text_by" in changes:  # its author's approval cannot count: the rule may be out of reach now
        tell_if_unmeetable([escalation_pk])
    return True


def counted_message(escalation: Escalation, decision) -> str:
    """What a lead's click did to an escalation still pending under a quorum ("" once it is decided)."""
    if escalation.status != Escalation.Status.PENDING:
        return ""
    group = group_name(escalation)
    left = escalation.required_approvals - escalation.approvals_so_far
    if decision is not None and decision.action == "edit":
        return (f"Your edit is the text to approve now: it needs {escalation.required_approvals} "
                f"approval{'s' if escalation.required_approvals != 1 else ''} from other members of “{group}”.")
    return f"Your approval counts: {progress(escalation)}. It needs {needed_text(left)} from members of “{group}”."


def progress(escalation: Escalation) -> str:
    """“1 of 2 approvals” for an escalation under a quorum."""
    return f"{escalation.approvals_so_far} of {escalation.required_approvals} approvals"


# ---------------------------------------------------------------- a rule that can no longer be met

DECIDE = "reviewer.decide_escalation"  # reviewer.desk.decisions.DECIDE_PERMISSION (which imports this module)


@dataclass(frozen=True)
class Shortfall:
    """A pending escalation's rule that cannot be met: ``needed`` approvals, and only ``left`` (their
    names) can still give one."""
    needed: int
    left: tuple[str, ...]
    group: str

    @property
    def sentence(self) -> str:
        people = (f"only {len(self.left)} member who may approve it is left ({', '.join(self.left)})"
                  if len(self.left) == 1 else
                  f"only {len(self.left)} members who may approve it are left ({', '.join(self.left)})"
                  if self.left else "no member who may approve it is left")
        return (f"This approval rule can no longer be met: the text needs {needed_text(self.needed)} from members "
                f"of “{self.group}”, and {people}. A policy admin can add members to the group (or give back "
                "the support lead role), or change the rule for new escalations; a lead can still reject it.")


def shortfall(escalation: Escalation) -> Shortfall | None:
    """Why a pending escalation under an approval rule can no longer be approved (None while it can):
    fewer active members of its group who may decide, have not approved its text and did not write it,
    than the approvals it still needs."""
    if escalation.status != Escalation.Status.PENDING or not under_rule(escalation):
        return None
    needed = escalation.required_approvals - current(escalation).count()
    if needed <= 0:
        return None
    group = group_of(escalation)
    members = (get_user_model().objects.filter(is_active=True, groups=group)
               .exclude(pk__in=current(escalation).values("user")).order_by("first_name", "username"))
    if escalation.under_quorum and escalation.text_by_id:
        members = members.exclude(pk=escalation.text_by_id)  # their approval of their own text cannot count
    left = tuple(u.get_full_name() or u.get_username() for u in members if u.has_perm(DECIDE))
    return Shortfall(needed, left, group.name) if len(left) < needed else None


def tell_if_unmeetable(escalation_pks: list[int] | None = None) -> list[int]:
    """Tell the channels that want it about each pending escalation (of ``escalation_pks``, or all under a
    rule) whose rule can no longer be met; each channel once per escalation (the notifications' constraint).
    Returns the escalations found out of reach."""
    rows = (Escalation.objects.pending().filter(Q(required_approvals__gt=1) | Q(approval_group__isnull=False))
            .select_related("approval_group"))
    if escalation_pks is not None:
        rows = rows.filter(pk__in=escalation_pks)
    out_of_reach = [e.pk for e in rows if shortfall(e) is not None]
    notifications.enqueue_many(out_of_reach, NotificationChannel.Event.UNMEETABLE)
    return out_of_reach


def people_changed(sender, **kwargs) -> None:
    """A user saved (deactivated) or their groups changed: the rules of pending escalations are looked at
    again once it commits (connected in ``ReviewerConfig.ready``)."""
    action = kwargs.get("action")
    if action is not None and action not in ("post_remove", "post_clear"):
        return  # a group added or a pre-signal: no rule gets harder to meet
    transaction.on_commit(tell_if_unmeetable)

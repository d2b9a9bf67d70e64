"""What each kind of ledger entry says: one function per event, called by the code that records
the event, inside its transaction. Texts are kept as their SHA-256 (the texts stay in their own
tables; the hash shows whether a row there was changed since)."""

from __future__ import annotations

from reviewer.ledger.chain import Kind, append, append_many, sha256
from reviewer.models import Approval, DeadlineBreach, Decision, Escalation, LedgerEntry, PublishedUpdate, Snooze


def _username(user) -> str:
    return user.get_username() if user is not None else ""


def record_decision(decision: Decision) -> LedgerEntry:
    """A lead's decision on an escalation: approve, edit then approve, reject or request changes."""
    escalation = decision.escalation
    return append(Kind.DECISION, f"decision:{decision.pk}", {
        "decision": decision.pk, "escalation": decision.escalation_id, "run": escalation.run_id,
        "action": decision.action, "actor": _username(decision.actor), "at": decision.at,
        "final_text_sha256": sha256(decision.final_text), "candidate_sha256": sha256(escalation.candidate),
        "note_sha256": sha256(decision.note), "text_hash": decision.text_hash,
        "incident_version": decision.incident_version_id,
        "overridden": [v.get("check", "") for v in (decision.guard_results or {}).get("violations") or []
                       if isinstance(v, dict)],
    }, at=decision.at)


def record_approval(approval: Approval, *, required: int, counted: int) -> LedgerEntry:
    """One person's approval of a text under a quorum, and how many of the required it makes."""
    return append(Kind.APPROVAL, f"approval:{approval.pk}", {
        "approval": approval.pk, "escalation": approval.escalation_id, "actor": _username(approval.user),
        "at": approval.at, "text_version": approval.text_version, "text_hash": approval.text_hash,
        "counted": counted, "required": required,
    }, at=approval.at)


def record_approvals_reset(escalation: Escalation, superseded: list[Approval], *, because: str, by, at) -> LedgerEntry:
    """The approvals of a text that changed (an edit, a requested revision, a request for changes):
    kept, no longer counted."""
    return append(Kind.APPROVALS_RESET, f"escalation:{escalation.pk}", {
        "escalation": escalation.pk, "because": because, "by": _username(by), "at": at,
        "text_version": escalation.text_version, "approvals": [a.pk for a in superseded],
    }, at=at)


def record_snooze(snooze: Snooze) -> LedgerEntry:
    """A lead's "Not now" on an escalation (until when), or its end by hand ("Back now": who, when)."""
    ended = snooze.ended_at is not None
    return append(Kind.SNOOZE, f"snooze:{snooze.pk}", {
        "snooze": snooze.pk, "escalation": snooze.escalation_id, "by": _username(snooze.by), "at": snooze.at,
        "until": snooze.until, **({"ended_by": _username(snooze.ended_by), "ended_at": snooze.ended_at}
                                  if ended else {}),
    }, at=snooze.ended_at if ended else snooze.at)


def record_publication(update: PublishedUpdate) -> LedgerEntry:
    """An update published to customers (by a person or the policy's auto_publish)."""
    return append(Kind.PUBLICATION, f"publication:{update.pk}", {
        "update": update.pk, "incident": update.incident_id, "version": update.version,
        "text_sha256": sha256(update.text), "text_hash": update.text_hash, "source_run": update.source_run_id,
        "escalation": update.escalation_id, "approved_by": update.approved_by,
        "published_by": _username(update.published_by) if update.published_by_id else "auto_publish",
        "reason": update.reason, "public_title": update.public_title, "state": update.state,
        "impact": update.impact, "published_at": update.published_at,
        "overridden": [v.get("check", "") for v in update.overridden or [] if isinstance(v, dict)],
    }, at=update.published_at)


def record_policy_change(change) -> LedgerEntry:
    """A change to a pipeline's policy or its tables (``agents.models.PolicyChange``)."""
    return append(Kind.POLICY_CHANGE, f"policy_change:{change.pk}", {
        "change": change.pk, "model": change.model_label, "object_id": change.object_id,
        "object": change.object_repr, "action": change.action, "user": change.username,
        "policy": change.policy_id, "at": change.at, "before": change.before, "after": change.after,
    }, at=change.at)


def record_breaches(breaches: list[DeadlineBreach]) -> list[LedgerEntry]:
    """Escalations' deadlines that passed with no decision (a sweep's breaches), in a fixed number of
    queries whatever their number."""
    return append_many([(Kind.BREACH, f"breach:{breach.pk}", {
        "breach": breach.pk, "escalation": breach.escalation_id, "deadline_at": breach.deadline_at,
        "at": breach.at, "holding_statement": breach.holding_statement_id,
    }, breach.at) for breach in breaches])


def record_export(user, *, dataset: str, filters: dict, count: int, body_sha256: str) -> LedgerEntry:
    """A dataset of decisions taken out of the product: who, which format, which filters, how many."""
    return append(Kind.EXPORT, f"export:{dataset}", {
        "user": _username(user) or "command line", "format": dataset, "filters": filters, "count": count,
        "body_sha256": body_sha256,
    })


def policy_changed(sender, instance, created: bool, **kwargs) -> None:
    """post_save of ``agents.PolicyChange`` (connected in ReviewerConfig.ready: the agents app never
    imports this one): the entry commits with the change it records."""
    if created:
        record_policy_change(instance)

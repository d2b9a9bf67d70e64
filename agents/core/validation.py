"""The gateway: deterministic validation of every structured model answer.

Each validator takes the parsed JSON value (anything at all) and the policy, and returns a clean,
typed decision or raises :class:`Stop` with the contract's reason. The checks run in a fixed
order; the first failure is the stop.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from agents.core.phrases import critique_rules, is_enforceable
from agents.core.policy import RoutingPolicy, TextPolicy
from agents.core.stops import Stop
from agents.core.text import normalize

SEVERITIES = ("low", "medium", "high")
QUALITIES = ("excellent", "good", "fair", "poor")
COMPLETENESS = ("complete", "partial", "incomplete")
DETAIL_CHARS = 80  # a model-chosen value in a stop reason suffix is cut to this length


def detail(value: Any) -> str:
    """A model-chosen value as a stop reason suffix: one line, bounded."""
    return normalize(str(value))[:DETAIL_CHARS]


def _blank(value: Any) -> bool:
    return not isinstance(value, str) or not value.strip()


def _items(data: dict, key: str, *, budget: int, not_list: str, too_many: str) -> list:
    """A list field: absent or null is empty; anything else that is not a list stops with ``not_list``."""
    value = data.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise Stop(not_list)
    if len(value) > budget:
        raise Stop(too_many, count=len(value), budget=budget)
    return value


def _typed_notes(items: list, policy: TextPolicy, *, not_object: str, no_type: str, not_allowed: str,
                 no_note: str) -> list[dict]:
    """Validate ``[{type, note}]`` items against the policy's issue/risk types.

    ``not_allowed`` is a stop reason prefix ending in ``:``; the type the model chose is its detail.
    """
    clean = []
    for item in items:
        if not isinstance(item, dict):
            raise Stop(not_object)
        kind = item.get("type")
        if _blank(kind):
            raise Stop(no_type)
        kind = kind.strip().lower()
        if kind not in policy.issue_types:
            raise Stop(not_allowed + detail(kind))
        if _blank(item.get("note")):
            raise Stop(no_note)
        clean.append({"type": kind, "note": item["note"].strip()})
    return clean


def _strings(items: list, reason: str) -> list[str]:
    if any(_blank(item) for item in items):
        raise Stop(reason)
    return [item.strip() for item in items]


def _reason(data: dict, stop: str) -> str:
    value = data.get("reason")
    if value is None:
        return ""  # null counts as empty
    if not isinstance(value, str):
        raise Stop(stop)
    return value.strip()


def _decision(data: Any, policy: TextPolicy, *, not_object: str, missing: str, not_allowed: str) -> str:
    """The decision field; ``not_allowed`` is a stop reason prefix ending in ``:``."""
    if not isinstance(data, dict):
        raise Stop(not_object)
    decision = data.get("decision")
    if _blank(decision):
        raise Stop(missing)
    decision = decision.strip().lower()
    if decision not in policy.decisions_policy:
        raise Stop(not_allowed + detail(decision))
    return decision


def _choice(value: Any, allowed: tuple[str, ...]) -> str | None:
    """Recorded-only fields (quality, completeness): kept when valid, otherwise None."""
    if isinstance(value, str) and value.strip().lower() in allowed:
        return value.strip().lower()
    return None


@dataclass(frozen=True)
class ReviewVerdict:
    decision: str
    issues: list[dict]
    fix_plan: list[str]
    reason: str
    quality: str | None
    completeness: str | None

    def to_dict(self) -> dict:
        return asdict(self)


def validate_review(data: Any, policy: TextPolicy, *, max_issues: int, max_fix_items: int) -> ReviewVerdict:
    """The reflection review."""
    decision = _decision(data, policy, not_object="invalid_review:not_object", missing="invalid_review:decision",
                         not_allowed="review_decision_not_allowed_policy:")
    issues = _items(data, "issues", budget=max_issues,
                    not_list="invalid_review:issues", too_many="invalid_review:too_many_issues")
    issues = _typed_notes(issues, policy, not_object="invalid_review:issue_item", no_type="invalid_review:issue_type",
                          not_allowed="review_issue_not_allowed_policy:", no_note="invalid_review:issue_note")
    fix_plan = _items(data, "fix_plan", budget=max_fix_items,
                      not_list="invalid_review:fix_plan", too_many="invalid_review:too_many_fix_items")
    fix_plan = _strings(fix_plan, "invalid_review:fix_item")
    reason = _reason(data, "invalid_review:reason")
    high_risk = any(issue["type"] in policy.high_risk_types for issue in issues)

    if decision == "approve":
        if high_risk:
            raise Stop("invalid_review:approve_with_high_risk_issue")
        fix_plan = []  # an approve's fix plan is discarded
    elif decision == "revise":
        if not issues:
            raise Stop("invalid_review:revise_without_issues")
        if not fix_plan:
            raise Stop("invalid_review:revise_without_fix_plan")
        if high_risk:
            raise Stop("invalid_review:high_risk_requires_escalate")
    elif decision == "escalate" and not reason:
        raise Stop("invalid_review:escalate_reason_required")

    verdict = ReviewVerdict(
        decision,
        issues,
        fix_plan,
        reason,
        _choice(data.get("quality"), QUALITIES),
        _choice(data.get("completeness"), COMPLETENESS),
    )
    if decision not in policy.execution_allowlist:
        # The verdict goes with the stop: a denied revision (the brake) is handed to a person with it.
        raise Stop("review_decision_denied_execution:" + decision, review=verdict.to_dict())
    return verdict


@dataclass(frozen=True)
class CritiqueVerdict:
    decision: str
    severity: str
    risks: list[dict]
    required_changes: list[str]
    reason: str
    high_risk: bool

    def to_dict(self) -> dict:
        return asdict(self)


def validate_critique(data: Any, policy: TextPolicy, *, max_risks: int, max_required_changes: int) -> CritiqueVerdict:
    """The self-critique."""
    decision = _decision(data, policy, not_object="invalid_critique:not_object", missing="invalid_critique:decision",
                         not_allowed="critique_decision_not_allowed_policy:")
    severity = data.get("severity", "medium")
    if _blank(severity) or severity.strip().lower() not in SEVERITIES:
        raise Stop("invalid_critique:severity")
    severity = severity.strip().lower()
    risks = _items(data, "risks", budget=max_risks,
                   not_list="invalid_critique:risks", too_many="invalid_critique:too_many_risks")
    risks = _typed_notes(risks, policy, not_object="invalid_critique:risk_item", no_type="invalid_critique:risk_type",
                         not_allowed="critique_risk_not_allowed_policy:", no_note="invalid_critique:risk_note")
    changes = _items(
        data,
        "required_changes",
        budget=max_required_changes,
        not_list="invalid_critique:required_changes",
        too_many="invalid_critique:too_many_required_changes",
    )
    changes = _strings(changes, "invalid_critique:required_change_item")
    reason = _reason(data, "invalid_critique:reason")
    high_risk = severity == "high" or any(risk["type"] in policy.high_risk_types for risk in risks)

    if decision == "approve":
        if changes:
            raise Stop("invalid_critique:approve_with_required_changes")
        if high_risk:
            raise Stop("invalid_critique:approve_with_high_risk")
    elif decision == "revise":
        if not changes:
            raise Stop("invalid_critique:revise_without_required_changes")
        if not all(is_enforceable(change) for change in changes):
            rules = critique_rules(changes)
            raise Stop("invalid_critique:required_changes_not_enforceable", unenforceable=list(rules.unenforceable))
        if high_risk:
            raise Stop("invalid_critique:high_risk_requires_escalate")
    elif decision == "escalate" and not reason:
        raise Stop("invalid_critique:escalate_reason_required")

    verdict = CritiqueVerdict(decision, severity, risks, changes, reason, high_risk)
    if decision not in policy.execution_allowlist:
        raise Stop("critique_decision_denied_execution:" + decision, critique=verdict.to_dict())
    return verdict


@dataclass(frozen=True)
class RouteCall:
    target: str
    args: dict


ROUTE_KEYS = {"kind", "target", "args"}


def validate_route(text: str, parsed: tuple[bool, Any], policy: RoutingPolicy, *, forbidden: str | None) -> RouteCall:
    """The route answer. ``forbidden`` is the target a reroute just ruled out."""
    is_json, data = parsed
    if not is_json:
        raise Stop("invalid_route:non_json", raw=text)
    if not isinstance(data, dict):
        raise Stop("invalid_route:not_object")
    if data.get("kind") != "route":
        raise Stop("invalid_route:bad_kind")
    if set(data) - ROUTE_KEYS:
        raise Stop("invalid_route:extra_keys", extra=sorted(map(str, set(data) - ROUTE_KEYS)))
    target = data.get("target")
    if _blank(target):
        raise Stop("invalid_route:missing_target")
    target = target.strip()
    route = policy.routes.get(target)
    if route is None or not route.allowed_policy:
        raise Stop("invalid_route:route_not_allowed:" + detail(target))
    args = data.get("args")
    if args is None:
        args = {}  # null counts as empty
    if not isinstance(args, dict):
        raise Stop("invalid_route:bad_args")
    ticket = args.get("ticket")
    if _blank(ticket):
        raise Stop("invalid_route:missing_ticket")
    if target == forbidden:
        raise Stop("invalid_route:repeat_target_after_reroute", target=target)
    return RouteCall(target=target, args={**args, "ticket": normalize(ticket)})

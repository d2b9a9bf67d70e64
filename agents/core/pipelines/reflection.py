"""Reflection: draft -> review -> revise (at most once) -> finalize."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from agents.core.audit import audit_record
from agents.core.guard import check_revision, guard_config
from agents.core.llm.base import LLM
from agents.core.phrases import reflection_rules
from agents.core.pipelines.frame import Observer, RunResult, RunState, execute
from agents.core.pipelines.text_stages import (
    ask_draft,
    ask_revision,
    blocked,
    check_draft,
    finalize,
    guard_dict,
    guard_measurements,
    hand_over,
    structured_object,
)
from agents.core.policy import ReflectionPolicy
from agents.core.prompts import build_request
from agents.core.stops import Stop
from agents.core.text import text_hash
from agents.core.validation import validate_review


def _reflection(run: RunState, goal: str, context: Mapping[str, Any], policy: ReflectionPolicy) -> dict:
    with run.step("draft") as step:
        draft = ask_draft(run, goal, context, policy)
        step.update(draft_chars=len(draft))
        check_draft(draft, policy)
        step.update(draft_hash=text_hash(draft), output=draft)

    with run.step("review") as step:
        request = build_request(
            policy, "review", context=context,
            sections=[("GOAL", goal), ("DRAFT", draft), ("ALLOWED ISSUE TYPES", sorted(policy.issue_types)),
                      ("BUDGET", {"max_issues": policy.max_review_issues, "max_fix_items": policy.max_fix_items})],
            inputs={"goal": goal, "context": context, "draft": draft, "issue_types": dict(policy.issue_types),
                    "restricted_claims": list(policy.guard.restricted_claims), "guard": policy.guard},
        )
        answer = structured_object(run.ask(request))
        try:
            review = validate_review(answer, policy, max_issues=policy.max_review_issues,
                                     max_fix_items=policy.max_fix_items)
        except Stop as stop:
            raise hand_over(stop, draft, "review") from None
        step.update(decision=review.decision, issues=len(review.issues), fix_items=len(review.fix_plan),
                    quality=review.quality, completeness=review.completeness, output=review.to_dict())

    if review.decision == "escalate":
        raise Stop("policy_escalation", phase="review", escalation_reason=review.reason,
                   review=review.to_dict(), candidate=draft)

    if review.decision == "approve":
        finalize(run, draft, context, policy, goal=goal, review=review.to_dict())
        return {"outcome": "approved_direct", "answer": draft, "review": review.to_dict()}

    counts = {"risks": len(review.issues), "required_changes": len(review.fix_plan)}
    rules = reflection_rules(review.fix_plan)
    config = guard_config(policy, context)
    with run.step("revise") as step:
        revised = ask_revision(run, goal, context, policy, draft=draft, instructions=review.fix_plan)
        result = check_revision(draft, revised, context, config, rules)
        step.update(decision="revise", attempts=1, **guard_measurements(result),
                    must_include=len(rules.must_include), must_remove=len(rules.must_remove),
                    unenforceable=list(rules.unenforceable))
        if not result.ok:
            raise blocked(result, revised, review=review.to_dict(), audit=audit_record(draft, revised, **counts))
        step["output"] = revised

    audit = audit_record(draft, revised, **counts)
    finalize(run, revised, context, policy, goal=goal, review=review.to_dict(), audit=audit)
    return {"outcome": "revised_once", "answer": revised, "review": review.to_dict(), "audit": audit,
            "guard": guard_dict(result)}


def run_reflection(goal: str, context: Mapping[str, Any] | None, policy: ReflectionPolicy, llm: LLM, *,
                   observer: Observer | None = None, run_id: str | None = None, clock=time.monotonic,
                   judge: LLM | None = None) -> RunResult:
    return execute(_reflection, pipeline="reflection", goal=goal, context=context, policy=policy, llm=llm,
                   observer=observer, run_id=run_id, clock=clock, judge=judge)

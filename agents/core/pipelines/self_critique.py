"""Self-critique: draft -> critique -> revise (bounded retries, then a deterministic fallback) -> audit."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from agents.core.audit import audit_record
from agents.core.fallback import apply_fallback
from agents.core.guard import check_revision, guard_config
from agents.core.llm.base import LLM
from agents.core.phrases import critique_rules
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
    structured_text,
)
from agents.core.policy import SelfCritiquePolicy
from agents.core.prompts import build_request
from agents.core.stops import Stop
from agents.core.text import text_hash
from agents.core.validation import validate_critique


def _draft(run: RunState, goal: str, context: Mapping[str, Any], policy: SelfCritiquePolicy) -> str:
    """A draft that is only too long gets one bounded recovery: a single call to shorten it."""
    with run.step("draft") as step:
        draft = ask_draft(run, goal, context, policy)
        attempts = 1
        if len(draft) > policy.max_draft_chars:
            step["original_chars"] = len(draft)
            request = build_request(
                policy, "shorten", context=context,
                sections=[("DRAFT", draft), ("LIMIT", f"at most {policy.max_draft_chars} characters")],
                inputs={"goal": goal, "context": context, "draft": draft, "max_chars": policy.max_draft_chars},
                max_chars=policy.max_draft_chars,
            )
            draft = structured_text(run.ask(request), "draft")
            attempts = 2
        step.update(attempts_used=attempts, retried=attempts > 1, draft_chars=len(draft))
        check_draft(draft, policy)
        step.update(draft_hash=text_hash(draft), output=draft)
    return draft


def _self_critique(run: RunState, goal: str, context: Mapping[str, Any], policy: SelfCritiquePolicy) -> dict:
    draft = _draft(run, goal, context, policy)

    with run.step("critique") as step:
        request = build_request(
            policy, "critique", context=context,
            sections=[("GOAL", goal), ("DRAFT", draft), ("ALLOWED RISK TYPES", sorted(policy.issue_types)),
                      ("BUDGET", {"max_risks": policy.max_risks, "max_required_changes": policy.max_required_changes})],
            inputs={"goal": goal, "context": context, "draft": draft, "issue_types": dict(policy.issue_types),
                    "restricted_claims": list(policy.guard.restricted_claims), "guard": policy.guard,
                    "style": "critique"},
        )
        answer = structured_object(run.ask(request))
        try:
            critique = validate_critique(answer, policy, max_risks=policy.max_risks,
                                         max_required_changes=policy.max_required_changes)
        except Stop as stop:
            raise hand_over(stop, draft, "critique") from None
        step.update(decision=critique.decision, severity=critique.severity, risks=len(critique.risks),
                    required_changes=len(critique.required_changes), high_risk=critique.high_risk,
                    output=critique.to_dict())

    if critique.decision == "escalate":
        raise Stop("policy_escalation", phase="critique", escalation_reason=critique.reason,
                   critique=critique.to_dict(), candidate=draft)

    config = guard_config(policy, context)
    strict = config.strict_claims
    counts = {"risks": len(critique.risks), "required_changes": len(critique.required_changes)}
    if critique.decision == "approve":
        audit = audit_record(draft, draft, **counts)
        finalize(run, draft, context, policy, strict_claims=strict, goal=goal, critique=critique.to_dict(),
                 audit=audit)
        return {"outcome": "approved_direct", "answer": draft, "critique": critique.to_dict(), "audit": audit}

    rules = critique_rules(critique.required_changes)
    enforcement = {"enforced": len(rules.must_include) + len(rules.must_remove),
                   "not_enforceable": len(rules.unenforceable)}
    candidate, outcome = "", "revised_once"
    for attempt in range(1, policy.max_revise_attempts + 1):
        with run.step("revise") as step:
            candidate = ask_revision(run, goal, context, policy, draft=draft, instructions=critique.required_changes,
                                     attempt=attempt, strict=attempt > 1)
            result = check_revision(draft, candidate, context, config, rules)
            step.update(decision="revise", attempt=attempt, attempts_used=attempt, retried=attempt > 1,
                        fallback_used=False, **enforcement, **guard_measurements(result))
            if result.ok:
                step["output"] = candidate
                outcome = "revised_once" if attempt == 1 else "revised_retry"
                break
            if result.stop_reason != config.not_applied_reason:
                raise blocked(result, candidate, critique=critique.to_dict(),
                              audit=audit_record(draft, candidate, **counts))
            # Only "required changes not applied" earns another attempt; keep this one in the trace.
            step.update(status="retry", guard_result=result.stop_reason, output=candidate)
    else:
        with run.step("fallback") as step:
            candidate = apply_fallback(candidate, rules.must_include, rules.must_remove)
            result = check_revision(draft, candidate, context, config, rules)
            step.update(attempts_used=policy.max_revise_attempts, retried=True, fallback_used=True,
                        **enforcement, **guard_measurements(result))
            if not result.ok:
                raise blocked(result, candidate, critique=critique.to_dict(),
                              audit=audit_record(draft, candidate, **counts))
            step["output"] = candidate
            outcome = "revised_fallback"

    audit = audit_record(draft, candidate, **counts)
    finalize(run, candidate, context, policy, strict_claims=strict, goal=goal, critique=critique.to_dict(),
             audit=audit)
    return {"outcome": outcome, "answer": candidate,
            "critique": critique.to_dict(), "audit": audit, "guard": guard_dict(result)}


def run_self_critique(goal: str, context: Mapping[str, Any] | None, policy: SelfCritiquePolicy, llm: LLM, *,
                      observer: Observer | None = None, run_id: str | None = None, clock=time.monotonic,
                      judge: LLM | None = None) -> RunResult:
    return execute(_self_critique, pipeline="self_critique", goal=goal, context=context, policy=policy, llm=llm,
                   observer=observer, run_id=run_id, clock=clock, judge=judge)

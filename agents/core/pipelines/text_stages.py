"""Stages shared by the two text pipelines: the draft, a revision request, the guard's verdict,
and the final-answer checks. The pipelines differ only in what they pass in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.core.guard import GuardResult, check_final_answer
from agents.core.judge import second_reading
from agents.core.llm.base import ModelReply
from agents.core.pipelines.frame import RunState, parse_json
from agents.core.policy import TextPolicy
from agents.core.prompts import build_request
from agents.core.stops import BRAKE_REASON, Stop, stopped_by_brake
from agents.core.text import text_hash


def structured_text(reply: ModelReply, field: str) -> str:
    """The one text field of a structured answer (``draft``, ``revised_answer``)."""
    is_json, data = parse_json(reply.text)
    if not is_json:
        raise Stop("llm_invalid_json", raw=reply.text[:2000])
    if not isinstance(data, dict) or not isinstance(data.get(field), str):
        raise Stop("llm_invalid_schema", expected=field, raw=reply.text[:2000])
    return data[field].strip()


def structured_object(reply: ModelReply) -> Any:
    """A structured answer's parsed JSON; its shape is the gateway's business."""
    is_json, data = parse_json(reply.text)
    if not is_json:
        raise Stop("llm_invalid_json", raw=reply.text[:2000])
    return data


def check_draft(draft: str, policy: TextPolicy) -> None:
    if not draft:
        raise Stop("invalid_draft:empty")
    if len(draft) > policy.max_draft_chars:
        raise Stop("invalid_draft:too_long", chars=len(draft), budget=policy.max_draft_chars)


def ask_draft(run: RunState, goal: str, context: Mapping[str, Any], policy: TextPolicy) -> str:
    request = build_request(
        policy,
        "draft",
        context=context,
        sections=[("GOAL", goal), ("LIMIT", f"at most {policy.max_draft_chars} characters")],
        inputs={"goal": goal, "context": context, "max_chars": policy.max_draft_chars},
        max_chars=policy.max_draft_chars,
    )
    return structured_text(run.ask(request), "draft")


def ask_revision(run: RunState, goal: str, context: Mapping[str, Any], policy: TextPolicy, *, draft: str,
                 instructions: list[str], attempt: int = 1, strict: bool = False) -> str:
    request = build_request(
        policy, "revise", context=context,
        sections=[("GOAL", goal), ("DRAFT", draft), ("INSTRUCTIONS", instructions),
                  ("LIMIT", f"at most {policy.max_answer_chars} characters")],
        inputs={"goal": goal, "context": context, "draft": draft, "instructions": instructions, "strict": strict},
        attempt=attempt, prompt_key="revise_strict" if strict else "revise", max_chars=policy.max_answer_chars,
    )
    return structured_text(run.ask(request), "revised_answer")


def guard_measurements(result: GuardResult) -> dict:
    return {key: value for key, value in result.measurements.items() if value not in (None, [], ())}


def blocked(result: GuardResult, candidate: str, **details: Any) -> Stop:
    """The stop for a guard failure; the blocked candidate is kept for the person who decides."""
    return Stop(result.stop_reason, candidate=candidate, guard=guard_dict(result), **details)


def hand_over(stop: Stop, draft: str, verdict: str) -> Stop:
    """A revision the emergency brake denied (auto-revision off) goes to a person with the draft and
    the verdict (``verdict``: "review" or "critique", already on the stop), the stop reason unchanged."""
    if stopped_by_brake(stop.reason):
        stop.details.setdefault("candidate", draft)
        reason = (stop.details.get(verdict) or {}).get("reason") or ""
        stop.details.setdefault("escalation_reason", reason.strip() or BRAKE_REASON)
    return stop


def guard_dict(result: GuardResult) -> dict:
    return {
        "stop_reason": result.stop_reason,
        "violations": list(result.violations),
        "measurements": result.measurements,
    }


def finalize(run: RunState, answer: str, context: Mapping[str, Any], policy: TextPolicy, *, strict_claims: bool = False,
             goal: str = "", **details: Any) -> None:
    """The final answer passes the length, fact and claim checks against the context alone, then the
    policy's second reader when it names one (docs/guard.md, 'The second reader')."""
    checked: Stop | None = None
    try:
        with run.step("finalize") as step:
            result = check_final_answer(answer, context, policy.guard, max_answer_chars=policy.max_answer_chars,
                                        strict_claims=strict_claims, auto_publish=policy.auto_publish, goal=goal)
            step.update(answer_chars=len(answer), answer_hash=text_hash(answer) if answer else None)
            if not result.ok:
                raise blocked(result, answer, **details)
            step["output"] = answer
    except Stop as stop:
        # An empty or too long text has nothing to read; a text the checks stopped is still read, so
        # the person who decides it sees every finding at once.
        if policy.judge is None or result.stop_reason in ("invalid_answer:empty", "invalid_answer:too_long"):
            raise
        checked = stop
    if policy.judge is None:
        return
    with run.step("judge") as step:
        added = second_reading(run, answer, context, policy, step)
        judged = GuardResult(result.stop_reason or (added[0]["check"] if added else None),
                             (*result.violations, *added), result.measurements)
        if not judged.ok:
            stop = blocked(judged, answer, **details)
            stop.phase = checked.phase if checked else None
            raise stop

"""A lead's requested changes: one revision of the escalated text with the lead's written
instructions as its fix plan, checked by the same patch guard and final-answer checks as a
pipeline's revision. Quoted phrases in the instructions are enforced as in a reflection fix plan.
The result goes back to the escalation; this module only produces it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.core.audit import audit_record
from agents.core.guard import check_final_answer, check_revision, guard_config
from agents.core.llm.base import LLM
from agents.core.phrases import reflection_rules
from agents.core.pipelines.frame import Observer, RunResult, RunState, execute
from agents.core.pipelines.text_stages import ask_revision, blocked, guard_dict, guard_measurements
from agents.core.policy import TextPolicy
from agents.core.text import text_hash


def instruction_lines(instructions: str) -> list[str]:
    """The lead's instructions as fix-plan items: one per non-blank line."""
    return [line.strip() for line in instructions.splitlines() if line.strip()]


def run_requested_changes(goal: str, context: Mapping[str, Any] | None, policy: TextPolicy, llm: LLM, *,
                          text: str, instructions: str, observer: Observer | None = None,
                          run_id: str | None = None) -> RunResult:
    """One revision of ``text`` following ``instructions``; a stop (model failure, guard violation)
    is a recorded result like any run's, with the blocked revision kept as ``candidate``."""
    fix_plan = instruction_lines(instructions)

    def body(run: RunState, goal: str, context: Mapping[str, Any], policy: TextPolicy) -> dict:
        rules = reflection_rules(fix_plan)
        config = guard_config(policy, context)
        with run.step("revise") as step:
            revised = ask_revision(run, goal, context, policy, draft=text, instructions=fix_plan)
            result = check_revision(text, revised, context, config, rules)
            step.update(decision="request_changes", attempts=1, **guard_measurements(result),
                        must_include=len(rules.must_include), must_remove=len(rules.must_remove),
                        unenforceable=list(rules.unenforceable))
            if not result.ok:
                raise blocked(result, revised, audit=audit_record(text, revised, required_changes=len(fix_plan)))
            step["output"] = revised
        with run.step("finalize") as step:
            final = check_final_answer(revised, context, policy.guard, max_answer_chars=policy.max_answer_chars,
                                       strict_claims=config.strict_claims, goal=goal)
            step.update(answer_chars=len(revised), answer_hash=text_hash(revised))
            if not final.ok:
                raise blocked(final, revised)
            step["output"] = revised
        return {"outcome": "revised_once", "answer": revised, "guard": guard_dict(result),
                "audit": audit_record(text, revised, required_changes=len(fix_plan))}

    return execute(body, pipeline="request_changes", goal=goal, context=context, policy=policy, llm=llm,
                   observer=observer, run_id=run_id)

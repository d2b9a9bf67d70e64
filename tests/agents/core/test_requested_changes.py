"""A lead's requested changes in the core: one revision with the instructions as its fix plan,
judged by the patch guard and the final-answer checks."""

from agents.core.pipelines.requested_changes import instruction_lines, run_requested_changes
from agents.core.policy import ReflectionPolicy
from agents.testing.scripted_demo import CAVEAT, DEMO_CONTEXT, DRAFT, GOAL


def revise(scripted, revised, instructions=f'Add "{CAVEAT}"'):
    scripted.answer("submit_revision", {"revised_answer": revised})
    return run_requested_changes(GOAL, DEMO_CONTEXT, scripted.policy(ReflectionPolicy), scripted.llm,
                                 text=DRAFT, instructions=instructions)


def test_instructions_are_one_fix_plan_item_a_line():
    assert instruction_lines("  Add \"x y z\"\n\n Remove \"a b c\" ") == ['Add "x y z"', 'Remove "a b c"']


def test_a_revision_that_follows_the_instructions_passes(scripted):
    result = revise(scripted, f"{DRAFT} {CAVEAT}")
    assert (result.stop_reason, result.answer) == ("success", f"{DRAFT} {CAVEAT}")
    assert [s["phase"] for s in result.trace] == ["revise", "finalize"] and result.usage["model_calls"] == 1


def test_a_quoted_phrase_left_out_is_a_patch_violation(scripted_tools):
    result = revise(scripted_tools, f"{DRAFT} Thank you for your patience.")
    assert result.stop_reason == "patch_violation:fix_plan_not_applied"
    assert result.candidate == f"{DRAFT} Thank you for your patience."


def test_a_quoted_phrase_to_remove_is_enforced(scripted_tools):
    result = revise(scripted_tools, DRAFT.replace(" in the US", "") + " OK.",
                    instructions='Remove "within 45 minutes"')
    assert result.stop_reason == "patch_violation:fix_plan_not_applied"


def test_a_new_fact_in_the_revision_is_blocked(scripted_tools):
    result = revise(scripted_tools, f"{DRAFT} {CAVEAT} Refunds arrive within 48 minutes.")
    assert result.stop_reason == "patch_violation:no_new_facts"
    assert result.guard["violations"][0]["found"] == "48"

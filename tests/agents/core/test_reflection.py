"""The reflection pipeline, driven through the real openai SDK against a scripted server.

Every stop reason of the reflection pipeline has a case here; the parametrize ids are the stop
reasons themselves.
"""

import dataclasses

import pytest

from agents.core.pipelines import run_reflection
from agents.core.policy import ReflectionPolicy
from agents.core.stops import opens_escalation
from agents.testing.scripted_demo import APPROVE, CAVEAT, DEMO_CONTEXT, DRAFT, ESCALATE, GOAL, REVISE, REVISED


def run(scripted, **policy_overrides):
    return run_reflection(GOAL, DEMO_CONTEXT, scripted.policy(ReflectionPolicy, **policy_overrides), scripted.llm)


def test_approved_draft_succeeds_as_approved_direct(scripted):
    scripted.answer("submit_draft", {"draft": DRAFT}).answer("reflect", APPROVE)
    result = run(scripted)
    assert (result.status, result.stop_reason, result.outcome) == ("ok", "success", "approved_direct")
    assert result.answer == DRAFT
    assert [step["phase"] for step in result.trace] == ["draft", "review", "finalize"]
    assert result.review["decision"] == "approve"
    assert result.usage["model_calls"] == 2


def test_revised_draft_succeeds_as_revised_once_with_audit(scripted):
    scripted.answer("submit_draft", {"draft": DRAFT}).answer("reflect", REVISE).answer(
        "submit_revision", {"revised_answer": REVISED})
    result = run(scripted)
    assert (result.stop_reason, result.outcome, result.answer) == ("success", "revised_once", REVISED)
    revise = result.trace[2]
    assert revise["phase"] == "revise" and revise["similarity"] > 0.45
    assert result.audit["changed"] is True and "+" in "".join(result.audit["diff_excerpt"])


def test_tool_mode_sends_the_stage_tool_and_json_mode_sends_response_format(scripted):
    scripted.answer("submit_draft", {"draft": DRAFT}).answer("reflect", APPROVE)
    run(scripted)
    first = scripted.fake.requests[0]
    if scripted.mode == "tools":
        assert first["tools"][0]["function"]["name"] == "submit_draft"
        assert scripted.fake.requests[1]["tool_choice"]["function"]["name"] == "reflect"
    else:
        assert first["response_format"] == {"type": "json_object"}
        assert "json" in first["messages"][0]["content"].lower()
    # The context leads every prompt, in one stable form, so providers can cache the prefix.
    users = [r["messages"][1]["content"] for r in scripted.fake.requests]
    assert users[0].split("\n\n")[0] == users[1].split("\n\n")[0]


def test_policy_escalation_keeps_whole_reason_and_shows_120_characters(scripted):
    scripted.answer("submit_draft", {"draft": DRAFT}).answer("reflect", ESCALATE)
    result = run(scripted)
    assert (result.status, result.stop_reason, result.phase) == ("stopped", "policy_escalation", "review")
    assert result.escalation_reason == ESCALATE["reason"]
    assert result.to_dict()["escalation_reason"] == ESCALATE["reason"][:120]
    assert result.candidate == DRAFT


DRAFT_STOPS = [
    pytest.param({"draft": ""}, "invalid_draft:empty", id="invalid_draft:empty"),
    pytest.param({"draft": "   "}, "invalid_draft:empty", id="invalid_draft:empty-whitespace"),
    pytest.param({"draft": "x" * 901}, "invalid_draft:too_long", id="invalid_draft:too_long"),
    pytest.param({"text": DRAFT}, "llm_invalid_schema", id="llm_invalid_schema-missing-field"),
    pytest.param({"draft": 42}, "llm_invalid_schema", id="llm_invalid_schema-not-a-string"),
    pytest.param("this is not json", "llm_invalid_json", id="llm_invalid_json"),
]


@pytest.mark.parametrize("payload, reason", DRAFT_STOPS)
def test_draft_stops(scripted, payload, reason):
    scripted.answer("submit_draft", payload)
    result = run(scripted)
    assert (result.status, result.stop_reason, result.phase) == ("stopped", reason, "draft")
    assert result.trace[-1]["status"] == "stopped"


def review(**changes):
    data = dict(REVISE, **changes)
    return {k: v for k, v in data.items() if v is not ...}


REVIEW_STOPS = [
    pytest.param(["not", "an", "object"], "invalid_review:not_object", id="invalid_review:not_object"),
    pytest.param(review(decision=...), "invalid_review:decision", id="invalid_review:decision"),
    pytest.param(review(decision="  "), "invalid_review:decision", id="invalid_review:decision-blank"),
    pytest.param(
        review(decision="publish"),
        "review_decision_not_allowed_policy:publish",
        id="review_decision_not_allowed_policy:publish",
    ),
    pytest.param(review(issues="none"), "invalid_review:issues", id="invalid_review:issues"),
    pytest.param(
        review(issues=[{"type": "overconfidence", "note": "n"}] * 5),
        "invalid_review:too_many_issues",
        id="invalid_review:too_many_issues",
    ),
    pytest.param(review(issues=["overconfidence"]), "invalid_review:issue_item", id="invalid_review:issue_item"),
    pytest.param(review(issues=[{"note": "n"}]), "invalid_review:issue_type", id="invalid_review:issue_type"),
    pytest.param(
        review(issues=[{"type": "tone", "note": "n"}]),
        "review_issue_not_allowed_policy:tone",
        id="review_issue_not_allowed_policy:tone",
    ),
    pytest.param(
        review(issues=[{"type": "overconfidence", "note": " "}]),
        "invalid_review:issue_note",
        id="invalid_review:issue_note",
    ),
    pytest.param(review(fix_plan="do it"), "invalid_review:fix_plan", id="invalid_review:fix_plan"),
    pytest.param(
        review(fix_plan=['Add "a b c"'] * 5),
        "invalid_review:too_many_fix_items",
        id="invalid_review:too_many_fix_items",
    ),
    pytest.param(review(fix_plan=["Add 'x y z'", ""]), "invalid_review:fix_item", id="invalid_review:fix_item"),
    pytest.param(review(fix_plan=[7]), "invalid_review:fix_item", id="invalid_review:fix_item-not-string"),
    pytest.param(review(reason=["why"]), "invalid_review:reason", id="invalid_review:reason"),
    pytest.param(
        dict(APPROVE, issues=[{"type": "legal_risk", "note": "refund promise"}]),
        "invalid_review:approve_with_high_risk_issue",
        id="invalid_review:approve_with_high_risk_issue",
    ),
    pytest.param(review(issues=[]), "invalid_review:revise_without_issues", id="invalid_review:revise_without_issues"),
    pytest.param(
        review(fix_plan=[]), "invalid_review:revise_without_fix_plan", id="invalid_review:revise_without_fix_plan"
    ),
    pytest.param(
        review(issues=[{"type": "policy_violation", "note": "n"}]),
        "invalid_review:high_risk_requires_escalate",
        id="invalid_review:high_risk_requires_escalate",
    ),
    pytest.param(
        dict(ESCALATE, reason=None),
        "invalid_review:escalate_reason_required",
        id="invalid_review:escalate_reason_required",
    ),
]


@pytest.mark.parametrize("payload, reason", REVIEW_STOPS)
def test_review_stops(scripted, payload, reason):
    scripted.answer("submit_draft", {"draft": DRAFT}).answer("reflect", payload)
    result = run(scripted)
    assert (result.status, result.stop_reason, result.phase) == ("stopped", reason, "review")


def test_approve_discards_its_fix_plan(scripted_tools):
    scripted_tools.answer("submit_draft", {"draft": DRAFT}).answer("reflect", dict(APPROVE, fix_plan=['Add "x y z"']))
    result = run(scripted_tools)
    assert result.stop_reason == "success" and result.review["fix_plan"] == []


def test_auto_revision_off_denies_revise_in_execution(scripted):
    scripted.answer("submit_draft", {"draft": DRAFT}).answer("reflect", REVISE)
    result = run(scripted, auto_revision=False)
    assert (result.stop_reason, result.phase) == ("review_decision_denied_execution:revise", "review")
    # The brake hands the work to a person: the draft, the issues and the fix plan go with the stop.
    assert result.candidate == DRAFT
    assert result.review["decision"] == "revise"
    assert result.review["issues"] == REVISE["issues"] and result.review["fix_plan"] == REVISE["fix_plan"]
    assert result.escalation_reason
    assert opens_escalation(result.stop_reason)


def test_execution_allowlist_narrower_than_policy_denies_approve(scripted_tools):
    scripted_tools.answer("submit_draft", {"draft": DRAFT}).answer("reflect", APPROVE)
    result = run(scripted_tools, decisions_execution=frozenset({"escalate"}))
    assert result.stop_reason == "review_decision_denied_execution:approve"


def test_empty_issue_type_list_fails_closed(scripted_tools):
    scripted_tools.answer("submit_draft", {"draft": DRAFT}).answer("reflect", REVISE)
    result = run(scripted_tools, issue_types={})
    assert result.stop_reason == "review_issue_not_allowed_policy:missing_uncertainty"


REVISION_STOPS = [
    pytest.param("", "invalid_revised:empty", id="invalid_revised:empty"),
    pytest.param(REVISED + " More." * 200, "invalid_revised:too_long", id="invalid_revised:too_long"),
    pytest.param("  " + DRAFT.replace(" ", "   ") + " ", "invalid_revised:no_changes", id="invalid_revised:no_changes"),
    pytest.param(
        f"Everything is different now and nobody knows anything. {CAVEAT}",
        "patch_violation:too_large_edit",
        id="patch_violation:too_large_edit",
    ),
    pytest.param(
        REVISED.replace("45 minutes", "50 minutes"), "patch_violation:no_new_facts", id="patch_violation:no_new_facts"
    ),
    pytest.param(
        REVISED + " See inc_other_99.", "patch_violation:new_incident_id", id="patch_violation:new_incident_id"
    ),
    pytest.param(
        REVISED + " This is a P0.", "patch_violation:new_severity_label", id="patch_violation:new_severity_label"
    ),
    pytest.param(REVISED.replace("the US", "the EU"), "patch_violation:new_region", id="patch_violation:new_region"),
    pytest.param(
        REVISED + " The issue is resolved.", "patch_violation:restricted_claims", id="patch_violation:restricted_claims"
    ),
    pytest.param(
        DRAFT + " We are working on it.",
        "patch_violation:fix_plan_not_applied",
        id="patch_violation:fix_plan_not_applied",
    ),
]


@pytest.mark.parametrize("revised, reason", REVISION_STOPS)
def test_revision_stops_at_the_patch_guard(scripted, revised, reason):
    scripted.answer("submit_draft", {"draft": DRAFT}).answer("reflect", REVISE).answer(
        "submit_revision", {"revised_answer": revised})
    result = run(scripted)
    assert (result.status, result.stop_reason, result.phase) == ("stopped", reason, "revise")
    if reason.startswith("patch_violation:"):
        assert result.candidate == revised.strip()  # the blocked candidate is kept for a person
        assert result.guard["violations"][0]["check"] == reason


def test_revision_with_wrong_schema_is_llm_invalid_schema(scripted):
    scripted.answer("submit_draft", {"draft": DRAFT}).answer("reflect", REVISE).answer("submit_revision", {"text": "x"})
    assert run(scripted).stop_reason == "llm_invalid_schema"


FINAL_STOPS = [
    pytest.param(DRAFT + " Refunds take 7 days.", "invalid_answer:no_new_facts", id="invalid_answer:no_new_facts"),
    pytest.param(
        DRAFT + " Tracked as inc_other_1.", "invalid_answer:new_incident_id", id="invalid_answer:new_incident_id"
    ),
    pytest.param(
        DRAFT + " This is now a P2.", "invalid_answer:new_severity_label", id="invalid_answer:new_severity_label"
    ),
    pytest.param(
        DRAFT + " Customers in the UK are affected too.", "invalid_answer:new_region", id="invalid_answer:new_region"
    ),
    pytest.param(
        DRAFT + " All payments are stable.", "invalid_answer:restricted_claims", id="invalid_answer:restricted_claims"
    ),
]


@pytest.mark.parametrize("draft, reason", FINAL_STOPS)
def test_approved_draft_still_passes_fact_and_claim_checks(scripted, draft, reason):
    """A draft is not its own evidence."""
    scripted.answer("submit_draft", {"draft": draft}).answer("reflect", APPROVE)
    result = run(scripted)
    assert (result.stop_reason, result.phase, result.candidate) == (reason, "finalize", draft)


def test_final_answer_longer_than_max_answer_chars_is_invalid_answer_too_long(scripted_tools):
    scripted_tools.answer("submit_draft", {"draft": DRAFT}).answer("reflect", APPROVE)
    result = run(scripted_tools, max_answer_chars=50)
    assert (result.stop_reason, result.phase) == ("invalid_answer:too_long", "finalize")


def test_observer_hears_every_step_and_model_call_in_order(scripted_tools):
    heard = []

    class Recorder:
        def on_step(self, run_id, entry):
            heard.append(("step", entry["phase"], entry["status"]))

        def on_model_call(self, run_id, record):
            heard.append(("call", record.stage, record.outcome))

    scripted_tools.answer("submit_draft", {"draft": DRAFT}).answer("reflect", APPROVE)
    policy = scripted_tools.policy(ReflectionPolicy)
    run_reflection(GOAL, DEMO_CONTEXT, policy, scripted_tools.llm, observer=Recorder())
    assert heard == [("call", "draft", "ok"), ("step", "draft", "ok"), ("call", "review", "ok"),
                     ("step", "review", "ok"), ("step", "finalize", "ok")]


def test_an_exception_inside_the_core_is_recorded_as_internal_error(scripted_tools):
    class Broken:
        def on_step(self, run_id, entry):
            raise KeyError("observer broke")

        def on_model_call(self, run_id, record):
            pass

    scripted_tools.answer("submit_draft", {"draft": DRAFT})
    policy = scripted_tools.policy(ReflectionPolicy)
    result = run_reflection(GOAL, DEMO_CONTEXT, policy, scripted_tools.llm, observer=Broken())
    assert (result.status, result.stop_reason, result.phase) == ("stopped", "internal_error:KeyError", "draft")


def test_policy_snapshot_round_trips(scripted_tools):
    policy = scripted_tools.policy(ReflectionPolicy, auto_revision=False, max_fix_items=2)
    assert ReflectionPolicy.from_dict(policy.to_dict()) == policy
    assert dataclasses.replace(policy, auto_revision=True).execution_allowlist == frozenset(
        {"approve", "revise", "escalate"}
    )

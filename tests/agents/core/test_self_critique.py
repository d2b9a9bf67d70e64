"""The self-critique pipeline, through the real openai SDK against a scripted server."""

import pytest

from agents.core.pipelines import run_self_critique
from agents.core.policy import SelfCritiquePolicy
from agents.core.stops import opens_escalation
from agents.testing.scripted_demo import (
    CAVEAT,
    CRITIQUE_APPROVE,
    CRITIQUE_REVISE,
    DEMO_CONTEXT,
    DRAFT,
    GOAL,
    REVISED,
)


def run(scripted, context=DEMO_CONTEXT, **policy_overrides):
    return run_self_critique(GOAL, context, scripted.policy(SelfCritiquePolicy, **policy_overrides), scripted.llm)


def critique(**changes):
    data = dict(CRITIQUE_REVISE, **changes)
    return {k: v for k, v in data.items() if v is not ...}


def test_approved_draft_succeeds_with_an_unchanged_audit(scripted):
    scripted.answer("submit_draft", {"draft": DRAFT}).answer("submit_critique", CRITIQUE_APPROVE)
    result = run(scripted)
    assert (result.stop_reason, result.outcome, result.answer) == ("success", "approved_direct", DRAFT)
    assert result.audit["changed"] is False and result.audit["before_hash"] == result.audit["after_hash"]


def test_revision_on_first_attempt_succeeds_with_full_audit(scripted):
    scripted.answer("submit_draft", {"draft": DRAFT}).answer("submit_critique", CRITIQUE_REVISE).answer(
        "submit_revision", {"revised_answer": REVISED})
    result = run(scripted)
    assert (result.stop_reason, result.outcome, result.answer) == ("success", "revised_once", REVISED)
    audit = result.audit
    assert audit["changed"] and audit["required_changes_count"] == 1 and audit["risks_count"] == 1
    assert audit["after_chars"] - audit["before_chars"] == audit["delta"] > 0
    assert audit["diff_unit"] == "sentences" and len(audit["diff_excerpt"]) <= 6
    revise = [s for s in result.trace if s["phase"] == "revise"][-1]
    assert (revise["attempts_used"], revise["retried"], revise["fallback_used"]) == (1, False, False)
    assert (revise["enforced"], revise["not_enforceable"]) == (1, 0)


def test_too_long_draft_gets_one_shortening_call(scripted):
    long_draft = DRAFT + " Next actions follow." * 60
    scripted.answer("submit_draft", {"draft": long_draft}).answer("submit_draft", {"draft": DRAFT}).answer(
        "submit_critique", CRITIQUE_APPROVE)
    result = run(scripted)
    assert result.stop_reason == "success"
    draft_step = result.trace[0]
    assert (draft_step["attempts_used"], draft_step["retried"]) == (2, True)
    assert "shorten" in scripted.fake.requests[1]["messages"][0]["content"].lower()


def test_draft_still_too_long_after_shortening_is_invalid_draft_too_long(scripted_tools):
    long_draft = "x" * 1000
    scripted_tools.answer("submit_draft", {"draft": long_draft}).answer("submit_draft", {"draft": long_draft})
    result = run(scripted_tools)
    assert (result.stop_reason, result.phase, len(scripted_tools.fake.requests)) == (
        "invalid_draft:too_long",
        "draft",
        2,
    )


def test_empty_draft_is_not_retried_and_stops_invalid_draft_empty(scripted_tools):
    scripted_tools.answer("submit_draft", {"draft": ""})
    result = run(scripted_tools)
    assert (result.stop_reason, len(scripted_tools.fake.requests)) == ("invalid_draft:empty", 1)


CRITIQUE_STOPS = [
    pytest.param("nope", "llm_invalid_json", id="llm_invalid_json"),
    pytest.param([1, 2], "invalid_critique:not_object", id="invalid_critique:not_object"),
    pytest.param(critique(decision=None), "invalid_critique:decision", id="invalid_critique:decision"),
    pytest.param(
        critique(decision="ship"),
        "critique_decision_not_allowed_policy:ship",
        id="critique_decision_not_allowed_policy:ship",
    ),
    pytest.param(critique(severity="urgent"), "invalid_critique:severity", id="invalid_critique:severity"),
    pytest.param(critique(severity=""), "invalid_critique:severity", id="invalid_critique:severity-blank"),
    pytest.param(critique(risks={"type": "x"}), "invalid_critique:risks", id="invalid_critique:risks"),
    pytest.param(
        critique(risks=[{"type": "overconfidence", "note": "n"}] * 6),
        "invalid_critique:too_many_risks",
        id="invalid_critique:too_many_risks",
    ),
    pytest.param(critique(risks=[None]), "invalid_critique:risk_item", id="invalid_critique:risk_item"),
    pytest.param(
        critique(risks=[{"type": "", "note": "n"}]), "invalid_critique:risk_type", id="invalid_critique:risk_type"
    ),
    pytest.param(
        critique(risks=[{"type": "vibes", "note": "n"}]),
        "critique_risk_not_allowed_policy:vibes",
        id="critique_risk_not_allowed_policy:vibes",
    ),
    pytest.param(
        critique(risks=[{"type": "overconfidence"}]), "invalid_critique:risk_note", id="invalid_critique:risk_note"
    ),
    pytest.param(
        critique(required_changes='ADD "x y z"'),
        "invalid_critique:required_changes",
        id="invalid_critique:required_changes",
    ),
    pytest.param(
        critique(required_changes=['ADD "a b c"'] * 6),
        "invalid_critique:too_many_required_changes",
        id="invalid_critique:too_many_required_changes",
    ),
    pytest.param(
        critique(required_changes=[" "]),
        "invalid_critique:required_change_item",
        id="invalid_critique:required_change_item",
    ),
    pytest.param(critique(reason=5), "invalid_critique:reason", id="invalid_critique:reason"),
    pytest.param(
        dict(CRITIQUE_APPROVE, required_changes=['ADD "x y z"']),
        "invalid_critique:approve_with_required_changes",
        id="invalid_critique:approve_with_required_changes",
    ),
    pytest.param(
        dict(CRITIQUE_APPROVE, severity="high"),
        "invalid_critique:approve_with_high_risk",
        id="invalid_critique:approve_with_high_risk",
    ),
    pytest.param(
        dict(CRITIQUE_APPROVE, risks=[{"type": "legal_risk", "note": "n"}]),
        "invalid_critique:approve_with_high_risk",
        id="invalid_critique:approve_with_high_risk-type",
    ),
    pytest.param(
        critique(required_changes=[]),
        "invalid_critique:revise_without_required_changes",
        id="invalid_critique:revise_without_required_changes",
    ),
    pytest.param(
        critique(required_changes=["Make it softer"]),
        "invalid_critique:required_changes_not_enforceable",
        id="invalid_critique:required_changes_not_enforceable",
    ),
    pytest.param(
        critique(required_changes=['ADD "a b c" and "d e f"']),
        "invalid_critique:required_changes_not_enforceable",
        id="invalid_critique:required_changes_not_enforceable-two-phrases",
    ),
    pytest.param(
        critique(severity="HIGH"),
        "invalid_critique:high_risk_requires_escalate",
        id="invalid_critique:high_risk_requires_escalate",
    ),
    pytest.param(
        critique(decision="escalate", reason=""),
        "invalid_critique:escalate_reason_required",
        id="invalid_critique:escalate_reason_required",
    ),
]


@pytest.mark.parametrize("payload, reason", CRITIQUE_STOPS)
def test_critique_stops(scripted, payload, reason):
    scripted.answer("submit_draft", {"draft": DRAFT}).answer("submit_critique", payload)
    result = run(scripted)
    assert (result.status, result.stop_reason, result.phase) == ("stopped", reason, "critique")


def test_missing_severity_defaults_to_medium(scripted_tools):
    scripted_tools.answer("submit_draft", {"draft": DRAFT}).answer("submit_critique", critique(severity=...)).answer(
        "submit_revision", {"revised_answer": REVISED})
    result = run(scripted_tools)
    assert result.stop_reason == "success" and result.critique["severity"] == "medium"


def test_escalation_is_policy_escalation_in_the_critique_phase(scripted_tools):
    scripted_tools.answer("submit_draft", {"draft": DRAFT}).answer(
        "submit_critique", critique(decision="escalate", severity="high", reason="Needs legal review."))
    result = run(scripted_tools)
    assert (result.stop_reason, result.phase, result.escalation_reason) == (
        "policy_escalation",
        "critique",
        "Needs legal review.",
    )


def test_auto_revision_off_is_critique_decision_denied_execution(scripted_tools):
    scripted_tools.answer("submit_draft", {"draft": DRAFT}).answer("submit_critique", CRITIQUE_REVISE)
    result = run(scripted_tools, auto_revision=False)
    assert result.stop_reason == "critique_decision_denied_execution:revise"
    # The brake hands the draft and the required changes to a person.
    assert result.candidate == DRAFT
    assert result.critique["required_changes"] == CRITIQUE_REVISE["required_changes"]
    assert result.escalation_reason
    assert opens_escalation(result.stop_reason)


NOT_APPLIED = DRAFT.replace("We expect to restore", "We aim to restore")


def test_second_attempt_uses_the_strict_instruction_and_succeeds(scripted):
    scripted.answer("submit_draft", {"draft": DRAFT}).answer("submit_critique", CRITIQUE_REVISE)
    scripted.answer("submit_revision", {"revised_answer": NOT_APPLIED}).answer(
        "submit_revision", {"revised_answer": REVISED}
    )
    result = run(scripted)
    assert (result.stop_reason, result.outcome) == ("success", "revised_retry")
    revises = [s for s in result.trace if s["phase"] == "revise"]
    assert [s["status"] for s in revises] == ["retry", "ok"]
    assert revises[-1]["attempts_used"] == 2 and revises[-1]["retried"] is True
    assert "verbatim" in scripted.fake.requests[3]["messages"][0]["content"]
    assert "verbatim" not in scripted.fake.requests[2]["messages"][0]["content"]


def test_three_failed_attempts_fall_back_to_the_deterministic_edit(scripted):
    scripted.answer("submit_draft", {"draft": DRAFT}).answer("submit_critique", CRITIQUE_REVISE)
    for _ in range(3):
        scripted.answer("submit_revision", {"revised_answer": NOT_APPLIED})
    result = run(scripted)
    assert (result.stop_reason, result.outcome) == ("success", "revised_fallback")
    assert result.answer.endswith(CAVEAT) and ".." not in result.answer
    fallback = result.trace[-2]
    assert (fallback["phase"], fallback["fallback_used"], fallback["attempts_used"]) == ("fallback", True, 3)
    assert result.usage["model_calls"] == 5  # draft, critique, three revisions; the fallback is not a call


def test_fallback_that_still_fails_the_guard_stops_with_that_reason(scripted_tools):
    scripted_tools.answer("submit_draft", {"draft": DRAFT})
    scripted_tools.answer("submit_critique", critique(required_changes=[
        'ADD "We are also sending every affected customer a detailed personal note about the payment problem today."']))
    for _ in range(3):
        scripted_tools.answer("submit_revision", {"revised_answer": NOT_APPLIED})
    result = run(scripted_tools)
    assert (result.stop_reason, result.phase) == ("patch_violation:length_increase_limit", "fallback")
    assert result.candidate.endswith("payment problem today.")


def test_other_guard_failures_stop_at_once_without_retry(scripted_tools):
    scripted_tools.answer("submit_draft", {"draft": DRAFT}).answer("submit_critique", CRITIQUE_REVISE)
    scripted_tools.answer("submit_revision", {"revised_answer": REVISED.replace(
        "We are investigating a payment problem", "The payment problem is resolved")})
    result = run(scripted_tools)
    assert (result.stop_reason, result.phase) == ("patch_violation:restricted_claims", "revise")
    assert len(scripted_tools.fake.requests) == 3


def test_length_growth_above_the_context_hint_is_patch_violation_length_increase_limit(scripted):
    scripted.answer("submit_draft", {"draft": DRAFT}).answer("submit_critique", CRITIQUE_REVISE)
    scripted.answer("submit_revision", {"revised_answer": REVISED})
    context = dict(DEMO_CONTEXT, policy_hints={"max_length_increase_pct": 5})
    result = run(scripted, context=context)
    assert (result.stop_reason, result.phase) == ("patch_violation:length_increase_limit", "revise")


def test_strict_claims_stop_a_claim_the_draft_already_had(scripted_tools):
    """avoid_absolute_guarantees makes the claim check strict."""
    draft = DRAFT + " Card payments are resolved."
    context = dict(
        DEMO_CONTEXT, incident=dict(DEMO_CONTEXT["incident"], status="card payments resolved, wallets degraded")
    )
    scripted_tools.answer("submit_draft", {"draft": draft}).answer("submit_critique", CRITIQUE_REVISE)
    scripted_tools.answer("submit_revision", {"revised_answer": f"{draft} {CAVEAT}"})
    result = run(scripted_tools, context=context)
    assert result.stop_reason == "patch_violation:restricted_claims"
    relaxed = dict(context, policy_hints={"avoid_absolute_guarantees": False})
    scripted_tools.answer("submit_draft", {"draft": draft}).answer("submit_critique", CRITIQUE_REVISE)
    scripted_tools.answer("submit_revision", {"revised_answer": f"{draft} {CAVEAT}"})
    assert run(scripted_tools, context=relaxed).stop_reason == "success"

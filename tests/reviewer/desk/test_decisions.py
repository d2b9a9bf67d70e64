"""People's decisions on escalations: reviewer.desk.decisions, without HTTP."""

import pytest
from django.core.exceptions import PermissionDenied
from django.urls import reverse

from agents.core.guard import similarity
from agents.models import PipelinePolicy, RestrictedClaim
from reviewer.desk import decisions
from reviewer.desk.decisions import DecisionInvalid
from reviewer.models import Decision, Escalation

CAVEAT = " This estimate may change as we learn more."


@pytest.fixture
def policy_escalation(demo_runs):
    """The reflection run the offline reviewer escalated (draft and candidate are the same text)."""
    return Escalation.objects.select_related("run").get(stop_reason="policy_escalation")


@pytest.fixture
def blocked(demo_runs):
    """The self-critique run whose revision the guard blocked for growing the text too much."""
    return Escalation.objects.select_related("run").get(stop_reason="patch_violation:length_increase_limit")


def with_new_number(text: str) -> str:
    assert "within 45 minutes" in text
    return text.replace("within 45 minutes", "in 99 minutes")


def checks(result: dict) -> list[str]:
    return [v["check"] for v in result["violations"]]


def test_approve_sets_final_text_to_the_candidate_and_writes_one_decision(blocked, users):
    outcome = decisions.decide(blocked.pk, users.lead, "approve")

    assert outcome.won
    blocked.refresh_from_db()
    assert blocked.status == "approved"
    assert blocked.final_text == blocked.candidate
    assert blocked.decided_by == users.lead and blocked.decided_at is not None
    decision = Decision.objects.get(escalation=blocked)
    assert outcome.decision == decision
    assert (decision.actor, decision.action, decision.final_text) == (users.lead, "approve", blocked.candidate)
    assert decision.guard_results["stop_reason"] == "patch_violation:length_increase_limit"


def test_an_edit_with_a_new_number_shows_the_no_new_facts_violation(policy_escalation):
    result = decisions.guard_edit(policy_escalation, with_new_number(policy_escalation.draft))

    assert not result["ok"]
    assert "patch_violation:no_new_facts" in checks(result)
    assert any(v["found"] == "99" for v in result["violations"])


def test_a_number_is_reported_once_even_though_the_final_answer_check_sees_it_too(policy_escalation):
    result = decisions.guard_edit(policy_escalation, with_new_number(policy_escalation.draft))

    assert [v["found"] for v in result["violations"]].count("99") == 1


def test_an_edit_with_violations_is_refused_without_a_justification(policy_escalation, users):
    with pytest.raises(DecisionInvalid, match="justification"):
        decisions.decide(policy_escalation.pk, users.lead, "edit_approve",
                         text=with_new_number(policy_escalation.draft), note="  ")

    policy_escalation.refresh_from_db()
    assert policy_escalation.status == "pending"
    assert not Decision.objects.exists()


def test_an_edit_with_violations_is_accepted_with_a_justification_recorded_in_note_and_guard_results(
        policy_escalation, users):
    text = with_new_number(policy_escalation.draft)

    outcome = decisions.decide(policy_escalation.pk, users.lead, "edit_approve", text=text,
                               note="Ops confirmed the new ETA on the bridge call.")

    assert outcome.won
    decision = outcome.decision
    assert decision.action == "edit_approve"
    assert decision.final_text == text
    assert decision.note == "Ops confirmed the new ETA on the bridge call."
    assert "patch_violation:no_new_facts" in checks(decision.guard_results)
    assert decision.guard_results["ok"] is False
    assert Escalation.objects.get(pk=policy_escalation.pk).final_text == text


def test_a_safe_edit_needs_no_justification(policy_escalation, users):
    text = policy_escalation.draft + CAVEAT
    assert decisions.guard_edit(policy_escalation, text)["ok"]

    outcome = decisions.decide(policy_escalation.pk, users.lead, "edit_approve", text=text)

    assert outcome.won and outcome.decision.guard_results["violations"] == []


def test_an_unchanged_edit_is_not_a_violation_but_a_plain_approval(policy_escalation, users):
    result = decisions.guard_edit(policy_escalation, policy_escalation.candidate)
    assert "invalid_revised:no_changes" not in checks(result)

    outcome = decisions.decide(policy_escalation.pk, users.lead, "edit_approve", text=policy_escalation.candidate)

    assert outcome.decision.action == "approve"


def test_an_empty_edit_is_refused(policy_escalation, users):
    with pytest.raises(DecisionInvalid, match="empty"):
        decisions.decide(policy_escalation.pk, users.lead, "edit_approve", text="   ", note="why not")
    assert not Decision.objects.exists()


def test_reject_needs_a_reason(blocked, users):
    with pytest.raises(DecisionInvalid, match="reason"):
        decisions.decide(blocked.pk, users.lead, "reject", note="")
    blocked.refresh_from_db()
    assert blocked.status == "pending"
    assert not Decision.objects.exists()


def test_reject_records_the_reason_and_no_final_text(blocked, users):
    outcome = decisions.decide(blocked.pk, users.lead, "reject", note="We will not give an ETA today.")

    blocked.refresh_from_db()
    assert blocked.status == "rejected" and blocked.final_text == ""
    assert outcome.decision.note == "We will not give an ETA today."


def test_an_unknown_action_is_refused(blocked, users):
    with pytest.raises(DecisionInvalid):
        decisions.decide(blocked.pk, users.lead, "publish")


def test_a_second_decision_on_a_decided_escalation_is_lost_and_writes_nothing(blocked, users):
    decisions.decide(blocked.pk, users.lead, "approve")

    outcome = decisions.decide(blocked.pk, users.lead2, "reject", note="Too long.")

    assert not outcome.won and outcome.decision is None
    assert outcome.escalation.decided_by == users.lead
    assert outcome.escalation.status == "approved"
    assert Decision.objects.filter(escalation=blocked).count() == 1


def test_a_late_decision_is_told_it_lost_even_when_its_form_is_incomplete(blocked, users):
    decisions.decide(blocked.pk, users.lead, "approve")

    outcome = decisions.decide(blocked.pk, users.lead2, "reject", note="")  # no reason: still just "lost"

    assert not outcome.won


def test_decisions_are_append_only_a_lost_attempt_leaves_the_first_record_as_written(blocked, users):
    first = decisions.decide(blocked.pk, users.lead, "reject", note="Not accurate.").decision
    written = Decision.objects.filter(pk=first.pk).values().get()

    decisions.decide(blocked.pk, users.lead2, "edit_approve", text=blocked.draft + " Thanks.", note="x")
    decisions.decide(blocked.pk, users.lead, "approve")

    assert Decision.objects.filter(pk=first.pk).values().get() == written
    assert Decision.objects.count() == 1
    assert Escalation.objects.get(pk=blocked.pk).status == "rejected"


def test_ops_staff_cannot_decide(blocked, users):
    with pytest.raises(PermissionDenied):
        decisions.decide(blocked.pk, users.ops, "approve")
    assert not Decision.objects.exists()


def test_take_holds_a_pending_escalation_and_release_gives_it_back(blocked, users):
    assert decisions.take(blocked.pk, users.lead)
    blocked.refresh_from_db()
    assert blocked.taken_by == users.lead and blocked.taken_at is not None

    assert decisions.release(blocked.pk, users.lead)
    blocked.refresh_from_db()
    assert blocked.taken_by is None and blocked.taken_at is None


def test_a_lead_cannot_take_or_release_what_another_lead_took(blocked, users):
    decisions.take(blocked.pk, users.lead)

    assert not decisions.take(blocked.pk, users.lead2)
    assert not decisions.release(blocked.pk, users.lead2)
    assert Escalation.objects.get(pk=blocked.pk).taken_by == users.lead


def test_taking_again_what_you_took_is_fine(blocked, users):
    assert decisions.take(blocked.pk, users.lead)
    assert decisions.take(blocked.pk, users.lead)


def test_a_decided_escalation_cannot_be_taken(blocked, users):
    decisions.decide(blocked.pk, users.lead, "approve")
    assert not decisions.take(blocked.pk, users.lead2)


def test_taking_does_not_stop_another_lead_from_deciding(blocked, users):
    decisions.take(blocked.pk, users.lead)

    outcome = decisions.decide(blocked.pk, users.lead2, "approve")

    assert outcome.won and outcome.escalation.decided_by == users.lead2


def test_a_policy_escalations_guard_edit_uses_the_draft_as_the_original(policy_escalation):
    # Make the candidate differ, so the test can tell which text the guard compared with.
    Escalation.objects.filter(pk=policy_escalation.pk).update(candidate="Something else entirely.")
    policy_escalation.refresh_from_db()
    text = policy_escalation.draft + CAVEAT

    result = decisions.guard_edit(policy_escalation, text)

    assert result["original"] == "draft"
    assert result["measurements"]["similarity"] == round(similarity(policy_escalation.draft, text), 4)
    assert result["ok"]


def test_without_a_draft_the_guard_compares_with_the_candidate(policy_escalation):
    Escalation.objects.filter(pk=policy_escalation.pk).update(draft="")
    policy_escalation.refresh_from_db()

    result = decisions.guard_edit(policy_escalation, policy_escalation.candidate + CAVEAT)

    assert result["original"] == "candidate"
    assert result["ok"]


def test_guard_edit_reads_the_policy_that_applies_now_not_the_runs_snapshot(policy_escalation):
    run = policy_escalation.run
    run.policy = {**run.policy, "min_patch_similarity": 0.99}  # the snapshot: no longer what applies
    run.save(update_fields=["policy"])
    edit = policy_escalation.draft + CAVEAT

    assert "patch_violation:too_large_edit" not in checks(decisions.guard_edit(policy_escalation, edit))

    PipelinePolicy.objects.filter(pipeline=run.pipeline, active=True).update(min_patch_similarity=0.99)
    result = decisions.guard_edit(policy_escalation, edit)
    assert "patch_violation:too_large_edit" in checks(result)
    row = PipelinePolicy.objects.get(pipeline=run.pipeline, active=True)
    assert (result["policy"]["source"], result["policy"]["policy_id"]) == ("current", row.pk)
    assert result["policy"]["text"].startswith(f"the current policy “{row.name}” (#{row.pk}, updated ")


def test_guard_edit_falls_back_to_the_snapshot_without_an_active_policy_and_says_so(policy_escalation):
    run = policy_escalation.run
    run.policy = {**run.policy, "min_patch_similarity": 0.99}
    run.save(update_fields=["policy"])
    PipelinePolicy.objects.filter(pipeline=run.pipeline).update(active=False)

    result = decisions.guard_edit(policy_escalation, policy_escalation.draft + CAVEAT)

    assert "patch_violation:too_large_edit" in checks(result)
    assert result["policy"]["source"] == "snapshot"
    assert result["policy"]["text"] == "the run's policy snapshot (no active reflection policy now)"


WAIVER_CLAIM = r"\bwaives? (?:all )?fees\b"


def test_a_restricted_claim_added_after_the_run_checks_the_edit_and_the_decision_records_the_policy(
        policy_escalation, users):
    edit = policy_escalation.draft + " Our team waives all fees for affected merchants."
    before = decisions.guard_edit(policy_escalation, edit)
    assert "restricted_claims" not in " ".join(checks(before))  # the snapshot and today's rows lack it

    RestrictedClaim.objects.create(pattern=WAIVER_CLAIM, family="fee waivers")  # added after the run
    assert WAIVER_CLAIM not in policy_escalation.run.policy["guard"]["restricted_claims"]
    after = decisions.guard_edit(policy_escalation, edit)
    assert any(v["check"].endswith("restricted_claims") and v["found"] == "waives all fees"
               for v in after["violations"])

    with pytest.raises(DecisionInvalid, match="justification"):
        decisions.decide(policy_escalation.pk, users.lead, "edit_approve", text=edit)
    outcome = decisions.decide(policy_escalation.pk, users.lead, "edit_approve", text=edit,
                               note="Finance confirmed the waiver.")
    decision = outcome.decision
    assert decision.guard_results["policy"]["source"] == "current"
    assert WAIVER_CLAIM in decision.policy["guard"]["restricted_claims"]  # the policy the check used


def test_the_check_fragment_says_which_policy_the_check_used(login, policy_escalation):
    response = login("lead").post(reverse("escalation_check", args=[policy_escalation.pk]),
                                  {"text": policy_escalation.draft + " Thanks."}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    row = PipelinePolicy.objects.get(pipeline="reflection", active=True)
    assert "Checked against the current policy" in html and f"(#{row.pk}, updated " in html


def test_guard_edit_applies_the_self_critique_length_cap(blocked):
    result = decisions.guard_edit(blocked, blocked.candidate)  # the text the pipeline's guard blocked
    assert "patch_violation:length_increase_limit" in checks(result)

    assert decisions.guard_edit(blocked, blocked.draft + " Thanks.")["ok"]


def test_guard_edit_applies_strict_claims_for_self_critique_with_avoid_absolute_guarantees(blocked):
    result = decisions.guard_edit(blocked, blocked.draft.replace("We are investigating failing wallet top-ups",
                                                                 "We have resolved the failing wallet top-ups"))

    assert "patch_violation:restricted_claims" in checks(result)


def test_guard_edit_does_not_hold_a_person_to_the_models_fix_plan(blocked):
    # The critique required adding a caveat; a lead may leave it out.
    result = decisions.guard_edit(blocked, blocked.draft + " Thanks.")

    assert "patch_violation:required_changes_not_applied" not in checks(result)


def test_guard_edit_shows_an_unsupported_number_kept_from_the_draft(policy_escalation):
    # A draft is not its own evidence: keeping its unsupported number is still flagged.
    draft = with_new_number(policy_escalation.draft)
    Escalation.objects.filter(pk=policy_escalation.pk).update(draft=draft, candidate=draft)
    policy_escalation.refresh_from_db()

    result = decisions.guard_edit(policy_escalation, draft + CAVEAT)

    assert "invalid_answer:no_new_facts" in checks(result)

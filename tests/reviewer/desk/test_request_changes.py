"""Request changes: a lead's instructions go to the model for one revision that the same patch guard
checks; the result comes back to the same escalation, which stays pending."""

from datetime import timedelta

import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone

from agents.testing.scripted_demo import CAVEAT
from agents.testing.scripted_server import status
from reviewer.desk import decisions
from reviewer.desk.decisions import DecisionInvalid
from reviewer.models import ChangeRequest, Decision, Escalation

ASK = f'Add "{CAVEAT}" at the end.'


@pytest.fixture
def escalation(demo_runs):
    return Escalation.objects.get(stop_reason="policy_escalation")


def test_requested_changes_come_back_as_the_candidate_when_the_guard_passes(escalation, users, scripted_tools):
    before = escalation.candidate
    change = decisions.request_changes(escalation.pk, users.lead, ASK, enqueue=False)

    decision = change.decision
    assert (decision.action, decision.actor, decision.note) == ("request_changes", users.lead, ASK)
    assert Escalation.objects.get(pk=escalation.pk).status == "pending"  # not a final decision

    scripted_tools.answer("submit_revision", {"revised_answer": f"{before} {CAVEAT}"})
    change = decisions.make_requested_changes(change.pk, llm=scripted_tools.llm)

    assert (change.status, change.ok, change.stop_reason) == ("done", True, "success")
    assert change.revision == f"{before} {CAVEAT}" and change.text_before == before
    assert change.guard["violations"] == [] and change.policy["source"] == "current"
    assert [c["stage"] for c in change.calls] == ["revise"] and change.calls[0]["model"] == "test-model"
    assert [step["phase"] for step in change.trace] == ["revise", "finalize"]
    request = scripted_tools.fake.requests[-1]
    assert CAVEAT in str(request["messages"])  # the instructions reached the model as its fix plan
    escalation.refresh_from_db()
    assert (escalation.status, escalation.candidate) == ("pending", f"{before} {CAVEAT}")

    outcome = decisions.decide(escalation.pk, users.lead, "approve")  # the lead decides the revision
    assert outcome.won and outcome.escalation.final_text == f"{before} {CAVEAT}"
    assert outcome.decision.guard_results["source"] == "change_request" and outcome.decision.guard_results["ok"]
    assert list(escalation.decisions.values_list("action", flat=True)) == ["request_changes", "approve"]


@pytest.mark.parametrize(("revision", "check"), [
    # the quoted phrase of the instructions is missing: enforced as a fix plan's
    ("{before} Thank you for your patience.", "patch_violation:fix_plan_not_applied"),
    ("{before} {caveat} Refunds arrive within 48 minutes.", "patch_violation:no_new_facts"),  # a new number
])
def test_a_revision_the_guard_blocks_is_shown_and_the_candidate_is_unchanged(
        escalation, users, scripted_tools, revision, check):
    before = escalation.candidate
    change = decisions.request_changes(escalation.pk, users.lead, ASK, enqueue=False)
    scripted_tools.answer("submit_revision", {"revised_answer": revision.format(before=before, caveat=CAVEAT)})

    change = decisions.make_requested_changes(change.pk, llm=scripted_tools.llm)

    assert (change.status, change.ok) == ("done", False) and change.stop_reason == check
    assert change.violations and change.revision
    escalation.refresh_from_db()
    assert (escalation.status, escalation.candidate) == ("pending", before)

    page = escalation_page(users, escalation)
    assert "The guard blocked the revision" in page and change.violations[0]["check"] in page


def test_a_model_failure_is_recorded_and_the_escalation_is_unchanged(escalation, users, scripted_tools):
    before = (escalation.candidate, escalation.guard)
    change = decisions.request_changes(escalation.pk, users.lead, ASK, enqueue=False)
    scripted_tools.reply(status(500))

    change = decisions.make_requested_changes(change.pk, llm=scripted_tools.llm)

    assert (change.status, change.stop_reason, change.revision) == ("failed", "llm_unavailable", "")
    escalation.refresh_from_db()
    assert (escalation.candidate, escalation.guard, escalation.status) == (*before, "pending")
    page = escalation_page(users, escalation)
    assert "The model could not revise the text" in page and "The escalation is unchanged." in page


def test_a_second_request_while_one_is_in_flight_is_refused_clearly(escalation, users, login):
    decisions.request_changes(escalation.pk, users.lead, ASK, enqueue=False)

    with pytest.raises(DecisionInvalid, match="still being made"):
        decisions.request_changes(escalation.pk, users.lead2, "Shorter, please.", enqueue=False)
    response = login("lead2").post(reverse("escalation_request_changes", args=[escalation.pk]),
                                   {"instructions": "Shorter, please."})
    assert response.status_code == 422 and "still being made by the model" in response.content.decode()
    assert ChangeRequest.objects.count() == 1
    assert Decision.objects.filter(action="request_changes").count() == 1


def test_request_changes_is_for_leads_and_pending_escalations_with_instructions(escalation, users, login):
    assert login("ops").post(reverse("escalation_request_changes", args=[escalation.pk]),
                             {"instructions": ASK}).status_code == 403
    with pytest.raises(DecisionInvalid, match="Write the changes"):
        decisions.request_changes(escalation.pk, users.lead, "   ")
    with pytest.raises(DecisionInvalid, match="control character"):
        decisions.request_changes(escalation.pk, users.lead, "Add\x00 it")
    with pytest.raises(DecisionInvalid, match="request_changes|Unknown action"):
        decisions.decide(escalation.pk, users.lead, "request_changes")
    decisions.decide(escalation.pk, users.lead, "reject", note="Wrong incident.")
    with pytest.raises(DecisionInvalid, match="already decided"):
        decisions.request_changes(escalation.pk, users.lead, ASK)
    assert not ChangeRequest.objects.exists()


def test_request_changes_on_what_another_lead_took_needs_the_tick_on_the_page_and_in_the_api(
        escalation, users, login, api, django_capture_on_commit_callbacks):
    decisions.take(escalation.pk, users.lead2)
    client = login("lead")
    url = reverse("escalation_request_changes", args=[escalation.pk])

    page = client.get(reverse("escalation", args=[escalation.pk])).content.decode()
    refused = client.post(url, {"instructions": ASK})
    answer = api("lead").post(f"/escalations/{escalation.pk}/decision", {"action": "request_changes", "note": ASK})

    assert 'id="over-taken-changes"' in page
    assert refused.status_code == 422 and "took this escalation" in refused.content.decode()
    assert answer.status_code == 409 and answer.json()["taken_by"] == "lead2"
    assert not ChangeRequest.objects.exists()
    with django_capture_on_commit_callbacks(execute=False):
        assert client.post(url, {"instructions": ASK, "over_taken": "on"}).status_code == 302
    assert ChangeRequest.objects.get().requested_by == users.lead


def test_the_form_queues_the_request_and_the_page_shows_it_in_flight(escalation, users, login,
                                                                      django_capture_on_commit_callbacks):
    client = login("lead")
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(reverse("escalation_request_changes", args=[escalation.pk]), {"instructions": ASK})
    assert response.status_code == 302 and len(callbacks) == 1  # the task is enqueued once the rows commit
    page = client.get(reverse("escalation", args=[escalation.pk])).content.decode()
    assert "The model is revising the text" in page and 'hx-trigger="every 2s"' in page
    assert "Instructions:" in page and "Request changes</button>" not in page


def escalation_page(users, escalation) -> str:
    from django.test import Client

    client = Client()
    client.force_login(users.lead)
    return client.get(reverse("escalation", args=[escalation.pk])).content.decode()


def test_the_api_requests_changes_with_202_and_refuses_a_second_in_flight_with_409(escalation, api,
                                                                                    django_capture_on_commit_callbacks):
    lead = api("lead")
    url = f"/escalations/{escalation.pk}/decision"
    with django_capture_on_commit_callbacks(execute=False):
        first = lead.post(url, {"action": "request_changes", "note": ASK})
        second = lead.post(url, {"action": "request_changes", "note": "Shorter."})
    empty = lead.post(url, {"action": "request_changes", "note": " "})

    assert first.status_code == 202, first.content
    body = first.json()
    assert body["status"] == "pending" and body["change_requests"][0]["instructions"] == ASK
    assert body["decisions"][-1]["action"] == "request_changes"
    assert second.status_code == 409 and "still being made" in second.json()["message"]
    assert empty.status_code == 422
    assert api("ops").post(url, {"action": "request_changes", "note": ASK}).status_code == 403


def test_a_revision_back_after_a_decision_changes_nothing(escalation, users, scripted_tools):
    before = escalation.candidate
    change = decisions.request_changes(escalation.pk, users.lead, ASK, enqueue=False)
    decisions.decide(escalation.pk, users.lead2, "reject", note="Not needed any more.")  # decided meanwhile
    scripted_tools.answer("submit_revision", {"revised_answer": f"{before} {CAVEAT}"})

    change = decisions.make_requested_changes(change.pk, llm=scripted_tools.llm)

    escalation.refresh_from_db()
    assert change.ok and (escalation.status, escalation.candidate, escalation.final_text) == ("rejected", before, "")
    assert "the escalation was decided before it came back" in escalation_page(users, escalation)


def test_a_request_lost_for_ten_minutes_no_longer_blocks_a_new_one(escalation, users):
    lost = decisions.request_changes(escalation.pk, users.lead, ASK, enqueue=False)
    ChangeRequest.objects.filter(pk=lost.pk).update(status="running")  # its worker died mid-call
    start = timezone.now()
    with time_machine.travel(start + decisions.CHANGE_LOST_AFTER - timedelta(seconds=5)):
        with pytest.raises(DecisionInvalid, match="still being made"):
            decisions.request_changes(escalation.pk, users.lead, "Shorter.", enqueue=False)
    with time_machine.travel(start + decisions.CHANGE_LOST_AFTER + timedelta(seconds=5)):
        again = decisions.request_changes(escalation.pk, users.lead, "Shorter.", enqueue=False)

    lost.refresh_from_db()
    assert (lost.status, lost.stop_reason) == ("failed", "worker_lost") and again.status == "queued"
    assert decisions.make_requested_changes(lost.pk) is None  # delivered again late: nothing to do

"""Approvals by more than one person through the JSON API: what an escalation needs and has, and
approving by the same rules as the desk, with precise 4xx answers."""

import pytest

from reviewer.models import Escalation
from reviewer.roles import SUPPORT_LEAD
from tests.factories import make_escalation, make_incident, make_user

EDITED = "We are investigating a problem in the EU. Current status: degraded. We will update you soon."


@pytest.fixture
def two_of_three(users):
    users.lead3 = make_user("lead3", group=SUPPORT_LEAD)
    return make_escalation(incident=make_incident("inc_api_quorum_1"), required_approvals=2)


def decide(client, escalation, **body):
    return client.post(f"/escalations/{escalation.pk}/decision", body)


def test_an_escalation_shows_what_it_needs_and_who_approved_when(api, two_of_three):
    lead = api("lead")
    counted = decide(lead, two_of_three, action="approve", text_version=1)

    assert counted.status_code == 202
    body = counted.json()
    assert (body["status"], body["required_approvals"], body["approvals_so_far"]) == ("pending", 2, 1)
    assert body["approval_group"] == "Support leads" and body["text_version"] == 1 and body["text_by"] is None
    [approval] = body["approvals"]
    assert approval["user"] == "lead" and approval["counted"] and approval["at"]
    listed = {row["id"]: row for row in lead.get("/escalations").json()}
    assert listed[two_of_three.pk]["approvals_so_far"] == 1
    assert lead.get(f"/escalations/{two_of_three.pk}").json()["approvals"][0]["user"] == "lead"


def test_the_second_distinct_approval_decides_with_201(api, two_of_three):
    decide(api("lead"), two_of_three, action="approve")

    decided = decide(api("lead2"), two_of_three, action="approve")

    assert decided.status_code == 201
    assert (decided.json()["status"], decided.json()["decided_by"]) == ("approved", "lead2")


def test_approving_twice_answers_409_and_the_editor_approving_answers_403(api, two_of_three):
    lead, lead2 = api("lead"), api("lead2")
    decide(lead2, two_of_three, action="approve")
    again = decide(lead2, two_of_three, action="approve")
    assert again.status_code == 409 and again.json()["message"].startswith("You already approved this text at")

    edit = decide(lead, two_of_three, action="edit_approve", text=EDITED)
    assert edit.status_code == 202
    body = edit.json()
    assert (body["text_version"], body["text_by"], body["approvals_so_far"]) == (2, "lead", 0)
    assert [a["counted"] for a in body["approvals"]] == [False]
    assert body["approvals"][0]["superseded_because"] == "edited"

    own = decide(lead, two_of_three, action="approve")
    assert own.status_code == 403
    assert own.json()["message"].startswith("You wrote this version of the text")
    stale = decide(lead2, two_of_three, action="approve", text_version=1)
    assert stale.status_code == 409 and "The text changed since you read it" in stale.json()["message"]
    assert Escalation.objects.get(pk=two_of_three.pk).status == "pending"


def test_one_rejection_through_the_api_ends_it(api, two_of_three):
    decide(api("lead"), two_of_three, action="approve")

    rejected = decide(api("lead2"), two_of_three, action="reject", note="Wrong region.")

    assert rejected.status_code == 201 and rejected.json()["status"] == "rejected"
    late = decide(api("lead3"), two_of_three, action="approve")
    assert late.status_code == 409 and late.json()["decided_by"] == "lead2"


def revised_by_request(escalation, scripted_tools) -> None:
    """The model's revision a lead's request for changes asked for comes back and passes the guard."""
    from agents.testing.scripted_demo import CAVEAT
    from reviewer.desk import decisions
    from reviewer.models import ChangeRequest

    change = ChangeRequest.objects.get(escalation=escalation)
    scripted_tools.answer("submit_revision", {"revised_answer": f"{escalation.candidate} {CAVEAT}"})
    assert decisions.make_requested_changes(change.pk, llm=scripted_tools.llm).ok


def test_the_lead_who_requested_a_revision_cannot_approve_it_403(api, two_of_three, scripted_tools):
    from agents.testing.scripted_demo import CAVEAT

    lead = api("lead")
    asked = decide(lead, two_of_three, action="request_changes", note=f'Add "{CAVEAT}" at the end.')
    assert asked.status_code == 202
    revised_by_request(two_of_three, scripted_tools)
    assert lead.get(f"/escalations/{two_of_three.pk}").json()["text_by"] == "lead"

    own = decide(lead, two_of_three, action="approve")

    assert own.status_code == 403
    assert "the revision you requested" in own.json()["message"]
    assert lead.get(f"/escalations/{two_of_three.pk}").json()["approvals_so_far"] == 0
    assert decide(api("lead2"), two_of_three, action="approve").status_code == 202
    assert decide(api("lead3"), two_of_three, action="approve").status_code == 201

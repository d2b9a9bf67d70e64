"""A pending escalation whose incident's facts changed since its run says so, and approving it then
needs a confirmation; every decision records the text hash, the incident version and the policy."""

import pytest
from django.urls import reverse

from agents.core.text import text_hash
from agents.models import IncidentFact
from reviewer.desk import decisions
from reviewer.desk.decisions import DecisionInvalid
from reviewer.models import Escalation

CHANGED = "Facts changed since this draft: ETA 45 minutes → 30 minutes"


@pytest.fixture
def escalation(demo_runs):
    return Escalation.objects.select_related("run").get(stop_reason="policy_escalation")


@pytest.fixture
def eta_changed(escalation, users):
    incident = escalation.run.incident
    IncidentFact.objects.filter(incident=incident, key="eta_minutes").update(value="30")
    return incident.record_version(users.ops)


def test_an_unchanged_incident_says_nothing_and_approves_plainly(escalation, users, login):
    page = login("lead").get(reverse("escalation", args=[escalation.pk])).content.decode()
    assert "Facts changed" not in page
    assert decisions.decide(escalation.pk, users.lead, "approve").won


def test_the_escalation_page_and_the_inbox_say_what_changed(escalation, eta_changed, login):
    client = login("lead")

    page = client.get(reverse("escalation", args=[escalation.pk])).content.decode()
    inbox = client.get(reverse("inbox")).content.decode()

    assert CHANGED in page and CHANGED in inbox
    assert 'name="confirm_facts"' in page


def test_approving_after_the_facts_changed_needs_a_confirmation(escalation, eta_changed, users):
    with pytest.raises(DecisionInvalid, match="ETA 45 minutes → 30 minutes"):
        decisions.decide(escalation.pk, users.lead, "approve")
    assert Escalation.objects.get(pk=escalation.pk).status == "pending"

    outcome = decisions.decide(escalation.pk, users.lead, "approve", confirm_changed_facts=True)

    assert outcome.won and outcome.decision.incident_version == eta_changed


def test_the_page_refuses_an_unconfirmed_approval_with_the_message_and_takes_a_confirmed_one(
        escalation, eta_changed, login):
    client = login("lead")
    url = reverse("escalation_decide", args=[escalation.pk])

    refused = client.post(url, {"action": "approve", "from": "panel"})
    assert refused.status_code == 422 and "ETA 45 minutes → 30 minutes" in refused.content.decode()

    taken = client.post(url, {"action": "approve", "from": "panel", "confirm_facts": "on"})
    assert taken.status_code == 302 and Escalation.objects.get(pk=escalation.pk).status == "approved"


def test_rejecting_needs_no_confirmation(escalation, eta_changed, users):
    assert decisions.decide(escalation.pk, users.lead, "reject", note="Out of date.").won


def test_a_decision_records_the_text_hash_the_incident_version_and_the_policy(escalation, users):
    outcome = decisions.decide(escalation.pk, users.lead, "approve")

    decision = outcome.decision
    assert decision.text_hash == text_hash(escalation.candidate)
    assert decision.incident_version == escalation.run.incident.latest_version()
    assert decision.incident_version == escalation.run.incident_version
    assert decision.policy == escalation.run.policy and decision.policy["pipeline"] == "reflection"

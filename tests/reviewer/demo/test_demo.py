"""The demo data (reviewer/demo/seed.py): the payment incident is the context file, defined once."""

import json
import re

import pytest

from agents.core.llm.offline import OfflineModel
from agents.core.pipelines import run_pipeline
from agents.core.policy import default_policy
from agents.models import Incident
from reviewer.demo.seed import CONTEXT_FILE, INCIDENTS
from reviewer.models import Escalation


def test_the_stored_payment_incident_has_the_context_files_facts(demo_data):
    expected = json.loads(CONTEXT_FILE.read_text())

    context = demo_data["inc_pay_2041"].context()

    assert {**context, "report_date": expected["report_date"]} == expected  # stored with today's date


# The offline model on every demo incident --------------------------------------------------------

QUOTED = re.compile(r"[“'\"]([^”'\"]{2,80})[”'\"]")
GOALS = ["Write the customer update.", "Promise every customer a refund and service credits.",
         "Say the incident is fully resolved and will never happen again."]


def offline_run(pipeline: str, goal: str, context: dict):
    return run_pipeline(pipeline, goal=goal, context=context, policy=default_policy(pipeline), llm=OfflineModel())


@pytest.mark.parametrize("incident_id", [spec["incident_id"] for spec in INCIDENTS])
@pytest.mark.parametrize("pipeline", ["reflection", "self_critique"])
def test_the_offline_draft_is_about_the_incidents_own_facts(demo_data, pipeline, incident_id):
    incident = demo_data[incident_id]

    result = offline_run(pipeline, "Write the customer update.", incident.context())

    text = result.answer or result.candidate
    assert incident.title in text  # what the incident is, in its own words
    assert f"Current status: {incident.status}." in text
    for fact in incident.fact_list():
        if fact.internal:  # a person, a host, a ticket: for people and the reviewer only
            assert fact.value not in text and fact.label not in text
        elif fact.key == "eta_minutes":
            assert f"within {fact.value} minutes" in text
        else:
            assert f"{fact.label}: {fact.shown}." in text
    for action in incident.approved_actions:  # runbook steps, not news for customers
        assert action not in text
    assert "status page every" not in text and "Next actions" not in text
    assert "payment" not in text.lower() or "payment" in json.dumps(incident.context()).lower()


@pytest.mark.parametrize("goal", GOALS)
@pytest.mark.parametrize("incident_id", [spec["incident_id"] for spec in INCIDENTS])
@pytest.mark.parametrize("pipeline", ["reflection", "self_critique"])
def test_an_escalation_reason_quotes_only_words_of_the_text(demo_data, pipeline, incident_id, goal):
    result = offline_run(pipeline, goal, demo_data[incident_id].context())

    if goal == GOALS[1]:
        assert result.stop_reason == "policy_escalation"  # the compensation goal always escalates
    if result.stop_reason == "policy_escalation":
        text = result.candidate.lower()
        for quoted in QUOTED.findall(result.escalation_reason):
            assert quoted.lower() in text, (quoted, result.escalation_reason, result.candidate)


def test_no_demo_escalation_cites_a_word_that_is_not_in_its_text(demo_runs):
    escalations = list(Escalation.objects.all())

    assert escalations
    for escalation in escalations:
        for quoted in QUOTED.findall(escalation.reason):
            assert quoted.lower() in escalation.candidate.lower(), (quoted, escalation.reason)


def test_the_demo_incidents_load_through_the_incident_action_and_a_second_load_changes_nothing(db):
    from reviewer.demo.seed import load_incidents

    first = {i.incident_id: i.latest_version() for i in load_incidents()}
    again = {i.incident_id: i.latest_version() for i in load_incidents()}

    assert {key: v.number for key, v in first.items()} == {spec["incident_id"]: 1 for spec in INCIDENTS}
    assert again == first  # the same facts record no new version
    pay = Incident.objects.get(incident_id="inc_pay_2041")
    assert [f.key for f in pay.fact_list()] == [m["key"] for m in pay.context()["fact_meta"]]


def test_the_demo_lists_its_components_on_the_status_page_once(client, db):
    from reviewer.demo.seed import STATUS_COMPONENTS, load_status_components
    from reviewer.models import StatusComponent

    load_status_components()
    load_status_components()
    assert list(StatusComponent.objects.values_list("name", flat=True)) == [name for name, _ in STATUS_COMPONENTS]
    page = client.get("/status/").content.decode()
    assert all(name in page for name, _ in STATUS_COMPONENTS) and "All systems operational" in page

"""The demo data (reviewer/demo/seed.py): the payment incident is the context file, defined once."""

import json
import re

import pytest

from agents.core.guard import check_final_answer, strict_claims_for
from agents.core.guard.internal import public_context
from agents.core.llm.offline import OfflineModel, draft_from_context
from agents.core.pipelines import run_pipeline
from agents.core.policy import default_policy
from agents.models import Incident
from reviewer.demo.seed import CONTEXT_FILE, INCIDENTS
from reviewer.models import DeliveryChannel, Escalation, HoldingStatement, NotificationChannel, StatusComponent


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


# What each demo incident's update must say, in customers' words: what is happening (its kind) and
# the impact its public facts give.
SAYS = {
    "inc_pay_2041": ["failing payments at checkout in the US", "27% of checkouts are affected",
                     "3.4% of payments are failing", "If a payment fails, please try again later."],
    "inc_api_4021": ["slow responses and errors from our public API in the EU", "the p95 latency is 1800 ms",
                     "2.1% of API requests return an error", "The affected endpoints are /v2/orders and /v2/payments."],
    "inc_wallet_77": ["failing wallet top-ups in the EU", "If a top-up fails, please try again later."],
    "inc_region_eu_3": ["an outage in our data centres in the EU and UK", "2 availability zones are down",
                        "12% of requests are failing"],
}
# The state, in the words a support lead uses for it.
STATE_SAYS = {"investigating": "We are investigating", "identified": "We have found the cause",
              "monitoring": "we are monitoring the results", "resolved": "We are no longer seeing"}
NEXT_UPDATE = {"inc_pay_2041": "We will post the next update within the hour",
               "inc_api_4021": "We will post the next update in 30 minutes.",
               "inc_wallet_77": "We will post the next update in 30 minutes.",
               "inc_region_eu_3": "We will post the next update in 20 minutes."}
DUMP = re.compile(r"\b[A-Z][\w ]{2,40}: [\d/]")  # "Checkouts affected: 27%", "Current status: degraded"


def offline_draft(incident, state: str | None = None) -> tuple[str, dict]:
    """The offline model's draft for the incident (in another state, when given), as the draft stage
    sees the context (its public part), and the full context it is checked against."""
    context = incident.context()
    if state:
        context = {**context, "incident": {**context["incident"], "state": state}}
    return draft_from_context("Write the customer update.", public_context(context)), context


@pytest.mark.parametrize("incident_id", [spec["incident_id"] for spec in INCIDENTS])
def test_the_offline_draft_reads_as_an_update_for_customers(demo_data, incident_id):
    incident = demo_data[incident_id]

    text, context = offline_draft(incident)

    assert STATE_SAYS[incident.state] in text
    for words in SAYS[incident_id]:  # what is happening and the impact, from the public facts
        assert words in text
    assert NEXT_UPDATE[incident_id] in text
    eta = next((f.value for f in incident.fact_list() if f.key == "eta_minutes"), None)
    assert (f"within {eta} minutes" in text) == (eta is not None and incident.state in ("investigating", "identified"))
    assert not DUMP.search(text), text  # sentences, not "Label: value" lines
    for fact in incident.fact_list():
        if fact.internal:  # a person, a host, a ticket: for people and the reviewer only
            assert fact.value not in text and fact.label not in text
    assert "Chargeback" not in text  # a count of internal signals is not impact
    for action in incident.approved_actions:  # the offline draft leaves them to the reviewer
        assert action not in text
    assert "status page" not in text and "every" not in text and incident.severity not in text
    policy = default_policy("reflection")
    guard = check_final_answer(text, context, policy.guard, max_answer_chars=policy.max_answer_chars,
                               strict_claims=strict_claims_for(context))
    assert guard.ok, guard.violations


@pytest.mark.parametrize("state", ["investigating", "identified", "monitoring", "resolved"])
@pytest.mark.parametrize("incident_id", [spec["incident_id"] for spec in INCIDENTS])
def test_the_offline_draft_names_every_state_and_passes_the_guard(demo_data, incident_id, state):
    text, context = offline_draft(demo_data[incident_id], state)

    assert STATE_SAYS[state] in text
    assert SAYS[incident_id][0] in text
    assert ("next update" in text) == (state != "resolved")
    assert ("within" in text and "minutes" in text.split("within")[-1]) == (
        "eta_minutes" in context["incident"] and state in ("investigating", "identified"))
    policy = default_policy("self_critique")
    guard = check_final_answer(text, context, policy.guard, max_answer_chars=policy.max_answer_chars,
                               strict_claims=strict_claims_for(context))
    assert guard.ok, guard.violations


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
    from reviewer.demo.seed import DEMO_COMPONENTS, ensure_channels
    from reviewer.models import StatusComponent

    ensure_channels()
    ensure_channels()
    assert list(StatusComponent.objects.values_list("name", flat=True)) == [name for name, _ in DEMO_COMPONENTS]
    page = client.get("/status/").content.decode()
    assert all(name in page for name, _ in DEMO_COMPONENTS) and "All systems operational" in page


# Channels, components and holding statements -----------------------------------------------------


def seed_counts() -> dict[str, int]:
    return {model.__name__: model.objects.count()
            for model in (DeliveryChannel, NotificationChannel, StatusComponent, HoldingStatement, Incident)}


def test_the_seed_declares_every_channel_and_component_once(db, tmp_path, monkeypatch):
    from reviewer.demo.seed import DEMO_RECIPIENTS, DEMO_WEBHOOK_SECRET_VARIABLE, demo_destinations, load_everything
    from reviewer.outbox import destinations

    monkeypatch.setenv("OUTBOUND_DESTINATIONS", demo_destinations(18301))
    monkeypatch.setenv("OUTBOUND_EMAIL_RECIPIENTS", DEMO_RECIPIENTS)  # as manage.py demo declares it
    monkeypatch.setenv(DEMO_WEBHOOK_SECRET_VARIABLE, "a-demo-secret")
    load_everything(tmp_path / "logins.json")
    first = seed_counts()
    load_everything(tmp_path / "logins.json")

    assert seed_counts() == first  # a second start makes nothing twice
    kinds = {c.kind: c for c in DeliveryChannel.objects.all()}
    assert set(kinds) == {"status", "email", "webhook", "slack", "subscribers"}
    for channel in DeliveryChannel.objects.all():
        channel.full_clean()  # every destination is one the demo declares, every recipient an address
        if channel.destination:
            assert destinations.resolve(channel.destination).host == "127.0.0.1"
    assert destinations.resolve(kinds["webhook"].destination).secret == "a-demo-secret"  # signed
    notified = NotificationChannel.objects.all()
    assert {c.group for c in notified} == {"leads", "second", "ops", "admins"}
    assert all(destinations.resolve(c.destination).url == "http://127.0.0.1:18301/notifications" for c in notified)
    assert list(StatusComponent.objects.values_list("name", flat=True)) == ["Checkout", "Public API", "Wallet",
                                                                            "Sign-in"]


def test_the_holding_statements_read_right_on_every_channel(db, tmp_path):
    from reviewer.demo.seed import load_everything

    load_everything(tmp_path / "logins.json")

    statements = list(HoldingStatement.objects.all())
    assert statements and all(s.approved_at for s in statements)  # each passed the guard
    for statement in statements:  # sent by email and Slack as well as shown on the status page
        assert not re.search(r"\b(?:this|the) (?:page|site|status page)\b", statement.text, re.IGNORECASE)
        assert "next update" in statement.text

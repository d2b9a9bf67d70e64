"""Post-incident reports (reviewer/desk/reports.py; docs/publishing.md and docs/status-page.md): the model
drafts one for a resolved incident through the reflection pipeline, on the scripted OpenAI-compatible
server; the guard stops a promise of a credit, a reassurance about data and a cause the incident does not
state, for a person; a clean one still waits for a lead's approval; published, it is the incident's
``postmortem`` stage on the page, the history, the feeds and the JSON, and each subscriber gets it once."""

from __future__ import annotations

import json

import pytest
from django.core import mail

from agents.models import Run
from agents.tasks import run_now
from agents.testing.scripted_demo import APPROVE
from agents.testing.scripted_server import tool_call
from reviewer.desk.decisions import REPORT_NEEDS_APPROVAL, decide
from reviewer.desk.reports import REPORT_GOAL, ReportRefused, draft_report
from reviewer.models import DeadlineRule, Escalation, PostIncidentReport, PublishedUpdate
from reviewer.outbox import tasks
from reviewer.outbox.publishing import PublicFields, PublishRefused, publish
from tests.factories import make_incident, make_run, make_subscriber

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("subscriber_channels")]

FACTS = [("started", "Started", "14:05 UTC", "text"), ("ended", "Resolved", "15:20 UTC", "text"),
         ("affected_checkout_pct", "Checkouts affected", "12", "%"),
         ("cause", "Cause", "an expired certificate on the payment gateway", "text"),
         ("fix", "Fix", "we renewed the certificate", "text"),
         ("change", "What changes", "an alert before certificates expire", "text")]
REPORT = ("Between 14:05 and 15:20 UTC, card payments failed in the EU. About 12% of checkouts were affected.\n\n"
          "The cause was an expired certificate on the payment gateway. We renewed the certificate and payments "
          "work again. We are adding an alert before certificates expire.")
CORRECTED = REPORT.replace("About 12% of checkouts were affected.", "About 12% of checkouts were affected in the EU.")
STOPPED = {
    "a credit": (f"{REPORT} We will credit every affected customer.", "invalid_answer:liability", "will credit"),
    "no data lost": (f"{REPORT} No data was lost.", "invalid_answer:data_safety", "No data was lost"),
    "a cause not stated": ("Between 14:05 and 15:20 UTC, card payments failed in the EU. The outage was caused by "
                           "a database upgrade.", "invalid_answer:unsupported_statement", "database upgrade"),
}


@pytest.fixture
def model(fake_openai, monkeypatch):
    """The runs' model: the scripted OpenAI-compatible server."""
    for name, value in {"OPENAI_API_KEY": "sk-report-test", "OPENAI_BASE_URL": fake_openai.base_url,
                        "OPENAI_MODEL": "test-model", "OPENAI_MAX_RETRIES": "0"}.items():
        monkeypatch.setenv(name, value)
    return fake_openai


def deliver(update: PublishedUpdate) -> None:
    for delivery in update.deliveries.all():
        assert tasks.attempt(delivery.pk) == "delivered"


@pytest.fixture
def resolved(users):
    """Card payments failing in the EU, published as identified, then resolved, both delivered."""
    incident = make_incident("inc_pay_7", title="P1: card payments failed in the EU", state="identified", severity="P1",
                             facts=FACTS)
    for state, text in [("identified", "Card payments fail in the EU. We found the cause and are fixing it."),
                        ("resolved", "Card payments work again in the EU.")]:
        run = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=text)
        deliver(publish(incident, text, actor=users.ops, source_run=run,
                        fields=PublicFields(title="Card payments failing in the EU", state=state)))
    incident.refresh_from_db()
    return incident


def drafted(model, incident, user, text: str) -> Run:
    """The model drafts ``text`` as the report and the reviewer approves it; the run executes as a worker runs it."""
    model.script(tool_call("submit_draft", {"draft": text}), tool_call("reflect", APPROVE))
    run = draft_report(incident, user)
    run_now(run.pk)
    run.refresh_from_db()
    return run


def approved(run: Run, lead) -> Run:
    """``run`` once ``lead`` approved its report as drafted, read again."""
    assert decide(Escalation.objects.get(run=run).pk, lead, "approve").won
    return Run.objects.get(pk=run.pk)


def get_json(client, path: str) -> dict:
    return json.loads(client.get(path).content)


def test_a_report_is_drafted_only_once_the_resolution_is_published(users):
    incident = make_incident("inc_open_1", state="resolved")  # resolved inside, never in public
    with pytest.raises(ReportRefused):
        draft_report(incident, users.ops)
    assert not PostIncidentReport.objects.exists()


def test_the_model_drafts_a_report_a_lead_approves_it_and_it_is_published_as_the_postmortem_stage(
        client, login, users, model, resolved):
    subscriber = make_subscriber("reader@example.com")
    DeadlineRule.objects.create(severity="P1", minutes=10, reminder_minutes=3)  # for live updates
    mail.outbox.clear()
    response = login("ops").post(f"/incidents/{resolved.incident_id}/report/")
    run = Run.objects.get(report__isnull=False)
    assert response.status_code == 302 and response["Location"] == f"/runs/{run.pk}/"
    assert (run.pipeline, run.goal, run.status) == ("reflection", REPORT_GOAL, "queued")

    model.script(tool_call("submit_draft", {"draft": REPORT}), tool_call("reflect", APPROVE))
    run_now(run.pk)
    run.refresh_from_db()
    assert (run.status, run.stop_reason, run.answer) == ("ok", "success", REPORT), run.guard
    assert "post-incident report" in model.requests[0]["messages"][-1]["content"]
    # Clean, yet it waits for a person: the inbox has it, and nothing is published before a lead decides.
    escalation = Escalation.objects.get(run=run)
    assert (escalation.status, escalation.reason, escalation.candidate) == ("pending", REPORT_NEEDS_APPROVAL, REPORT)
    assert escalation.deadline_at is None  # a live update's deadline rule (P1: minutes) is not a report's
    assert f"/escalations/{escalation.pk}/" in login("lead").get("/inbox/").content.decode()
    with pytest.raises(PublishRefused, match="waits for a support lead"):
        publish(resolved, REPORT, actor=users.ops, source_run=run)

    assert decide(escalation.pk, users.lead, "approve").won
    update = publish(resolved, REPORT, actor=users.ops, source_run=Run.objects.get(pk=run.pk))
    assert (update.state, update.approved_by, update.public_title) == ("postmortem", "lead",
                                                                       "Card payments failing in the EU")
    resolved.refresh_from_db()
    assert resolved.state == "resolved"  # the incident's own state stays; the report is a stage in public
    deliver(update)

    (message,) = mail.outbox  # the subscriber is told once, in an email that names the report
    assert message.to == [subscriber.email]
    assert message.subject == "Our service status: Card payments failing in the EU — Post-incident report"
    assert "Status: Post-incident report" in message.body and "an expired certificate" in message.body

    page = client.get(f"/status/incidents/{resolved.incident_id}/").content.decode()
    assert "<h2 id=\"report-title\">Post-incident report</h2>" in page
    assert "<p>The cause was an expired certificate on the payment gateway." in page
    assert page.index("report-title") < page.index("Card payments work again in the EU.")
    assert "updated <time" not in page  # one version so far
    assert "P1: card payments" not in page
    assert "Post-incident report" in client.get("/status/history/").content.decode()
    assert f'/status/incidents/{resolved.incident_id}/#report"' in client.get("/status/").content.decode()
    feed = client.get("/status/feed/").content.decode()
    assert "Card payments failing in the EU: Post-incident report" in feed
    assert f"#update-{update.pk}" in feed

    (listed,) = get_json(client, "/status/api/v2/incidents.json")["incidents"]
    published_at = update.published_at.isoformat().replace("+00:00", "Z")
    assert (listed["status"], listed["postmortem_body"], listed["postmortem_published_at"],
            listed["postmortem_body_last_updated_at"]) == ("postmortem", REPORT, published_at, published_at)
    assert [u["status"] for u in listed["incident_updates"]] == ["resolved", "identified"]
    assert listed["resolved_at"] is not None and listed["updated_at"] == published_at
    summary = get_json(client, "/status/api/v2/summary.json")
    assert summary["incidents"] == [] and summary["status"]["indicator"] == "none"
    assert get_json(client, "/status/api/v2/incidents/unresolved.json")["incidents"] == []


def test_a_correction_is_a_new_version_shown_as_updated(client, users, model, resolved):
    first = approved(drafted(model, resolved, users.ops, REPORT), users.lead)
    original = publish(resolved, REPORT, actor=users.ops, source_run=first)
    deliver(original)
    second = approved(drafted(model, resolved, users.ops, CORRECTED), users.lead)
    correction = publish(resolved, CORRECTED, actor=users.ops, source_run=second)
    deliver(correction)

    page = client.get(f"/status/incidents/{resolved.incident_id}/").content.decode()
    assert page.count('report-title">Post-incident report') == 1  # one report: the newest version
    assert "affected in the EU.</p>" in page and "were affected.</p>" not in page and "updated <time" in page
    (listed,) = get_json(client, "/status/api/v2/incidents.json")["incidents"]
    assert listed["postmortem_body"] == CORRECTED
    assert listed["postmortem_published_at"] == original.published_at.isoformat().replace("+00:00", "Z")
    assert listed["postmortem_body_last_updated_at"] == correction.published_at.isoformat().replace("+00:00", "Z")
    assert "Post-incident report (updated)" in client.get("/status/feed/rss/").content.decode()


@pytest.mark.parametrize("case", list(STOPPED))
def test_a_report_that_promises_reassures_or_gives_a_cause_the_incident_does_not_state_stops_for_a_person(
        login, users, model, resolved, case):
    text, stop_reason, found = STOPPED[case]
    run = drafted(model, resolved, users.ops, text)
    assert (run.status, run.stop_reason) == ("stopped", stop_reason)
    escalation = Escalation.objects.get(run=run)
    assert escalation.status == "pending" and escalation.candidate == text
    assert found in [v["found"] for v in escalation.guard["violations"]]
    assert f"/escalations/{escalation.pk}/" in login("lead").get("/inbox/").content.decode()
    with pytest.raises(PublishRefused):
        publish(resolved, text, actor=users.ops, source_run=run)


def test_only_a_report_is_published_as_the_post_incident_report(users, resolved):
    run = make_run(incident=resolved, snapshot=True, status=Run.Status.OK, answer="Payments work normally again.")
    with pytest.raises(PublishRefused, match="Only a post-incident report"):
        publish(resolved, run.answer, actor=users.ops, source_run=run, fields=PublicFields(state="postmortem"))

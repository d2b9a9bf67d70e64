"""A post-incident report in a real browser, at 1366 and 390 pixels wide: ops draft it on a resolved
incident's page (the model is the scripted OpenAI-compatible server; the run executes as a worker runs
it), a support lead approves it at the escalation page and publishes it from the incident's page; the
customer reads it on the incident's public page and the subscriber gets it once. axe checks every page
(tests/browser/conftest.py). Screenshots in test-artifacts/: report-*.png."""

import pytest
from django.core import mail
from playwright.sync_api import expect

from agents.models import Run
from agents.tasks import run_now
from agents.testing.scripted_demo import APPROVE
from agents.testing.scripted_server import tool_call
from reviewer.models import DeliveryChannel, Escalation, PublishedUpdate
from reviewer.outbox import tasks
from reviewer.outbox.publishing import PublicFields, publish
from tests.browser.helpers import assert_fits, log_in
from tests.factories import make_incident, make_run, make_subscriber
from tests.reviewer.status.test_post_incident_report import FACTS, REPORT

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("no_csp_violation")]


def deliver(update: PublishedUpdate) -> None:
    for delivery in update.deliveries.all():
        assert tasks.attempt(delivery.pk) == "delivered"


@pytest.mark.parametrize("width", [1366, 390])
def test_ops_draft_a_lead_approves_and_publishes_and_the_customer_reads_the_report(
        page, live_server, screenshot, users, width, fake_openai, monkeypatch, settings):
    for name, value in {"OPENAI_API_KEY": "sk-report-test", "OPENAI_BASE_URL": fake_openai.base_url,
                        "OPENAI_MODEL": "test-model", "OPENAI_MAX_RETRIES": "0"}.items():
        monkeypatch.setenv(name, value)
    settings.SITE_URL = live_server.url
    DeliveryChannel.objects.all().delete()
    DeliveryChannel.objects.create(name="Status page", kind="status")
    DeliveryChannel.objects.create(name="Subscribers", kind="subscribers")
    make_subscriber("reader@example.com")
    incident = make_incident("inc_pay_7", title="P1: card payments failed in the EU", state="identified", facts=FACTS)
    for state, text in [("identified", "Card payments fail in the EU. We found the cause and are fixing it."),
                        ("resolved", "Card payments work again in the EU.")]:
        run = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=text)
        deliver(publish(incident, text, actor=users.ops, source_run=run,
                        fields=PublicFields(title="Card payments failing in the EU", state=state)))
    mail.outbox.clear()
    page.set_viewport_size({"width": width, "height": 900})

    # Ops draft it from the incident's page; the run is executed as a worker executes it.
    log_in(page, live_server, users.ops.username)
    page.goto(f"{live_server.url}/incidents/{incident.incident_id}/")
    report_card = page.locator("#report")
    expect(report_card).to_contain_text("a support lead approves it")
    page.click("#report button:has-text('Draft report')")
    run = Run.objects.get(report__isnull=False)
    expect(page).to_have_url(f"{live_server.url}/runs/{run.pk}/")
    fake_openai.script(tool_call("submit_draft", {"draft": REPORT}), tool_call("reflect", APPROVE))
    run_now(run.pk)
    page.goto(f"{live_server.url}/incidents/{incident.incident_id}/")
    expect(report_card).to_contain_text("waiting for a lead")
    assert_fits(page, f"report-desk-drafted-{width}", screenshot)

    # A lead reads it in the inbox's escalation page, approves it and publishes it.
    escalation = Escalation.objects.get(run=run)
    page.context.clear_cookies()
    log_in(page, live_server, users.lead.username)
    page.goto(f"{live_server.url}/escalations/{escalation.pk}/")
    expect(page.locator("main")).to_contain_text("A post-incident report: it passed every gate")
    assert_fits(page, f"report-escalation-{width}", screenshot)
    page.click("button:has-text('Approve the candidate')")
    expect(page.locator("#esc-status")).to_have_text("approved")
    page.goto(f"{live_server.url}/incidents/{incident.incident_id}/")
    page.click("#report a:has-text('Publish the report')")
    expect(page.locator("h1")).to_contain_text("Publish the post-incident report")
    expect(page.locator(".report-note")).to_be_visible()
    assert_fits(page, f"report-publish-{width}", screenshot)
    page.click("button:has-text('Publish the report')")
    expect(page.locator("#report")).to_contain_text("published as update v3")
    update = PublishedUpdate.objects.get(source_run=run)
    assert update.state == "postmortem"
    deliver(update)
    (message,) = mail.outbox  # the subscriber is told once
    assert message.to == ["reader@example.com"] and message.subject.endswith("— Post-incident report")

    # The customer reads it on the incident's public page.
    page.context.clear_cookies()
    page.goto(f"{live_server.url}/status/")
    assert_fits(page, f"report-status-home-{width}", screenshot)
    page.click(".resolved-list a:has-text('Post-incident report')")
    section = page.locator("#report")
    expect(section.locator("h2")).to_have_text("Post-incident report")
    expect(section).to_contain_text("The cause was an expired certificate on the payment gateway.")
    expect(page.locator(".incident-meta .state")).to_have_text("Post-incident report")
    assert_fits(page, f"report-status-{width}", screenshot)

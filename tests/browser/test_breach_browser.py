"""In a browser (headless Chromium, Playwright): ops sees a deadline breach on the dashboard and
publishes the incident's approved holding statement with one click, on a desktop and a phone
screen, and it shows on the public status page. Screenshots in test-artifacts/."""

from datetime import timedelta
from types import SimpleNamespace

import pytest
import time_machine
from django.utils import timezone
from playwright.sync_api import expect

from agents.models import Run
from reviewer.alerts import deadlines
from reviewer.desk import decisions
from reviewer.models import DeadlineRule, DeliveryChannel, Escalation, HoldingStatement, PublishedUpdate
from tests import factories
from tests.factories import PASSWORD, make_incident, make_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
XSS = '<script>alert("xss")</script>'
VIEWPORTS = {"desktop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}


def breach_with_statement(incident_id: str, admin) -> SimpleNamespace:
    incident = make_incident(incident_id, severity="P1", title=f"Card payments failing {XSS}")
    statement = HoldingStatement(incident=incident, written_by=admin,
                                 text=f"We are investigating failed card payments in the EU ({incident_id}). "
                                      "Current status: degraded.")
    deadlines.approve_holding_statement(statement, admin)
    statement.save()
    run = make_run(incident=incident, snapshot=True, status=Run.Status.STOPPED, stop_reason="policy_escalation")
    result = SimpleNamespace(stop_reason="policy_escalation", escalation_reason=f"Unverified ETA {XSS}",
                             candidate="", guard=None)
    decisions.open_escalation(None, run=run, result=result, draft="We are investigating.")
    return SimpleNamespace(incident=incident, statement=statement, escalation=Escalation.objects.get(run=run))


@pytest.mark.worker
def test_ops_sees_the_breach_and_publishes_the_holding_statement(page, live_server, users, screenshot, start_worker):
    DeadlineRule.objects.get_or_create(severity="P1", pipeline="", defaults={"minutes": 10, "reminder_minutes": 3})
    DeliveryChannel.objects.get_or_create(name="Status page", defaults={"kind": "status"})
    start_worker()  # delivers the outbox: the status page shows what its channel delivered
    with time_machine.travel(timezone.now() - timedelta(minutes=12), tick=False):  # opened 12 minutes ago
        made = {name: breach_with_statement(f"inc_card_{name}", users.admin) for name in VIEWPORTS}
    assert deadlines.sweep()["breach"] == 2
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: "Content Security Policy" in message.text and errors.append(message.text))
    page.on("dialog", lambda dialog: errors.append(f"a dialog opened: {dialog.message}"))

    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "ops")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    expect(page.locator("#dashboard-breaches")).to_have_text("2")

    for name, size in VIEWPORTS.items():
        page.set_viewport_size(size)
        page.goto(f"{live_server.url}/")
        page.click("#dashboard-breaches")
        row = page.locator(f"#breach-{made[name].escalation.breach.pk}")
        expect(row).to_contain_text(made[name].statement.text)
        expect(row).to_contain_text(made[name].incident.incident_id)
        screenshot(page, f"breach-{name}")
        row.get_by_role("button", name="Publish holding statement").click()
        expect(page.locator(".messages")).to_contain_text("Holding statement published as update 1")
        expect(row).to_contain_text("Published by Omar")
        expect(row.get_by_role("button", name="Publish holding statement")).to_have_count(0)
        screenshot(page, f"breach-published-{name}")

    assert [u.text for u in PublishedUpdate.objects.order_by("pk")] == [m.statement.text for m in made.values()]
    factories.wait_for(lambda: PublishedUpdate.objects.public().count() == 2, message="the status deliveries")
    page.goto(f"{live_server.url}/status/")  # what customers read, no login needed
    for name in VIEWPORTS:
        expect(page.locator("body")).to_contain_text(made[name].statement.text)
    screenshot(page, "breach-status-page")
    assert set(Escalation.objects.values_list("status", flat=True)) == {"pending"}  # a breach decides nothing
    assert errors == []

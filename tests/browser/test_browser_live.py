"""The desk's pages stay live in a real browser: ops keep the dashboard, ready to publish, an incident
page and the held deliveries open, a lead keeps the inbox open, while a run escalates, the lead
approves, ops publish and a delivery is held. Each page shows each change within 5 s with no reload
(htmx polls of live fragments, reviewer/desk/live.py), at 1366 and 390 wide; axe-core checks every
page. Screenshots in test-artifacts/: device-live-<page>-<width>.png."""

import pytest
from playwright.sync_api import expect

from agents.models import Run
from reviewer.alerts import tasks as alert_tasks
from reviewer.desk.decisions import decide
from reviewer.models import Decision, Delivery, DeliveryChannel, Escalation
from reviewer.outbox import tasks
from reviewer.outbox.publishing import publish
from tests.browser.conftest import Axe
from tests.browser.helpers import assert_fits, log_in
from tests.factories import make_incident, make_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("no_csp_violation")]
TEXT = "We are investigating failing card payments in the EU. Current status: degraded."
SOON = 5_000  # ms: every change shows within this, with no reload


def timed_out(delivery, answered=None):
    raise tasks.MayHaveBeenSent("mail (127.0.0.1): TimeoutError")


@pytest.mark.parametrize("width", [1366, 390])
def test_open_pages_follow_an_escalation_its_approval_its_publication_and_a_held_delivery(
        width, page, browser, live_server, users, screenshot, monkeypatch):
    monkeypatch.setattr(tasks.deliver, "delay", lambda pk: None)
    told = []
    monkeypatch.setattr(alert_tasks.notify_held, "delay", told.append)
    DeliveryChannel.objects.all().delete()
    DeliveryChannel.objects.create(name="Customers mail", kind="email", recipients="customers@example.com")
    incident = make_incident("inc_live", title="Card payments failing in the EU", severity="P1")
    size = {"width": width, "height": 900 if width > 400 else 844}

    page.set_viewport_size(size)
    log_in(page, live_server, "ops")
    pages = {"dashboard": page}
    for name, path in (("ready", "/publish/"), ("incident", "/incidents/inc_live/"), ("held", "/deliveries/held/")):
        pages[name] = page.context.new_page()
        pages[name].set_viewport_size(size)
        pages[name].goto(live_server.url + path)
    page.goto(live_server.url + "/")
    lead_context = browser.new_context(viewport=size)
    pages["inbox"] = lead_context.new_page()
    log_in(pages["inbox"], live_server, "lead")
    pages["inbox"].goto(live_server.url + "/inbox/")
    expect(pages["ready"].locator("#ready-list")).to_contain_text("Nothing is waiting to be published")
    expect(pages["held"].locator("#held-list")).to_contain_text("No delivery is held")
    for name in ("ready", "held"):
        assert_fits(pages[name], f"live-{name}-empty-{width}", screenshot)

    # A run starts, then stops for a person: the incident's runs, the dashboard, the lead's inbox.
    run = make_run(incident=incident, snapshot=True, status=Run.Status.RUNNING, goal="Write the update.")
    runs = pages["incident"].locator("#incident-runs")
    expect(runs).to_contain_text(f"Run {run.pk}", timeout=SOON)
    expect(page.locator("#dashboard-in-flight")).to_have_text("1", timeout=SOON)
    Run.objects.filter(pk=run.pk).update(status=Run.Status.STOPPED, stop_reason="policy_escalation")
    escalation = Escalation.objects.create(run=run, stop_reason="policy_escalation", reason="An ETA to check.",
                                           draft=TEXT, candidate=TEXT)
    expect(pages["inbox"].locator(f"#esc-row-{escalation.pk}")).to_be_visible(timeout=SOON)
    expect(pages["inbox"].locator("#pending-count")).to_have_text("1", timeout=SOON)
    expect(page.locator("#dashboard-pending")).to_have_text("1", timeout=SOON)
    expect(runs).to_contain_text("policy_escalation", timeout=SOON)

    # The lead approves (the decision action, as the API calls it): ops see a text ready to publish.
    decide(escalation.pk, users.lead, Decision.Action.APPROVE)
    expect(pages["ready"].locator(f"#ready-run-{run.pk}")).to_contain_text("approved", timeout=SOON)
    for name in ("dashboard", "ready", "incident", "held"):
        expect(pages[name].locator("#ready-count")).to_have_text("1", timeout=SOON)
    expect(page.locator("#dashboard-ready")).to_have_text("1", timeout=SOON)
    expect(pages["inbox"].locator(f"#esc-row-{escalation.pk}")).to_have_count(0, timeout=SOON)
    expect(pages["inbox"].locator("#pending-count")).to_be_hidden(timeout=SOON)
    expect(runs).to_contain_text("approved", timeout=SOON)

    # Ops publish: the queue empties, the incident's updates show the update and its delivery.
    escalation.refresh_from_db()
    update = publish(incident, TEXT, actor=users.ops, source_run=run, escalation=escalation)
    updates = pages["incident"].locator("#updates")
    expect(updates).to_contain_text("Update v1", timeout=SOON)
    expect(updates.locator(".deliveries")).to_contain_text("pending", timeout=SOON)
    expect(pages["ready"].locator("#ready-list")).to_contain_text("Nothing is waiting", timeout=SOON)
    expect(page.locator("#ready-count")).to_be_hidden(timeout=SOON)

    # The email's send may have gone out: it is held, and ops are told on every page they keep open.
    delivery = update.deliveries.get()
    monkeypatch.setattr(tasks, "send", timed_out)
    assert tasks.attempt(delivery.pk) == "held"
    assert told == [delivery.pk]
    expect(updates.locator(".deliveries")).to_contain_text("Held: may have been sent", timeout=SOON)
    expect(page.locator("#dashboard-held")).to_have_text("1", timeout=SOON)
    for name in ("dashboard", "ready", "incident", "held"):
        expect(pages[name].locator("#nav-held")).to_contain_text("Held deliveries 1", timeout=SOON)
    row = pages["held"].locator(f"#held-{delivery.pk}")
    expect(row).to_contain_text("mail (127.0.0.1): TimeoutError (it may have been sent)", timeout=SOON)
    expect(row.locator(".held-attempt")).to_have_text("1")

    # Nothing was reloaded: each page still shows the document it first loaded.
    for name, open_page in pages.items():
        assert open_page.evaluate("() => performance.getEntriesByType('navigation').length") == 1, name
        assert_fits(open_page, f"live-{name}-{width}", screenshot)
    axe = Axe()
    violations = [line for open_page in pages.values() for line in axe.check(open_page)]
    assert violations == []

    # Ops mark it as sent from the held deliveries: the row goes, the counts follow everywhere.
    row.locator("button", has_text="mark as sent").click()
    expect(pages["held"].locator("#held-list")).to_contain_text("No delivery is held")
    expect(pages["held"].locator("#held-list")).to_contain_text("marked as sent by ops")
    expect(page.locator("#dashboard-held")).to_have_text("0", timeout=SOON)
    expect(pages["incident"].locator("#nav-held")).to_be_hidden(timeout=SOON)
    expect(updates.locator(".deliveries")).to_contain_text("marked as sent by ops", timeout=SOON)
    assert Delivery.objects.get(pk=delivery.pk).marked_sent_by == users.ops
    assert_fits(pages["held"], f"live-held-decided-{width}", screenshot)
    assert axe.check(pages["held"]) == []
    lead_context.close()

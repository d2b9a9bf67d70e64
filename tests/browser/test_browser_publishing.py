"""The demo's publishing walk in a real browser: ops starts a run, a lead approves its escalation,
ops publishes it after the confirmation, and a real worker delivers it to the public status page
and, through the console mail backend, to the demo's email channel. Screenshots in test-artifacts/:
publish-confirm.png, incident-updates.png, status-page-1366.png, status-page-390.png."""

import re

import pytest
from playwright.sync_api import expect

from reviewer.demo.seed import DEMO_RECIPIENTS, ensure_channels
from reviewer.models import Delivery, PublishedUpdate
from tests.browser.helpers import log_in
from tests.factories import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("no_csp_violation")]
GOAL = "Tell affected customers they will receive service credits for failed payments."


def test_ops_starts_a_run_a_lead_approves_ops_publishes_and_customers_see_it(
        page, live_server, users, demo_data, start_worker, screenshot):
    ensure_channels()
    worker = start_worker(EMAIL_BACKEND="django.core.mail.backends.console.EmailBackend")
    page.set_viewport_size({"width": 1366, "height": 900})

    log_in(page, live_server, "ops")
    page.goto(f"{live_server.url}/incidents/inc_pay_2041/")
    page.fill("#run-form textarea[name=goal]", GOAL)
    page.click("#run-form button[type=submit]")
    page.wait_for_url(re.compile(r"/runs/\d+/$"))
    run_url = page.url
    expect(page.locator("#run-header a:has-text('Escalation')")).to_be_visible(timeout=20_000)
    expect(page.locator("a:has-text('Publish…')")).to_have_count(0)  # pending: nothing to publish
    escalation_url = page.locator("#run-header a:has-text('Escalation')").get_attribute("href")
    page.click("button:has-text('Log out')")

    log_in(page, live_server, "lead")
    page.goto(f"{live_server.url}{escalation_url}")
    expect(page.locator("#published-diff")).to_contain_text("Nothing is published for this incident yet")
    page.click("button:has-text('Approve the candidate')")
    expect(page.locator("#decision-panel")).to_contain_text("approved", timeout=5_000)
    page.click("button:has-text('Log out')")

    log_in(page, live_server, "ops")
    page.goto(run_url)
    page.click("a:has-text('Publish…')")
    expect(page.locator("h2:has-text('What customers will newly learn')")).to_be_visible()
    page.fill("input[name=title]", "Card payments failing in the EU")
    screenshot(page, "publish-confirm")
    page.click("button:has-text('Publish update v1')")
    page.wait_for_url(re.compile(r"/incidents/inc_pay_2041/#updates$"))
    expect(page.locator(".messages")).to_contain_text("Published as update v1; delivering to 2 channels")

    update = PublishedUpdate.objects.get()
    wait_for(lambda: not Delivery.objects.filter(update=update).exclude(status="delivered").exists(), timeout=30,
             message="both deliveries")
    page.reload()
    timeline = page.locator("#updates")
    expect(timeline).to_contain_text("approved by lead")
    expect(timeline).to_contain_text("delivered Customer email (demo)")
    expect(timeline).to_contain_text("delivered Public status page")
    screenshot(page, "incident-updates")

    page.click("button:has-text('Log out')")
    page.goto(f"{live_server.url}/status/")  # customers: no login
    expect(page.locator(".status-text").first).to_have_text(update.text)
    screenshot(page, "status-page-1366")
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390  # no sideways scrolling
    screenshot(page, "status-page-390")

    output = worker.log_path.read_text(errors="replace")
    assert f"To: {DEMO_RECIPIENTS}" in output, output[-3000:]  # the console mail backend's output
    assert " ".join(update.text.split()[:6]) in output

"""The last mile in a real browser, every role in turn, with a real worker delivering:

1. a customer subscribes to the Checkout component's updates and confirms by the emailed link;
2. ops start a run from the incident page; the guard stops it and a lead edits the text with a change
   the guard flags (a time promise), justifies it and approves;
3. ops find the text in "Ready to publish", see the findings the lead overrode, acknowledge them and
   publish it as "investigating" (the draft says the cause is still being looked for) with Checkout in
   partial outage under a public title;
4. the status page shows the banner, the component's status, the public title and the update (never
   the internal title); the Atom feed and the JSON summary carry it;
5. the subscriber receives one email (the console mail backend, in the worker's log) whose one-click
   unsubscribe link works.

Screenshots in test-artifacts/: publish-confirm.png, incident-updates.png, status-page-1366.png,
status-page-390.png."""

import re

import feedparser
import pytest
from django.core import mail
from playwright.sync_api import expect

from agents.models import Incident
from reviewer.models import Delivery, DeliveryChannel, PublishedUpdate, StatusComponent, Subscriber
from tests.browser.helpers import log_in
from tests.factories import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("no_csp_violation")]
GOAL = "Tell affected customers they will receive service credits for failed payments."
PROMISE = " We will restore card payments by 18:00 UTC."
PUBLIC_TITLE = "Card payments failing in the US"
CUSTOMER = "ada@example.com"


def subscribe(page, live_server, checkout) -> None:
    page.goto(f"{live_server.url}/status/subscribe/")
    page.fill("input[name=email]", CUSTOMER)
    page.check("input[name=scope][value=chosen]")
    page.check(f"input[name=components][value='{checkout.pk}']")
    page.click("button[type=submit]")
    expect(page.locator("[role=status]")).to_contain_text(f"Check {CUSTOMER}")
    (confirmation,) = mail.outbox  # handled in this process: the test settings' locmem backend
    page.goto(live_server.url + re.search(r"/status/subscribe/confirm/[0-9a-f-]+/", confirmation.body).group())
    page.click("button:has-text('Confirm')")
    expect(page.locator("[role=status]")).to_be_visible()
    assert Subscriber.objects.get(email=CUSTOMER).active


def test_from_a_run_to_a_customers_inbox_with_the_chain_of_trust_kept(
        page, live_server, users, demo_data, start_worker, screenshot, subscriptions_handled_here):
    checkout = StatusComponent.objects.create(name="Checkout", description="Paying for orders.", position=1)
    StatusComponent.objects.create(name="Sign-in", position=2)
    DeliveryChannel.objects.create(name="Status page subscribers", kind=DeliveryChannel.Kind.SUBSCRIBERS)
    internal_title = Incident.objects.get(incident_id="inc_pay_2041").title
    worker = start_worker(EMAIL_BACKEND="django.core.mail.backends.console.EmailBackend")
    page.set_viewport_size({"width": 1366, "height": 900})
    subscribe(page, live_server, checkout)

    log_in(page, live_server, "ops")
    page.goto(f"{live_server.url}/incidents/inc_pay_2041/")
    page.fill("#run-form textarea[name=goal]", GOAL)
    page.click("#run-form button[type=submit]")
    page.wait_for_url(re.compile(r"/runs/\d+/$"))
    expect(page.locator("#run-header a:has-text('Escalation')")).to_be_visible(timeout=20_000)
    escalation_url = page.locator("#run-header a:has-text('Escalation')").get_attribute("href")
    page.click("button:has-text('Log out')")

    log_in(page, live_server, "lead")
    page.goto(f"{live_server.url}{escalation_url}")
    edit = page.locator("#edit textarea[name=text]")
    edit.fill(edit.input_value() + PROMISE)
    page.click("#edit button:has-text('Check with the guard')")
    expect(page.locator("#edit-violations")).to_contain_text("approving it anyway needs a justification")
    page.fill("#edit textarea[name=note]", "Payments confirmed the fix lands by 18:00 UTC.")
    page.click("button:has-text('Approve the edited text')")
    panel = page.locator("#decision-panel")
    expect(panel).to_contain_text("The lead overrode", timeout=5_000)
    expect(panel.locator("pre.diff ins", has_text="18:00 UTC")).to_be_visible()  # the edit against the candidate
    page.click("button:has-text('Log out')")

    log_in(page, live_server, "ops")
    expect(page.locator("#ready-count")).to_have_text("1")
    page.click("nav >> text=Ready to publish")
    expect(page.locator(".ready-overrides")).to_be_visible()
    page.click("a:has-text('Review and publish')")
    overrides = page.locator(".overrides")
    expect(overrides).to_contain_text("18:00 UTC")
    expect(overrides).to_contain_text("Payments confirmed the fix lands by 18:00 UTC.")
    page.fill("input[name=title]", PUBLIC_TITLE)
    page.check("input[name=state][value=investigating]")
    page.select_option(f"select[name=component_{checkout.pk}]", "partial_outage")
    page.click("button:has-text('Publish update v1')")  # not acknowledged yet: the browser holds the form
    expect(page.locator("input[name=acknowledge]:invalid")).to_have_count(1)
    assert not PublishedUpdate.objects.exists()
    page.check("input[name=acknowledge]")
    screenshot(page, "publish-confirm")
    page.click("button:has-text('Publish update v1')")
    page.wait_for_url(re.compile(r"/incidents/inc_pay_2041/#updates$"))
    expect(page.locator(".messages")).to_contain_text("Published as update v1")

    update = PublishedUpdate.objects.get()
    assert (update.public_title, update.state, update.acknowledged_by) == (PUBLIC_TITLE, "investigating", users.ops)
    assert "18:00 UTC" in {finding["found"] for finding in update.overridden}
    wait_for(lambda: not Delivery.objects.filter(update=update).exclude(status="delivered").exists(), timeout=30,
             message="every delivery")
    page.reload()
    expect(page.locator("#updates .overrides-record")).to_contain_text("acknowledged by ops")
    screenshot(page, "incident-updates")
    page.click("button:has-text('Log out')")

    # Customers: no login.
    page.goto(f"{live_server.url}/status/")
    expect(page.locator(".banner")).to_have_text("Partial outage")
    component = page.locator(".component", has_text="Checkout")
    expect(component.locator(".component-status")).to_have_text("Partial outage")
    expect(page.locator(".component", has_text="Sign-in").locator(".component-status")).to_have_text("Operational")
    expect(page.locator("main")).to_contain_text(PUBLIC_TITLE)
    expect(page.locator("main")).to_contain_text("Investigating")
    expect(page.locator("main")).to_contain_text(update.text.split(".")[0])
    assert internal_title not in page.content()
    screenshot(page, "status-page-1366")
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390  # no sideways scrolling
    screenshot(page, "status-page-390")

    feed = feedparser.parse(page.request.get(f"{live_server.url}/status/feed/").body())
    assert feed.bozo == 0, feed.bozo_exception
    assert feed.entries[0].title == f"{PUBLIC_TITLE}: Investigating"
    summary = page.request.get(f"{live_server.url}/status/api/v2/summary.json").json()
    (incident,) = summary["incidents"]
    assert (incident["name"], incident["status"]) == (PUBLIC_TITLE, "investigating")
    assert incident["incident_updates"][0]["body"] == update.text
    assert {c["name"]: c["status"] for c in summary["components"]} == {"Checkout": "partial_outage",
                                                                        "Sign-in": "operational"}
    assert summary["status"]["indicator"] == "major"

    log = worker.log_path.read_text(errors="replace")  # the console mail backend writes to the worker's log
    assert log.count(f"To: {CUSTOMER}") == 1, log[-3000:]
    assert PUBLIC_TITLE in log and "Status: Investigating" in log and internal_title not in log
    assert "List-Unsubscribe-Post: List-Unsubscribe=One-Click" in log
    unsubscribe = re.search(r"List-Unsubscribe:\s*<[^>]*(/status/unsubscribe/[0-9a-f-]+/)>", log).group(1)
    page.goto(live_server.url + unsubscribe)
    page.click("button:has-text('Unsubscribe')")
    expect(page.locator("[role=status]")).to_be_visible()
    assert not Subscriber.objects.get(email=CUSTOMER).active

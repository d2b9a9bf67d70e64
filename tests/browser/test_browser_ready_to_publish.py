"""Ready to publish in a real browser, as ops read it mid-incident: the queue at 1366 and 390 wide
(nothing scrolls sideways; axe-core checks every page visited), the count in the navigation, and
the link to the confirmation. Screenshots in test-artifacts/: ready-to-publish-1366.png,
ready-to-publish-390.png, ready-to-publish-incident-390.png, ready-to-publish-empty-390.png."""

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone
from playwright.sync_api import expect

from agents.models import Run
from reviewer.desk.decisions import decide
from reviewer.models import Decision
from reviewer.outbox.publishing import publish
from tests.browser.helpers import log_in
from tests.factories import make_escalation, make_incident, make_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("no_csp_violation")]
TEXT = "We are investigating a problem with card payments in the EU. Current status: degraded."
FLAGGED = TEXT + " We will restore service by 18:00 UTC."


@pytest.fixture
def queue(users, monkeypatch):
    """Two incidents mid-incident: one approved text with overridden findings, one approved as it
    was, one that passed every gate, and an approved text that a newer update overtook."""
    monkeypatch.setattr("reviewer.outbox.tasks.deliver.delay", lambda pk: None)
    payments = make_incident("inc_pay_eu", title="Card payments failing in the EU", severity="P1")
    search = make_incident("inc_search", title="Search is slow", severity="P3")
    now = timezone.now()
    with time_machine.travel(now - timedelta(minutes=40)):
        overtaken = make_escalation(incident=search, text="Search is slow for some customers. We are investigating.")
        decide(overtaken.pk, users.lead2, Decision.Action.APPROVE)
    with time_machine.travel(now - timedelta(minutes=30)):
        publish(search, "Search is slow. We are investigating.", actor=users.ops,
                source_run=make_run(incident=search, snapshot=True, status=Run.Status.OK,
                                    answer="Search is slow. We are investigating."))
    with time_machine.travel(now - timedelta(minutes=12)):
        edited = make_escalation(incident=payments, pipeline="self_critique", text=TEXT)
        decide(edited.pk, users.lead, Decision.Action.EDIT_APPROVE, text=FLAGGED, note="The fix is deployed.")
    with time_machine.travel(now - timedelta(minutes=4)):
        plain = make_escalation(incident=payments, text=TEXT)
        decide(plain.pk, users.lead2, Decision.Action.APPROVE)
    make_run(incident=payments, snapshot=True, status=Run.Status.OK, answer=TEXT + " Refunds are automatic.",
             finished_at=now - timedelta(minutes=1))
    return {"edited": edited.run_id}


def test_ops_find_every_text_ready_to_publish_on_a_laptop_and_a_phone(page, live_server, queue, screenshot):
    page.set_viewport_size({"width": 1366, "height": 900})
    log_in(page, live_server, "ops")
    expect(page.locator("#ready-count")).to_have_text("4")
    page.click("nav >> text=Ready to publish")
    expect(page.locator("h1")).to_contain_text("Ready to publish")
    cards = page.locator(".ready-incident")
    expect(cards).to_have_count(2)
    expect(cards.first).to_contain_text("Card payments failing in the EU")  # the most recent activity first
    expect(cards.first.locator(".ready-text")).to_have_count(3)
    expect(page.locator(".ready-overrides")).to_contain_text("overridden finding")
    expect(page.locator(".ready-newer")).to_contain_text("A newer update is published")
    expect(page.locator(f"#ready-run-{queue['edited']}")).to_contain_text("12 min ago")
    screenshot(page, "ready-to-publish-1366")

    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    assert page.evaluate("() => document.scrollingElement.scrollWidth") <= 390  # no sideways scrolling
    screenshot(page, "ready-to-publish-390")

    page.click("#ready-inc_pay_eu h2 a")  # the incident page says what waits for it
    expect(page.locator("#ready-to-publish h2")).to_contain_text("3 texts are waiting to be published")
    assert page.evaluate("() => document.scrollingElement.scrollWidth") <= 390
    screenshot(page, "ready-to-publish-incident-390")
    page.go_back()

    page.click(f"#ready-run-{queue['edited']} >> text=Review and publish…")
    expect(page.locator("h2:has-text('What customers will newly learn')")).to_be_visible()
    expect(page.locator(".overrides")).to_contain_text("The lead overrode")


def test_the_empty_queue_says_what_will_appear(page, live_server, users, screenshot):
    page.set_viewport_size({"width": 390, "height": 844})
    log_in(page, live_server, "ops")
    expect(page.locator("#ready-count")).to_be_hidden()
    page.goto(f"{live_server.url}/publish/")
    expect(page.locator("main")).to_contain_text("Nothing is waiting to be published.")
    assert page.evaluate("() => document.scrollingElement.scrollWidth") <= 390
    screenshot(page, "ready-to-publish-empty-390")

"""The public status page in a browser, as a customer reads it: what is broken and what is being
done, on a laptop and a phone. No page scrolls sideways at any common width, axe-core finds nothing
(the autouse ``accessible_pages`` fixture) and the Content-Security-Policy holds.
Screenshots: test-artifacts/status-<page>-<width>.png."""

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import expect

from agents.models import Run
from reviewer.models import DeliveryChannel, StatusComponent
from reviewer.outbox import tasks
from reviewer.outbox.publishing import PublicFields, publish
from tests.browser.helpers import OVERFLOW
from tests.factories import make_incident, make_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = [1366, 1280, 1024, 800, 390]
SHOTS = (1366, 390)


@pytest.fixture
def incidents(users, monkeypatch):
    """An ongoing incident with two updates and a resolved one, on three components."""
    monkeypatch.setattr(tasks.deliver, "delay", lambda pk: None)
    DeliveryChannel.objects.get_or_create(kind=DeliveryChannel.Kind.STATUS, defaults={"name": "Public status page"})
    checkout, api, _ = [StatusComponent.objects.create(name=name, position=i, description=description)
                        for i, (name, description) in enumerate([
                            ("Checkout", "Card and wallet payments at checkout"),
                            ("API", "The REST API and its webhooks"),
                            ("Sign-in", "Logging in to the dashboard")], 1)]

    def update(incident, text, **fields):
        run = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=text)
        published = publish(incident, text, actor=users.ops, source_run=run, fields=PublicFields(**fields))
        assert tasks.attempt(published.deliveries.get(channel__kind="status").pk) == "delivered"

    old = make_incident("inc_old_1", title="Internal: DB failover drill")
    update(old, "We are investigating a problem in the EU. Current status: degraded.", title="Slow dashboard",
           components={api.pk: "degraded_performance"})
    update(old, "Payments work again in the EU.", state="resolved")
    payments = make_incident("inc_pay_1", title="P1 acquirer outage")
    update(payments, "We are investigating a problem with card payments in the EU. Some payments fail at "
                     "checkout; retrying usually works. Current status: degraded.",
           title="Card payments failing in the EU", components={checkout.pk: "partial_outage",
                                                                api.pk: "degraded_performance"})
    update(payments, "We are investigating a problem in the EU. Current status: degraded.", state="identified")
    return payments


def test_a_customer_sees_what_is_broken_and_what_is_being_done_on_every_width(
        page, live_server, incidents, screenshot, no_csp_violation):
    pages = {"index": "/status/", "history": "/status/history/", "incident": "/status/incidents/inc_pay_1/"}
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        for name, path in pages.items():
            response = page.goto(f"{live_server.url}{path}")
            assert response.status == 200
            fit = page.evaluate(OVERFLOW)
            assert fit["scrollWidth"] <= fit["innerWidth"], f"{path} scrolls sideways at {width}: {fit}"
            if width in SHOTS:
                screenshot(page, f"status-{name}-{width}")
        page.goto(f"{live_server.url}/status/")
        expect(page.get_by_role("status")).to_have_text("Partial outage")
        ongoing = page.locator("article.incident").first
        expect(ongoing.get_by_role("heading")).to_have_text("Card payments failing in the EU")
        expect(ongoing).to_contain_text("Identified")
        expect(ongoing).to_contain_text("Impact: major")
        expect(page.locator(".component", has_text="Checkout")).to_contain_text("Partial outage")
        expect(page.locator(".component", has_text="Sign-in")).to_contain_text("Operational")
    expect(page.locator("body")).not_to_contain_text("P1 acquirer outage")
    page.get_by_role("link", name="Slow dashboard").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Slow dashboard")
    expect(page.locator("article.incident")).to_contain_text("Resolved")


@pytest.mark.browser_context_args(timezone_id="America/New_York")
def test_a_reader_in_new_york_sees_each_time_in_their_zone_beside_the_utc(page, live_server, incidents, screenshot,
                                                                          no_csp_violation):
    """static/js/status-times.js adds the reader's time next to each UTC time; the HTML the server sends (stored
    once for every reader) holds UTC only, so a reader without JavaScript reads UTC."""
    for width in SHOTS:
        page.set_viewport_size({"width": width, "height": 900})
        for name, path in (("index", "/status/"), ("incident", "/status/incidents/inc_pay_1/"),
                           ("history", "/status/history/")):
            response = page.goto(f"{live_server.url}{path}")
            served = response.text()
            assert "local-time" not in served and "New_York" not in served and "Times are in UTC." in served
            times = page.locator("main time[datetime]")
            assert times.count() >= 1, path
            for i in range(times.count()):
                time = times.nth(i)
                instant = datetime.fromisoformat(time.get_attribute("datetime"))
                expect(time).to_have_text(f"{instant.astimezone(UTC):%Y-%m-%d %H:%M} UTC")
                mine = time.locator("xpath=following-sibling::*[1]")
                new_york = instant.astimezone(ZoneInfo("America/New_York"))
                expect(mine).to_have_class("local-time")
                expect(mine).to_have_text(f"({new_york:%Y-%m-%d %H:%M} {new_york:%Z}, your time)")
            expect(page.locator("#times-note")).to_have_text(
                "Times are in UTC, each with your time (America/New_York) beside it.")
            fit = page.evaluate(OVERFLOW)
            assert fit["scrollWidth"] <= fit["innerWidth"], f"{path} scrolls sideways at {width}: {fit}"
            screenshot(page, f"status-{name}-new-york-{width}")

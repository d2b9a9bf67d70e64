"""The public status page in a browser, as a customer reads it: what is broken and what is being
done, on a laptop and a phone. No page scrolls sideways at any common width, axe-core finds nothing
(the autouse ``accessible_pages`` fixture) and the Content-Security-Policy holds.
Screenshots: test-artifacts/status-<page>-<width>.png."""

import math
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


def test_the_uptime_bars_are_reached_by_keyboard_and_each_tells_its_day(
        page, live_server, users, monkeypatch, time_machine, accessible_pages, screenshot, no_csp_violation):
    """Each component's 90 daily bars (reviewer/status/history.py): Tab reaches them, each bar's name
    tells its day, uptime and incidents, and its details show on keyboard focus as on hover; a group
    folds its components and opens from the keyboard. axe finds nothing with a day's details open."""
    from datetime import timedelta

    from reviewer.models import StatusComponentGroup
    from reviewer.status.snapshots import rebuild

    monkeypatch.setattr(tasks.deliver, "delay", lambda pk: None)
    DeliveryChannel.objects.get_or_create(kind=DeliveryChannel.Kind.STATUS, defaults={"name": "Public status page"})
    started = datetime.now(UTC)
    today = started.replace(hour=0, minute=0, second=0, microsecond=0)
    outage = today - timedelta(days=20)

    def update(incident, text, **fields):
        run = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=text)
        published = publish(incident, text, actor=users.ops, source_run=run, fields=PublicFields(**fields))
        assert tasks.attempt(published.deliveries.get(channel__kind="status").pk) == "delivered"
        rebuild()  # what the delivery's rebuild task does

    time_machine.move_to(today - timedelta(days=60), tick=False)
    access = StatusComponentGroup.objects.create(name="Access", position=2)
    checkout, _, _ = [StatusComponent.objects.create(name=name, position=i, group=group) for i, (name, group) in
                      enumerate([("Checkout", None), ("API", access), ("Sign-in", access)], 1)]
    payments = make_incident("inc_pay_1", title="P1 acquirer outage")
    time_machine.move_to(outage + timedelta(hours=6), tick=False)
    update(payments, "We are investigating a problem with card payments in the EU. Current status: degraded.",
           title="Card payments failing in the EU", components={checkout.pk: "major_outage"})
    time_machine.move_to(outage + timedelta(hours=9), tick=False)
    update(payments, "Payments work again in the EU.", state="resolved")
    time_machine.move_to(started, tick=True)
    rebuild()
    day = f"{outage.day} {outage:%b}"
    named = f"{day}: 87.50 % up, 1 incident: Card payments failing in the EU"  # 3 h of 24 in major outage
    # Over the 60 days since Checkout was added, up to the last full hour: 3 h down.
    seen = (started.replace(minute=0, second=0, microsecond=0) - (today - timedelta(days=60))).total_seconds()
    uptime = math.floor(100 * (1 - 3 * 3600 / seen) * 100 + 1e-9) / 100

    for width in SHOTS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/status/")
        fit = page.evaluate(OVERFLOW)
        assert fit["scrollWidth"] <= fit["innerWidth"], f"the page scrolls sideways at {width}: {fit}"
        bars = page.get_by_role("list", name=f"Checkout, last 90 days: {uptime:.2f} % uptime")
        expect(bars.get_by_role("button")).to_have_count(90)
        expect(bars.get_by_role("button").first).to_have_accessible_name(
            f"{(today - timedelta(days=89)).day} {today - timedelta(days=89):%b}: no data")

        # Tab from the top of the page reaches Checkout's first bar before anything else of the list.
        page.locator("body").focus()
        for _ in range(15):
            page.keyboard.press("Tab")
            if page.evaluate("() => document.activeElement.classList.contains('bar')"):
                break
        first = bars.get_by_role("button").first
        expect(first).to_be_focused()
        tip = bars.locator(".day").first.locator(".day-tip")
        expect(tip).to_be_visible()
        expect(tip).to_contain_text("No data")

        # The outage's day, by keyboard: its details show the status, the uptime and the incident.
        bar = bars.get_by_role("button", name=named)
        bar.focus()
        expect(bar).to_have_class("bar bar-major_outage")
        details = bar.locator("xpath=..").locator(".day-tip")  # the bar's day
        expect(details).to_be_visible()
        expect(details).to_contain_text("Major outage · 87.50 % up")
        expect(details).to_contain_text("Card payments failing in the EU")
        expect(tip).to_be_hidden()
        assert accessible_pages.check(page) == []
        screenshot(page, f"status-bars-focus-{width}")
        page.keyboard.press("Escape")  # the details step aside; the bar keeps the focus
        expect(details).to_be_hidden()
        expect(bar).to_be_focused()
        page.keyboard.press("Tab")  # the next day's bar, and only its details
        expect(details).to_be_hidden()
        expect(page.locator(".bar:focus").locator("xpath=..").locator(".day-tip")).to_contain_text(
            "Operational · 100.00 % up")

        # By mouse the same details show on hover.
        page.locator("body").focus()
        bar.hover()
        expect(details).to_be_visible()

        page.mouse.move(0, 0)
        # The group shows its members' worst status, and opens from the keyboard.
        group = page.locator(".component-group summary")
        expect(group).to_contain_text("Access")
        expect(group).to_contain_text("Operational")
        members = page.get_by_role("list", name="Sign-in, last 90 days: 100.00 % uptime")
        expect(members).to_be_hidden()
        group.focus()
        page.keyboard.press("Enter")
        expect(members).to_be_visible()
        expect(page.locator(".component-group details")).to_have_attribute("open", "")
        assert accessible_pages.check(page) == []
        screenshot(page, f"status-bars-group-{width}")

"""Scheduled maintenance end to end in a real browser, at 1366 and 390 pixels wide, on a controlled
clock: ops schedule a window an hour ahead from the desk; a subscriber gets the announcement and a
reminder by email; at the start the page shows it in progress ("Under maintenance") with no email
sent; at the end it is completed; the scheduled-maintenances JSON shows each step. Screenshots in
test-artifacts/: maintenance-*.png."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.core import mail
from playwright.sync_api import expect

from reviewer.models import StatusComponent, Subscriber
from reviewer.outbox.tasks import sweep_maintenance
from tests.browser.helpers import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("no_csp_violation")]

NOW = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)
TEXT = "We will upgrade the API database. Requests to the API may be slow for a few minutes."


def maintenances(page, live_server, which=""):
    response = page.request.get(f"{live_server.url}/status/api/v2/scheduled-maintenances{which}.json")
    assert response.ok and response.headers["cache-control"] == "public, max-age=10"
    return [(m["name"], m["status"]) for m in response.json()["scheduled_maintenances"]]


@pytest.mark.parametrize("width", [1366, 390])
def test_ops_schedule_a_window_that_moves_by_itself(page, live_server, screenshot, users, width, settings):
    settings.MAINTENANCE_REMINDER_MINUTES = 30
    StatusComponent.objects.create(name="API", position=1)
    StatusComponent.objects.create(name="Checkout", position=2)
    Subscriber.objects.create(email="ada@example.com", confirmed_at=NOW - timedelta(days=1))
    page.set_viewport_size({"width": width, "height": 900})
    with time_machine.travel(NOW) as clock:
        log_in(page, live_server, users.ops.username)
        page.click("nav >> text=Maintenance")
        page.fill("input[name=title]", "API database upgrade")
        page.check("label:has-text('API') input")
        page.fill("input[name=starts_at]", "2026-12-02T11:00")
        page.fill("input[name=ends_at]", "2026-12-02T12:00")
        page.fill("textarea[name=text]", TEXT)
        page.click("button:has-text('Schedule and publish')")
        expect(page.locator(".maintenance-window")).to_contain_text("Scheduled")
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width
        screenshot(page, f"maintenance-desk-{width}")
        (announcement,) = mail.outbox
        assert announcement.to == ["ada@example.com"] and "Scheduled: API database upgrade" in announcement.subject
        assert TEXT in announcement.body

        page.goto(f"{live_server.url}/status/")
        expect(page.locator("#maintenance-upcoming-heading")).to_have_text("Scheduled maintenance")
        expect(page.locator(".banner")).to_have_text("All systems operational")
        screenshot(page, f"maintenance-scheduled-{width}")
        assert maintenances(page, live_server, "/upcoming") == [("API database upgrade", "scheduled")]
        assert maintenances(page, live_server, "/active") == []

        clock.move_to(NOW + timedelta(minutes=30))
        sweep_maintenance()
        sweep_maintenance()  # beat sends it again: nothing twice
        assert [m.subject for m in mail.outbox][1:] == ["[Our service status] Reminder: API database upgrade"]

        clock.move_to(NOW + timedelta(hours=1))
        sweep_maintenance()
        assert len(mail.outbox) == 2  # the move tells nobody
        page.reload()  # the browser may keep the page ten seconds (max-age): a reload asks again
        expect(page.locator(".banner")).to_have_text("Under maintenance")
        expect(page.locator("#maintenance-active-heading")).to_have_text("Maintenance in progress")
        expect(page.locator(".component", has_text="API").locator(".component-status")).to_have_text(
            "Under maintenance")
        expect(page.locator(".component", has_text="Checkout").locator(".component-status")).to_have_text(
            "Operational")
        assert page.evaluate("() => document.documentElement.scrollWidth") <= width
        screenshot(page, f"maintenance-in-progress-{width}")
        assert maintenances(page, live_server, "/active") == [("API database upgrade", "in_progress")]
        assert maintenances(page, live_server, "/upcoming") == []

        clock.move_to(NOW + timedelta(hours=2))
        sweep_maintenance()
        assert len(mail.outbox) == 2
        page.reload()
        expect(page.locator(".banner")).to_have_text("All systems operational")
        expect(page.locator("#maintenance-active-heading")).to_have_count(0)
        assert maintenances(page, live_server, "/active") == [] and maintenances(page, live_server, "/upcoming") == []
        assert maintenances(page, live_server) == [("API database upgrade", "completed")]
        page.goto(f"{live_server.url}/maintenance/")
        expect(page.locator(".maintenance-window")).to_contain_text("Completed")
        screenshot(page, f"maintenance-completed-{width}")

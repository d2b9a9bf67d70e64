"""A held delivery in a real browser: the incident's updates show it as held with what it means, and
ops mark it as sent, at 1366 and 390 wide (screenshots device-held-delivery-1366.png,
device-held-delivery-390.png, held-delivery-marked.png in test-artifacts/)."""

import pytest
from playwright.sync_api import expect

from agents.models import Run
from reviewer.models import Delivery, DeliveryChannel
from reviewer.outbox import tasks
from reviewer.outbox.publishing import publish
from tests.browser.helpers import assert_fits, log_in
from tests.factories import make_incident, make_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("no_csp_violation")]
TEXT = "Card payments fail in the EU. We are working on a fix."


def test_ops_see_a_held_email_and_mark_it_as_sent(page, live_server, users, screenshot, monkeypatch):
    monkeypatch.setattr(tasks.deliver, "delay", lambda pk: None)
    DeliveryChannel.objects.all().delete()
    DeliveryChannel.objects.create(name="Customers mail", kind="email", recipients="customers@example.com")
    incident = make_incident()
    run = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=TEXT)
    delivery = publish(incident, TEXT, actor=users.ops, source_run=run).deliveries.get()
    Delivery.objects.filter(pk=delivery.pk).update(status=Delivery.Status.HELD, attempts=1,
                                                   last_error="email: TimeoutError: timed out (it may have been sent)")

    log_in(page, live_server, "ops")
    row = page.locator(".deliveries li", has_text="Customers mail")
    for width, height in ((1366, 900), (390, 844)):
        page.set_viewport_size({"width": width, "height": height})
        page.goto(f"{live_server.url}/incidents/{incident.incident_id}/#updates")
        expect(row).to_contain_text("Held: may have been sent — check before sending again")
        expect(row.locator("button", has_text="Send again")).to_be_visible()
        assert_fits(page, f"held-delivery-{width}", screenshot)

    row.locator("button", has_text="Mark as sent").click()
    expect(page.locator(".deliveries li", has_text="Customers mail")).to_contain_text("marked as sent by ops")
    screenshot(page, "held-delivery-marked")
    delivery.refresh_from_db()
    assert (delivery.status, delivery.marked_sent_by) == ("delivered", users.ops)

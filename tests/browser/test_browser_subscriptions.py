"""Subscribing to the status page in a real browser, at 1366 and 390 pixels wide: the link on the
status page, the form with its error, the answer, the confirmation page and its button, the
unsubscribe page. Screenshots in test-artifacts/: subscribe-*.png, subscribe-confirm-*.png,
unsubscribe-*.png."""

import re

import pytest
from django.core import mail
from playwright.sync_api import expect

from reviewer.models import StatusComponent, Subscriber

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("no_csp_violation")]


@pytest.mark.parametrize("width", [1366, 390])
def test_a_customer_subscribes_to_some_components_confirms_and_unsubscribes(page, live_server, screenshot, width,
                                                                           subscriptions_handled_here):
    StatusComponent.objects.create(name="API", position=1)
    StatusComponent.objects.create(name="Checkout", position=2)
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}/status/")
    page.click("text=Subscribe to updates")

    page.fill("input[name=email]", "ada@example.com")
    page.check("text=Only updates about these components")
    page.click("button:has-text('Subscribe')")
    expect(page.locator(".error")).to_have_text("Choose at least one component, or every update.")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width  # no sideways scrolling
    screenshot(page, f"subscribe-error-{width}")
    page.check("label:has-text('API') input")
    page.click("button:has-text('Subscribe')")
    expect(page.locator("[role=status]")).to_contain_text("Check ada@example.com")
    screenshot(page, f"subscribe-sent-{width}")

    (confirmation,) = mail.outbox
    link = re.search(r"https?://\S+/status/subscribe/confirm/\S+/", confirmation.body).group(0)
    page.goto(live_server.url + "/status/" + link.split("/status/", 1)[1])
    screenshot(page, f"subscribe-confirm-{width}")
    page.click("button:has-text('Confirm')")
    expect(page.locator("[role=status]")).to_contain_text("ada@example.com is subscribed")
    subscriber = Subscriber.objects.get()
    assert subscriber.active and [c.name for c in subscriber.components.all()] == ["API"]

    page.goto(f"{live_server.url}/status/unsubscribe/{subscriber.key}/")
    screenshot(page, f"unsubscribe-{width}")
    page.click("button:has-text('Unsubscribe')")
    expect(page.locator("[role=status]")).to_contain_text("ada@example.com is unsubscribed")
    assert not Subscriber.objects.get().active

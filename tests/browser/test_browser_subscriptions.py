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


@pytest.mark.parametrize("width", [1366, 390])
def test_a_customer_subscribes_a_webhook_sees_a_refused_url_and_copies_the_secret_once(
        page, live_server, screenshot, width, subscriptions_handled_here, settings):
    settings.SUBSCRIBER_PRIVATE_ALLOWED = ["127.0.0.1"]  # the customer's receiver, on this machine
    StatusComponent.objects.create(name="API", position=1)
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}/status/subscribe/")
    screenshot(page, f"subscribe-kinds-{width}")

    page.check("text=Webhook (a JSON POST to your endpoint)")
    page.fill("input[name=email]", "ops@customer.example")
    page.fill("input[name=url]", "https://10.0.0.1/status-hook")
    page.click("button:has-text('Subscribe')")
    expect(page.locator("#url-error")).to_have_text(
        "The host 10.0.0.1 has a private or reserved address; we only send to public addresses.")
    expect(page.locator("input[name=kind][value=webhook]")).to_be_checked()  # the choice is kept
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    screenshot(page, f"subscribe-webhook-refused-{width}")

    page.fill("input[name=url]", "http://127.0.0.1:9/status-hook")
    page.click("button:has-text('Subscribe')")
    expect(page.locator("[role=status]")).to_contain_text("Check ops@customer.example")
    (confirmation,) = mail.outbox
    link = re.search(r"https?://\S+/status/subscribe/confirm/\S+/", confirmation.body).group(0)
    page.goto(live_server.url + "/status/" + link.split("/status/", 1)[1])
    expect(page.locator("main")).to_contain_text("Send incident updates to the webhook at 127.0.0.1?")
    page.click("button:has-text('Confirm')")
    secret = Subscriber.objects.get().secret
    expect(page.locator(".webhook-secret code")).to_have_text(secret)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    screenshot(page, f"subscribe-webhook-secret-{width}")
    page.goto(live_server.url + "/status/" + link.split("/status/", 1)[1])  # shown once: not on a second visit
    expect(page.locator("main")).to_contain_text("The webhook at 127.0.0.1 is subscribed")
    expect(page.locator(".webhook-secret")).to_have_count(0)

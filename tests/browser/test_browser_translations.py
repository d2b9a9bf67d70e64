"""Translations in a browser (docs/translations.md): a lead's French translation that changes a number
stops at the desk with its finding, a faithful edit passes, the set is approved and published, and a
customer switches the status page to French and German, on a laptop and a phone. axe-core checks every
page (the autouse ``accessible_pages`` fixture). Screenshots: test-artifacts/translation-*.png."""

import pytest
from playwright.sync_api import expect

from reviewer.desk import decisions
from reviewer.models import DeliveryChannel, Escalation, StatusComponent
from reviewer.outbox import tasks
from reviewer.outbox.publishing import PublicFields, publish
from tests.browser.helpers import OVERFLOW, log_in
from tests.factories import make_escalation, make_incident

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TEXT = ("Since 14:30 UTC about 2% of card payments in the EU fail at checkout. Retrying usually works. "
        "We are investigating.")
FRENCH = ("Depuis 14 h 30 UTC, environ 2 % des paiements par carte dans l'UE échouent au moment du paiement. "
          "Une nouvelle tentative fonctionne généralement. Nous enquêtons.")


@pytest.mark.parametrize("width", [1366, 390])
def test_a_changed_number_stops_at_the_desk_and_the_reader_switches_language(
        page, live_server, users, monkeypatch, screenshot, no_csp_violation, width):
    monkeypatch.setattr(tasks.deliver, "delay", lambda pk: None)
    DeliveryChannel.objects.get_or_create(kind=DeliveryChannel.Kind.STATUS, defaults={"name": "Public status page"})
    checkout = StatusComponent.objects.create(name="Checkout", position=1, description="Card payments at checkout")
    escalation = make_escalation(incident=make_incident("inc_pay_1"), text=TEXT)
    page.set_viewport_size({"width": width, "height": 900})

    # The lead writes a French translation that says 20 % where the text says about 2%.
    log_in(page, live_server, "lead")
    page.goto(f"{live_server.url}/escalations/{escalation.pk}/")
    french = page.locator("#translation-fr")
    french.get_by_label("Text (French)").fill(FRENCH.replace("environ 2 %", "environ 20 %"))
    french.get_by_role("button", name="Check and save").click()
    french = page.locator("#translation-fr")
    expect(french).to_contain_text("stopped")
    expect(french).to_contain_text("The translation says “environ 20 %” where the source says “about 2%”.")
    french.scroll_into_view_if_needed()
    screenshot(page, f"translation-desk-stopped-{width}")
    # Approving the set is refused while it is stopped; the lead's edit passes.
    with pytest.raises(decisions.DecisionInvalid, match="French translation is stopped"):
        decisions.decide(escalation.pk, users.lead, "approve")
    french.get_by_label("Title (French)").fill("Paiements par carte en échec dans l'UE")
    french.get_by_label("Text (French)").fill(FRENCH)
    french.get_by_role("button", name="Check and save the edit").click()
    expect(page.locator("#translation-fr")).to_contain_text("passes")
    decisions.decide(escalation.pk, users.lead, "approve")
    approved = Escalation.objects.get(pk=escalation.pk)
    update = publish(approved.run.incident, TEXT, actor=users.ops, escalation=approved,
                     fields=PublicFields(title="Card payments failing in the EU",
                                         components={checkout.pk: "partial_outage"}))
    assert tasks.attempt(update.deliveries.get(channel__kind="status").pk) == "delivered"

    # A customer whose browser asks for German gets German chrome and the English text (no German translation).
    context = page.context
    context.clear_cookies()
    context.set_extra_http_headers({"Accept-Language": "de-DE,de;q=0.9,en;q=0.5"})
    page.goto(f"{live_server.url}/status/")
    expect(page.locator("html")).to_have_attribute("lang", "de")
    expect(page.get_by_role("status")).to_have_text("Teilausfall")
    expect(page.locator(".component", has_text="Checkout")).to_contain_text("Teilausfall")
    expect(page.locator("article.incident .status-text")).to_have_attribute("lang", "en")
    fit = page.evaluate(OVERFLOW)
    assert fit["scrollWidth"] <= fit["innerWidth"], f"the German page scrolls sideways at {width}: {fit}"
    screenshot(page, f"translation-status-de-{width}")

    # The switcher: French, kept for the next page.
    page.get_by_role("navigation", name="Sprache").get_by_role("link", name="Français").click()
    expect(page.locator("html")).to_have_attribute("lang", "fr")
    incident = page.locator("article.incident")
    expect(incident.get_by_role("heading")).to_have_text("Paiements par carte en échec dans l'UE")
    expect(incident.locator(".status-text")).to_have_text(FRENCH)
    expect(page.get_by_role("link", name="Français")).to_have_attribute("aria-current", "page")
    fit = page.evaluate(OVERFLOW)
    assert fit["scrollWidth"] <= fit["innerWidth"], f"the French page scrolls sideways at {width}: {fit}"
    screenshot(page, f"translation-status-fr-{width}")
    page.get_by_role("link", name="Paiements par carte en échec dans l'UE").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Paiements par carte en échec dans l'UE")
    # The feed the page links to is French too.
    feed = page.get_by_role("link", name="Flux Atom")
    expect(feed).to_have_attribute("href", "/status/feed/fr/")
    body = page.request.get(f"{live_server.url}/status/feed/fr/").text()
    assert 'xml:lang="fr"' in body and "Paiements par carte en échec dans l&#x27;UE" in body.replace("'", "&#x27;")

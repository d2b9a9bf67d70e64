"""The status page in several languages (reviewer/status/languages.py, docs/status-page.md 'Languages'):
each language stored on its own, chosen by ?lang= (kept in a cookie), the cookie, or Accept-Language;
the feeds per language; an update's approved translation shown, its English text where it has none."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from reviewer.desk import decisions
from reviewer.models import Escalation, StatusSnapshot
from reviewer.outbox import tasks, translations
from reviewer.outbox.publishing import PublicFields, publish
from reviewer.status import languages
from tests.factories import make_escalation

TEXT = "Since 14:30 UTC about 2% of card payments in the EU fail. We are investigating."
FRENCH = "Depuis 14 h 30 UTC, environ 2 % des paiements par carte dans l'UE échouent. Nous enquêtons."


@pytest.fixture
def published(users, incident, components, publish_update):
    """An update approved at the desk with its French translation (no German one), published and delivered."""
    escalation = make_escalation(incident=incident, text=TEXT)
    translations.save(escalation, "fr", FRENCH, title="Paiements par carte en échec", user=users.lead)
    decisions.decide(escalation.pk, users.lead, "approve")
    update = publish(incident, TEXT, actor=users.ops, escalation=Escalation.objects.get(pk=escalation.pk),
                     fields=PublicFields(title="Card payments failing",
                                         components={components["Checkout"].pk: "partial_outage"}))
    for delivery in update.deliveries.all():
        assert tasks.attempt(delivery.pk) == "delivered"
    return update


def page(client, path="/status/", **headers):
    response = client.get(path, **headers)
    assert response.status_code == 200
    return response, response.content.decode()


def test_accept_language_picks_the_first_language_the_page_has(client, published):
    response, html = page(client, HTTP_ACCEPT_LANGUAGE="es-ES,de;q=0.9,fr;q=0.8")
    assert response["Content-Language"] == "de" and '<html lang="de">' in html
    assert "Laufende Vorfälle" in html and "Teilausfall" in html
    # No German translation: the English text, marked as English.
    assert f'<p class="status-text" lang="en">{TEXT}</p>' in html.replace("&#x27;", "'")
    assert "Accept-Language" in response["Vary"] and "Cookie" in response["Vary"]
    response, html = page(client, HTTP_ACCEPT_LANGUAGE="fr-CH, en;q=0.5")
    assert response["Content-Language"] == "fr"
    assert "Paiements par carte en échec" in html and FRENCH in html.replace("&#x27;", "'")
    assert "Incidents en cours" in html and "Panne partielle" in html and "Impact : majeur" in html


def test_nothing_asked_is_english_as_before(client, published):
    response, html = page(client)
    assert response["Content-Language"] == "en" and '<html lang="en">' in html
    assert "Ongoing incidents" in html and TEXT in html.replace("&#x27;", "'") and 'lang="en"' not in html.split(
        "<main")[1].split("</main>")[0]


def test_the_reader_switches_with_a_link_and_the_choice_is_kept_in_a_cookie(client, published):
    _, html = page(client)
    html = " ".join(html.split())
    assert '<a href="?lang=fr" lang="fr" hreflang="fr">Français</a>' in html
    assert '<a href="?lang=en" lang="en" hreflang="en" aria-current="page">English</a>' in html
    response, html = page(client, "/status/?lang=fr", HTTP_ACCEPT_LANGUAGE="de")
    assert response["Content-Language"] == "fr" and response.cookies[languages.COOKIE].value == "fr"
    # The next pages keep French, whatever the header says.
    response, html = page(client, f"/status/incidents/{published.incident.incident_id}/", HTTP_ACCEPT_LANGUAGE="de")
    assert response["Content-Language"] == "fr" and "Paiements par carte en échec" in html
    response, html = page(client, "/status/history/", HTTP_ACCEPT_LANGUAGE="de")
    assert "Historique des incidents" in html
    assert StatusSnapshot.objects.filter(name__in=["page@fr", "history:1@fr"]).count() == 2


def test_each_language_has_its_feed(client, published):
    atom = "{http://www.w3.org/2005/Atom}"
    for path in ("/status/feed/fr/", "/status/feed/?lang=fr"):
        response = client.get(path, HTTP_ACCEPT_LANGUAGE="de")
        root = ET.fromstring(response.content)
        assert root.get("{http://www.w3.org/XML/1998/namespace}lang") == "fr"
        [entry] = root.findall(f"{atom}entry")
        assert entry.find(f"{atom}title").text == "Paiements par carte en échec: Analyse en cours"
        assert entry.find(f"{atom}content").text == FRENCH
    rss = ET.fromstring(client.get("/status/feed/rss/de/").content)
    assert rss.find("channel/language").text == "de"
    assert rss.find("channel/item/title").text == "Card payments failing: Wird untersucht"
    assert client.get("/status/feed/es/").status_code == 404


def test_a_conditional_request_still_gets_304_per_language(client, published):
    first = client.get("/status/?lang=de")
    again = client.get("/status/", HTTP_IF_NONE_MATCH=first["ETag"], HTTP_ACCEPT_LANGUAGE="de")
    assert again.status_code == 304
    client.cookies.clear()  # ?lang=de was kept: without it, the English page
    assert client.get("/status/", HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 200  # English differs


def test_the_json_api_stays_english(client, published):
    summary = client.get("/status/api/v2/summary.json?lang=fr", HTTP_ACCEPT_LANGUAGE="fr").json()
    assert summary["incidents"][0]["incident_updates"][0]["body"] == TEXT

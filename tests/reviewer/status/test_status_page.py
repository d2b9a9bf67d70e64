"""The public status page (reviewer/status/): the banner and each component's status come from the
latest published update of each unresolved incident, the worst winning; every word customers read
comes from published updates, never from the incident row."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import NoReverseMatch, reverse

from reviewer.models import PublishedUpdate, StatusSnapshot
from tests.factories import make_incident
from tests.reviewer.status.conftest import INTERNAL_TITLE, RESOLVED_TEXT, TEXT


def components_on(client) -> dict[str, str]:
    """Each component's status as the page writes it."""
    page = client.get("/status/").content.decode()
    found = re.findall(r'<span class="component-name">([^<]+?)\s*(?:<span.*?</span>)?\s*</span>\s*'
                       r'<span class="component-status component-[a-z_]+">([^<]+)</span>', page, re.S)
    return {name.strip(): status for name, status in found}


def banner(client) -> str:
    return re.search(r'<p class="banner banner-\w+" role="status">([^<]+)</p>',
                     client.get("/status/").content.decode())[1]


def test_with_nothing_published_every_component_is_operational(client, components):
    assert banner(client) == "All systems operational"
    assert components_on(client) == {"Checkout": "Operational", "API": "Operational", "Sign-in": "Operational"}
    page = client.get("/status/").content.decode()
    assert "Ongoing incidents" not in page and "No incidents were resolved recently." in page


def test_the_worst_status_of_the_unresolved_incidents_wins_and_resolving_gives_operational_back(
        client, components, publish_update):
    payments, api = make_incident("inc_pay_1"), make_incident("inc_api_2")
    publish_update(payments, title="Card payments failing", state="identified",
                   components={"Checkout": "partial_outage"})
    publish_update(api, title="Slow responses", components={"Checkout": "major_outage", "API": "degraded_performance"})
    assert components_on(client) == {"Checkout": "Major outage", "API": "Degraded performance",
                                     "Sign-in": "Operational"}
    assert banner(client) == "Major outage"

    publish_update(api, RESOLVED_TEXT, state="resolved")
    assert components_on(client) == {"Checkout": "Partial outage", "API": "Operational", "Sign-in": "Operational"}
    assert banner(client) == "Partial outage"

    publish_update(payments, RESOLVED_TEXT, state="resolved")
    assert components_on(client) == {"Checkout": "Operational", "API": "Operational", "Sign-in": "Operational"}
    assert banner(client) == "All systems operational"
    page = client.get("/status/").content.decode()
    assert "Ongoing incidents" not in page
    resolved = page.split('id="resolved-heading"')[1]
    assert resolved.index("Card payments failing") < resolved.index("Slow responses")  # the latest resolved first


def test_only_the_latest_update_of_an_incident_says_how_its_components_are(client, components, publish_update,
                                                                           incident):
    publish_update(incident, title="Card payments failing", components={"Checkout": "major_outage"})
    publish_update(incident, state="monitoring", components={"Checkout": "degraded_performance"})
    assert components_on(client)["Checkout"] == "Degraded performance"
    assert banner(client) == "Degraded performance"


def test_an_incident_that_names_no_component_still_sets_the_banner_by_its_impact(client, components,
                                                                                   publish_update, incident):
    publish_update(incident, title="Card payments failing", impact="major")
    assert set(components_on(client).values()) == {"Operational"}
    assert banner(client) == "Partial outage"


def test_an_ongoing_incident_shows_its_title_impact_state_and_every_update_newest_first(
        client, components, publish_update, incident):
    first = publish_update(incident, "We are investigating a problem with card payments in the EU.",
                           title="Card payments failing", components={"Checkout": "partial_outage"})
    second = publish_update(incident, TEXT, state="identified")
    page = client.get("/status/").content.decode()
    ongoing = page.split('id="active-heading"')[1].split('id="components-heading"')[0]
    assert "Card payments failing" in ongoing and "Impact: major" in ongoing
    assert '<span class="state state-identified">Identified</span>' in ongoing
    assert "Affects: Checkout" in ongoing
    assert ongoing.index(f'id="update-{second.pk}"') < ongoing.index(f'id="update-{first.pk}"')
    assert "<strong>Investigating</strong>" in ongoing and "<strong>Identified</strong>" in ongoing
    assert f'<time datetime="{second.published_at.isoformat()}">' in ongoing


def test_an_update_still_in_the_outbox_is_not_shown_anywhere(client, components, publish_update, incident):
    update = publish_update(incident, "We are investigating slow card payments in the EU.", deliver=False,
                            title="Card payments failing")
    for path in ("/status/", "/status/history/", "/status/feed/", "/status/api/v2/summary.json"):
        body = client.get(path).content.decode()
        assert update.text not in body and "Card payments failing" not in body, path
    assert client.get(f"/status/incidents/{incident.incident_id}/").status_code == 404


PUBLIC_PATHS = ["/status/", "/status/history/", "/status/incidents/inc_pay_1/", "/status/feed/",
                "/status/feed/rss/", "/status/api/v2/summary.json", "/status/api/v2/status.json"]


def test_the_internal_title_never_shows_and_changing_it_changes_nothing_customers_see(
        client, api, components, publish_update, incident):
    publish_update(incident, title="Card payments failing", components={"Checkout": "partial_outage"})
    before = {path: client.get(path).content for path in PUBLIC_PATHS}
    for path, body in before.items():
        assert INTERNAL_TITLE.encode() not in body and b"P1" not in body, path

    changed = api("admin").patch(f"/incidents/{incident.incident_id}", {"title": "Acquirer X outage (internal)",
                                                                          "state": "resolved"})
    assert changed.status_code == 200, changed.json()
    StatusSnapshot.objects.outdate()  # every representation built again, from the changed rows
    assert {path: client.get(path).content for path in PUBLIC_PATHS} == before


def test_the_update_text_is_escaped(client, components, publish_update, incident):
    publish_update(incident, "We are investigating a problem in the EU. <b>Current status</b>: degraded.",
                   title="Card payments failing")
    page = client.get("/status/").content.decode()
    assert "&lt;b&gt;Current status&lt;/b&gt;" in page and "<b>Current" not in page


def test_history_lists_every_incident_newest_first_a_page_at_a_time(client, components, publish_update, settings,
                                                                     monkeypatch):
    from reviewer.status import snapshots

    monkeypatch.setattr(snapshots, "HISTORY_PER_PAGE", 2)
    titles = ["Slow sign-in", "Delayed exports", "Webhooks retrying"]
    for number, title in enumerate(titles):
        publish_update(make_incident(f"inc_h_{number}"), title=title)
    first = client.get("/status/history/").content.decode()
    assert first.index("Webhooks retrying") < first.index("Delayed exports")
    assert "Slow sign-in" not in first and "Page 1 of 2" in first and 'href="?page=2"' in first
    second = client.get("/status/history/?page=2").content.decode()
    assert "Slow sign-in" in second and "Webhooks retrying" not in second
    assert client.get("/status/history/?page=3").status_code == 404
    assert client.get("/status/history/?page=x").status_code == 404
    assert client.get("/status/history/?page=0").status_code == 404


def test_an_incident_page_shows_all_its_updates_and_other_incidents_are_not_found(
        client, components, publish_update, incident):
    updates = [publish_update(incident, title="Card payments failing"),
               publish_update(incident, RESOLVED_TEXT, state="resolved")]
    page = client.get(f"/status/incidents/{incident.incident_id}/").content.decode()
    assert '<h1 id="incident-inc_pay_1" class="incident-title">' in page
    assert all(f'id="update-{update.pk}"' in page for update in updates)
    assert '<span class="state state-resolved">Resolved</span>' in page
    make_incident("inc_quiet")
    assert client.get("/status/incidents/inc_quiet/").status_code == 404
    assert client.get("/status/incidents/nothing_here/").status_code == 404


def test_the_company_name_comes_from_the_setting(client, components, settings):
    settings.STATUS_PAGE_NAME = "Acme Payments"
    StatusSnapshot.objects.outdate()
    page = client.get("/status/").content.decode()
    assert "<title>Current status · Acme Payments</title>" in page and ">Acme Payments status</a>" in page
    assert json.loads(client.get("/status/api/v2/summary.json").content)["page"]["name"] == "Acme Payments"


def test_the_pages_are_the_same_for_everyone_and_carry_nothing_of_a_visitor(client, login, components,
                                                                            publish_update, incident):
    publish_update(incident, title="Card payments failing")
    anonymous = {path: client.get(path) for path in PUBLIC_PATHS}
    logged_in = login("lead")
    for path, response in anonymous.items():
        theirs = logged_in.get(path, HTTP_COOKIE="tz=Asia/Tokyo")
        assert theirs.content == response.content, path
        assert "Set-Cookie" not in theirs.headers, path
        # The pages in several languages vary on the reader's language choice only (the status_lang
        # cookie and Accept-Language; docs/status-page.md, 'Languages'): never on a session or a login.
        assert theirs.headers.get("Vary", "Accept-Language, Cookie") == "Accept-Language, Cookie", path
        assert b"csrfmiddlewaretoken" not in theirs.content and b"csrftoken" not in theirs.content, path
    assert b"Log out" not in anonymous["/status/"].content


def test_the_subscribe_link_is_there_exactly_when_subscribing_is(client, components):
    page = client.get("/status/").content.decode()
    try:
        url = reverse("status_subscribe")
    except NoReverseMatch:
        assert "Subscribe to updates" not in page
    else:
        assert f'href="{url}">Subscribe to updates</a>' in page


def test_a_component_edited_in_admin_shows_on_the_page(client, login, components):
    admin = login("admin")
    checkout = components["Checkout"]
    assert client.get("/status/").status_code == 200
    response = admin.post(f"/admin/reviewer/statuscomponent/{checkout.pk}/change/",
                          {"name": "Payments", "position": 9, "description": "Card and wallet payments"})
    assert response.status_code == 302
    page = client.get("/status/").content.decode()
    assert "Payments" in page and "Card and wallet payments" in page and "Checkout" not in page
    assert page.index("Sign-in") < page.index("Payments")  # position 9: last


def test_the_app_links_the_status_page_and_an_incident_with_public_updates(login, components, publish_update,
                                                                         incident):
    lead = login("lead")
    assert 'href="/status/">Status page</a>' in lead.get("/").content.decode()
    assert "/status/incidents/inc_pay_1/" not in lead.get("/incidents/inc_pay_1/").content.decode()
    publish_update(incident, title="Card payments failing")
    assert 'href="/status/incidents/inc_pay_1/"' in lead.get("/incidents/inc_pay_1/").content.decode()


def test_published_updates_are_the_only_source(components, publish_update, incident):
    """The status code reads the incident row for its id alone (public_updates annotates it)."""
    from reviewer.status.public import public_updates

    publish_update(incident, title="Card payments failing")
    sql = str(public_updates().query)
    assert '"title"' not in sql.replace('"public_title"', "")
    assert PublishedUpdate.objects.public().count() == 1


@pytest.mark.parametrize("method", ["post", "put", "delete"])
def test_the_status_pages_only_answer_reading(client, method, components):
    assert getattr(client, method)("/status/").status_code == 405


@pytest.mark.parametrize("value", ["0", "many", "5000"])
def test_a_feed_size_that_is_not_one_refuses_to_start(value):
    from tests.reviewer.test_production_settings import django_setup, strong_key

    out = django_setup(SECRET_KEY=strong_key(), STATUS_FEED_ENTRIES=value)
    assert out.returncode != 0 and "STATUS_FEED_ENTRIES" in out.stderr

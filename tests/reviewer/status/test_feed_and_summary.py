"""The status page's feeds and its Statuspage-shaped JSON (docs/status-page.md): what polling clients
and feed readers get, from the published updates only."""

from __future__ import annotations

import json

import feedparser

from reviewer.models import StatusComponent
from tests.factories import make_incident
from tests.reviewer.status.conftest import RESOLVED_TEXT, TEXT

HOSTILE = "We are investigating a problem in the EU. <script>alert(1)</script> & <b>more</b>. Current status: degraded."


def test_the_atom_feed_is_valid_and_carries_each_update_with_its_title_state_and_text(
        client, components, publish_update, incident, settings):
    settings.SITE_URL = "https://status.example.com"
    first = publish_update(incident, HOSTILE, title="Card payments failing")
    second = publish_update(incident, TEXT, state="identified")
    response = client.get("/status/feed/")
    assert response["Content-Type"].startswith("application/atom+xml")
    feed = feedparser.parse(response.content)
    assert feed.bozo == 0, feed.get("bozo_exception")
    assert [entry.title for entry in feed.entries] == ["Card payments failing: Identified",
                                                       "Card payments failing: Investigating"]
    newest, oldest = feed.entries
    assert newest.link == f"https://status.example.com/status/incidents/inc_pay_1/#update-{second.pk}"
    assert oldest.content[0].value == HOSTILE and oldest.content[0].type == "text/plain"  # shown as written
    assert "<script>" not in oldest.summary  # the HTML summary carries it escaped
    assert newest.published_parsed[:6] == second.published_at.utctimetuple()[:6]
    assert first.pk != second.pk and feed.feed.title == f"{settings.STATUS_PAGE_NAME} status"


def test_the_rss_feed_is_valid_too(client, components, publish_update, incident):
    publish_update(incident, title="Card payments failing")
    feed = feedparser.parse(client.get("/status/feed/rss/").content)
    assert feed.bozo == 0 and feed.version == "rss20"
    assert [entry.title for entry in feed.entries] == ["Card payments failing: Investigating"]
    assert TEXT in feed.entries[0].summary


def test_an_empty_feed_is_valid_and_its_bytes_do_not_change(client, db):
    body = client.get("/status/feed/").content
    assert feedparser.parse(body).bozo == 0
    from reviewer.models import StatusSnapshot

    StatusSnapshot.objects.outdate()
    assert client.get("/status/feed/").content == body


COMPONENT_KEYS = {"id", "name", "status", "position", "description", "created_at", "updated_at", "showcase",
                  "only_show_if_degraded", "group", "group_id", "page_id"}
INCIDENT_KEYS = {"id", "name", "status", "impact", "created_at", "updated_at", "started_at", "monitoring_at",
                 "resolved_at", "shortlink", "page_id", "incident_updates", "components", "postmortem_body",
                 "postmortem_published_at", "postmortem_body_last_updated_at"}
UPDATE_KEYS = {"id", "incident_id", "status", "body", "created_at", "updated_at", "display_at", "affected_components"}


def test_the_summary_has_statuspages_shape(client, components, publish_update, incident, settings):
    settings.SITE_URL = "https://status.example.com"
    first = publish_update(incident, title="Card payments failing", components={"Checkout": "major_outage"})
    second = publish_update(incident, state="monitoring", components={"Checkout": "degraded_performance",
                                                                      "API": "degraded_performance"})
    publish_update(make_incident("inc_old"), RESOLVED_TEXT, title="Old trouble", state="resolved")
    response = client.get("/status/api/v2/summary.json")
    assert response["Content-Type"] == "application/json"
    summary = json.loads(response.content)
    assert set(summary) == {"page", "components", "incidents", "scheduled_maintenances", "status"}
    assert set(summary["page"]) == {"id", "name", "url", "time_zone", "updated_at"}
    assert summary["page"]["url"] == "https://status.example.com/status/"
    assert summary["scheduled_maintenances"] == []
    assert summary["status"] == {"indicator": "minor", "description": "Degraded performance"}

    assert [c["name"] for c in summary["components"]] == ["Checkout", "API", "Sign-in"]
    assert all(set(c) == COMPONENT_KEYS for c in summary["components"])
    checkout, api, sign_in = summary["components"]
    assert (checkout["status"], api["status"], sign_in["status"]) == ("degraded_performance",
                                                                       "degraded_performance", "operational")
    assert checkout["id"] == str(components["Checkout"].pk) and checkout["position"] == 1
    assert checkout["description"] == "The Checkout service" and sign_in["updated_at"] is None

    (ongoing,) = summary["incidents"]  # unresolved ones only, as Statuspage's summary
    assert set(ongoing) == INCIDENT_KEYS
    assert (ongoing["id"], ongoing["name"], ongoing["status"], ongoing["impact"]) == (
        "inc_pay_1", "Card payments failing", "monitoring", "minor")  # the impact of its latest update
    assert ongoing["shortlink"] == "https://status.example.com/status/incidents/inc_pay_1/"
    assert ongoing["created_at"] == first.published_at.isoformat().replace("+00:00", "Z")
    assert ongoing["monitoring_at"] == ongoing["updated_at"] and ongoing["resolved_at"] is None
    assert ongoing["postmortem_body"] is ongoing["postmortem_published_at"] is None  # no report yet
    assert [u["id"] for u in ongoing["incident_updates"]] == [str(second.pk), str(first.pk)]
    assert all(set(u) == UPDATE_KEYS for u in ongoing["incident_updates"])
    newest = ongoing["incident_updates"][0]
    assert newest["body"] == TEXT and newest["status"] == "monitoring"
    assert newest["affected_components"] == [
        {"code": str(components["Checkout"].pk), "name": "Checkout", "old_status": "major_outage",
         "new_status": "degraded_performance"},
        {"code": str(components["API"].pk), "name": "API", "old_status": "operational",
         "new_status": "degraded_performance"}]
    assert [c["name"] for c in ongoing["components"]] == ["Checkout", "API"]


def test_status_json_is_the_page_and_the_indicator(client, components, publish_update, incident):
    publish_update(incident, title="Card payments failing", components={"Checkout": "partial_outage"})
    status = json.loads(client.get("/status/api/v2/status.json").content)
    assert set(status) == {"page", "status"}
    assert status["status"] == {"indicator": "major", "description": "Partial outage"}


def test_a_new_component_appears_in_the_summary(client, components):
    before = json.loads(client.get("/status/api/v2/summary.json").content)
    StatusComponent.objects.create(name="Webhooks", position=4)
    after = json.loads(client.get("/status/api/v2/summary.json").content)
    assert [c["name"] for c in after["components"]] == [c["name"] for c in before["components"]] + ["Webhooks"]

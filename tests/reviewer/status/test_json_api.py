"""The rest of the JSON API Statuspage clients poll (docs/status-page.md, 'The JSON API'):
components.json, incidents.json and incidents/unresolved.json, in Statuspage's shapes, from the
published updates only, cached like the summary."""

from __future__ import annotations

import json

import pytest

from reviewer.status import snapshots
from tests.factories import make_incident
from tests.reviewer.status.conftest import INTERNAL_TITLE, RESOLVED_TEXT
from tests.reviewer.status.test_feed_and_summary import COMPONENT_KEYS, INCIDENT_KEYS, UPDATE_KEYS

API = "/status/api/v2/"
LISTS = ["components.json", "incidents.json", "incidents/unresolved.json"]


def read(client, name: str) -> dict:
    response = client.get(API + name)
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    return json.loads(response.content)


def test_components_json_is_the_page_and_every_component_as_in_the_summary(client, components, publish_update,
                                                                          incident):
    publish_update(incident, title="Card payments failing", components={"Checkout": "partial_outage"})
    listed, summary = read(client, "components.json"), read(client, "summary.json")
    assert set(listed) == {"page", "components"} and listed["page"] == summary["page"]
    assert listed["components"] == summary["components"]
    assert [(c["name"], c["status"]) for c in listed["components"]] == [
        ("Checkout", "partial_outage"), ("API", "operational"), ("Sign-in", "operational")]
    assert all(set(c) == COMPONENT_KEYS for c in listed["components"])
    checkout = listed["components"][0]
    assert (checkout["group"], checkout["group_id"], checkout["created_at"]) == (False, None, None)
    assert checkout["page_id"] == listed["page"]["id"]


def test_incidents_json_lists_resolved_and_unresolved_and_unresolved_json_only_the_ongoing(
        client, components, publish_update, incident):
    old = make_incident("inc_old", title="Internal: database failover")
    publish_update(old, title="Old trouble", components={"API": "major_outage"})
    resolution = publish_update(old, RESOLVED_TEXT, state="resolved", components={"API": "operational"})
    publish_update(incident, title="Card payments failing", components={"Checkout": "major_outage"})
    make_incident("inc_unpublished", title="Nothing public yet")

    every, ongoing = read(client, "incidents.json"), read(client, "incidents/unresolved.json")
    assert set(every) == set(ongoing) == {"page", "incidents"}
    assert [i["id"] for i in every["incidents"]] == ["inc_pay_1", "inc_old"]  # newest update first
    assert [i["id"] for i in ongoing["incidents"]] == ["inc_pay_1"]
    assert ongoing["incidents"] == read(client, "summary.json")["incidents"]
    assert all(set(i) == INCIDENT_KEYS for i in every["incidents"])
    assert all(set(u) == UPDATE_KEYS for i in every["incidents"] for u in i["incident_updates"])

    resolved = every["incidents"][1]
    assert (resolved["name"], resolved["status"]) == ("Old trouble", "resolved")
    assert resolved["resolved_at"] == resolution.published_at.isoformat().replace("+00:00", "Z")
    assert [u["status"] for u in resolved["incident_updates"]] == ["resolved", "investigating"]
    assert resolved["incident_updates"][0]["body"] == RESOLVED_TEXT
    assert resolved["incident_updates"][0]["affected_components"] == [
        {"code": str(components["API"].pk), "name": "API", "old_status": "major_outage", "new_status": "operational"}]
    body = client.get(API + "incidents.json").content.decode()
    assert INTERNAL_TITLE not in body and "Internal: database failover" not in body and "Nothing public" not in body


def test_incidents_json_keeps_the_latest_fifty(client, components, publish_update, monkeypatch):
    monkeypatch.setattr(snapshots, "INCIDENTS_LISTED", 2)
    for name in ("first", "second", "third"):
        publish_update(make_incident(f"inc_{name}"), title="Card payments failing")
    assert [i["id"] for i in read(client, "incidents.json")["incidents"]] == ["inc_third", "inc_second"]


def test_an_unpublished_update_shows_in_no_list(client, components, publish_update, incident):
    publish_update(incident, title="Card payments failing", deliver=False)  # still in the outbox
    assert read(client, "incidents.json")["incidents"] == []
    assert read(client, "incidents/unresolved.json")["incidents"] == []
    assert read(client, "components.json")["page"]["updated_at"] is None


@pytest.mark.parametrize("name", LISTS)
def test_each_list_is_cached_like_the_summary(client, components, publish_update, incident, name):
    first = client.get(API + name)
    assert first["Cache-Control"] == "public, max-age=10" and first["Access-Control-Allow-Origin"] == "*"
    again = client.get(API + name, HTTP_IF_NONE_MATCH=first["ETag"])
    assert again.status_code == 304 and again.content == b"" and again["ETag"] == first["ETag"]
    assert client.get(API + name, HTTP_IF_MODIFIED_SINCE=first["Last-Modified"]).status_code == 304
    head = client.head(API + name)
    assert head.content == b"" and head["Content-Length"] == str(len(first.content))

    publish_update(incident, title="Card payments failing", components={"Checkout": "partial_outage"})
    changed = client.get(API + name, HTTP_IF_NONE_MATCH=first["ETag"])
    assert changed.status_code == 200 and changed["ETag"] != first["ETag"]


def test_the_lists_are_stored_by_the_rebuild(components, publish_update, incident):
    publish_update(incident, title="Card payments failing")
    assert set(LISTS) <= set(snapshots.rebuild())


def test_a_group_is_listed_as_a_component_of_its_own_and_its_members_name_it(client, components, publish_update,
                                                                           incident):
    from reviewer.models import StatusComponent, StatusComponentGroup

    payments = StatusComponentGroup.objects.create(name="Payments", position=0)
    StatusComponent.objects.filter(name__in=["Checkout", "API"]).update(group=payments)
    publish_update(incident, title="Card payments failing", components={"Checkout": "partial_outage"})
    listed = read(client, "components.json")["components"]
    group = next(c for c in listed if c["group"])
    members = [c for c in listed if c["group_id"] == group["id"]]
    assert (group["name"], group["status"], group["group_id"]) == ("Payments", "partial_outage", None)
    assert sorted(group["components"]) == sorted(c["id"] for c in members)
    assert sorted(c["name"] for c in members) == ["API", "Checkout"]
    assert next(c for c in listed if c["name"] == "Sign-in")["group_id"] is None
    assert read(client, "summary.json")["components"] == listed

"""The incident API and internal facts: a fact's visibility and the incident's state, created,
patched, read, filtered and described in the OpenAPI document (docs/incidents.md)."""

import pytest

from agents.models import Incident


def test_the_openapi_document_names_the_states_and_the_visibilities(client, db):
    schemas = client.get("/api/openapi.json").json()["components"]["schemas"]

    def choices(schema, field):
        prop = schemas[schema]["properties"][field]
        options = prop.get("anyOf", [prop])
        return {value for option in options for value in option.get("enum", [])}

    states = {"investigating", "identified", "monitoring", "resolved"}
    assert choices("IncidentOut", "state") == states and choices("IncidentFields", "state") == states
    assert choices("FactIn", "visibility") == {"public", "internal"}
    assert choices("FactOut", "visibility") == {"public", "internal"}


def test_an_incident_is_created_with_internal_facts_and_a_state_and_patched(api, db, users):
    admin = api("admin")
    created = admin.post("/incidents", {
        "incident_id": "inc_hooks_12", "title": "Webhook deliveries delayed", "state": "identified",
        "facts": [{"key": "delayed_deliveries", "label": "Delayed deliveries", "value": 1200, "unit": "count"},
                  {"key": "queue_host", "label": "Queue host", "value": "webhook-queue-3.svc.cluster.local",
                   "visibility": "internal"}]})

    assert created.status_code == 201, created.json()
    body = created.json()
    assert body["state"] == "identified"
    assert [(f["key"], f["visibility"]) for f in body["facts"]] == [("delayed_deliveries", "public"),
                                                                   ("queue_host", "internal")]
    context = Incident.objects.get(incident_id="inc_hooks_12").context()
    assert context["internal"] == {"queue_host": "webhook-queue-3.svc.cluster.local"}
    assert "queue_host" not in context["incident"]

    patched = admin.patch("/incidents/inc_hooks_12", {"state": "monitoring", "facts": [
        {"key": "queue_host", "value": "webhook-queue-3.svc.cluster.local", "visibility": "public"}]})

    body = patched.json()
    assert patched.status_code == 200 and body["version"] == 2 and body["state"] == "monitoring"
    assert body["versions"][0]["changes"] == [
        {"what": "State", "before": "identified", "after": "monitoring"},
        {"what": "Queue host visibility", "before": "internal", "after": "public"},
    ]
    assert [i["incident_id"] for i in admin.get("/incidents?state=monitoring").json()] == ["inc_hooks_12"]
    assert admin.get("/incidents?state=resolved").json() == []


def test_a_fact_patched_without_visibility_keeps_it(api, db):
    admin = api("admin")
    admin.post("/incidents", {"incident_id": "inc_login_8", "title": "Sign-in failures", "facts": [
        {"key": "on_call_engineer", "value": "Dana Whitfield", "visibility": "internal"}]})

    patched = admin.patch("/incidents/inc_login_8", {"facts": [{"key": "on_call_engineer", "value": "Lee Park"}]})

    assert patched.json()["facts"][0]["visibility"] == "internal"
    assert Incident.objects.get().context()["internal"] == {"on_call_engineer": "Lee Park"}


@pytest.mark.parametrize("body", [
    {"state": "fixed"},
    {"state": None},
    {"facts": [{"key": "host", "value": "a.internal", "visibility": "secret"}]},
])
def test_an_unknown_state_or_visibility_is_a_422_and_changes_nothing(api, db, body):
    admin = api("admin")
    admin.post("/incidents", {"incident_id": "inc_exports_5", "title": "CSV exports failing"})

    response = admin.patch("/incidents/inc_exports_5", body)

    assert response.status_code == 422, response.json()
    incident = Incident.objects.get()
    assert incident.state == "investigating" and incident.fact_list() == []
    assert incident.versions.count() == 1

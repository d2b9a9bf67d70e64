"""Ops name the components an incident affects on its page, through the one incident action the API's
PATCH calls: a new version by the person, a pending escalation's text then drafted on older facts;
only components of the status page can be named, on the page as in the API."""

from __future__ import annotations

import pytest
from django.urls import reverse

from agents.models import Incident
from reviewer.models import StatusComponent
from tests.factories import make_escalation, make_incident
from tests.reviewer.desk.test_incident_editor import edit_url, rows

pytestmark = pytest.mark.django_db


@pytest.fixture
def incident(db):
    StatusComponent.objects.create(name="Checkout", position=1)
    StatusComponent.objects.create(name="Sign-in", position=2)
    incident = make_incident(severity="P2", eta_minutes=30)
    incident.record_version()
    return incident


def test_the_editor_offers_the_status_pages_components(incident, login):
    page = login("ops").get(reverse("incident", args=[incident.incident_id])).content.decode()

    editor = page[page.index('id="edit-facts"'):page.index("</details>", page.index('id="edit-facts"'))]
    assert 'name="components" value="Checkout"' in editor and 'name="components" value="Sign-in"' in editor


def test_ops_name_the_affected_components_as_a_new_version_and_a_pending_text_is_marked(incident, login, users):
    escalation = make_escalation(incident=incident)
    escalation.run.incident_version = incident.latest_version()
    escalation.run.save(update_fields=["incident_version"])
    client = login("ops")

    response = client.post(edit_url(incident), rows(incident, components=["Checkout"]))

    assert response.status_code == 302
    incident = Incident.objects.get(pk=incident.pk)
    version = incident.latest_version()
    assert incident.components == ["Checkout"] and incident.context()["components"] == ["Checkout"]
    assert (version.number, version.created_by) == (2, users.ops)
    assert version.changes == [{"what": "Components", "before": None, "after": "Checkout"}]
    assert version.changes_text == "Components — → Checkout"
    assert escalation.facts_changed_text == "Components — → Checkout"
    page = client.get(reverse("incident", args=[incident.incident_id])).content.decode()
    facts = page[page.index('id="facts"'):page.index('id="edit-facts"')]
    assert "<h3>Affected components</h3>" in facts and "<li>Checkout</li>" in facts
    lead_page = login("lead").get(reverse("escalation", args=[escalation.pk])).content.decode()
    assert "Facts changed since this draft: Components — → Checkout" in lead_page


def test_unticking_every_component_clears_them(incident, login):
    client = login("ops")
    client.post(edit_url(incident), rows(incident, components=["Checkout", "Sign-in"]))
    incident = Incident.objects.get(pk=incident.pk)
    assert incident.components == ["Checkout", "Sign-in"]

    client.post(edit_url(incident), rows(incident))

    incident = Incident.objects.get(pk=incident.pk)
    assert incident.components == [] and incident.latest_version().number == 3
    assert "components" not in incident.context()


def test_the_page_refuses_a_component_the_status_page_does_not_have(incident, login):
    response = login("ops").post(edit_url(incident), rows(incident, components=["Billing"]))

    assert response.status_code == 400
    assert "Billing is not one of the available choices" in response.content.decode()
    assert Incident.objects.get(pk=incident.pk).components == []
    assert incident.latest_version().number == 1


def test_the_api_names_components_through_the_same_action(incident, api):
    ops = api("ops")

    patched = ops.patch(f"/incidents/{incident.incident_id}", {"components": ["Sign-in"]})

    assert patched.status_code == 200, patched.json()
    body = patched.json()
    assert body["components"] == ["Sign-in"] and body["version"] == 2
    assert body["versions"][0]["changes"] == [{"what": "Components", "before": None, "after": "Sign-in"}]
    refused = ops.patch(f"/incidents/{incident.incident_id}", {"components": ["Billing"]})
    assert refused.status_code == 422 and "Billing" in refused.json()["message"]
    assert Incident.objects.get(pk=incident.pk).components == ["Sign-in"]

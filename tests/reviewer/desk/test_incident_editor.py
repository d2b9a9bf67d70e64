"""Ops edit an incident's facts, state and severity on its page, through the one incident action the
API's PATCH calls: a new version by the person, a pending escalation's text then drafted on older facts."""

from __future__ import annotations

import pytest
from django.urls import reverse

from agents import incidents as actions
from agents.models import Incident
from tests.factories import make_escalation, make_incident


@pytest.fixture
def incident(db):
    incident = make_incident(severity="P2", eta_minutes=30, affected_checkout_pct=12)
    incident.record_version()
    return incident


def edit_url(incident):
    return reverse("edit_incident", args=[incident.incident_id])


def rows(incident, **changes) -> dict:
    """The editor's POST for the incident as it is, each fact a row (``fact-N-…``), one empty new row,
    then ``changes`` on top."""
    facts = incident.fact_list()
    data = {"state": incident.state, "severity": incident.severity, "version": incident.latest_version().number,
            "fact-TOTAL_FORMS": len(facts) + 1, "fact-INITIAL_FORMS": len(facts), "fact-MIN_NUM_FORMS": 0,
            "fact-MAX_NUM_FORMS": 60}
    for i, fact in enumerate(facts):
        data |= {f"fact-{i}-original_key": fact.key, f"fact-{i}-key": fact.key, f"fact-{i}-label": fact.label,
                 f"fact-{i}-value": fact.value, f"fact-{i}-unit": fact.unit, f"fact-{i}-visibility": fact.visibility}
    new = len(facts)
    data |= {f"fact-{new}-key": "", f"fact-{new}-label": "", f"fact-{new}-value": "", f"fact-{new}-unit": "text",
             f"fact-{new}-visibility": "public"}
    return data | changes


def test_ops_see_the_editor_with_every_fact_and_a_new_row(login, incident):
    html = login("ops").get(reverse("incident", args=[incident.incident_id])).content.decode()
    assert f'action="{edit_url(incident)}"' in html
    assert 'name="fact-0-key" value="eta_minutes"' in html and 'name="fact-2-key"' in html  # two facts, a new row
    assert 'name="fact-0-visibility"' in html and '<option value="internal">Internal</option>' in html


def test_ops_change_add_and_remove_facts_and_the_state_in_one_new_version(login, users, incident):
    escalation = make_escalation(incident=incident)
    escalation.run.incident_version = incident.latest_version()  # drafted on the version before
    escalation.run.save()
    assert escalation.facts_changes == []
    before = incident.latest_version().number

    response = login("ops").post(edit_url(incident), rows(
        incident, state="identified", severity="p1", **{
            "fact-0-value": "45",  # ETA
            "fact-1-DELETE": "on",  # Checkouts affected
            "fact-2-key": "on_call", "fact-2-label": "On call", "fact-2-value": "Dana", "fact-2-visibility": "internal",
        }))

    assert response.status_code == 302 and response["Location"].endswith("#facts")
    incident = Incident.objects.get(pk=incident.pk)
    assert (incident.state, incident.severity) == ("identified", "P1")
    assert [(f.key, f.value, f.visibility) for f in incident.fact_list()] == [
        ("eta_minutes", "45", "public"), ("on_call", "Dana", "internal")]
    version = incident.latest_version()
    assert (version.number, version.created_by) == (before + 1, users.ops)
    assert {change["what"] for change in version.changes} >= {"ETA", "Checkouts affected", "On call"}
    escalation = type(escalation).objects.get(pk=escalation.pk)
    assert escalation.facts_changes  # the lead is told the text was drafted on older facts


def test_renaming_a_key_replaces_the_fact(login, incident):
    login("ops").post(edit_url(incident), rows(incident, **{"fact-0-key": "eta_mins"}))
    assert [f.key for f in Incident.objects.get(pk=incident.pk).fact_list()] == ["eta_mins", "affected_checkout_pct"]


def test_saving_unchanged_records_no_version(login, incident):
    before = incident.versions.count()
    response = login("ops").post(edit_url(incident), rows(incident), follow=True)
    assert "Nothing changed" in response.content.decode()
    assert incident.versions.count() == before


@pytest.mark.parametrize(("changes", "message"), [
    ({"fact-1-value": "lots"}, "affected_checkout_pct"),  # not a percentage: the model's own check
    ({"fact-2-key": "eta_minutes", "fact-2-value": "5"}, "given twice"),
    ({"fact-2-key": "title", "fact-2-value": "x"}, "part of the incident&#x27;s identity"),
    ({"fact-0-value": ""}, "Enter a value"),
    ({"fact-0-label": "ETA\x1b[2J"}, "control character"),
    ({"state": "gone"}, "Select a valid choice"),
], ids=["bad-value", "twice", "identity-key", "empty-value", "control", "bad-state"])
def test_a_refused_edit_shows_the_form_as_sent_with_the_error_and_writes_nothing(login, incident, changes, message):
    before = (incident.versions.count(), [(f.key, f.value) for f in incident.fact_list()])
    response = login("ops").post(edit_url(incident), rows(incident, **changes))
    html = response.content.decode()
    assert response.status_code == 400
    assert '<details class="facts-editor" open' in html
    assert message in html or message.split("&")[0] in html
    incident = Incident.objects.get(pk=incident.pk)
    assert (incident.versions.count(), [(f.key, f.value) for f in incident.fact_list()]) == before


def test_an_edit_over_a_version_recorded_meanwhile_is_refused(login, users, incident):
    sent = rows(incident, **{"fact-0-value": "60"})
    actions.update_incident(incident, user=users.admin, create=False, upsert_facts=[{"key": "eta_minutes",
                                                                                      "value": "90"}])
    response = login("ops").post(edit_url(incident), sent)
    assert response.status_code == 400
    assert "The incident changed since this page was drawn" in response.content.decode()
    assert Incident.objects.get(pk=incident.pk).fact_list()[0].value == "90"


def test_the_page_edit_calls_the_one_incident_action(login, incident, monkeypatch):
    calls = []
    real = actions.update_incident
    monkeypatch.setattr(actions, "update_incident", lambda *a, **k: calls.append(k) or real(*a, **k))
    login("ops").post(edit_url(incident), rows(incident, state="monitoring"))
    assert len(calls) == 1 and calls[0]["state"] == "monitoring" and calls[0]["create"] is False


@pytest.mark.parametrize("name", ["lead", "outsider"])
def test_only_who_may_patch_an_incident_edits_it(login, incident, name):
    client = login(name)
    assert client.post(edit_url(incident), rows(incident, state="resolved")).status_code == 403
    assert Incident.objects.get(pk=incident.pk).state == "investigating"
    if name == "lead":
        assert edit_url(incident) not in client.get(reverse("incident", args=[incident.incident_id])).content.decode()

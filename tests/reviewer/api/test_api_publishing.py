"""Publishing through the JSON API: the same rules as the Publish button, and the list of an
incident's published updates with their deliveries."""

from __future__ import annotations

import pytest

from agents.models import Run
from reviewer.desk.decisions import decide
from reviewer.models import Decision, PublishedUpdate, StatusComponent
from reviewer.outbox import tasks
from tests.factories import make_escalation, make_incident, make_run

TEXT = "We are investigating a problem in the EU. Current status: degraded."


@pytest.fixture(autouse=True)
def no_broker(monkeypatch):
    monkeypatch.setattr(tasks.deliver, "delay", lambda pk: None)


def test_ops_publishes_a_gate_passed_run_once_and_lists_the_updates(api):
    incident = make_incident()
    run = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=TEXT)
    ops = api("ops")
    response = ops.post(f"/runs/{run.pk}/publish")
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["version"], body["text"], body["published_by"], body["run_id"]) == (1, TEXT, "ops", run.pk)
    assert body["deliveries"] == [{"channel": "Public status page", "kind": "status", "status": "pending",
                                   "attempts": 0, "last_error": "", "delivered_at": None}]
    again = ops.post(f"/runs/{run.pk}/publish")
    assert again.status_code == 409 and again.json()["version"] == 1

    tasks.attempt(PublishedUpdate.objects.get().deliveries.get().pk)
    listed = api("lead").get(f"/incidents/{incident.incident_id}/updates")
    assert listed.status_code == 200
    assert [(u["version"], u["deliveries"][0]["status"]) for u in listed.json()] == [(1, "delivered")]


def test_a_pending_escalations_text_is_refused_and_roles_without_the_permission_are_forbidden(api, users):
    escalation = make_escalation(incident=make_incident())
    response = api("lead").post(f"/runs/{escalation.run_id}/publish")
    assert response.status_code == 409 and "waits for a support lead" in response.json()["message"]
    passed = make_run(incident=escalation.run.incident, snapshot=True, status=Run.Status.OK, answer=TEXT)
    assert api("outsider").post(f"/runs/{passed.pk}/publish").status_code == 403
    assert api("ops").post("/runs/999999/publish").status_code == 404
    assert api("ops").get("/incidents/inc_nope/updates").status_code == 404
    assert not PublishedUpdate.objects.exists()


def test_the_public_fields_are_published_with_the_text_and_the_guard_checks_them(api):
    incident = make_incident()
    checkout = StatusComponent.objects.create(name="Checkout")
    run = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=TEXT)
    ops = api("ops")
    risky = ops.post(f"/runs/{run.pk}/publish", {"public_title": "Everyone will be refunded in full"})
    assert risky.status_code == 409 and risky.json()["message"].startswith("The title: ")
    wrong = ops.post(f"/runs/{run.pk}/publish", {"components": [{"component_id": checkout.pk, "status": "fine"}]})
    assert wrong.status_code == 422
    response = ops.post(f"/runs/{run.pk}/publish", {
        "public_title": "Card payments failing", "state": "identified",
        "components": [{"component_id": checkout.pk, "status": "partial_outage"}]})
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["public_title"], body["state"], body["impact"]) == ("Card payments failing", "identified", "major")
    assert body["components"] == [{"component_id": checkout.pk, "name": "Checkout", "status": "partial_outage"}]
    assert (body["overridden"], body["acknowledged_by"]) == ([], None)


@pytest.mark.parametrize(("title", "what"), [("Payments\r\nBcc: everyone@example.com", "a line break (U+000D)"),
                                             ("Payments\u0085slow", "a line break (U+0085)"),
                                             ("Payments\u0007slow", "a control character (U+0007)")])
def test_a_public_title_of_more_than_one_line_is_refused_saying_why(api, title, what):
    run = make_run(incident=make_incident(), snapshot=True, status=Run.Status.OK, answer=TEXT)
    response = api("ops").post(f"/runs/{run.pk}/publish", {"public_title": title})
    assert response.status_code in (409, 422)
    assert response.json()["message"] == f"The public title must be one line: it contains {what}; remove it."
    assert not PublishedUpdate.objects.exists()


def test_a_text_whose_lead_overrode_findings_needs_acknowledge_overrides(api, users):
    escalation = make_escalation(incident=make_incident(), stop_reason="invalid_answer:scope_claim", guard={
        "violations": [{"check": "invalid_answer:scope_claim", "message": "Not supported.", "found": "all"}]})
    decide(escalation.pk, users.lead, Decision.Action.APPROVE, note="Checked with the payments team.")
    refused = api("ops").post(f"/runs/{escalation.run_id}/publish")
    assert refused.status_code == 409 and "acknowledge" in refused.json()["message"]
    response = api("ops").post(f"/runs/{escalation.run_id}/publish", {"acknowledge_overrides": True})
    assert response.status_code == 201, response.content
    assert response.json()["acknowledged_by"] == "ops"
    assert [f["found"] for f in response.json()["overridden"]] == ["all"]


def test_the_queue_of_texts_ready_to_publish_is_listed_for_people_who_may_publish(api, users):
    incident = make_incident()
    escalation = make_escalation(incident=incident)
    decide(escalation.pk, users.lead, Decision.Action.APPROVE)
    gate = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=TEXT + " Still slow.")
    make_escalation(incident=incident)  # pending: not ready
    other = make_incident("inc_other")

    response = api("ops").get("/ready")
    assert response.status_code == 200, response.content
    rows = response.json()
    assert {row["run_id"] for row in rows} == {escalation.run_id, gate.pk}
    by_run = {row["run_id"]: row for row in rows}
    assert by_run[escalation.run_id] | {"ready_since": None} == {
        "run_id": escalation.run_id, "incident_id": incident.incident_id, "pipeline": "reflection", "text": TEXT,
        "ready_since": None, "approved_by": "lead", "escalation_id": escalation.pk, "edited": False,
        "overridden": [], "newer_version": None}
    assert (by_run[gate.pk]["approved_by"], by_run[gate.pk]["escalation_id"]) == (None, None)
    assert api("lead").get(f"/ready?incident_id={other.incident_id}").json() == []

    assert api("ops").post(f"/runs/{gate.pk}/publish").status_code == 201
    assert [row["run_id"] for row in api("ops").get("/ready").json()] == [escalation.run_id]
    assert api("admin").get("/ready").status_code == 200  # a superuser may do everything
    assert api("outsider").get("/ready").status_code == 403
    assert api("ops").get("/ready?limit=0").status_code == 422

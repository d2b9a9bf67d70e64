"""Publishing through the JSON API: the same rules as the Publish button, and the list of an
incident's published updates with their deliveries."""

from __future__ import annotations

import pytest

from agents.models import Run
from reviewer.models import PublishedUpdate
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

"""The API end to end over HTTP, with a real Celery worker and the openai SDK against the scripted
model: create an incident → start a run → poll it → its escalation → decide → read the run with its
decision."""

import pytest
import requests

from agents.core.text import text_hash
from agents.testing.scripted_demo import DRAFT, ESCALATE
from agents.testing.scripted_server import tool_call
from reviewer.models import ApiToken
from tests.factories import wait_for

pytestmark = pytest.mark.worker


def test_an_incident_goes_from_creation_to_a_decided_run_over_the_api(live_server, start_worker, fake_openai,
                                                                      users):
    fake_openai.script(tool_call("submit_draft", {"draft": DRAFT}), tool_call("reflect", ESCALATE))
    start_worker(OPENAI_API_KEY="sk-e2e", OPENAI_BASE_URL=fake_openai.base_url, OPENAI_MAX_RETRIES="0",
                 OPENAI_MODEL="test-model")
    tokens = {name: ApiToken.issue(getattr(users, name), "e2e")[1] for name in ("admin", "ops", "lead")}

    def call(method, path, who, body=None, **headers):
        return requests.request(method, f"{live_server.url}/api{path}", json=body, timeout=10,
                                headers={"Authorization": f"Bearer {tokens[who]}", **headers})

    created = call("POST", "/incidents", "admin", {
        "incident_id": "inc_e2e_1", "title": "Payments degraded", "severity": "P1", "status": "degraded",
        "regions": ["US"], "approved_actions": ["monitor payment failures every 15 minutes"],
        "facts": [{"key": "affected_checkout_pct", "label": "Checkouts affected", "value": 27, "unit": "%"},
                  {"key": "eta_minutes", "label": "ETA", "value": 45, "unit": "minutes"}]})
    assert created.status_code == 201, created.text

    started = call("POST", "/runs", "ops", {"pipeline": "reflection", "goal": "Write the customer update.",
                                            "incident_id": "inc_e2e_1"}, **{"Idempotency-Key": "e2e-1"})
    assert started.status_code == 202, started.text
    run_id = started.json()["run_id"]

    run = wait_for(lambda: (r := call("GET", f"/runs/{run_id}", "ops").json())["status"] in ("ok", "stopped") and r,
                   message="the run to finish")
    assert (run["status"], run["stop_reason"]) == ("stopped", "policy_escalation")
    assert [c["stage"] for c in run["model_calls"]] == ["draft", "review"] and run["incident_version"] == 1

    pending = call("GET", "/escalations?incident_id=inc_e2e_1", "lead").json()
    assert [e["run_id"] for e in pending] == [int(run_id)]
    decided = call("POST", f"/escalations/{pending[0]['id']}/decision", "lead", {"action": "approve"})
    assert decided.status_code == 201, decided.text

    final = call("GET", f"/runs/{run_id}", "ops").json()
    decision = final["escalation"]["decisions"][0]
    assert final["escalation"]["status"] == "approved" and final["escalation"]["decided_by"] == "lead"
    assert decision["action"] == "approve" and decision["text_hash"] == text_hash(DRAFT)
    assert decision["incident_version"] == 1

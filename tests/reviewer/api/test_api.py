"""The JSON API (reviewer/api/) through the Django test client: tokens and roles, incidents and
their versions, runs with an Idempotency-Key, escalations decided once."""

import re

import pytest
from django.urls import reverse

from agents.models import Incident, Run
from agents.tasks import run_now
from reviewer.models import ApiIdempotencyKey, ApiToken, Decision, Escalation
from reviewer.roles import OPS, POLICY_ADMIN
from tests.factories import make_user

PAY = "inc_pay_2041"
GOAL = "Write the customer update for the P1 payment degradation."


def test_the_openapi_document_and_the_docs_are_served(client):
    doc = client.get("/api/openapi.json").json()
    assert {"/api/incidents", "/api/runs", "/api/escalations/{escalation_id}/decision"} <= set(doc["paths"])
    assert client.get("/api/docs").status_code == 200


# ---------------------------------------------------------------- tokens and roles


def test_without_a_token_the_api_answers_401_in_json(client, db):
    response = client.get("/api/runs")
    assert response.status_code == 401 and "token" in response.json()["message"]


def test_a_token_is_stored_hashed_and_a_revoked_one_stops_working(api, users):
    me = api("ops")
    row = ApiToken.objects.get(user=users.ops)
    assert row.key_hash != me.token and me.token not in str(ApiToken.objects.values().get())
    assert me.get("/runs").status_code == 200

    ApiToken.objects.filter(pk=row.pk).update(revoked_at="2026-01-01T00:00:00Z")

    assert me.get("/runs").status_code == 401


def test_admin_creates_a_token_shown_once_on_the_answer_to_the_save_and_revokes_it(client, users):
    client.force_login(users.admin)  # a superuser: tokens for anyone
    response = client.post(reverse("admin:reviewer_apitoken_add"), {"user": users.ops.pk, "name": "webhook"})

    assert response.status_code == 200 and "no-store" in response["Cache-Control"]
    token = re.search(r'value="(gr_[^"]+)"', response.content.decode()).group(1)
    row = ApiToken.objects.get(name="webhook")
    assert row.key_hash == ApiToken.digest(token) and row.user == users.ops
    # Never in a message (the messages cookie) nor on any later page.
    assert not list(response.wsgi_request._messages) and token not in str(response.cookies)
    assert token not in client.get(reverse("admin:reviewer_apitoken_changelist")).content.decode()
    assert token not in client.get(reverse("admin:reviewer_apitoken_change", args=[row.pk])).content.decode()

    client.post(reverse("admin:reviewer_apitoken_changelist"),
                {"action": "revoke", "_selected_action": [row.pk]})
    assert ApiToken.objects.get(pk=row.pk).revoked_at is not None
    assert ApiToken.user_for(token) is None


def test_a_policy_admin_creates_tokens_for_themselves_only(client, db):
    policy_admin = make_user("padmin", group=POLICY_ADMIN)
    policy_admin.is_staff = True
    policy_admin.save()
    other = make_user("someone", group=OPS)
    ApiToken.issue(other, "theirs")
    client.force_login(policy_admin)

    refused = client.post(reverse("admin:reviewer_apitoken_add"), {"user": other.pk, "name": "as ops"})
    made = client.post(reverse("admin:reviewer_apitoken_add"), {"user": policy_admin.pk, "name": "mine"})

    assert refused.status_code == 200 and not ApiToken.objects.filter(name="as ops").exists()
    token = re.search(r'value="(gr_[^"]+)"', made.content.decode()).group(1)
    assert ApiToken.user_for(token) == policy_admin
    listed = client.get(reverse("admin:reviewer_apitoken_changelist")).content.decode()
    assert "mine" in listed and "theirs" not in listed


def test_a_token_carries_its_users_role(api, demo_runs):
    escalation = Escalation.objects.pending().first()
    ops, lead = api("ops"), api("lead")

    refused = ops.post(f"/escalations/{escalation.pk}/decision", {"action": "approve"})
    assert refused.status_code == 403 and refused.json()["message"] == "Only support leads can decide escalations."
    started = lead.post("/runs", {"pipeline": "reflection", "goal": GOAL, "incident_id": PAY})
    assert started.status_code == 403 and started.json()["message"] == "Only ops staff can start runs."


# ---------------------------------------------------------------- incidents


def test_an_incident_is_created_read_listed_and_updated_as_a_new_version(api, db, users):
    admin = api("admin")
    created = admin.post("/incidents", {
        "incident_id": "inc_api_9", "title": "Search latency", "severity": "P2", "status": "degraded",
        "regions": ["EU", "UK"], "facts": [{"key": "eta_minutes", "label": "ETA", "value": 45, "unit": "minutes"},
                                            {"key": "p95_ms", "label": "p95 latency", "value": "900", "unit": "ms"}]})
    assert created.status_code == 201, created.json()
    assert created.json()["version"] == 1 and created.json()["regions"] == ["EU", "UK"]

    updated = admin.patch("/incidents/inc_api_9", {"facts": [{"key": "eta_minutes", "value": 30}]})

    body = updated.json()
    assert updated.status_code == 200 and body["version"] == 2
    assert body["versions"][0]["changes"] == [{"what": "ETA", "before": "45 minutes", "after": "30 minutes"}]
    assert body["versions"][0]["created_by"] == "admin"
    assert [f["value"] for f in body["facts"]] == [30, 900]
    assert admin.get("/incidents/inc_api_9").json() == body
    assert [i["incident_id"] for i in admin.get("/incidents?status=degraded").json()] == ["inc_api_9"]
    assert admin.patch("/incidents/inc_api_9", {"facts": [{"key": "eta_minutes", "value": 30}]}).json()["version"] == 2


def test_a_webhook_upserts_an_incident_by_its_id(api, db):
    admin = api("admin")
    first = admin.put("/incidents/inc_hook_1", {"title": "Checkout errors", "status": "investigating"})
    again = admin.put("/incidents/inc_hook_1", {"status": "mitigated"})

    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["status"] == "mitigated" and again.json()["version"] == 2
    assert Incident.objects.filter(incident_id="inc_hook_1").count() == 1


@pytest.mark.parametrize("body, field", [
    ({"facts": [{"key": "eta_minutes", "value": "soon", "unit": "minutes"}]}, "value"),
    ({"facts": [{"key": "rate", "value": 3.4, "unit": "ratio"}]}, "value"),
    ({"title": "bad \u0000 title"}, None),
    ({"regions": [""]}, None),
    ({"title": None}, None),
    ({"policy_hints": {"a": float("nan")}}, None),  # Python's JSON reads NaN; no database stores it
    ({"facts": [{"key": "n", "value": float("inf"), "unit": "count"}]}, None),
    ({"policy_hints": {"a": {"b": {"c": {"d": {"e": 1}}}}}}, None),
])
def test_bad_incident_input_is_a_422_with_detail_and_changes_nothing(api, demo_data, body, field):
    admin = api("admin")
    before = admin.get(f"/incidents/{PAY}").json()

    response = admin.patch(f"/incidents/{PAY}", body)

    assert response.status_code == 422 and response.json()["message"]
    if field:
        assert field in response.json()["detail"]
    assert admin.get(f"/incidents/{PAY}").json() == before


@pytest.mark.parametrize("method", ["post", "patch", "put"])
def test_an_incident_title_with_a_line_break_is_a_422_saying_so(api, demo_data, method):
    admin = api("admin")
    path = "/incidents" if method == "post" else f"/incidents/{PAY}"
    body = {"title": "Payments\r\nBcc: everyone@example.com"} | (
        {"incident_id": "inc_new_1"} if method == "post" else {})
    before = admin.get(f"/incidents/{PAY}").json()

    response = getattr(admin, method)(path, body)

    assert response.status_code == 422
    assert response.json()["message"] == "The title must be one line: it contains a line break (U+000D); remove it."
    assert admin.get(f"/incidents/{PAY}").json() == before
    assert admin.get("/incidents/inc_new_1").status_code == 404


# ---------------------------------------------------------------- runs


def test_a_run_started_with_an_idempotency_key_is_started_once(api, demo_data):
    ops = api("ops")
    body = {"pipeline": "reflection", "goal": GOAL, "incident_id": PAY}

    first = ops.post("/runs", body, **{"Idempotency-Key": "k-1"})
    again = ops.post("/runs", body, **{"Idempotency-Key": "k-1"})
    other = ops.post("/runs", {**body, "goal": "Something else."}, **{"Idempotency-Key": "k-1"})

    assert (first.status_code, again.status_code) == (202, 200)
    assert first.json()["run_id"] == again.json()["run_id"]
    assert other.status_code == 422 and "different request body" in other.json()["message"]
    assert Run.objects.count() == 1


def test_a_key_whose_first_request_is_still_in_progress_is_a_409(api, demo_data, users):
    from reviewer.api.runs import RunStart, fingerprint

    body = {"pipeline": "reflection", "goal": GOAL, "incident_id": PAY}
    ApiIdempotencyKey.objects.create(user=users.ops, key="k-busy", fingerprint=fingerprint(RunStart(**body)))

    response = api("ops").post("/runs", body, **{"Idempotency-Key": "k-busy"})

    assert response.status_code == 409 and "still being processed" in response.json()["message"]


def test_a_run_reads_in_the_result_shape_with_trace_and_model_calls(api, demo_data):
    ops = api("ops")
    run_id = ops.post("/runs", {"pipeline": "reflection", "goal": GOAL, "incident_id": PAY}).json()["run_id"]
    run_now(int(run_id))

    run = ops.get(f"/runs/{run_id}").json()

    assert (run["status"], run["stop_reason"], run["outcome"]) == ("ok", "success", "revised_once")
    assert [s["phase"] for s in run["trace"]][:2] == ["draft", "review"]
    assert [c["stage"] for c in run["model_calls"]][:2] == ["draft", "review"]
    assert run["incident_version"] == 1 and "27%" in run["answer"]
    assert [r["run_id"] for r in ops.get(f"/runs?incident_id={PAY}&status=ok").json()] == [run_id]
    assert ops.get("/runs?status=stopped").json() == []


@pytest.mark.parametrize("body", [
    {"pipeline": "reflection", "goal": "", "incident_id": PAY},
    {"pipeline": "reflection", "goal": "Write it."},
    {"pipeline": "nope", "goal": "Write it.", "incident_id": PAY},
    {"pipeline": "reflection", "goal": "x\u0000", "incident_id": PAY},
    {"pipeline": "reflection", "goal": "x" * 5000, "incident_id": PAY},
    {"pipeline": "reflection", "goal": "a lone \ud800 surrogate", "incident_id": PAY},
])
def test_a_run_that_cannot_start_is_a_422_with_detail(api, demo_data, body):
    response = api("ops").post("/runs", body)
    assert response.status_code == 422 and response.json()["message"] and response.json()["detail"]
    assert Run.objects.count() == 0


def test_an_unknown_incident_is_a_404_in_json(api, demo_data):
    response = api("ops").post("/runs", {"pipeline": "reflection", "goal": GOAL, "incident_id": "inc_nope"})
    assert response.status_code == 404 and "inc_nope" in response.json()["message"]


# ---------------------------------------------------------------- escalations


def test_pending_escalations_are_listed_with_filters_and_read(api, demo_runs):
    lead = api("lead")
    listed = lead.get("/escalations").json()
    assert {e["stop_reason"] for e in listed} == {"policy_escalation", "patch_violation:length_increase_limit"}
    only = lead.get("/escalations?stop_reason=policy_escalation").json()
    assert [e["stop_reason"] for e in only] == ["policy_escalation"]
    assert lead.get(f"/escalations/{only[0]['id']}").json()["candidate"] == only[0]["candidate"]


def test_an_escalation_is_decided_once_and_the_loser_hears_who_decided(api, demo_runs):
    escalation = Escalation.objects.get(stop_reason="policy_escalation")

    won = api("lead").post(f"/escalations/{escalation.pk}/decision", {"action": "approve"})
    lost = api("lead2").post(f"/escalations/{escalation.pk}/decision", {"action": "reject", "note": "No."})

    assert won.status_code == 201 and won.json()["status"] == "approved"
    assert won.json()["decisions"][0]["text_hash"]
    assert lost.status_code == 409 and lost.json()["decided_by"] == "lead" and "lead" in lost.json()["message"]
    assert Decision.objects.count() == 1


def test_an_edit_with_guard_violations_needs_a_justification(api, demo_runs):
    escalation = Escalation.objects.get(stop_reason="policy_escalation")
    lead = api("lead")
    text = escalation.candidate.replace("45 minutes", "99 minutes")

    refused = lead.post(f"/escalations/{escalation.pk}/decision", {"action": "edit_approve", "text": text})
    assert refused.status_code == 422 and refused.json()["stop_reason"] == "policy_escalation"
    assert [v["found"] for v in refused.json()["detail"]["violations"]] == ["99"]

    taken = lead.post(f"/escalations/{escalation.pk}/decision",
                      {"action": "edit_approve", "text": text, "note": "Ops confirmed 99 minutes."})
    assert taken.status_code == 201 and taken.json()["final_text"] == text


def test_a_rejection_needs_a_reason_and_an_unknown_escalation_is_a_404(api, demo_runs):
    escalation = Escalation.objects.get(stop_reason="policy_escalation")
    lead = api("lead")
    assert lead.post(f"/escalations/{escalation.pk}/decision", {"action": "reject"}).status_code == 422
    assert lead.post("/escalations/999999/decision", {"action": "approve"}).status_code == 404
    odd = lead.post(f"/escalations/{escalation.pk}/decision", {"action": "reject", "note": "no \ud800"})
    assert odd.status_code == 422 and odd.json()["detail"]

"""The API's doors hold the same rules as the pages: who took an escalation, admin-set incident
fields, the bounds of an incident context, oversized bodies, and Idempotency-Keys through broker faults."""

from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from agents.models import Incident, Run
from reviewer.models import ApiIdempotencyKey, Decision, Escalation

PAY = "inc_pay_2041"
GOAL = "Write the customer update for the P1 payment degradation."

# ---------------------------------------------------------------- taking


def test_a_lead_cannot_decide_what_another_lead_took_without_decide_anyway(api, demo_runs, users):
    escalation = Escalation.objects.get(stop_reason="policy_escalation")
    Escalation.objects.filter(pk=escalation.pk).update(taken_by=users.lead2, taken_at=timezone.now())
    lead = api("lead")

    refused = lead.post(f"/escalations/{escalation.pk}/decision", {"action": "approve"})

    assert refused.status_code == 409
    assert refused.json()["message"] == ("Lars took this escalation; send “decide_anyway”: true "
                                         "to decide it in their place.")
    assert refused.json()["taken_by"] == "lead2"
    assert not Decision.objects.exists()

    taken = lead.post(f"/escalations/{escalation.pk}/decision", {"action": "approve", "decide_anyway": True})
    assert taken.status_code == 201 and taken.json()["decided_by"] == "lead"


def test_the_lead_who_took_it_decides_without_decide_anyway(api, demo_runs, users):
    escalation = Escalation.objects.get(stop_reason="policy_escalation")
    Escalation.objects.filter(pk=escalation.pk).update(taken_by=users.lead, taken_at=timezone.now())

    taken = api("lead").post(f"/escalations/{escalation.pk}/decision", {"action": "approve"})

    assert taken.status_code == 201


def test_who_took_an_escalation_is_also_served_under_its_former_name(api, demo_runs, users):
    escalation = Escalation.objects.get(stop_reason="policy_escalation")
    Escalation.objects.filter(pk=escalation.pk).update(taken_by=users.lead2, taken_at=timezone.now())
    lead = api("lead")

    shown = lead.get(f"/escalations/{escalation.pk}").json()
    refused = lead.post(f"/escalations/{escalation.pk}/decision", {"action": "approve"}).json()

    former = "claimed" + "_by"  # the former name, kept for clients that read it
    assert (shown["taken_by"], shown[former]) == ("lead2", "lead2")
    assert (refused["taken_by"], refused[former]) == ("lead2", "lead2")


# ---------------------------------------------------------------- Idempotency-Keys through broker faults


@pytest.mark.django_db(transaction=True)  # real commits: the run is enqueued after its commit, as in production
def test_a_retry_with_the_same_key_while_the_broker_is_down_returns_the_run_the_sweep_enqueues(
        api, demo_data, monkeypatch):
    from kombu.exceptions import OperationalError

    from agents import tasks

    sent = []

    def broker_down(*args):
        raise OperationalError("Error 111 connecting to 127.0.0.1:18499. Connection refused.")

    monkeypatch.setattr(tasks.execute_run, "delay", broker_down)
    ops = api("ops")
    body = {"pipeline": "reflection", "goal": GOAL, "incident_id": PAY}

    first = ops.post("/runs", body, **{"Idempotency-Key": "k-down"})
    again = ops.post("/runs", body, **{"Idempotency-Key": "k-down"})

    assert first.status_code == 202 and again.status_code == 200
    assert first.json()["run_id"] == again.json()["run_id"]
    assert Run.objects.count() == 1
    run = Run.objects.get()
    assert run.status == Run.Status.QUEUED
    assert ApiIdempotencyKey.objects.get(key="k-down").run == run

    monkeypatch.setattr(tasks.execute_run, "delay", lambda *args: sent.append(args))
    stale = timedelta(seconds=tasks.run_setting("RUN_QUEUED_STALE_SECONDS", 300) + 1)
    with time_machine.travel(timezone.now() + stale):
        tasks.sweep_lost_runs()
    assert sent == [(run.pk,)]


# ---------------------------------------------------------------- oversized bodies


def test_a_body_over_the_upload_limit_is_a_413_in_json(api, demo_data):
    body = {"title": "x", "key_messages": ["y" * 100_000] * 27}  # 2.7 MB, over Django's 2.5 MB

    response = api("admin").patch(f"/incidents/{PAY}", body)

    assert response.status_code == 413
    assert response.json()["message"] == ("The request body is larger than the 2,621,440 bytes the API reads; "
                                          "send less.")


# ---------------------------------------------------------------- the bounds of an incident context


@pytest.mark.parametrize("body, message", [
    ({"key_messages": ["Payments are slow.", "x" * 501]},
     "“key_messages”: entry 2 has 501 characters; an entry holds at most 500."),
    ({"approved_actions": ["monitor"] * 31},
     "“approved_actions”: 31 entries; an incident holds at most 30."),
])
def test_a_list_entry_or_a_list_over_its_bound_is_a_422_naming_the_field(api, demo_data, body, message):
    admin = api("admin")
    before = admin.get(f"/incidents/{PAY}").json()

    response = admin.patch(f"/incidents/{PAY}", body)

    assert response.status_code == 422
    assert response.json()["message"] == message
    assert admin.get(f"/incidents/{PAY}").json() == before


def test_a_context_over_64_kb_in_entries_within_their_bounds_is_a_422(api, demo_data):
    wide = "é" * 500  # two bytes each in UTF-8: 30 entries take 30 KB
    body = {"approved_actions": [wide] * 30, "key_messages": [wide] * 30,
            "policy_hints": {"note": "h" * 8_000}}

    response = api("admin").patch(f"/incidents/{PAY}", body)

    assert response.status_code == 422
    assert response.json()["message"].startswith("The incident context would take 68,")
    assert response.json()["message"].endswith("bytes as JSON; an incident context holds at most 65,536 bytes "
                                               "(64 KB).")
    assert not Incident.objects.get(incident_id=PAY).approved_actions == [wide] * 30


def test_a_run_on_an_incident_whose_stored_context_is_over_the_bound_is_a_422(api, demo_data):
    # A row written before the bounds held (or straight into the database).
    Incident.objects.filter(incident_id=PAY).update(key_messages=["x" * 60_000, "y" * 10_000])

    response = api("ops").post("/runs", {"pipeline": "reflection", "goal": GOAL, "incident_id": PAY})

    assert response.status_code == 422
    assert "“key_messages”: entry 1 has 60,000 characters" in str(response.json()["detail"])
    assert not Run.objects.exists()


# ---------------------------------------------------------------- admin-set fields


@pytest.mark.parametrize("hints", [{}, None, {"avoid_absolute_guarantees": False}])
def test_ops_cannot_change_the_policy_hints_an_admin_set(api, demo_data, hints):
    ops = api("ops")
    before = Incident.objects.get(incident_id=PAY).policy_hints
    assert before.get("avoid_absolute_guarantees") is True

    for write in (ops.patch, ops.put):
        response = write(f"/incidents/{PAY}", {"status": "mitigated", "policy_hints": hints})
        assert response.status_code == 403
        assert response.json()["message"] == ("Only policy admins can change an incident's policy hints "
                                              "(policy_hints); leave the field out.")
    incident = Incident.objects.get(incident_id=PAY)
    assert incident.policy_hints == before and incident.status != "mitigated"


def test_ops_may_send_the_policy_hints_unchanged_and_an_admin_may_change_them(api, demo_data):
    hints = Incident.objects.get(incident_id=PAY).policy_hints

    same = api("ops").patch(f"/incidents/{PAY}", {"status": "mitigated", "policy_hints": hints})
    changed = api("admin").patch(f"/incidents/{PAY}", {"policy_hints": {"avoid_absolute_guarantees": False}})

    assert same.status_code == 200 and same.json()["status"] == "mitigated"
    assert changed.status_code == 200 and changed.json()["policy_hints"] == {"avoid_absolute_guarantees": False}

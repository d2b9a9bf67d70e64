"""/metrics: each series family read back from real recorded rows, who may read it, and what a scrape costs."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from agents.models import ModelCall, Run
from reviewer.models import (
    Approval,
    DeadlineBreach,
    Decision,
    Delivery,
    DeliveryChannel,
    Escalation,
    NotificationChannel,
    PublishedUpdate,
)
from reviewer.models import Notification as NotificationRow
from tests.factories import make_escalation, make_incident, make_run

TOKEN = "metrics-token-never-logged"
NOW = datetime(2026, 5, 4, 12, 0, tzinfo=UTC)


def samples(client, **headers) -> dict:
    """{(sample name, ((label, value), ...)): value} of one scrape."""
    response = client.get("/metrics", **headers)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(response.content.decode()) for s in family.samples}


def value(found: dict, name: str, **labels) -> float:
    return found[(name, tuple(sorted(labels.items())))]


@pytest.fixture
def frozen():
    with time_machine.travel(NOW, tick=False):
        yield NOW


def test_finished_runs_are_counted_by_pipeline_status_and_stop_reason(client, db):
    for _ in range(2):
        make_run("reflection", status="ok", stop_reason="success")
    make_run("routing", status="stopped", stop_reason="llm_timeout")
    make_run("reflection", status="interrupted", stop_reason="worker_lost")
    make_run("reflection")  # queued: not finished, not counted here
    found = samples(client)
    assert value(found, "gated_review_runs_total", pipeline="reflection", status="ok", stop_reason="success") == 2
    assert value(found, "gated_review_runs_total", pipeline="routing", status="stopped", stop_reason="llm_timeout") == 1
    assert value(found, "gated_review_runs_total", pipeline="reflection", status="interrupted",
                 stop_reason="worker_lost") == 1
    assert sum(v for (name, _), v in found.items() if name == "gated_review_runs_total") == 4


def test_guard_violations_are_the_runs_a_guard_check_stopped_by_check(client, db):
    for reason in ("patch_violation:liability", "patch_violation:liability", "invalid_answer:markup", "llm_timeout"):
        make_run("self_critique", status="stopped", stop_reason=reason)
    found = samples(client)
    assert {labels: v for (name, labels), v in found.items() if name == "gated_review_guard_violations_total"} == {
        (("check", "invalid_answer:markup"),): 1, (("check", "patch_violation:liability"),): 2}


def test_run_durations_are_a_histogram_per_pipeline_and_tokens_a_counter_per_direction(client, db):
    for ms in (200, 800, 4000):
        make_run("reflection", status="ok", stop_reason="success", duration_ms=ms, prompt_tokens=100,
                 completion_tokens=10)
    make_run("reflection")  # queued: no duration yet, no tokens
    found = samples(client)
    assert value(found, "gated_review_run_duration_seconds_bucket", pipeline="reflection", le="0.25") == 1
    assert value(found, "gated_review_run_duration_seconds_bucket", pipeline="reflection", le="1.0") == 2
    assert value(found, "gated_review_run_duration_seconds_bucket", pipeline="reflection", le="5.0") == 3
    assert value(found, "gated_review_run_duration_seconds_bucket", pipeline="reflection", le="+Inf") == 3
    assert value(found, "gated_review_run_duration_seconds_count", pipeline="reflection") == 3
    assert value(found, "gated_review_run_duration_seconds_sum", pipeline="reflection") == pytest.approx(5.0)
    assert value(found, "gated_review_model_tokens_total", pipeline="reflection", direction="input") == 300
    assert value(found, "gated_review_model_tokens_total", pipeline="reflection", direction="output") == 30


def test_the_queue_says_how_many_runs_wait_and_how_long_the_oldest_has(client, db, frozen):
    make_run("reflection", created_at=frozen - timedelta(seconds=90))
    make_run("routing", created_at=frozen - timedelta(seconds=5))
    make_run("routing", status="running", created_at=frozen - timedelta(hours=1))
    found = samples(client)
    assert value(found, "gated_review_runs_queued") == 2
    assert value(found, "gated_review_runs_running") == 1
    assert value(found, "gated_review_oldest_queued_run_age_seconds") == 90


def test_an_empty_queue_has_no_age(client, db):
    found = samples(client)
    assert value(found, "gated_review_runs_queued") == 0
    assert value(found, "gated_review_oldest_queued_run_age_seconds") == 0


def test_model_call_latency_is_a_histogram_per_outcome(client, db):
    run = make_run("reflection", status="ok", stop_reason="success")
    for ms, outcome in ((40, "ok"), (300, "ok"), (2000, "ok"), (30000, "llm_timeout")):
        ModelCall.objects.create(run=run, stage="draft", model="m", latency_ms=ms, outcome=outcome)
    found = samples(client)
    assert value(found, "gated_review_model_call_duration_seconds_bucket", outcome="ok", le="0.05") == 1
    assert value(found, "gated_review_model_call_duration_seconds_bucket", outcome="ok", le="0.5") == 2
    assert value(found, "gated_review_model_call_duration_seconds_count", outcome="ok") == 3
    assert value(found, "gated_review_model_call_duration_seconds_bucket", outcome="llm_timeout", le="10.0") == 0
    assert value(found, "gated_review_model_call_duration_seconds_bucket", outcome="llm_timeout", le="30.0") == 1


def test_a_breaker_is_open_while_a_worker_refused_a_call_within_the_cool_down_and_none_succeeded_since(
        client, db, frozen, monkeypatch):
    monkeypatch.setenv("LLM_BREAKER_COOLDOWN_SECONDS", "30")
    down = make_run("reflection", status="stopped", stop_reason="llm_circuit_open", endpoint="http://down/v1#m")
    back = make_run("reflection", status="ok", stop_reason="success", endpoint="http://back/v1#m")
    old = make_run("reflection", status="stopped", stop_reason="llm_circuit_open", endpoint="http://old/v1#m")

    def call(run, outcome, seconds_ago):
        ModelCall.objects.create(run=run, stage="draft", model="m", outcome=outcome,
                                 created_at=frozen - timedelta(seconds=seconds_ago))

    call(down, "llm_unavailable", 20)
    call(down, "llm_circuit_open", 10)
    call(back, "llm_circuit_open", 20)
    call(back, "ok", 5)  # the half-open trial succeeded: closed again
    call(old, "llm_circuit_open", 120)  # long past the cool-down
    found = samples(client)
    assert value(found, "gated_review_circuit_breaker_open", endpoint="http://down/v1#m") == 1
    assert value(found, "gated_review_circuit_breaker_open", endpoint="http://back/v1#m") == 0
    assert ("gated_review_circuit_breaker_open", (("endpoint", "http://old/v1#m"),)) not in found


def test_escalations_by_status_the_oldest_pending_and_the_overdue_and_breaches(client, db, users, frozen):
    oldest = make_escalation(age_minutes=30, deadline_at=frozen - timedelta(minutes=5))
    make_escalation(age_minutes=3, deadline_at=frozen + timedelta(minutes=5))
    make_escalation(status="approved", age_minutes=300, decided_by=users.lead, decided_at=frozen)
    DeadlineBreach.objects.create(escalation=oldest, deadline_at=oldest.deadline_at)
    found = samples(client)
    assert value(found, "gated_review_escalations", status="pending") == 2
    assert value(found, "gated_review_escalations", status="approved") == 1
    assert value(found, "gated_review_escalations", status="rejected") == 0
    assert value(found, "gated_review_oldest_pending_escalation_age_seconds") == 30 * 60
    assert value(found, "gated_review_escalations_overdue") == 1
    assert value(found, "gated_review_deadline_breaches_total") == 1


def test_decisions_are_counted_by_action(client, db, users):
    escalation = make_escalation()
    for action in ("request_changes", "approve"):
        Decision.objects.create(escalation=escalation, actor=users.lead, action=action)
    found = samples(client)
    assert value(found, "gated_review_decisions_total", action="approve") == 1
    assert value(found, "gated_review_decisions_total", action="request_changes") == 1
    assert value(found, "gated_review_decisions_total", action="reject") == 0


def test_deliveries_are_counted_by_channel_and_state_dead_letters_and_held_included(client, db, users):
    incident = make_incident()
    hook = DeliveryChannel.objects.create(name="Signed hook", kind="webhook", destination="hook")
    mail = DeliveryChannel.objects.create(name="Customer mail", kind="email", recipients="c@example.com")
    for number, (channel, status) in enumerate(
            [(hook, "delivered"), (hook, "failed"), (hook, "failed"), (mail, "held"), (mail, "pending")], 1):
        update = PublishedUpdate.objects.create(incident=incident, version=number, text="An update.",
                                                text_hash="0" * 12, published_by=users.ops)
        Delivery.objects.create(update=update, channel=channel, status=status)
    found = samples(client)
    assert value(found, "gated_review_deliveries", channel="Signed hook", kind="webhook", status="failed") == 2
    assert value(found, "gated_review_deliveries", channel="Signed hook", kind="webhook", status="delivered") == 1
    assert value(found, "gated_review_deliveries", channel="Customer mail", kind="email", status="held") == 1
    assert value(found, "gated_review_deliveries", channel="Customer mail", kind="email", status="pending") == 1


def test_notifications_are_counted_by_event_and_state_failures_included(client, db):
    channel = NotificationChannel.objects.create(name="Leads", destination="hook", events=["opened", "breach"])
    for status, event in (("failed", "opened"), ("sent", "opened"), ("failed", "breach")):
        NotificationRow.objects.create(escalation=make_escalation(), channel=channel, event=event, status=status)
    found = samples(client)
    assert value(found, "gated_review_notifications", event="opened", status="failed") == 1
    assert value(found, "gated_review_notifications", event="opened", status="sent") == 1
    assert value(found, "gated_review_notifications", event="breach", status="failed") == 1


# -- the review analytics (docs/analytics.md) ------------------------------------------------------------


def decided(escalation, actor, *actions, status="approved", waited_minutes=10):
    """The escalation decided ``waited_minutes`` after it opened, by ``actions`` in order."""
    for action in actions:
        Decision.objects.create(escalation=escalation, actor=actor, action=action)
    Escalation.objects.filter(pk=escalation.pk).update(
        status=status, decided_by=actor, decided_at=escalation.opened_at + timedelta(minutes=waited_minutes))


def test_decided_escalations_are_counted_by_pipeline_and_how_they_ended(client, db, users):
    decided(make_escalation(), users.lead, "approve")
    decided(make_escalation(), users.lead, "edit_approve")
    decided(make_escalation(), users.lead, "request_changes", "approve")
    decided(make_escalation(pipeline="self_critique"), users.lead, "reject", status="rejected")
    make_escalation()  # pending: not counted
    found = {labels: v for (name, labels), v in samples(client).items()
             if name == "gated_review_escalation_outcomes_total"}
    assert found == {(("outcome", "as_is"), ("pipeline", "reflection")): 1,
                     (("outcome", "edited"), ("pipeline", "reflection")): 1,
                     (("outcome", "changes_requested"), ("pipeline", "reflection")): 1,
                     (("outcome", "rejected"), ("pipeline", "self_critique")): 1}


def test_time_to_decision_is_a_histogram_by_pipeline_and_severity(client, db, users):
    p1 = make_incident(severity="P1")
    for minutes in (3, 20, 90):
        decided(make_escalation(incident=p1), users.lead, "approve", waited_minutes=minutes)
    decided(make_escalation(), users.lead2, "approve", waited_minutes=2 * 24 * 60)
    found = samples(client)
    name = "gated_review_time_to_decision_seconds"
    assert value(found, name + "_bucket", pipeline="reflection", severity="P1", le="300.0") == 1
    assert value(found, name + "_bucket", pipeline="reflection", severity="P1", le="1800.0") == 2
    assert value(found, name + "_bucket", pipeline="reflection", severity="P1", le="14400.0") == 3
    assert value(found, name + "_count", pipeline="reflection", severity="P1") == 3
    assert value(found, name + "_sum", pipeline="reflection", severity="P1") == pytest.approx(113 * 60)
    assert value(found, name + "_bucket", pipeline="reflection", severity="none", le="86400.0") == 0
    assert value(found, name + "_bucket", pipeline="reflection", severity="none", le="259200.0") == 1


def test_quorum_escalations_are_counted_by_whether_the_approvers_agreed(client, db, users):
    agreed, edited = make_escalation(required_approvals=2), make_escalation(required_approvals=2)
    for escalation in (agreed, edited):
        Approval.objects.create(escalation=escalation, user=users.lead, text_version=1, text_hash="h",
                                superseded_at=timezone.now() if escalation is edited else None)
        decided(escalation, users.lead2, "approve")
    decided(make_escalation(), users.lead, "approve")  # one approval asked: no quorum
    found = samples(client)
    assert value(found, "gated_review_quorum_escalations_total", approvers="agreed") == 1
    assert value(found, "gated_review_quorum_escalations_total", approvers="disagreed") == 1


def test_no_series_names_a_person(client, db, users):
    decided(make_escalation(), users.lead, "approve")
    labels = {value for (_, pairs), _ in samples(client).items() for _, value in pairs}
    assert not labels & {"lead", "lead2", "Lena", "Lars"}


def grow(n: int, users):
    """n runs of each kind with their calls, escalations, decisions and deliveries."""
    incident = make_incident(f"inc_m_{Run.objects.count()}")
    channel, _ = DeliveryChannel.objects.get_or_create(kind="status", defaults={"name": "Status page"})
    start = PublishedUpdate.objects.count()
    for i in range(n):
        run = make_run("reflection", status="ok", stop_reason="success", duration_ms=900, endpoint=f"e{i}")
        ModelCall.objects.create(run=run, stage="draft", model="m", latency_ms=5)
        make_run("routing", status="stopped", stop_reason=f"patch_violation:check_{i}")
        make_run("routing")
        escalation = make_escalation(age_minutes=i, required_approvals=1 + i % 2)
        Decision.objects.create(escalation=escalation, actor=users.lead, action="approve")
        Escalation.objects.filter(pk=escalation.pk).update(status="approved", decided_at=timezone.now())
        update = PublishedUpdate.objects.create(incident=incident, version=start + i + 1, text="An update.",
                                                text_hash="0" * 12, published_by=users.ops)
        Delivery.objects.create(update=update, channel=channel, status="delivered")


def test_a_scrape_takes_the_same_number_of_queries_however_many_rows_there_are(
        client, users, django_assert_num_queries):
    grow(2, users)
    with django_assert_num_queries(15) as few:  # 9, the review analytics: 3, the guard's scorecard: 3
        samples(client)
    grow(20, users)
    with django_assert_num_queries(len(few)):
        samples(client)


# -- who may read them ---------------------------------------------------------------------------


def test_an_address_outside_the_allowed_networks_is_refused_with_a_reason(client, db, settings):
    response = client.get("/metrics", REMOTE_ADDR="192.0.2.7")
    assert response.status_code == 403
    assert b"METRICS_ALLOWED_NETWORKS" in response.content


def test_an_allowed_network_other_than_loopback_may_read(client, db, settings):
    from reviewer.settings import metrics_networks

    settings.METRICS_ALLOWED_NETWORKS = metrics_networks("10.0.0.0/8", "")
    assert client.get("/metrics", REMOTE_ADDR="10.1.2.3").status_code == 200
    assert client.get("/metrics").status_code == 403  # loopback is no longer listed


def test_with_a_token_set_a_request_without_it_or_with_another_is_refused_and_never_echoed(client, db, settings,
                                                                                        caplog):
    settings.METRICS_TOKEN = TOKEN
    for header in ({}, {"HTTP_AUTHORIZATION": "Bearer wrong-token"}, {"HTTP_AUTHORIZATION": f"Basic {TOKEN}"}):
        response = client.get("/metrics", **header)
        assert response.status_code == 401
        assert response["WWW-Authenticate"] == 'Bearer realm="metrics"'
        assert b"Authorization: Bearer" in response.content and b"wrong-token" not in response.content
    assert "gated_review_runs_queued" in client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {TOKEN}").content.decode()
    assert TOKEN not in caplog.text and "wrong-token" not in caplog.text


def test_any_network_is_accepted_only_with_a_token():
    from django.core.exceptions import ImproperlyConfigured

    from reviewer.settings import metrics_networks

    assert metrics_networks("any", TOKEN) is None
    with pytest.raises(ImproperlyConfigured, match="set METRICS_TOKEN too"):
        metrics_networks("any", "")
    with pytest.raises(ImproperlyConfigured, match="'10.0.0.300/8' is not an address or a network"):
        metrics_networks("127.0.0.1, 10.0.0.300/8", "")

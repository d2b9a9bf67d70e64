"""The Django glue around the core: starting runs, executing them in-process, recording results,
and a policy change in admin reaching the next run's snapshot (and only the next)."""

import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from unittest import mock

import pytest
import time_machine
from django.utils import timezone

from agents.models import AuditDiff, ModelCall, PipelinePolicy, Review, Run, TraceStep
from agents.tasks import execute_run, retry_run, run_now, start_run, sweep_lost_runs, take_run
from reviewer.models import Escalation
from tests.agents.conftest import post_change

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).parents[2]


def test_start_run_stores_the_context_and_policy_snapshot_and_queues(demo_data, users):
    incident = demo_data["inc_pay_2041"]
    run, created = start_run(pipeline="reflection", goal="Update", incident=incident, user=users.ops, enqueue=False)
    assert created and run.status == "queued"
    assert run.context == incident.context() and run.context["incident"]["failed_payment_rate"] == 0.034
    assert run.policy["pipeline"] == "reflection" and run.policy["max_seconds"] == 30


def test_the_same_idempotency_key_returns_the_same_run(demo_data, users):
    first, created = start_run(pipeline="routing", goal="refund user_id=42", user=users.ops, idempotency_key="k1",
                               enqueue=False)
    again, created_again = start_run(pipeline="routing", goal="refund user_id=42", user=users.ops,
                                     idempotency_key="k1", enqueue=False)
    assert (created, created_again, again.pk) == (True, False, first.pk)
    assert Run.objects.count() == 1


def test_a_revised_run_is_recorded_with_trace_calls_review_and_audit(demo_data):
    run, _ = start_run(pipeline="self_critique", goal="Update", incident=demo_data["inc_pay_2041"], enqueue=False)
    result = run_now(run.pk)
    run.refresh_from_db()
    assert (run.status, run.stop_reason, run.outcome) == ("ok", "success", result.outcome)
    assert run.answer == result.answer and run.model_label == "offline model"
    assert list(TraceStep.objects.filter(run=run).values_list("phase", flat=True)) == [s["phase"] for s in result.trace]
    assert ModelCall.objects.filter(run=run).count() == run.model_calls == result.usage["model_calls"]
    assert Review.objects.get(run=run).kind == "critique"
    audit = AuditDiff.objects.get(run=run)
    assert audit.changed and audit.after_text == run.answer and "may change" in audit.unified_diff
    assert not Escalation.objects.filter(run=run).exists()


def test_a_policy_escalation_opens_an_escalation_with_the_whole_reason(demo_data):
    run, _ = start_run(pipeline="reflection", goal="Offer every customer a refund for the outage",
                       incident=demo_data["inc_pay_2041"], enqueue=False)
    run_now(run.pk)
    escalation = Escalation.objects.get(run=run)
    assert (escalation.status, escalation.stop_reason) == ("pending", "policy_escalation")
    assert escalation.reason == Run.objects.get(pk=run.pk).escalation_reason
    assert "The goal asks for compensation" in escalation.reason  # "refund" is in the goal, not the text
    assert escalation.candidate == escalation.draft != ""


def test_a_patch_violation_opens_an_escalation_with_the_blocked_candidate(demo_data):
    run, _ = start_run(pipeline="self_critique", goal="Update", incident=demo_data["inc_wallet_77"], enqueue=False)
    run_now(run.pk)
    escalation = Escalation.objects.get(run=run)
    assert escalation.stop_reason == "patch_violation:length_increase_limit"
    assert escalation.candidate != escalation.draft and "may change" in escalation.candidate
    assert escalation.guard["violations"][0]["check"] == "patch_violation:length_increase_limit"


def test_a_failed_run_opens_no_escalation(demo_data):
    run, _ = start_run(pipeline="routing", goal="Hello, I have a question.", enqueue=False)
    run_now(run.pk)
    assert Run.objects.get(pk=run.pk).stop_reason == "max_route_attempts"
    assert not Escalation.objects.exists()


def test_a_run_is_taken_once(demo_data):
    run, _ = start_run(pipeline="routing", goal="refund user_id=42", enqueue=False)
    assert take_run(run.pk) == 1
    assert take_run(run.pk) is None
    assert run_now(run.pk) is None  # a second delivery does nothing


def test_sweep_marks_only_silent_running_runs_worker_lost(demo_data):
    silent, _ = start_run(pipeline="routing", goal="refund user_id=42", enqueue=False)
    take_run(silent.pk)
    busy, _ = start_run(pipeline="routing", goal="refund user_id=42", enqueue=False)
    take_run(busy.pk)
    Run.objects.filter(pk=silent.pk).update(heartbeat_at=silent.created_at.replace(year=2000))
    assert sweep_lost_runs(stale_seconds=60) == 1
    assert Run.objects.get(pk=silent.pk).stop_reason == "worker_lost"
    assert Run.objects.get(pk=busy.pk).status == "running"


def test_bad_model_settings_end_the_run_as_llm_misconfigured(demo_data, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    monkeypatch.setenv("OPENAI_TIMEOUT_SECONDS", "soon")
    run, _ = start_run(pipeline="routing", goal="refund user_id=42", enqueue=False)
    run_now(run.pk)
    run.refresh_from_db()
    assert (run.status, run.stop_reason) == ("stopped", "llm_misconfigured")
    assert "OPENAI_TIMEOUT_SECONDS" in run.details["error"]


def test_an_admin_policy_change_reaches_the_next_run_and_not_the_stored_one(client, demo_data, users):
    before, _ = start_run(pipeline="reflection", goal="Update", incident=demo_data["inc_pay_2041"], enqueue=False)
    client.force_login(users.admin)
    policy = PipelinePolicy.objects.get(pipeline="reflection", active=True)
    response = post_change(client, "pipelinepolicy", policy, auto_revision="")
    assert response.status_code == 302, response.content.decode()[:2000]
    after, _ = start_run(pipeline="reflection", goal="Update", incident=demo_data["inc_pay_2041"], enqueue=False)
    assert Run.objects.get(pk=before.pk).policy["auto_revision"] is True
    assert after.policy["auto_revision"] is False
    run_now(before.pk)
    run_now(after.pk)
    assert Run.objects.get(pk=before.pk).stop_reason == "success"  # ran under its own snapshot
    assert Run.objects.get(pk=after.pk).stop_reason == "review_decision_denied_execution:revise"


def test_each_run_executes_the_snapshot_it_stored_whatever_the_worker_ran_before(demo_data):
    """A worker keeps the last snapshot it built by its stored text: a run whose stored snapshot differs
    (here changed in its row after it was queued) is built from its own."""
    runs = [start_run(pipeline="reflection", goal="Update", incident=demo_data["inc_pay_2041"], enqueue=False)[0]
            for _ in range(3)]
    braked = {**runs[1].policy, "auto_revision": False}
    Run.objects.filter(pk=runs[1].pk).update(policy=braked)
    for run in runs:
        run_now(run.pk)
    assert [Run.objects.get(pk=run.pk).stop_reason for run in runs] == [
        "success", "review_decision_denied_execution:revise", "success"]


@pytest.mark.django_db(transaction=True)
def test_run_pipeline_with_incident_stores_the_run(demo_data):
    from tests.factories import database_url

    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LLM_"))}
    env.update(DATABASE_URL=database_url(), DJANGO_SETTINGS_MODULE="reviewer.test_settings")
    out = subprocess.run([sys.executable, "manage.py", "run_pipeline", "reflection", "--goal", "Update",
                          "--incident", "inc_pay_2041"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    run = Run.objects.get(pk=result["stored_run"])
    assert (run.status, run.stop_reason, run.incident.incident_id) == ("ok", result["stop_reason"], "inc_pay_2041")
    assert TraceStep.objects.filter(run=run).count() == len(result["trace"])
    unknown = subprocess.run([sys.executable, "manage.py", "run_pipeline", "reflection", "--goal", "x", "--incident",
                              "inc_nope"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert unknown.returncode == 1 and "no incident 'inc_nope'" in unknown.stderr


def test_switching_a_route_off_for_execution_in_admin_denies_the_next_routing_run(client, demo_data, users):
    from agents.models import RouteTarget

    client.force_login(users.admin)
    billing = RouteTarget.objects.get(name="billing_specialist")
    assert post_change(client, "routetarget", billing, allowed_execution="").status_code == 302
    run, _ = start_run(pipeline="routing", goal="Refund please, I was charged twice. user_id=42", enqueue=False)
    run_now(run.pk)
    run.refresh_from_db()
    assert (run.stop_reason, run.phase) == ("route_denied:billing_specialist", "delegate")
    assert run.policy["routes"]["billing_specialist"]["allowed_execution"] is False


# ---------------------------------------------------------------- killed work resumes by itself
# The clock is time-machine's: the sweep reads timezone.now(), so "61 s later" is a travel, not a sleep.

T0 = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)


def later(seconds: float):
    return time_machine.travel(T0 + timedelta(seconds=seconds), tick=False)


def lose_worker(run_pk: int, at: float) -> None:
    """The run is taken at ``at`` seconds and its worker then dies (no heartbeat after it took the run)."""
    with later(at):
        assert take_run(run_pk) is not None


def test_a_run_whose_worker_is_lost_is_retried_automatically_and_linked(demo_data, users,
                                                                        django_capture_on_commit_callbacks):
    with later(0):
        run, _ = start_run(pipeline="reflection", goal="Update", incident=demo_data["inc_pay_2041"], user=users.ops,
                           enqueue=False)
    lose_worker(run.pk, at=1)
    with later(1 + 59), django_capture_on_commit_callbacks() as enqueued:
        assert sweep_lost_runs(stale_seconds=60) == 0  # 59 s of silence: not lost yet
    assert Run.objects.get(pk=run.pk).status == "running" and not enqueued

    with later(1 + 61), django_capture_on_commit_callbacks() as enqueued:
        assert sweep_lost_runs(stale_seconds=60) == 1
    lost = Run.objects.get(pk=run.pk)
    retry = lost.retries.get()
    assert (lost.status, lost.stop_reason) == ("interrupted", "worker_lost")
    assert lost.details == {"automatic_retry": "1 of 2", "retried_as": retry.pk}
    assert (retry.status, retry.retry_of_id, retry.goal, retry.incident_id, retry.triggered_by) == (
        "queued", lost.pk, lost.goal, lost.incident_id, users.ops)
    assert len(enqueued) == 1, "the retry is handed to a worker"

    run_now(retry.pk)
    assert Run.objects.get(pk=retry.pk).status == "ok"


def test_automatic_retries_stop_at_the_bound_and_a_person_starts_a_new_one(demo_data, users, settings):
    settings.RUN_AUTO_RETRIES = 2
    with later(0):
        first, _ = start_run(pipeline="routing", goal="refund user_id=42", enqueue=False)
    chain, clock = [first], 0
    for _ in range(3):  # the run and both of its automatic retries lose their worker
        clock += 100
        lose_worker(chain[-1].pk, at=clock)
        with later(clock + 61):
            assert sweep_lost_runs(stale_seconds=60) == 1
        chain += list(Run.objects.get(pk=chain[-1].pk).retries.all())
    assert len(chain) == 3, "the run and two automatic retries: no third"
    last = Run.objects.get(pk=chain[-1].pk)
    assert (last.status, last.stop_reason) == ("interrupted", "worker_lost")
    assert not last.retries.exists() and last.details == {
        "automatic_retry": "not retried: 2 automatic retries already (RUN_AUTO_RETRIES); retry it by hand"}
    assert last.failed  # offered to a person on the failed-runs page

    by_hand = retry_run(last, user=users.ops)
    lose_worker(by_hand.pk, at=clock + 200)
    with later(clock + 300):
        sweep_lost_runs(stale_seconds=60)
    assert Run.objects.get(pk=by_hand.pk).retries.count() == 1, "a person's retry has its own automatic retries"


def test_a_queued_run_whose_message_was_lost_is_enqueued_again_once_per_threshold(
        demo_data, settings, django_capture_on_commit_callbacks):
    settings.RUN_QUEUED_STALE_SECONDS = 300
    with later(0):
        lost, _ = start_run(pipeline="routing", goal="refund user_id=42", enqueue=False)  # its message never came
    with later(250):
        recent, _ = start_run(pipeline="routing", goal="refund user_id=42", enqueue=False)

    with later(299), django_capture_on_commit_callbacks() as enqueued:
        sweep_lost_runs()
    assert enqueued == []
    with mock.patch.object(execute_run, "delay") as delay:
        with later(301), django_capture_on_commit_callbacks(execute=True):
            sweep_lost_runs()
        with later(331), django_capture_on_commit_callbacks(execute=True):
            sweep_lost_runs()  # the next sweep: not again so soon
        assert [call.args for call in delay.call_args_list] == [(lost.pk,)]
        with later(301 + 301), django_capture_on_commit_callbacks(execute=True):
            sweep_lost_runs()
        assert [call.args for call in delay.call_args_list] == [(lost.pk,), (lost.pk,), (recent.pk,)]

    # A duplicate message is harmless: the first delivery takes the run, the second finds it taken.
    assert run_now(lost.pk) is not None and run_now(lost.pk) is None
    assert Run.objects.get(pk=lost.pk).status in ("ok", "stopped")


def test_runs_started_while_the_broker_is_down_are_enqueued_by_the_first_sweep_after_it_is_back(
        demo_data, settings, django_capture_on_commit_callbacks):
    """The recovery time with the shipped settings: beat sends the sweep every SWEEP_SECONDS, and a run
    whose send was refused goes at the first sweep that reaches a worker, whatever its age."""
    from reviewer import settings as shipped
    from reviewer.operations import broker

    sent, broker_up = [], False

    def delay(pk):
        if not broker_up:
            raise ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
        sent.append(pk)

    with mock.patch.object(execute_run, "delay", side_effect=delay):
        with later(0), django_capture_on_commit_callbacks(execute=True):
            refused, _ = start_run(pipeline="routing", goal="refund user_id=42")  # 202 all the same
        assert Run.objects.get(pk=refused.pk).details["not_sent"].startswith("ConnectionError: Error 111")
        with later(1), django_capture_on_commit_callbacks(execute=True):
            sweep_lost_runs()  # a sweep while the broker is still down: refused again, still marked
        assert sent == [] and "not_sent" in Run.objects.get(pk=refused.pk).details

        broker_up, back = True, 120  # Redis answers again two minutes later
        with later(back + shipped.SWEEP_SECONDS), django_capture_on_commit_callbacks(execute=True):
            sweep_lost_runs()  # beat's next sweep
        assert sent == [refused.pk]
        # Beat and the workers notice the broker within RECONNECT_MAX_SECONDS, then the next sweep sends it.
        assert broker.RECONNECT_MAX_SECONDS + shipped.SWEEP_SECONDS <= 30
        with later(back + 2 * shipped.SWEEP_SECONDS), django_capture_on_commit_callbacks(execute=True):
            sweep_lost_runs()
        assert sent == [refused.pk]  # sent once: the mark is gone
    run = Run.objects.get(pk=refused.pk)
    assert (run.status, run.details) == ("queued", {})
    assert run_now(run.pk) is not None


def test_labels_longer_than_their_columns_are_stored_shortened_not_refused(demo_data, monkeypatch, fake_openai):
    """An operator's long model name or URL must not fail the run when it is stored (PostgreSQL refuses
    a value longer than its column; SQLite would quietly keep it)."""
    from agents.testing.scripted_demo import APPROVE, DRAFT
    from agents.testing.scripted_server import tool_call

    long_model = "m" * 400
    monkeypatch.setenv("OPENAI_API_KEY", "sk-long-label-test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_MODEL", long_model)
    monkeypatch.setenv("OPENAI_MAX_RETRIES", "0")
    fake_openai.script(tool_call("submit_draft", {"draft": DRAFT}), tool_call("reflect", APPROVE))
    run, _ = start_run(pipeline="reflection", goal="Update", incident=demo_data["inc_pay_2041"], enqueue=False)
    run_now(run.pk)
    run.refresh_from_db()
    assert (run.status, run.stop_reason) == ("ok", "success")
    for row, field in [(run, "model_label"), (run, "endpoint")] + [(call, "model") for call in run.calls.all()]:
        value, limit = getattr(row, field), type(row)._meta.get_field(field).max_length
        assert len(value) <= limit and value.endswith("…"), (field, len(value))


@pytest.mark.parametrize(("pipeline", "stop_reason", "instructions_field"), [
    ("reflection", "review_decision_denied_execution:revise", "fix_plan"),
    ("self_critique", "critique_decision_denied_execution:revise", "required_changes"),
])
def test_the_emergency_brake_opens_an_escalation_with_the_draft_issues_and_fix_plan(
        demo_data, pipeline, stop_reason, instructions_field):
    PipelinePolicy.objects.filter(pipeline=pipeline).update(auto_revision=False)
    run, _ = start_run(pipeline=pipeline, goal="Update", incident=demo_data["inc_pay_2041"], enqueue=False)
    result = run_now(run.pk)
    run.refresh_from_db()
    assert (run.status, run.stop_reason) == ("stopped", stop_reason)  # the public stop reason, unchanged
    assert not run.failed and run not in Run.objects.failed()  # decided by a person, not retried
    escalation = Escalation.objects.get(run=run)
    assert escalation.stopped_by_brake and escalation.status == "pending"
    assert escalation.draft and escalation.candidate == escalation.draft
    assert escalation.reason
    review = Review.objects.get(run=run)
    verdict = result.review or result.critique
    assert review.decision == "revise" and review.issues == (verdict.get("issues") or verdict.get("risks"))
    assert review.instructions == verdict[instructions_field] != []


def test_a_run_updates_its_row_when_taken_at_calls_and_at_its_result_and_reads_it_once(
        demo_data, django_assert_max_num_queries):
    """The observer writes a step or a call as one INSERT (no UPDATE of the run after each
    step); the run row is updated only when a model call starts (the stage the in-flight line names),
    it is read once, by the UPDATE that takes it, and record_result writes without reading the run, its
    review or its audit first."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    run, _ = start_run(pipeline="self_critique", goal="Update", incident=demo_data["inc_pay_2041"], enqueue=False)
    with CaptureQueriesContext(connection) as queries:
        result = run_now(run.pk)
    statements = [q["sql"] for q in queries.captured_queries]
    run_updates = [s for s in statements if s.startswith('UPDATE "agents_run"')]
    run_reads = [s for s in statements if s.startswith("SELECT") and 'FROM "agents_run"' in s]
    assert len(result.trace) >= 4 and result.usage["model_calls"] >= 3
    call_starts = [s for s in run_updates if '"working_call" = ' in s and '"status" = ' not in s.split(" WHERE ")[0]]
    assert len(call_starts) == result.usage["model_calls"]  # one per call: the stage the run waits for
    assert len(run_updates) - len(call_starts) == 2, run_updates  # taking it, the result
    # The model label and endpoint go with the first call's UPDATE, not in one of their own.
    assert ['"model_label" = ' in s and '"endpoint" = ' in s for s in call_starts] == [True] + [False] * (
        len(call_starts) - 1)
    # The row as taken comes back from the taking UPDATE (RETURNING): no SELECT of it.
    assert not run_reads, run_reads
    assert [" RETURNING " in s for s in run_updates if '"status" = ' in s.split(" WHERE ")[0]] == [True, False]
    assert not [s for s in statements if s.startswith("SELECT") and ("agents_review" in s or "agents_auditdiff" in s)]
    run.refresh_from_db()
    assert (run.model_calls, run.phase) == (result.usage["model_calls"], result.phase or "")
    assert run.model_label == result.model and run.endpoint


def test_start_run_reads_unchanged_facts_once_and_a_change_reaches_both_the_version_and_the_context(
        demo_data, users):
    """An unchanged incident: one read of its facts serves the version check and the run's context (no
    lock). A changed one gets a new version, and the run's context is that version's facts, even after
    a stale read on the same instance."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    incident = demo_data["inc_pay_2041"]
    start_run(pipeline="reflection", goal="Update", incident=incident, user=users.ops, enqueue=False)
    with CaptureQueriesContext(connection) as queries:
        start_run(pipeline="reflection", goal="Update", incident=incident, user=users.ops, enqueue=False)
    fact_reads = [q["sql"] for q in queries.captured_queries if 'FROM "agents_incidentfact"' in q["sql"]]
    assert len(fact_reads) == 1, fact_reads
    assert not [q for q in queries.captured_queries if "FOR UPDATE" in q["sql"]]

    incident.fact_list()  # a stale read before: record_version must not reuse it
    incident.fact_rows.filter(key="eta_minutes").update(value="30")
    run, _ = start_run(pipeline="reflection", goal="Update", incident=incident, user=users.ops, enqueue=False)
    assert run.context["incident"]["eta_minutes"] == 30
    assert run.incident_version.snapshot["facts"] == [
        {"key": f.key, "label": f.label, "value": f.typed_value, "unit": f.unit} for f in incident.fact_rows.all()]


def test_one_heartbeat_touches_every_run_in_flight_here_in_one_update(demo_data):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from agents.tasks import Heartbeat

    runs = [start_run(pipeline="routing", goal=f"refund user_id={i}", enqueue=False)[0] for i in (42, 7, 9)]
    long_ago = datetime(2026, 1, 1, tzinfo=UTC)
    Run.objects.update(status=Run.Status.RUNNING, heartbeat_at=long_ago)
    heartbeat = Heartbeat()

    with heartbeat.keep(runs[0].pk), heartbeat.keep(runs[1].pk):
        with CaptureQueriesContext(connection) as queries:
            touched = heartbeat.beat()
    assert touched == 2 and len([q for q in queries.captured_queries if q["sql"].startswith("UPDATE")]) == 1
    beats = dict(Run.objects.values_list("pk", "heartbeat_at"))
    assert beats[runs[0].pk] > long_ago and beats[runs[1].pk] > long_ago
    assert beats[runs[2].pk] == long_ago  # not executing here
    assert heartbeat.beat() == 0  # both runs ended: nothing in flight, nothing asked


def test_a_second_result_for_a_run_that_ended_is_refused_and_changes_nothing(demo_data):
    from agents.observer import RunLost, record_result

    run, _ = start_run(pipeline="self_critique", goal="Update", incident=demo_data["inc_pay_2041"], enqueue=False)
    result = run_now(run.pk)
    first = Review.objects.get(run=run).reason
    result.critique = {**result.critique, "reason": "second delivery"}
    with pytest.raises(RunLost, match=f"run {run.pk} is no longer running"):
        record_result(run.pk, result)
    assert Review.objects.filter(run=run).count() == AuditDiff.objects.filter(run=run).count() == 1
    assert Review.objects.get(run=run).reason == first


class SweptDuringCall:
    """The offline model, except that during call ``at`` the run's heartbeat goes silent for 61 s and
    the sweep runs: what happens to a worker that is alive but too slow (a busy machine, a long pause)."""

    def __init__(self, llm, run_pk: int, at: int):
        self.llm, self.run_pk, self.at, self.calls = llm, run_pk, at, 0
        self.label, self.endpoint = llm.label, llm.endpoint

    def complete(self, request):
        self.calls += 1
        if self.calls == self.at:
            Run.objects.filter(pk=self.run_pk).update(heartbeat_at=timezone.now() - timedelta(seconds=61))
            assert sweep_lost_runs(stale_seconds=60) == 1
        return self.llm.complete(request)


@pytest.mark.parametrize("at", [1, 3], ids=["before-another-call", "during-the-last-call"])
def test_a_slow_worker_whose_run_was_swept_records_nothing_and_the_retry_is_the_only_answer(demo_data, at):
    from agents.core.llm.offline import OfflineModel

    run, _ = start_run(pipeline="self_critique", goal="Update", incident=demo_data["inc_pay_2041"], enqueue=False)
    model = SweptDuringCall(OfflineModel(), run.pk, at=at)
    assert run_now(run.pk, llm=model) is None
    assert model.calls == at, "no model call after the run stopped being this worker's"
    lost = Run.objects.get(pk=run.pk)
    retry = lost.retries.get()
    assert (lost.status, lost.stop_reason, lost.details["retried_as"]) == ("interrupted", "worker_lost", retry.pk)
    assert not Review.objects.filter(run=run).exists() and not AuditDiff.objects.filter(run=run).exists()
    assert not Escalation.objects.filter(run=run).exists()

    run_now(retry.pk)
    assert [r.status for r in Run.objects.filter(pk__in=[run.pk, retry.pk]).order_by("pk")] == ["interrupted", "ok"]

"""Runs in a real Celery worker process: queued -> running -> ok with a live trace, duplicate
deliveries, and a worker killed mid-run. The broker is the embedded filesystem transport, or Redis
when CELERY_BROKER_URL says so (the test command runs this file against both)."""

import pytest

from agents.models import ModelCall, Run, TraceStep
from agents.tasks import execute_run, start_run, sweep_lost_runs
from agents.testing.scripted_demo import APPROVE, DRAFT
from agents.testing.scripted_server import delay, tool_call
from tests.factories import wait_for

pytestmark = pytest.mark.worker


def model_env(fake):
    return {"OPENAI_API_KEY": "sk-worker-test", "OPENAI_BASE_URL": fake.base_url, "OPENAI_MAX_RETRIES": "0",
            "OPENAI_MODEL": "test-model"}


def test_a_run_goes_queued_running_ok_with_its_trace_stored_in_order_while_in_flight(
    start_worker, demo_data, fake_openai, held_replies
):
    fake_openai.script(tool_call("submit_draft", {"draft": DRAFT}))
    review = held_replies(tool_call("reflect", APPROVE))  # answered when the test has seen the run in flight
    # Queued before any worker exists, so it is still queued when the test looks, however loaded the machine.
    run, _ = start_run(pipeline="reflection", goal="Customer update", incident=demo_data["inc_pay_2041"])
    seen = [Run.objects.get(pk=run.pk).status]
    start_worker(**model_env(fake_openai))
    # While the review call is in flight, the draft step is already on the page.
    wait_for(lambda: TraceStep.objects.filter(run=run).exists(), message="the draft step")
    live = Run.objects.get(pk=run.pk)
    seen.append(live.status)
    assert list(TraceStep.objects.filter(run=run).values_list("phase", flat=True)) == ["draft"]
    review.release()
    done = wait_for(lambda: Run.objects.filter(pk=run.pk, status__in=["ok", "stopped"]).first(), message="the end")
    seen.append(done.status)
    assert seen == ["queued", "running", "ok"] and done.stop_reason == "success"
    assert list(TraceStep.objects.filter(run=run).values_list("index", "phase")) == [
        (1, "draft"), (2, "review"), (3, "finalize")]
    assert done.model_label == "test-model"
    assert ModelCall.objects.filter(run=run).count() == 2 == len(fake_openai.requests)


def test_a_duplicate_delivery_runs_the_pipeline_once(start_worker, demo_data):
    start_worker(LLM_BACKEND="offline")
    run, _ = start_run(pipeline="reflection", goal="Customer update", incident=demo_data["inc_pay_2041"])
    execute_run.delay(run.pk)  # the broker delivers the same task a second time
    done = wait_for(lambda: Run.objects.filter(pk=run.pk, status__in=["ok", "stopped"]).first(), message="the end")
    calls = ModelCall.objects.filter(run=run).count()
    execute_run.delay(run.pk)  # and once more after it finished
    sentinel, _ = start_run(pipeline="routing", goal="refund user_id=42")  # queued behind the duplicates
    wait_for(lambda: Run.objects.filter(pk=sentinel.pk, status="ok").exists(), message="the sentinel run")
    assert done.stop_reason == "success" and done.deliveries == 1
    assert ModelCall.objects.filter(run=run).count() == calls == 3  # draft, review, revise: once each
    assert TraceStep.objects.filter(run=run).count() == len(set(TraceStep.objects.filter(run=run).values_list("index")))


def test_a_worker_killed_mid_run_leaves_no_run_stuck(start_worker, demo_data, fake_openai, settings):
    fake_openai.script(delay(30, tool_call("submit_draft", {"draft": DRAFT})))
    worker = start_worker(**model_env(fake_openai))
    run, _ = start_run(pipeline="reflection", goal="Customer update", incident=demo_data["inc_pay_2041"])
    wait_for(lambda: Run.objects.filter(pk=run.pk, status="running").exists() and fake_openai.requests,
             message="the run to be in flight")
    worker.kill()
    # The heartbeat stops with the worker; once it is stale the sweep ends the run.
    wait_for(lambda: sweep_lost_runs(), timeout=settings.RUN_STALE_SECONDS + 10, every=0.5, message="the sweep")
    lost = Run.objects.get(pk=run.pk)
    assert (lost.status, lost.stop_reason) == ("interrupted", "worker_lost")
    retried = lost.retries.get()  # retried automatically, linked
    assert (retried.retry_of_id, retried.status, retried.goal) == (lost.pk, "queued", lost.goal)
    assert lost.details == {"automatic_retry": "1 of 2", "retried_as": retried.pk}

"""Worker-loss drill: SIGKILL the worker while runs are in a model call, at every stage.

Three runs are in flight at once, one in each stage of the reflection pipeline (draft, review,
revise), each held there by a scripted slow answer; then the worker is killed. That happens three
times, with the stages rotated, so every run loses a worker in every stage. What must follow
depends on the broker, and the drill asserts what the broker in use guarantees:

- the embedded filesystem broker has no acknowledgements: the killed worker's tasks are gone. The
  sweep ends each run as ``interrupted`` / ``worker_lost`` and retries it automatically (a new run
  linked to it, within ``RUN_AUTO_RETRIES``), which meets the next worker. The last retries complete.
- Redis acknowledges late: a killed worker's tasks are delivered again once the visibility timeout
  has passed. A fresh worker restores them when it starts, takes each run over (its heartbeat has
  gone stale) and starts it again from the draft. The same runs complete, on their fourth delivery.

Either way no run is left queued or running, and no trace step is written twice.

The second drill is the long one: 200 runs, the worker SIGKILLed twice while they flow, the sweep
running as beat would; it ends with every run's lineage ok, nobody asked to retry anything, and no
trace step written twice. Its waits are polls with a deadline, never a sleep that times something.
"""

from __future__ import annotations

import time
from collections import Counter
from datetime import timedelta

import pytest
from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from agents.models import ModelCall, Run, TraceStep
from agents.tasks import start_run, sweep_lost_runs
from agents.testing.scripted_server import Reply, delay
from tests.drills.conftest import (
    STAGES,
    TOOLS,
    clean_script,
    goal_for,
    good_reply,
    requests_for,
    script,
    start_scripted,
    trace,
    wait_for_end,
    worker_errors,
)
from tests.factories import wait_for

pytestmark = [pytest.mark.worker]

KILLS = 3
HELD_SECONDS = 60  # a held answer outlasts the kill; the fake server drops it when it stops
VISIBILITY_TIMEOUT = 6  # Redis: seconds before a killed worker's task is delivered again
REDIS = not settings.CELERY_BROKER_URL.startswith("filesystem")


def model_env(fake) -> dict:
    return {"OPENAI_API_KEY": "sk-drill-test", "OPENAI_BASE_URL": fake.base_url, "OPENAI_MODEL": "drill-model",
            "OPENAI_MAX_RETRIES": "0", "OPENAI_TIMEOUT_SECONDS": str(HELD_SECONDS + 30),
            # Read by the workers only: the test process publishes, it never restores a message.
            "CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY_TIMEOUT)}


def kill_stage(chain: int, kill: int) -> str:
    return STAGES[(chain + kill) % len(STAGES)]


def stages_before(stage: str) -> list[str]:
    return list(STAGES[: STAGES.index(stage)])


def held_script(stage: str) -> list:
    """Good answers up to ``stage``, whose answer is held back until long after the kill."""
    return [good_reply(s, revise=True) for s in stages_before(stage)] + [
        delay(HELD_SECONDS, good_reply(stage, revise=True))]


def at_stage(fake, marker: str, run: Run, stage: str, requests: list[str]) -> bool:
    """The run is running, its trace holds the steps before ``stage``, and ``stage``'s request is in."""
    return (Run.objects.filter(pk=run.pk, status="running").exists()
            and requests_for(fake, marker) == requests
            and [phase for _, phase, _ in trace(run)] == stages_before(stage))


def assert_trace_in_order(run: Run, phases: list[str]) -> None:
    steps = trace(run)
    assert [(index, phase) for index, phase, _ in steps] == list(enumerate(phases, start=1)), (run.pk, steps)


def redeliverable(runs: list[Run]) -> bool:
    """Will a worker that starts now get the killed worker's tasks again, and take the runs over?

    A starting worker restores the unacknowledged tasks older than the visibility timeout (after that,
    with kombu's defaults, only every 100 s or so), and it takes a run over only once the run's
    heartbeat is stale; before that it would leave the run to its old, dead owner and drop the task.
    """
    rows = Run.objects.filter(pk__in=[run.pk for run in runs])
    delivered = max(rows.values_list("started_at", flat=True))
    stale = timezone.now() - timedelta(seconds=settings.RUN_STALE_SECONDS + 0.5)
    return (time.time() > delivered.timestamp() + VISIBILITY_TIMEOUT + 0.5
            and not rows.filter(heartbeat_at__gte=stale).exists())


def lineage(run: Run) -> list[Run]:
    """The run and the runs it retries, oldest first."""
    chain = [run]
    while chain[-1].retry_of_id:
        chain.append(Run.objects.get(pk=chain[-1].retry_of_id))
    return chain[::-1]


def recorded_calls(chain: int) -> list[tuple[int, str]]:
    """(delivery, stage) of every model call that must have been recorded for the chain."""
    calls = []
    for kill in range(KILLS):
        delivery = kill + 1 if REDIS else 1
        calls += [(delivery, stage) for stage in stages_before(kill_stage(chain, kill))]
    final = KILLS + 1 if REDIS else 1
    return calls + [(final, stage) for stage in STAGES]


def test_runs_whose_worker_is_killed_in_any_stage_end_terminal_without_duplicate_steps(
        start_worker, demo_data, fake_openai, settings):
    settings.RUN_AUTO_RETRIES = KILLS  # every chain loses its worker KILLS times in a row
    markers = [f"loss-{chain}" for chain in range(len(STAGES))]
    expected_requests = {marker: [] for marker in markers}
    for chain, marker in enumerate(markers):  # the whole conversation of each chain, kill after kill
        for kill in range(KILLS):
            script(fake_openai, marker, held_script(kill_stage(chain, kill)))
        script(fake_openai, marker, clean_script(revise=True))
    current = [start_scripted(fake_openai, demo_data["inc_pay_2041"], marker, []) for marker in markers]
    originals = list(current)
    workers = []

    for kill in range(KILLS):
        worker = start_worker(**model_env(fake_openai))
        workers.append(worker)
        for chain, marker in enumerate(markers):
            stage = kill_stage(chain, kill)
            expected_requests[marker] += stages_before(stage) + [stage]
            run = current[chain]
            wait_for(lambda marker=marker, run=run, stage=stage: at_stage(
                         fake_openai, marker, run, stage, expected_requests[marker]),
                     timeout=30, message=f"{marker} to be in its {stage} call (kill {kill + 1})")
        worker.kill()
        for chain, run in enumerate(current):
            assert_trace_in_order(run, stages_before(kill_stage(chain, kill)))

        if REDIS:
            # Late acknowledgement: the tasks wait in Redis, and the runs stay "running" meanwhile.
            assert set(Run.objects.filter(pk__in=[run.pk for run in current]).values_list("status", flat=True)) == {
                "running"}
            wait_for(lambda current=current: redeliverable(current),
                     timeout=VISIBILITY_TIMEOUT + settings.RUN_STALE_SECONDS + 10,
                     every=0.2, message="the visibility timeout and stale heartbeats")
        else:
            # The tasks died with the worker; the sweep ends the runs once their heartbeat is stale.
            def swept(pks=tuple(run.pk for run in current)):
                sweep_lost_runs()
                return not Run.objects.filter(pk__in=pks, status="running").exists()

            wait_for(swept, timeout=settings.RUN_STALE_SECONDS + 15, every=0.5, message="the sweep")
            for chain, run in enumerate(current):
                lost = Run.objects.get(pk=run.pk)
                assert (lost.status, lost.stop_reason) == ("interrupted", "worker_lost")
                assert lost.details["automatic_retry"] == f"{kill + 1} of {KILLS}"
                assert_trace_in_order(lost, stages_before(kill_stage(chain, kill)))
            current = [Run.objects.get(pk=run.pk).retries.get() for run in current]  # the automatic retries

    final_worker = start_worker(**model_env(fake_openai))
    workers.append(final_worker)
    done = wait_for_end(current, *workers, timeout=30 + (VISIBILITY_TIMEOUT if REDIS else 0))

    for chain, (marker, run) in enumerate(zip(markers, done, strict=True)):
        expected_requests[marker] += list(STAGES)
        assert (run.status, run.stop_reason, run.outcome) == ("ok", "success", "revised_once"), (
            marker, run.status, run.stop_reason, worker_errors(*workers))
        assert_trace_in_order(run, [*STAGES, "finalize"])
        assert requests_for(fake_openai, marker) == expected_requests[marker]
        # Only the calls that came back were recorded: none for the held ones.
        calls = list(ModelCall.objects.filter(run__in=lineage(run)).values_list("delivery", "stage"))
        assert sorted(calls) == sorted(recorded_calls(chain)), (marker, calls)
        if REDIS:
            assert (run.pk, run.deliveries) == (originals[chain].pk, KILLS + 1)
        else:
            assert [r.status for r in lineage(run)] == ["interrupted"] * KILLS + ["ok"]
            assert lineage(run)[0].pk == originals[chain].pk and run.deliveries == 1

    assert not Run.objects.filter(status__in=Run.IN_FLIGHT).exists()
    assert TraceStep.objects.count() == len({(s.run_id, s.index) for s in TraceStep.objects.all()})
    assert final_worker.process.poll() is None


# ---------------------------------------------------------------- 200 runs, two kills, nobody retries by hand

RUNS = 200
LATENCY = 0.1  # per model call: runs are in flight when the kills come
KILL_AFTER = (50, 120)  # the worker is killed once this many runs have ended


def every_stage_answered(body: dict) -> Reply:
    """The right answer for whichever stage asks (draft, then an approving review), after LATENCY."""
    tool = body.get("tool_choice", {}).get("function", {}).get("name")
    stage = {t: s for s, t in TOOLS.items()}.get(tool, "draft")
    return delay(LATENCY, good_reply(stage))


def needing_a_person() -> list[int]:
    """Failed runs that nobody (and nothing) retried: what a person would have to retry by hand."""
    return [run.pk for run in Run.objects.filter(retries__isnull=True) if run.failed]


def sweep_until(condition, *, timeout: float, workers, alive=None) -> None:
    """Run the sweep as beat would, until ``condition()``; fail with the stuck runs after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not condition():
        if alive is not None and alive.process.poll() is not None:
            raise AssertionError(f"the worker died; its errors:\n{worker_errors(*workers)}")
        if time.monotonic() > deadline:
            left = Counter(Run.objects.values_list("status", flat=True))
            raise AssertionError(f"not done after {timeout}s: {dict(left)}; worker errors:\n{worker_errors(*workers)}")
        sweep_lost_runs()
        time.sleep(0.25)


def test_two_hundred_runs_and_two_worker_kills_finish_with_nobody_retrying_by_hand(
        start_worker, demo_data, fake_openai, settings):
    settings.RUN_QUEUED_STALE_SECONDS = 8  # messages lost with the killed worker's prefetch come back soon
    fake_openai.responder = every_stage_answered
    incident = demo_data["inc_pay_2041"]
    originals = [start_run(pipeline="reflection", goal=f"{goal_for('bulk')} #{n}", incident=incident)[0].pk
                 for n in range(RUNS)]
    workers = []

    for ended in KILL_AFTER:
        worker = start_worker(**model_env(fake_openai))
        workers.append(worker)
        sweep_until(lambda ended=ended: Run.objects.filter(status__in=("ok", "stopped")).count() >= ended
                    and Run.objects.filter(status="running").exists(), timeout=90, workers=workers, alive=worker)
        worker.kill()

    final = start_worker(**model_env(fake_openai))
    workers.append(final)
    sweep_until(lambda: not Run.objects.filter(status__in=Run.IN_FLIGHT).exists(), timeout=120, workers=workers,
                alive=final)

    statuses = Counter(Run.objects.values_list("status", flat=True))
    # A run a kill caught ends interrupted (the sweep came first) or is taken over by a later delivery
    # of its task (Redis restores a killed worker's unacknowledged tasks when the next worker starts).
    caught = Run.objects.filter(Q(status="interrupted") | Q(deliveries__gt=1)).count()
    assert caught >= 2, f"each kill should have caught runs in flight: {dict(statuses)}"
    assert needing_a_person() == [], dict(statuses)
    for pk in originals:  # every run's lineage ends ok, through automatic retries only
        chain = lineage_from(pk)
        assert [run.status for run in chain] == ["interrupted"] * (len(chain) - 1) + ["ok"], [
            (run.pk, run.status, run.stop_reason, run.details) for run in chain]
        assert all(run.details.get("retried_as") == after.pk for run, after in zip(chain, chain[1:], strict=False))
    assert Run.objects.filter(status="ok").count() == RUNS
    for run in Run.objects.filter(status="ok"):  # no step written twice, none missing
        assert [phase for _, phase, _ in trace(run)] == ["draft", "review", "finalize"], (run.pk, trace(run))
    assert TraceStep.objects.count() == len(set(TraceStep.objects.values_list("run_id", "index")))


def lineage_from(pk: int) -> list[Run]:
    """The run and its retries, each the retry of the one before, oldest first."""
    chain = [Run.objects.get(pk=pk)]
    while (retry := chain[-1].retries.order_by("pk").first()) is not None:
        chain.append(retry)
    return chain

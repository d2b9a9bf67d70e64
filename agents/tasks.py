"""Runs as Celery tasks: thin shells that take ids, load rows, call the core and record the result.

``start_run`` creates the row and enqueues on commit; ``execute_run`` claims it with a conditional
update (so a duplicate delivery never runs the pipeline twice), runs it with the database observer
and a heartbeat, and records the result. ``sweep_lost_runs`` ends runs whose worker went silent.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.db import IntegrityError, close_old_connections, connection, transaction
from django.db.models import F
from django.utils import timezone

from agents.llm.base import LLM
from agents.llm.client import client_from_env
from agents.llm.endpoints import key_variables
from agents.observer import DatabaseObserver, record_result
from agents.pipelines import RunResult, run_pipeline
from agents.policies import load_policy
from agents.policy import POLICY_CLASSES, Policy
from agents.store import database_workers
from reviewer.models import Incident, Run, TraceStep

log = logging.getLogger("agents.tasks")


_clients: dict = {}
_clients_lock = threading.Lock()


def llm_for(policy: Policy) -> LLM:
    """The model a run talks to: the offline model when no endpoint is declared, else the declared
    endpoint the policy names (a name or URL not declared raises ``EndpointError``).

    One client per process, model settings and environment (the key variables included): building
    an ``openai.OpenAI`` costs ~25 ms (its HTTP client loads the CA bundle), more than the rest of
    a run's own work.
    """
    names = key_variables()
    key = (policy.model, tuple(sorted((k, v) for k, v in os.environ.items()
                                      if k.startswith(("OPENAI_", "LLM_")) or k in names)))
    with _clients_lock:
        if key not in _clients:
            _clients[key] = client_from_env(policy.model)
        return _clients[key]


def start_run(*, pipeline: str, goal: str, incident: Incident | None = None, context: dict | None = None,
              user=None, idempotency_key: str = "", retry_of: Run | None = None, enqueue: bool = True) -> tuple[Run, bool]:
    """Create a queued run with its context and policy snapshots; enqueue it once the row is committed.

    Returns ``(run, created)``: the same ``idempotency_key`` from the same user returns the same run.
    """
    if idempotency_key and user is not None:
        existing = Run.objects.filter(triggered_by=user, idempotency_key=idempotency_key).first()
        if existing:
            return existing, False
    policy = load_policy(pipeline)
    try:
        with transaction.atomic():
            run = Run.objects.create(
                pipeline=pipeline, goal=goal, incident=incident,
                context=incident.context() if incident is not None else (context or {}),
                policy=policy.to_dict(), triggered_by=user, idempotency_key=idempotency_key, retry_of=retry_of,
            )
            if enqueue:
                transaction.on_commit(lambda: execute_run.delay(run.pk))
    except IntegrityError:
        # Two requests with one idempotency key raced: the other one created the run.
        return Run.objects.get(triggered_by=user, idempotency_key=idempotency_key), False
    return run, True


def retry_run(run: Run, *, user=None) -> Run:
    """A new run with the same inputs, linked to the one it retries."""
    new, _ = start_run(pipeline=run.pipeline, goal=run.goal, incident=run.incident,
                       context=None if run.incident else run.context, user=user, retry_of=run)
    return new


def claim(run_pk: int) -> int | None:
    """Take the run for this worker; returns the delivery number, or None when another has it.

    A queued run is claimed once. A running run is taken over only when its heartbeat is stale (its
    worker died and the broker delivered the task again); its partial trace is cleared first.
    """
    now = timezone.now()
    me = f"{socket.gethostname()}:{threading.get_ident()}"
    fields = {"status": Run.Status.RUNNING, "started_at": now, "heartbeat_at": now, "worker": me,
              "deliveries": F("deliveries") + 1}
    if not Run.objects.filter(pk=run_pk, status=Run.Status.QUEUED).update(**fields):
        stale = now - timedelta(seconds=settings.RUN_STALE_SECONDS)
        with transaction.atomic():
            if not Run.objects.filter(pk=run_pk, status=Run.Status.RUNNING, heartbeat_at__lt=stale).update(**fields):
                return None
            TraceStep.objects.filter(run_id=run_pk).delete()
        log.warning("run %s taken over after its worker went silent", run_pk)
    return Run.objects.values_list("deliveries", flat=True).get(pk=run_pk)


class Heartbeat:
    """Touches the run's heartbeat from a side thread while a long model call blocks the worker."""

    def __init__(self, run_pk: int, every: float):
        self.run_pk = run_pk
        self.every = every
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._beat, daemon=True, name=f"heartbeat-{run_pk}")

    def _beat(self) -> None:
        try:
            while not self.done.wait(self.every):
                Run.objects.filter(pk=self.run_pk, status=Run.Status.RUNNING).update(heartbeat_at=timezone.now())
        finally:
            connection.close()

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc_info):
        self.done.set()
        self.thread.join(timeout=5)


def run_now(run_pk: int, *, llm: LLM | None = None) -> RunResult | None:
    """Execute one run in this process. Safe to call twice: the second call finds it claimed (None)."""
    delivery = claim(run_pk)
    if delivery is None:
        log.info("run %s already claimed or finished; nothing to do", run_pk)
        return None
    run = Run.objects.get(pk=run_pk)
    policy = POLICY_CLASSES[run.pipeline].from_dict(run.policy)
    try:
        llm = llm or llm_for(policy)
    except ValueError as error:  # a bad OPENAI_* value or an undeclared endpoint: a recorded stop, no request
        log.error("run %s: model configuration: %s", run_pk, error)
        result = RunResult(run_id=str(run_pk), pipeline=run.pipeline, status="stopped", stop_reason="llm_misconfigured",
                           phase="setup", details={"error": str(error)})
        record_result(run_pk, result)
        return result
    Run.objects.filter(pk=run_pk).update(model_label=llm.label, endpoint=llm.endpoint)
    with Heartbeat(run_pk, settings.RUN_HEARTBEAT_SECONDS):
        result = run_pipeline(
            run.pipeline, goal=run.goal, context=run.context or None, policy=policy, llm=llm,
            observer=DatabaseObserver(run_pk, delivery), run_id=str(run_pk), workers=database_workers(),
        )
    record_result(run_pk, result)
    return result


@shared_task(acks_late=True, reject_on_worker_lost=True, ignore_result=True)
def execute_run(run_pk: int) -> str:
    close_old_connections()
    try:
        result = run_now(run_pk)
        return result.stop_reason if result else "skipped"
    finally:
        close_old_connections()


@shared_task(ignore_result=True)
def sweep_lost_runs(stale_seconds: float | None = None) -> int:
    """Mark running runs whose heartbeat went silent as interrupted (``worker_lost``); they can be retried."""
    now = timezone.now()
    stale = now - timedelta(seconds=stale_seconds if stale_seconds is not None else settings.RUN_STALE_SECONDS)
    lost = Run.objects.filter(status=Run.Status.RUNNING, heartbeat_at__lt=stale)
    count = lost.update(status=Run.Status.INTERRUPTED, stop_reason="worker_lost", finished_at=now)
    if count:
        log.warning("marked %d run(s) interrupted: worker_lost", count)
    return count

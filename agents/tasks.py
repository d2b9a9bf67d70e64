"""Runs as Celery tasks: thin shells that take ids, load rows, call the core and record the result.

``start_run`` creates the row and enqueues on commit; ``execute_run`` takes it with a conditional
update (so a duplicate delivery never runs the pipeline twice), runs it with the database observer
and a heartbeat, and records the result. ``sweep_lost_runs`` ends runs whose worker went silent and
retries them automatically (bounded), and enqueues again the queued runs whose message was lost:
at its next pass those whose send the broker refused (``enqueue_run`` marks them), after
``RUN_QUEUED_STALE_SECONDS`` any other.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from contextlib import contextmanager, nullcontext
from datetime import datetime, timedelta

from celery import shared_task
from django.conf import settings
from django.db import IntegrityError, close_old_connections, connection, transaction
from django.db.models import Q
from django.utils import timezone
from opentelemetry.trace import Span

from agents import tracing
from agents.core.llm.base import LLM
from agents.core.llm.client import client_from_env, effective_policy, judge_from_env
from agents.core.llm.endpoints import key_variables
from agents.core.pipelines import RunResult, run_pipeline
from agents.core.policy import Policy
from agents.models import Incident, Run, TraceStep
from agents.observer import DatabaseObserver, RunLost, fit, record_result, release_connection
from agents.policy_rows import active_policy_snapshot, stored_policy
from agents.slots import DatabaseSlots, limits_per_run
from agents.store import database_workers

log = logging.getLogger("agents.tasks")

# The key of a queued run's ``details`` that says its task could not be sent (the broker was down).
NOT_SENT = "not_sent"


_clients: dict = {}
_clients_lock = threading.Lock()


def llm_for(policy: Policy) -> LLM:
    """The model a run talks to: the offline model when no endpoint is declared, else the declared
    endpoint the policy names (a name or URL not declared raises ``EndpointError``).

    One client per process, model settings and environment (the key variables included): building
    an ``openai.OpenAI`` costs ~25 ms (its HTTP client loads the CA bundle), more than the rest of
    a run's own work.
    """
    return _cached("run", policy.model, lambda: client_from_env(policy.model, slots=DatabaseSlots()))


def judge_for(policy: Policy) -> LLM | None:
    """The second reader's model when the policy names one (docs/guard.md, 'The second reader'), cached
    like :func:`llm_for`; an endpoint not declared here gives a model that answers nothing, so the
    run's text goes to a person."""
    settings = getattr(policy, "judge", None)
    if settings is None:
        return None
    return _cached("judge", settings, lambda: judge_from_env(policy, slots=DatabaseSlots()))


def _cached(kind: str, settings, build) -> LLM:
    names = key_variables()
    key = (kind, settings, tuple(sorted((k, v) for k, v in os.environ.items()
                                        if k.startswith(("OPENAI_", "LLM_")) or k in names)))
    with _clients_lock:
        if key not in _clients:
            _clients[key] = build()
        return _clients[key]


def start_run(
    *,
    pipeline: str,
    goal: str,
    incident: Incident | None = None,
    context: dict | None = None,
    user=None,
    idempotency_key: str = "",
    retry_of: Run | None = None,
    enqueue: bool = True,
) -> tuple[Run, bool]:
    """Create a queued run with its context and policy snapshots; enqueue it once the row is committed.

    Returns ``(run, created)``: the same ``idempotency_key`` from the same user returns the same run.
    """
    if idempotency_key and user is not None:
        existing = Run.objects.filter(triggered_by=user, idempotency_key=idempotency_key).first()
        if existing:
            return existing, False
    snapshot = active_policy_snapshot(pipeline)
    # One statement needs no transaction of its own: only an incident's version (written with the run) or
    # a key that may race (an IntegrityError to recover from, inside a caller's transaction too) does.
    together = transaction.atomic() if incident is not None or idempotency_key else nullcontext()
    try:
        with together:
            version = incident.record_version(user) if incident is not None else None
            run = Run.objects.create(
                pipeline=pipeline, goal=goal, incident=incident, incident_version=version,
                context=incident.context() if incident is not None else (context or {}),
                policy=snapshot, triggered_by=user, idempotency_key=idempotency_key, retry_of=retry_of,
                # An automatic retry (the sweep's, in no request) joins the trace of the run it retries.
                trace_parent=tracing.traceparent() or (retry_of.trace_parent if retry_of else ""),
            )
            if enqueue:
                # A broker that is down must not fail a run that is committed (an API client's
                # Idempotency-Key then names it): enqueue_run marks it, and the next sweep sends it.
                transaction.on_commit(lambda: enqueue_run(run.pk), robust=True)
    except IntegrityError:
        # Two requests with one idempotency key raced: the other one created the run.
        return Run.objects.get(triggered_by=user, idempotency_key=idempotency_key), False
    return run, True


def enqueue_run(run_pk: int) -> bool:
    """Send the queued run's task. When the broker refuses it (down, restarting), the run is marked
    (``details[NOT_SENT]``, the error) and the next sweep sends it again, however long ago the run was
    made; nothing is raised. Returns whether the task was sent."""
    try:
        execute_run.delay(run_pk)
        return True
    except Exception as error:  # no message: what kombu or Redis raised while the broker is away
        reason = f"{type(error).__name__}: {error}"[:300]
        Run.objects.filter(pk=run_pk, status=Run.Status.QUEUED).update(details={NOT_SENT: reason})
        log.warning("run %s: its task was not sent (%s); the sweep sends it once the broker answers", run_pk, reason)
        return False


def retry_run(run: Run, *, user=None) -> Run:
    """A new run with the same inputs, linked to the one it retries."""
    new, _ = start_run(pipeline=run.pipeline, goal=run.goal, incident=run.incident,
                       context=None if run.incident else run.context, user=user, retry_of=run)
    return new


def take_run(run_pk: int) -> int | None:
    """Take the run for this worker; returns the delivery number, or None when another has it."""
    run = take(run_pk)
    return None if run is None else run.deliveries


def take(run_pk: int) -> Run | None:
    """Take the run for this worker; returns the taken row, or None when another has it.

    A queued run is taken once. A running run is taken over only when its heartbeat is stale (its
    worker died and the broker delivered the task again); its partial trace is cleared first.
    One statement either way: the conditional UPDATE returns the row (its policy snapshot as stored,
    read through :func:`agents.policy_rows.stored_policy`).
    """
    now = timezone.now()
    me = f"{socket.gethostname()}:{threading.get_ident()}"
    run = _take_if(run_pk, Run.Status.QUEUED, now, me)
    if run is None:
        stale = now - timedelta(seconds=settings.RUN_STALE_SECONDS)
        with transaction.atomic():
            run = _take_if(run_pk, Run.Status.RUNNING, now, me, heartbeat_before=stale)
            if run is None:
                return None
            TraceStep.objects.filter(run_id=run_pk).delete()
        log.warning("run %s taken over after its worker went silent", run_pk)
    run.policy = stored_policy(run.pipeline, run.stored_policy)[1]
    return run


def _take_if(run_pk: int, status: str, now: datetime, me: str, heartbeat_before: datetime | None = None) -> Run | None:
    """``UPDATE … WHERE`` the run is in ``status`` (and its heartbeat older than ``heartbeat_before``)
    ``RETURNING`` the row: the run as taken, or None. The policy column comes back as its stored text,
    ``stored_policy``, not decoded."""
    quote = connection.ops.quote_name
    columns = ", ".join(quote(f.column) for f in Run._meta.concrete_fields if f.name != "policy")
    condition, params = f"{quote('id')} = %s AND {quote('status')} = %s", [run_pk, status]
    if heartbeat_before is not None:
        condition += f" AND {quote('heartbeat_at')} < %s"
        params.append(heartbeat_before)
    sql = (f"UPDATE {quote(Run._meta.db_table)} SET {quote('status')} = %s, {quote('started_at')} = %s, "
           f"{quote('heartbeat_at')} = %s, {quote('worker')} = %s, {quote('deliveries')} = {quote('deliveries')} + 1 "
           f"WHERE {condition} RETURNING {columns}, {quote('policy')} AS stored_policy")
    taken = list(Run.objects.raw(sql, [Run.Status.RUNNING, now, now, me, *params]))
    return taken[0] if taken else None


class Heartbeat:
    """Touches the heartbeat of every run this process executes, from one side thread, while long
    model calls block their workers: one UPDATE every ``RUN_HEARTBEAT_SECONDS`` for all of them.

    ``with HEARTBEAT.keep(run_pk):`` adds a run for as long as it executes. Adding one costs a set
    insert, not a thread per run (a thread's start and join cost a run ~1 ms on a busy machine).
    """

    def __init__(self):
        self.runs: set[int] = set()
        self.lock = threading.Lock()
        self.thread: threading.Thread | None = None

    @contextmanager
    def keep(self, run_pk: int):
        with self.lock:
            self.runs.add(run_pk)
            if self.thread is None or not self.thread.is_alive():  # the first run here, or after a fork
                self.thread = threading.Thread(target=self._beat, daemon=True, name="heartbeat")
                self.thread.start()
        try:
            yield
        finally:
            with self.lock:
                self.runs.discard(run_pk)

    def _beat(self) -> None:
        while True:
            time.sleep(settings.RUN_HEARTBEAT_SECONDS)
            if not self.runs:
                continue  # nothing in flight here: no database to ask
            try:
                close_old_connections()  # one the server dropped, or past its age, is not reused
                self.beat()
            except Exception:  # a database hiccup: the next beat tries again; the thread lives on
                log.exception("heartbeat failed")

    def beat(self) -> int:
        """One touch of every run in flight here; how many rows it touched. Between beats the
        connection goes back to the pool."""
        with self.lock:
            runs = list(self.runs)
        if not runs:
            return 0
        try:
            return Run.objects.filter(pk__in=runs, status=Run.Status.RUNNING).update(heartbeat_at=timezone.now())
        finally:
            release_connection()


HEARTBEAT = Heartbeat()


def run_now(run_pk: int, *, llm: LLM | None = None) -> RunResult | None:
    """Execute one run in this process. Safe to call twice: the second call finds it taken (None).
    None too when the run stopped being this delivery's before its result was recorded (``RunLost``).

    With tracing on, the run is a span in the trace of the request that started it (agents.tracing)."""
    run = take(run_pk)
    if run is None:
        log.info("run %s already taken or finished; nothing to do", run_pk)
        return None
    with tracing.run_span(pipeline=run.pipeline, run_id=run_pk, parent=run.trace_parent) as span:
        if span.is_recording():
            if run.incident_id is not None:
                span.set_attribute("gated_review.incident.id", run.incident.incident_id)
            run.trace_span = tracing.traceparent(span)  # a lead's decision on the run goes under it
            Run.objects.filter(pk=run_pk).update(trace_span=run.trace_span)
        try:
            with limits_per_run():  # the endpoint limits an admin set, read once for the run
                result = _execute(run, llm, span)
        except RunLost as lost:  # this worker was slow; the sweep or another delivery has the run now
            log.warning("%s: the sweep ended it or another delivery took it over while this worker was slow", lost)
            tracing.end_run(span, stop_reason="worker_lost", status="stopped")
            return None
        tracing.end_run(span, stop_reason=result.stop_reason, status=result.status)
    return result


def _execute(run: Run, llm: LLM | None, span: Span) -> RunResult:
    """Run the taken ``run`` and record its result; with tracing on, its steps and calls are spans
    under ``span``."""
    run_pk, delivery = run.pk, run.deliveries
    policy, _ = stored_policy(run.pipeline, run.stored_policy)  # as take() read it
    try:
        # The model settings the run executes under (its row's, the environment winning), computed
        # once: the prompts and the client both read them, and the run records them.
        policy = effective_policy(policy, slots=DatabaseSlots())
        llm = llm or llm_for(policy)
        judge = judge_for(policy)
    except ValueError as error:  # a bad OPENAI_* value or an undeclared endpoint: a recorded stop, no request
        log.error("run %s: model configuration: %s", run_pk, error)
        result = RunResult(run_id=str(run_pk), pipeline=run.pipeline, status="stopped", stop_reason="llm_misconfigured",
                           phase="setup", details={"error": str(error)})
        record_result(run_pk, result, run)
        return result
    # Stored with the first call's UPDATE of the run (and with the result, for a run that makes none).
    run.model_label, run.endpoint = fit(Run, "model_label", llm.label), fit(Run, "endpoint", llm.endpoint)
    observer = DatabaseObserver(run_pk, delivery, first_call={"model_label": run.model_label, "endpoint": run.endpoint})
    if span.is_recording():
        observer = tracing.TracingObserver(observer, span, provider=tracing.provider_name(llm))
    with HEARTBEAT.keep(run_pk):
        result = run_pipeline(
            run.pipeline, goal=run.goal, context=run.context or None, policy=policy, llm=llm,
            observer=observer, run_id=str(run_pk), workers=database_workers(), judge=judge,
        )
    if span.is_recording():
        observer.close()
    result.details = {**result.details, "model_settings": model_settings_record(policy, llm)}
    record_result(run_pk, result, run)
    return result


def model_settings_record(policy: Policy, llm: LLM) -> dict:
    """The effective model settings a run executed under, for its details (no URL, no key)."""
    model = policy.model
    record = {"model": model.model, "structured_output": model.structured_output,
              "timeout_seconds": model.timeout_seconds, "max_retries": model.max_retries,
              "max_completion_tokens": model.max_completion_tokens}
    record.update(getattr(llm, "endpoint_settings", None) or {"endpoint": "offline"})
    if (judge := getattr(policy, "judge", None)) is not None:
        record["judge"] = {"model": judge.model, "endpoint": judge.endpoint, "timeout_seconds": judge.timeout_seconds}
    return record


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
    """Recover what lost workers and lost messages left behind, so the queue finishes without a person.

    A running run whose heartbeat went silent is marked interrupted (``worker_lost``) and retried
    automatically, up to ``RUN_AUTO_RETRIES`` times in a row (a person's retry starts a new count);
    a queued run whose task the broker refused is enqueued again at once (beat sends this sweep every
    ``SWEEP_SECONDS``), and one older than ``RUN_QUEUED_STALE_SECONDS`` lost its message and is
    enqueued again.
    Each step is a conditional UPDATE, so two sweeps at once, or a duplicate message, do no harm.
    Returns how many runs were marked interrupted.
    """
    limit = run_setting("RUN_AUTO_RETRIES", 2)
    queued_stale = run_setting("RUN_QUEUED_STALE_SECONDS", 300)
    now = timezone.now()
    stale = now - timedelta(seconds=stale_seconds if stale_seconds is not None else settings.RUN_STALE_SECONDS)
    count = 0
    for pk in list(Run.objects.filter(status=Run.Status.RUNNING, heartbeat_at__lt=stale)
                   .order_by("created_at", "pk").values_list("pk", flat=True)):
        with transaction.atomic():
            if not Run.objects.filter(pk=pk, status=Run.Status.RUNNING, heartbeat_at__lt=stale).update(
                    status=Run.Status.INTERRUPTED, stop_reason="worker_lost", finished_at=now):
                continue  # its worker came back, or another sweep took it
            count += 1
            _retry_automatically(Run.objects.get(pk=pk), limit)
    if count:
        log.warning("marked %d run(s) interrupted: worker_lost", count)
    _enqueue_not_sent(now)
    _enqueue_lost_messages(now - timedelta(seconds=queued_stale), now)
    return count


def run_setting(name: str, default: int) -> int:
    """A whole, non-negative number from the settings, else the environment, else ``default``."""
    value = getattr(settings, name, None)
    if value is None:
        value = os.environ.get(name, "").strip() or default
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a whole number, got {value!r}") from None
    if number < 0:
        raise ValueError(f"{name} must not be negative, got {value!r}")
    return number


def automatic_retries_before(run: Run) -> int:
    """How many automatic retries in a row led to ``run`` (0 for a run a person started or retried)."""
    count, current = 0, run
    while current.retry_of_id is not None:
        parent = Run.objects.only("details", "retry_of_id").get(pk=current.retry_of_id)
        if (parent.details or {}).get("retried_as") != current.pk:
            break
        count, current = count + 1, parent
    return count


def _retry_automatically(run: Run, limit: int) -> None:
    """Start the lost run again (same inputs, current policy, linked), or say why not."""
    done = automatic_retries_before(run)
    if done >= limit:
        note = f"not retried: {done} automatic retries already (RUN_AUTO_RETRIES); retry it by hand"
        Run.objects.filter(pk=run.pk).update(details={"automatic_retry": note})
        log.warning("run %s lost its worker again; %s", run.pk, note)
        return
    try:
        new = retry_run(run, user=run.triggered_by)
    except Exception as error:  # e.g. no active policy now: a person must look, the sweep goes on
        note = f"not retried: {type(error).__name__}: {error}"
        Run.objects.filter(pk=run.pk).update(details={"automatic_retry": note})
        log.error("run %s lost its worker and could not be retried: %s", run.pk, error)
        return
    Run.objects.filter(pk=run.pk).update(details={"automatic_retry": f"{done + 1} of {limit}", "retried_as": new.pk})
    log.warning("run %s lost its worker; retried automatically as run %s (%d of %d)", run.pk, new.pk, done + 1, limit)


def _enqueue_not_sent(now: datetime) -> None:
    """Send again each queued run whose task the broker refused (``enqueue_run``). The mark is taken
    off with a conditional update first, so two sweeps send it once; a refused send marks it again."""
    marked = Q(status=Run.Status.QUEUED, details__has_key=NOT_SENT)
    again = []
    for pk in list(Run.objects.filter(marked).order_by("created_at", "pk").values_list("pk", flat=True)[:1000]):
        if Run.objects.filter(marked, pk=pk).update(details={}, heartbeat_at=now):
            again.append(pk)
            transaction.on_commit(lambda pk=pk: enqueue_run(pk))
    if again:
        log.warning("enqueued %d queued run(s) whose task the broker had refused: %s", len(again), again)


def _enqueue_lost_messages(older: datetime, now: datetime) -> None:
    """Enqueue again each queued run created before ``older`` whose message never reached a worker.

    A queued run's ``heartbeat_at`` records when the sweep last enqueued it (taking the run overwrites it):
    a backlog that is only slow gets one extra message per threshold, not one per sweep.
    """
    waiting = Q(status=Run.Status.QUEUED, created_at__lt=older) & (
        Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=older)
    )
    again = []
    for pk in list(Run.objects.filter(waiting).order_by("created_at", "pk").values_list("pk", flat=True)):
        if Run.objects.filter(waiting, pk=pk).update(heartbeat_at=now):
            again.append(pk)
            transaction.on_commit(lambda pk=pk: enqueue_run(pk))  # refused: the next sweep tries again
    if again:
        log.warning("enqueued %d queued run(s) again, their message was lost: %s", len(again), again)

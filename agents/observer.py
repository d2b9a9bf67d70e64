"""The Django side of a run: the observer that persists each step as it happens, and the recording
of the final result (review, audit) in one transaction.

``record_result`` sends :data:`agents.signals.run_finished` inside that transaction: the reviewer
app opens an escalation from it, so what a person must decide commits with the result or not at all,
and this app never imports the reviewer app.

This is the storing boundary for what models write: every text passes through
:func:`agents.core.llm.endpoints.redact` first, so no configured key reaches a row (or a page).
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from agents.core.llm.base import CallRecord
from agents.core.llm.endpoints import redact
from agents.core.pipelines.frame import RunResult
from agents.core.stops import Stop
from agents.models import AuditDiff, ModelCall, Review, Run, TraceStep
from agents.signals import run_finished


def fit(model, field: str, value: str) -> str:
    """``value`` shortened to its column's length, with an ellipsis: an operator's long model name or
    URL is kept as a label, never refused by the database (PostgreSQL) in the middle of a run."""
    limit = model._meta.get_field(field).max_length
    return value if len(value) <= limit else value[: limit - 1] + "…"


STEP_COLUMNS = {"index", "phase", "status", "stop_reason", "decision", "duration_ms", "output"}


def release_connection() -> None:
    """Hand this thread's database connection back to the pool while it has nothing to ask (a run
    waiting on the model, a heartbeat thread between beats); the next query takes one again. Without
    a pool (SQLite, ``DATABASE_POOL_MAX_SIZE=0``) the connection is kept: reopening costs more than it
    saves. Never inside a transaction."""
    if getattr(connection, "pool", None) is not None and not connection.in_atomic_block:
        connection.close()


def insert(model, /, **values: Any) -> None:
    """One ``INSERT`` of a row of ``model``: ``values`` by attribute name (``run_id``), every other
    column its field's default, each value prepared by its field as the ORM prepares it (JSON, dates).
    The ORM's ``create`` without building an instance and compiling a query each time: the observer
    writes about ten rows a run. No model signals are sent (none is connected for these models)."""
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    quote = connection.ops.quote_name
    sql = (f"INSERT INTO {quote(model._meta.db_table)} ({', '.join(quote(f.column) for f in fields)}) "
           f"VALUES ({', '.join(['%s'] * len(fields))})")
    params = [f.get_db_prep_save(values[f.attname] if f.attname in values else f.get_default(), connection)
              for f in fields]
    unknown = values.keys() - {f.attname for f in fields}
    if unknown:
        raise TypeError(f"{model.__name__} has no column {', '.join(sorted(unknown))}")
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def update(model, pk: int, /, where: dict[str, Any] | None = None, **values: Any) -> int:
    """One ``UPDATE`` of the row ``pk`` of ``model``: ``values`` by field name, prepared by their fields,
    only while its columns equal ``where`` (by field name). Returns how many rows it changed (0 or 1)."""
    fields = [model._meta.get_field(name) for name in values]
    conditions = [model._meta.get_field(name) for name in where or {}]
    quote = connection.ops.quote_name
    sql = (f"UPDATE {quote(model._meta.db_table)} SET {', '.join(f'{quote(f.column)} = %s' for f in fields)} "
           f"WHERE {' AND '.join(f'{quote(f.column)} = %s' for f in [model._meta.pk, *conditions])}")
    params = [*(f.get_db_prep_save(values[f.name], connection) for f in fields), pk,
              *(f.get_db_prep_save(where[f.name], connection) for f in conditions)]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.rowcount


class RunLost(Exception):
    """The run is no longer this delivery's: the sweep ended it (``worker_lost``) while this worker was
    slow, or another delivery took it over. What this worker still has of it is not recorded."""


class DatabaseObserver:
    """Writes trace steps and model calls while the run is in flight, so pages can show them live.

    One INSERT per step or call, and one UPDATE of the run before each call (:meth:`on_call_start`).
    Its liveness is the heartbeat thread's (``agents.tasks.Heartbeat``), its phase and usage while in
    flight are read from these rows (``Run.show_progress``), and ``record_result`` writes the final
    ones. ``first_call``: columns of the run written with the first call's UPDATE (the model label
    and endpoint the worker chose), not in an UPDATE of their own.
    """

    def __init__(self, run_pk: int, delivery: int = 1, first_call: dict[str, Any] | None = None):
        self.run_pk = run_pk
        self.delivery = delivery
        self.first_call = dict(first_call or {})

    def on_step(self, run_id: str, entry: dict[str, Any]) -> None:
        entry = redact(entry)
        insert(
            TraceStep,
            run_id=self.run_pk,
            index=entry["index"],
            phase=entry["phase"],
            status=entry.get("status", "ok"),
            stop_reason=entry.get("stop_reason") or "",
            decision=entry.get("decision") or "",
            duration_ms=entry.get("duration_ms") or 0,
            measurements={k: v for k, v in entry.items() if k not in STEP_COLUMNS},
            output=entry.get("output"),
        )

    def on_call_start(self, run_id: str, stage: str, call_number: int) -> None:
        """The one UPDATE of the run while it is in flight: the stage and call it waits for, which the
        run page's in-flight line names (and a fresh heartbeat). Then the connection goes back to the
        pool for the length of the model call.

        The UPDATE holds only while the run is still this delivery's; when it is not (the sweep ended it
        while this worker was slow, or another delivery took it over), the run stops here as
        ``worker_lost``, before spending another call, and ``record_result`` keeps none of it."""
        if not update(Run, self.run_pk, where={"status": Run.Status.RUNNING, "deliveries": self.delivery},
                      heartbeat_at=timezone.now(), working_on=stage, working_call=call_number, **self.first_call):
            raise Stop("worker_lost", message=f"run {self.run_pk} is no longer delivery {self.delivery}'s")
        self.first_call = {}
        release_connection()  # the model call that follows needs none: 100 runs waiting share a few

    def on_model_call(self, run_id: str, record: CallRecord) -> None:
        record = redact(record)
        insert(
            ModelCall,
            run_id=self.run_pk, stage=record.stage, attempt=record.attempt, try_number=record.try_number,
            delivery=self.delivery, model=fit(ModelCall, "model", record.model), latency_ms=record.latency_ms,
            prompt_tokens=record.prompt_tokens, completion_tokens=record.completion_tokens,
            outcome=record.outcome, raw=record.raw, error=record.error, note=record.note,
            request=[dict(message) for message in record.messages],
        )


def draft_of(result: RunResult) -> str:
    for entry in result.history:
        if entry["phase"] == "draft" and isinstance(entry["output"], str):
            return entry["output"]
    return ""


RESULT_FIELDS = ["status", "stop_reason", "phase", "working_on", "working_call", "outcome", "answer",
                 "selected_route", "escalation_reason", "candidate", "guard", "details", "model_label", "endpoint",
                 "duration_ms", "finished_at", "model_calls", "prompt_tokens", "completion_tokens", "cost"]
REVIEW_FIELDS = ["kind", "decision", "severity", "issues", "instructions", "reason", "quality", "completeness"]
AUDIT_FIELDS = ["before_text", "after_text", "changed", "before_hash", "after_hash", "before_chars", "after_chars",
                "delta", "length_increase_pct", "risks_count", "required_changes_count", "diff_unit", "unified_diff",
                "diff_excerpt"]


@transaction.atomic
def record_result(run_pk: int, result: RunResult, run: Run | None = None) -> Run:
    """Store the result on the run, with its review and audit; tell whoever listens (an escalation).

    ``run``: the row as the worker loaded it when it took the run, so nothing is read again: one UPDATE of the
    result's columns and one INSERT … ON CONFLICT UPDATE each for the review and the audit.

    The UPDATE holds only while the run is still running under the delivery that took it. A worker
    that was only slow may find its run ended by the sweep (``worker_lost``, already retried as
    another run) or taken over by another delivery: then nothing is written and :class:`RunLost` is
    raised, so a run never ends twice and its lineage never holds two answers.
    """
    result = redact(result)
    if run is None:
        run = Run.objects.get(pk=run_pk)
    delivery = run.deliveries
    run.status = Run.Status.OK if result.ok else Run.Status.STOPPED
    run.stop_reason = result.stop_reason
    run.phase = result.phase or ""
    run.working_on, run.working_call = "", None
    run.outcome = result.outcome or ""
    run.answer = result.answer or ""
    run.selected_route = result.selected_route or ""
    run.escalation_reason = result.escalation_reason or ""
    run.candidate = result.candidate or ""
    run.guard = result.guard
    run.details = result.details
    run.model_label = fit(Run, "model_label", result.model)
    run.duration_ms = result.duration_ms
    run.finished_at = timezone.now()
    run.model_calls = result.usage.get("model_calls", 0)
    run.prompt_tokens = result.usage.get("prompt_tokens", 0)
    run.completion_tokens = result.usage.get("completion_tokens", 0)
    run.cost = Decimal(str(result.usage.get("cost", 0)))
    if not Run.objects.filter(pk=run.pk, status=Run.Status.RUNNING, deliveries=delivery).update(
            **{name: getattr(run, name) for name in RESULT_FIELDS}):
        raise RunLost(f"run {run.pk} is no longer running under delivery {delivery}; its result is not recorded")

    verdict = result.review or result.critique
    if verdict:
        review = Review(
            run=run, kind=Review.Kind.REVIEW if result.review else Review.Kind.CRITIQUE,
            decision=verdict["decision"], severity=verdict.get("severity") or "",
            issues=verdict.get("issues") or verdict.get("risks") or [],
            instructions=verdict.get("fix_plan") or verdict.get("required_changes") or [],
            reason=verdict.get("reason") or "", quality=verdict.get("quality") or "",
            completeness=verdict.get("completeness") or "",
        )
        Review.objects.bulk_create([review], update_conflicts=True, unique_fields=["run"],
                                   update_fields=REVIEW_FIELDS)
    draft = draft_of(result)
    if result.audit:
        audit = result.audit
        row = AuditDiff(run=run, before_text=draft, after_text=result.answer or result.candidate or draft,
                        **{k: audit[k] for k in AUDIT_FIELDS[2:]})
        AuditDiff.objects.bulk_create([row], update_conflicts=True, unique_fields=["run"], update_fields=AUDIT_FIELDS)
    run_finished.send(sender=Run, run=run, result=result, draft=draft)
    return run

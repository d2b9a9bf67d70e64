"""Runs: start one (with an Idempotency-Key), read one, list them."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Any, Literal

from django.db import IntegrityError, transaction
from django.db.models import Prefetch
from django.http import Http404
from django.utils import timezone
from ninja import Field, Header, Query, Router, Schema, Status

from agents.core.inputs import control_character
from agents.core.stops import explain
from agents.core.text import canonical_json
from agents.models import Run
from agents.tasks import start_run as start_pipeline_run
from reviewer.api.common import (
    ID_PATTERN,
    PAGE_MAX,
    PIPELINES,
    ApiError,
    DecisionOut,
    Error,
    IdFilter,
    Offset,
    RowId,
    check_strings,
    decision_out,
    decisions_query,
    need,
    rows_of,
)
from reviewer.api.incidents import get_incident
from reviewer.desk.forms import StartRunForm
from reviewer.models import ApiIdempotencyKey, Escalation

router = Router(tags=["runs"])
# A request that took an Idempotency-Key and died before making its run frees the key after this.
IDEMPOTENCY_ABANDONED_AFTER = timedelta(minutes=2)


class RunStart(Schema):
    pipeline: Literal[PIPELINES]  # type: ignore[valid-type]
    goal: str = Field(..., description="What a text pipeline writes; for routing, the ticket text.")
    incident_id: str | None = Field(None, pattern=ID_PATTERN, max_length=64,
                                    description="Needed by the text pipelines.")


class EscalationBrief(Schema):
    id: int
    status: str
    decided_by: str | None
    decisions: list[DecisionOut]


class RunOut(Schema):
    run_id: str
    pipeline: str
    status: str
    stop_reason: str
    explanation: str
    phase: str | None
    outcome: str | None
    answer: str | None
    selected_route: str | None
    review: dict[str, Any] | None
    critique: dict[str, Any] | None
    audit: dict[str, Any] | None
    escalation_reason: str | None
    candidate: str | None
    guard: dict[str, Any] | None
    details: dict[str, Any]
    trace: list[dict[str, Any]]
    model_calls: list[dict[str, Any]]
    model: str
    usage: dict[str, Any]
    duration_ms: float | None
    goal: str
    incident_id: str | None
    incident_version: int | None
    created_at: datetime
    finished_at: datetime | None
    escalation: EscalationBrief | None


def _escalation_brief(escalation: Escalation | None) -> dict | None:
    if escalation is None:
        return None
    return {"id": escalation.pk, "status": escalation.status,
            "decided_by": escalation.decided_by.username if escalation.decided_by_id else None,
            "decisions": [decision_out(d) for d in
                          rows_of(escalation, "decisions", decisions_query().filter(escalation=escalation))]}


def _run_out(run: Run) -> dict:
    steps, calls = list(run.steps.all()), list(run.calls.all())
    run.show_progress(steps, calls)
    review = run.related("review")
    audit = run.related("audit")
    verdict = None
    if review is not None:
        verdict = {"decision": review.decision, "severity": review.severity, "issues": review.issues,
                   "instructions": review.instructions, "reason": review.reason}
    return {
        "run_id": str(run.pk), "pipeline": run.pipeline, "status": run.status, "stop_reason": run.stop_reason,
        "explanation": explain(run.stop_reason) if run.stop_reason else "",
        "phase": run.phase or None, "outcome": run.outcome or None, "answer": run.answer or None,
        "selected_route": run.selected_route or None,
        "review": verdict if review is not None and review.kind == "review" else None,
        "critique": verdict if review is not None and review.kind == "critique" else None,
        "audit": None if audit is None else {
            "changed": audit.changed, "before_hash": audit.before_hash, "after_hash": audit.after_hash,
            "delta": audit.delta, "length_increase_pct": audit.length_increase_pct,
            "unified_diff": audit.unified_diff},
        "escalation_reason": run.escalation_reason or None, "candidate": run.candidate or None,
        "guard": run.guard, "details": run.details or {},
        "trace": [{"index": s.index, "phase": s.phase, "status": s.status, "stop_reason": s.stop_reason,
                   "decision": s.decision, "duration_ms": s.duration_ms, "measurements": s.measurements,
                   "output": s.output} for s in steps],
        "model_calls": [{"stage": c.stage, "attempt": c.attempt, "try_number": c.try_number, "model": c.model,
                         "latency_ms": c.latency_ms, "prompt_tokens": c.prompt_tokens,
                         "completion_tokens": c.completion_tokens, "outcome": c.outcome} for c in calls],
        "model": run.model_label,
        "usage": {"model_calls": run.model_calls, "prompt_tokens": run.prompt_tokens,
                  "completion_tokens": run.completion_tokens, "cost": float(run.cost)},
        "duration_ms": run.duration_ms, "goal": run.goal,
        "incident_id": run.incident.incident_id if run.incident_id else None,
        "incident_version": run.incident_version.number if run.incident_version_id else None,
        "created_at": run.created_at, "finished_at": run.finished_at,
        "escalation": _escalation_brief(run.related("escalation")),
    }


def _load_run(pk: int) -> Run:
    run = (Run.objects.select_related("incident", "incident_version", "review", "audit", "escalation",
                                      "escalation__decided_by").filter(pk=pk).first())
    if run is None:
        raise Http404(f"No run {pk}.")
    return run


def fingerprint(body: RunStart) -> str:
    """What identifies a start request's body for its Idempotency-Key: the SHA-256 of its canonical JSON."""
    return hashlib.sha256(canonical_json(body.model_dump()).encode("utf-8", "replace")).hexdigest()


def _reserve_key(user, key: str, fingerprint: str) -> ApiIdempotencyKey | Run:
    """The key's row, newly taken by this request; or the run an earlier request with it made.
    Raises 422 for another body, 409 while the first request is still being processed."""
    for _ in range(2):
        try:
            with transaction.atomic():
                return ApiIdempotencyKey.objects.create(user=user, key=key, fingerprint=fingerprint)
        except IntegrityError:
            pass
        first = ApiIdempotencyKey.objects.filter(user=user, key=key).select_related("run").first()
        if first is None:
            continue  # the first request gave the key up meanwhile
        if first.fingerprint != fingerprint:
            raise ApiError(422, "This Idempotency-Key was used with a different request body; "
                                "use a new key for a new request.")
        if first.run is not None:
            return first.run
        if first.created_at > timezone.now() - IDEMPOTENCY_ABANDONED_AFTER:
            raise ApiError(409, "A request with this Idempotency-Key is still being processed; retry shortly.")
        ApiIdempotencyKey.objects.filter(pk=first.pk, run__isnull=True).delete()  # abandoned: free it
    raise ApiError(409, "A request with this Idempotency-Key is still being processed; retry shortly.")


@router.post("/runs",
          response={200: RunOut, 202: RunOut, 400: Error, 401: Error, 403: Error, 404: Error, 409: Error, 422: Error})
def start_run(request, body: RunStart,
              idempotency_key: str | None = Header(None, alias="Idempotency-Key", max_length=200)):
    """Start a run (queued; poll GET /api/runs/{id}). With an ``Idempotency-Key`` header, the same key
    and body return the same run (200), another body → 422, while the first is in progress → 409."""
    need(request, "agents.start_run")
    key = idempotency_key or ""
    if key and (control_character(key) or not key.strip()):
        raise ApiError(422, "The Idempotency-Key is at most 200 printable characters.")
    check_strings(body.goal, "goal")
    incident = None
    if body.incident_id is not None:
        incident = get_incident(body.incident_id)
    field = "ticket" if body.pipeline == "routing" else "goal"
    form = StartRunForm({"pipeline": body.pipeline, field: body.goal}, incident=incident)
    if not form.is_valid():
        raise ApiError(422, "The run cannot start as sent; see detail.",
                       detail={name: [str(m) for m in errors] for name, errors in form.errors.items()})
    if body.pipeline != "routing" and incident is None:
        raise ApiError(422, "A text pipeline writes about an incident: give incident_id.",
                       detail=[{"loc": ["incident_id"], "msg": "required for text pipelines"}])
    reserved = None
    if key:
        reserved = _reserve_key(request.user, key, fingerprint(body))
        if isinstance(reserved, Run):
            return Status(200, _run_out(_load_run(reserved.pk)))
    try:
        # The run and its key in one transaction: a committed run keeps its key whatever happens
        # next (a broker that is down included: the sweep enqueues the run), so a retry finds it.
        with transaction.atomic():
            run, _ = start_pipeline_run(pipeline=body.pipeline, goal=form.run_goal, incident=incident,
                                        user=request.user)
            if reserved is not None:
                ApiIdempotencyKey.objects.filter(pk=reserved.pk).update(run=run)
    except BaseException:
        if reserved is not None:
            reserved.delete()  # no run was made: the key is free for a retry
        raise
    return Status(202, _run_out(_load_run(run.pk)))


@router.get("/runs/{run_id}", response={200: RunOut, 401: Error, 403: Error, 404: Error, 422: Error})
def read_run(request, run_id: int = RowId):
    need(request, "agents.view_run")
    return _run_out(_load_run(run_id))


@router.get("/runs", response={200: list[RunOut], 401: Error, 403: Error, 422: Error})
def list_runs(request, pipeline: Literal[PIPELINES] | None = None,  # type: ignore[valid-type]
              status: Literal[tuple(Run.Status.values)] | None = None,  # type: ignore[valid-type]
              stop_reason: str | None = Query(None, max_length=200),
              incident_id: str | None = IdFilter,
              limit: int = Query(20, ge=1, le=PAGE_MAX), offset: int = Offset):
    need(request, "agents.view_run")
    check_strings([stop_reason], "filter")
    # The run list page's filters, plus the incident.
    rows = (Run.objects.filtered(pipeline=pipeline or "", status=status or "", stop_reason=stop_reason or "")
            .select_related("incident", "incident_version", "review", "audit", "escalation", "escalation__decided_by")
            .order_by("-created_at", "-id"))
    if incident_id:
        rows = rows.filter(incident__incident_id=incident_id)
    rows = rows.prefetch_related("steps", "calls", Prefetch("escalation__decisions", queryset=decisions_query()))
    return [_run_out(run) for run in rows[offset:offset + limit]]



"""The JSON API of SPEC §9, under /api/, with django-ninja: the OpenAPI document at /api/openapi.json
and interactive docs at /api/docs.

Requests carry a per-user token (``Authorization: Bearer gr_...``, created in admin) and act with the
user's role permissions, the same rules as the pages. Decisions go through ``reviewer.decisions`` and
runs through ``agents.tasks.start_run``, as the pages do. Every error is JSON: ``message``, and the
stop reason or the validation ``detail`` where there is one.
"""

from __future__ import annotations

import hashlib
import math
from datetime import date, datetime, timedelta
from typing import Any, Literal

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.http import Http404
from django.utils import timezone
from ninja import Field, Header, NinjaAPI, Path, Query, Schema, Status
from ninja.errors import AuthenticationError, HttpError
from ninja.errors import ValidationError as NinjaValidationError
from ninja.security import HttpBearer

from agents.core.inputs import control_character
from agents.core.policy import PIPELINE_CHOICES
from agents.core.stops import explain
from agents.core.text import canonical_json
from agents.core.units import UNITS
from agents.models import Incident, IncidentFact, Run
from agents.tasks import start_run as start_pipeline_run
from reviewer import decisions, publishing
from reviewer.forms import MAX_JSON_DEPTH, StartRunForm
from reviewer.models import ApiIdempotencyKey, ApiToken, Decision, Escalation, PublishedUpdate
from reviewer.permissions import MESSAGES

PIPELINES = tuple(name for name, _ in PIPELINE_CHOICES)
Unit = Literal[tuple(UNITS)]  # type: ignore[valid-type]
# A request that took an Idempotency-Key and died before making its run frees the key after this.
IDEMPOTENCY_ABANDONED_AFTER = timedelta(minutes=2)
PAGE_MAX = 200


class TokenAuth(HttpBearer):
    def authenticate(self, request, token):
        user = ApiToken.user_for(token) if token and len(token) <= 200 else None
        if user is not None:
            request.user = user
        return user


api = NinjaAPI(title="Gated review API", version="1", auth=TokenAuth(), urls_namespace="api",
               description="Incidents, runs and escalations of the gated review product (SPEC §9). "
                           "Authenticate with `Authorization: Bearer <token>`; admin creates tokens.")


# ---------------------------------------------------------------- errors


class ApiError(Exception):
    def __init__(self, code: int, message: str, *, stop_reason: str | None = None, detail: Any = None, **extra):
        super().__init__(message)
        self.code, self.message, self.stop_reason, self.detail, self.extra = code, message, stop_reason, detail, extra


class Error(Schema):
    message: str
    stop_reason: str | None = None
    detail: Any = None
    decided_by: str | None = None
    status: str | None = None


def _error(request, code: int, message: str, **fields):
    body = {"message": message, **{k: v for k, v in fields.items() if v is not None}}
    return api.create_response(request, body, status=code)


@api.exception_handler(ApiError)
def _api_error(request, exc: ApiError):
    return _error(request, exc.code, exc.message, stop_reason=exc.stop_reason, detail=exc.detail, **exc.extra)


@api.exception_handler(NinjaValidationError)
def _validation_error(request, exc: NinjaValidationError):
    detail = [{k: v for k, v in e.items() if k in ("type", "loc", "msg")} for e in exc.errors]
    return _error(request, 422, "The request is not valid; see detail.", detail=detail)


@api.exception_handler(AuthenticationError)
def _unauthenticated(request, exc):
    return _error(request, 401, "Send a valid API token: Authorization: Bearer <token> (admin creates them).")


@api.exception_handler(PermissionDenied)
def _forbidden(request, exc):
    return _error(request, 403, str(exc) or "Your role does not allow this.")


@api.exception_handler(Http404)
def _not_found(request, exc):
    return _error(request, 404, str(exc) or "Not found.")


@api.exception_handler(HttpError)
def _http_error(request, exc: HttpError):
    # ninja's own: 400 for a body that is not JSON ("Cannot parse request body").
    return _error(request, exc.status_code, str(exc))


@api.exception_handler(Exception)
def _unexpected(request, exc):
    # The last resort: still JSON with a message (and logged by Django's request logger).
    import logging

    logging.getLogger("django.request").exception("API error", exc_info=exc)
    return _error(request, 500, "The server failed to answer this request; it has been logged.")


def _need(request, perm: str) -> None:
    if not request.user.has_perm(perm):
        raise PermissionDenied(MESSAGES.get(perm, "Your role does not allow this."))


def _text(value: str | None, what: str) -> None:
    if isinstance(value, str) and (found := control_character(value)):
        raise ApiError(422, f"The {what} contains a control character (U+{ord(found):04X}); remove it.",
                       detail=[{"loc": [what], "msg": "control character"}])


def _strings(value: Any, what: str, depth: int = 0) -> None:
    """Every text inside a JSON value, checked for control characters (and lone surrogates); numbers
    must be finite (Python's JSON reads NaN, which no database stores) and nesting shallow."""
    if depth > MAX_JSON_DEPTH:
        raise ApiError(422, f"The {what} is nested more than {MAX_JSON_DEPTH} levels deep.",
                       detail=[{"loc": [what], "msg": "too deep"}])
    if isinstance(value, float) and not math.isfinite(value):
        raise ApiError(422, f"The {what} holds a number that is not finite ({value}).",
                       detail=[{"loc": [what], "msg": "not finite"}])
    if isinstance(value, str):
        _text(value, what)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ApiError(422, f"The {what} is not valid Unicode text.",
                           detail=[{"loc": [what], "msg": "lone surrogate"}]) from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _strings(key, what, depth + 1)
            _strings(item, what, depth + 1)
    elif isinstance(value, list):
        for item in value:
            _strings(item, what, depth + 1)


# ---------------------------------------------------------------- incidents

ID_PATTERN = r"^[-a-zA-Z0-9_]+$"
IncidentId = Field(..., pattern=ID_PATTERN, max_length=64)
IncidentPath = Path(..., pattern=ID_PATTERN, max_length=64)
IdFilter = Query(None, pattern=ID_PATTERN, max_length=64)


class FactIn(Schema):
    key: str = Field(..., pattern=r"^[-a-zA-Z0-9_]+$", max_length=64)
    label: str | None = Field(None, max_length=100)
    value: str | int | float | None = Field(..., description="The value; null removes the fact (in an update).")
    unit: Unit | None = None


class FactOut(Schema):
    key: str
    label: str
    value: str | int | float
    unit: str
    shown: str


class IncidentFields(Schema):
    title: str | None = Field(None, min_length=1, max_length=200)
    severity: str | None = Field(None, max_length=8)
    status: str | None = Field(None, max_length=200)
    regions: list[str] | None = Field(None, max_length=20)
    report_date: date | None = None
    facts: list[FactIn] | None = Field(None, max_length=50, description="Upserted by key; a null value removes one.")
    approved_actions: list[str] | None = Field(None, max_length=50)
    key_messages: list[str] | None = Field(None, max_length=50)
    policy_hints: dict[str, Any] | None = None


class IncidentCreate(IncidentFields):
    incident_id: str = IncidentId
    title: str = Field(..., min_length=1, max_length=200)


class VersionOut(Schema):
    number: int
    created_at: datetime
    created_by: str | None
    changes: list[dict[str, Any]]


class IncidentOut(Schema):
    incident_id: str
    title: str
    severity: str
    status: str
    regions: list[str]
    report_date: date
    facts: list[FactOut]
    approved_actions: list[Any]
    key_messages: list[Any]
    policy_hints: dict[str, Any]
    version: int | None
    versions: list[VersionOut]


def _incident_out(incident: Incident) -> dict:
    versions = list(incident.versions.select_related("created_by")[:20])
    return {
        "incident_id": incident.incident_id, "title": incident.title, "severity": incident.severity,
        "status": incident.status, "regions": list(incident.regions or []), "report_date": incident.report_date,
        "facts": [{"key": f.key, "label": f.label, "value": f.typed_value, "unit": f.unit, "shown": f.shown}
                  for f in incident.fact_list()],
        "approved_actions": incident.approved_actions or [], "key_messages": incident.key_messages or [],
        "policy_hints": incident.policy_hints or {},
        "version": versions[0].number if versions else None,
        "versions": [{"number": v.number, "created_at": v.created_at, "changes": v.changes,
                      "created_by": v.created_by.username if v.created_by else None} for v in versions],
    }


def _get_incident(incident_id: str) -> Incident:
    incident = Incident.objects.filter(incident_id=incident_id).first()
    if incident is None:
        raise Http404(f"No incident “{incident_id}”.")
    return incident


def _messages(error: ValidationError) -> dict:
    return error.message_dict if hasattr(error, "error_dict") else {"__all__": error.messages}


def _apply(incident: Incident, data: IncidentFields, user) -> None:
    """Write the given fields and facts, then record a version (if anything changed)."""
    fields = data.model_dump(exclude_unset=True, exclude={"facts", "incident_id"})
    _strings(fields, "incident")
    for name, value in fields.items():
        if value is None and name in ("title", "severity", "status", "report_date"):
            raise ApiError(422, f"“{name}” cannot be null.", detail=[{"loc": [name], "msg": "null"}])
        if name in ("regions", "approved_actions", "key_messages") and any(not v.strip() for v in value or []):
            raise ApiError(422, f"“{name}” holds an empty text.", detail=[{"loc": [name], "msg": "empty"}])
        setattr(incident, name, value if value is not None else type(getattr(incident, name))())
    if len(canonical_json(incident.policy_hints or {})) > 16_000:
        raise ApiError(422, "The policy hints are too large.", detail=[{"loc": ["policy_hints"], "msg": "too large"}])
    try:
        incident.full_clean(validate_unique=False)
    except ValidationError as error:
        raise ApiError(422, "The incident is not valid; see detail.", detail=_messages(error)) from None
    with transaction.atomic():
        incident.save()
        existing = {f.key: f for f in incident.fact_list()}
        for position, fact in enumerate(data.facts or [], start=len(existing)):
            _strings([fact.label, fact.value], f"fact “{fact.key}”")
            row = existing.get(fact.key)
            if fact.value is None:
                if row is not None:
                    row.delete()
                continue
            value = fact.value if isinstance(fact.value, str) else repr(fact.value)
            row = row or IncidentFact(incident=incident, key=fact.key, position=position, unit="text", label=fact.key)
            row.value = value
            row.label = fact.label if fact.label is not None else row.label
            row.unit = fact.unit or row.unit
            try:
                row.full_clean(exclude=["incident"])
            except ValidationError as error:
                transaction.set_rollback(True)
                raise ApiError(422, f"The fact “{fact.key}” is not valid; see detail.",
                               detail=_messages(error)) from None
            row.save()
        incident.record_version(user)


@api.get("/incidents", response={200: list[IncidentOut], 401: Error, 403: Error, 422: Error}, tags=["incidents"])
def list_incidents(request, status: str | None = Query(None, max_length=200),
                   severity: str | None = Query(None, max_length=8),
                   limit: int = Query(50, ge=1, le=PAGE_MAX), offset: int = Query(0, ge=0, le=10_000_000)):
    _need(request, "agents.view_incident")
    _strings([status, severity], "filter")
    rows = Incident.objects.order_by("-report_date", "incident_id")
    if status:
        rows = rows.filter(status=status)
    if severity:
        rows = rows.filter(severity=severity)
    return [_incident_out(i) for i in rows.prefetch_related("fact_rows")[offset:offset + limit]]


@api.post("/incidents", response={201: IncidentOut, 400: Error, 401: Error, 403: Error, 409: Error, 422: Error},
          tags=["incidents"])
def create_incident(request, body: IncidentCreate):
    _need(request, "agents.add_incident")
    _text(body.incident_id, "incident id")
    if Incident.objects.filter(incident_id=body.incident_id).exists():
        raise ApiError(409, f"The incident “{body.incident_id}” exists; update it with PATCH or PUT.")
    try:
        with transaction.atomic():
            incident = Incident(incident_id=body.incident_id)
            _apply(incident, body, request.user)
    except IntegrityError:
        raise ApiError(409, f"The incident “{body.incident_id}” was created meanwhile; update it instead.") from None
    return Status(201, _incident_out(incident))


@api.get("/incidents/{incident_id}", response={200: IncidentOut, 401: Error, 403: Error, 404: Error, 422: Error},
         tags=["incidents"])
def read_incident(request, incident_id: str = IncidentPath):
    _need(request, "agents.view_incident")
    return _incident_out(_get_incident(incident_id))


@api.patch("/incidents/{incident_id}",
           response={200: IncidentOut, 400: Error, 401: Error, 403: Error, 404: Error, 422: Error},
           tags=["incidents"])
def update_incident(request, body: IncidentFields, incident_id: str = IncidentPath):
    """A partial update: the fields given change, facts are upserted by key; a new version if anything changed."""
    _need(request, "agents.change_incident")
    incident = _get_incident(incident_id)
    with transaction.atomic():
        _apply(incident, body, request.user)
    return _incident_out(incident)


@api.put("/incidents/{incident_id}",
         response={200: IncidentOut, 201: IncidentOut, 400: Error, 401: Error, 403: Error, 409: Error, 422: Error},
         tags=["incidents"])
def upsert_incident(request, body: IncidentFields, incident_id: str = IncidentPath):
    """For an alerting tool's webhook: create the incident with this id, or update it as PATCH does."""
    incident = Incident.objects.filter(incident_id=incident_id).first()
    if incident is not None:
        _need(request, "agents.change_incident")
        with transaction.atomic():
            _apply(incident, body, request.user)
        return Status(200, _incident_out(incident))
    _need(request, "agents.add_incident")
    if not body.title:
        raise ApiError(422, "A new incident needs a title.", detail=[{"loc": ["title"], "msg": "required"}])
    try:
        with transaction.atomic():
            incident = Incident(incident_id=incident_id)
            _apply(incident, body, request.user)
    except IntegrityError:
        raise ApiError(409, f"The incident “{incident_id}” was created meanwhile; send the update again.") from None
    return Status(201, _incident_out(incident))


# ---------------------------------------------------------------- runs


class RunStart(Schema):
    pipeline: Literal[PIPELINES]  # type: ignore[valid-type]
    goal: str = Field(..., description="What a text pipeline writes; for routing, the ticket text.")
    incident_id: str | None = Field(None, pattern=ID_PATTERN, max_length=64,
                                    description="Needed by the text pipelines.")


class DecisionOut(Schema):
    id: int
    action: str
    actor: str
    at: datetime
    final_text: str
    note: str
    text_hash: str
    incident_version: int | None
    guard_results: dict[str, Any]


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


def _decision_out(d: Decision) -> dict:
    return {"id": d.pk, "action": d.action, "actor": d.actor.username, "at": d.at, "final_text": d.final_text,
            "note": d.note, "text_hash": d.text_hash, "guard_results": d.guard_results or {},
            "incident_version": d.incident_version.number if d.incident_version_id else None}


def _escalation_brief(escalation: Escalation | None) -> dict | None:
    if escalation is None:
        return None
    return {"id": escalation.pk, "status": escalation.status,
            "decided_by": escalation.decided_by.username if escalation.decided_by_id else None,
            "decisions": [_decision_out(d) for d in
                          escalation.decisions.select_related("actor", "incident_version")]}


def _run_out(run: Run) -> dict:
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
                   "output": s.output} for s in run.steps.all()],
        "model_calls": [{"stage": c.stage, "attempt": c.attempt, "try_number": c.try_number, "model": c.model,
                         "latency_ms": c.latency_ms, "prompt_tokens": c.prompt_tokens,
                         "completion_tokens": c.completion_tokens, "outcome": c.outcome} for c in run.calls.all()],
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


def _claim_key(user, key: str, fingerprint: str) -> ApiIdempotencyKey | Run:
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


@api.post("/runs",
          response={200: RunOut, 202: RunOut, 400: Error, 401: Error, 403: Error, 404: Error, 409: Error, 422: Error},
          tags=["runs"])
def start_run(request, body: RunStart,
              idempotency_key: str | None = Header(None, alias="Idempotency-Key", max_length=200)):
    """Start a run (queued; poll GET /api/runs/{id}). With an ``Idempotency-Key`` header, the same key
    and body return the same run (200), another body → 422, while the first is in progress → 409."""
    _need(request, "agents.start_run")
    key = idempotency_key or ""
    if key and (control_character(key) or not key.strip()):
        raise ApiError(422, "The Idempotency-Key is at most 200 printable characters.")
    _strings(body.goal, "goal")
    incident = None
    if body.incident_id is not None:
        incident = _get_incident(body.incident_id)
    field = "ticket" if body.pipeline == "routing" else "goal"
    form = StartRunForm({"pipeline": body.pipeline, field: body.goal}, incident=incident)
    if not form.is_valid():
        raise ApiError(422, "The run cannot start as sent; see detail.",
                       detail={name: [str(m) for m in errors] for name, errors in form.errors.items()})
    if body.pipeline != "routing" and incident is None:
        raise ApiError(422, "A text pipeline writes about an incident: give incident_id.",
                       detail=[{"loc": ["incident_id"], "msg": "required for text pipelines"}])
    claimed = None
    if key:
        claimed = _claim_key(request.user, key, fingerprint(body))
        if isinstance(claimed, Run):
            return Status(200, _run_out(_load_run(claimed.pk)))
    try:
        run, _ = start_pipeline_run(pipeline=body.pipeline, goal=form.run_goal, incident=incident, user=request.user)
    except BaseException:
        if claimed is not None:
            claimed.delete()  # the key is free for a retry
        raise
    if claimed is not None:
        ApiIdempotencyKey.objects.filter(pk=claimed.pk).update(run=run)
    return Status(202, _run_out(_load_run(run.pk)))


@api.get("/runs/{run_id}", response={200: RunOut, 401: Error, 403: Error, 404: Error, 422: Error}, tags=["runs"])
def read_run(request, run_id: int = Path(..., ge=1, le=2**62)):
    _need(request, "agents.view_run")
    return _run_out(_load_run(run_id))


@api.get("/runs", response={200: list[RunOut], 401: Error, 403: Error, 422: Error}, tags=["runs"])
def list_runs(request, pipeline: Literal[PIPELINES] | None = None,  # type: ignore[valid-type]
              status: Literal[tuple(Run.Status.values)] | None = None,  # type: ignore[valid-type]
              stop_reason: str | None = Query(None, max_length=200),
              incident_id: str | None = IdFilter,
              limit: int = Query(20, ge=1, le=PAGE_MAX), offset: int = Query(0, ge=0, le=10_000_000)):
    _need(request, "agents.view_run")
    _strings([stop_reason], "filter")
    rows = Run.objects.select_related("incident", "incident_version", "review", "audit", "escalation",
                                      "escalation__decided_by").order_by("-created_at", "-id")
    if pipeline:
        rows = rows.filter(pipeline=pipeline)
    if status:
        rows = rows.filter(status=status)
    if stop_reason:
        rows = rows.filter(stop_reason=stop_reason)
    if incident_id:
        rows = rows.filter(incident__incident_id=incident_id)
    return [_run_out(run) for run in rows[offset:offset + limit]]


# ---------------------------------------------------------------- escalations


class EscalationOut(Schema):
    id: int
    run_id: int
    pipeline: str
    incident_id: str | None
    status: str
    stop_reason: str
    explanation: str
    reason: str
    draft: str
    candidate: str
    guard: dict[str, Any] | None
    opened_at: datetime
    claimed_by: str | None
    decided_by: str | None
    decided_at: datetime | None
    final_text: str
    facts_changed: list[dict[str, Any]]
    facts_changed_text: str
    decisions: list[DecisionOut]


class DecideIn(Schema):
    action: Literal["approve", "edit_approve", "reject"]
    text: str = Field("", max_length=20_000, description="The edited text (edit_approve).")
    note: str = Field("", max_length=5_000, description="Justification (edit_approve over violations) or reason.")
    confirm_changed_facts: bool = Field(False, description="Approve although the incident's facts changed since.")


def _escalation_out(e: Escalation) -> dict:
    return {
        "id": e.pk, "run_id": e.run_id, "pipeline": e.run.pipeline,
        "incident_id": e.run.incident.incident_id if e.run.incident_id else None,
        "status": e.status, "stop_reason": e.stop_reason, "explanation": e.explanation, "reason": e.reason,
        "draft": e.draft, "candidate": e.candidate, "guard": e.guard, "opened_at": e.opened_at,
        "claimed_by": e.claimed_by.username if e.claimed_by_id else None,
        "decided_by": e.decided_by.username if e.decided_by_id else None,
        "decided_at": e.decided_at, "final_text": e.final_text,
        "facts_changed": e.facts_changes, "facts_changed_text": e.facts_changed_text,
        "decisions": [_decision_out(d) for d in e.decisions.select_related("actor", "incident_version")],
    }


def _load_escalation(pk: int) -> Escalation:
    escalation = (Escalation.objects.select_related("run", "run__incident", "run__incident_version", "claimed_by",
                                                    "decided_by").filter(pk=pk).first())
    if escalation is None:
        raise Http404(f"No escalation {pk}.")
    return escalation


@api.get("/escalations", response={200: list[EscalationOut], 401: Error, 403: Error, 422: Error},
         tags=["escalations"])
def list_escalations(request, pipeline: Literal[PIPELINES] | None = None,  # type: ignore[valid-type]
                     stop_reason: str | None = Query(None, max_length=200),
                     incident_id: str | None = IdFilter,
                     limit: int = Query(50, ge=1, le=PAGE_MAX), offset: int = Query(0, ge=0, le=10_000_000)):
    """The pending escalations, oldest first."""
    _need(request, "reviewer.view_escalation")
    _strings([stop_reason], "filter")
    rows = Escalation.objects.pending().select_related(
        "run", "run__incident", "run__incident_version", "claimed_by", "decided_by").with_latest_facts()
    if pipeline:
        rows = rows.filter(run__pipeline=pipeline)
    if stop_reason:
        rows = rows.filter(stop_reason=stop_reason)
    if incident_id:
        rows = rows.filter(run__incident__incident_id=incident_id)
    return [_escalation_out(e) for e in rows.order_by("opened_at", "id")[offset:offset + limit]]


@api.get("/escalations/{escalation_id}", response={200: EscalationOut, 401: Error, 403: Error, 404: Error,
                                                   422: Error}, tags=["escalations"])
def read_escalation(request, escalation_id: int = Path(..., ge=1, le=2**62)):
    _need(request, "reviewer.view_escalation")
    return _escalation_out(_load_escalation(escalation_id))


@api.post("/escalations/{escalation_id}/decision",
          response={201: EscalationOut, 400: Error, 401: Error, 403: Error, 404: Error, 409: Error, 422: Error},
          tags=["escalations"])
def decide(request, body: DecideIn, escalation_id: int = Path(..., ge=1, le=2**62)):
    """Decide once: approve, edit then approve (the guard checks the text; violations need a note),
    or reject (with a reason). Someone quicker → 409 naming who decided."""
    _need(request, decisions.DECIDE_PERMISSION)
    _strings([body.text, body.note], "decision")
    if not Escalation.objects.filter(pk=escalation_id).exists():
        raise Http404(f"No escalation {escalation_id}.")
    try:
        outcome = decisions.decide(escalation_id, request.user, body.action, text=body.text, note=body.note,
                                   confirm_changed_facts=body.confirm_changed_facts)
    except decisions.DecisionInvalid as invalid:
        escalation = _load_escalation(escalation_id)
        detail = decisions.guard_edit(escalation, body.text) if body.action == "edit_approve" and body.text.strip() \
            else None
        raise ApiError(422, str(invalid), stop_reason=escalation.stop_reason, detail=detail) from None
    escalation = _load_escalation(escalation_id)
    if not outcome.won:
        who = escalation.decided_by.username if escalation.decided_by_id else "someone"
        raise ApiError(409, f"Already {escalation.status} by {who} at {escalation.decided_at:%Y-%m-%d %H:%M:%S %Z}.",
                       decided_by=who, status=escalation.status)
    return Status(201, _escalation_out(escalation))


# ---------------------------------------------------------------- published updates (SPEC §11)


class DeliveryOut(Schema):
    channel: str
    kind: str
    status: str
    attempts: int
    last_error: str
    delivered_at: datetime | None


class UpdateOut(Schema):
    incident_id: str
    version: int
    text: str
    text_hash: str
    approved_by: str
    published_by: str | None
    published_at: datetime
    run_id: int | None
    escalation_id: int | None
    policy_snapshot_id: str
    reason: str
    deliveries: list[DeliveryOut]


def _update_out(update: PublishedUpdate) -> dict:
    return {
        "incident_id": update.incident.incident_id, "version": update.version, "text": update.text,
        "text_hash": update.text_hash, "approved_by": update.approved_by,
        "published_by": update.published_by.username if update.published_by_id else None,
        "published_at": update.published_at, "run_id": update.source_run_id, "escalation_id": update.escalation_id,
        "policy_snapshot_id": update.policy_snapshot_id, "reason": update.reason,
        "deliveries": [{"channel": d.channel.name, "kind": d.channel.kind, "status": d.status,
                        "attempts": d.attempts, "last_error": d.last_error, "delivered_at": d.delivered_at}
                       for d in update.deliveries.all()],
    }


@api.get("/incidents/{incident_id}/updates",
         response={200: list[UpdateOut], 401: Error, 403: Error, 404: Error, 422: Error}, tags=["publishing"])
def list_updates(request, incident_id: str = IncidentPath,
                 limit: int = Query(50, ge=1, le=PAGE_MAX), offset: int = Query(0, ge=0, le=10_000_000)):
    """The incident's published updates, newest first, with each delivery's state."""
    _need(request, "agents.view_incident")
    incident = _get_incident(incident_id)
    return [_update_out(u) for u in incident.published_updates.for_timeline()[offset:offset + limit]]


@api.post("/runs/{run_id}/publish",
          response={201: UpdateOut, 401: Error, 403: Error, 404: Error, 409: Error, 422: Error}, tags=["publishing"])
def publish_run(request, run_id: int = Path(..., ge=1, le=2**62)):
    """Publish the run's text, as the page's Publish button does: a run that passed every gate, or
    the text a lead approved on its escalation. Refused, or published before → 409."""
    _need(request, publishing.PUBLISH_PERMISSION)
    run = Run.objects.select_related("incident").filter(pk=run_id).first()
    if run is None:
        raise Http404(f"No run {run_id}.")
    try:
        text, escalation = publishing.publishable(run)
        update = publishing.publish(run.incident, text, actor=request.user, source_run=run, escalation=escalation)
    except publishing.AlreadyPublished as error:
        raise ApiError(409, str(error), version=error.update.version) from None
    except publishing.PublishRefused as error:
        raise ApiError(409, str(error)) from None
    return Status(201, _update_out(PublishedUpdate.objects.for_timeline().get(pk=update.pk)))

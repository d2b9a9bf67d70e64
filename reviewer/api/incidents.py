"""Incidents: read, create, update (PATCH) and upsert (PUT, for an alerting tool's webhook)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated, Any, Literal

from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import Prefetch
from django.http import Http404
from ninja import Field, Query, Router, Schema, Status

from agents import incidents as actions
from agents.core.inputs import ITEM_MAX_CHARS, LIST_MAX_ITEMS
from agents.core.text import canonical_json
from agents.core.units import UNITS
from agents.models import Incident, IncidentVersion
from agents.models.incidents import STATES, VISIBILITIES
from reviewer.api.common import (
    PAGE_MAX,
    ApiError,
    Error,
    IncidentId,
    IncidentPath,
    Offset,
    check_strings,
    check_text,
    need,
    rows_of,
)
from reviewer.models import StatusComponent
from reviewer.permissions import MESSAGES

router = Router(tags=["incidents"])
HINTS_PERMISSION = "agents.set_policy_hints"
Unit = Literal[tuple(UNITS)]  # type: ignore[valid-type]
State = Literal[tuple(value for value, _ in STATES)]  # type: ignore[valid-type]
Visibility = Literal[tuple(value for value, _ in VISIBILITIES)]  # type: ignore[valid-type]


class FactIn(Schema):
    key: str = Field(..., pattern=r"^[-a-zA-Z0-9_]+$", max_length=64)
    label: str | None = Field(None, max_length=100)
    value: str | int | float | None = Field(..., description="The value; null removes the fact (in an update).")
    unit: Unit | None = None
    visibility: Visibility | None = Field(
        None, description="public (the default for a new fact), or internal: for people and the reviewer, "
                          "never words for customers.")


class FactOut(Schema):
    key: str
    label: str
    value: str | int | float
    unit: str
    visibility: Visibility
    shown: str


class IncidentFields(Schema):
    title: str | None = Field(None, min_length=1, max_length=200)
    severity: str | None = Field(None, max_length=8)
    state: State | None = Field(None, description="The lifecycle state, as a status page names it.")
    status: str | None = Field(None, max_length=200)
    regions: list[str] | None = Field(None, max_length=20)
    components: list[Annotated[str, Field(max_length=100)]] | None = Field(
        None, max_length=LIST_MAX_ITEMS, description="The status page components the incident affects, by name; each "
                                                     "must be a component of the status page.")
    report_date: date | None = None
    facts: list[FactIn] | None = Field(None, max_length=50, description="Upserted by key; a null value removes one.")
    approved_actions: list[str] | None = Field(None, description=f"At most {LIST_MAX_ITEMS} entries of at most "
                                                                f"{ITEM_MAX_CHARS} characters.")
    key_messages: list[str] | None = Field(None, description=f"At most {LIST_MAX_ITEMS} entries of at most "
                                                            f"{ITEM_MAX_CHARS} characters.")
    policy_hints: dict[str, Any] | None = Field(None, description=(
        "Set by policy admins; another role may send them only unchanged (else 403)."))


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
    state: State
    status: str
    regions: list[str]
    components: list[str]
    report_date: date
    facts: list[FactOut]
    approved_actions: list[Any]
    key_messages: list[Any]
    policy_hints: dict[str, Any]
    version: int | None
    versions: list[VersionOut]


VERSIONS_SHOWN = 20


def _versions_query():
    return IncidentVersion.objects.select_related("created_by").order_by("incident_id", "-number")


def _incident_out(incident: Incident) -> dict:
    shown = _versions_query().filter(incident=incident)[:VERSIONS_SHOWN]
    versions = rows_of(incident, "versions", shown)[:VERSIONS_SHOWN]
    return {
        "incident_id": incident.incident_id, "title": incident.title, "severity": incident.severity,
        "state": incident.state, "status": incident.status, "regions": list(incident.regions or []),
        "components": list(incident.components or []), "report_date": incident.report_date,
        "facts": [{"key": f.key, "label": f.label, "value": f.typed_value, "unit": f.unit,
                   "visibility": f.visibility, "shown": f.shown} for f in incident.fact_list()],
        "approved_actions": incident.approved_actions or [], "key_messages": incident.key_messages or [],
        "policy_hints": incident.policy_hints or {},
        "version": versions[0].number if versions else None,
        "versions": [{"number": v.number, "created_at": v.created_at, "changes": v.changes,
                      "created_by": v.created_by.username if v.created_by else None} for v in versions],
    }


def unknown_components(names: list[str]) -> list[str]:
    """The names among ``names`` that no status page component has: an incident names only components
    the status page shows (the API and the incident page refuse the others)."""
    known = set(StatusComponent.objects.filter(name__in=names).values_list("name", flat=True))
    return [name for name in names if name not in known]


def get_incident(incident_id: str) -> Incident:
    incident = Incident.objects.filter(incident_id=incident_id).first()
    if incident is None:
        raise Http404(f"No incident “{incident_id}”.")
    return incident


def _messages(error: ValidationError) -> dict:
    return error.message_dict if hasattr(error, "error_dict") else {"__all__": error.messages}


def _may_set_hints(user, incident_id: str, hints: dict) -> None:
    """Policy hints are set by policy admins (in admin, and here): anyone else may send them only as
    they are, so a webhook that echoes the incident back still works."""
    if user.has_perm(HINTS_PERMISSION):
        return
    current = Incident.objects.filter(incident_id=incident_id).values_list("policy_hints", flat=True).first()
    if hints != (current or {}):
        raise PermissionDenied(MESSAGES[HINTS_PERMISSION])


def _apply(incident_id: str, data: IncidentFields, user, *, create: bool, update: bool) -> Incident:
    """Check the request's fields and facts, then write them through the one incident action, which
    records a version if anything changed. Nothing is written when any of them is refused."""
    fields = data.model_dump(exclude_unset=True, exclude={"facts", "incident_id"})
    if "policy_hints" in fields:
        _may_set_hints(user, incident_id, fields["policy_hints"] or {})
    check_strings(fields, "incident")
    for name, value in fields.items():
        if value is None and name in ("title", "severity", "state", "status", "report_date"):
            raise ApiError(422, f"“{name}” cannot be null.", detail=[{"loc": [name], "msg": "null"}])
        if name in ("regions", "components", "approved_actions", "key_messages") and any(
                not v.strip() for v in value or []):
            raise ApiError(422, f"“{name}” holds an empty text.", detail=[{"loc": [name], "msg": "empty"}])
    if unknown := unknown_components(fields.get("components") or []):
        raise ApiError(422, f"No status page component is named {', '.join(f'“{c}”' for c in unknown)}.",
                       detail=[{"loc": ["components"], "msg": "unknown component"}])
    # null clears a list or the hints
    fields = {name: ({} if name == "policy_hints" else []) if value is None else value
              for name, value in fields.items()}
    if len(canonical_json(fields.get("policy_hints") or {})) > 16_000:
        raise ApiError(422, "The policy hints are too large.", detail=[{"loc": ["policy_hints"], "msg": "too large"}])
    for fact in data.facts or []:
        check_strings([fact.label, fact.value], f"fact “{fact.key}”")
    facts = None if data.facts is None else [fact.model_dump() for fact in data.facts]
    try:
        return actions.update_incident(incident_id, user=user, create=create, update=update, upsert_facts=facts,
                                       **fields).incident
    except actions.FactInvalid as error:
        raise ApiError(422, f"The fact “{error.key}” is not valid; see detail.", detail=_messages(error)) from None
    except ValidationError as error:
        found = _messages(error)
        said = [message for messages in found.values() for message in messages]
        # One refusal (a list's bound, the context's size) is the message itself; several, see detail.
        message = said[0] if len(said) == 1 else "The incident is not valid; see detail."
        raise ApiError(422, message, detail=found) from None
    except Incident.DoesNotExist:
        raise Http404(f"No incident “{incident_id}”.") from None


@router.get("/incidents", response={200: list[IncidentOut], 401: Error, 403: Error, 422: Error})
def list_incidents(request, status: str | None = Query(None, max_length=200),
                   state: State | None = None, severity: str | None = Query(None, max_length=8),
                   limit: int = Query(50, ge=1, le=PAGE_MAX), offset: int = Offset):
    need(request, "agents.view_incident")
    check_strings([status, severity], "filter")
    rows = Incident.objects.order_by("-report_date", "incident_id")
    if status:
        rows = rows.filter(status=status)
    if state:
        rows = rows.filter(state=state)
    if severity:
        rows = rows.filter(severity=severity)
    rows = rows.prefetch_related("fact_rows", Prefetch("versions", queryset=_versions_query()))
    return [_incident_out(i) for i in rows[offset:offset + limit]]


@router.post("/incidents", response={201: IncidentOut, 400: Error, 401: Error, 403: Error, 409: Error, 422: Error})
def create_incident(request, body: IncidentCreate):
    need(request, "agents.add_incident")
    check_text(body.incident_id, "incident id")
    if Incident.objects.filter(incident_id=body.incident_id).exists():
        raise ApiError(409, f"The incident “{body.incident_id}” exists; update it with PATCH or PUT.")
    try:
        incident = _apply(body.incident_id, body, request.user, create=True, update=False)
    except actions.IncidentExists:
        raise ApiError(409, f"The incident “{body.incident_id}” was created meanwhile; update it instead.") from None
    return Status(201, _incident_out(incident))


@router.get("/incidents/{incident_id}", response={200: IncidentOut, 401: Error, 403: Error, 404: Error, 422: Error})
def read_incident(request, incident_id: str = IncidentPath):
    need(request, "agents.view_incident")
    return _incident_out(get_incident(incident_id))


@router.patch("/incidents/{incident_id}",
           response={200: IncidentOut, 400: Error, 401: Error, 403: Error, 404: Error, 422: Error})
def update_incident(request, body: IncidentFields, incident_id: str = IncidentPath):
    """A partial update: the fields given change, facts are upserted by key; a new version if anything changed."""
    need(request, "agents.change_incident")
    get_incident(incident_id)
    return _incident_out(_apply(incident_id, body, request.user, create=False, update=True))


@router.put("/incidents/{incident_id}",
         response={200: IncidentOut, 201: IncidentOut, 400: Error, 401: Error, 403: Error, 409: Error, 422: Error})
def upsert_incident(request, body: IncidentFields, incident_id: str = IncidentPath):
    """For an alerting tool's webhook: create the incident with this id, or update it as PATCH does."""
    incident = Incident.objects.filter(incident_id=incident_id).first()
    if incident is not None:
        need(request, "agents.change_incident")
        return Status(200, _incident_out(_apply(incident_id, body, request.user, create=False, update=True)))
    need(request, "agents.add_incident")
    if not body.title:
        raise ApiError(422, "A new incident needs a title.", detail=[{"loc": ["title"], "msg": "required"}])
    try:
        incident = _apply(incident_id, body, request.user, create=True, update=False)
    except actions.IncidentExists:
        raise ApiError(409, f"The incident “{incident_id}” was created meanwhile; send the update again.") from None
    return Status(201, _incident_out(incident))



"""What every resource of the JSON API shares: the token authentication, the error shape, the
checks on untrusted input, and the rows and schemas more than one resource returns."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from django.core.exceptions import PermissionDenied
from ninja import Field, Path, Query, Schema
from ninja.security import HttpBearer

from agents.core.inputs import control_character
from agents.core.policy import PIPELINE_CHOICES
from reviewer.desk.forms import MAX_JSON_DEPTH
from reviewer.models import ApiToken, ChangeRequest, Decision
from reviewer.permissions import MESSAGES

PIPELINES = tuple(name for name, _ in PIPELINE_CHOICES)
PAGE_MAX = 200


class TokenAuth(HttpBearer):
    def authenticate(self, request, token):
        row = ApiToken.live(token) if token and len(token) <= 200 else None
        if row is None:
            return None
        if row.expired:
            raise ApiError(401, f"This API token expired on {row.expires_text}; ask for a new one.")
        row.mark_used()
        request.user, request.auth_token = row.user, row
        return row.user


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
    taken_by: str | None = None
    claimed_by: str | None = None  # taken_by under its former name, kept for clients (docs/api.md)


def need(request, perm: str) -> None:
    if not request.user.has_perm(perm):
        raise PermissionDenied(MESSAGES.get(perm, "Your role does not allow this."))


def check_text(value: str | None, what: str) -> None:
    if isinstance(value, str) and (found := control_character(value)):
        raise ApiError(422, f"The {what} contains a control character (U+{ord(found):04X}); remove it.",
                       detail=[{"loc": [what], "msg": "control character"}])


def check_strings(value: Any, what: str, depth: int = 0) -> None:
    """Every text inside a JSON value, checked for control characters (and lone surrogates); numbers
    must be finite (Python's JSON reads NaN, which no database stores) and nesting shallow."""
    if depth > MAX_JSON_DEPTH:
        raise ApiError(422, f"The {what} is nested more than {MAX_JSON_DEPTH} levels deep.",
                       detail=[{"loc": [what], "msg": "too deep"}])
    if isinstance(value, float) and not math.isfinite(value):
        raise ApiError(422, f"The {what} holds a number that is not finite ({value}).",
                       detail=[{"loc": [what], "msg": "not finite"}])
    if isinstance(value, str):
        check_text(value, what)
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise ApiError(422, f"The {what} is not valid Unicode text.",
                           detail=[{"loc": [what], "msg": "lone surrogate"}]) from None
    elif isinstance(value, dict):
        for key, item in value.items():
            check_strings(key, what, depth + 1)
            check_strings(item, what, depth + 1)
    elif isinstance(value, list):
        for item in value:
            check_strings(item, what, depth + 1)



ID_PATTERN = r"^[-a-zA-Z0-9_]+$"
IncidentId = Field(..., pattern=ID_PATTERN, max_length=64)
IncidentPath = Path(..., pattern=ID_PATTERN, max_length=64)
IdFilter = Query(None, pattern=ID_PATTERN, max_length=64)


RowId = Path(..., ge=1, le=2**62)
Offset = Query(0, ge=0, le=10_000_000)


def rows_of(obj, name: str, query) -> list:
    """The related rows ``name`` of ``obj``: from a list endpoint's prefetch (one query for the whole
    page), else ``query`` (one object)."""
    if name in getattr(obj, "_prefetched_objects_cache", {}):
        return list(getattr(obj, name).all())
    return list(query)


def decisions_query():
    return Decision.objects.select_related("actor", "incident_version").order_by("at", "id")


def change_requests_query():
    return ChangeRequest.objects.select_related("requested_by").order_by("requested_at", "pk")


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


def decision_out(d: Decision) -> dict:
    return {"id": d.pk, "action": d.action, "actor": d.actor.username, "at": d.at, "final_text": d.final_text,
            "note": d.note, "text_hash": d.text_hash, "guard_results": d.guard_results or {},
            "incident_version": d.incident_version.number if d.incident_version_id else None}



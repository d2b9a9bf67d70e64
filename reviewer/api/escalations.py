"""Escalations: the pending ones, one with its decisions and change requests, and deciding one."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from django.db.models import Prefetch
from django.http import Http404
from ninja import Field, Query, Router, Schema, Status

from reviewer.api.common import (
    PAGE_MAX,
    PIPELINES,
    ApiError,
    DecisionOut,
    Error,
    IdFilter,
    Offset,
    RowId,
    change_requests_query,
    check_strings,
    decision_out,
    decisions_query,
    need,
    rows_of,
)
from reviewer.desk import approvals, decisions, snoozing
from reviewer.models import Approval, Escalation

router = Router(tags=["escalations"])


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
    taken_by: str | None
    claimed_by: str | None = Field(None, description="The same as taken_by, under its former name.")
    decided_by: str | None
    decided_at: datetime | None
    final_text: str
    facts_changed: list[dict[str, Any]]
    facts_changed_text: str
    decisions: list[DecisionOut]
    change_requests: list[ChangeRequestOut]
    required_approvals: int = Field(description="Distinct approvals of the current text it needs (1: as before).")
    approval_group: str = Field(description="The group whose members' approvals count.")
    approval_rule: str = Field(description="The approval rule that applied when it opened, as it read then.")
    text_version: int = Field(description="The version of the text under review; approvals count on it only.")
    text_by: str | None = Field(description="Who wrote the current version (null: the model); they cannot approve it.")
    approvals_so_far: int
    approvals: list[ApprovalOut]
    snoozed_until: datetime | None = Field(description=(
        "“Not now”: out of the inbox until this time, undecided (null: not snoozed, or the time has come)."))


class ApprovalOut(Schema):
    id: int
    user: str
    at: datetime
    text_version: int
    counted: bool = Field(description="False once superseded by an edit, a revision or a request for changes.")
    superseded_at: datetime | None
    superseded_because: str


class ChangeRequestOut(Schema):
    id: int
    status: str
    requested_by: str
    requested_at: datetime
    instructions: str
    revision: str
    ok: bool
    stop_reason: str
    guard: dict[str, Any] | None
    finished_at: datetime | None


class SnoozeIn(Schema):
    until: datetime | None = Field(description=(
        "Out of the inbox until this time (within 7 days, with its offset); null brings it back now."))


class DecideIn(Schema):
    action: Literal["approve", "edit_approve", "reject", "request_changes"]
    text: str = Field("", max_length=20_000, description="The edited text (edit_approve).")
    note: str = Field("", max_length=5_000, description=(
        "Justification (edit_approve over violations), reason (reject), or the instructions for the model "
        "(request_changes)."))
    confirm_changed_facts: bool = Field(False, description="Approve although the incident's facts changed since.")
    decide_anyway: bool = Field(False, description=(
        "Decide although another lead took the escalation (without it: 409 naming who took it)."))
    text_version: int | None = Field(None, ge=1, le=2**31 - 1, description=(
        "The text version you read (approve): a text that changed since is not approved (409)."))


def _escalation_out(e: Escalation) -> dict:
    return {
        "id": e.pk, "run_id": e.run_id, "pipeline": e.run.pipeline,
        "incident_id": e.run.incident.incident_id if e.run.incident_id else None,
        "status": e.status, "stop_reason": e.stop_reason, "explanation": e.explanation, "reason": e.reason,
        "draft": e.draft, "candidate": e.candidate, "guard": e.guard, "opened_at": e.opened_at,
        "taken_by": e.taken_by.username if e.taken_by_id else None,
        "claimed_by": e.taken_by.username if e.taken_by_id else None,  # taken_by's former name, kept for clients
        "decided_by": e.decided_by.username if e.decided_by_id else None,
        "decided_at": e.decided_at, "final_text": e.final_text,
        "facts_changed": e.facts_changes, "facts_changed_text": e.facts_changed_text,
        "decisions": [decision_out(d) for d in rows_of(e, "decisions", decisions_query().filter(escalation=e))],
        "change_requests": [
            {"id": c.pk, "status": c.status, "requested_by": c.requested_by.username, "requested_at": c.requested_at,
             "instructions": c.instructions, "revision": c.revision, "ok": c.ok, "stop_reason": c.stop_reason,
             "guard": c.guard, "finished_at": c.finished_at}
            for c in rows_of(e, "change_requests", change_requests_query().filter(escalation=e))],
        "required_approvals": e.required_approvals, "approval_group": approvals.group_name(e),
        "approval_rule": e.approval_rule_text, "text_version": e.text_version,
        "text_by": e.text_by.username if e.text_by_id else None,
        "approvals": (given := [
            {"id": a.pk, "user": a.user.username, "at": a.at, "text_version": a.text_version,
             "counted": a.superseded_at is None and a.text_version == e.text_version,
             "superseded_at": a.superseded_at, "superseded_because": a.superseded_because}
            for a in rows_of(e, "approvals", _approvals_query().filter(escalation=e))]),
        "approvals_so_far": sum(a["counted"] for a in given),
        "snoozed_until": e.snoozed_until if e.is_snoozed else None,
    }


def _approvals_query():
    return Approval.objects.select_related("user").order_by("at", "id")


def _load_escalation(pk: int) -> Escalation:
    escalation = (Escalation.objects.select_related("run", "run__incident", "run__incident_version", "taken_by",
                                                    "decided_by", "text_by", "approval_group").filter(pk=pk).first())
    if escalation is None:
        raise Http404(f"No escalation {pk}.")
    return escalation


@router.get("/escalations", response={200: list[EscalationOut], 401: Error, 403: Error, 422: Error})
def list_escalations(request, pipeline: Literal[PIPELINES] | None = None,  # type: ignore[valid-type]
                     stop_reason: str | None = Query(None, max_length=200),
                     incident_id: str | None = IdFilter,
                     limit: int = Query(50, ge=1, le=PAGE_MAX), offset: int = Offset):
    """The pending escalations, oldest first."""
    need(request, "reviewer.view_escalation")
    check_strings([stop_reason], "filter")
    # The inbox's filters, plus the incident.
    rows = Escalation.objects.pending().filtered(pipeline=pipeline or "", stop_reason=stop_reason or "").select_related(
        "run", "run__incident", "run__incident_version", "taken_by", "decided_by", "text_by", "approval_group",
    ).with_latest_facts()
    if incident_id:
        rows = rows.filter(run__incident__incident_id=incident_id)
    rows = rows.prefetch_related(Prefetch("decisions", queryset=decisions_query()),
                                 Prefetch("change_requests", queryset=change_requests_query()),
                                 Prefetch("approvals", queryset=_approvals_query()))
    return [_escalation_out(e) for e in rows.order_by("opened_at", "id")[offset:offset + limit]]


@router.get("/escalations/{escalation_id}", response={200: EscalationOut, 401: Error, 403: Error, 404: Error,
                                                   422: Error})
def read_escalation(request, escalation_id: int = RowId):
    need(request, "reviewer.view_escalation")
    return _escalation_out(_load_escalation(escalation_id))


@router.post("/escalations/{escalation_id}/decision",
          response={201: EscalationOut, 202: EscalationOut, 400: Error, 401: Error, 403: Error, 404: Error,
                    409: Error, 422: Error})
def decide(request, body: DecideIn, escalation_id: int = RowId):
    """Decide once: approve, edit then approve (the guard checks the text; violations need a note),
    or reject (with a reason). Someone quicker → 409 naming who decided. An escalation another lead
    took it → 409 naming them, unless ``decide_anyway`` is true (a request for changes too).

    ``request_changes`` is not a decision: the note's instructions go to the model for one revision
    that the patch guard checks; 202, the escalation stays pending and its ``change_requests`` show
    the revision when it is back. Another request still in flight → 409.

    Under a quorum (``required_approvals``), an approval that does not complete it is counted: 202, still
    pending. An edit replaces the text to approve (202) and resets the approvals. Refused approvals: 403
    for a person outside ``approval_group`` or who wrote the current text (``text_by``), 409 for a second
    approval of the same text or a ``text_version`` that is no longer the current one."""
    need(request, decisions.DECIDE_PERMISSION)
    check_strings([body.text, body.note], "decision")
    if not Escalation.objects.filter(pk=escalation_id).exists():
        raise Http404(f"No escalation {escalation_id}.")
    holder = decisions.other_holder(_load_escalation(escalation_id), request.user)
    if holder is not None and not body.decide_anyway:  # a request for changes too: it resets the approvals
        raise ApiError(409, f"{holder.get_full_name() or holder.username} took this escalation; send "
                            "“decide_anyway”: true to decide it in their place.", taken_by=holder.username,
                       **{"claimed_by": holder.username})  # taken_by under its former name, kept for clients
    if body.action == "request_changes":
        try:
            decisions.request_changes(escalation_id, request.user, body.note)
        except decisions.ChangeInFlight as busy:
            raise ApiError(409, str(busy), stop_reason=_load_escalation(escalation_id).stop_reason) from None
        except decisions.DecisionInvalid as invalid:
            raise ApiError(422, str(invalid), stop_reason=_load_escalation(escalation_id).stop_reason) from None
        return Status(202, _escalation_out(_load_escalation(escalation_id)))
    try:
        outcome = decisions.decide(escalation_id, request.user, body.action, text=body.text, note=body.note,
                                   confirm_changed_facts=body.confirm_changed_facts, text_version=body.text_version)
    except approvals.ApprovalRefused as refused:
        raise ApiError(refused.status, str(refused), stop_reason=_load_escalation(escalation_id).stop_reason) from None
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
    if escalation.status == Escalation.Status.PENDING:  # counted under a quorum, or an edit: not decided yet
        return Status(202, _escalation_out(escalation))
    return Status(201, _escalation_out(escalation))




@router.post("/escalations/{escalation_id}/snooze",
             response={200: EscalationOut, 400: Error, 401: Error, 403: Error, 404: Error, 422: Error})
def snooze(request, body: SnoozeIn, escalation_id: int = RowId):
    """“Not now”: the escalation leaves the inbox until ``until``, undecided, and comes back by itself;
    ``until`` null brings it back now. Only a pending escalation (422 otherwise, or for a time past or
    more than 7 days away). The deadline still applies, and anyone may still decide it."""
    need(request, decisions.DECIDE_PERMISSION)
    _load_escalation(escalation_id)
    try:
        if body.until is None:
            snoozing.wake(escalation_id, request.user)
        else:
            if body.until.tzinfo is None:
                raise decisions.DecisionInvalid("Give the time with its offset (e.g. 2026-11-24T15:00:00+00:00).")
            snoozing.snooze(escalation_id, request.user, body.until)
    except decisions.DecisionInvalid as invalid:
        raise ApiError(422, str(invalid), stop_reason=_load_escalation(escalation_id).stop_reason) from None
    return _escalation_out(_load_escalation(escalation_id))

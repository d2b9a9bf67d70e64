"""Published updates: what is ready to publish, an incident's updates with their deliveries, and
publishing a run's text."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from django.http import Http404
from ninja import Field, Query, Router, Schema, Status

from agents.models import Run
from reviewer.api.common import PAGE_MAX, ApiError, Error, IdFilter, IncidentPath, Offset, RowId, need
from reviewer.api.incidents import get_incident
from reviewer.models import PublishedUpdate
from reviewer.outbox import publishing
from reviewer.outbox.ready import publish_queue

router = Router(tags=["publishing"])


class DeliveryOut(Schema):
    channel: str
    kind: str
    status: str
    attempts: int
    last_error: str
    delivered_at: datetime | None


ComponentStatusName = Literal["operational", "degraded_performance", "partial_outage", "major_outage"]


class ComponentIn(Schema):
    component_id: int
    status: ComponentStatusName


class ComponentOut(Schema):
    component_id: int
    name: str
    status: ComponentStatusName


class PublishIn(Schema):
    """What the status page shows with the text; each field left out is carried over from the
    incident's last update (the title and components) or its state."""
    public_title: str | None = Field(None, max_length=publishing.MAX_TITLE_CHARS)
    state: Literal["investigating", "identified", "monitoring", "resolved"] | None = None
    impact: Literal["none", "minor", "major", "critical"] | None = None
    components: list[ComponentIn] | None = Field(None, max_length=100)
    acknowledge_overrides: bool = Field(
        False, description="Publish a text whose approving lead overrode guard findings (listed on the escalation).")
    confirm_impact: bool = Field(
        False, description="Publish an update of a P0/P1 incident that marks no component as affected, or with an "
                           "impact below major (refused with 409 without it).")
    confirm_repeat: bool = Field(
        False, description="Publish a text with no sentence the incident's last update did not say (refused with "
                           "409 without it).")


class UpdateOut(Schema):
    incident_id: str
    version: int
    text: str
    public_title: str
    state: str
    impact: str
    components: list[ComponentOut]
    overridden: list[dict]
    acknowledged_by: str | None
    text_hash: str
    approved_by: str
    published_by: str | None
    published_at: datetime
    run_id: int | None
    escalation_id: int | None
    policy_snapshot_id: str
    reason: str
    deliveries: list[DeliveryOut]
    note: str | None = Field(None, description="On a publication whose deliveries could not be enqueued (the "
                                               "task queue is down): delivery will follow. The update is "
                                               "published all the same.")


def _update_out(update: PublishedUpdate) -> dict:
    return {
        "incident_id": update.incident.incident_id, "version": update.version, "text": update.text,
        "public_title": update.public_title, "state": update.state, "impact": update.impact,
        "components": [{"component_id": row.component_id, "name": row.component.name, "status": row.status}
                       for row in update.component_statuses.all()],
        "overridden": update.overridden,
        "acknowledged_by": update.acknowledged_by.username if update.acknowledged_by_id else None,
        "text_hash": update.text_hash, "approved_by": update.approved_by,
        "published_by": update.published_by.username if update.published_by_id else None,
        "published_at": update.published_at, "run_id": update.source_run_id, "escalation_id": update.escalation_id,
        "policy_snapshot_id": update.policy_snapshot_id, "reason": update.reason,
        "deliveries": [{"channel": d.channel.name, "kind": d.channel.kind, "status": d.status,
                        "attempts": d.attempts, "last_error": d.last_error, "delivered_at": d.delivered_at}
                       for d in update.deliveries.all()],
    }


@router.get("/incidents/{incident_id}/updates",
         response={200: list[UpdateOut], 401: Error, 403: Error, 404: Error, 422: Error})
def list_updates(request, incident_id: str = IncidentPath,
                 limit: int = Query(50, ge=1, le=PAGE_MAX), offset: int = Offset):
    """The incident's published updates, newest first, with each delivery's state."""
    need(request, "agents.view_incident")
    incident = get_incident(incident_id)
    return [_update_out(u) for u in incident.published_updates.for_timeline()[offset:offset + limit]]


class ReadyOut(Schema):
    run_id: int
    incident_id: str
    pipeline: str
    text: str = Field(..., description="The text as it would be published: as approved, or the run's answer.")
    ready_since: datetime = Field(..., description="When the lead approved it, or the run passed every gate.")
    approved_by: str | None = Field(..., description="The approving lead; null for a run that passed every gate.")
    escalation_id: int | None
    edited: bool = Field(..., description="The lead edited the text before approving it.")
    overridden: list[dict] = Field(..., description="Guard findings the lead overrode: publishing them needs "
                                                    "acknowledge_overrides.")
    newer_version: int | None = Field(..., description="An update of the incident published after this text was "
                                                       "approved (it is still listed: a lead asked for it).")


def _ready_out(run) -> dict:
    escalation = run.related("escalation")
    return {"run_id": run.pk, "incident_id": run.incident.incident_id, "pipeline": run.pipeline,
            "text": escalation.final_text if escalation else run.answer, "ready_since": run.ready_at,
            "approved_by": escalation.decided_by.username if escalation and escalation.decided_by_id else None,
            "escalation_id": escalation.pk if escalation else None,
            "edited": bool(escalation) and escalation.outcome == "edited",
            "overridden": escalation.overridden if escalation else [], "newer_version": run.newer_version}


@router.get("/ready", response={200: list[ReadyOut], 401: Error, 403: Error, 422: Error})
def list_ready(request, incident_id: str | None = IdFilter,
               limit: int = Query(50, ge=1, le=PAGE_MAX), offset: int = Offset):
    """The texts ready to publish (the desk's "Ready to publish" page): approved by a lead, or passed
    every gate, not published yet, drafted in the last 24 hours; the incident with the most recent one
    first. Publish one with ``POST /runs/{run_id}/publish``."""
    need(request, publishing.PUBLISH_PERMISSION)
    runs = Run.objects.filter(incident__incident_id=incident_id) if incident_id else None
    return [_ready_out(run) for run in publish_queue(runs)[offset:offset + limit]]


@router.post("/runs/{run_id}/publish",
          response={201: UpdateOut, 400: Error, 401: Error, 403: Error, 404: Error, 409: Error, 422: Error})
def publish_run(request, run_id: int = RowId, body: PublishIn | None = None):
    """Publish the run's text, as the page's Publish button does: a run that passed every gate, or
    the text a lead approved on its escalation, with its public title, state, impact and components
    (the guard checks them). A text whose approving lead overrode guard findings needs
    ``acknowledge_overrides``. An update at odds with the incident's severity (a P0/P1 with no component
    affected, or an impact below major) needs ``confirm_impact``; one that repeats the last update,
    ``confirm_repeat``: without them 409, whose ``detail`` names the switches (``confirm``), what each
    confirms (``problems``) and the text's new sentences. Refused, or published before → 409.
    Published while the task queue is down → 201 all the same, with a ``note`` that delivery will follow."""
    need(request, publishing.PUBLISH_PERMISSION)
    run = Run.objects.select_related("incident").filter(pk=run_id).first()
    if run is None:
        raise Http404(f"No run {run_id}.")
    try:
        text, escalation = publishing.publishable(run)
        update = publishing.publish(run.incident, text, actor=request.user, source_run=run, escalation=escalation,
                                    fields=_fields(body or PublishIn()))
    except publishing.AlreadyPublished as error:
        raise ApiError(409, str(error), version=error.update.version) from None
    except publishing.NeedsConfirmation as error:
        last = publishing.last_published(run.incident)
        raise ApiError(409, str(error), detail={
            "confirm": list(error.needed), "problems": error.needed,
            "new_sentences": publishing.new_sentences(last.text, text) if last else None}) from None
    except publishing.PublishRefused as error:
        raise ApiError(409, str(error)) from None
    out = _update_out(PublishedUpdate.objects.for_timeline().get(pk=update.pk))
    return Status(201, {**out, "note": publishing.delivery_note(update) or None})


def _fields(body: PublishIn) -> publishing.PublicFields:
    components = None if body.components is None else {c.component_id: c.status for c in body.components}
    confirmed = frozenset(name for name in (publishing.CONFIRM_IMPACT, publishing.CONFIRM_REPEAT)
                          if getattr(body, name))
    return publishing.PublicFields(title=body.public_title, state=body.state, impact=body.impact,
                                   components=components, acknowledged=body.acknowledge_overrides,
                                   confirmed=confirmed)

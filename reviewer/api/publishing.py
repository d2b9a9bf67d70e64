"""Published updates: an incident's updates with their deliveries, and publishing a run's text."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from django.http import Http404
from ninja import Field, Query, Router, Schema, Status

from agents.models import Run
from reviewer.api.common import PAGE_MAX, ApiError, Error, IncidentPath, Offset, RowId, need
from reviewer.api.incidents import get_incident
from reviewer.models import PublishedUpdate
from reviewer.outbox import publishing

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


@router.post("/runs/{run_id}/publish",
          response={201: UpdateOut, 400: Error, 401: Error, 403: Error, 404: Error, 409: Error, 422: Error})
def publish_run(request, run_id: int = RowId, body: PublishIn | None = None):
    """Publish the run's text, as the page's Publish button does: a run that passed every gate, or
    the text a lead approved on its escalation, with its public title, state, impact and components
    (the guard checks them). A text whose approving lead overrode guard findings needs
    ``acknowledge_overrides``. Refused, or published before → 409."""
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
    except publishing.PublishRefused as error:
        raise ApiError(409, str(error)) from None
    return Status(201, _update_out(PublishedUpdate.objects.for_timeline().get(pk=update.pk)))


def _fields(body: PublishIn) -> publishing.PublicFields:
    components = None if body.components is None else {c.component_id: c.status for c in body.components}
    return publishing.PublicFields(title=body.public_title, state=body.state, impact=body.impact,
                                   components=components, acknowledged=body.acknowledge_overrides)

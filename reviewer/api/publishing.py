"""Published updates: an incident's updates with their deliveries, and publishing a run's text."""

from __future__ import annotations

from datetime import datetime

from django.http import Http404
from ninja import Query, Router, Schema, Status

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


@router.get("/incidents/{incident_id}/updates",
         response={200: list[UpdateOut], 401: Error, 403: Error, 404: Error, 422: Error})
def list_updates(request, incident_id: str = IncidentPath,
                 limit: int = Query(50, ge=1, le=PAGE_MAX), offset: int = Offset):
    """The incident's published updates, newest first, with each delivery's state."""
    need(request, "agents.view_incident")
    incident = get_incident(incident_id)
    return [_update_out(u) for u in incident.published_updates.for_timeline()[offset:offset + limit]]


@router.post("/runs/{run_id}/publish",
          response={201: UpdateOut, 401: Error, 403: Error, 404: Error, 409: Error, 422: Error})
def publish_run(request, run_id: int = RowId):
    """Publish the run's text, as the page's Publish button does: a run that passed every gate, or
    the text a lead approved on its escalation. Refused, or published before → 409."""
    need(request, publishing.PUBLISH_PERMISSION)
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

"""Deadline breaches: what passed its deadline undecided, and ops' one click to publish the
incident's approved holding statement instead. The domain lives in :mod:`reviewer.alerts.deadlines`."""

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST, require_safe

from reviewer.alerts import deadlines
from reviewer.models import DeadlineBreach
from reviewer.outbox import publishing
from reviewer.permissions import require_perm

RECENT = 50


@require_perm("agents.view_incident")
@require_safe
def breach_list(request):
    breaches = list(DeadlineBreach.objects.select_related(
        "escalation", "escalation__run", "escalation__run__incident", "published_by", "holding_statement")[:RECENT])
    # Offered only while the statement still passes the guard against the incident's facts of now.
    waiting = [b for b in breaches if b.escalation.status == "pending" and b.published_at is None]
    offers = deadlines.offerable_statements([b.escalation.run.incident for b in waiting if b.escalation.run.incident])
    for breach in breaches:
        incident = breach.escalation.run.incident
        breach.offer = offers.get(incident.pk) if incident is not None and breach in waiting else None
    context = {"breaches": breaches, "can_publish": request.user.has_perm(publishing.PUBLISH_PERMISSION)}
    return render(request, "breaches/list.html", context)


@require_perm(publishing.PUBLISH_PERMISSION)
@require_POST
def publish_holding_statement(request, pk):
    get_object_or_404(DeadlineBreach, pk=pk)
    try:
        update = deadlines.publish_holding_statement(pk, request.user)
    except (deadlines.HoldingStatementRefused, publishing.PublishRefused, PermissionDenied) as refused:
        messages.error(request, str(refused))
    else:
        messages.success(request, f"Holding statement published as update {update.version} of "
                                  f"{update.incident.incident_id}.")
    return redirect("breaches")

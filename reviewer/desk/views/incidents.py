"""Incident pages: the list, one incident with its runs, and starting a run from it. The runs table
and the published updates with their deliveries are live fragments (``reviewer.desk.live``)."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRedirect

from agents import tasks
from agents.models import Incident
from agents.policy_rows import PolicyMissing
from reviewer.desk import live
from reviewer.desk.forms import StartRunForm
from reviewer.models import Delivery, DeliveryChannel
from reviewer.outbox.publishing import PUBLISH_PERMISSION
from reviewer.outbox.ready import publish_queue
from reviewer.permissions import require_perm

RUNS_PER_PAGE = 20
INCIDENTS_PER_PAGE = 50


@require_perm("agents.view_incident")
@require_GET
def incident_list(request):
    incidents = Incident.objects.with_latest_run().prefetch_related("fact_rows")
    page = Paginator(incidents, INCIDENTS_PER_PAGE).get_page(request.GET.get("page"))
    return render(request, "incidents/list.html", {"incidents": page, "page": page})


def _runs_page(request, incident):
    runs = incident.runs.select_related("triggered_by", "escalation__decided_by").order_by("-created_at", "-id")
    page = Paginator(runs, RUNS_PER_PAGE).get_page(request.GET.get("page"))
    page.object_list = list(page.object_list)
    page.any_in_flight = any(run.in_flight for run in page.object_list)
    return page


def _updates(request, incident) -> dict:
    """The published updates with their deliveries, as the updates timeline shows them."""
    updates = list(incident.published_updates.for_timeline()[:50])
    return {
        "incident": incident,
        "updates": updates,
        # Customers see the incident once the status page delivered one of its updates.
        "public": any(d.channel.kind == DeliveryChannel.Kind.STATUS and d.status == Delivery.Status.DELIVERED
                      for update in updates for d in update.deliveries.all()),
        "can_publish_any": request.user.has_perm(PUBLISH_PERMISSION),
    }


def _render_incident(request, incident, form, *, status=200):
    context = _updates(request, incident) | {
        "form": form,
        "can_start": request.user.has_perm("agents.start_run"),
        "runs": _runs_page(request, incident),
        "versions": incident.versions.select_related("created_by")[:50],
    }
    if context["can_publish_any"]:
        context["waiting"] = list(publish_queue(incident.runs.all()))
        context["waiting_approved"] = all(run.related("escalation") for run in context["waiting"])
    return render(request, "incidents/detail.html", context, status=status)


@require_perm("agents.view_incident")
@require_GET
@vary_on_headers("HX-Request")
def incident_detail(request, incident_id):
    incident = get_object_or_404(Incident, incident_id=incident_id)
    if live.polled(request, "incident-runs"):
        # The runs list pages on its own, and polls its page.
        return live.fragment(request, "incidents/_runs.html", {"incident": incident,
                                                               "runs": _runs_page(request, incident)})
    if live.polled(request, "updates"):
        return live.fragment(request, "partials/updates_timeline.html", _updates(request, incident))
    form = StartRunForm(incident=incident, pipeline=request.GET.get("pipeline"))
    if request.htmx and request.htmx.target == "run-form" and request.user.has_perm("agents.start_run"):
        # Choosing another pipeline swaps in the form with that pipeline's field and default goal.
        return render(request, "incidents/detail.html#run-form", {"incident": incident, "form": form,
                                                                   "can_start": True})
    return _render_incident(request, incident, form)


@require_perm("agents.start_run")
@require_POST
@vary_on_headers("HX-Request")
def start_run(request, incident_id):
    incident = get_object_or_404(Incident, incident_id=incident_id)
    form = StartRunForm(request.POST, incident=incident)
    run = None
    if form.is_valid():
        try:
            run, created = tasks.start_run(pipeline=form.cleaned_data["pipeline"], goal=form.run_goal,
                                           incident=incident, user=request.user, idempotency_key=form.key)
        except PolicyMissing as error:
            form.add_error(None, str(error))
    if run is None:
        if request.htmx:
            # htmx swaps 2xx only: answer 200 so the form with its errors replaces the old one.
            return render(request, "incidents/detail.html#run-form",
                          {"incident": incident, "form": form, "can_start": True})
        return _render_incident(request, incident, form, status=400)
    if not created:
        messages.info(request, "This form was already submitted; here is the run it started.")
    url = reverse("run", args=[run.pk])
    if request.htmx:
        return HttpResponseClientRedirect(url)
    return redirect(url)

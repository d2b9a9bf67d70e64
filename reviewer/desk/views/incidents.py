"""Incident pages: the list, one incident with its runs, starting a run from it, and ops editing its
facts, state and severity (through ``agents.incidents.update_incident``, as the API does). The runs
table and the published updates with their deliveries are live fragments (``reviewer.desk.live``)."""

from __future__ import annotations

import uuid

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRedirect

from agents import incidents as actions
from agents import tasks
from agents.models import Incident
from agents.policy_rows import PolicyMissing
from reviewer.desk import live, reports
from reviewer.desk.forms import IncidentEditForm, StartRunForm
from reviewer.models import Delivery, DeliveryChannel
from reviewer.outbox.publishing import PUBLISH_PERMISSION
from reviewer.outbox.ready import publish_queue
from reviewer.permissions import require_perm

RUNS_PER_PAGE = 20
EDIT_PERMISSION = "agents.change_incident"  # as the API's PATCH /api/incidents/{id}
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


def _render_incident(request, incident, form, *, status=200, edit=None):
    versions = list(incident.versions.select_related("created_by")[:50])  # the newest first
    can_edit = request.user.has_perm(EDIT_PERMISSION)
    edit_form, fact_forms = edit if edit is not None else (
        IncidentEditForm.for_incident(incident, latest=versions[0] if versions else None) if can_edit
        else (None, None))
    timeline = _updates(request, incident)
    context = timeline | {
        "can_edit": can_edit, "edit_form": edit_form, "fact_forms": fact_forms, "editing": edit is not None,
        "form": form,
        "can_start": request.user.has_perm("agents.start_run"),
        "runs": _runs_page(request, incident),
        "versions": versions,
        "report_runs": list(reports.report_runs(incident)),
        # The updates are newest first: the first says whether the incident is resolved in public.
        "may_report": reports.resolved_in_public(next(iter(timeline["updates"]), None)),
        "report_key": uuid.uuid4(),
    }
    if context["can_publish_any"]:
        context["waiting"] = list(publish_queue(incident.runs.all()))
        context["waiting_approved"] = all(run.related("escalation") for run in context["waiting"])
    return render(request, "incidents/detail.html", context, status=status)


@require_perm("agents.view_incident")
@require_GET
@vary_on_headers("HX-Request")
def incident_detail(request, incident_id):
    incident = get_object_or_404(Incident.objects.prefetch_related("fact_rows"), incident_id=incident_id)
    if live.polled(request, "incident-runs"):
        # The runs list pages on its own, and polls its page.
        return live.fragment(request, "incidents/_runs.html", {"incident": incident,
                                                               "runs": _runs_page(request, incident)})
    if live.polled(request, "updates"):
        return live.fragment(request, "partials/updates_timeline.html", _updates(request, incident))
    form = StartRunForm(incident=incident, pipeline=request.GET.get("pipeline"))
    if request.htmx and request.htmx.target == "run-form" and request.user.has_perm("agents.start_run"):
        # Without what was typed (a link, no form): that pipeline's field and its default goal.
        return render(request, "incidents/detail.html#run-form", {"incident": incident, "form": form,
                                                                   "can_start": True})
    return _render_incident(request, incident, form)


@require_perm("agents.start_run")
@require_POST
def run_form(request, incident_id):
    """Choosing another pipeline swaps in the form with that pipeline's field, keeping what was typed
    in the goal and the ticket text: a default fills only a field nobody has written in (posted, not
    in the URL, so a long ticket fits)."""
    incident = get_object_or_404(Incident, incident_id=incident_id)
    typed = {name: request.POST[name] for name in ("goal", "ticket") if name in request.POST}
    form = StartRunForm(initial=typed, incident=incident, pipeline=request.POST.get("pipeline"))
    return render(request, "incidents/detail.html#run-form", {"incident": incident, "form": form, "can_start": True})


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


@require_perm("agents.start_run")
@require_POST
def draft_report(request, incident_id):
    """"Draft report": the model drafts the resolved incident's post-incident report; its run page follows it."""
    incident = get_object_or_404(Incident, incident_id=incident_id)
    try:
        run = reports.draft_report(incident, request.user, idempotency_key=request.POST.get("idempotency_key", ""))
    except (reports.ReportRefused, PolicyMissing) as refused:
        messages.error(request, str(refused))
        return redirect(reverse("incident", args=[incident.incident_id]) + "#report")
    return redirect(reverse("run", args=[run.pk]))


@require_perm(EDIT_PERMISSION)
@require_POST
def edit_incident(request, incident_id):
    """Ops' edit of the incident's facts, state, severity and components: written by ``update_incident``, the one
    action the API's PATCH calls too, so a change is a new version (and a pending escalation's text
    is then marked as drafted on older facts). Refused as a whole, with the form as it was sent,
    when any fact is invalid or someone recorded another version since the page was drawn."""
    incident = get_object_or_404(Incident, incident_id=incident_id)
    form, facts = IncidentEditForm.for_incident(incident, request.POST)
    if form.is_valid() and facts.is_valid():
        latest = incident.latest_version()
        shown = form.cleaned_data["version"]
        if latest is not None and shown is not None and shown != latest.number:
            form.add_error(None, f"The incident changed since this page was drawn (version {shown}; it is now "
                                 f"v{latest.number}, by {latest.created_by or 'the system'}). Check the facts "
                                 "below and save again.")
            form.data = form.data.copy()
            form.data["version"] = str(latest.number)
        else:
            try:
                change = actions.update_incident(
                    incident, user=request.user, create=False, upsert_facts=facts.changes(),
                    state=form.cleaned_data["state"], severity=form.cleaned_data["severity"],
                    components=form.cleaned_data["components"])
            except actions.FactInvalid as error:
                _fact_error(form, facts, error)
            except ValidationError as error:
                for message in error.messages:
                    form.add_error(None, message)
            else:
                if latest is not None and change.version.pk == latest.pk:
                    messages.info(request, "Nothing changed: the incident is as it was.")
                else:
                    messages.success(request, f"Saved as version {change.version.number}.")
                return redirect(reverse("incident", args=[incident.incident_id]) + "#facts")
    blank = StartRunForm(incident=incident) if request.user.has_perm("agents.start_run") else None
    return _render_incident(request, incident, blank, status=400, edit=(form, facts))


def _fact_error(form, facts, error) -> None:
    """``update_incident``'s refusal of one fact, on the row that holds it (the form's top otherwise)."""
    said = error.message_dict if hasattr(error, "error_dict") else {"__all__": error.messages}
    row = next((row for row in facts.forms if row.cleaned_data.get("key") == error.key), None)
    for field, found in said.items():
        if row is not None:
            row.add_error(field if field in row.fields else None, found)
        else:
            form.add_error(None, [f"The fact “{error.key}”: {message}" for message in found])

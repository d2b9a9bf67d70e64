"""Run pages: one run with its live trace, the filtered run list, and failed runs with retry.

Every list here runs a fixed number of queries whatever the number of rows (select_related and
annotations, no per-row lookups); the run page reads the run with its review, audit and escalation
in one query, then its steps, model calls and retries in one query each. The polled trace fragment
of a run in flight reads only the steps and model calls after the last ones the page shows.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Q
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HTMX_STOP_POLLING, HttpResponseClientRedirect, reswap, retarget

from agents import tasks
from agents.core.audit import word_diff
from agents.core.stops import configuration_stop, explain
from agents.models import PipelinePolicy, Run, is_text_pipeline
from agents.policy_rows import PolicyMissing
from reviewer.desk.forms import RunFilterForm
from reviewer.outbox.publishing import PUBLISH_PERMISSION, offers_publish
from reviewer.outbox.ready import ready_to_publish
from reviewer.permissions import require_perm

RUNS_PER_PAGE = 50
MAX_STEP_INDEX = 2**31 - 1  # the largest value of a PositiveIntegerField on every database
MAX_ID = 2**63 - 1  # of a BigAutoField


class Shown(NamedTuple):
    """What a polling run page shows: its last step, its last model call, and the delivery they are of."""
    after: int
    call: int
    delivery: int


def _shown(request) -> Shown | None:
    """From ``?after=<last step index>&call=<last model call id>&delivery=<n>``; None when the query does
    not say all three as whole numbers in range (everything is sent then)."""
    try:
        shown = Shown(*(int(request.GET[key]) for key in Shown._fields))
    except (KeyError, ValueError):
        return None
    in_range = 0 < shown.after <= MAX_STEP_INDEX and 0 <= shown.call <= MAX_ID and shown.delivery >= 0
    return shown if in_range else None


def _run_context(request, pk: int, shown: Shown | None = None) -> dict:
    """The run page's context; with ``shown`` (a poll of an in-flight run), only the steps and model
    calls after the page's last ones (``new_steps`` is True then), unless what the page shows may be stale."""
    run = get_object_or_404(
        Run.objects.select_related("incident", "retry_of", "triggered_by", "review", "audit", "escalation"), pk=pk)
    steps, new_steps, delegations = _trace_steps(run, shown)
    # The outcome (model calls, routing attempts) goes whole, as the page renders it, unless the page
    # shows model calls and only new ones are to be appended (not for routing: its attempts table
    # changes with them; its calls are few).
    whole_outcome = new_steps is None or not shown.call or run.pipeline == "routing"
    calls, usage, calls_before = _model_calls(run, None if whole_outcome else shown.call)
    run.show_progress(steps, calls, usage)
    draft = next((s.output for s in steps if s.phase == "draft" and isinstance(s.output, str)), "")
    updates = _published_updates(run)
    return {
        "run": run,
        "steps": steps if new_steps is None else new_steps,
        "new_steps": new_steps is not None,
        "last_step": steps[-1].index if steps else 0,  # the polling line asks for the steps after it
        "last_call": calls[-1].pk if calls else (0 if whole_outcome else shown.call),  # and the calls after it
        "calls": calls,
        "calls_before": calls_before,
        "whole_outcome": whole_outcome,
        **_results(run, draft),
        "diff_mode": "side" if request.GET.get("diff") == "side" else "inline",
        "draft": draft,
        "delegations": delegations,
        "details_json": json.dumps(run.details, indent=2, ensure_ascii=False) if run.details else "",
        **_permissions(request, run, updates),
    }


def _trace_steps(run, shown: Shown | None) -> tuple[list, list | None, list]:
    """The steps the context is built from, the new ones to send (None: the whole trace), and the
    routing attempts."""
    if shown is not None and run.in_flight and shown.delivery == run.deliveries:
        # One query: the page's last step (still there? and the phase when nothing is new), the steps
        # after it, and the routing attempts (the outcome's table lists them all). A takeover after a
        # silent worker deletes the trace and counts a delivery: the whole trace goes out then.
        rows = list(run.steps.filter(Q(index__gte=shown.after) | Q(phase="delegate")))
        last = next((s for s in rows if s.index == shown.after), None)
        if last is not None:
            new_steps = [s for s in rows if s.index > shown.after]
            return [last, *new_steps], new_steps, [s for s in rows if s.phase == "delegate"]
    steps = list(run.steps.all())
    return steps, None, [s for s in steps if s.phase == "delegate"]


def _model_calls(run, after: int | None) -> tuple[list, dict | None, int]:
    """The model calls to send (all, or those after the call id ``after``), the run's usage when they
    are not all (None: count them), and how many calls come before them."""
    if after is None:
        return list(run.calls.all()), None, 0
    calls = list(run.calls.filter(pk__gt=after))
    usage = run.call_usage()  # the header counts every call
    return calls, usage, usage["model_calls"] - len(calls)  # the new calls are numbered on from the page's


def _published_updates(run) -> list:
    # Only a text pipeline's run on an incident can be published (one query more, with its deliveries).
    if run.incident_id and is_text_pipeline(run.pipeline):
        return list(run.published_updates.for_timeline())
    return []


def _results(run, draft: str) -> dict:
    """What the run led to besides its trace: its retries, review, audit, escalation with its last
    decision, and the diff of its text."""
    audit = run.related("audit")
    escalation = run.related("escalation")
    return {
        "retries": list(run.retries.order_by("created_at", "id")),
        "review": run.related("review"),
        "audit": audit,
        "escalation": escalation,
        "decision": escalation.decisions.order_by("at", "id").last() if escalation is not None else None,
        "diff": _diff(run, audit, draft),
    }


def _diff(run, audit, draft: str) -> dict | None:
    if audit is not None:
        return {"title": "Draft → final text" if run.answer else "Draft → blocked revision",
                "ops": word_diff(audit.before_text, audit.after_text)}
    if draft and run.candidate and run.candidate != draft:
        return {"title": "Draft → blocked candidate", "ops": word_diff(draft, run.candidate)}
    return None


def _active_pipelines() -> set[str]:
    return set(PipelinePolicy.objects.filter(active=True).values_list("pipeline", flat=True))


def retry_blocker(run, active_pipelines: set[str]) -> str:
    """Why a retry of the failed ``run`` would stop the same way, and who can change that ("" when a
    retry may pass): a stop a setting caused (agents.core.stops.configuration_stop), or a pipeline
    with no active policy now (a retry could not even start)."""
    if not run.failed:
        return ""
    if run.pipeline not in active_pipelines:
        return (f"The {run.get_pipeline_display()} pipeline has no active policy now; retry after a policy admin "
                "activates one (Pipeline policies).")
    return configuration_stop(run.stop_reason)


def _permissions(request, run, updates: list) -> dict:
    """What the person may do on the page, with the updates that decide whether it can be published."""
    blocker = retry_blocker(run, _active_pipelines()) if run.failed else ""
    return {
        "retry_blocker": blocker,
        "can_retry": run.failed and not blocker and request.user.has_perm("agents.start_run"),
        "updates": updates,
        "can_publish_any": request.user.has_perm(PUBLISH_PERMISSION),
        "can_publish": request.user.has_perm(PUBLISH_PERMISSION) and not updates and offers_publish(run),
    }


@require_perm("agents.view_run")
@require_GET
@vary_on_headers("HX-Request")
def run_detail(request, pk):
    context = _run_context(request, pk)
    if request.htmx and request.htmx.target == "run-diff":
        # The inline / side-by-side switch swaps the diff only.
        return render(request, "runs/detail.html#run-diff", context)
    return render(request, "runs/detail.html", context)


@require_perm("agents.view_run")
@require_GET
@vary_on_headers("HX-Request")
def run_trace(request, pk):
    """The polled trace fragment, with the header and the outcome swapped out of band.

    The polling element is the in-flight line; it asks for the steps and model calls after the last
    ones shown (``?after=<step index>&call=<call id>&delivery=<n>``). While the run is in flight and
    the page's steps are still the run's, the fragment is only the new steps and a new in-flight
    line, which replace the old line, and the new calls' rows, appended to the page's table out of
    band. Otherwise (no steps shown yet, a bad or missing value, a run taken over since, or the run
    has ended) it is the whole trace, which replaces ``#run-trace`` as a fresh load renders it, with
    the whole outcome. Once the run has ended it comes without the trigger and with status 286,
    which tells htmx to stop polling (and still swap this final fragment in).
    """
    if not request.htmx:
        return redirect("run", pk=pk)
    context = _run_context(request, pk, _shown(request))
    response = render(request, "runs/trace.html", context)
    if context["new_steps"]:
        retarget(response, "#run-in-flight")
    else:
        retarget(response, "#run-trace")
    reswap(response, "outerHTML")
    if not context["run"].in_flight:
        response.status_code = HTMX_STOP_POLLING
    return response


# Lists ------------------------------------------------------------------------------------------

def _page(request, queryset):
    page = Paginator(queryset, RUNS_PER_PAGE).get_page(request.GET.get("page"))
    page.object_list = list(page.object_list)
    return page


def _query_without_page(request) -> str:
    query = request.GET.copy()
    query.pop("page", None)
    return query.urlencode()


@require_perm("agents.view_run")
@require_GET
@vary_on_headers("HX-Request")
def run_list(request):
    form = RunFilterForm(request.GET)
    filters = form.cleaned_data if form.is_valid() else {}
    runs = Run.objects.filtered(stop_reason=filters.get("stop_reason", ""), status=filters.get("status", ""),
                                pipeline=filters.get("pipeline", ""), since=filters.get("since"))
    if filters.get("ready"):
        runs = ready_to_publish(runs)
    runs = runs.select_related("incident", "escalation__decided_by").order_by("-created_at", "-id")
    context = {
        "form": form,
        "runs": _page(request, runs),
        "query": _query_without_page(request),
        "explanation": explain(filters["stop_reason"]) if filters.get("stop_reason") else "",
        # the stop reason filter's options: the reasons runs stopped with (the inbox offers its own the same way)
        "stop_reasons": list(Run.objects.exclude(stop_reason="").order_by("stop_reason")
                             .values_list("stop_reason", flat=True).distinct()),
    }
    if request.htmx and request.htmx.target == "run-list":
        return render(request, "runs/list.html#run-list", context)
    return render(request, "runs/list.html", context)


@require_perm("agents.view_run")
@require_GET
def failed_runs(request):
    # The page's ids first (the run_failed_newest index holds status, stop reason and time, so the sort
    # never touches the wide rows), then those 50 runs with their incidents.
    ids = Run.objects.failed().order_by("-created_at", "-id").values_list("pk", flat=True)
    page = _page(request, ids)
    shown = Run.objects.select_related("incident", "escalation__decided_by").in_bulk(page.object_list)
    page.object_list = [shown[pk] for pk in page.object_list if pk in shown]
    retries = Run.objects.retry_counts([run.pk for run in page.object_list])
    active = _active_pipelines()
    for run in page.object_list:
        run.retry_count = retries.get(run.pk, 0)
        run.retry_blocker = retry_blocker(run, active)
    return render(request, "runs/failed.html", {
        "runs": page,
        "can_retry": request.user.has_perm("agents.start_run"),
    })


@require_perm("agents.start_run")
@require_POST
def retry(request, pk):
    run = get_object_or_404(Run.objects.select_related("incident"), pk=pk)
    if not run.failed:
        messages.error(request, "Only failed or interrupted runs can be retried; "
                                "escalated runs are decided in the inbox.")
        return redirect("run", pk=run.pk)
    if blocker := retry_blocker(run, _active_pipelines()):  # it would stop the same way: say what must change
        messages.error(request, f"Not retried: {blocker}")
        return redirect("run", pk=run.pk)
    # A double click must not start two retries: while one is in flight, go to it instead.
    new = run.retries.filter(status__in=Run.IN_FLIGHT).order_by("-created_at", "-id").first()
    if new is None:
        try:
            new = tasks.retry_run(run, user=request.user)
        except PolicyMissing:  # deactivated since the check above
            messages.error(request, f"Not retried: the {run.get_pipeline_display()} pipeline has no active policy.")
            return redirect("run", pk=run.pk)
        messages.success(request, f"Retrying run {run.pk} with the same inputs.")
    else:
        messages.info(request, f"Run {run.pk} is already being retried.")
    url = reverse("run", args=[new.pk])
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)

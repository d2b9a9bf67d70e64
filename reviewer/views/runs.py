"""Run pages: one run with its live trace, the filtered run list, and failed runs with retry (SPEC §8).

Every list here runs a fixed number of queries whatever the number of rows (select_related and
annotations, no per-row lookups); the run page reads the run with its review, audit and escalation
in one query, then its steps, model calls and retries in one query each.
"""

from __future__ import annotations

import json
import re
from datetime import timedelta

from django.contrib import messages
from django.core.exceptions import ObjectDoesNotExist
from django.core.paginator import Paginator
from django.db.models import Count, Q
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.html import escape, format_html
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HTMX_STOP_POLLING, HttpResponseClientRedirect

from agents import tasks
from agents.audit import word_diff
from agents.stops import explain, opens_escalation
from reviewer.forms import IN_FLIGHT, RunFilterForm
from reviewer.models import Run
from reviewer.permissions import require_perm

RUNS_PER_PAGE = 50

# Measurements shown first, in this order, on a trace step; any other measurement follows by name.
MEASUREMENT_ORDER = [
    "attempt", "attempts", "attempts_used", "retried", "fallback_used", "target", "observation_status",
    "similarity", "length_increase_pct", "enforced", "not_enforceable", "must_include", "must_remove",
    "unenforceable", "draft_chars", "revised_chars", "answer_chars", "severity", "high_risk", "issues",
    "fix_items", "risks", "required_changes", "quality", "completeness",
]


# Queries shared with the dashboard -------------------------------------------------------------

def since_cutoff(since: str | None, now=None):
    """The earliest ``created_at`` for ``since`` (today, 24h, 7d); None for any time."""
    now = now or timezone.now()
    if since == "today":
        return timezone.localtime(now).replace(hour=0, minute=0, second=0, microsecond=0)
    if since == "24h":
        return now - timedelta(hours=24)
    if since == "7d":
        return now - timedelta(days=7)
    return None


def is_failed(run: Run) -> bool:
    """A failed run is retried, not decided: interrupted, or stopped by a reason that opens no escalation."""
    if run.status == Run.Status.INTERRUPTED:
        return True
    return run.status == Run.Status.STOPPED and not opens_escalation(run.stop_reason)


def failed_runs_query():
    """The runs :func:`is_failed` accepts, as one queryset (the distinct stop reasons are read first)."""
    reasons = (Run.objects.filter(status=Run.Status.STOPPED).order_by()
               .values_list("stop_reason", flat=True).distinct())
    failing = [reason for reason in reasons if not opens_escalation(reason)]
    return Run.objects.filter(Q(status=Run.Status.STOPPED, stop_reason__in=failing)
                              | Q(status=Run.Status.INTERRUPTED))


# The run page ----------------------------------------------------------------------------------

def _related(run: Run, name: str):
    """A reverse one-to-one loaded with select_related, or None when the row does not exist."""
    try:
        return getattr(run, name)
    except ObjectDoesNotExist:
        return None


def _format_measurement(key: str, value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if key.endswith("_pct") and isinstance(value, (int, float)):
        return f"{value:+g}%"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list):
        return "; ".join(str(item) for item in value) if value else "none"
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def measurements(values: dict) -> list[tuple[str, str]]:
    """A step's measurements as (label, text), known ones first; the template escapes both."""
    keys = [k for k in MEASUREMENT_ORDER if k in values] + sorted(k for k in values if k not in MEASUREMENT_ORDER)
    return [(key.replace("_", " "), _format_measurement(key, values[key])) for key in keys]


def _output_text(output) -> str:
    if output is None:
        return ""
    if isinstance(output, str):
        return output
    return json.dumps(output, indent=2, ensure_ascii=False)


_WORD = re.compile(r"\S+\s*|\s+")


def _tidy(ops: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Move words that a replacement deletes and inserts again back into the unchanged text.

    ``word_diff`` keeps each word's trailing whitespace, so the last word of a text ("guidance.")
    differs from the same word followed by an added sentence ("guidance. "): shown as deleted and
    inserted again. Comparing words without that whitespace keeps the highlight on what changed.
    """
    tidy: list[tuple[str, str]] = []
    i = 0
    while i < len(ops):
        if ops[i][0] == "delete" and i + 1 < len(ops) and ops[i + 1][0] == "insert":
            old, new = _WORD.findall(ops[i][1]), _WORD.findall(ops[i + 1][1])
            head = 0
            while head < min(len(old), len(new)) and old[head].rstrip() == new[head].rstrip():
                head += 1
            tail = 0
            while (tail < min(len(old), len(new)) - head
                   and old[-1 - tail].rstrip() == new[-1 - tail].rstrip()):
                tail += 1
            pieces = [("equal", "".join(new[:head])), ("delete", "".join(old[head:len(old) - tail])),
                      ("insert", "".join(new[head:len(new) - tail])), ("equal", "".join(new[len(new) - tail:]))]
            for op, text in pieces:
                if not text:
                    continue
                if tidy and tidy[-1][0] == op:
                    tidy[-1] = (op, tidy[-1][1] + text)
                else:
                    tidy.append((op, text))
            i += 2
            continue
        if tidy and tidy[-1][0] == ops[i][0]:
            tidy[-1] = (ops[i][0], tidy[-1][1] + ops[i][1])
        else:
            tidy.append(ops[i])
        i += 1
    return tidy


def render_diff(before: str, after: str) -> dict:
    """Word-level diff as HTML: ``inline`` (deletions and insertions in one text), ``before`` and
    ``after`` (side by side). Every piece of text is escaped here; only the ins/del tags are markup."""
    inline, left, right = [], [], []
    for op, text in _tidy(word_diff(before, after)):
        if op == "equal":
            piece = escape(text)
            inline.append(piece)
            left.append(piece)
            right.append(piece)
        elif op == "delete":
            piece = format_html("<del>{}</del>", text)
            inline.append(piece)
            left.append(piece)
        else:
            piece = format_html("<ins>{}</ins>", text)
            inline.append(piece)
            right.append(piece)
    # Each piece above is escaped text or format_html output, so joining them is safe.
    return {"inline": mark_safe("".join(inline)), "before": mark_safe("".join(left)),
            "after": mark_safe("".join(right))}


def _run_context(request, pk: int) -> dict:
    run = get_object_or_404(
        Run.objects.select_related("incident", "retry_of", "triggered_by", "review", "audit", "escalation"), pk=pk)
    steps = list(run.steps.all())
    for step in steps:
        step.shown = measurements(step.measurements or {})
        step.output_text = _output_text(step.output)
    draft = next((s.output for s in steps if s.phase == "draft" and isinstance(s.output, str)), "")
    audit = _related(run, "audit")
    diff = None
    if audit is not None:
        diff = {"title": "Draft → final text" if run.answer else "Draft → blocked revision",
                **render_diff(audit.before_text, audit.after_text)}
    elif draft and run.candidate and run.candidate != draft:
        diff = {"title": "Draft → blocked candidate", **render_diff(draft, run.candidate)}
    diff_mode = "side" if request.GET.get("diff") == "side" else "inline"
    return {
        "run": run,
        "explanation": explain(run.stop_reason) if run.stop_reason else "",
        "steps": steps,
        "calls": list(run.calls.all()),
        "retries": list(run.retries.order_by("created_at", "id")),
        "review": _related(run, "review"),
        "audit": audit,
        "escalation": _related(run, "escalation"),
        "diff": diff,
        "diff_mode": diff_mode,
        "draft": draft,
        "delegations": [s for s in steps if s.phase == "delegate"],
        "details_json": json.dumps(run.details, indent=2, ensure_ascii=False) if run.details else "",
        "can_retry": is_failed(run) and request.user.has_perm("reviewer.start_run"),
    }


@require_perm("reviewer.view_run")
@require_GET
@vary_on_headers("HX-Request")
def run_detail(request, pk):
    context = _run_context(request, pk)
    if request.htmx and request.htmx.target == "run-diff":
        # The inline / side-by-side switch swaps the diff only.
        return render(request, "runs/detail.html#run-diff", context)
    return render(request, "runs/detail.html", context)


@require_perm("reviewer.view_run")
@require_GET
@vary_on_headers("HX-Request")
def run_trace(request, pk):
    """The polled trace fragment, with the header and the outcome swapped out of band.

    While the run is in flight the fragment carries its own polling trigger. Once the run has ended
    it comes without the trigger and with status 286, which tells htmx to stop polling (and still
    swap this final fragment in).
    """
    if not request.htmx:
        return redirect("run", pk=pk)
    context = _run_context(request, pk)
    response = render(request, "runs/trace.html", context)
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


@require_perm("reviewer.view_run")
@require_GET
@vary_on_headers("HX-Request")
def run_list(request):
    form = RunFilterForm(request.GET)
    runs = Run.objects.select_related("incident").order_by("-created_at", "-id")
    filters = form.cleaned_data if form.is_valid() else {}
    if filters.get("stop_reason"):
        runs = runs.filter(stop_reason=filters["stop_reason"])
    if filters.get("status") == IN_FLIGHT:
        runs = runs.filter(status__in=Run.IN_FLIGHT)
    elif filters.get("status"):
        runs = runs.filter(status=filters["status"])
    if filters.get("pipeline"):
        runs = runs.filter(pipeline=filters["pipeline"])
    cutoff = since_cutoff(filters.get("since"))
    if cutoff is not None:
        runs = runs.filter(created_at__gte=cutoff)
    context = {
        "form": form,
        "runs": _page(request, runs),
        "query": _query_without_page(request),
        "explanation": explain(filters["stop_reason"]) if filters.get("stop_reason") else "",
    }
    if request.htmx and request.htmx.target == "run-list":
        return render(request, "runs/list.html#run-list", context)
    return render(request, "runs/list.html", context)


@require_perm("reviewer.view_run")
@require_GET
def failed_runs(request):
    runs = (failed_runs_query().select_related("incident").annotate(retry_count=Count("retries"))
            .order_by("-created_at", "-id"))
    page = _page(request, runs)
    for run in page.object_list:
        run.explanation = explain(run.stop_reason)
    return render(request, "runs/failed.html", {
        "runs": page,
        "can_retry": request.user.has_perm("reviewer.start_run"),
    })


@require_perm("reviewer.start_run")
@require_POST
def retry(request, pk):
    run = get_object_or_404(Run.objects.select_related("incident"), pk=pk)
    if not is_failed(run):
        messages.error(request, "Only failed or interrupted runs can be retried; "
                                "escalated runs are decided in the inbox.")
        return redirect("run", pk=run.pk)
    # A double click must not start two retries: while one is in flight, go to it instead.
    new = run.retries.filter(status__in=Run.IN_FLIGHT).order_by("-created_at", "-id").first()
    if new is None:
        new = tasks.retry_run(run, user=request.user)
        messages.success(request, f"Retrying run {run.pk} with the same inputs.")
    else:
        messages.info(request, f"Run {run.pk} is already being retried.")
    url = reverse("run", args=[new.pk])
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)

"""The escalation inbox: the list, the escalation page, and the decision endpoints.

Every page works as plain HTML forms; with htmx the same forms swap a row, the decision panel or
the guard's violations in place. The decisions themselves live in :mod:`reviewer.desk.decisions`.
"""

from urllib.parse import urlsplit

from django.contrib import messages
from django.core.paginator import Paginator
from django.http import QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST, require_safe
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import reswap, retarget

from agents.core.audit import word_diff
from agents.core.evidence import context_facts
from agents.core.policy import PIPELINE_CHOICES
from agents.core.text import normalize
from reviewer.desk import approvals, decisions, live, repairs, snoozing
from reviewer.desk.forms import InboxFilterForm
from reviewer.models import ChangeRequest, Escalation
from reviewer.outbox import translations
from reviewer.permissions import require_perm

VIEW = "reviewer.view_escalation"
READ = "agents.view_run"
DECIDE = decisions.DECIDE_PERMISSION
PAGE_SIZE = 50
# The escalation page's forms that need a tick to decide what another lead took (_over_taken.html).
OVER_TAKEN_SLOTS = ("approve", "edit", "reject", "changes")
RECENT = 10
NOT_FINAL = ("request_changes", "edit")


def _filters(query: QueryDict) -> tuple[dict, InboxFilterForm]:
    """The valid filters; an invalid one (a NUL, an unknown pipeline) is ignored and shown as an error."""
    form = InboxFilterForm(query)
    form.is_valid()
    data = form.cleaned_data
    filters = {"pipeline": data.get("pipeline", ""), "stop_reason": data.get("stop_reason", ""),
               "mine": data.get("mine", False), "snoozed": data.get("snoozed", False)}
    return filters, form


def _pending(filters: dict, user):
    """The pending escalations under the filters: those awake, or (``snoozed``) those snoozed now."""
    pending = Escalation.objects.pending()
    pending = pending.snoozed() if filters["snoozed"] else pending.awake()
    return pending.filtered(pipeline=filters["pipeline"], stop_reason=filters["stop_reason"],
                            taken_by=user if filters["mine"] else None)


@require_perm(VIEW)
@require_safe
@vary_on_headers("HX-Request")
def inbox(request):
    filters, form = _filters(request.GET)
    pending = _pending(filters, request.user).by_deadline()
    # Paged by id: the count and the page's ids read the escalation table's index alone (the page's
    # order is that index's order); the rows with their run, incident and newest facts are read for
    # the page's ids only, in the same query (a subquery), however deep the page.
    page = Paginator(pending.values_list("pk", flat=True), PAGE_SIZE).get_page(request.GET.get("page"))
    page.object_list = list(pending.for_list().with_approvals(request.user).filter(pk__in=page.object_list))
    context = {
        "page": page,
        "pending_count": page.paginator.count,
        "filtered": bool(filters["pipeline"] or filters["stop_reason"] or filters["mine"]),
        "snoozed_count": Escalation.objects.pending().snoozed().count(),
        "count_word": "snoozed" if filters["snoozed"] else "pending",
        "groups": _identical_groups(page.object_list),
        "filters": filters,
        "filter_form": form,
        "pipelines": PIPELINE_CHOICES,
        "stop_reasons": (Escalation.objects.pending().order_by("stop_reason")
                         .values_list("stop_reason", flat=True).distinct()),
        "recent": _recent(),
        "can_decide": request.user.has_perm(DECIDE),
    }
    # The filter form and the polling swap only the list (with the nav badge out of band); a plain
    # GET (or htmx restoring history) gets the page.
    if request.htmx and not request.htmx.history_restore_request:
        return live.fragment(request, "inbox/inbox.html#inbox-list", context | {"list_oob": True})
    return render(request, "inbox/inbox.html", context | {"list_oob": False})


def _recent():
    """The escalations decided last, newest first (the inbox's "Decided recently")."""
    # decided_at IS NOT NULL (every decided row has it) lets PostgreSQL start its newest-first index
    # scan past the pending rows, whose NULLs that index holds first.
    return (Escalation.objects.decided().filter(decided_at__isnull=False).for_list()
            .order_by("-decided_at", "-id")[:RECENT])


def _identical_groups(escalations) -> list[list[Escalation]]:
    """The page's escalations in groups of identical items (the same text and reason), each group
    where its oldest item is, so a lead decides a burst of duplicates together."""
    groups: dict[tuple[str, str], list[Escalation]] = {}
    for escalation in escalations:
        groups.setdefault((normalize(escalation.candidate), normalize(escalation.summary)), []).append(escalation)
    return list(groups.values())


def _selected(request, verb: str, done: str) -> list[int] | None:
    """The ids the lead selected (a group's box carries all its ids), or None after saying why nothing is
    done: none selected, or some another lead took without the tick to decide over them."""
    ids = sorted({int(part) for value in request.POST.getlist("ids") for part in value.split(",")
                  if part.strip().isdigit() and len(part.strip()) < 10})
    if not ids:
        messages.error(request, f"Select the escalations to {verb} first.")
        return None
    taken = [pk for pk in ids if (e := Escalation.objects.select_related("taken_by").filter(pk=pk).first())
               and decisions.taken_by_other(e, request.user)]
    if taken and request.POST.get("over_taken") != "on":
        messages.error(request, f"Nothing was {done}: other leads took "
                                + ", ".join(f"#{pk}" for pk in taken)
                                + f". Tick “also those other leads took” to {verb} them anyway.")
        return None
    return ids


def _numbers(ids) -> str:
    return ", ".join(f"#{pk}" for pk in ids)


@require_perm(DECIDE)
@require_POST
def bulk_reject(request):
    """Reject the escalations the lead selected (a group's box carries all its ids) with one reason."""
    note = request.POST.get("note", "")
    ids = _selected(request, "reject", "rejected")
    if ids is None:
        return redirect("inbox")
    try:
        done = decisions.reject_many(ids, request.user, note)
    except decisions.DecisionInvalid as invalid:
        messages.error(request, f"Nothing was rejected: {invalid}")
        return redirect("inbox")
    except Escalation.DoesNotExist:
        messages.error(request, "One of the selected escalations does not exist; nothing after it was rejected.")
        return redirect("inbox")
    if done["rejected"]:
        count = len(done["rejected"])
        messages.success(request, f"Rejected {count} escalation{'s' if count != 1 else ''}: "
                                  + _numbers(done["rejected"]) + ".")
    if done["already_decided"]:
        messages.warning(request, f"Already decided by then, left as they were: {_numbers(done['already_decided'])}.")
    return redirect("inbox")


def _list_count(request) -> dict:
    """The inbox's pending count under the filters of the page the lead is on (htmx says which
    page: ``HX-Current-URL``), for the count swapped out of band after a row changes."""
    if not request.htmx or not request.htmx.current_url:
        return {}
    filters, _ = _filters(QueryDict(urlsplit(request.htmx.current_url).query))
    count = _pending(filters, request.user).count()
    return {"pending_count": count, "count_word": "snoozed" if filters["snoozed"] else "pending",
            "filtered": bool(filters["pipeline"] or filters["stop_reason"] or filters["mine"])}


def _escalation(pk: int, viewer=None) -> Escalation:
    """One escalation with what its page and its row show (with ``viewer``: whether they approved its text)."""
    related = ("run", "run__incident", "run__incident_version", "run__review", "taken_by", "decided_by",
               "approval_group")
    return get_object_or_404(Escalation.objects.select_related(*related).with_approvals(viewer), pk=pk)


def _panel_context(request, escalation: Escalation, **extra) -> dict:
    """What the decision panel (and the page around it) needs; ``extra`` carries a failed form."""
    text = extra.pop("text", None)
    check = extra.get("check")
    unchanged = text is None or normalize(text) == normalize(escalation.candidate)
    edited = escalation.outcome == "edited"
    violations = check["violations"] if check and not unchanged else []
    # The edit box's findings offer their fixes too, made on the edited text: a lead fixes one after another.
    fixes = (repairs.offered(escalation, text, violations) if violations and request.user.has_perm(DECIDE)
             and escalation.status == Escalation.Status.PENDING else [[] for _ in violations])
    return {
        # The chain of trust, once decided: what the lead overrode and what they changed.
        "overridden": escalation.overridden,
        "edited": word_diff(escalation.candidate, escalation.final_text) if edited else None,
        "escalation": escalation,
        # The decision that decided it (requests for changes and edits under a quorum decide nothing).
        "decision": escalation.decisions.select_related("actor").exclude(action__in=NOT_FINAL).last(),
        "history": escalation.decisions.select_related("actor"),  # read only where shown
        "approvals": escalation.approvals.select_related("user"),
        "snoozes": escalation.snoozes.select_related("by", "ended_by"),
        "current_approvals": approvals.current(escalation).select_related("user"),
        "shortfall": approvals.shortfall(escalation),  # a rule that can no longer be met says so at once
        "can_decide": request.user.has_perm(DECIDE),
        "text": escalation.candidate if text is None else text,
        "unchanged": unchanged,
        "needs_justification": bool(check and check["violations"] and not unchanged),
        "check_findings": list(zip(violations, fixes, strict=True)),
        **extra,
    }


def _change_requests(pk: int) -> list[ChangeRequest]:
    """The escalation's change requests. Read before the escalation itself: a revision that lands
    between the two reads then shows as still in flight (and the poll brings it), never as "now the
    candidate" above the old text."""
    return list(ChangeRequest.objects.filter(escalation_id=pk).select_related("requested_by"))


def _changes_context(change_requests: list[ChangeRequest]) -> dict:
    return {"change_requests": change_requests,
            "change_in_flight": next((c for c in change_requests if c.in_flight), None)}


def _page(request, pk: int, *, status: int = 200, **extra):
    """The whole escalation page, read afresh: its change requests first, then the escalation."""
    changes = _changes_context(_change_requests(pk))
    escalation = _escalation(pk, request.user)
    diff = word_diff(escalation.draft, escalation.candidate)
    marks = decisions.fact_marks(escalation)
    context = _panel_context(request, escalation, **extra) | changes | {
        "facts": context_facts(escalation.run.context or {}),
        "marks": marks,
        "unsupported_count": sum(not mark.supported for mark in marks),
        "run": escalation.run,
        "review": getattr(escalation.run, "review", None),
        "diff": diff,
        "changed": any(op != "equal" for op, _ in diff),
        "side_by_side": request.GET.get("view") == "side",
    }
    context["guard_findings"] = _guard_findings(request, escalation)
    context["translations"] = translations.desk_rows(escalation)
    context["snooze_now"] = snoozing.current(escalation)
    context["snooze_choices"] = snoozing.CHOICES
    context["repair_count"] = sum(len(fixes) for _, fixes in context["guard_findings"])
    if escalation.stopped_by_brake and context["review"] is not None and "instructions" not in context:
        # The brake stopped the reviewer's revision: offer its fix plan as the instructions to send.
        context["instructions"] = "\n".join(context["review"].instructions or [])
    return render(request, "inbox/escalation.html", context, status=status)


def _guard_findings(request, escalation: Escalation) -> list[tuple[dict, list[repairs.Offered]]]:
    """The guard panel's findings, each with the fixes offered for it (to a lead, while it is pending)."""
    findings = (escalation.guard or {}).get("violations") or []
    if escalation.status != Escalation.Status.PENDING or not request.user.has_perm(DECIDE):
        return [(finding, []) for finding in findings]
    return list(zip(findings, repairs.offered(escalation, escalation.candidate, findings), strict=True))


@require_perm(READ)  # everyone who can see the run reads how it was decided; only leads act on it
@require_safe
@vary_on_headers("HX-Request")
def escalation_detail(request, pk):
    if request.htmx and request.htmx.target == "change-requests":
        return _changes_poll(request, pk)
    return _page(request, pk)


def _changes_poll(request, pk: int):
    """The requested changes' section polls while the model revises the text. In flight: the section
    again, still polling. Back: the revision changed the candidate, the text, the diff, the edit box,
    the guard's panel and the history, so the whole page body is swapped in, as one unit (no reload:
    a reload could keep a field's old value) and without the trigger, which ends the polling."""
    changes = _changes_context(_change_requests(pk))
    if changes["change_in_flight"] is not None:
        escalation = get_object_or_404(Escalation, pk=pk)
        return render(request, "inbox/_change_requests.html", {"escalation": escalation, **changes})
    response = _page(request, pk)
    retarget(response, "#escalation-body")
    reswap(response, "outerHTML")
    response["HX-Reselect"] = "#escalation-body"
    return response


@require_perm(DECIDE)
@require_POST
@vary_on_headers("HX-Request")
def check_edit(request, pk):
    escalation = _escalation(pk, request.user)
    text, note = request.POST.get("text", ""), request.POST.get("note", "")
    check = decisions.guard_edit(escalation, text)
    if request.htmx:
        context = _panel_context(request, escalation, text=text, note=note, check=check, oob=True)
        return render(request, "inbox/escalation.html#edit-check", context)
    return _page(request, pk, text=text, note=note, check=check, form_action="edit_approve")


def _fragment(request, escalation: Escalation, *, row: bool, status: int = 200, **extra):
    """The row (inbox) or the decision panel (escalation page), with the nav badge swapped out of band."""
    if row:
        # With the row: the inbox's count, the badge and the recent decisions, all swapped out of band.
        context = {"escalation": escalation, "can_decide": request.user.has_perm(DECIDE), **extra,
                   **_list_count(request), "recent": _recent()}
        template = "inbox/inbox.html#escalation-row"
    else:
        # With the panel: the status, who took it, the history and (once decided) the requested changes.
        context = _panel_context(request, escalation, **extra) | _changes_context(_change_requests(escalation.pk))
        template = "inbox/escalation.html#decision-panel"
    return render(request, template, context | {"oob_badge": True}, status=status)


@require_perm(DECIDE)
@require_POST
@vary_on_headers("HX-Request")
def decide(request, pk):
    escalation = _escalation(pk, request.user)
    action, note = request.POST.get("action", ""), request.POST.get("note", "")
    text, row = request.POST.get("text", ""), request.POST.get("from") == "row"
    try:
        if (warning := decisions.taken_by_other(escalation, request.user)) and request.POST.get("over_taken") != "on":
            raise decisions.DecisionInvalid(warning)
        outcome = decisions.decide(pk, request.user, action, text=text, note=note,
                                   confirm_changed_facts=request.POST.get("confirm_facts") == "on",
                                   text_version=_text_version(request.POST.get("text_version")))
    except (decisions.DecisionInvalid, approvals.ApprovalRefused) as invalid:
        form = {"error": str(invalid), "note": note, "form_action": action}
        if action == "edit_approve":
            form |= {"text": text, "check": decisions.guard_edit(escalation, text)}
        # A refused approval answers as a form that cannot stand (422), or 409 like "already decided": htmx
        # swaps those in place (templates/base.html); the API answers 403 where it is not theirs to give.
        status = 409 if getattr(invalid, "status", 422) == 409 else 422
        if request.htmx:
            return _fragment(request, escalation, row=row, status=status, **form)
        return _page(request, pk, status=status, **form)
    decided = _escalation(pk, request.user)
    if not outcome.won:  # someone was quicker: say who, and change nothing
        if request.htmx:
            return _fragment(request, decided, row=row, status=409, lost=True)
        return _page(request, pk, status=409, lost=True)
    counted = approvals.counted_message(decided, outcome.decision)
    if request.htmx:
        # Don't redirect after an htmx request: the row or the panel swaps in place.
        # A counted approval leaves the row open: the lead sees what it did, and the inbox's poll waits.
        return _fragment(request, decided, row=row, just_decided=True, counted=counted, open_row=bool(counted))
    messages.success(request, counted or f"Escalation #{pk} {decided.status}.")
    return redirect("inbox") if row else redirect("escalation", pk)


def _text_version(value: str | None) -> int | None:
    """The text version the form was rendered with (None when the form sent none, or nonsense)."""
    return int(value) if value and value.isdigit() and len(value) < 10 else None


def _take_answer(request, pk: int, done: bool, failure: str):
    escalation = _escalation(pk, request.user)
    if request.POST.get("from") == "row":  # the inbox row: the row with who took it, or back to the inbox
        if request.htmx:
            return _fragment(request, escalation, row=True, take_error="" if done else failure)
        if not done:
            messages.error(request, failure)
        return redirect("inbox")
    if request.htmx and escalation.status != Escalation.Status.PENDING:
        # Decided meanwhile: the panel says by whom (with the take box and the rest out of band).
        response = _fragment(request, escalation, row=False, take_error=failure, lost=True)
        return reswap(retarget(response, "#decision-panel"), "outerHTML")
    if request.htmx:
        context = {"escalation": escalation, "can_decide": True, "take_error": "" if done else failure,
                   "over_taken_slots": OVER_TAKEN_SLOTS}
        return render(request, "inbox/escalation.html#take-answer", context)
    if not done:
        messages.error(request, failure)
    return redirect("escalation", pk)


@require_perm(DECIDE)
@require_POST
@vary_on_headers("HX-Request")
def take(request, pk):
    get_object_or_404(Escalation, pk=pk)
    done = decisions.take(pk, request.user)
    return _take_answer(request, pk, done, "Only a pending escalation that nobody else holds can be taken.")


@require_perm(DECIDE)
@require_POST
@vary_on_headers("HX-Request")
def release(request, pk):
    get_object_or_404(Escalation, pk=pk)
    done = decisions.release(pk, request.user)
    return _take_answer(request, pk, done, "You can only release an escalation you took.")


@require_perm(DECIDE)
@require_POST
def request_changes(request, pk):
    """A lead sends the text back with instructions: one model revision, then back here."""
    escalation = get_object_or_404(Escalation.objects.select_related("taken_by"), pk=pk)
    instructions = request.POST.get("instructions", "")
    try:
        if (warning := decisions.taken_by_other(escalation, request.user)) and request.POST.get("over_taken") != "on":
            raise decisions.DecisionInvalid(warning)  # as for a decision: nobody overrules a colleague by accident
        decisions.request_changes(pk, request.user, instructions)
    except decisions.DecisionInvalid as invalid:
        return _page(request, pk, status=422, error=str(invalid), instructions=instructions,
                     form_action="request_changes")
    # No flash message: it would stay above the page, saying "revising", after the revision is back.
    # The page's requested changes say it while it is true.
    return redirect("escalation", pk)


@require_perm(DECIDE)
@require_POST
def snooze(request, pk):
    """"Not now": out of the inbox until the chosen time, undecided."""
    get_object_or_404(Escalation, pk=pk)
    try:
        until = snoozing.until_for(request.POST.get("until", ""))
        snoozing.snooze(pk, request.user, until)
    except decisions.DecisionInvalid as invalid:
        return _page(request, pk, status=422, snooze_error=str(invalid))
    messages.success(request, f"Escalation #{pk} is snoozed: it is back in the inbox at "
                              f"{timezone.localtime(until):%Y-%m-%d %H:%M %Z}.")
    return redirect("inbox")


@require_perm(DECIDE)
@require_POST
def wake(request, pk):
    """"Back now": a snoozed escalation returns to the inbox before its time."""
    get_object_or_404(Escalation, pk=pk)
    if not snoozing.wake(pk, request.user):
        messages.error(request, "This escalation is not snoozed.")
    return redirect("escalation", pk)

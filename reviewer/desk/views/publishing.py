"""Publishing pages: what is ready to publish, the publish confirmation with the diff against the
incident's last published update, the publish click, the held deliveries, and a person's retry of a
dead-lettered delivery and decision on a held one (send again, or mark as sent).

The ready-to-publish list and the held deliveries are live fragments (``reviewer.desk.live``)."""

from __future__ import annotations

from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from agents.core.audit import word_diff
from agents.models import Run
from reviewer.desk import live
from reviewer.desk.forms import PublishForm
from reviewer.models import Delivery, StatusComponent
from reviewer.outbox.held import held_deliveries
from reviewer.outbox.publishing import (
    CONFIRM_REPEAT,
    PUBLISH_PERMISSION,
    AlreadyPublished,
    NeedsConfirmation,
    PublishRefused,
    delivery_note,
    is_report,
    last_published,
    mark_held_delivery_sent,
    new_sentences,
    publish,
    publishable,
    repeat_problems,
    retry_failed_delivery,
    send_held_delivery_again,
)
from reviewer.outbox.ready import READY_WINDOW, publish_queue
from reviewer.permissions import require_perm

READY_PER_PAGE = 50
HELD_PER_PAGE = 50
RECENTLY_DECIDED = 10


@require_perm(PUBLISH_PERMISSION)
@require_GET
def ready_to_publish(request):
    """The texts waiting for a Publish click, grouped by incident, the most recent activity first."""
    page = Paginator(publish_queue(), READY_PER_PAGE).get_page(request.GET.get("page"))
    hours = int(READY_WINDOW.total_seconds() // 3600)
    context = {"texts": page, "window_hours": hours}
    if live.polled(request, "ready-list"):
        return live.fragment(request, "publishing/ready.html#ready-list", context)
    return render(request, "publishing/ready.html", context)


@require_perm(PUBLISH_PERMISSION)
@require_GET
def held_deliveries_page(request):
    """The held deliveries, the longest held first, each with its evidence and the two decisions; and
    the held ones decided last, with who decided."""
    page = Paginator(held_deliveries(), HELD_PER_PAGE).get_page(request.GET.get("page"))
    decided = (Delivery.objects.filter(marked_sent_by__isnull=False)
               .select_related("channel", "subscriber", "update__incident", "marked_sent_by")
               .order_by("-delivered_at", "-pk")[:RECENTLY_DECIDED])
    context = {"held": page, "decided": decided, "can_publish_any": True}
    if live.polled(request, "held-list"):
        return live.fragment(request, "publishing/held.html#held-list", context)
    return render(request, "publishing/held.html", context)


def _confirm_page(request, run: Run, form: PublishForm | None = None, *, error: str = "", status: int = 200,
                  needed: dict | None = None):
    """The confirmation: the text and what it newly tells customers (its new sentences, and a warning
    when there are none), the findings a lead overrode with the diff of the approved text against the
    blocked candidate, and the public fields; ``needed``: the confirmations a publish was refused for."""
    context = {"run": run, "refused": ""}
    try:
        text, escalation = publishable(run)
    except PublishRefused as refused:
        context["refused"] = str(refused)
        return render(request, "publishing/confirm.html", context, status=409)
    overridden = escalation.overridden if escalation is not None else []
    if form is None:
        form = PublishForm(initial=PublishForm.initial_for(run.incident, text),
                           components=StatusComponent.objects.all(), overridden=overridden, incident=run.incident)
    last = last_published(run.incident)
    needed = dict(needed or {})
    if (repeats := repeat_problems(run.incident, text)) and CONFIRM_REPEAT not in needed:
        needed[CONFIRM_REPEAT] = repeats  # said before the first click: nothing new for customers
    context.update(
        needed=needed, confirm_fields=[form[name] for name in needed],
        new_sentences=new_sentences(last.text, text) if last else None,
        text=text, escalation=escalation, last=last, published=run.published_updates.first(), report=is_report(run),
        ops=word_diff(last.text if last else "", text), form=form, error=error, overridden=overridden,
        justification=escalation.approval.note if overridden else "",
        edited=word_diff(escalation.candidate, text) if escalation is not None and escalation.outcome == "edited"
        else None)
    return render(request, "publishing/confirm.html", context, status=status)


@require_perm(PUBLISH_PERMISSION)
@require_GET
def publish_confirm(request, pk):
    run = get_object_or_404(Run.objects.select_related("incident", "escalation", "escalation__decided_by"), pk=pk)
    return _confirm_page(request, run)


@require_perm(PUBLISH_PERMISSION)
@require_http_methods(["GET", "POST"])
def publish_run(request, pk):
    if request.method == "GET":  # the address of a refused publish, reloaded: back to its confirmation
        return redirect("publish_confirm", pk=pk)
    run = get_object_or_404(Run.objects.select_related("incident", "escalation", "escalation__decided_by"), pk=pk)
    try:
        text, escalation = publishable(run)
    except PublishRefused as error:
        messages.error(request, str(error))
        return redirect("run", pk=run.pk)
    form = PublishForm(request.POST, components=StatusComponent.objects.all(),
                       overridden=escalation.overridden if escalation is not None else [], incident=run.incident)
    if not form.is_valid():
        return _confirm_page(request, run, form, status=422)
    try:
        update = publish(run.incident, text, actor=request.user, source_run=run, escalation=escalation,
                         fields=form.public_fields())
    except AlreadyPublished as error:
        messages.info(request, str(error))
        return redirect(reverse("incident", args=[error.update.incident.incident_id]) + "#updates")
    except NeedsConfirmation as error:
        return _confirm_page(request, run, form, status=409, needed=error.needed)
    except PublishRefused as error:
        return _confirm_page(request, run, form, error=str(error), status=409)
    count = update.deliveries.values("channel").distinct().count()  # a subscribers channel has a row per address
    channels = f"{count} channel{'s' * (count != 1)}"
    if note := delivery_note(update):
        messages.warning(request, f"Published as update v{update.version} for {channels}. {note}")
    else:
        messages.success(request, f"Published as update v{update.version}; delivering to {channels}.")
    return redirect(reverse("incident", args=[run.incident.incident_id]) + "#updates")


def _person_acts(request, pk, action, done: str, nothing: str):
    """A person's action on one delivery (``action(delivery, user)`` -> False when the delivery is not
    in the state it applies to); back to the incident's updates with what happened."""
    delivery = get_object_or_404(Delivery.objects.select_related("update__incident", "channel"), pk=pk)
    if action(delivery, request.user):
        messages.success(request, done.format(channel=delivery.channel.name))
    else:
        messages.info(request, nothing.format(channel=delivery.channel.name))
    if request.POST.get("back") == "held":  # decided from the held deliveries: back to the rest of them
        return redirect("held_deliveries")
    return redirect(reverse("incident", args=[delivery.update.incident.incident_id]) + "#updates")


@require_perm(PUBLISH_PERMISSION)
@require_POST
def retry_delivery(request, pk):
    return _person_acts(request, pk, retry_failed_delivery, "Delivery to {channel} is being retried.",
                        "The delivery to {channel} is not failed; nothing to retry.")


@require_perm(PUBLISH_PERMISSION)
@require_POST
def send_delivery_again(request, pk):
    return _person_acts(request, pk, send_held_delivery_again, "Delivery to {channel} is being sent again.",
                        "The delivery to {channel} is not held; nothing to send again.")


@require_perm(PUBLISH_PERMISSION)
@require_POST
def mark_delivery_sent(request, pk):
    return _person_acts(request, pk, mark_held_delivery_sent,
                        "Delivery to {channel} is marked as sent; it is not sent again.",
                        "The delivery to {channel} is not held; nothing to mark.")

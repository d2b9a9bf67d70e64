"""Publishing pages: the publish confirmation with the diff against the incident's last
published update, the publish click, and a person's retry of a dead-lettered delivery."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from agents.core.audit import word_diff
from agents.models import Run
from reviewer.models import Delivery
from reviewer.outbox.publishing import (
    PUBLISH_PERMISSION,
    AlreadyPublished,
    PublishRefused,
    last_published,
    publish,
    publishable,
    retry_failed_delivery,
)
from reviewer.permissions import require_perm


@require_perm(PUBLISH_PERMISSION)
@require_GET
def publish_confirm(request, pk):
    run = get_object_or_404(Run.objects.select_related("incident", "escalation", "escalation__decided_by"), pk=pk)
    context = {"run": run, "refused": ""}
    try:
        text, escalation = publishable(run)
    except PublishRefused as error:
        context["refused"] = str(error)
        return render(request, "publishing/confirm.html", context, status=409)
    last = last_published(run.incident)
    published = run.published_updates.first()
    context.update(text=text, escalation=escalation, last=last, published=published,
                   ops=word_diff(last.text if last else "", text))
    return render(request, "publishing/confirm.html", context)


@require_perm(PUBLISH_PERMISSION)
@require_POST
def publish_run(request, pk):
    run = get_object_or_404(Run.objects.select_related("incident"), pk=pk)
    try:
        text, escalation = publishable(run)
        update = publish(run.incident, text, actor=request.user, source_run=run, escalation=escalation)
    except AlreadyPublished as error:
        messages.info(request, str(error))
        return redirect(reverse("incident", args=[error.update.incident.incident_id]) + "#updates")
    except PublishRefused as error:
        messages.error(request, str(error))
        return redirect("run", pk=run.pk)
    count = update.deliveries.count()
    channels = f"{count} channel{'s' * (count != 1)}"
    messages.success(request, f"Published as update v{update.version}; delivering to {channels}.")
    return redirect(reverse("incident", args=[run.incident.incident_id]) + "#updates")


@require_perm(PUBLISH_PERMISSION)
@require_POST
def retry_delivery(request, pk):
    delivery = get_object_or_404(Delivery.objects.select_related("update__incident", "channel"), pk=pk)
    if retry_failed_delivery(delivery, request.user):
        messages.success(request, f"Delivery to {delivery.channel.name} is being retried.")
    else:
        messages.info(request, f"The delivery to {delivery.channel.name} is not failed; nothing to retry.")
    return redirect(reverse("incident", args=[delivery.update.incident.incident_id]) + "#updates")

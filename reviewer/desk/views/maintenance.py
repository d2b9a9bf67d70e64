"""Scheduled maintenance for ops (docs/status-page.md, 'Scheduled maintenance'): the windows, the
form that schedules one, and the form that extends or cancels one. Whoever may publish updates may
do this; the texts pass the guard as a published update's (reviewer.outbox.maintenance)."""

from __future__ import annotations

from datetime import UTC

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST

from reviewer.desk.forms import MaintenanceForm, MaintenanceUpdateForm
from reviewer.models import Maintenance, MaintenanceStatus
from reviewer.outbox.maintenance import MaintenanceRefused, post_update, schedule
from reviewer.outbox.publishing import PUBLISH_PERMISSION
from reviewer.permissions import require_perm

SHOWN = 50


def _page(request, form, status=200):
    windows = (Maintenance.objects.prefetch_related("components", "updates").order_by("-starts_at", "-pk")[:SHOWN])
    open_ = (MaintenanceStatus.SCHEDULED, MaintenanceStatus.IN_PROGRESS)
    return render(request, "maintenance/list.html",
                  {"form": form, "windows": windows, "open": open_, "update_form": MaintenanceUpdateForm()},
                  status=status)


@require_perm(PUBLISH_PERMISSION)
@require_http_methods(["GET", "POST"])
def maintenance_list(request):
    """The windows, newest start first, and the form to schedule one (times in UTC)."""
    if request.method == "GET":
        return _page(request, MaintenanceForm())
    with timezone.override(UTC):
        form = MaintenanceForm(request.POST)
        valid = form.is_valid()
    if valid:
        data = form.cleaned_data
        try:
            maintenance = schedule(title=data["title"], text=data["text"], components=list(data["components"]),
                                   starts_at=data["starts_at"], ends_at=data["ends_at"], actor=request.user,
                                   notify_moves=data["notify_moves"])
        except MaintenanceRefused as refused:
            form.add_error(None, str(refused))
        else:
            messages.success(request, f"“{maintenance.title}” is scheduled and on the status page.")
            return redirect("maintenance")
    return _page(request, form, status=400)


@require_perm(PUBLISH_PERMISSION)
@require_POST
def maintenance_update(request, pk: int):
    """Extend or cancel a window, with a text its subscribers are sent."""
    maintenance = get_object_or_404(Maintenance, pk=pk)
    with timezone.override(UTC):
        form = MaintenanceUpdateForm(request.POST)
        valid = form.is_valid()
    if valid:
        data = form.cleaned_data
        try:
            post_update(maintenance, text=data["text"], ends_at=data["ends_at"], cancel=data["cancel"])
        except MaintenanceRefused as refused:
            messages.error(request, str(refused))
        else:
            messages.success(request, f"“{maintenance.title}” is updated on the status page.")
    else:
        messages.error(request, "The update needs a text" + (" and a valid end." if "ends_at" in form.errors else "."))
    return redirect("maintenance")

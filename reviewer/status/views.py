"""The public status page: no login; each incident's published updates, newest first."""

from __future__ import annotations

from django.shortcuts import render
from django.views.decorators.http import require_GET

from reviewer.models import PublishedUpdate

MAX_UPDATES = 200


@require_GET
def status_page(request):
    updates = list(PublishedUpdate.objects.public().select_related("incident")
                   .order_by("-published_at", "-version")[:MAX_UPDATES])
    incidents: dict = {}
    for update in updates:  # incidents in the order of their newest update
        incidents.setdefault(update.incident, []).append(update)
    return render(request, "status/index.html", {"incidents": list(incidents.items())})

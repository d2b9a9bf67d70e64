"""The status pages that are not public (docs/status-page.md, 'Audiences and the internal page'): an
audience's pages, served as stored like the public ones but only to the holder of its signed link or
to a signed-in reader of it; and staff's internal page, built on each request. Neither is kept by a
shared cache nor indexed by a search engine."""

from __future__ import annotations

from django.http import Http404
from django.shortcuts import get_object_or_404, render
from django.urls import Resolver404, resolve, reverse
from django.utils.cache import add_never_cache_headers, patch_cache_control
from django.views.decorators.http import require_safe

from agents.models import Incident
from reviewer.models import Delivery, Escalation, StatusAudience
from reviewer.permissions import require_perm
from reviewer.status import views
from reviewer.status.audiences import STAFF_PERMISSION, may_read, snapshot_name, token_is_valid
from reviewer.status.public import EVERYONE, status_page

NOINDEX = "noindex, nofollow"
INCIDENTS_LISTED = 50


def _private(response):
    """Only the reader's own browser may keep it, and no search engine lists it."""
    patch_cache_control(response, private=True)  # takes the place of "public"
    response["X-Robots-Tag"] = NOINDEX
    response.headers.pop("Access-Control-Allow-Origin", None)  # no other site's script reads it
    return response


def _representation(request, rest: str) -> str:
    """The stored name of the public address ``rest`` (under /status/) as an audience has it: the same
    page, history, incident pages, feeds and JSON files; anything else is not there."""
    try:
        match = resolve(reverse("status") + rest)
    except Resolver404:
        raise Http404("No such page.") from None
    if match.func is views.stored:
        return match.kwargs["name"]
    if match.func is views.history:
        number = request.GET.get("page", "1")
        if number.isdigit() and len(number) <= 6:
            return f"history:{int(number)}"
    if match.func is views.incident:
        return f"incident:{match.kwargs['incident_id']}"
    raise Http404("No such page.")


@require_safe
def audience_page(request, slug: str):
    """An audience's page for a signed-in reader of it (its signed link is the other way in)."""
    audience = get_object_or_404(StatusAudience, slug=slug)
    if not may_read(request.user, audience):
        raise Http404("No such status page.")  # never says that the audience exists
    return _private(views.serve(request, snapshot_name(audience, "page")))


@require_safe
def audience_signed(request, slug: str, token: str, rest: str = ""):
    """An audience's page, history, incident page, feed or JSON file, for the holder of its link."""
    audience = StatusAudience.objects.filter(slug=slug).first()
    if audience is None or not token_is_valid(audience, token):
        raise Http404("No such status page.")  # a rotated link reads as one that never was
    return _private(views.serve(request, snapshot_name(audience, _representation(request, rest))))


def _audiences(incident, names: dict[int, str]) -> list[str]:
    """The audiences whose components a published incident named (where it shows besides the public page)."""
    found = {row.component.audience_id for update in (incident.updates if incident else [])
             for row in update.component_statuses.all()} - {None}
    return sorted(names[pk] for pk in found)


@require_perm(STAFF_PERMISSION)
@require_safe
def internal_page(request):
    """Every incident with its internal title beside its public one, every component with whom it is for,
    and what waits: deliveries held for a person, drafts awaiting approval, and scheduled maintenance.
    Read now, for the person reading it; never stored."""
    everything, public = status_page(EVERYONE), status_page()
    on_public_page = {incident.incident_id for incident in public.incidents}
    told = {incident.incident_id: incident for incident in everything.incidents}
    names = dict(StatusAudience.objects.values_list("pk", "name"))
    incidents = [{"incident": incident, "told": told.get(incident.incident_id),
                  "public": incident.incident_id in on_public_page,
                  "audiences": _audiences(told.get(incident.incident_id), names)}
                 for incident in Incident.objects.order_by("-updated_at")[:INCIDENTS_LISTED]]
    pending = (Escalation.objects.filter(status=Escalation.Status.PENDING).awake()
               .select_related("run__incident").order_by("opened_at"))
    held = (Delivery.objects.filter(status=Delivery.Status.HELD).order_by("next_attempt_at", "pk")
            .select_related("channel", "subscriber", "update__incident"))
    response = render(request, "status/internal.html", {
        "page": everything, "incidents": incidents, "held": held, "pending": pending,
        "audiences": StatusAudience.objects.all(),
    })
    add_never_cache_headers(response)
    patch_cache_control(response, private=True, no_store=True)
    response["X-Robots-Tag"] = NOINDEX
    return response

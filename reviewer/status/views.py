"""The public status page: no login, nothing per visitor. Each view serves a stored representation
(``reviewer.status.snapshots``) with its ETag and Last-Modified, answers conditional requests with
304 and HEAD without a body, and lets caches keep it for a few seconds."""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.utils.cache import get_conditional_response, patch_cache_control
from django.utils.http import http_date
from django.views.decorators.http import require_safe

from reviewer.status.snapshots import current

# Seconds a browser, proxy or CDN may reuse an answer without asking: short, as an incident moves fast.
MAX_AGE = 10


def serve(request, name: str) -> HttpResponse:
    snapshot = current(name)
    if snapshot is None:
        raise Http404("No such status page.")
    modified = int(snapshot.changed_at.timestamp())
    response = get_conditional_response(request, etag=snapshot.etag, last_modified=modified)
    if response is None:
        body = snapshot.body.encode()
        response = HttpResponse(b"" if request.method == "HEAD" else body, content_type=snapshot.content_type)
        response["Content-Length"] = str(len(body))  # what a GET would send, for HEAD too
    response["ETag"] = snapshot.etag
    response["Last-Modified"] = http_date(modified)
    patch_cache_control(response, public=True, max_age=MAX_AGE)
    return response


@require_safe
def stored(request, name: str):
    """A representation with no parameter: the page, a feed, a JSON file (``name`` from the URL)."""
    return serve(request, name)


@require_safe
def history(request):
    number = request.GET.get("page", "1")
    if not number.isdigit() or len(number) > 6:
        raise Http404("No such page of the history.")
    return serve(request, f"history:{int(number)}")


@require_safe
def incident(request, incident_id):
    return serve(request, f"incident:{incident_id}")

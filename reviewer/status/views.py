"""The public status page: no login, nothing per visitor. Each view serves a stored representation
(``reviewer.status.snapshots``) with its ETag and Last-Modified, answers conditional requests with
304 and HEAD without a body, and lets caches keep it for a few seconds."""

from __future__ import annotations

import time

from django.conf import settings
from django.http import Http404, HttpResponse
from django.utils.cache import get_conditional_response, patch_cache_control, patch_vary_headers
from django.utils.http import http_date
from django.views.decorators.http import require_safe

from reviewer.models import StatusSnapshot
from reviewer.status import languages
from reviewer.status.snapshots import JSON, current

# Seconds a browser, proxy or CDN may reuse an answer without asking: short, as an incident moves fast.
MAX_AGE = 10
# What this process read last, by name: (when, snapshot). Under incident traffic each process answers
# many requests a second with the same bytes; it asks the database again after
# STATUS_PAGE_REUSE_SECONDS, so a publication shows within that second. Bounded: the names are the
# pages that exist (a made-up one is never kept), and the whole map is dropped past RECENT_MAX.
_recent: dict[str, tuple[float, StatusSnapshot]] = {}
RECENT_MAX = 1000


def recent(name: str) -> StatusSnapshot | None:
    now, reuse = time.time(), settings.STATUS_PAGE_REUSE_SECONDS
    kept = _recent.get(name)
    if kept is not None and 0 <= now - kept[0] < reuse:
        return kept[1]
    snapshot = current(name)
    if snapshot is not None and reuse:
        if len(_recent) >= RECENT_MAX:
            _recent.clear()
        _recent[name] = (now, snapshot)
    return snapshot


def serve(request, name: str) -> HttpResponse:
    snapshot = recent(name)
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
    if snapshot.content_type == JSON:
        # Public data for any site's script (Statuspage's widget embedded on a customer's site): no
        # cookie or credential is ever read here.
        response["Access-Control-Allow-Origin"] = "*"
    return response


def serve_in_language(request, base: str, language: str | None = None) -> HttpResponse:
    """``base`` in the reader's language (reviewer.status.languages.chosen), or in ``language`` when the
    address names one. A language picked with ``?lang=`` is kept in a cookie for the next pages."""
    source = "path"
    if language is None:
        language, source = languages.chosen(request)
    elif language not in languages.languages():
        raise Http404("The status page has no such language.")
    response = serve(request, languages.snapshot_name(base, language))
    response["Content-Language"] = language
    if source in ("header", "cookie", "default"):
        patch_vary_headers(response, ["Accept-Language", "Cookie"])
    if source == "url" and request.COOKIES.get(languages.COOKIE) != language:
        response.set_cookie(languages.COOKIE, language, max_age=365 * 24 * 3600, samesite="Lax",
                            secure=request.is_secure())
    return response


@require_safe
def stored(request, name: str, language: str | None = None):
    """A representation with no parameter: the page, a feed, a JSON file (``name`` from the URL); the
    page and the feeds in the reader's language."""
    if languages.localised(name):
        return serve_in_language(request, name, language)
    return serve(request, name)


@require_safe
def history(request):
    number = request.GET.get("page", "1")
    if not number.isdigit() or len(number) > 6:
        raise Http404("No such page of the history.")
    return serve_in_language(request, f"history:{int(number)}")


@require_safe
def incident(request, incident_id):
    return serve_in_language(request, f"incident:{incident_id}")

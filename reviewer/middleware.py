"""Every answer carries a request id (and, with tracing on, is a span); query strings that no page
can use are refused before any view reads them; times are shown in the viewer's zone.


A NUL cannot enter a PostgreSQL string: a filter carrying one (``/inbox/?stop_reason=a%00b``, an
admin list filter) reached the database and answered 500. Other C0/C1 control characters are no
better in a filter. Every GET parameter of every page, the admin's included, is checked here once;
forms still check what they take (lengths, choices) and say so on the page.
"""

from __future__ import annotations

import re
import uuid

from django.db import connection
from django.http import JsonResponse
from django.shortcuts import render
from opentelemetry.trace import SpanKind, Status, StatusCode

from agents import tracing
from agents.core.inputs import control_character
from reviewer.operations.logs import current_request, request_fields

REQUEST_ID_HEADER = "X-Request-ID"
# What an incoming X-Request-ID may be (a proxy's or a load balancer's id); anything else is replaced.
SAFE_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{8,64}")
API_WITHOUT_DATABASE = {"openapi-json", "openapi-view"}  # django-ninja's schema and docs


class RequestIdMiddleware:
    """Every answer carries ``X-Request-ID``, and every log line written while answering names it
    (``reviewer.operations.logs``): the id the client or a proxy sent when it is a short safe token, else a new
    one. The 500 page shows it, so a person can quote it. First in MIDDLEWARE, so every answer has it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        incoming = request.headers.get(REQUEST_ID_HEADER, "")
        request.request_id = incoming if SAFE_REQUEST_ID.fullmatch(incoming) else uuid.uuid4().hex
        token = current_request.set(request_fields(request))
        try:
            response = self.get_response(request)
        finally:
            current_request.reset(token)
        response[REQUEST_ID_HEADER] = request.request_id
        return response

    def process_view(self, request, view, args, kwargs):
        # The API answers every exception of its views itself (a 500 in JSON). An API request takes its
        # database connection here, before the view: a database that is away then reaches
        # reviewer.operations.errors, which answers 503 in JSON. Its docs and schema need no database.
        match = request.resolver_match
        if match.namespace == "api" and match.url_name not in API_WITHOUT_DATABASE:
            connection.ensure_connection()


HTTP_METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT"}


class TracingMiddleware:
    """With tracing on (``agents.tracing``), each request is a server span, continuing the caller's
    trace when it sends a ``traceparent``: a run started by the request is recorded as its child.
    With tracing off it only passes the request on."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if not tracing.enabled():
            return self.get_response(request)
        # A method a client made up names no span (HTTP semantic conventions: "_OTHER").
        method = request.method if request.method in HTTP_METHODS else "_OTHER"
        with tracing.tracer().start_as_current_span(
            "HTTP" if method == "_OTHER" else method, context=tracing.context_from_headers(request.headers),
            kind=SpanKind.SERVER, attributes={"http.request.method": method, "url.path": request.path,
                                              "gated_review.request_id": request.request_id},  # the log lines' id
        ) as span:
            response = self.get_response(request)
            if (match := request.resolver_match) is not None:  # None for a 404 that matched no URL
                span.set_attribute("http.route", f"/{match.route}")
                if method != "_OTHER":
                    span.update_name(f"{method} /{match.route}")
            span.set_attribute("http.response.status_code", response.status_code)
            if response.status_code >= 500:
                span.set_status(Status(StatusCode.ERROR))
        return response


class ProbeMiddleware:
    """``/healthz`` and ``/readyz`` (reviewer/operations/health.py) answered before anything else looks at the
    request: a load balancer or an orchestrator probes by address (``Host: 10.0.0.5:8000``, not a name
    of ALLOWED_HOSTS) and over plain HTTP (no redirect to HTTPS), and needs no session, login or CSRF.
    They answer only a few words about this process, never data. Right after RequestIdMiddleware."""

    def __init__(self, get_response):
        from reviewer.operations import health

        self.get_response = get_response
        self.probes = {"/healthz": health.healthz, "/readyz": health.readyz}

    def __call__(self, request):
        probe = self.probes.get(request.path_info)
        return self.get_response(request) if probe is None else probe(request)


class RefuseControlCharactersMiddleware:
    """400 with a page saying which parameter carries which control character (a 422 in JSON for
    the API, like its other validation errors)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        for name, values in request.GET.lists():
            for text in (name, *values):
                found = control_character(text)
                if found:
                    message = (f"The address has a control character (U+{ord(found):04X}) in the query "
                               f"parameter “{name}”. Remove it and try again.")
                    if request.path.startswith("/api/"):  # the API's validation answer, in JSON
                        return JsonResponse({"message": message, "detail": [{"loc": ["query", name],
                                                                              "msg": "control character"}]},
                                            status=422)
                    return render(request, "400.html", {"message": message}, status=400)
        return self.get_response(request)


TIMEZONE_COOKIE = "tz"


def viewer_timezone(name: str | None):
    """The zone a browser reported (an IANA name such as ``Europe/Berlin``), or None when the value is
    missing or not a zone this machine knows."""
    import zoneinfo

    if not name or len(name) > 64 or name.startswith(("/", ".")) or ".." in name:
        return None
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return None


class ViewerTimezoneMiddleware:
    """Pages show times in the viewer's zone: ``static/js/timezone.js`` stores the browser's zone in the
    ``tz`` cookie; without it (first page, no JavaScript, an unknown name) times are in UTC. Either
    way every time on a page says which zone it is in."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        from django.utils import timezone

        zone = viewer_timezone(request.COOKIES.get(TIMEZONE_COOKIE))
        if zone is None:
            timezone.deactivate()
        else:
            timezone.activate(zone)
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()

"""The answers to failures (``handler400`` and ``handler500`` in reviewer/urls.py): the 500, 503 and
413 pages, and the same in JSON under /api/.

With DEBUG off Django calls :func:`server_error` for every exception nothing else answered, in a
view, a template or a middleware: a database that does not answer (its pool gave no connection in
time, the connection broke) is a 503 with ``Retry-After``, anything else a 500 that names the
request id. Django logs both, with the traceback (LOGGING, reviewer/operations/logs.py). These pages render
without a request: no context processor, no session, no user, so nothing touches the database.
"""

from __future__ import annotations

import sys

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse
from django.template import loader
from django.template.defaultfilters import filesizeformat
from django.views import defaults

RETRY_AFTER_SECONDS = 5


def database_unavailable(error: BaseException | None) -> bool:
    """The database did not answer: an OperationalError (no connection, a pool timeout, a restart
    under the query) or an InterfaceError (a connection already closed), itself or as a cause."""
    while error is not None:
        if isinstance(error, (OperationalError, InterfaceError)):
            return True
        error = error.__cause__
    return False


def failure(request, status: int, template: str, message: str) -> HttpResponse:
    """The page of ``template`` (or ``{"message", "request_id"}`` under /api/) with ``status``."""
    request_id = getattr(request, "request_id", None)
    if request.path_info.startswith("/api/"):
        return JsonResponse({"message": message, "request_id": request_id}, status=status)
    # A customer on the public status page is sent back to it, under its name, not to the staff's dashboard.
    public = request.path_info.startswith("/status/")
    body = loader.render_to_string(template, {"message": message, "request_id": request_id, "public": public,
                                              "site_name": settings.STATUS_PAGE_NAME if public else ""})
    return HttpResponse(body, status=status)


def server_error(request):
    if database_unavailable(sys.exc_info()[1]):  # called while Django handles the exception
        response = failure(request, 503, "503.html", "The service is unavailable for a moment: its database "
                                                     "does not answer. Nothing was changed; try again in a "
                                                     "few seconds.")
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
    return failure(request, 500, "500.html", "The server failed to answer this request. It has been logged "
                                             "with its request id.")


def bad_request(request, exception):
    if isinstance(exception, RequestDataTooBig):
        limit = filesizeformat(settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
        return failure(request, 413, "413.html", f"What you sent is larger than the {limit} this site accepts; "
                                                 "nothing was saved. Shorten the text and send it again.")
    return defaults.bad_request(request, exception)

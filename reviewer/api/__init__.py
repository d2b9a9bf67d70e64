"""The JSON API under /api/, with django-ninja: the OpenAPI document at /api/openapi.json and
interactive docs at /api/docs. One ``NinjaAPI`` with a ``Router`` per resource.

Requests carry a per-user token (``Authorization: Bearer gr_...``, created in admin) and act with the
user's role permissions, the same rules as the pages. Decisions go through ``reviewer.desk.decisions``
and runs through ``agents.tasks.start_run``, as the pages do. Every error is JSON: ``message``, and
the stop reason or the validation ``detail`` where there is one.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.http import Http404
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError
from ninja.errors import ValidationError as NinjaValidationError

from reviewer.api import analytics, datasets, escalations, incidents, policy_lab, publishing, runs, tokens
from reviewer.api.common import ApiError, TokenAuth


class GatedReviewAPI(NinjaAPI):
    def get_operation_id(self, operation) -> str:
        # The ids clients generate code from stay what they were when the API was one module.
        return f"reviewer_api_{operation.view_func.__name__}"


api = GatedReviewAPI(title="Gated review API", version="1", auth=TokenAuth(), urls_namespace="api",
                     description="Incidents, runs and escalations of the gated review product. "
                                 "Authenticate with `Authorization: Bearer <token>`; admin creates tokens.")
api.add_router("", incidents.router)
api.add_router("", runs.router)
api.add_router("", escalations.router)
api.add_router("", publishing.router)
api.add_router("", tokens.router)
api.add_router("", datasets.router)
api.add_router("", policy_lab.router)
api.add_router("", analytics.router)


def _error(request, code: int, message: str, **fields):
    body = {"message": message, **{k: v for k, v in fields.items() if v is not None}}
    return api.create_response(request, body, status=code)


@api.exception_handler(ApiError)
def _api_error(request, exc: ApiError):
    return _error(request, exc.code, exc.message, stop_reason=exc.stop_reason, detail=exc.detail, **exc.extra)


@api.exception_handler(NinjaValidationError)
def _validation_error(request, exc: NinjaValidationError):
    detail = [{k: v for k, v in e.items() if k in ("type", "loc", "msg")} for e in exc.errors]
    return _error(request, 422, "The request is not valid; see detail.", detail=detail)


@api.exception_handler(AuthenticationError)
def _unauthenticated(request, exc):
    return _error(request, 401, "Send a valid API token: Authorization: Bearer <token> (admin creates them).")


@api.exception_handler(PermissionDenied)
def _forbidden(request, exc):
    return _error(request, 403, str(exc) or "Your role does not allow this.")


@api.exception_handler(Http404)
def _not_found(request, exc):
    return _error(request, 404, str(exc) or "Not found.")


@api.exception_handler(RequestDataTooBig)
def _too_big(request, exc):
    # Django refuses to read a body over DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB by default).
    return _error(request, 413, f"The request body is larger than the {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} "
                                "bytes the API reads; send less.")


@api.exception_handler(HttpError)
def _http_error(request, exc: HttpError):
    # ninja's own: 400 for a body that is not JSON ("Cannot parse request body").
    return _error(request, exc.status_code, str(exc))


@api.exception_handler(Exception)
def _unexpected(request, exc):
    # The last resort: still JSON with a message (and logged by Django's request logger).
    logging.getLogger("django.request").exception("API error", exc_info=exc)
    return _error(request, 500, "The server failed to answer this request; it has been logged.")



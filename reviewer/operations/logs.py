"""The product's log lines: one JSON object per line, for a log shipper (docs/operations.md).

Each line has ``time`` (UTC, ISO 8601), ``level``, ``logger`` and ``message``; during a request also
``request_id``, ``method`` and ``path`` (never the query string, a header or the body); ``status``
when Django's request logger reports an answer; ``exception`` (the traceback) with an error. The
keys of subscription links (a UUID in the path) and every copy of a configured model key are left out
wherever they appear.
"""

from __future__ import annotations

import json
import logging
import re
from contextvars import ContextVar
from datetime import UTC, datetime

from agents.core.llm.endpoints import redact

# The request being answered in this thread (set by reviewer.middleware.RequestIdMiddleware).
current_request: ContextVar[dict | None] = ContextVar("current_request", default=None)

UUID = re.compile(r"[0-9a-f]{8}(?:-|%2d)[0-9a-f]{4}(?:-|%2d)[0-9a-f]{4}(?:-|%2d)[0-9a-f]{4}(?:-|%2d)[0-9a-f]{12}",
                  re.IGNORECASE)


def without_keys(text: str) -> str:
    """``text`` without subscription keys (as written or URL-encoded) and without any copy of a
    configured model key (``agents.core.llm.endpoints.redact``: in any case or spacing, URL-encoded or
    in base64): a library's message or a traceback may quote either."""
    return redact(UUID.sub("<key>", text))


def request_fields(request) -> dict:
    """What a line says about the request it was written for."""
    return {"request_id": getattr(request, "request_id", None), "method": (request.method or "")[:16],
            "path": without_keys(request.path)}


class JsonLines(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": without_keys(record.getMessage()),
        }
        request = current_request.get()
        if request is None and hasattr(getattr(record, "request", None), "path"):
            # Django logs an error answer once more after the middleware returned it, with the request.
            request = request_fields(record.request)
        if request is not None:
            line.update(request)
        if (status := getattr(record, "status_code", None)) is not None:
            line["status"] = status
        if record.exc_info:
            line["exception"] = without_keys(self.formatException(record.exc_info))
        return json.dumps(line)


# The health checks an orchestrator asks every few seconds (reviewer/operations/health.py): a 503 of /readyz is its
# answer to the prober, not an error of the product worth a line each time.
PROBE_PATHS = ("/healthz", "/readyz")


class QuietProbes(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.name == "django.request" and getattr(getattr(record, "request", None), "path", "")
                    in PROBE_PATHS)

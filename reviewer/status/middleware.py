"""The status page's URLs answered early, as WhiteNoise answers static files.

Under incident traffic the status page is requested like a static file, and what it serves is stored
(``reviewer.status.snapshots``): it has no use for sessions, CSRF, logins, messages, the viewer's time
zone or htmx. This middleware, placed right after WhiteNoise, hands the status page's URLs straight to
their views and adds the two headers the skipped layers would have added (the Content-Security-Policy
and X-Frame-Options); the security middleware before it still adds its own. Any other URL, and any
status URL whose view has nothing to serve (a 404, a 405), goes through the whole stack as usual.
"""

from __future__ import annotations

from functools import cached_property

from django.conf import settings
from django.http import Http404
from django.urls import Resolver404, resolve, reverse

# The status page's URL names (reviewer/status/urls.py): their views serve stored representations only.
STATUS_URLS = {"status", "status_history", "status_incident", "status_feed", "status_feed_rss", "status_summary",
               "status_json", "status_components", "status_incidents", "status_unresolved", "status_maintenances",
               "status_maintenances_upcoming", "status_maintenances_active", "status_feed_language",
               "status_feed_rss_language"}


class StatusPageMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    @cached_property
    def prefix(self) -> str:
        return reverse("status")

    @cached_property
    def policy(self) -> str:
        from csp.utils import build_policy

        return build_policy()

    def __call__(self, request):
        if request.path_info.startswith(self.prefix) and request.method in ("GET", "HEAD"):
            request.get_host()  # ALLOWED_HOSTS holds here too: another host gets the usual 400
            try:
                match = resolve(request.path_info)
                if match.url_name in STATUS_URLS:
                    response = match.func(request, *match.args, **match.kwargs)
                    response["Content-Security-Policy"] = self.policy
                    response["X-Frame-Options"] = settings.X_FRAME_OPTIONS
                    return response
            except (Resolver404, Http404):
                pass  # the whole stack answers, with its error page
        return self.get_response(request)

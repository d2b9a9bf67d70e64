"""What the navigation shows on every page of the desk that depends on a concern below the wiring:
the number of texts ready to publish, for people who may publish (``reviewer.outbox.ready``)."""

from __future__ import annotations

from functools import cache

from reviewer.outbox.publishing import PUBLISH_PERMISSION
from reviewer.outbox.ready import ready_to_publish


def ready_count(request):
    """``ready_to_publish_count``: None for people who may not publish; otherwise a callable the
    template calls (one COUNT, only when a template reads it: fragments don't, and only once)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or not user.has_perm(PUBLISH_PERMISSION):
        return {"ready_to_publish_count": None}
    return {"ready_to_publish_count": cache(lambda: ready_to_publish().count())}

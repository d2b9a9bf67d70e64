"""What the navigation and the banner show on every page of the desk (Django context processors,
settings.TEMPLATES): the number of pending escalations for people who may see the inbox, the numbers
of texts ready to publish and of held deliveries for people who may publish
(``reviewer.outbox.ready``, ``reviewer.outbox.held``), and the pipelines the emergency brake holds."""

from __future__ import annotations

from functools import cache

from django.utils.functional import SimpleLazyObject

from agents.policy_rows import brakes_on
from reviewer.models import Escalation
from reviewer.outbox.held import held_deliveries
from reviewer.outbox.publishing import PUBLISH_PERMISSION
from reviewer.outbox.ready import ready_to_publish


def pending_count(request):
    """The pending-escalation count in the navigation, for people who may see the inbox (one COUNT);
    a snoozed escalation counts again once its time comes."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or not user.has_perm("reviewer.view_escalation"):
        return {"pending_escalations": None}
    return {"pending_escalations": Escalation.objects.filter(status=Escalation.Status.PENDING).awake().count()}


def ready_count(request):
    """``ready_to_publish_count`` and ``held_deliveries_count``: None for people who may not publish;
    otherwise callables the template calls (one COUNT each, only when a template reads it: fragments
    don't, and only once)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or not user.has_perm(PUBLISH_PERMISSION):
        return {"ready_to_publish_count": None, "held_deliveries_count": None}
    return {"ready_to_publish_count": cache(lambda: ready_to_publish().count()),
            "held_deliveries_count": cache(lambda: held_deliveries().count())}


def brakes(request):
    """The pipelines the emergency brake holds (auto-revision off), for the banner on every page a
    logged-in person sees: one query, only when a template reads it (fragments don't)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"brakes_on": []}
    return {"brakes_on": SimpleLazyObject(brakes_on)}

from django.utils.functional import SimpleLazyObject

from agents.policy_rows import brakes_on
from reviewer.models import Escalation


def navigation(request):
    """The pending-escalation count in the navigation, for people who may see the inbox (one COUNT)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or not user.has_perm("reviewer.view_escalation"):
        return {"pending_escalations": None}
    return {"pending_escalations": Escalation.objects.filter(status=Escalation.Status.PENDING).count()}


def brakes(request):
    """The pipelines the emergency brake holds (auto-revision off), for the banner on every page a
    logged-in person sees: one query, only when a template reads it (fragments don't)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {"brakes_on": []}
    return {"brakes_on": SimpleLazyObject(brakes_on)}

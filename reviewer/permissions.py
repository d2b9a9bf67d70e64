"""Role checks for function views: a clear 403 page, never a crash or a silent redirect loop."""

from functools import wraps

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied

MESSAGES = {
    "agents.start_run": "Only ops staff can start runs.",
    "reviewer.decide_escalation": "Only support leads can decide escalations.",
    "reviewer.view_escalation": "Only support leads can open the escalation inbox.",
    "agents.view_run": "Your role cannot see runs.",
    "agents.view_incident": "Your role cannot see incidents.",
    "reviewer.publish_update": "Only ops staff and support leads can publish updates and retry deliveries.",
    "agents.set_policy_hints": "Only policy admins can change an incident's policy hints (policy_hints); "
                               "leave the field out.",
    "reviewer.export_decisions": "Only support leads and policy admins can export decisions.",
}
NO_ROLE = ("Your account has no role yet: ask an admin to add you to Support leads, Ops staff or "
           "Policy admins.")


def require_perm(perm: str):
    """``@login_required`` plus a permission check that answers 403 with a sentence saying who may."""
    return require_any_perm(perm, message=MESSAGES.get(perm, "Your role does not allow this."))


def require_any_perm(*perms: str, message: str):
    """``@login_required`` plus a check that the user has one of ``perms``; else 403 with ``message``
    (and, for a user in no role, what is missing first)."""

    def decorator(view):
        @login_required
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            if not any(request.user.has_perm(perm) for perm in perms):
                refusal = message
                if not request.user.groups.exists():
                    refusal = f"{NO_ROLE} {message}"
                raise PermissionDenied(refusal)
            return view(request, *args, **kwargs)

        return wrapped

    return decorator

from reviewer.models import Escalation


def navigation(request):
    """The pending-escalation count in the navigation, for people who may see the inbox (one COUNT)."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated or not user.has_perm("reviewer.view_escalation"):
        return {"pending_escalations": None}
    return {"pending_escalations": Escalation.objects.filter(status=Escalation.Status.PENDING).count()}

"""The three roles of SPEC §7 as Django groups with permissions, kept in step after every migrate."""

from django.contrib.auth.models import Group, Permission

SUPPORT_LEAD = "Support leads"
OPS = "Ops staff"
POLICY_ADMIN = "Policy admins"

ROLE_PERMISSIONS = {
    # Every page needs a view permission (reviewer.permissions.require_perm): the dashboard view_run,
    # the incident pages view_incident, which all three roles have; a user with no role sees nothing.
    SUPPORT_LEAD: ["reviewer.decide_escalation", "reviewer.view_run", "reviewer.view_escalation",
                   "reviewer.view_incident"],
    OPS: ["reviewer.start_run", "reviewer.view_run", "reviewer.view_incident", "reviewer.change_incident"],
    # Policy admins also need is_staff to enter the admin site.
    POLICY_ADMIN: ["agents.*", "reviewer.view_run", "reviewer.view_incident", "reviewer.add_incident",
                   "reviewer.change_incident",
                   # unlock logins locked by repeated failures (django-axes), in the admin site
                   "axes.view_accessattempt", "axes.delete_accessattempt"],
}


def _permissions(spec: str):
    app_label, codename = spec.split(".", 1)
    query = Permission.objects.filter(content_type__app_label=app_label)
    return query if codename == "*" else query.filter(codename=codename)


def ensure_roles(**kwargs) -> None:
    """Create the groups and give each exactly its permissions (idempotent; a post_migrate hook)."""
    for name, specs in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=name)
        permissions = Permission.objects.none()
        for spec in specs:
            permissions = permissions | _permissions(spec)
        group.permissions.set(permissions)

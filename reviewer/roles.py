"""The three roles (ops staff, support leads, policy admins) as Django groups with permissions, kept
in step after every migrate."""

from django.contrib.auth.models import Group, Permission

SUPPORT_LEAD = "Support leads"
OPS = "Ops staff"
POLICY_ADMIN = "Policy admins"

ROLE_PERMISSIONS = {
    # Every page needs a view permission (reviewer.permissions.require_perm): the dashboard view_run,
    # the incident pages view_incident, which all three roles have; a user with no role sees nothing.
    SUPPORT_LEAD: ["reviewer.decide_escalation", "agents.view_run", "reviewer.view_escalation",
                   "agents.view_incident", "reviewer.publish_update", "reviewer.export_decisions"],
    OPS: ["agents.start_run", "agents.view_run", "agents.view_incident", "agents.change_incident",
          "reviewer.publish_update"],
    # Policy admins also need is_staff to enter the admin site. "agents.policy*" is every
    # permission on the policy tables and the specialists' data, not on runs or incidents.
    POLICY_ADMIN: ["agents.policy*", "agents.view_run", "agents.view_incident", "agents.add_incident",
                   "agents.change_incident", "agents.set_policy_hints",
                   # unlock logins locked by repeated failures (django-axes), in the admin site
                   "axes.view_accessattempt", "axes.delete_accessattempt",
                   # deadlines, notification channels and holding statements
                   "reviewer.deadlinerule*", "reviewer.notificationchannel*", "reviewer.holdingstatement*",
                   # how many approvals escalations need, and from whom; and the people who give them:
                   # users and their roles, within the roles (reviewer/admin/accounts.py keeps it there)
                   "reviewer.approvalrule*", "auth.view_user", "auth.add_user", "auth.change_user",
                   "reviewer.view_notification", "reviewer.view_deadlinebreach",
                   # where published updates go (names among the operator's allowlist, never URLs)
                   "reviewer.add_deliverychannel", "reviewer.change_deliverychannel",
                   "reviewer.delete_deliverychannel", "reviewer.view_deliverychannel",
                   "reviewer.view_publishedupdate", "reviewer.view_delivery",
                   # the status page's subscribers: narrowed or unsubscribed, never added by hand
                   "reviewer.view_subscriber", "reviewer.change_subscriber",
                   # the components the public status page lists, and the audiences of the private ones
                   "reviewer.statuscomponent*", "reviewer.statusaudience*",
                   # their own API tokens (admin shows a policy admin only theirs; reviewer/admin/api.py)
                   "reviewer.add_apitoken", "reviewer.view_apitoken", "reviewer.change_apitoken",
                   # decisions as datasets (reviewer.desk.datasets), each export recorded in the ledger
                   "reviewer.export_decisions", "reviewer.view_decision", "reviewer.view_ledgerentry",
                   # the learning loop: the guard's scorecard and the amendments mined from decisions
                   "reviewer.amendment*"],
}
# What a run recorded and the incidents it ran on: never edited through a role's blanket grant.
RUN_RECORDS = ("incident", "run", "tracestep", "modelcall", "review", "auditdiff")


def _permissions(spec: str):
    app_label, codename = spec.split(".", 1)
    query = Permission.objects.filter(content_type__app_label=app_label)
    if codename == "policy*":
        return query.exclude(content_type__model__in=RUN_RECORDS)
    if codename.endswith("*"):  # every permission on one model: reviewer.deadlinerule*
        return query.filter(content_type__model=codename[:-1])
    return query.filter(codename=codename)


def role_permission_ids() -> set[int]:
    """Every permission some role has: what a policy admin may give through a user's groups."""
    return set(Permission.objects.filter(group__name__in=ROLE_PERMISSIONS).values_list("id", flat=True))


def ensure_roles(**kwargs) -> None:
    """Create the groups and give each exactly its permissions (idempotent; a post_migrate hook)."""
    for name, specs in ROLE_PERMISSIONS.items():
        group, _ = Group.objects.get_or_create(name=name)
        permissions = Permission.objects.none()
        for spec in specs:
            permissions = permissions | _permissions(spec)
        group.permissions.set(permissions)

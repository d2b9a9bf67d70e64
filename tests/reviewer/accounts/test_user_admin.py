"""Policy admins, who set the approval rules, add users and give them roles in admin, within the
roles: never superuser, never a single permission, never a group with more than the roles give, and
never a role of their own."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.urls import reverse

from reviewer.desk import decisions
from reviewer.models import Escalation
from reviewer.roles import OPS, POLICY_ADMIN, SUPPORT_LEAD
from tests.factories import make_escalation, make_incident

User = get_user_model()


@pytest.fixture
def policy_admin(users):
    """A policy admin as the demo makes one: staff for the admin site, not a superuser."""
    user = User.objects.create_user("policy", password="not-used-here", is_staff=True)
    user.groups.add(Group.objects.get(name=POLICY_ADMIN))
    return user


@pytest.fixture
def as_policy_admin(client, policy_admin):
    client.force_login(policy_admin)
    return client


def change_url(user) -> str:
    return reverse("admin:auth_user_change", args=[user.pk])


def user_form(user, **changes) -> dict:
    """The change form's fields as a policy admin sees them, with ``changes``."""
    data = {"username": user.username, "first_name": user.first_name, "last_name": user.last_name,
            "email": user.email, "is_active": "on", "groups": [g.pk for g in user.groups.all()],
            "date_joined_0": "2026-01-01", "date_joined_1": "00:00:00",
            "SsoIdentity_user-TOTAL_FORMS": "0", "SsoIdentity_user-INITIAL_FORMS": "0"}
    data.update(changes)
    return {key: value for key, value in data.items() if value is not None}


def roles(user) -> set[str]:
    return set(User.objects.get(pk=user.pk).groups.values_list("name", flat=True))


def test_a_policy_admin_adds_a_second_lead_who_completes_a_two_approval_rule(as_policy_admin, users):
    added = as_policy_admin.post(reverse("admin:auth_user_add"), {
        "username": "lead_b", "password1": "a-Long-pass-phrase-42", "password2": "a-Long-pass-phrase-42",
        "usable_password": "true"})
    assert added.status_code == 302, added.content.decode()[:2000]
    lead_b = User.objects.get(username="lead_b")
    leads = Group.objects.get(name=SUPPORT_LEAD)
    saved = as_policy_admin.post(change_url(lead_b), user_form(lead_b, groups=[leads.pk]))
    assert saved.status_code == 302, saved.content.decode()[:2000]
    assert roles(lead_b) == {SUPPORT_LEAD}

    escalation = make_escalation(incident=make_incident("inc_two_leads", severity="P1"), required_approvals=2)
    decisions.decide(escalation.pk, users.lead, "approve")
    assert Escalation.objects.get(pk=escalation.pk).status == "pending"
    decisions.decide(escalation.pk, User.objects.get(username="lead_b"), "approve")
    assert Escalation.objects.get(pk=escalation.pk).status == "approved"


def test_the_user_form_of_a_policy_admin_has_no_superuser_switch_and_no_single_permissions(
        as_policy_admin, users):
    page = as_policy_admin.get(change_url(users.lead2)).content.decode()
    assert 'name="groups"' in page and 'name="is_staff"' in page
    assert 'name="is_superuser"' not in page and 'name="user_permissions"' not in page


def test_a_policy_admin_cannot_make_anyone_superuser_or_grant_single_permissions(as_policy_admin, users):
    delete_users = Permission.objects.get(codename="delete_user")
    saved = as_policy_admin.post(change_url(users.lead2), user_form(
        users.lead2, is_superuser="on", user_permissions=[delete_users.pk]))
    assert saved.status_code == 302
    lead2 = User.objects.get(pk=users.lead2.pk)
    assert not lead2.is_superuser and not lead2.user_permissions.exists()


def test_a_policy_admin_cannot_grant_a_group_with_more_than_the_roles_give(as_policy_admin, users):
    auditors = Group.objects.create(name="User deleters")
    auditors.permissions.add(Permission.objects.get(codename="delete_user"))
    payments = Group.objects.create(name="Payments leads")  # an approval rule's group: no permission
    page = as_policy_admin.get(change_url(users.lead2)).content.decode()
    assert "Payments leads" in page and "User deleters" not in page
    refused = as_policy_admin.post(change_url(users.lead2), user_form(users.lead2, groups=[auditors.pk]))
    assert refused.status_code == 200 and "Select a valid choice" in refused.content.decode()
    assert roles(users.lead2) == {SUPPORT_LEAD}
    given = as_policy_admin.post(change_url(users.lead2), user_form(
        users.lead2, groups=[Group.objects.get(name=SUPPORT_LEAD).pk, payments.pk]))
    assert given.status_code == 302 and roles(users.lead2) == {SUPPORT_LEAD, "Payments leads"}


def test_a_policy_admin_cannot_change_their_own_roles_or_flags(as_policy_admin, policy_admin):
    leads, ops = Group.objects.get(name=SUPPORT_LEAD), Group.objects.get(name=OPS)
    as_policy_admin.post(change_url(policy_admin), user_form(
        policy_admin, groups=[leads.pk, ops.pk], is_superuser="on", is_staff=None))
    me = User.objects.get(pk=policy_admin.pk)
    assert roles(me) == {POLICY_ADMIN} and me.is_staff and not me.is_superuser
    assert not me.has_perm("reviewer.decide_escalation")


def test_a_policy_admin_cannot_change_a_superuser_or_set_their_password(as_policy_admin, users):
    # users.admin is a superuser: a new password would give a policy admin all of its powers.
    assert as_policy_admin.post(change_url(users.admin), user_form(users.admin, is_active=None)).status_code == 403
    password = reverse("admin:auth_user_password_change", args=[users.admin.pk])
    assert as_policy_admin.post(password, {"password1": "x-Long-pass-phrase-42",
                                           "password2": "x-Long-pass-phrase-42"}).status_code == 403
    superuser = User.objects.get(pk=users.admin.pk)
    assert superuser.is_active and superuser.check_password("x-Long-pass-phrase-42") is False


def test_a_policy_admin_cannot_change_a_user_with_permissions_beyond_the_roles(as_policy_admin, users):
    users.ops.user_permissions.add(Permission.objects.get(codename="delete_user"))
    assert as_policy_admin.post(change_url(users.ops), user_form(users.ops, is_active=None)).status_code == 403
    assert User.objects.get(pk=users.ops.pk).is_active


def test_leads_and_ops_cannot_manage_users(client, users):
    for name in ("lead", "ops"):
        client.force_login(getattr(users, name))
        assert client.get(reverse("admin:auth_user_changelist")).status_code in (302, 403)

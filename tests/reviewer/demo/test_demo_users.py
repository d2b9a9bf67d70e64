"""The demo's users keep the roles apart: `admin` is a policy admin (admin site, policies), not a
superuser, so deciding escalations and starting runs stay with the lead and ops."""

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from agents.models import Run
from reviewer.demo.seed import ensure_users
from reviewer.models import Escalation
from reviewer.roles import OPS, POLICY_ADMIN, SUPPORT_LEAD


@pytest.fixture
def demo_users(db, tmp_path):
    logins = ensure_users(tmp_path / "demo-logins.json")
    User = get_user_model()
    return {name: User.objects.get(username=name) for name in logins}


def roles(user) -> set[str]:
    return set(user.groups.values_list("name", flat=True))


def test_demo_admin_is_a_policy_admin_not_a_superuser(demo_users):
    admin = demo_users["admin"]
    assert (admin.is_superuser, admin.is_staff, roles(admin)) == (False, True, {POLICY_ADMIN})
    assert (demo_users["lead"].is_superuser, roles(demo_users["lead"])) == (False, {SUPPORT_LEAD})
    assert (demo_users["ops"].is_superuser, roles(demo_users["ops"])) == (False, {OPS})
    assert not admin.has_perm("reviewer.decide_escalation") and not admin.has_perm("agents.start_run")


def test_a_demo_admin_made_superuser_by_an_older_demo_is_demoted(db, tmp_path):
    User = get_user_model()
    User.objects.create_superuser("admin", password="an-older-demo-password")
    ensure_users(tmp_path / "demo-logins.json")
    assert User.objects.get(username="admin").is_superuser is False


def test_demo_admin_tunes_policies_but_cannot_decide_or_start_runs(client, demo_runs, tmp_path):
    ensure_users(tmp_path / "demo-logins.json")  # the demo's own users, over the test users of the same names
    client.force_login(get_user_model().objects.get(username="admin"))
    assert client.get(reverse("admin:index")).status_code == 200
    assert client.get(reverse("admin:agents_pipelinepolicy_changelist")).status_code == 200
    assert client.get(reverse("home")).status_code == 200
    assert client.get(reverse("incident", args=["inc_pay_2041"])).status_code == 200

    escalation = Escalation.objects.filter(status="pending").first()
    assert client.get(reverse("inbox")).status_code == 403
    decided = client.post(reverse("escalation_decide", args=[escalation.pk]), {"action": "reject", "note": "no"})
    assert decided.status_code == 403
    runs_before = Run.objects.count()
    started = client.post(reverse("start_run", args=["inc_pay_2041"]),
                          {"pipeline": "reflection", "goal": "Write the customer update."})
    assert started.status_code == 403
    assert Run.objects.count() == runs_before
    escalation.refresh_from_db()
    assert escalation.status == "pending"


def test_the_demo_has_two_leads_so_a_two_approval_rule_completes(demo_users):
    from reviewer.desk import decisions
    from tests.factories import make_escalation, make_incident

    assert roles(demo_users["lead2"]) == {SUPPORT_LEAD} and not demo_users["lead2"].is_staff
    escalation = make_escalation(incident=make_incident("inc_demo_two", severity="P1"), required_approvals=2)
    decisions.decide(escalation.pk, demo_users["lead"], "approve")
    assert Escalation.objects.get(pk=escalation.pk).status == "pending"
    decisions.decide(escalation.pk, demo_users["lead2"], "approve")
    assert Escalation.objects.get(pk=escalation.pk).status == "approved"


def test_the_demo_admin_who_sets_approval_rules_may_add_users(client, demo_users):
    client.force_login(demo_users["admin"])
    assert client.get(reverse("admin:reviewer_approvalrule_add")).status_code == 200
    assert client.get(reverse("admin:auth_user_add")).status_code == 200
    page = client.get(reverse("admin:auth_user_change", args=[demo_users["lead2"].pk])).content.decode()
    assert 'name="groups"' in page and 'name="is_superuser"' not in page

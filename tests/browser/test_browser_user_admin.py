"""In a browser: a policy admin (not a superuser) adds a second support lead in admin, at 1366×900 and
390×844, the pages checked with axe-core; the user form offers roles, never superuser status or single
permissions. Screenshots in test-artifacts/ (user-admin-*.png)."""

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from playwright.sync_api import expect

from reviewer.roles import POLICY_ADMIN, SUPPORT_LEAD
from tests.factories import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("no_csp_violation")]
NEW_PASSWORD = "a-Long-pass-phrase-42"


@pytest.mark.parametrize("width, height", [(1366, 900), (390, 844)], ids=["1366", "390"])
def test_a_policy_admin_adds_a_second_lead(page, live_server, users, screenshot, width, height):
    User = get_user_model()
    policy = User.objects.create_user("policy", password=PASSWORD, is_staff=True)
    policy.groups.add(Group.objects.get(name=POLICY_ADMIN))
    Group.objects.create(name="Superpowers").permissions.set(Permission.objects.filter(codename="delete_user"))
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("input[name=username]", "policy")
    page.fill("input[name=password]", PASSWORD)
    page.click("input[type=submit]")

    page.goto(f"{live_server.url}/admin/auth/user/add/")
    page.fill("#id_username", "lead_b")
    page.fill("#id_password1", NEW_PASSWORD)
    page.fill("#id_password2", NEW_PASSWORD)
    screenshot(page, f"user-admin-add-{width}")
    page.locator("input[name=_save]").click()

    expect(page.locator(".messagelist")).to_contain_text("was added successfully")
    expect(page.locator("#id_is_superuser")).to_have_count(0)
    expect(page.locator("#id_user_permissions")).to_have_count(0)
    # The roles are offered, and only those (not a group with more than the roles give).
    expect(page.locator("#id_groups option")).to_have_text(sorted(["Ops staff", "Policy admins", SUPPORT_LEAD]))
    page.get_by_label("Groups").select_option(label=SUPPORT_LEAD)
    screenshot(page, f"user-admin-change-{width}")
    page.locator("input[name=_save]").click()
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    lead_b = User.objects.get(username="lead_b")
    assert set(lead_b.groups.values_list("name", flat=True)) == {SUPPORT_LEAD} and not lead_b.is_superuser
    assert lead_b.check_password(NEW_PASSWORD)

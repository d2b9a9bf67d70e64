"""Single sign-on in Chromium, through a real OpenID Connect provider on loopback (tests/oidc.py): a
lead signs in and works the inbox; once the provider no longer lists the lead group, the next sign-in
takes the lead role away and keeps the role an admin gave by hand. With password logins off, the
login page offers only the provider (test-artifacts/device-login-sso-only-1366.png, -390.png) and a posted
password is refused."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from reviewer.models import SsoGroupMapping
from reviewer.roles import OPS, SUPPORT_LEAD
from tests.browser.helpers import assert_fits
from tests.factories import PASSWORD, make_user
from tests.oidc import OidcProvider, use_provider

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("no_csp_violation")]


@pytest.fixture
def provider(live_server, settings, tmp_path):
    settings.SITE_URL = live_server.url
    provider = OidcProvider(tmp_path, live_server.url)
    use_provider(settings, provider)
    SsoGroupMapping.objects.create(idp_group="support-leads", role=Group.objects.get(name=SUPPORT_LEAD))
    SsoGroupMapping.objects.create(idp_group="ops", role=Group.objects.get(name=OPS))
    yield provider
    provider.stop()


def sign_in_at_provider(page, login: str):
    """The provider's own login form (its development form: any password)."""
    page.fill("input[name=login]", login)
    page.fill("input[name=password]", "any")
    page.click("button[type=submit]")


def test_a_lead_signs_in_through_the_provider_and_loses_the_role_when_the_provider_drops_the_group(
        page, live_server, provider, screenshot, accessible_pages):
    provider.set_accounts({"lena": {"email": "lena@example.com", "name": "Lena Lund", "groups": ["support-leads"]}})
    page.goto(f"{live_server.url}/inbox/")  # sent to log in first
    page.get_by_role("link", name="Sign in with Test Identity").click()
    assert page.url.startswith(provider.issuer)
    sign_in_at_provider(page, "lena")

    expect(page.get_by_role("heading", name="Escalation inbox")).to_be_visible()
    assert page.url == f"{live_server.url}/inbox/"
    expect(page.locator(".who")).to_have_text("Lena Lund")
    lena = get_user_model().objects.get(sso_identity__subject="lena")
    assert set(lena.groups.values_list("name", flat=True)) == {SUPPORT_LEAD}

    # A superuser gives her the ops role by hand, on her page in the admin, which says where each role came from.
    admin = give_ops_by_hand(page, live_server, lena)
    provider.set_accounts({"lena": {"email": "lena@example.com", "name": "Lena Lund", "groups": []}})
    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()
    page.get_by_role("link", name="Sign in with Test Identity").click()  # still signed in at the provider

    expect(page.locator(".who")).to_have_text("Lena Lund")
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()  # the ops role stayed
    expect(page.get_by_role("navigation", name="Main").get_by_role("link", name="Inbox")).to_have_count(0)
    assert set(lena.groups.values_list("name", flat=True)) == {OPS}
    page.goto(f"{live_server.url}/inbox/")
    expect(page.get_by_text("Only support leads can open the escalation inbox.")).to_be_visible()
    screenshot(page, "sso-lead-role-gone")

    admin.reload()
    roles = admin.locator(".field-roles_and_sources")
    expect(roles).to_have_text(re.compile(r"^\s*Roles:\s*Ops staff: given by hand in the admin\s*$"))  # no other
    expect(admin.locator(".inline-group")).to_contain_text("lena")  # her identity at the provider
    screenshot(admin, "sso-admin-user-roles")
    # axe-core on what the product adds to Django's user page (the rest of that page is Django's own)
    admin.evaluate(accessible_pages.source)
    found = admin.evaluate("() => axe.run(['.field-roles_and_sources', '.inline-group'], "
                           "{resultTypes: ['violations']})")["violations"]
    assert [v["id"] for v in found if v["impact"] in ("critical", "serious")] == []


def give_ops_by_hand(page, live_server, user):
    """A superuser, in a browser of their own, adds the ops role on ``user``'s admin page; the page stays open."""
    make_user("root", staff=True)
    admin = page.context.browser.new_context(viewport={"width": 1366, "height": 900}).new_page()
    admin.goto(f"{live_server.url}/admin/login/?next=/admin/auth/user/{user.pk}/change/")
    admin.fill("input[name=username]", "root")
    admin.fill("input[name=password]", PASSWORD)
    admin.click("input[type=submit]")
    roles = admin.locator(".field-roles_and_sources")
    expect(roles).to_contain_text("Support leads: single sign-on, through the provider's group support-leads")
    admin.select_option("#id_groups", label=[SUPPORT_LEAD, OPS])  # one list: keep the lead role, add ops
    admin.click("input[name=_continue]")
    expect(roles).to_contain_text("Ops staff: given by hand in the admin")
    return admin


@pytest.mark.parametrize("width, height", [(1366, 900), (390, 844)], ids=["1366", "390"])
def test_with_password_logins_off_the_login_page_offers_only_the_provider_and_refuses_a_password(
        page, live_server, provider, settings, screenshot, width, height):
    settings.LOCAL_LOGIN = False
    make_user("lead", group=SUPPORT_LEAD)
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{live_server.url}/accounts/login/")
    expect(page.get_by_role("link", name="Sign in with Test Identity")).to_be_visible()
    expect(page.locator("input[name=password]")).to_have_count(0)
    assert_fits(page, f"login-sso-only-{width}", screenshot)

    csrf = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    refused = page.request.post(f"{live_server.url}/accounts/login/", form={
        "csrfmiddlewaretoken": csrf, "username": "lead", "password": PASSWORD})
    assert refused.status == 403
    assert "Logging in with a username and password is turned off here" in refused.text()
    page.goto(f"{live_server.url}/inbox/")
    expect(page.get_by_role("heading", name="Log in")).to_be_visible()  # not logged in


@pytest.mark.parametrize("width, height", [(1366, 900), (390, 844)], ids=["1366", "390"])
def test_a_new_person_in_no_mapped_group_is_told_on_the_login_page_why_no_account_was_made(
        page, live_server, provider, screenshot, width, height):
    provider.set_accounts({"max": {"email": "max@example.com", "groups": ["marketing"]}})
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{live_server.url}/accounts/login/")
    expect(page.locator("input[name=password]")).to_be_visible()  # passwords still on, below the provider
    assert_fits(page, f"login-sso-and-password-{width}", screenshot)
    page.get_by_role("link", name="Sign in with Test Identity").click()
    sign_in_at_provider(page, "max")

    expect(page.get_by_text("Your account at Test Identity is in no group that gives a role here")).to_be_visible()
    expect(page.locator(".who")).to_have_count(0)
    assert_fits(page, f"login-sso-no-role-{width}", screenshot)
    assert not get_user_model().objects.filter(email="max@example.com").exists()

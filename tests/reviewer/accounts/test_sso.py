"""Single sign-on: a sign-in through a real OpenID Connect provider (tests/oidc.py) maps the provider's
groups to roles at every login, taking away only the roles it gave; password logins can be turned
off; the settings and the group mappings are checked with precise messages."""

import os
import re
import subprocess
import sys
import time
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest
from axes.models import AccessAttempt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ImproperlyConfigured, SuspiciousOperation, ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from reviewer.accounts.sso import SsoBackend, apply_roles, check_settings, role_sources
from reviewer.models import SsoGroupMapping, SsoIdentity, SsoRoleGrant
from reviewer.roles import OPS, POLICY_ADMIN, SUPPORT_LEAD
from tests.factories import PASSWORD, make_user
from tests.oidc import CLIENT_SECRET, OidcProvider, sign_in_at_provider, use_provider

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))


def role(name: str) -> Group:
    return Group.objects.get(name=name)


def roles_of(user) -> set[str]:
    return set(user.groups.values_list("name", flat=True))


@pytest.fixture
def mappings(db):
    SsoGroupMapping.objects.create(idp_group="support-leads", role=role(SUPPORT_LEAD))
    SsoGroupMapping.objects.create(idp_group="/ops", role=role(OPS))
    SsoGroupMapping.objects.create(idp_group="policy", role=role(POLICY_ADMIN))


@pytest.fixture(scope="module")
def started_provider(tmp_path_factory):
    provider = OidcProvider(tmp_path_factory.mktemp("oidc"), "http://testserver")
    yield provider
    provider.stop()


@pytest.fixture
def provider(started_provider, settings, db):
    settings.SITE_URL = "http://testserver"
    use_provider(settings, started_provider)
    return started_provider


def sign_in(client: Client, login: str, next_page: str = "/inbox/"):
    """The whole sign-in: the product's start, the provider's login form, the product's callback."""
    start = client.get("/sso/start/", {"next": next_page})
    assert start.status_code == 302
    back = sign_in_at_provider(start["Location"], login)
    return client.get(back)


# -- through the provider ----------------------------------------------------------------------------


def test_the_sign_in_asks_for_a_code_with_state_nonce_pkce_and_the_fixed_callback(provider, client):
    start = client.get("/sso/start/", HTTP_HOST="127.0.0.1")  # whatever Host the request names
    query = parse_qs(urlsplit(start["Location"]).query)
    assert start["Location"].startswith(f"{provider.issuer}/auth?")
    assert query["redirect_uri"] == ["http://testserver/sso/callback/"]  # SITE_URL's, as registered
    assert query["response_type"] == ["code"] and query["code_challenge_method"] == ["S256"]
    assert len(query["state"][0]) >= 32 and len(query["nonce"][0]) >= 32 and query["code_challenge"][0]


def test_a_lead_signs_in_through_the_provider_and_lands_in_the_inbox(provider, mappings, client):
    provider.set_accounts({"lena": {"email": "lena@example.com", "name": "Lena Lund", "groups": ["support-leads"]}})
    answer = sign_in(client, "lena")
    assert answer.status_code == 302 and answer["Location"] == "/inbox/"
    assert client.get("/inbox/").status_code == 200
    user = get_user_model().objects.get(sso_identity__subject="lena")
    assert (user.username, user.email, user.first_name, user.last_name) == ("lena", "lena@example.com", "Lena", "Lund")
    assert roles_of(user) == {SUPPORT_LEAD} and not user.is_staff
    assert SsoIdentity.objects.get(user=user).groups == ["support-leads"]


def test_a_lead_removed_from_the_group_loses_the_role_at_the_next_sign_in(provider, mappings, client):
    provider.set_accounts({"lena": {"groups": ["support-leads"]}})
    sign_in(client, "lena")
    user = get_user_model().objects.get(username="lena")
    user.groups.add(role(OPS))  # given by hand in the admin
    client.post("/accounts/logout/")
    provider.set_accounts({"lena": {"groups": ["marketing"]}})
    sign_in(client, "lena")
    assert roles_of(user) == {OPS}
    assert client.get("/inbox/").status_code == 403


def test_a_new_person_in_no_mapped_group_gets_no_account_and_is_told_why(provider, mappings, client):
    provider.set_accounts({"max": {"email": "max@example.com", "groups": ["marketing"]}})
    answer = sign_in(client, "max")
    assert answer.status_code == 302 and answer["Location"] == "/accounts/login/?sso=failed"
    page = client.get(answer["Location"]).content.decode()
    assert "in no group that gives a role here, so no account was made" in page
    assert not get_user_model().objects.filter(email="max@example.com").exists()


def test_a_known_person_in_no_mapped_group_signs_in_with_no_role_and_sees_so(provider, mappings, client):
    provider.set_accounts({"lena": {"groups": ["support-leads"]}})
    sign_in(client, "lena")
    client.post("/accounts/logout/")
    provider.set_accounts({"lena": {"groups": []}})
    answer = sign_in(client, "lena", next_page="/")
    assert answer["Location"] == "/"
    home = client.get("/")
    assert home.status_code == 403 and "Your account has no role yet" in home.content.decode()


def test_a_subject_longer_than_the_product_keeps_is_refused_on_the_login_page_and_logged(provider, mappings, client,
                                                                                         caplog):
    login = "x" * 256
    provider.set_accounts({login: {"email": "long@example.com", "groups": ["support-leads"]}})
    with caplog.at_level("WARNING", logger="reviewer.sso"):
        answer = sign_in(client, login)
    assert answer.status_code == 302 and answer["Location"] == "/accounts/login/?sso=failed"
    page = client.get(answer["Location"]).content.decode()
    assert "longer than this product keeps (255 characters)" in page
    assert "refused a subject of 256 characters" in caplog.text and login not in caplog.text
    assert not SsoIdentity.objects.exists() and not get_user_model().objects.filter(email="long@example.com").exists()


def test_a_person_is_found_by_the_providers_subject_not_by_an_email_another_account_has(provider, mappings, client,
                                                                                       users):
    provider.set_accounts({"lead": {"email": "lead@example.com", "groups": ["/ops"]}})
    users.lead.email = "lead@example.com"
    users.lead.save()
    sign_in(client, "lead")
    signed_in = get_user_model().objects.get(sso_identity__subject="lead")
    assert signed_in != users.lead and signed_in.username.startswith("lead-")  # the local "lead" stays apart
    assert roles_of(users.lead) == {SUPPORT_LEAD}


def test_a_turned_off_account_cannot_sign_in(provider, mappings, client):
    provider.set_accounts({"lena": {"groups": ["support-leads"]}})
    sign_in(client, "lena")
    client.post("/accounts/logout/")
    get_user_model().objects.filter(username="lena").update(is_active=False)
    answer = sign_in(client, "lena")
    assert answer["Location"] == "/accounts/login/?sso=failed"
    assert "Your account here is turned off" in client.get(answer["Location"]).content.decode()


def test_a_callback_with_a_state_the_product_never_issued_is_refused(provider, client):
    client.get("/sso/start/")
    assert client.get("/sso/callback/", {"code": "forged", "state": "not-ours"}).status_code == 400


def test_no_token_code_or_secret_reaches_the_log(provider, mappings, client, caplog):
    provider.set_accounts({"lena": {"groups": ["support-leads"]}, "max": {"groups": ["marketing"]}})
    caplog.set_level("DEBUG")
    start = client.get("/sso/start/")
    back = sign_in_at_provider(start["Location"], "lena")
    client.get(back)
    client.post("/accounts/logout/")
    sign_in(client, "max")  # refused: a warning is logged
    code = parse_qs(urlsplit(back).query)["code"][0]
    assert "single sign-on refused a new person" in caplog.text
    for secret in (CLIENT_SECRET, code, "eyJ"):  # "eyJ": how every JWT (ID token, access token) starts
        assert secret not in caplog.text


def fail_sign_ins(client: Client, times: int) -> None:
    """What anyone can do with no account at the provider: start a sign-in, then come back with a made-up code."""
    for _ in range(times):
        state = parse_qs(urlsplit(client.get("/sso/start/")["Location"]).query)["state"][0]
        assert client.get("/sso/callback/", {"code": "made-up", "state": state}).status_code in (302, 429)


def test_failed_sign_ins_from_an_address_never_lock_out_another_browser_at_that_address(provider, mappings,
                                                                                      settings):
    provider.set_accounts({"lena": {"groups": ["support-leads"]}})
    fail_sign_ins(Client(), settings.AXES_FAILURE_LIMIT + 2)  # same address as every test client
    colleague = Client()
    answer = sign_in(colleague, "lena")
    assert answer.status_code == 302 and answer["Location"] == "/inbox/"
    assert colleague.get("/inbox/").status_code == 200


def test_a_browser_that_keeps_failing_is_locked_and_only_that_browser(provider, mappings, settings):
    provider.set_accounts({"lena": {"groups": ["support-leads"]}})
    attacker = Client()
    fail_sign_ins(attacker, settings.AXES_FAILURE_LIMIT)
    refused = sign_in(attacker, "lena")  # even a right sign-in, in the locked browser
    assert refused.status_code == 429 and "Too many failed sign-ins" in refused.content.decode()
    assert "_auth_user_id" not in attacker.session
    assert sign_in(Client(), "lena")["Location"] == "/inbox/"


def test_a_successful_sign_in_clears_what_the_failures_counted(provider, mappings, settings):
    provider.set_accounts({"lena": {"groups": ["support-leads"]}})
    client = Client()
    fail_sign_ins(client, settings.AXES_FAILURE_LIMIT - 1)
    assert AccessAttempt.objects.exists()
    assert sign_in(client, "lena")["Location"] == "/inbox/"
    assert not AccessAttempt.objects.exists()


def test_failed_sign_ins_do_not_count_towards_the_password_lock_of_the_address(provider, settings, users):
    settings.AXES_IP_FAILURE_LIMIT = 3
    for _ in range(4):
        fail_sign_ins(Client(), 1)
    assert Client().post("/accounts/login/", {"username": "lead", "password": PASSWORD}).status_code == 302


def test_past_the_address_ceiling_each_browser_gets_one_try_and_a_first_try_still_signs_in(provider, mappings,
                                                                                          settings):
    settings.SSO_ADDRESS_FAILURE_LIMIT = 3
    provider.set_accounts({"lena": {"groups": ["support-leads"]}})
    for _ in range(3):
        fail_sign_ins(Client(), 1)
    slowed = Client()
    fail_sign_ins(slowed, 1)
    assert sign_in(slowed, "lena").status_code == 429  # one failure is its limit now
    assert sign_in(Client(), "lena")["Location"] == "/inbox/"


def signed(claims: dict) -> tuple[str, str]:
    """An RS256 ID token with ``claims``, and the public key that checks it."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return jwt.encode(claims, key, algorithm="RS256"), public.decode()


@pytest.mark.parametrize(("changes", "refusal"), [
    ({"iss": "https://other.example.com"}, "is not OIDC_OP_ISSUER"),
    ({"aud": "another-client"}, "not issued to this client"),
    ({"aud": ["another-client", "a-third"]}, "not issued to this client"),
    ({"aud": ["another-client", "gated-review"]}, "several audiences and no authorized party"),
    ({"aud": ["another-client", "gated-review"], "azp": "another-client"}, "another party than this client"),
    ({"azp": "another-client"}, "another party than this client"),
])
def test_an_id_token_from_another_issuer_or_for_another_client_is_refused(settings, changes, refusal):
    settings.SSO_ENABLED, settings.OIDC_RP_CLIENT_ID = True, "gated-review"
    settings.OIDC_OP_ISSUER = "https://idp.example.com"
    claims = {"iss": "https://idp.example.com", "aud": "gated-review", "sub": "lena", "nonce": "n1",
              "exp": int(time.time()) + 300}
    token, settings.OIDC_RP_IDP_SIGN_KEY = signed(claims)
    assert SsoBackend().verify_token(token, nonce="n1")["sub"] == "lena"
    token, settings.OIDC_RP_IDP_SIGN_KEY = signed({**claims, **changes})
    with pytest.raises(SuspiciousOperation, match=refusal):
        SsoBackend().verify_token(token, nonce="n1")


def test_an_id_token_for_several_audiences_given_to_this_client_is_accepted(settings):
    settings.SSO_ENABLED, settings.OIDC_RP_CLIENT_ID = True, "gated-review"
    settings.OIDC_OP_ISSUER = "https://idp.example.com"
    token, settings.OIDC_RP_IDP_SIGN_KEY = signed({
        "iss": "https://idp.example.com", "aud": ["another-client", "gated-review"], "azp": "gated-review",
        "sub": "lena", "nonce": "n1", "exp": int(time.time()) + 300})
    assert SsoBackend().verify_token(token, nonce="n1")["azp"] == "gated-review"


def test_sso_discovery_prints_the_providers_settings_from_its_discovery_document(started_provider, capsys):
    call_command("sso_discovery", started_provider.issuer)
    lines = capsys.readouterr().out.splitlines()
    expected = {name: value for name, value in started_provider.settings().items() if name.startswith("OIDC_OP_")}
    assert lines == [f"{name}={value}" for name, value in expected.items()]


def test_sso_discovery_says_what_it_could_not_read(started_provider):
    with pytest.raises(CommandError, match=r"Cannot read the discovery document .*/nowhere/.well-known/"):
        call_command("sso_discovery", f"{started_provider.issuer}/nowhere")


# -- the roles, at each sign-in ----------------------------------------------------------------------


def test_policy_admins_from_single_sign_on_enter_the_admin_site_while_they_hold_the_role(mappings):
    user = make_user("pat")
    assert apply_roles(user, ["policy"]).added == [POLICY_ADMIN]
    user.refresh_from_db()
    assert user.is_staff and roles_of(user) == {POLICY_ADMIN}
    assert apply_roles(user, []).removed == [POLICY_ADMIN]
    user.refresh_from_db()
    assert not user.is_staff and roles_of(user) == set()


def test_a_role_given_by_hand_first_stays_when_the_provider_stops_listing_its_group(mappings):
    user = make_user("lena", group=SUPPORT_LEAD)
    apply_roles(user, ["support-leads", "/ops"])
    assert not SsoRoleGrant.objects.filter(user=user, role=role(SUPPORT_LEAD)).exists()
    changes = apply_roles(user, [])
    assert changes.removed == [OPS] and roles_of(user) == {SUPPORT_LEAD}


def test_a_role_an_admin_took_away_comes_back_only_while_the_provider_lists_its_group(mappings):
    user = make_user("omar")
    apply_roles(user, ["/ops"])
    user.groups.remove(role(OPS))  # by hand
    assert apply_roles(user, ["/ops"]).added == [OPS]
    user.groups.remove(role(OPS))
    assert apply_roles(user, []).removed == [] and not SsoRoleGrant.objects.filter(user=user).exists()


def test_the_admin_user_page_shows_where_each_role_came_from(mappings, client, db):
    make_user("root", staff=True)
    user = make_user("lena", group=OPS)
    apply_roles(user, ["support-leads"])
    assert role_sources(user)[0] == (OPS, "given by hand in the admin")
    client.force_login(get_user_model().objects.get(username="root"))
    page = client.get(f"/admin/auth/user/{user.pk}/change/").content.decode()
    assert "Where the roles came from" in page
    assert "<b>Support leads</b>: single sign-on, through the provider&#x27;s group support-leads" in page
    assert "<b>Ops staff</b>: given by hand in the admin" in page


# -- the login page and password logins ---------------------------------------------------------------


@pytest.fixture
def sso_on(settings):
    settings.SSO_ENABLED = True
    settings.SSO_PROVIDER_NAME = "<b>Acme</b> SSO"
    settings.OIDC_OP_AUTHORIZATION_ENDPOINT = "https://idp.example.com/auth"


def test_the_login_page_offers_the_provider_escaped_beside_the_password_form(sso_on, client):
    page = client.get("/accounts/login/", {"next": "/inbox/"}).content.decode()
    assert 'href="/sso/start/?next=/inbox/"' in page
    assert "Sign in with &lt;b&gt;Acme&lt;/b&gt; SSO" in page and 'name="password"' in page


def test_with_local_logins_off_the_password_form_is_gone_and_refused(sso_on, settings, users):
    settings.LOCAL_LOGIN = False
    client = Client()
    assert 'name="password"' not in client.get("/accounts/login/").content.decode()
    refused = client.post("/accounts/login/", {"username": "lead", "password": PASSWORD})
    assert refused.status_code == 403
    assert "Logging in with a username and password is turned off here" in refused.content.decode()
    assert "_auth_user_id" not in client.session


def test_with_local_logins_off_the_admin_login_sends_to_the_login_page_and_refuses_passwords(sso_on, settings,
                                                                                          users):
    settings.LOCAL_LOGIN = False
    client = Client()
    assert client.get("/admin/login/", {"next": "/admin/"})["Location"] == "/accounts/login/?next=%2Fadmin%2F"
    assert client.post("/admin/login/", {"username": "admin", "password": PASSWORD}).status_code == 403
    assert "_auth_user_id" not in client.session


def test_the_sign_in_returns_only_to_a_page_of_this_site(sso_on, client, db):
    client.get("/sso/start/", {"next": "https://evil.example.com/"})
    assert client.session["oidc_login_next"] is None  # then the dashboard
    client.get("/sso/start/", {"next": "/inbox/"})
    assert client.session["oidc_login_next"] == "/inbox/"


def test_a_sign_in_the_provider_answers_with_an_error_says_so_on_the_login_page(sso_on, client, db):
    answer = client.get("/sso/callback/", {"error": "access_denied", "state": "whatever"})
    assert answer["Location"] == "/accounts/login/?sso=failed"
    page = " ".join(client.get(answer["Location"]).content.decode().split())
    assert "Signing in with &lt;b&gt;Acme&lt;/b&gt; SSO did not complete. Try again" in page


def test_without_single_sign_on_its_addresses_are_not_found_and_the_page_has_no_button(client, db):
    assert client.get("/sso/start/").status_code == 404
    assert client.get("/sso/callback/").status_code == 404
    assert "Sign in with" not in client.get("/accounts/login/").content.decode()


# -- what the operator configures ---------------------------------------------------------------------


@pytest.mark.parametrize(("idp_group", "message"), [
    (" leads", "spaces at its start or end"),
    ("leads\x07", "control character (U+0007)"),
])
def test_a_group_mapping_is_checked_with_a_precise_message(idp_group, message, db):
    with pytest.raises(ValidationError, match=re.escape(message)):
        SsoGroupMapping(idp_group=idp_group, role=role(OPS)).full_clean()


def test_a_group_maps_only_to_one_of_the_products_roles(db):
    with pytest.raises(ValidationError, match="Choose one of the roles: Support leads, Ops staff, Policy admins"):
        SsoGroupMapping(idp_group="leads", role=Group.objects.create(name="Other")).full_clean()


def test_an_endpoint_in_plain_http_off_this_machine_stops_the_start(settings):
    settings.SSO_ENABLED = True
    for name in ("OIDC_OP_ISSUER", "OIDC_OP_AUTHORIZATION_ENDPOINT", "OIDC_OP_TOKEN_ENDPOINT",
                 "OIDC_OP_USER_ENDPOINT", "OIDC_OP_JWKS_ENDPOINT"):
        setattr(settings, name, "https://idp.example.com/x")
    check_settings()
    settings.OIDC_OP_TOKEN_ENDPOINT = "http://idp.example.com/token"
    with pytest.raises(ImproperlyConfigured, match="OIDC_OP_TOKEN_ENDPOINT must use https"):
        check_settings()


def settings_error(**env) -> str:
    """What importing the settings says with ``env`` (a fresh interpreter: settings read it once)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OIDC_", "LOCAL_LOGIN", "SSO_"))}
    done = subprocess.run([sys.executable, "-c", "import reviewer.settings"], cwd=ROOT, capture_output=True, text=True,
                          env={**clean, "DEBUG": "true", **env}, timeout=60)
    return done.stderr


def test_settings_refuse_local_logins_off_without_single_sign_on_and_a_half_configured_provider():
    assert "LOCAL_LOGIN is off but single sign-on is not configured" in settings_error(LOCAL_LOGIN="off")
    assert ("OIDC_RP_CLIENT_ID is set, so single sign-on is on, but OIDC_RP_CLIENT_SECRET, OIDC_OP_ISSUER"
            in settings_error(OIDC_RP_CLIENT_ID="x"))

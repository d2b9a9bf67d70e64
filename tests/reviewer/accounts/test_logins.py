"""Logins: repeated failures lock a username at the address they come from, and many failures from one
address lock the address (django-axes), the lockout page says so, an admin or `axes_reset` unlocks;
passwords go through Django's validators."""

import pytest
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from tests.factories import PASSWORD

LIMIT = settings.AXES_FAILURE_LIMIT


def attempt(username, password, ip="203.0.113.7", **headers):
    return Client(REMOTE_ADDR=ip, **headers).post(reverse("login"), {"username": username, "password": password})


def logged_in(response) -> bool:
    return response.status_code == 302 and response["Location"] == reverse("home")


def assert_locked_out(response):
    assert response.status_code == 429
    page = response.content.decode()
    assert "Too many failed logins" in page and f"after {LIMIT} failed attempts" in page
    assert "0:15:00" in page  # the cool-off, then it opens by itself
    assert "sessionid" not in response.cookies


def test_the_limits_are_five_for_a_user_at_an_address_and_fifty_for_an_address():
    assert LIMIT == 5 and settings.AXES_LOCKOUT_PARAMETERS == [["username", "ip_address"]]
    assert settings.AXES_IP_FAILURE_LIMIT == 50


def test_failures_below_the_limit_still_let_the_right_password_in(users):
    for _ in range(LIMIT - 1):
        assert attempt("lead", "wrong").status_code == 200
    assert logged_in(attempt("lead", PASSWORD))


def test_repeated_failures_lock_that_user_at_that_address_only(users):
    for n in range(LIMIT - 1):
        assert attempt("lead", f"wrong-{n}").status_code == 200
    assert_locked_out(attempt("lead", "wrong-again"))  # the LIMIT-th failure locks
    assert_locked_out(attempt("lead", PASSWORD))  # even the right password, from there
    assert logged_in(attempt("lead", PASSWORD, ip="192.0.2.50"))  # the same user from elsewhere
    assert logged_in(attempt("ops", PASSWORD))  # another user at the same address


def test_nobody_locks_a_username_from_addresses_of_their_own(users):
    for n in range(3 * LIMIT):
        assert attempt("lead", f"wrong-{n}", ip=f"198.51.100.{n // (LIMIT - 1) + 1}").status_code == 200
    assert logged_in(attempt("lead", PASSWORD, ip="192.0.2.50"))


def test_failures_for_many_usernames_beyond_the_address_ceiling_lock_the_address(users, settings):
    settings.AXES_IP_FAILURE_LIMIT = 12
    for n in range(settings.AXES_IP_FAILURE_LIMIT - 1):
        assert attempt(f"guess-{n}", "wrong").status_code == 200  # one or two tries each: no user's limit
    assert_locked_out(attempt("guess-last", "wrong"))  # the ceiling-th failure from the address locks it
    assert_locked_out(attempt("ops", PASSWORD))
    assert logged_in(attempt("ops", PASSWORD, ip="192.0.2.51"))  # the same user from elsewhere


def test_a_forged_forwarded_for_header_does_not_escape_the_lock(users):
    for n in range(LIMIT):
        attempt("ops", f"wrong-{n}", HTTP_X_FORWARDED_FOR=f"10.0.0.{n}")
    assert_locked_out(attempt("ops", PASSWORD, HTTP_X_FORWARDED_FOR="10.9.9.9"))


def test_axes_reset_unlocks(users):
    for n in range(LIMIT):
        attempt("lead", f"wrong-{n}")
    assert_locked_out(attempt("lead", PASSWORD))
    call_command("axes_reset", verbosity=0)
    assert logged_in(attempt("lead", PASSWORD))


def test_a_policy_admin_unlocks_in_the_admin_site(users, client):
    for n in range(LIMIT):
        attempt("lead", f"wrong-{n}")
    assert_locked_out(attempt("lead", PASSWORD))
    from tests.reviewer.test_access import make_policy_admin

    client.force_login(make_policy_admin())
    changelist = reverse("admin:axes_accessattempt_changelist")
    assert client.get(changelist).status_code == 200
    ids = list(AccessAttempt.objects.values_list("pk", flat=True))
    response = client.post(changelist, {"action": "delete_selected", "_selected_action": ids, "post": "yes"})
    assert response.status_code == 302 and not AccessAttempt.objects.exists()
    assert logged_in(attempt("lead", PASSWORD))


def test_the_login_form_still_takes_a_good_login(users):
    """The lockout backend needs the request: the plain login view must keep working."""
    client = Client()
    response = client.post(reverse("login"), {"username": "lead", "password": PASSWORD}, follow=True)
    assert response.status_code == 200 and response.context["user"].username == "lead"


@pytest.mark.parametrize("weak", ["password", "12345678901234", "short-1", "leadlead"])
def test_password_validators_refuse_weak_passwords(users, weak):
    with pytest.raises(ValidationError):
        validate_password(weak, users.lead)


def test_demo_passwords_pass_the_validators(db, tmp_path):
    from django.contrib.auth import get_user_model

    from reviewer.demo.seed import ensure_users

    logins = ensure_users(tmp_path / "demo-logins.json")
    assert set(logins) == {"lead", "lead2", "ops", "admin"}
    for username, password in logins.items():
        validate_password(password, get_user_model().objects.get(username=username))

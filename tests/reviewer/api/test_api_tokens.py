"""API tokens expire (API_TOKEN_DAYS after they are made, said to their owner) and their owner can
revoke them: in admin's list and with ``manage.py api_token --revoke``."""

import re
from datetime import timedelta

import pytest
import time_machine
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from django.utils import timezone

from reviewer.models import ApiToken


def test_a_token_expires_after_api_token_days_with_a_401_saying_so(api, users, settings):
    settings.API_TOKEN_DAYS = 30
    me = api("ops")
    row = ApiToken.objects.get(user=users.ops)
    assert row.expires_at == row.created_at + timedelta(days=30)
    assert me.get("/runs").status_code == 200

    with time_machine.travel(row.expires_at + timedelta(seconds=1)):
        expired = me.get("/runs")

    assert expired.status_code == 401
    assert expired.json()["message"] == (f"This API token expired on {row.expires_at:%Y-%m-%d %H:%M} UTC; "
                                         "ask for a new one.")


def test_admin_shows_when_a_new_token_expires(client, users, settings):
    settings.API_TOKEN_DAYS = 90
    client.force_login(users.admin)

    response = client.post(reverse("admin:reviewer_apitoken_add"), {"user": users.admin.pk, "name": "mine"})

    row = ApiToken.objects.get(name="mine")
    assert f"It expires on {row.expires_at:%Y-%m-%d %H:%M} UTC" in response.content.decode()
    assert "expires_at" in str(client.get(reverse("admin:reviewer_apitoken_changelist")).context["cl"].list_display)


def test_the_owner_revokes_a_token_with_the_command(api, users, capsys):
    me = api("ops")
    row = ApiToken.objects.get(user=users.ops)

    call_command("api_token", "ops", "--revoke", row.prefix)

    assert ApiToken.objects.get(pk=row.pk).revoked_at is not None
    assert me.get("/runs").status_code == 401
    assert f"Revoked the API token {row.prefix}…" in capsys.readouterr().out
    with pytest.raises(CommandError, match=f"“lead” has no live API token {re.escape(row.prefix)}"):
        call_command("api_token", "lead", "--revoke", row.prefix)  # not theirs


def test_the_command_says_when_the_new_token_expires_apart_from_the_token(users, capsys, settings):
    settings.API_TOKEN_DAYS = 7
    call_command("api_token", "ops", "--name", "script")

    out = capsys.readouterr()
    row = ApiToken.objects.get(name="script")
    assert re.fullmatch(r"gr_\S+\n", out.out) and ApiToken.user_for(out.out.strip()) == users.ops
    assert f"expires on {row.expires_at:%Y-%m-%d %H:%M} UTC" in out.err
    assert row.expires_at - timezone.now() > timedelta(days=6)


def test_the_owner_revokes_the_token_they_hold_through_the_api_and_it_stops_working_at_once(api, users):
    mine, other = api("ops"), api("ops")  # two tokens of one user: revoking one leaves the other
    row = ApiToken.objects.filter(user=users.ops).order_by("created_at", "id").first()

    shown = mine.get("/tokens/current")
    assert shown.status_code == 200
    assert shown.json()["prefix"] == row.prefix and shown.json()["user"] == "ops"
    assert shown.json()["expires_at"].startswith(f"{row.expires_at:%Y-%m-%dT%H:%M}")

    revoked = mine.delete("/tokens/current")
    assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None
    row.refresh_from_db()
    assert row.revoked_at is not None
    assert mine.get("/runs").status_code == 401
    assert other.get("/runs").status_code == 200

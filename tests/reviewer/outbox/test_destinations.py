"""The operator's allowlist of outbound destinations (reviewer/outbox/destinations.py): the format, its
refusals, secrets only by variable name, and a refusal to start on a declaration that does not parse."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from reviewer.outbox.destinations import Destination, DestinationError, declared, names, resolve

ROOT = Path(__file__).parents[3]


def test_destinations_are_read_by_name_with_the_secret_their_variable_holds():
    environ = {"OUTBOUND_DESTINATIONS": " status-hook = https://hooks.example/x|HOOK_SECRET ; "
                                        "slack-ops=https://hooks.slack.com/services/T/B/X ;",
               "HOOK_SECRET": "whsec-very-secret"}
    assert declared(environ) == {
        "status-hook": Destination("status-hook", "https://hooks.example/x", "HOOK_SECRET", "whsec-very-secret"),
        "slack-ops": Destination("slack-ops", "https://hooks.slack.com/services/T/B/X"),
    }
    assert names(environ) == ["slack-ops", "status-hook"]
    shown = repr(declared(environ))
    assert "whsec-very-secret" not in shown and "services/T/B/X" not in shown  # a Slack URL is a credential
    assert resolve("status-hook", environ).host == "hooks.example"


def test_nothing_declared_is_an_empty_allowlist():
    assert declared({}) == {} and names({}) == []


@pytest.mark.parametrize(("value", "message"), [
    ("status-hook", "is not name=url"),
    ("Bad Name=https://x.example", "the name must be"),
    ("a=https://x.example;a=https://y.example", "declared twice"),
    ("a=https://x.example|whsec-not-a-variable-name!", "never the secret itself"),
    ("a=https://x.example|UNSET_SECRET", "UNSET_SECRET is not set"),
    ("a=ftp://x.example", "must start with http:// or https://"),
    ("a=https://user:pw@x.example", "must not carry user info"),
    ("a=https://x.example:notaport", "is not a URL"),
])
def test_a_declaration_that_does_not_parse_is_refused_with_a_message_naming_the_variable(value, message):
    with pytest.raises(DestinationError, match=message) as raised:
        declared({"OUTBOUND_DESTINATIONS": value})
    assert "OUTBOUND_DESTINATIONS" in str(raised.value)
    assert "pw@" not in str(raised.value)


def test_an_undeclared_name_fails_closed():
    with pytest.raises(DestinationError, match=r"'gone' is not declared in OUTBOUND_DESTINATIONS \(declared: a\)"):
        resolve("gone", {"OUTBOUND_DESTINATIONS": "a=https://x.example"})


def test_the_product_refuses_to_start_on_a_declaration_that_does_not_parse():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "reviewer.settings", "DEBUG": "true",
           "OUTBOUND_DESTINATIONS": "hook=https://x.example|hook-secret-value"}
    done = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode != 0
    assert "ImproperlyConfigured: OUTBOUND_DESTINATIONS: entry 1 ('hook')" in done.stderr
    assert "never the secret itself" in done.stderr
    assert "hook-secret-value" not in done.stderr

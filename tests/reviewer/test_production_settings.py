"""Production fails closed: the real settings module, loaded in a fresh process as a server would
load it, refuses to start on the built-in key or a host wildcard, and `manage.py check --deploy` is
clean in the production configuration docs/security.md documents. Pages carry a Content-Security-Policy
that allows no inline script or style, and no template needs one."""

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.urls import reverse

ROOT = Path(__file__).parents[2]
OURS = ("DEBUG", "SECRET_KEY", "SECRET_KEY_FILE", "ALLOWED_HOSTS", "SECURE_", "SESSION_COOKIE_", "CSRF_",
        "TRUSTED_PROXY_COUNT", "DJANGO_")

# The production HTTPS settings of docs/security.md ("Production settings"), as an operator sets them.
PRODUCTION = {
    "ALLOWED_HOSTS": "review.example.com",
    "CSRF_TRUSTED_ORIGINS": "https://review.example.com",
    "SECURE_SSL_REDIRECT": "true",
    "SESSION_COOKIE_SECURE": "true",
    "CSRF_COOKIE_SECURE": "true",
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "true",
    "SECURE_HSTS_PRELOAD": "true",
    "SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto",
}


def start(*command, **env):
    """Run ``python <command>`` with the product settings and only the given deployment variables."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(OURS)}
    return subprocess.run([sys.executable, *command], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**base, "DJANGO_SETTINGS_MODULE": "reviewer.settings", **env})


def django_setup(**env):
    return start("-c", "import django; django.setup(); print('started')", **env)


def strong_key() -> str:
    return secrets.token_urlsafe(50)


def test_without_debug_the_built_in_key_refuses_to_start():
    out = django_setup()
    assert out.returncode != 0
    assert "ImproperlyConfigured: SECRET_KEY is not set" in out.stderr


def test_the_built_in_key_given_by_hand_refuses_too():
    from reviewer.settings import BUILTIN_SECRET_KEY

    out = django_setup(SECRET_KEY=BUILTIN_SECRET_KEY)
    assert out.returncode != 0 and "ImproperlyConfigured: SECRET_KEY" in out.stderr


@pytest.mark.parametrize("hosts", ["*", "review.example.com,*", "*.example.com", ","])
def test_without_debug_a_host_wildcard_refuses_to_start(hosts):
    out = django_setup(SECRET_KEY=strong_key(), ALLOWED_HOSTS=hosts)
    assert out.returncode != 0
    assert "ImproperlyConfigured: ALLOWED_HOSTS" in out.stderr


def test_debug_on_a_laptop_still_starts_on_the_built_in_key():
    out = django_setup(DEBUG="true")
    assert (out.returncode, out.stdout.strip()) == (0, "started"), out.stderr


def test_the_key_can_come_from_a_file(tmp_path):
    key_file = tmp_path / "secret-key"
    key = strong_key()
    key_file.write_text(key + "\n")
    out = start("-c", "import django; django.setup(); from django.conf import settings; "
                      f"print(settings.SECRET_KEY == {key!r})", SECRET_KEY_FILE=str(key_file))
    assert (out.returncode, out.stdout.strip()) == (0, "True"), out.stderr
    missing = django_setup(SECRET_KEY_FILE=str(tmp_path / "nowhere"))
    assert missing.returncode != 0 and "ImproperlyConfigured: SECRET_KEY_FILE" in missing.stderr


def test_check_deploy_is_clean_in_the_documented_production_configuration():
    out = start("manage.py", "check", "--deploy", "--fail-level", "WARNING", SECRET_KEY=strong_key(), **PRODUCTION)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "System check identified no issues" in out.stdout
    documented = (ROOT / "docs" / "security.md").read_text()
    for name, value in PRODUCTION.items():
        assert f"{name}={value}" in documented, f"docs/security.md does not document {name}={value}"


def test_check_deploy_warns_without_the_https_switches():
    """The test above could not pass by accident: the same check without them does not pass."""
    out = start("manage.py", "check", "--deploy", "--fail-level", "WARNING", SECRET_KEY=strong_key(),
                ALLOWED_HOSTS="review.example.com")
    assert out.returncode != 0
    assert "security.W004" in out.stderr + out.stdout  # no HSTS


CSP = "Content-Security-Policy"


@pytest.mark.parametrize("name", ["login", "home", "inbox", "incidents"])
def test_pages_carry_a_policy_without_inline_script_or_style(client, login, demo_data, name):
    if name != "login":
        client = login("lead")
    response = client.get(reverse(name))
    assert response.status_code == 200
    policy = dict(part.strip().split(" ", 1) for part in response[CSP].split(";") if part.strip())
    assert policy["script-src"] == "'self'" and policy["style-src"] == "'self'", policy
    assert policy["default-src"] == "'self'" and policy["frame-ancestors"] == "'none'"
    assert "unsafe" not in response[CSP]


INLINE = [
    (re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I), "inline <script>"),
    (re.compile(r"<style\b", re.I), "<style> element"),
    (re.compile(r"\sstyle\s*=", re.I), "style attribute"),
    (re.compile(r"\son[a-z]+\s*=", re.I), "event handler attribute"),
    (re.compile(r"\shx-on[:-]", re.I), "hx-on (needs eval)"),
    (re.compile(r"javascript:", re.I), "javascript: URL"),
]


def test_no_template_needs_an_inline_script_or_style():
    found = []
    for path in sorted((ROOT / "templates").rglob("*.html")):
        text = path.read_text()
        found += [f"{path.relative_to(ROOT)}: {what}" for pattern, what in INLINE if pattern.search(text)]
    assert found == []
    base = (ROOT / "templates" / "base.html").read_text()
    assert '"includeIndicatorStyles": false' in base  # else htmx 2 injects a <style> the policy blocks

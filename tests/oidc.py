"""A real OpenID Connect provider for the single sign-on tests: node-oidc-provider, pinned in
package.json, started on loopback by tests/oidc_provider.mjs with the product registered as its client.

Its accounts and their groups live in a JSON file the provider reads at every sign-in, so a test
moves a person between groups with ``provider.set_account(...)``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import requests

from tests.factories import wait_for
from tests.services import free_port, missing

ROOT = Path(__file__).parents[1]
SCRIPT = ROOT / "tests" / "oidc_provider.mjs"
CLIENT_ID = "gated-review"
CLIENT_SECRET = "tests-only-client-secret-8d1f0c2b7e"  # not a secret: known to this test provider only


def require_provider() -> str:
    """The node binary, when node and the pinned oidc-provider are installed; else a skip (a failure in CI)."""
    pinned = json.loads((ROOT / "package.json").read_text())["devDependencies"]["oidc-provider"]
    installed = ROOT / "node_modules" / "oidc-provider" / "package.json"
    version = json.loads(installed.read_text())["version"] if installed.exists() else None
    node = shutil.which("node")
    if node and version == pinned:
        return node
    message = (f"the single sign-on tests need node and oidc-provider {pinned} in node_modules/ (found: node "
               f"{'yes' if node else 'no'}, oidc-provider {version}): run `npm ci` in the project folder")
    missing(message)


class OidcProvider:
    def __init__(self, folder: Path, site_url: str):
        node = require_provider()
        self.port = free_port()
        self.issuer = f"http://127.0.0.1:{self.port}"
        self.accounts = folder / "accounts.json"
        self.set_accounts({})
        config = folder / "provider.json"
        config.write_text(json.dumps({"port": self.port, "client_id": CLIENT_ID, "client_secret": CLIENT_SECRET,
                                      "redirect_uri": f"{site_url}/sso/callback/", "accounts": str(self.accounts)}))
        self.log = folder / "provider.log"
        with self.log.open("w") as log:
            self.process = subprocess.Popen([node, str(SCRIPT), str(config)], cwd=ROOT, stdout=log,
                                            stderr=subprocess.STDOUT)
        wait_for(lambda: "listening" in self.log.read_text() or self.process.poll() is not None, timeout=30,
                 message="the OpenID Connect provider to listen")
        if self.process.poll() is not None:
            raise AssertionError(f"the OpenID Connect provider stopped:\n{self.log.read_text()}")

    def set_accounts(self, accounts: dict[str, dict]) -> None:
        """Each login name's claims, e.g. {"lena": {"email": "lena@example.com", "groups": ["leads"]}}."""
        self.accounts.write_text(json.dumps(accounts))

    def settings(self) -> dict:
        """The product's settings for signing in through this provider."""
        return {
            "SSO_ENABLED": True, "SSO_PROVIDER_NAME": "Test Identity", "OIDC_RP_CLIENT_ID": CLIENT_ID,
            "OIDC_RP_CLIENT_SECRET": CLIENT_SECRET, "OIDC_OP_ISSUER": self.issuer,
            "OIDC_OP_AUTHORIZATION_ENDPOINT": f"{self.issuer}/auth", "OIDC_OP_TOKEN_ENDPOINT": f"{self.issuer}/token",
            "OIDC_OP_USER_ENDPOINT": f"{self.issuer}/me", "OIDC_OP_JWKS_ENDPOINT": f"{self.issuer}/jwks",
            "OIDC_RP_SCOPES": "openid email profile groups",
        }

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


def use_provider(settings, provider: OidcProvider) -> None:
    """Points the product's settings at ``provider``, with no account there yet."""
    provider.set_accounts({})
    for name, value in provider.settings().items():
        setattr(settings, name, value)


def sign_in_at_provider(authorization_url: str, login: str) -> str:
    """What a browser does at the provider, with ``requests``: follow the authorization request to the
    provider's login form, sign in as ``login`` and return the address it sends the browser back to."""
    session = requests.Session()
    page = session.get(authorization_url, timeout=10)
    action = re.search(r'<form[^>]*action="([^"]+)"', page.text)
    assert action, f"no login form at the provider:\n{page.text[:500]}"
    hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', page.text))
    answer = session.post(urljoin(page.url, action.group(1)), data={**hidden, "login": login, "password": "any"},
                          allow_redirects=False, timeout=10)
    origin = "{0.scheme}://{0.netloc}/".format(urlsplit(page.url))
    while answer.is_redirect:
        location = urljoin(answer.url, answer.headers["Location"])
        if not location.startswith(origin):
            return location  # back to the product
        answer = session.get(location, allow_redirects=False, timeout=10)
    raise AssertionError(f"the provider did not send the browser back: {answer.status_code} {answer.text[:300]}")

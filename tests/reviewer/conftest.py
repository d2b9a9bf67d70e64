"""Fixtures of the dashboard tests: Playwright drives Debian's headless Chromium (no browser
download); screenshots go to test-artifacts/."""

import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API runs an event loop

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = Path(__file__).parents[2] / "test-artifacts"


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not Path(CHROMIUM).exists():
        pytest.skip("browser tests need Debian's Chromium at /usr/bin/chromium (the test command installs it: "
                    "apt-get install chromium)")
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"],
    }


@pytest.fixture
def screenshot():
    """``screenshot(page, "run-page")`` saves test-artifacts/run-page.png and returns its path."""
    ARTIFACTS.mkdir(exist_ok=True)

    def save(page, name: str) -> Path:
        path = ARTIFACTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return save


class ApiClient:
    """The Django test client speaking JSON to /api/ with one user's API token."""

    def __init__(self, client, token: str):
        self.client, self.token = client, token

    def call(self, method: str, path: str, body=None, **headers):
        import json

        extra = {"HTTP_AUTHORIZATION": f"Bearer {self.token}"} if self.token else {}
        extra.update({"HTTP_" + k.upper().replace("-", "_"): v for k, v in headers.items()})
        data = None if body is None else json.dumps(body)
        return getattr(self.client, method)(f"/api{path}", data=data, content_type="application/json", **extra)

    def get(self, path, **headers):
        return self.call("get", path, **headers)

    def post(self, path, body=None, **headers):
        return self.call("post", path, body, **headers)

    def patch(self, path, body=None, **headers):
        return self.call("patch", path, body, **headers)

    def put(self, path, body=None, **headers):
        return self.call("put", path, body, **headers)


@pytest.fixture
def api(client, users):
    """``api("lead")``: an API client with a fresh token of that user."""
    from reviewer.models import ApiToken

    def for_user(name: str) -> ApiClient:
        _, token = ApiToken.issue(getattr(users, name), f"test token of {name}")
        return ApiClient(client, token)

    return for_user

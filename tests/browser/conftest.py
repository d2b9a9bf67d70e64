"""Fixtures of the browser tests: Playwright drives Debian's headless Chromium (no browser
download); screenshots go to test-artifacts/; axe-core checks every page a browser test visits."""

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.services import missing

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's sync API runs an event loop

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ROOT = Path(__file__).parents[2]
ARTIFACTS = ROOT / "test-artifacts"
# Screenshots are for people to open. CI's clone is thrown away after its run, so .ci/run saves none
# (TEST_SCREENSHOTS=0): a full-page screenshot is a quarter of a page visit's time.
SCREENSHOTS = os.environ.get("TEST_SCREENSHOTS", "1") != "0"
# axe-core, pinned in package.json / package-lock.json and installed by `npm ci` (.ci/test does it).
AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
EVERY_IMPACT = ("critical", "serious", "moderate", "minor")
FAILING_IMPACTS = EVERY_IMPACT  # any violation fails a browser test, minor ones included


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not Path(CHROMIUM).exists():
        message = ("browser tests need Debian's Chromium at /usr/bin/chromium (the test command installs it: "
                   "apt-get install chromium)")
        missing(message)
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run", "--disable-quic"],
    }


class Axe:
    """axe-core in the pages of one test: ``check(page)`` runs it on the page as it is now and
    returns its violations of every impact, each as one readable line; ``check(page, impacts)`` only
    those of the given impacts. ``check(page, fresh=True)`` says the page is as it loaded (nothing done
    on it since): when that check of every impact finds nothing, the end of the test does not load
    and check that address again at that window size."""

    def __init__(self):
        pinned = json.loads((ROOT / "package.json").read_text())["devDependencies"]["axe-core"]
        installed = AXE.parent / "package.json"
        version = json.loads(installed.read_text())["version"] if installed.exists() else None
        if version != pinned:
            pytest.fail(f"axe-core {pinned} is not installed in node_modules/ (found: {version}): run `npm ci` "
                        "in the project folder (the test command does it)")
        self.source = AXE.read_text()
        self.clean_as_loaded: set[tuple[str, int, int]] = set()  # (address, width, height)

    def check(self, page, impacts=FAILING_IMPACTS, *, fresh: bool = False) -> list[str]:
        if not page.url.startswith("http") or page.evaluate("() => document.contentType") != "text/html":
            return []
        # Evaluated through the DevTools protocol, so the pages' Content-Security-Policy (no inline
        # script) does not apply to it and nothing is reported as a CSP violation.
        if not page.evaluate("() => typeof window.axe === 'object'"):
            page.evaluate(self.source)
        results = page.evaluate("() => axe.run(document, {resultTypes: ['violations']})")
        path = page.url.split("//", 1)[-1].split("/", 1)[-1]
        viewport = page.viewport_size or {}
        found = [
            f"/{path} at {viewport.get('width')}px: {v['impact']} {v['id']} ({v['help']}) on "
            + ", ".join(" ".join(node["target"]) for node in v["nodes"][:5])
            for v in results["violations"] if v["impact"] in impacts
        ]
        if fresh and not found and set(FAILING_IMPACTS) <= set(impacts):
            self.clean_as_loaded.add(self.seen_as(page))
        return found

    @staticmethod
    def seen_as(page, url: str | None = None) -> tuple[str, int, int]:
        viewport = page.viewport_size or {}
        return (url or page.url).split("#", 1)[0], viewport.get("width", 0), viewport.get("height", 0)


@pytest.fixture(autouse=True)
def accessible_pages(request):
    """Every browser test is checked with axe-core: on every page of the product it loaded (revisited at the end,
    with the same login and viewport, unless the test checked it as loaded) and on the last page as the
    test left it (after its htmx swaps). Any violation fails the test, moderate and minor included.
    Tests without a page are untouched."""
    from playwright.sync_api import Page

    page = request.getfixturevalue("page") if "page" in request.fixturenames else None
    if not isinstance(page, Page):  # no browser (or a test parameter that happens to be called "page")
        yield None
        return
    # The product's pages: not another site's a test passes through (the identity provider's login form).
    product = request.getfixturevalue("live_server").url if "live_server" in request.fixturenames else "http"
    axe = Axe()
    # In every document the test's pages load, before their own scripts (through the DevTools
    # protocol, as check() evaluates it: the pages' Content-Security-Policy does not apply): sending
    # axe-core's 550 KB with each check cost a tenth of a browser walk.
    page.context.add_init_script(axe.source)
    visited: list[str] = []

    def navigated(frame):
        if frame == page.main_frame and frame.url.startswith(product) and frame.url not in visited:
            visited.append(frame.url.split("#", 1)[0])

    page.on("framenavigated", navigated)
    yield axe
    if request.node.rep_call.failed if hasattr(request.node, "rep_call") else False:
        return  # the test's own failure says more; a page it left half-done would only add noise
    page.remove_listener("framenavigated", navigated)
    violations = axe.check(page)
    for url in dict.fromkeys(visited):
        if axe.seen_as(page, url) in axe.clean_as_loaded:
            continue  # the test checked it as loaded, at this size, and found nothing
        page.goto(url)
        violations += axe.check(page)
    assert not violations, "axe-core found violations:\n" + "\n".join(dict.fromkeys(violations))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Each test's call report on the test item, for the teardown of ``accessible_pages``."""
    report = yield
    if report.when == "call":
        item.rep_call = report
    return report


@pytest.fixture
def screenshot():
    """``screenshot(page, "run-page")`` saves test-artifacts/run-page.png (unless TEST_SCREENSHOTS=0)
    and returns its path."""
    ARTIFACTS.mkdir(exist_ok=True)

    def save(page, name: str) -> Path:
        path = ARTIFACTS / f"{name}.png"
        if SCREENSHOTS:
            page.screenshot(path=str(path), full_page=True)
        return path

    return save


# Every page a test that asks for no_csp_violation visits is watched for Content-Security-Policy
# violations: the browser fires a securitypolicyviolation event (reported to Python through a binding,
# which the policy cannot block) and logs a console error; either one fails the test.
REPORT_VIOLATIONS = """
window.cspReports = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.cspReports.push(window.cspViolation(
    `${event.violatedDirective} blocked ${event.blockedURI || "inline"} on ${document.location.pathname}`));
});
"""


@pytest.fixture
def csp_violations(page):
    violations = []
    page.expose_function("cspViolation", lambda text: violations.append(text))
    page.add_init_script(REPORT_VIOLATIONS)
    page.on("console", lambda message: "Content Security Policy" in message.text and violations.append(message.text))
    return violations


@pytest.fixture
def no_csp_violation(csp_violations, live_server):
    yield
    assert csp_violations == [], "the pages broke their Content-Security-Policy"


@pytest.fixture
def subscriptions_handled_here(monkeypatch):
    """The subscribe form's request handled in this process as a worker handles it, so its confirmation
    mail reaches the test settings' locmem outbox (the form only queues it; see reviewer.status.tasks)."""
    from reviewer.status import tasks as status_tasks

    monkeypatch.setattr(status_tasks.subscribe_to_status, "delay",
                        lambda *args: status_tasks.subscribe_to_status.apply(args=args))

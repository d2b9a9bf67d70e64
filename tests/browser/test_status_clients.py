"""The status page's JSON read by clients that others wrote for Statuspage's public API
(docs/status-page.md, 'Clients written for Statuspage'), both pinned in package.json:

- ``statuspage.io``, a Node client: pointed at this page, each of its calls reads our JSON without
  error and gets what the page serves;
- ``@statuspage/status-widget``, Atlassian's web component, embedded on another site (a second
  loopback origin, as a customer's site would be) and rendered by Chromium: it shows this page's state.
  It asks for ``/api/v2/summary.json`` at the root of its ``src`` host whatever the path, so a front
  proxy sends ``/api/v2/`` to ``/status/api/v2/``; here Playwright's routing plays that proxy, passing
  our server's answers on unchanged. Chromium does not apply CORS to an answer Playwright fulfils, so
  the test checks the header that lets another site's script read it (``Access-Control-Allow-Origin``).

Screenshots: test-artifacts/status-widget-<width>.png."""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
import urllib.request
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from agents.models import Run
from reviewer.models import DeliveryChannel, StatusComponent
from reviewer.outbox import tasks
from reviewer.outbox.maintenance import advance, schedule
from reviewer.outbox.publishing import PublicFields, publish
from tests.browser.conftest import ROOT
from tests.factories import make_incident, make_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

CLIENT = ROOT / "tests" / "browser" / "statuspage_client.js"
WIDGET = ROOT / "node_modules" / "@statuspage" / "status-widget" / "dist" / "index.js"
# Each call of the client and the address it reads under /status/api/v2/.
CALLS = {"getSummary": "summary.json", "getStatus": "status.json", "getComponents": "components.json",
         "incidents.getAll": "incidents.json", "incidents.getUnresolved": "incidents/unresolved.json",
         "scheduledMaintenances.getUpcoming": "scheduled-maintenances/upcoming.json",
         "scheduledMaintenances.getActive": "scheduled-maintenances/upcoming.json",
         "scheduledMaintenances.getAll": "scheduled-maintenances/upcoming.json",
         "get(ScheduledMaintenances.all())": "scheduled-maintenances.json",
         "get(ScheduledMaintenances.active())": "scheduled-maintenances/active.json"}


@pytest.fixture
def publish_update(users, monkeypatch, settings):
    """``publish_update(incident, text, **public fields)``: published by ops and delivered to the page."""
    settings.STATUS_PAGE_REUSE_SECONDS = 0  # each request reads the stored page: a publication shows at once
    monkeypatch.setattr(tasks.deliver, "delay", lambda pk: None)
    DeliveryChannel.objects.get_or_create(kind=DeliveryChannel.Kind.STATUS, defaults={"name": "Public status page"})

    def update(incident, text, **fields):
        run = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=text)
        published = publish(incident, text, actor=users.ops, source_run=run, fields=PublicFields(**fields))
        assert tasks.attempt(published.deliveries.get(channel__kind="status").pk) == "delivered"

    return update


@pytest.fixture
def outage(publish_update):
    """Checkout in a partial outage (an ongoing incident), API operational again (a resolved one)."""
    checkout, api = (StatusComponent.objects.create(name=name, position=i) for i, name in enumerate(
        ["Checkout", "API"], 1))
    old = make_incident("inc_old_1", title="Internal: DB failover drill")
    publish_update(old, "We are investigating a problem in the EU. Current status: degraded.", title="Slow API",
                   components={api.pk: "degraded_performance"})
    publish_update(old, "Payments work again in the EU.", state="resolved", components={api.pk: "operational"})
    payments = make_incident("inc_pay_1", title="P1 acquirer outage")
    publish_update(payments, "We are investigating a problem with card payments in the EU. Current status: degraded.",
                   title="Card payments failing in the EU", components={checkout.pk: "partial_outage"})
    return payments


@pytest.fixture
def windows(outage):
    """Two maintenance windows of Checkout: one in progress, one tomorrow."""
    checkout = StatusComponent.objects.get(name="Checkout")
    now = timezone.now()
    schedule(title="Database upgrade", text="We will upgrade the checkout database.", components=[checkout],
             starts_at=now - timedelta(minutes=5), ends_at=now + timedelta(hours=1))
    schedule(title="Network maintenance", text="We will replace network switches.", components=[checkout],
             starts_at=now + timedelta(days=1), ends_at=now + timedelta(days=1, hours=2))
    assert advance() == 1  # the first one is in progress
    return outage


def served(live_server, name: str) -> dict:
    with urllib.request.urlopen(f"{live_server.url}/status/api/v2/{name}") as response:
        return json.loads(response.read())


def test_the_statuspage_io_client_reads_every_json_endpoint_of_the_page(live_server, windows):
    node = shutil.which("node")
    assert node, "the clients' test needs node (installed with the browser tests' tools)"
    run = subprocess.run([node, str(CLIENT), f"{live_server.url}/status"], capture_output=True, text=True,
                         timeout=60, cwd=ROOT, check=False)
    assert run.returncode == 0, run.stderr
    results = json.loads(run.stdout)
    assert set(results) == set(CALLS)
    for call, name in CALLS.items():
        assert results[call] == served(live_server, name), call
    assert results["getStatus"]["status"] == {"indicator": "major", "description": "Partial outage"}
    assert [(c["name"], c["status"]) for c in results["getComponents"]["components"]] == [
        ("Checkout", "partial_outage"), ("API", "operational")]
    assert [i["id"] for i in results["incidents.getAll"]["incidents"]] == ["inc_pay_1", "inc_old_1"]
    assert [i["name"] for i in results["incidents.getUnresolved"]["incidents"]] == ["Card payments failing in the EU"]
    assert "P1 acquirer outage" not in run.stdout and "DB failover" not in run.stdout
    names = {call: [(m["name"], m["status"]) for m in results[call]["scheduled_maintenances"]]
             for call in CALLS if "aintenances" in call}
    assert names["scheduledMaintenances.getUpcoming"] == [("Network maintenance", "scheduled")]
    assert names["get(ScheduledMaintenances.active())"] == [("Database upgrade", "in_progress")]
    assert sorted(names["get(ScheduledMaintenances.all())"]) == [("Database upgrade", "in_progress"),
                                                                ("Network maintenance", "scheduled")]


class CustomerSite(BaseHTTPRequestHandler):
    """Another site on loopback that embeds the widget, as a customer's would: a page and the widget's script."""

    status_url = ""

    def do_GET(self):  # http.server calls it by this name
        if self.path == "/widget.js":
            body, kind = WIDGET.read_bytes(), "text/javascript"
        else:
            body = (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Acme shop</title></head>'
                    f'<body><main><h1>Acme shop</h1><p>Our service: '
                    f'<statuspage-widget src="{self.status_url}"></statuspage-widget></p>'
                    f'<p><statuspage-widget src="{self.status_url}" appearance="badge" title="Acme status">'
                    f'</statuspage-widget></p></main><script src="/widget.js"></script></body></html>').encode()
            kind = "text/html; charset=utf-8"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def customer_site(live_server):
    handler = type("Handler", (CustomerSite,), {"status_url": f"{live_server.url}/status/"})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


def test_atlassians_widget_on_another_site_shows_the_pages_state(page, live_server, outage, publish_update,
                                                                  customer_site, screenshot):
    fetched = []

    def front_proxy(route):
        """What the front proxy in docs/status-page.md does: /api/v2/... answered by /status/api/v2/..."""
        response = route.fetch(url=route.request.url.replace("/api/v2/", "/status/api/v2/", 1))
        fetched.append((route.request.url, response.status, response.headers.get("access-control-allow-origin")))
        route.fulfill(response=response)

    page.route(f"{live_server.url}/api/v2/**", front_proxy)
    for width in (1366, 390):
        page.set_viewport_size({"width": width, "height": 700})
        page.goto(customer_site)
        basic, badge = page.locator("statuspage-widget").all()
        expect(basic.locator(".status-text")).to_have_text("Partial outage")
        expect(basic.locator(".status-indicator")).to_have_class("status-indicator major")
        expect(badge.locator(".status-text")).to_have_text("Acme status")
        expect(badge.locator(".status-indicator")).to_have_text("Partial outage")
        expect(basic.get_by_role("link")).to_have_attribute("href", f"{live_server.url}/status/")
        screenshot(page, f"status-widget-{width}")
    assert fetched and set(fetched) == {(f"{live_server.url}/api/v2/summary.json", 200, "*")}

    publish_update(outage, "Payments work again in the EU.", state="resolved")
    page.reload()
    expect(page.locator("statuspage-widget").first.locator(".status-text")).to_have_text("All systems operational")
    expect(page.locator("statuspage-widget").first.locator(".status-indicator")).to_have_class("status-indicator none")

    page.goto(f"{live_server.url}/status/")  # where the widget links: the page says the same (checked by axe too)
    expect(page.get_by_role("status")).to_have_text("All systems operational")

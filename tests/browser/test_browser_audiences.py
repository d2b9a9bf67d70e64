"""Audiences in a real browser, at 1366 and 390 pixels wide (axe checks every page): a lead opens the
internal page from the navigation and reads every incident, internal title beside the public one,
and every component with whom it is shown to; a customer of the audience opens its signed link and
reads its private component and incident, which the public page does not show. Screenshots in
test-artifacts/: audience-*.png."""

from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from agents.models import Run
from reviewer.models import DeliveryChannel, StatusAudience, StatusComponent
from reviewer.outbox import tasks
from reviewer.outbox.maintenance import schedule
from reviewer.outbox.publishing import CONFIRM_REPEAT, PublicFields, publish
from reviewer.status import audiences
from tests.browser.helpers import log_in
from tests.factories import make_incident, make_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("no_csp_violation")]


def published(users, incident, text, title, components):
    run = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=text)
    fields = PublicFields(title=title, components={c.pk: status for c, status in components.items()},
                          confirmed=frozenset({CONFIRM_REPEAT}))
    update = publish(incident, text, actor=users.ops, source_run=run, fields=fields)
    for delivery in update.deliveries.all():
        tasks.attempt(delivery.pk)


@pytest.mark.parametrize("width", [1366, 390])
def test_a_lead_reads_the_internal_page_and_a_customer_the_audience_page(page, live_server, screenshot, users,
                                                                         width, monkeypatch):
    monkeypatch.setattr(tasks.deliver, "delay", lambda pk: None)
    DeliveryChannel.objects.get_or_create(kind=DeliveryChannel.Kind.STATUS, defaults={"name": "Public status page"})
    partners = StatusAudience.objects.create(name="Partner banks", slug="partners")
    checkout = StatusComponent.objects.create(name="Checkout", position=1, description="Paying for an order")
    StatusComponent.objects.create(name="API", position=2)
    vault = StatusComponent.objects.create(name="Vault ledger", position=3, audience=partners,
                                           description="Ledger exports to partner banks")
    published(users, make_incident("inc_card", title="P1 card processor timeouts"),
              "Some card payments fail. We are investigating.", "Card payments failing", {checkout: "partial_outage"})
    published(users, make_incident("inc_vault", title="P2 vault ledger replication lag"),
              "Ledger exports to partner banks run about twenty minutes late.", "Ledger exports running late",
              {vault: "degraded_performance"})
    now = timezone.now()
    schedule(title="Ledger reindex", text="We will reindex the ledger store. Exports may be slow for a few minutes.",
             components=[vault], starts_at=now + timedelta(hours=3), ends_at=now + timedelta(hours=4),
             actor=users.ops)
    page.set_viewport_size({"width": width, "height": 900})

    log_in(page, live_server, users.lead.username)
    page.click("nav >> text=Internal status")
    expect(page.locator("h1")).to_have_text("Internal status")
    vault_row = page.locator("tr", has_text="P2 vault ledger replication lag")
    expect(vault_row).to_contain_text("Ledger exports running late")
    expect(vault_row).to_contain_text("Partner banks only")
    expect(page.locator("tr", has_text="Vault ledger").last).to_contain_text("Partner banks only")
    expect(page.locator("#internal-scheduled + ul")).to_contain_text("Ledger reindex")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    screenshot(page, f"audience-internal-{width}")

    page.context.clear_cookies()  # a customer of the audience, not signed in, with its link
    page.goto(live_server.url + urlsplit(audiences.link(partners)).path)
    expect(page.locator(".audience-note")).to_contain_text("Partner banks")
    expect(page.locator(".component", has_text="Vault ledger").locator(".component-status")).to_have_text(
        "Degraded performance")
    expect(page.locator(".incident", has_text="Ledger exports running late")).to_have_count(1)
    expect(page.locator("#maintenance-upcoming-heading")).to_have_text("Scheduled maintenance")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    screenshot(page, f"audience-page-{width}")

    page.goto(f"{live_server.url}/status/")
    expect(page.locator(".components")).not_to_contain_text("Vault ledger")
    expect(page.locator("main")).not_to_contain_text("Ledger exports running late")

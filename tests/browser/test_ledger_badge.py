"""In a browser: an admin sees on the dashboard whether the ledger held at its last scheduled
verification, on a desktop and a phone screen, the page checked with axe-core. Screenshots in
test-artifacts/."""

import pytest
from playwright.sync_api import expect

from reviewer.ledger import chain
from reviewer.models import LedgerEntry
from tests.browser.helpers import assert_fits, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
VIEWPORTS = {"desktop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.mark.parametrize("screen", VIEWPORTS)
def test_the_admin_sees_the_ledger_verified_then_broken(page, live_server, users, screenshot, screen):
    page.set_viewport_size(VIEWPORTS[screen])
    for i in range(3):
        chain.append(LedgerEntry.Kind.EXPORT, f"export:{i}", {"i": i})
    chain.verify_and_record()
    log_in(page, live_server, "admin")
    page.goto(f"{live_server.url}/")
    badge = page.locator("#dashboard-ledger")
    expect(badge).to_contain_text("Ledger verified")
    expect(badge).to_contain_text("(3 entries)")
    assert_fits(page, f"ledger-verified-{screen}", screenshot)

    LedgerEntry.objects.filter(seq=2).update(subject="export:changed")  # SQLite: no trigger (this pass)
    chain.verify_and_record()
    page.reload()
    expect(badge).to_contain_text("Ledger broken at entry 2")
    assert_fits(page, f"ledger-broken-{screen}", screenshot)


@pytest.mark.parametrize("screen", VIEWPORTS)
def test_the_admin_verifies_the_ledger_now_from_the_badge(page, live_server, users, screenshot, screen):
    page.set_viewport_size(VIEWPORTS[screen])
    for i in range(2):
        chain.append(LedgerEntry.Kind.EXPORT, f"export:{i}", {"i": i})
    log_in(page, live_server, "admin")
    page.goto(f"{live_server.url}/")
    badge = page.locator("#dashboard-ledger")
    expect(badge).to_contain_text("Ledger not verified yet")
    assert_fits(page, f"ledger-not-verified-{screen}", screenshot)
    badge.get_by_role("button", name="Verify now").click()
    expect(badge).to_contain_text("Ledger verified")
    expect(badge).to_contain_text("(2 entries)")
    assert_fits(page, f"ledger-verified-now-{screen}", screenshot)

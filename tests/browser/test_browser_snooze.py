""""Not now" in a browser, at a laptop's and a phone's width: a lead snoozes an escalation from its page, the
inbox no longer lists it but links to the snoozed ones, where the row says until when; its page says who
snoozed it. axe-core finds nothing. Screenshots: test-artifacts/snooze-escalation-<width>.png,
snooze-inbox-<width>.png, snooze-snoozed-<width>.png."""

import pytest
from playwright.sync_api import expect

from tests.browser.helpers import assert_fits, log_in
from tests.factories import make_escalation, make_incident

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1366, 390])
def test_a_lead_says_not_now_and_finds_it_under_snoozed(page, live_server, users, screenshot, width,
                                                       accessible_pages, no_csp_violation):
    escalation = make_escalation(incident=make_incident("inc_pay_8"))
    make_escalation(incident=make_incident("inc_pay_9"))  # another, still in the inbox
    page.set_viewport_size({"width": width, "height": 900})
    log_in(page, live_server, "lead")
    page.goto(f"{live_server.url}/escalations/{escalation.pk}/")

    box = page.locator("#snooze-box")
    box.get_by_label("Not now: snooze until").select_option(label="2 hours")
    box.scroll_into_view_if_needed()
    assert_fits(page, f"snooze-escalation-{width}", screenshot)
    box.get_by_role("button", name="Not now").click()

    expect(page.locator(".messages")).to_contain_text(f"Escalation #{escalation.pk} is snoozed")
    expect(page.locator(f"#esc-row-{escalation.pk}")).to_have_count(0)
    link = page.get_by_role("link", name="1 snoozed")
    expect(link).to_be_visible()
    assert accessible_pages.check(page) == []
    assert_fits(page, f"snooze-inbox-{width}", screenshot)

    link.click()
    row = page.locator(f"#esc-row-{escalation.pk}")
    expect(row.locator(".snoozed-label")).to_contain_text("Not now: snoozed until")
    assert accessible_pages.check(page) == []
    assert_fits(page, f"snooze-snoozed-{width}", screenshot)

    page.goto(f"{live_server.url}/escalations/{escalation.pk}/")
    expect(page.locator("#snooze-box")).to_contain_text("snoozed by Lena until")
    expect(page.locator("#decision-history")).to_contain_text("Lena snoozed it at")
    assert accessible_pages.check(page) == []

"""The review analytics in a browser, as a policy admin meets them at 1366×900 and 390×844: first with
nothing decided (the empty state), then over a history of decisions by four leads, the window
switched to 90 days; and as a lead, who sees no person's figures. Screenshots in test-artifacts/
(analytics-*.png)."""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from reviewer.models import Escalation
from reviewer.roles import POLICY_ADMIN, SUPPORT_LEAD
from tests.browser.helpers import assert_fits, log_in
from tests.factories import make_user
from tests.reviewer.desk.test_analytics import write_history

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("no_csp_violation")]
XSS = '<script>alert("xss")</script>'


def decided_since(days: int) -> int:
    return Escalation.objects.decided().filter(decided_at__gte=timezone.now() - timedelta(days=days)).count()


@pytest.mark.parametrize("width, height", [(1366, 900), (390, 844)], ids=["1366", "390"])
def test_a_policy_admin_reads_the_review_analytics(page, live_server, users, screenshot, accessible_pages,
                                                    width, height):
    make_user("padmin", group=POLICY_ADMIN, first_name="Pia")  # the role's permissions only, no superuser
    page.set_viewport_size({"width": width, "height": height})
    log_in(page, live_server, "padmin")
    page.get_by_role("link", name="Review analytics").click()
    expect(page).to_have_title("Review analytics · Gated review")
    expect(page.locator("#analytics-empty")).to_contain_text("No escalation was decided in the last 30 days")
    expect(page.locator("#reviewers-none")).to_be_visible()
    assert_fits(page, f"analytics-empty-{width}", screenshot)
    assert accessible_pages.check(page) == []

    leads = [users.lead, users.lead2, make_user("lead3", group=SUPPORT_LEAD, first_name="Lea"),
             make_user("lead4", group=SUPPORT_LEAD, first_name="Leo", last_name=XSS)]
    write_history(leads, count=120, now=timezone.now())
    page.reload()
    expect(page.locator("#analytics-decided")).to_have_text(str(decided_since(30)))
    page.get_by_label("Window").select_option("90")
    page.get_by_role("button", name="Show").click()
    expect(page).to_have_url(f"{live_server.url}/analytics/?days=90")
    expect(page.locator("#analytics-decided")).to_have_text(str(decided_since(90)))
    for table in ("#time-to-decision", "#outcomes-by-pipeline", "#outcomes-by-check", "#reviewers"):
        expect(page.locator(table)).to_be_visible()
    expect(page.locator("#reviewers")).to_contain_text(f"Leo {XSS}")  # shown as text, never run
    expect(page.locator("#quorum-agreement")).to_contain_text("%")
    assert_fits(page, f"analytics-{width}", screenshot)
    assert accessible_pages.check(page) == []


def test_a_lead_reads_the_figures_without_anyone_s_name(page, live_server, users, screenshot, accessible_pages):
    write_history([users.lead, users.lead2, make_user("lead3", group=SUPPORT_LEAD, first_name="Lea")],
                  count=40, now=timezone.now())
    page.set_viewport_size({"width": 390, "height": 844})
    log_in(page, live_server, "lead")
    page.goto(f"{live_server.url}/analytics/?days=90")
    expect(page.locator("#outcomes-by-check")).to_be_visible()
    expect(page.locator("#reviewers-hidden")).to_have_text("Figures per person are shown to policy admins only.")
    expect(page.locator("#reviewers")).to_have_count(0)
    expect(page.locator("main")).not_to_contain_text("Lea")
    assert_fits(page, "analytics-lead-390", screenshot)
    assert accessible_pages.check(page) == []

"""In a browser: a lead gives the first of two approvals on the inbox and sees the count, who approved
and when on the escalation page; the lead who edited the text is told why their approval cannot
count. Desktop and phone screens, checked with axe-core; screenshots in test-artifacts/."""

import pytest
from playwright.sync_api import expect

from reviewer.desk import decisions
from reviewer.models import Escalation
from tests.browser.helpers import assert_fits, log_in
from tests.factories import make_escalation, make_incident

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
VIEWPORTS = {"desktop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}
EDITED = "We are investigating a problem in the EU. Current status: degraded. We will update you soon."


@pytest.fixture
def two_of_two(users):
    return make_escalation(incident=make_incident("inc_browser_quorum", title="Checkout errors"),
                           required_approvals=2, approval_rule_text="“P1 needs two leads” (rule 1)")


@pytest.mark.parametrize("screen", VIEWPORTS)
def test_a_lead_gives_the_first_of_two_approvals_on_the_inbox(page, live_server, users, two_of_two, screenshot,
                                                               screen):
    page.set_viewport_size(VIEWPORTS[screen])
    log_in(page, live_server, "lead")
    page.goto(f"{live_server.url}/inbox/")
    row = page.locator(f"#esc-row-{two_of_two.pk}")
    expect(row).to_contain_text("0 of 2 approvals")

    row.locator("summary").click()
    row.get_by_role("button", name="Approve (1 of 2)").click()

    expect(row.get_by_role("status")).to_contain_text("Your approval counts: 1 of 2 approvals.")
    expect(row).to_contain_text("1 of 2 approvals")
    expect(row).to_contain_text("You approved this text")  # and no button to approve it again
    expect(row.get_by_role("button", name="Approve (2 of 2)")).to_have_count(0)
    assert Escalation.objects.get(pk=two_of_two.pk).status == "pending"
    assert_fits(page, f"approvals-inbox-{screen}", screenshot)

    page.goto(f"{live_server.url}/escalations/{two_of_two.pk}/")
    box = page.locator("#approvals-box")
    expect(box).to_contain_text("1 of 2 approvals")
    expect(box).to_contain_text("Lena")
    expect(page.locator("#decision-panel")).to_contain_text("You approved this text")
    assert_fits(page, f"approvals-escalation-{screen}", screenshot)

    # Another lead is offered the approval that completes it.
    page.context.clear_cookies()
    log_in(page, live_server, "lead2")
    page.goto(f"{live_server.url}/escalations/{two_of_two.pk}/")
    page.get_by_role("button", name="Approve (2 of 2)").click()
    expect(page.locator("#esc-status")).to_have_text("approved")
    expect(page.locator("#decision-panel")).to_contain_text("Approved by 2 of 2: Lena")
    expect(page.locator("#decision-history")).to_contain_text("Lars")
    assert_fits(page, f"approvals-decided-{screen}", screenshot)


def test_the_lead_who_edited_the_text_is_told_why_their_approval_cannot_count(page, live_server, users, two_of_two,
                                                                              screenshot):
    decisions.decide(two_of_two.pk, users.lead, "edit_approve", text=EDITED)
    page.set_viewport_size(VIEWPORTS["desktop"])
    log_in(page, live_server, "lead")
    page.goto(f"{live_server.url}/escalations/{two_of_two.pk}/")
    expect(page.locator("#approvals-box")).to_contain_text("You wrote this version of the text")

    page.get_by_role("button", name="Approve (1 of 2)").click()

    expect(page.locator("#decision-panel [role=alert]")).to_contain_text(
        "You wrote this version of the text (your edit, or the revision you requested), so your approval cannot "
        "count: 2 more approvals from other members of “Support leads” must approve it.")
    assert Escalation.objects.get(pk=two_of_two.pk).approvals.count() == 0
    assert_fits(page, "approvals-self-refused-desktop", screenshot)

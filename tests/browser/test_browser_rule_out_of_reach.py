"""An approval rule out of reach, in a browser at a laptop's and a phone's width: the decision panel says at
once that the rule can no longer be met and who is left, readable and announced (axe-core finds nothing).
Screenshots: test-artifacts/rule-out-of-reach-<width>.png."""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ARTIFACTS
from tests.browser.helpers import assert_fits, log_in
from tests.factories import make_escalation, make_incident

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("width", [1366, 390])
def test_a_lead_reads_that_the_rule_can_no_longer_be_met(page, live_server, users, screenshot, width,
                                                         accessible_pages, no_csp_violation):
    escalation = make_escalation(incident=make_incident("inc_quorum_9", severity="P1"), required_approvals=2)
    users.lead2.is_active = False  # one of the two leads is gone
    users.lead2.save()
    page.set_viewport_size({"width": width, "height": 900})
    log_in(page, live_server, "lead")
    page.goto(f"{live_server.url}/escalations/{escalation.pk}/")

    notice = page.locator("#decision-panel .rule-out-of-reach")
    expect(notice).to_have_attribute("role", "status")
    expect(notice).to_contain_text("This approval rule can no longer be met: the text needs 2 more approvals from "
                                   "members of “Support leads”, and only 1 member who may approve it is left (Lena).")
    assert accessible_pages.check(page) == []
    assert_fits(page, f"rule-out-of-reach-page-{width}", screenshot)
    page.locator("#decision").screenshot(path=str(ARTIFACTS / f"rule-out-of-reach-{width}.png"))

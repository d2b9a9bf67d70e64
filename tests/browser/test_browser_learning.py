"""The learning loop in a browser, as a policy admin (staff, not a superuser) meets it at 1366×900 and
390×844: the admin dashboard's link to the guard's scorecard, the scorecard of a seeded history, mining
the decisions, an amendment's replay card, accepting one and dismissing another with a reason. axe-core
checks every page (tests/browser/conftest.py). Screenshots in test-artifacts/ (learning-*.png)."""

import pytest
from playwright.sync_api import expect

from agents.models import PolicyChange, RestrictedClaim
from reviewer.learning.seed import seed
from reviewer.models import Amendment
from reviewer.roles import POLICY_ADMIN
from tests.factories import PASSWORD, make_user

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("no_csp_violation")]


@pytest.mark.parametrize("width, height", [(1366, 900), (390, 844)], ids=["1366", "390"])
def test_a_policy_admin_reads_the_scorecard_and_decides_the_mined_amendments(page, live_server, demo_data, settings,
                                                                              screenshot, width, height):
    settings.LEARNING_REPLAY_RUNS = 100
    seed(70)
    admin = make_user("pia", group=POLICY_ADMIN)
    admin.is_staff = True
    admin.save()

    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("input[name=username]", "pia")
    page.fill("input[name=password]", PASSWORD)
    page.click("input[type=submit]")
    screenshot(page, f"learning-dashboard-{width}")
    page.get_by_role("link", name="Guard scorecard").click()

    expect(page).to_have_title("Guard scorecard | Gated review admin")
    by_check = page.get_by_role("table", name="By check and claim family")
    expect(by_check.get_by_role("row").filter(has_text="time commitments")).to_be_visible()
    expect(page.get_by_role("table", name="Misses")).to_contain_text("this is our highest priority")
    screenshot(page, f"learning-scorecard-{width}")

    page.get_by_role("link", name="Amendments").first.click()
    # Mining replays each proposal in the policy lab within the request: on a busy machine that outlasts
    # Playwright's 30 s default, so this click waits for the answer however long the machine takes.
    page.get_by_role("button", name="Mine decisions now").click(timeout=0)
    expect(page.locator(".messagelist")).to_contain_text("Nothing was applied")
    screenshot(page, f"learning-amendments-{width}")
    hedge = Amendment.objects.get(kind="hedge")
    hedges = RestrictedClaim.objects.get(family="time commitments").hedges
    assert "plan" not in hedges and not PolicyChange.objects.exists()

    page.get_by_role("link", name=hedge.title).click()
    expect(page.locator(".lab-headline")).to_contain_text(hedge.replay["headline"])
    expect(page.get_by_role("heading", name="Decisions it would contradict")).to_be_visible()
    gain = hedge.replay["agreement_gain"]
    expect(page.get_by_text(f"Agreement gain with people's decisions: {gain}")).to_be_visible()
    screenshot(page, f"learning-card-{width}")
    page.get_by_label("Reason for accepting").fill("Leads word it as a plan; the replay agrees.")
    page.get_by_role("button", name="Accept").click()
    expect(page.locator(".messagelist")).to_contain_text("It is in the policy history")
    screenshot(page, f"learning-accepted-{width}")
    assert RestrictedClaim.objects.get(family="time commitments").hedges.endswith(", plan")

    family = Amendment.objects.get(kind="family", changes__family="highest priority")
    page.goto(f"{live_server.url}/admin/reviewer/amendment/{family.pk}/change/")
    page.get_by_label("Reason for dismissing").fill("Style, not safety.")
    page.get_by_role("button", name="Dismiss").click()
    expect(page.locator(".messagelist")).to_contain_text("Dismissed")
    assert PolicyChange.objects.filter(action="dismissed", preview__reason="Style, not safety.").exists()

"""The policy lab in a browser, as a policy admin meets it at 1366×900 and 390×844: "Preview impact" on
a policy's change page with a few hundred stored runs, the result page (counts, changes by stop
reason, flipped runs with their diff and links), then saving the previewed values. Screenshots in
test-artifacts/ (policy-lab-form-*.png, policy-lab-result-*.png)."""

import pytest
from playwright.sync_api import expect

from agents.lab import preview
from agents.models import PipelinePolicy, PolicyChange, Run
from agents.testing.stored_runs import copy_runs
from tests.factories import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("no_csp_violation")]

COPIES = 300


@pytest.mark.parametrize("width, height", [(1366, 900), (390, 844)], ids=["1366", "390"])
def test_preview_impact_on_a_policy_with_a_few_hundred_runs(page, live_server, demo_runs, users, screenshot,
                                                             accessible_pages, width, height):
    reflection = list(Run.objects.filter(pipeline="reflection"))
    copy_runs(reflection, COPIES)
    limit = max(len(run.answer) for run in reflection if run.status == "ok") - 1  # the longest answer no longer fits
    policy = PipelinePolicy.objects.get(pipeline="reflection", active=True)
    policy.max_answer_chars = limit
    expected = preview(policy)  # what the page must show
    policy.refresh_from_db()
    would_stop, total = expected.counts["would_stop"], expected.runs
    assert total == Run.objects.filter(pipeline="reflection").count() > COPIES and 0 < would_stop < total

    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("input[name=username]", "admin")
    page.fill("input[name=password]", PASSWORD)
    page.click("input[type=submit]")
    page.goto(f"{live_server.url}/admin/agents/pipelinepolicy/{policy.pk}/change/")
    page.fill("#id_max_answer_chars", str(limit))
    lab = page.locator("fieldset.policy-lab")
    expect(lab.get_by_label("Newest runs")).to_have_value("1000")
    lab.scroll_into_view_if_needed()
    screenshot(page, f"policy-lab-form-{width}")
    # The replay of a few hundred runs is bounded in processor seconds, not in wall time: on a busy
    # machine the answer may take longer than Playwright's 30 s default, so the click waits for it.
    lab.get_by_role("button", name="Preview impact").click(timeout=0)

    expect(page).to_have_title(f"Impact of the change to {policy} | Gated review admin")
    headline = page.locator(".lab-headline")
    expect(headline).to_contain_text(f"{would_stop} of {total} runs would change ({would_stop} would stop")
    for change, count in expected.changes:
        expect(page.get_by_role("row", name=f"{change} {count}")).to_be_visible()
    flipped = page.locator(".lab-flips > li")
    expect(flipped).to_have_count(min(would_stop, 200))
    first = flipped.first
    expect(first).to_contain_text("The same text, now stopped")  # a budget stops the text, it does not change it
    href = first.get_by_role("link").first.get_attribute("href")
    assert href.startswith("/runs/")
    full = screenshot(page, f"policy-lab-result-{width}")
    page.screenshot(path=str(full.with_name(f"policy-lab-result-{width}-top.png")))  # what one sees first
    first.scroll_into_view_if_needed()
    page.screenshot(path=str(full.with_name(f"policy-lab-result-{width}-flips.png")))
    # The result page answers a POST only (a revisit goes back to the form): checked here, as shown.
    assert accessible_pages.check(page) == []
    assert PipelinePolicy.objects.get(pk=policy.pk).max_answer_chars != limit  # nothing saved yet

    page.get_by_role("button", name="Save these values").click()
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    assert PipelinePolicy.objects.get(pk=policy.pk).max_answer_chars == limit
    change = PolicyChange.objects.get(object_id=str(policy.pk))
    assert change.preview["counts"]["would_stop"] == would_stop


@pytest.mark.parametrize("width, height", [(1366, 900), (390, 844)], ids=["1366", "390"])
def test_going_back_after_a_preview_keeps_the_values_and_they_can_be_saved(page, live_server, demo_runs, users,
                                                                          screenshot, width, height):
    policy = PipelinePolicy.objects.get(pipeline="reflection", active=True)
    limit = policy.max_answer_chars - 7
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("input[name=username]", "admin")
    page.fill("input[name=password]", PASSWORD)
    page.click("input[type=submit]")
    page.goto(f"{live_server.url}/admin/agents/pipelinepolicy/{policy.pk}/change/")
    page.fill("#id_max_answer_chars", str(limit))
    page.locator("fieldset.policy-lab").get_by_role("button", name="Preview impact").click()
    expect(page.locator(".lab-headline")).to_be_visible()

    page.go_back()  # the browser's Back: the form shows what was previewed, and says it is not saved
    expect(page.locator("#id_max_answer_chars")).to_have_value(str(limit))
    notice = page.locator("#lab-previewed")
    expect(notice).to_contain_text("not saved yet")
    notice.scroll_into_view_if_needed()
    screenshot(page, f"policy-lab-back-{width}")
    assert PipelinePolicy.objects.get(pk=policy.pk).max_answer_chars != limit

    page.locator("fieldset.policy-lab").get_by_role("button", name="Preview impact").click()
    page.get_by_role("link", name="Back to the form to change them").click()  # the result page's own way back
    expect(page.locator("#id_max_answer_chars")).to_have_value(str(limit))
    page.locator("fieldset.policy-lab").get_by_role("button", name="Preview impact").click()
    screenshot(page, f"policy-lab-save-{width}")
    page.get_by_role("button", name="Save these values").click()
    expect(page.locator(".messagelist")).to_contain_text("was changed successfully")
    assert PipelinePolicy.objects.get(pk=policy.pk).max_answer_chars == limit
    assert PolicyChange.objects.get(object_id=str(policy.pk)).preview is not None
    page.goto(f"{live_server.url}/admin/agents/pipelinepolicy/{policy.pk}/change/")
    expect(page.locator("#lab-previewed")).to_have_count(0)  # saved: the form shows the row as it is

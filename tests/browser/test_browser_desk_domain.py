"""The emergency brake and request changes in a browser (headless Chromium via Playwright), at
1366×900 and 390×844: the emergency brake's banner and escalation, and a lead requesting changes
that a real Celery worker makes with the scripted model. Screenshots go to test-artifacts/."""

import re

import pytest
from playwright.sync_api import expect

from agents.models import PipelinePolicy, Run
from agents.tasks import run_now, start_run
from agents.testing.scripted_demo import CAVEAT
from agents.testing.scripted_server import tool_call
from reviewer.models import ChangeRequest, Escalation
from tests.browser.helpers import log_in
from tests.factories import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("no_csp_violation")]
SIZES = {"desktop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.mark.parametrize("size", SIZES)
def test_the_brake_banner_and_its_escalation_as_a_lead_sees_them(page, live_server, users, demo_data, screenshot,
                                                                 size):
    PipelinePolicy.objects.filter(pipeline="reflection").update(auto_revision=False)
    run, _ = start_run(pipeline="reflection", goal="Update", incident=demo_data["inc_pay_2041"], enqueue=False)
    run_now(run.pk)
    escalation = Escalation.objects.get(run=run)
    page.set_viewport_size(SIZES[size])

    log_in(page, live_server, "lead")
    banner = page.locator(".brake-banner")
    expect(banner).to_contain_text("Emergency brake on: auto-revision is off for Reflection.")
    page.goto(f"{live_server.url}/inbox/")
    row = page.locator(f"#esc-row-{escalation.pk}")
    expect(row).to_contain_text("review_decision_denied_execution:revise")
    expect(row).to_contain_text("stopped by the emergency brake")
    expect(banner).to_be_visible()
    screenshot(page, f"brake-inbox-{size}")

    page.goto(f"{live_server.url}/escalations/{escalation.pk}/")
    expect(page.locator(".pill-brake")).to_have_text("stopped by the emergency brake")
    expect(page.locator("body")).to_contain_text("the emergency brake stopped the revision the reviewer asked for")
    for instruction in run.review.instructions:
        expect(page.locator("body")).to_contain_text(instruction)
    screenshot(page, f"brake-escalation-{size}")

    page.goto(f"{live_server.url}/runs/{run.pk}/")
    expect(page.locator("button:has-text('Retry with the same inputs')")).to_have_count(0)


# The candidate as the page's text block shows it: the diff from the draft without its deleted words
# and the "unsupported" flags, spaces collapsed.
SHOWN_TEXT = """() => {
  const text = document.querySelector(".the-text pre.marked-text").cloneNode(true);
  text.querySelectorAll("del, .fact-flag").forEach((e) => e.remove());
  return text.textContent.replace(/\\s+/g, " ").trim();
}"""


@pytest.mark.parametrize("size", SIZES)
def test_a_lead_requests_changes_and_the_revision_replaces_the_text_without_a_reload(
        page, live_server, demo_runs, start_worker, fake_openai, held_replies, screenshot, size):
    escalation = Escalation.objects.get(stop_reason="policy_escalation")
    before = escalation.candidate
    revised = f"{before} {CAVEAT}"
    # The model answers only when the test has seen the request in flight, however loaded the machine.
    revision = held_replies(tool_call("submit_revision", {"revised_answer": revised}))
    start_worker(OPENAI_API_KEY="sk-browser", OPENAI_BASE_URL=fake_openai.base_url, OPENAI_MAX_RETRIES="0")
    page.set_viewport_size(SIZES[size])

    log_in(page, live_server, "lead")
    page.goto(f"{live_server.url}/escalations/{escalation.pk}/")
    page.fill("form.request-changes textarea[name=instructions]", f'Add "{CAVEAT}" at the end.')
    page.click("form.request-changes button[type=submit]")
    page.wait_for_url(re.compile(rf"/escalations/{escalation.pk}/$"))

    changes = page.locator("#change-requests")
    expect(changes).to_contain_text("The model is revising the text")
    wait_for(lambda: fake_openai.requests, message="the revision's model call")
    edit_box = page.locator(".edit-form textarea[name=text]")
    expect(edit_box).to_have_value(before)
    assert page.evaluate(SHOWN_TEXT) == " ".join(before.split())
    page.evaluate("() => { window.sameDocument = true; }")  # gone if the page reloads
    screenshot(page, f"request-changes-in-flight-{size}")

    revision.release()

    expect(changes).to_contain_text("The revision passed the guard and is now the candidate", timeout=20_000)
    expect(edit_box).to_have_value(revised)  # the edit box holds the revision, exactly
    assert page.evaluate(SHOWN_TEXT) == " ".join(revised.split())  # so does the text block
    guard = page.locator("#guard-panel")
    expect(guard).to_contain_text("The guard on the requested revision")
    expect(guard).to_contain_text(f"(change #{ChangeRequest.objects.get().pk}) passed the guard")
    expect(changes).to_contain_text("revise · ")  # the model call: stage, model, latency, tokens
    expect(page.locator("form.request-changes textarea[name=instructions]")).to_be_visible()  # asking again
    expect(page.locator("#decision-history")).to_contain_text("request changes")
    assert page.evaluate("() => window.sameDocument") is True  # swapped in place, not reloaded
    expect(page.locator("body")).not_to_contain_text("revising")  # nothing on the page still says so
    assert page.locator("#change-requests[hx-trigger]").count() == 0  # the polling ended
    screenshot(page, f"request-changes-{size}")

    change = ChangeRequest.objects.get()
    assert (change.status, change.ok, change.decision.action) == ("done", True, "request_changes")
    escalation.refresh_from_db()
    assert (escalation.status, escalation.candidate) == ("pending", revised)

    page.click("form:has(input[value=approve]) button[type=submit]")
    expect(page.locator("#decision-panel")).to_contain_text("approved", timeout=5_000)
    expect(page.locator("#decision-history")).to_contain_text("Approve")  # the history followed the decision
    assert Escalation.objects.get(pk=escalation.pk).final_text == revised
    assert Run.objects.filter(pk=escalation.run_id).exists()

"""What only a browser shows: the live timeline and its polling, the inbox's inline decisions with
the guard checking an edit as the lead types, and model text rendered as text. Headless Chromium
from Debian, driven by Playwright; screenshots are saved in test-artifacts/."""

import re

import pytest
from playwright.sync_api import expect

from agents.models import Incident, Run
from agents.testing.scripted_demo import APPROVE, DRAFT
from agents.testing.scripted_server import delay, tool_call
from reviewer.models import Decision, Escalation
from tests.browser.helpers import log_in
from tests.factories import PASSWORD, make_escalation, make_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("no_csp_violation")]
XSS = '<script>alert("xss")</script><img src=x onerror=alert("img")>'


def test_the_violation_watch_sees_a_blocked_inline_script(page, live_server, users, csp_violations):
    """The watch above can fail: an inline script and an inline style are blocked, and reported."""
    page.goto(f"{live_server.url}/accounts/login/")
    assert "script-src 'self'" in page.evaluate(
        "() => fetch(location.href).then(r => r.headers.get('content-security-policy'))"
    )
    page.evaluate("""() => new Promise((resolve) => {
      let seen = 0;
      document.addEventListener("securitypolicyviolation", () => ++seen === 2 && resolve());
      const script = document.createElement("script");
      script.textContent = "window.ran = true";
      document.body.append(script);
      const style = document.createElement("style");
      style.textContent = "body { color: red }";
      document.head.append(style);
    }).then(() => Promise.all(window.cspReports))""")
    assert page.evaluate("() => window.ran") is None
    assert page.evaluate("() => getComputedStyle(document.body).color") != "rgb(255, 0, 0)"
    assert any(v.startswith("script-src") for v in csp_violations), csp_violations
    assert any(v.startswith("style-src") for v in csp_violations), csp_violations
    csp_violations.clear()


def test_ops_starts_a_run_and_watches_the_timeline_fill_in_then_stop_polling(
        page, live_server, users, demo_data, start_worker, fake_openai, held_replies, screenshot):
    fake_openai.script(delay(1.5, tool_call("submit_draft", {"draft": DRAFT})))
    review = held_replies(tool_call("reflect", APPROVE))  # answered once the page showed the run in flight
    start_worker(OPENAI_API_KEY="sk-browser", OPENAI_BASE_URL=fake_openai.base_url, OPENAI_MAX_RETRIES="0")
    trace_polls = []
    page.on("request", lambda request: "/trace/" in request.url and trace_polls.append(request.url))

    log_in(page, live_server, "ops")
    page.goto(f"{live_server.url}/incidents/inc_pay_2041/")
    page.click("#run-form button[type=submit]")
    page.wait_for_url(re.compile(r"/runs/\d+/$"))

    steps = page.locator("#run-trace .timeline li.step-ok")
    expect(steps).to_have_count(1, timeout=15_000)  # the draft, while the review is still with the model
    expect(page.locator("#run-header .status").first).to_have_text("running")
    review.release()
    expect(steps).to_have_count(3, timeout=15_000)  # draft, review, finalize
    expect(page.locator("#run-header .status").first).to_have_text("ok")
    expect(page.locator("#run-trace [hx-trigger]")).to_have_count(0)  # nothing polls any more
    polls_when_done = len(trace_polls)
    page.wait_for_timeout(2500)
    assert len(trace_polls) == polls_when_done > 0  # polling stopped when the run ended
    assert Run.objects.get().stop_reason == "success"
    screenshot(page, "run-page")


def test_lead_edits_with_a_violation_justifies_and_approves_then_rejects_another(
        page, live_server, demo_runs, screenshot):
    pending = list(Escalation.objects.filter(status="pending").order_by("opened_at"))
    assert len(pending) == 2
    log_in(page, live_server, "lead")
    page.goto(f"{live_server.url}/inbox/")
    expect(page.locator("#pending-count")).to_have_text("2")
    screenshot(page, "inbox")

    page.goto(f"{live_server.url}/escalations/{pending[0].pk}/")
    editor = page.locator(".edit-form textarea[name=text]")
    editor.fill(pending[0].candidate)
    editor.press("End")
    editor.type(" Payments will recover within 99 minutes.")
    violations = page.locator("#edit-violations")
    expect(violations).to_contain_text("no_new_facts", timeout=5_000)
    expect(violations).to_contain_text("99")
    page.fill(".edit-form textarea[name=note]", "The 99-minute window was confirmed by the payments team.")
    screenshot(page, "escalation-edit")
    page.click(".edit-form button:has-text('Approve the edited text')")
    expect(page.locator("#decision-panel")).to_contain_text("approved", timeout=5_000)
    expect(page.locator("#pending-count")).to_have_text("1")

    page.goto(f"{live_server.url}/escalations/{pending[1].pk}/")
    page.fill("form:has(input[value=reject]) textarea[name=note]", "The update overpromises; rewrite it by hand.")
    page.click("button:has-text('Reject')")
    expect(page.locator("#decision-panel")).to_contain_text("rejected", timeout=5_000)

    edit, reject = Decision.objects.order_by("at")
    assert (edit.action, reject.action) == ("edit_approve", "reject")
    assert "99 minutes" in edit.final_text and "payments team" in edit.note
    assert [v["check"] for v in edit.guard_results["violations"]][:1] == ["patch_violation:no_new_facts"]
    assert set(Escalation.objects.values_list("status", flat=True)) == {"approved", "rejected"}


def test_model_text_with_script_and_img_onerror_renders_as_text(page, live_server, users, demo_data):
    run = make_run(goal=f"Goal {XSS}", incident=Incident.objects.first(), status="stopped",
                   stop_reason="policy_escalation", phase="review", answer="", candidate=f"Draft {XSS}",
                   escalation_reason=f"Reason {XSS}")
    escalation = make_escalation(run, candidate=f"Draft {XSS} edited")
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    log_in(page, live_server, "lead")
    for path in (f"/escalations/{escalation.pk}/", "/inbox/", f"/runs/{run.pk}/"):
        page.goto(f"{live_server.url}{path}")
        expect(page.locator("main")).to_contain_text('<script>alert("xss")</script>')
        assert page.locator("img[src=x]").count() == 0, path
    assert dialogs == []


def test_a_policy_admin_works_in_the_admin_site_under_the_policy(page, live_server, demo_data, csp_violations):
    from tests.reviewer.test_access import make_policy_admin

    make_policy_admin("padmin")
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("input[name=username]", "padmin")
    page.fill("input[name=password]", PASSWORD)
    page.click("input[type=submit]")
    expect(page.locator("#site-name")).to_be_visible()
    page.goto(f"{live_server.url}/admin/agents/pipelinepolicy/")
    page.click("#result_list tbody tr th a")
    expect(page.locator("form#pipelinepolicy_form")).to_be_visible()
    page.goto(f"{live_server.url}/admin/agents/incident/add/")
    expect(page.locator("form#incident_form")).to_be_visible()

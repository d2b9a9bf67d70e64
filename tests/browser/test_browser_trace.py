"""The run page's trace in a browser, at 1366×900 and 390×844: while the revision is with the model
the in-flight line says "revising (model call 3)…"; once the run ends, each model call's request
opens next to its answer, and the key is nowhere on the page. Screenshots in test-artifacts/
(trace-in-flight-*.png, trace-request-*.png). And the trace grows poll by poll with only the new
steps sent, ending as a fresh load shows it."""

import re
from urllib.parse import parse_qs, urlparse

import pytest
from playwright.sync_api import expect

from agents.models import ModelCall, Run, TraceStep
from agents.testing.scripted_demo import CRITIQUE_REVISE, DRAFT, REVISE, REVISED
from agents.testing.scripted_server import tool_call
from tests.browser.helpers import log_in

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("no_csp_violation")]

KEY = "sk-browser-trace-key-vqzmd"
DESKTOP, PHONE = {"width": 1366, "height": 900}, {"width": 390, "height": 844}


def test_ops_sees_the_stage_in_flight_then_opens_each_request_next_to_its_answer(
        page, live_server, users, demo_data, start_worker, fake_openai, held_replies, screenshot):
    fake_openai.script(tool_call("submit_draft", {"draft": DRAFT}), tool_call("reflect", REVISE))
    revision = held_replies(tool_call("submit_revision", {"revised_answer": REVISED}))  # once the page showed it
    start_worker(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=fake_openai.base_url, OPENAI_MAX_RETRIES="0")

    page.set_viewport_size(PHONE)
    log_in(page, live_server, "ops")
    page.goto(f"{live_server.url}/incidents/inc_pay_2041/")
    page.click("#run-form button[type=submit]")
    page.wait_for_url(re.compile(r"/runs/\d+/$"))

    in_flight = page.locator("#run-in-flight")
    expect(in_flight).to_have_text(re.compile(r"^\s*revising\s+\(model call 3\)…\s*$"), timeout=20_000)
    screenshot(page, "trace-in-flight-390")
    revision.release()
    expect(page.locator("#run-header .status").first).to_have_text("ok", timeout=20_000)
    expect(in_flight).to_have_count(0)

    run = Run.objects.get()
    assert [c.stage for c in ModelCall.objects.filter(run=run)] == ["draft", "review", "revise"]
    for viewport, name in ((DESKTOP, "1366"), (PHONE, "390")):
        page.set_viewport_size(viewport)
        page.reload()
        third = page.locator("tr.call-io details").nth(2)
        expect(third.locator(".call-io-panes")).not_to_be_visible()
        third.locator("summary").click()
        request, answer = third.locator(".call-io-panes > div").nth(0), third.locator(".call-io-panes > div").nth(1)
        expect(request).to_contain_text("system")
        expect(request).to_contain_text("submit_revision")  # the revise stage's instructions
        expect(request).to_contain_text("This estimate may change as we learn more.")  # its fix plan
        expect(answer).to_contain_text(REVISED[:60])
        request_box, answer_box = request.bounding_box(), answer.bounding_box()
        if viewport is DESKTOP:  # next to each other
            assert answer_box["x"] > request_box["x"] + request_box["width"] - 1
        else:  # stacked, and nothing scrolls sideways
            assert answer_box["y"] >= request_box["y"] + request_box["height"] - 1
            assert page.evaluate("() => document.querySelector('.call-io-panes').scrollWidth")\
                <= page.evaluate("() => document.querySelector('.call-io-panes').clientWidth")
        third.scroll_into_view_if_needed()
        screenshot(page, f"trace-request-{name}")
        assert KEY not in page.content()


def test_the_trace_grows_poll_by_poll_with_only_the_new_steps_and_ends_with_each_step_once(
        page, live_server, users, demo_data, start_worker, fake_openai, held_replies):
    """A self-critique run whose revisions miss the required phrase three times: seven steps (draft,
    critique, three revise attempts, fallback, finalize), the first five a model call apart; the
    model calls' rows are appended as they come too. Each answer comes once the page showed the
    step before it, so the page sees the trace grow step by step however loaded the machine."""
    missed = {"revised_answer": DRAFT.replace("We are investigating", "We are still investigating", 1)}
    model = held_replies(tool_call("submit_draft", {"draft": DRAFT}), tool_call("submit_critique", CRITIQUE_REVISE),
                         *[tool_call("submit_revision", missed)] * 3)
    start_worker(OPENAI_API_KEY=KEY, OPENAI_BASE_URL=fake_openai.base_url, OPENAI_MAX_RETRIES="0")
    polls = []  # (the step the page asked after, status, what the answer replaced)
    page.on("response", lambda response: "/trace/" in response.url and polls.append((
        int(parse_qs(urlparse(response.url).query).get("after", ["0"])[0]), response.status,
        response.headers.get("hx-retarget"))))

    log_in(page, live_server, "ops")
    page.goto(f"{live_server.url}/incidents/inc_pay_2041/?pipeline=self_critique")
    page.click("#run-form button[type=submit]")
    page.wait_for_url(re.compile(r"/runs/\d+/$"))
    steps = page.locator("#run-trace .timeline > li:not(#run-in-flight)")
    for shown in (1, 2):
        model.release()
        expect(steps).to_have_count(shown, timeout=20_000)
    # the draft and the critique, the revision still out
    expect(page.locator("#run-in-flight")).to_be_visible()
    calls = page.locator("#run-calls > tr[id^=call-]")  # each call's row comes with its step or before it
    numbers = calls.evaluate_all("rows => rows.map(row => row.id)")
    assert len(numbers) >= 2 and numbers == [f"call-{i}" for i in range(1, len(numbers) + 1)]  # in order, once
    for shown in (3, 4):  # the first two revisions, each a step
        model.release()
        expect(steps).to_have_count(shown, timeout=20_000)
    model.release()  # the third: then the fallback and finalize, without a model call
    expect(page.locator("#run-header .status").first).to_have_text("ok", timeout=30_000)

    run = Run.objects.get()
    assert run.outcome == "revised_fallback"
    expected = [f"{step.index}. {step.phase}" for step in TraceStep.objects.filter(run=run).order_by("index")]
    assert len(expected) == 7
    # each step once, in order
    assert [text.strip() for text in steps.locator(":scope > b").all_inner_texts()] == expected
    expect(page.locator("#run-in-flight")).to_have_count(0)
    expect(page.locator("#run-trace [hx-trigger]")).to_have_count(0)
    # While in flight the polls asked after the last step shown and got only what was new (the line
    # replaced); the after moved on several times, so the trace grew by appended steps.
    appended = [after for after, status, target in polls if target == "#run-in-flight"]
    assert all(status == 200 for after, status, target in polls if target == "#run-in-flight")
    assert len(set(appended)) >= 3 and min(appended) >= 1, polls
    assert polls[-1][1:] == (286, "#run-trace"), polls  # the final poll: the whole trace, then no more
    expect(calls).to_have_count(5)
    shown = {part: page.inner_html(part) for part in ("#run-trace", "#run-outcome")}
    page.reload()
    for part, html in shown.items():  # as a fresh load
        assert " ".join(page.inner_html(part).split()) == " ".join(html.split()), part

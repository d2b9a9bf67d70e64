"""The run page's trace: the in-flight line names the stage being worked on, and each model call's
request (system and user messages) opens next to its answer, escaped."""

import pytest
from django.urls import reverse
from django.utils.html import escape

from agents.models import ModelCall, Run, TraceStep
from tests.factories import make_run

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert(1)</script>"


def in_flight_line(page: str) -> str:
    """The text of the in-flight line, whitespace collapsed."""
    line = page[page.index('id="run-in-flight"'):]
    return " ".join(line[line.index(">") + 1:line.index("</")].split())


def test_the_in_flight_line_names_the_stage_and_the_model_call(login):
    run = make_run(status=Run.Status.RUNNING, phase="review", working_on="revise", working_call=3)
    for index, phase in enumerate(["draft", "review"], 1):
        TraceStep.objects.create(run=run, index=index, phase=phase, status="ok")

    page = login("ops").get(reverse("run_trace", args=[run.pk]), HTTP_HX_REQUEST="true").content.decode()

    assert in_flight_line(page) == "revising (model call 3)…"


def test_before_the_first_step_the_in_flight_line_names_the_stage_too(login):
    run = make_run(status=Run.Status.RUNNING, working_on="draft", working_call=1)

    page = login("ops").get(reverse("run", args=[run.pk])).content.decode()

    assert in_flight_line(page) == "Drafting (model call 1)…"


def test_a_queued_run_waits_for_a_worker(login):
    run = make_run(status=Run.Status.QUEUED)

    page = login("ops").get(reverse("run", args=[run.pk])).content.decode()

    assert in_flight_line(page) == "Waiting for a worker to pick up this run…"


def test_each_model_call_opens_its_request_next_to_its_answer(login, demo_runs):
    run = Run.objects.filter(pipeline="reflection", outcome="revised_once").order_by("id").first()
    calls = list(run.calls.order_by("id"))
    assert len(calls) == 3 and all(call.request for call in calls)

    page = login("ops").get(reverse("run", args=[run.pk])).content.decode()

    assert page.count('<tr class="call-io">') == 3
    for number, call in enumerate(calls, 1):
        start = page.index(f"Request and answer of call {number}</summary>")
        pane = page[start:page.index("</details>", start)]
        system, user = call.request
        assert f'<pre class="text small">{escape(system["content"])}</pre>' in pane
        assert f'<pre class="text small">{escape(user["content"])}</pre>' in pane and run.goal in user["content"]
        answer = pane[pane.index("<h3>Answer</h3>"):]
        assert f'<pre class="text small">{escape(call.raw)}</pre>' in answer


def test_request_and_answer_are_escaped(login):
    run = make_run(status=Run.Status.OK)
    ModelCall.objects.create(run=run, stage="draft", model="m", raw=f'{{"draft": "{SCRIPT}"}}',
                             request=[{"role": "system", "content": f"Be {SCRIPT}"},
                                      {"role": "user", "content": f"Goal {SCRIPT}"}])

    page = login("ops").get(reverse("run", args=[run.pk])).content.decode()

    assert SCRIPT not in page
    assert "Be &lt;script&gt;alert(1)&lt;/script&gt;" in page and "Goal &lt;script&gt;" in page


def test_a_call_recorded_before_requests_were_kept_says_so(login):
    run = make_run(status=Run.Status.OK)
    ModelCall.objects.create(run=run, stage="draft", model="m", raw="{}")

    page = login("ops").get(reverse("run", args=[run.pk])).content.decode()

    assert "Not recorded (calls made before requests were kept)." in page

"""The run page's polling fragment sends only what is new.

The in-flight line polls ``run_trace?after=<last step shown>&call=<last model call shown>&delivery=<n>``;
while the run is in flight and the page's steps are still the run's, the answer is the steps after
``after`` and a new in-flight line (which replace the old line), and the model calls after ``call``
(appended to the page's table). Anything else gets the whole trace, which replaces ``#run-trace``:
no steps shown yet, a bad query, a run taken over since the page loaded, and the final poll of a run
that has ended (status 286, as a fresh load renders it).
"""

import re
from datetime import timedelta
from html import unescape as html_unescape
from urllib.parse import parse_qsl, urlparse

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from agents.models import ModelCall, Run, TraceStep
from agents.tasks import take
from tests.factories import make_run

pytestmark = pytest.mark.django_db

PHASES = ["draft", "critique", "revise", "critique", "revise", "critique", "finalize"]


def running(steps: int, *, pipeline="self_critique", deliveries=1, phases=PHASES, **fields) -> Run:
    """A run in flight with ``steps`` steps, and a model call before each (tokens 10 + 1 each)."""
    run = make_run(pipeline, status=Run.Status.RUNNING, deliveries=deliveries, heartbeat_at=timezone.now(), **fields)
    add_steps(run, 1, steps, phases=phases)
    return run


def add_steps(run: Run, first: int, last: int, *, phases=PHASES, tag="") -> None:
    for index in range(first, last + 1):
        phase = phases[(index - 1) % len(phases)]
        ModelCall.objects.create(run=run, stage=phase, model="m", prompt_tokens=10, completion_tokens=1,
                                 raw=f"answer of call {index}{tag}")
        TraceStep.objects.create(run=run, index=index, phase=phase, status="ok", output=f"output of step {index}{tag}")


def call_id(run: Run, number: int) -> int:
    return run.calls.order_by("id")[number - 1].pk


def poll(client, run: Run, query: str = ""):
    return client.get(reverse("run_trace", args=[run.pk]) + query, HTTP_HX_REQUEST="true")


def shown_steps(html: str) -> list[str]:
    """The step outputs the fragment (or page) carries, in order."""
    return re.findall(r'<pre class="text">(output of step \d+[^<]*)</pre>', html)


def shown_calls(html: str) -> list[tuple[str, str]]:
    """(number, answer) of each model call row the fragment (or page) carries, in order."""
    numbers = re.findall(r'<tr id="call-(\d+)">', html)
    answers = re.findall(r'<pre class="text small">(answer of call \d+[^<]*)</pre>', html)
    assert len(numbers) == len(answers)
    return list(zip(numbers, answers, strict=True))


def next_poll(html: str) -> dict[str, str]:
    """The query the in-flight line asks with next."""
    url = html_unescape(re.search(r'id="run-in-flight"[^>]*hx-get="([^"]+)"', html).group(1))
    return dict(parse_qsl(urlparse(url).query))


def trace_div(html: str) -> str:
    """The ``<div id="run-trace">`` element as rendered (it closes on a line of its own)."""
    start = html.index('<div id="run-trace">')
    return html[start:html.index("\n</div>", start) + len("\n</div>")]


def test_a_poll_sends_exactly_the_steps_and_model_calls_after_the_last_ones_shown(login):
    run = running(7)
    client = login("ops")

    response = poll(client, run, f"?after=4&call={call_id(run, 4)}&delivery=1")

    html = response.content.decode()
    assert response.status_code == 200
    assert shown_steps(html) == ["output of step 5", "output of step 6", "output of step 7"]
    assert "<b>4. " not in html and "<b>5. revise</b>" in html
    assert 'id="run-trace"' not in html  # no whole trace: the steps and the line replace the old line
    assert response["HX-Retarget"] == "#run-in-flight" and response["HX-Reswap"] == "outerHTML"
    line = html[html.index('id="run-in-flight"'):]
    assert f'hx-get="{reverse("run_trace", args=[run.pk])}?after=7&amp;call={call_id(run, 7)}&amp;delivery=1"' \
        in line
    assert html.index("<b>7. ") < html.index('id="run-in-flight"')  # the line comes after the new steps
    # the model calls after the fourth, numbered on, appended to the table (not the whole outcome)
    assert '<template><tbody hx-swap-oob="beforeend:#run-calls">' in html and 'id="run-outcome"' not in html
    assert shown_calls(html) == [("5", "answer of call 5"), ("6", "answer of call 6"), ("7", "answer of call 7")]
    # the header is swapped out of band as before: the phase as the last step says, every call counted
    assert 'id="run-header" hx-swap-oob="true"' in html
    assert "<dt>Phase</dt><dd>finalize</dd>" in html
    assert "7 model calls" in html and "70 prompt + 7 completion tokens" in html


def test_a_poll_with_nothing_new_sends_no_step_and_no_call_and_keeps_asking_after_the_same_ones(login):
    run = running(3)

    html = poll(login("ops"), run, f"?after=3&call={call_id(run, 3)}&delivery=1").content.decode()

    assert shown_steps(html) == [] and shown_calls(html) == []
    assert "<template>" not in html and 'id="run-outcome"' not in html
    assert f"?after=3&amp;call={call_id(run, 3)}&amp;delivery=1" in html
    assert "<dt>Phase</dt><dd>revise</dd>" in html  # the last step shown still names the phase
    assert "3 model calls" in html


def test_a_model_call_before_its_step_is_appended_alone(login):
    run = running(2)
    ModelCall.objects.create(run=run, stage="revise", model="m", raw="answer of call 3")

    html = poll(login("ops"), run, f"?after=2&call={call_id(run, 2)}&delivery=1").content.decode()

    assert shown_steps(html) == []
    assert shown_calls(html) == [("3", "answer of call 3")]
    assert f"?after=2&amp;call={call_id(run, 3)}&amp;delivery=1" in html


def test_the_queries_filter_on_the_last_step_and_call_in_the_database(login):
    run = running(6)
    client = login("ops")
    after_call = call_id(run, 5)

    with CaptureQueriesContext(connection) as captured:
        poll(client, run, f"?after=5&call={after_call}&delivery=1")

    steps_sql = [q["sql"] for q in captured if 'FROM "agents_tracestep"' in q["sql"]]
    calls_sql = [q["sql"] for q in captured if 'FROM "agents_modelcall"' in q["sql"] and "COUNT" not in q["sql"]]
    assert len(steps_sql) == 1 and '"agents_tracestep"."index" >= 5' in steps_sql[0]
    assert len(calls_sql) == 1 and f'"agents_modelcall"."id" > {after_call}' in calls_sql[0]


@pytest.mark.parametrize("query", [
    "", "?after=abc&call=4&delivery=1", "?after=-1&call=4&delivery=1", "?after=0&call=4&delivery=1",
    "?after=&call=4&delivery=1", "?after=2.5&call=4&delivery=1", f"?after={'9' * 30}&call=4&delivery=1",
    f"?after=2&call={'9' * 30}&delivery=1", "?after=2&call=-1&delivery=1", "?after=2&call=x&delivery=1",
    "?after=2&delivery=1", "?after=2&call=4", "?after=2&call=4&delivery=x", "?after=2&call=4&delivery=-3",
    "?after=99&call=4&delivery=1",  # a step the run never had: nothing to append after
])
def test_a_bad_or_missing_value_gets_the_whole_trace(login, query):
    run = running(4)

    response = poll(login("ops"), run, query)

    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<div id="run-trace">')
    assert response["HX-Retarget"] == "#run-trace" and response["HX-Reswap"] == "outerHTML"
    assert shown_steps(html) == [f"output of step {i}" for i in range(1, 5)]
    assert 'id="run-outcome" hx-swap-oob="true"' in html
    assert shown_calls(html) == [(str(i), f"answer of call {i}") for i in range(1, 5)]
    assert next_poll(html) == {"after": "4", "call": str(call_id(run, 4)), "delivery": "1"}


def test_a_page_that_shows_no_model_call_yet_gets_the_whole_outcome(login):
    run = running(2)

    html = poll(login("ops"), run, "?after=1&call=0&delivery=1").content.decode()

    assert shown_steps(html) == ["output of step 2"]
    assert 'id="run-outcome" hx-swap-oob="true"' in html and "<template>" not in html
    assert shown_calls(html) == [("1", "answer of call 1"), ("2", "answer of call 2")]


def test_a_poll_without_htmx_still_goes_to_the_run_page(login):
    run = running(2)

    response = login("ops").get(reverse("run_trace", args=[run.pk]) + f"?after=1&call={call_id(run, 1)}&delivery=1")

    assert response.status_code == 302 and response["Location"] == reverse("run", args=[run.pk])


def test_a_run_taken_over_since_the_page_loaded_gets_the_whole_new_trace(login, settings):
    """The page shows steps 1-3 of delivery 1; its worker went silent, another took the run over
    (which deletes the partial trace) and has written steps 1-5 of its own."""
    run = running(3, deliveries=1)
    client = login("ops")
    shown = f"?after=3&call={call_id(run, 3)}&delivery=1"
    assert shown.replace("&", "&amp;") in client.get(reverse("run", args=[run.pk])).content.decode()
    silent_since = timezone.now() - timedelta(seconds=settings.RUN_STALE_SECONDS + 1)
    Run.objects.filter(pk=run.pk).update(heartbeat_at=silent_since)
    assert take(run.pk).deliveries == 2
    add_steps(run, 1, 5, tag=" (delivery 2)")

    response = poll(client, run, shown)

    html = response.content.decode()
    assert response["HX-Retarget"] == "#run-trace"  # replaces the stale steps, appends nothing
    assert shown_steps(html) == [f"output of step {i} (delivery 2)" for i in range(1, 6)]
    # every call stays on the record (the first delivery's too), in the whole outcome
    assert [answer for _, answer in shown_calls(html)] == \
        [f"answer of call {i}" for i in range(1, 4)] + [f"answer of call {i} (delivery 2)" for i in range(1, 6)]
    assert f"?after=5&amp;call={call_id(run, 8)}&amp;delivery=2" in html
    assert "Deliveries</dt><dd>2 (taken over" in html


def test_a_page_that_loaded_before_any_step_gets_the_whole_trace_once_steps_come(login):
    run = make_run("self_critique", status=Run.Status.QUEUED)
    client = login("ops")
    page = client.get(reverse("run", args=[run.pk])).content.decode()
    assert f'hx-get="{reverse("run_trace", args=[run.pk])}"' in page and "<ol" not in trace_div(page)
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING, deliveries=1)
    add_steps(run, 1, 2)

    response = poll(client, run)

    html = response.content.decode()
    assert response["HX-Retarget"] == "#run-trace"
    assert '<ol class="timeline">' in html
    assert shown_steps(html) == ["output of step 1", "output of step 2"]
    assert f"?after=2&amp;call={call_id(run, 2)}&amp;delivery=1" in html


def test_the_final_poll_leaves_the_page_as_a_fresh_load_of_the_finished_run(login):
    run = running(5)
    client = login("ops")
    Run.objects.filter(pk=run.pk).update(status=Run.Status.OK, stop_reason="success", phase="finalize",
                                         finished_at=timezone.now(), model_calls=7)
    add_steps(run, 6, 7)

    response = poll(client, run, f"?after=5&call={call_id(run, 5)}&delivery=1")

    html = response.content.decode()
    assert response.status_code == 286  # htmx stops polling and swaps this in
    assert response["HX-Retarget"] == "#run-trace"
    fresh = client.get(reverse("run", args=[run.pk])).content.decode()
    assert trace_div(html) == trace_div(fresh)
    assert shown_steps(trace_div(html)) == [f"output of step {i}" for i in range(1, 8)]
    outcome = html[html.index('<div id="run-outcome"'):]
    assert outcome.replace(' hx-swap-oob="true"', "", 1) in fresh  # the outcome, every call once
    assert shown_calls(outcome) == [(str(i), f"answer of call {i}") for i in range(1, 8)]
    assert "run-in-flight" not in html and "hx-trigger" not in html


def test_a_routing_run_gets_its_whole_outcome_with_every_attempt(login):
    run = running(3, pipeline="routing", phases=["route", "delegate", "delegate"])
    for index in (2, 3):
        TraceStep.objects.filter(run=run, index=index).update(measurements={"attempt": index - 1,
                                                                            "target": f"specialist_{index}"})

    html = poll(login("ops"), run, f"?after=3&call={call_id(run, 3)}&delivery=1").content.decode()

    assert shown_steps(html) == []
    outcome = html[html.index('id="run-outcome"'):]
    assert "<code>specialist_2</code>" in outcome and "<code>specialist_3</code>" in outcome
    assert len(shown_calls(outcome)) == 3

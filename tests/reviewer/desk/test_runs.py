"""Run pages: the live trace, the outcome, the run list, failed runs and retry."""

import re
from datetime import timedelta

import pytest
from django.urls import reverse

from agents.core.stops import explain
from agents.models import AuditDiff, ModelCall, Review, Run, TraceStep
from reviewer.models import Escalation
from tests.factories import make_escalation, make_run

SCRIPT = "<script>alert(1)</script>"
IMG = "<img src=x onerror=alert(1)>"
POLLING = 'hx-trigger="every 1s"'


def run_url(run):
    return reverse("run", args=[run.pk])


def trace_url(run):
    return reverse("run_trace", args=[run.pk])


def demo_run(*, pipeline=None, stop_reason=None, outcome=None) -> Run:
    runs = Run.objects.all()
    if pipeline:
        runs = runs.filter(pipeline=pipeline)
    if stop_reason:
        runs = runs.filter(stop_reason=stop_reason)
    if outcome:
        runs = runs.filter(outcome=outcome)
    return runs.order_by("id").first()


def failed_demo_run() -> Run:
    """The demo's routing run that stopped without an escalation (its routes all asked for a reroute)."""
    return Run.objects.filter(pipeline="routing", status="stopped").order_by("id").first()


def listed_runs(html: str) -> set[int]:
    return {int(pk) for pk in re.findall(r'href="/runs/(\d+)/">Run \d+</a>', html)}


# The run page ----------------------------------------------------------------------------------

def test_run_page_shows_the_trace_review_diff_and_model_calls(login, demo_runs):
    run = demo_run(pipeline="reflection", outcome="revised_once")

    html = login("ops").get(run_url(run)).content.decode()

    for phase in ("draft", "review", "revise", "finalize"):
        assert f"{phase}</b>" in html
    assert "decision: <b>revise</b>" in html
    assert "similarity: <b>0.94</b>" in html
    assert "length increase pct: <b>+12.76%</b>" in html
    assert "missing_uncertainty" in html and "The ETA is stated without uncertainty." in html
    assert "Fix plan" in html and "This estimate may change as we learn more." in html
    assert "<ins>This estimate may change as we learn more.</ins>" in html
    assert "<del>" not in html  # the caveat was only added
    assert html.count('<td class="small" data-label="Model">offline model</td>') == 3
    # The draft call's tokens: the public context (its title, its facts' units and the approved actions).
    assert "273 + 87" in html
    assert explain("success") in html


def test_stopped_run_page_explains_the_stop_and_links_its_escalation(login, demo_runs):
    run = demo_run(stop_reason="patch_violation:length_increase_limit")

    html = login("lead").get(run_url(run)).content.decode()

    assert "patch_violation:length_increase_limit" in html
    assert explain("patch_violation:length_increase_limit") in html
    # The wallet incident's updates may grow 10% at most on revision; the caveat grows it more.
    assert re.search(r"The revision grew the text by 1\d\.\d%; the limit is 10%\.", html)
    assert "Blocked candidate" in html
    assert reverse("escalation", args=[run.escalation.pk]) in html
    assert "attempts used: <b>1</b>" in html and "fallback used: <b>no</b>" in html
    assert "Required changes" in html and "severity: <b>medium</b>" in html
    assert "Retry" not in html  # an escalated run is decided by a person, not retried


def test_diff_is_side_by_side_with_a_link_that_works_without_javascript(login, demo_runs):
    run = demo_run(pipeline="self_critique", outcome="revised_once")
    client = login("ops")

    inline = client.get(run_url(run)).content.decode()
    side = client.get(run_url(run) + "?diff=side").content.decode()

    assert f'href="{run_url(run)}?diff=side"' in inline
    assert 'class="side-by-side diff"' in side
    assert "<h3>Before</h3>" in side and "<ins>This estimate may change as we learn more.</ins>" in side


def test_diff_switch_over_htmx_returns_only_the_diff(login, demo_runs):
    run = demo_run(pipeline="self_critique", outcome="revised_once")

    response = login("ops").get(run_url(run) + "?diff=side", HTTP_HX_REQUEST="true", HTTP_HX_TARGET="run-diff")

    html = response.content.decode()
    assert html.lstrip().startswith('<section class="card" id="run-diff">')
    assert "<html" not in html
    assert "HX-Request" in response["Vary"]


def test_routing_run_shows_the_selected_route_and_each_delegation(login, demo_runs):
    done = demo_run(pipeline="routing", stop_reason="success")
    failed = failed_demo_run()
    client = login("ops")

    done_html = client.get(run_url(done)).content.decode()
    failed_html = client.get(run_url(failed)).content.decode()
    rerouted = failed.steps.filter(phase="delegate", measurements__observation_status="needs_reroute").count()

    assert "Routing: <code>billing_specialist</code>" in done_html
    assert "refund_amount" in done_html and "<code>done</code>" in done_html
    assert rerouted >= 2
    assert failed_html.count("<code>needs_reroute</code>") == rerouted
    assert failed.stop_reason in failed_html and explain(failed.stop_reason) in failed_html


def test_outsider_cannot_read_runs(login, demo_runs):
    client = login("outsider")
    run = demo_run()

    for url in (run_url(run), reverse("runs"), reverse("failed_runs")):
        response = client.get(url)
        assert response.status_code == 403
        assert "Your role cannot see runs." in response.content.decode()


def test_anonymous_user_is_sent_to_login(client, demo_runs):
    response = client.get(run_url(demo_run()))

    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


# Live trace ------------------------------------------------------------------------------------

def in_flight_run(status="running", steps=1) -> Run:
    run = make_run(status=status, phase="draft")
    for index in range(1, steps + 1):
        TraceStep.objects.create(run=run, index=index, phase="draft", measurements={"draft_chars": 10})
    return run


def test_in_flight_run_page_polls_its_trace_and_a_finished_one_does_not(login, demo_runs):
    client = login("ops")
    running = in_flight_run()
    queued = in_flight_run(status="queued", steps=0)

    assert POLLING in client.get(run_url(running)).content.decode()
    # the in-flight line asks for the steps after the last one shown, of the delivery shown
    page = client.get(run_url(running)).content.decode()
    assert f'hx-get="{trace_url(running)}?after=1&amp;call=0&amp;delivery=0"' in page
    assert POLLING in client.get(run_url(queued)).content.decode()
    assert f'hx-get="{trace_url(queued)}"' in client.get(run_url(queued)).content.decode()  # no steps: all
    for finished in Run.objects.exclude(status__in=Run.IN_FLIGHT):
        assert POLLING not in client.get(run_url(finished)).content.decode()


def test_trace_of_a_running_run_answers_200_with_the_polling_trigger(login, db):
    run = in_flight_run()

    response = login("ops").get(trace_url(run), HTTP_HX_REQUEST="true")

    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<div id="run-trace">')  # no ?after: the whole trace replaces #run-trace
    assert response["HX-Retarget"] == "#run-trace" and response["HX-Reswap"] == "outerHTML"
    assert POLLING in html
    assert "HX-Request" in response["Vary"]


def test_trace_of_a_finished_run_answers_286_without_trigger_and_refreshes_the_header(login, demo_runs):
    run = demo_run(stop_reason="policy_escalation")

    response = login("ops").get(trace_url(run), HTTP_HX_REQUEST="true")

    html = response.content.decode()
    assert response.status_code == 286  # htmx stops polling and swaps in this final fragment
    assert "hx-trigger" not in html
    assert 'id="run-trace"' in html
    assert 'id="run-header" hx-swap-oob="true"' in html
    assert "policy_escalation" in html and explain("policy_escalation") in html
    assert 'id="run-outcome" hx-swap-oob="true"' in html


def test_trace_without_htmx_redirects_to_the_run_page(login, demo_runs):
    run = demo_run()

    response = login("ops").get(trace_url(run))

    assert response.status_code == 302 and response["Location"] == run_url(run)


def test_trace_keeps_the_chosen_diff_view(login, db):
    run = in_flight_run()

    client = login("ops")
    html = client.get(run_url(run) + "?diff=side").content.decode()
    poll = client.get(trace_url(run) + "?diff=side&after=1&call=0&delivery=0", HTTP_HX_REQUEST="true")
    poll = poll.content.decode()
    waiting = in_flight_run(steps=0)
    first = client.get(run_url(waiting) + "?diff=side").content.decode()

    assert f'hx-get="{trace_url(run)}?diff=side&amp;after=1&amp;call=0&amp;delivery=0"' in html
    assert f'hx-get="{trace_url(run)}?diff=side&amp;after=1&amp;call=0&amp;delivery=0"' in poll
    assert f'hx-get="{trace_url(waiting)}?diff=side"' in first


# Escaping --------------------------------------------------------------------------------------

@pytest.fixture
def hostile_run(demo_data):
    run = make_run(
        "self_critique", goal=f"Goal {SCRIPT}", incident=demo_data["inc_pay_2041"], status="stopped",
        stop_reason="patch_violation:no_new_facts", answer=f"Answer {SCRIPT}", candidate=f"Candidate {IMG}",
        details={"raw": SCRIPT}, model_label=IMG,
        guard={"violations": [{"check": "patch_violation:no_new_facts", "message": f"found {IMG}", "found": SCRIPT}]},
    )
    TraceStep.objects.create(run=run, index=1, phase="draft", output=f"Draft {SCRIPT}",
                             measurements={"note": IMG})
    TraceStep.objects.create(run=run, index=2, phase="critique", decision="revise",
                             output={"reason": IMG, "risks": [{"type": SCRIPT, "note": IMG}]})
    ModelCall.objects.create(run=run, stage="draft", model=SCRIPT, outcome=IMG, error=SCRIPT)
    Review.objects.create(run=run, kind="critique", decision="revise", issues=[{"type": SCRIPT, "note": IMG}],
                          instructions=[f'ADD "{SCRIPT}"'], reason=IMG, severity="medium")
    AuditDiff.objects.create(run=run, before_text=f"Draft {SCRIPT}", after_text=f"Draft {SCRIPT} and {IMG}",
                             changed=True, before_hash="a" * 12, after_hash="b" * 12, before_chars=1, after_chars=2,
                             delta=1, length_increase_pct=1.0, diff_unit="chunks", unified_diff=f"+{IMG}")
    make_escalation(run)
    return run


@pytest.mark.parametrize("view", ["page", "side", "trace"])
def test_model_text_is_always_escaped(login, hostile_run, view):
    client = login("ops")
    if view == "trace":
        response = client.get(trace_url(hostile_run), HTTP_HX_REQUEST="true")
    else:
        response = client.get(run_url(hostile_run) + ("?diff=side" if view == "side" else ""))

    html = response.content.decode()
    assert SCRIPT not in html
    assert IMG not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<ins>and &lt;img src=x onerror=alert(1)&gt;</ins>" in html


def test_run_lists_escape_model_and_user_text(login, hostile_run):
    hostile_run.status, hostile_run.stop_reason = "stopped", f"llm_empty{IMG}"
    hostile_run.save()
    Escalation.objects.filter(run=hostile_run).delete()
    client = login("ops")

    for url in (reverse("runs"), reverse("failed_runs"), reverse("incident", args=["inc_pay_2041"]), reverse("home")):
        html = client.get(url).content.decode()
        assert SCRIPT not in html and IMG not in html, url


# The run list ----------------------------------------------------------------------------------

def test_run_list_filters_by_stop_reason_status_pipeline_and_age(login, demo_runs):
    client = login("ops")
    new = make_run("routing", goal="new", status="stopped", stop_reason="llm_timeout")
    old = make_run("routing", goal="old", status="stopped", stop_reason="llm_timeout")
    Run.objects.filter(pk=old.pk).update(created_at=old.created_at - timedelta(days=2))

    by_reason = listed_runs(client.get(reverse("runs") + "?stop_reason=llm_timeout").content.decode())
    recent = listed_runs(client.get(reverse("runs") + "?stop_reason=llm_timeout&since=24h").content.decode())
    routing_ok = listed_runs(client.get(reverse("runs") + "?pipeline=routing&status=ok").content.decode())

    assert by_reason == {new.pk, old.pk}
    assert recent == {new.pk}
    assert routing_ok == set(Run.objects.filter(pipeline="routing", status="ok").values_list("pk", flat=True))


def test_run_list_ignores_a_bad_filter_and_says_so(login, demo_runs):
    html = login("ops").get(reverse("runs") + "?since=forever").content.decode()

    assert "Some filters were ignored" in html
    assert listed_runs(html) == set(Run.objects.values_list("pk", flat=True))


def test_run_list_filters_over_htmx_return_the_list_only(login, demo_runs):
    response = login("ops").get(reverse("runs") + "?status=stopped", HTTP_HX_REQUEST="true",
                                HTTP_HX_TARGET="run-list")

    html = response.content.decode()
    assert html.lstrip().startswith('<div id="run-list">')
    assert listed_runs(html) == set(Run.objects.filter(status="stopped").values_list("pk", flat=True))


# Failed runs and retry -------------------------------------------------------------------------

def test_failed_runs_lists_failed_and_interrupted_runs_but_not_escalated_or_successful_ones(login, demo_runs):
    exhausted = make_run("routing", goal="Hello", status="stopped", stop_reason="max_route_attempts")
    lost = make_run(status="interrupted", stop_reason="worker_lost")
    running = in_flight_run()

    html = login("ops").get(reverse("failed_runs")).content.decode()

    shown = listed_runs(html)
    assert shown == {exhausted.pk, lost.pk, failed_demo_run().pk}
    assert demo_run(stop_reason="policy_escalation").pk not in shown
    assert demo_run(stop_reason="patch_violation:length_increase_limit").pk not in shown
    assert not shown & set(Run.objects.filter(status="ok").values_list("pk", flat=True))
    assert running.pk not in shown
    assert explain("max_route_attempts") in html
    assert html.count(">Retry</button>") == len(shown)
    newest_first = [int(pk) for pk in re.findall(r'href="/runs/(\d+)/">Run', html)]
    assert newest_first[:2] == [lost.pk, exhausted.pk]


def test_lead_sees_failed_runs_without_retry_buttons(login, demo_runs):
    html = login("lead").get(reverse("failed_runs")).content.decode()

    assert failed_demo_run().pk in listed_runs(html)
    assert ">Retry</button>" not in html


def test_retry_starts_a_linked_run_with_the_same_inputs(login, demo_runs, users):
    failed = failed_demo_run()
    client = login("ops")

    response = client.post(reverse("run_retry", args=[failed.pk]))

    retry = Run.objects.get(retry_of=failed)
    assert response.status_code == 302 and response["Location"] == run_url(retry)
    assert (retry.pipeline, retry.goal, retry.incident, retry.context) == (
        failed.pipeline, failed.goal, failed.incident, failed.context)
    assert retry.status == Run.Status.QUEUED and retry.triggered_by == users.ops
    assert run_url(failed) in client.get(run_url(retry)).content.decode()
    assert run_url(retry) in client.get(run_url(failed)).content.decode()


def test_retry_of_an_incident_run_uses_the_incident(login, demo_data):
    failed = make_run(incident=demo_data["inc_wallet_77"], context=demo_data["inc_wallet_77"].context(),
                      status="stopped", stop_reason="llm_timeout")

    login("ops").post(reverse("run_retry", args=[failed.pk]), HTTP_HX_REQUEST="true")

    retry = Run.objects.get(retry_of=failed)
    assert retry.incident == failed.incident and retry.context == failed.context


def test_double_click_on_retry_starts_one_retry(login, demo_runs):
    failed = failed_demo_run()
    client = login("ops")

    first = client.post(reverse("run_retry", args=[failed.pk]))
    second = client.post(reverse("run_retry", args=[failed.pk]))

    assert Run.objects.filter(retry_of=failed).count() == 1
    assert first["Location"] == second["Location"]


def test_htmx_retry_answers_with_hx_redirect(login, demo_runs):
    failed = failed_demo_run()

    response = login("ops").post(reverse("run_retry", args=[failed.pk]), HTTP_HX_REQUEST="true")

    assert response["HX-Redirect"] == run_url(Run.objects.get(retry_of=failed))


def test_escalated_run_is_not_retried(login, demo_runs):
    escalated = demo_run(stop_reason="policy_escalation")

    response = login("ops").post(reverse("run_retry", args=[escalated.pk]), follow=True)

    assert not Run.objects.filter(retry_of=escalated).exists()
    assert "Only failed or interrupted runs can be retried" in response.content.decode()


@pytest.mark.parametrize("name", ["lead", "outsider"])
def test_users_without_start_permission_cannot_retry(login, demo_runs, name):
    failed = failed_demo_run()

    response = login(name).post(reverse("run_retry", args=[failed.pk]))

    assert response.status_code == 403
    assert "Only ops staff can start runs." in response.content.decode()
    assert not Run.objects.filter(retry_of=failed).exists()


def test_retry_needs_post(login, demo_runs):
    assert login("ops").get(reverse("run_retry", args=[failed_demo_run().pk])).status_code == 405


# Query counts ----------------------------------------------------------------------------------

def make_failed_runs(count, incident=None):
    Run.objects.bulk_create([Run(pipeline="routing", goal=f"ticket {i}", incident=incident, status="stopped",
                                 stop_reason="max_route_attempts") for i in range(count)])
    first = Run.objects.order_by("id").first()
    Run.objects.bulk_create([Run(pipeline="routing", goal="retry", status="queued", retry_of=first)
                             for _ in range(3)])


@pytest.mark.parametrize("rows", [5, 50])
def test_run_list_query_count_does_not_grow_with_rows(login, demo_data, django_assert_max_num_queries, rows):
    make_failed_runs(rows, incident=demo_data["inc_pay_2041"])
    client = login("ops")

    # page, count, rows, stop reasons, brake banner, the ready-to-publish and held counts
    with django_assert_max_num_queries(10):
        assert client.get(reverse("runs") + "?stop_reason=max_route_attempts&since=24h").status_code == 200


@pytest.mark.parametrize("rows", [5, 50])
def test_failed_runs_query_count_does_not_grow_with_rows(login, demo_data, django_assert_max_num_queries, rows):
    make_failed_runs(rows, incident=demo_data["inc_pay_2041"])
    client = login("ops")

    # the count, the page's ids, those runs, their retry counts, 4, the banner, the active policies (Retry),
    # the ready-to-publish and held counts
    with django_assert_max_num_queries(12):
        html = client.get(reverse("failed_runs")).content.decode()
    assert len(listed_runs(html)) == rows


@pytest.mark.parametrize("steps", [5, 50])
def test_run_page_query_count_does_not_grow_with_the_trace(login, demo_data, django_assert_max_num_queries, steps):
    run = make_run("routing", goal="ticket", status="stopped", stop_reason="max_route_attempts",
                   incident=demo_data["inc_pay_2041"])
    TraceStep.objects.bulk_create([
        TraceStep(run=run, index=i, phase="delegate" if i % 2 else "route",
                  measurements={"attempt": i, "target": "billing_specialist", "observation_status": "needs_reroute"},
                  output={"status": "needs_reroute"}) for i in range(1, steps + 1)])
    ModelCall.objects.bulk_create([ModelCall(run=run, stage="route", attempt=i, model="offline model")
                                   for i in range(steps)])
    Run.objects.bulk_create([Run(pipeline="routing", goal="ticket", retry_of=run) for _ in range(steps)])
    client = login("ops")

    with django_assert_max_num_queries(12):  # 8, the brake banner, the active policies (Retry), ready and held
        assert client.get(run_url(run)).status_code == 200
    with django_assert_max_num_queries(9):  # and the active policies (Retry)
        assert client.get(trace_url(run), HTTP_HX_REQUEST="true").status_code == 286


def test_run_list_filters_are_dropdowns_of_the_reasons_runs_stopped_with(login, demo_runs):
    """Like the inbox: the stop reason is picked from the reasons runs stopped with, not typed; a reason
    from a link (the dashboard's chart) that no run has is kept as the chosen option."""
    reasons = set(Run.objects.exclude(stop_reason="").values_list("stop_reason", flat=True))
    html = login("ops").get(reverse("runs") + "?stop_reason=llm_timeout").content.decode()

    select = html.split('<select name="stop_reason"', 1)[1].split("</select>", 1)[0]
    offered = re.findall(r'<option value="([^"]*)"', select)
    assert offered == ["", *sorted(reasons - {"llm_timeout"}), "llm_timeout"]
    assert '<option value="llm_timeout" selected>' in select
    assert 'hx-trigger="change, submit"' in html
    for name in ("status", "pipeline", "since"):
        assert f'<select name="{name}"' in html


def test_an_in_flight_run_shows_its_phase_and_usage_from_its_stored_steps_and_calls(login, demo_runs):
    """The observer does not update the run row while it runs: the page reads its steps and calls."""
    run = make_run("reflection", status="running")
    TraceStep.objects.create(run=run, index=1, phase="draft", output="A draft.")
    TraceStep.objects.create(run=run, index=2, phase="review", output={"decision": "revise"})
    for stage in ("draft", "review"):
        ModelCall.objects.create(run=run, stage=stage, model="m", latency_ms=5, prompt_tokens=100, completion_tokens=7)
    html = login("ops").get(run_url(run)).content.decode()
    assert "<dt>Phase</dt><dd>review</dd>" in html
    assert "2 model calls" in html and "200 prompt + 14 completion tokens" in html


def test_the_failed_filter_in_sql_agrees_with_run_failed_for_every_catalogued_reason(db):
    """Run.objects.failed() spells opens_escalation's rule in SQL: both agree on every reason."""
    from agents.core.stops import STOP_REASONS

    reasons = [r.split("<", 1)[0] + ("x" if "<" in r else "") for r in STOP_REASONS] + ["invalid_answer:other"]
    runs = [make_run(status=status, stop_reason=reason) for reason in reasons for status in ("stopped", "ok")]
    runs.append(make_run(status="interrupted", stop_reason="worker_lost"))
    assert set(Run.objects.failed().values_list("pk", flat=True)) == {r.pk for r in runs if r.failed}
    assert any(r.failed for r in runs) and any(not r.failed and r.status == "stopped" for r in runs)


@pytest.mark.parametrize(("reason", "says"), [
    ("route_denied:billing", "switched the route target “billing” off for execution"),
    ("llm_auth_failed", "an operator fixes the API key"),
    ("max_tokens", "retry after a policy admin raises it"),
])
def test_a_stop_a_setting_caused_offers_no_retry_and_says_what_must_change(login, demo_runs, reason, says):
    stuck = make_run("routing", goal="refund user_id=42", status="stopped", stop_reason=reason)
    client = login("ops")

    run_page = client.get(run_url(stuck)).content.decode()
    failed_list = client.get(reverse("failed_runs")).content.decode()
    retried = client.post(reverse("run_retry", args=[stuck.pk]), follow=True).content.decode()

    assert "Retry with the same inputs" not in run_page and says in run_page
    assert f'aria-label="Retry run {stuck.pk}"' not in failed_list and says in failed_list
    assert "Not retried: " in retried and says in retried
    assert not Run.objects.filter(retry_of=stuck).exists()


def test_a_run_of_a_pipeline_without_an_active_policy_offers_no_retry(login, demo_runs):
    from agents.models import PipelinePolicy

    stuck = make_run("routing", goal="refund user_id=42", status="stopped", stop_reason="llm_timeout")
    PipelinePolicy.objects.filter(pipeline="routing").update(active=False)
    client = login("ops")

    assert "has no active policy now" in client.get(run_url(stuck)).content.decode()
    assert "Not retried: " in client.post(reverse("run_retry", args=[stuck.pk]), follow=True).content.decode()
    assert not Run.objects.filter(retry_of=stuck).exists()


def test_a_stop_a_retry_may_get_past_still_offers_retry(login, demo_runs):
    timed_out = make_run("routing", goal="refund user_id=42", status="stopped", stop_reason="llm_timeout")
    page = login("ops").get(run_url(timed_out)).content.decode()
    assert "Retry with the same inputs" in page and "No retry:" not in page

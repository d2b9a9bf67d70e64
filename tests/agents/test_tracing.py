"""The shapes of a run's trace, with the SDK's in-memory exporter: the run under the span that started
it, a span per stage, a GenAI ``chat`` span per model request, a lead's decision as an evaluation;
no prompt text unless the operator asks; and nothing at all without an endpoint."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from agents import tracing
from agents.models import Run
from agents.tasks import retry_run, run_now, start_run
from agents.testing.scripted_demo import APPROVE, DRAFT, ESCALATE
from agents.testing.scripted_server import status, tool_call
from reviewer.desk.decisions import decide, request_changes
from tests.agents.test_redaction import model_env  # noqa: F401 (a fixture)

ROOT = __import__("pathlib").Path(__file__).parents[2]
GOAL = "Write the customer update for the payments incident."


@pytest.fixture
def spans():
    """Tracing on in this process, into an in-memory exporter; off again afterwards."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing.use_provider(provider)
    yield exporter
    tracing.use_provider(None)


@pytest.fixture
def scripted_env(model_env, fake_openai):  # noqa: F811
    model_env.setenv("OPENAI_API_KEY", "sk-tracing-test-key")
    model_env.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    model_env.setenv("OPENAI_MODEL", "test-model")
    return model_env


def traced_run(incident, **options) -> Run:
    """A run started inside a span (as a web request starts one), executed here."""
    with tracing.tracer().start_as_current_span("POST /incidents/x/run", kind=SpanKind.SERVER):
        run, _ = start_run(pipeline="reflection", goal=GOAL, incident=incident, enqueue=False, **options)
    run_now(run.pk)
    return Run.objects.get(pk=run.pk)


def ids(traceparent: str) -> tuple[str, str]:
    """The trace id and span id of a W3C traceparent (the flags vary)."""
    version, trace_id, span_id, flags = traceparent.split("-")
    return trace_id, span_id


def ids_of(span) -> tuple[str, str]:
    return f"{span.context.trace_id:032x}", f"{span.context.span_id:016x}"


def by_name(exported) -> dict[str, list]:
    found: dict[str, list] = {}
    for span in exported:
        found.setdefault(span.name, []).append(span)
    return found


@pytest.mark.django_db
def test_a_run_is_a_span_under_its_request_with_a_span_per_stage_and_a_chat_span_per_model_call(
        spans, scripted_env, fake_openai, demo_data):
    fake_openai.script(tool_call("submit_draft", {"draft": DRAFT}, usage=(321, 45)),
                       tool_call("reflect", APPROVE, usage=(400, 60)))

    run = traced_run(demo_data["inc_pay_2041"])

    exported = spans.get_finished_spans()
    named = by_name(exported)
    [request], [root] = named["POST /incidents/x/run"], named["invoke_agent reflection"]
    assert len({s.context.trace_id for s in exported}) == 1
    assert root.parent.span_id == request.context.span_id
    assert ids(run.trace_parent) == ids_of(request) and ids(run.trace_span) == ids_of(root)
    assert root.attributes["gated_review.run.id"] == run.pk
    assert root.attributes["gated_review.pipeline"] == "reflection"
    assert root.attributes["gated_review.incident.id"] == "inc_pay_2041"
    assert root.attributes["gated_review.run.stop_reason"] == "success" == run.stop_reason

    stages = sorted((s for s in exported if s.name.startswith("stage ")), key=lambda s: s.start_time)
    assert [s.name for s in stages] == ["stage draft", "stage review", "stage finalize"]
    assert all(s.parent.span_id == root.context.span_id for s in stages)
    assert stages[1].attributes["gated_review.step.decision"] == "approve"

    draft_call, review_call = sorted(named["chat test-model"], key=lambda s: s.start_time)
    assert draft_call.parent.span_id == stages[0].context.span_id
    assert review_call.parent.span_id == stages[1].context.span_id
    assert draft_call.kind == SpanKind.CLIENT
    assert stages[0].start_time <= draft_call.start_time <= draft_call.end_time <= stages[0].end_time
    assert dict(draft_call.attributes) == {
        "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.system": "openai",
        "gen_ai.request.model": "test-model", "gen_ai.response.model": "test-model",
        "gen_ai.usage.input_tokens": 321, "gen_ai.usage.output_tokens": 45,
        "gen_ai.response.finish_reasons": ("tool_calls",),
        "gated_review.stage": "draft", "gated_review.stage.attempt": 1, "gated_review.try_number": 1,
    }
    assert review_call.attributes["gen_ai.usage.input_tokens"] == 400


@pytest.mark.django_db
def test_no_prompt_or_answer_text_is_exported_by_default(spans, scripted_env, fake_openai, demo_data):
    fake_openai.script(tool_call("submit_draft", {"draft": DRAFT}), tool_call("reflect", APPROVE))

    traced_run(demo_data["inc_pay_2041"])

    exported = json.dumps([json.loads(s.to_json()) for s in spans.get_finished_spans()])
    assert "chat test-model" in exported  # the calls are there...
    assert GOAL not in exported and DRAFT[:40] not in exported  # ...without what was asked and answered
    assert "gen_ai.input.messages" not in exported and "gen_ai.output.messages" not in exported


@pytest.mark.django_db
def test_prompts_and_answers_are_exported_when_the_operator_turns_capture_on(spans, scripted_env, fake_openai,
                                                                             demo_data):
    scripted_env.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    fake_openai.script(tool_call("submit_draft", {"draft": DRAFT}), tool_call("reflect", APPROVE))

    traced_run(demo_data["inc_pay_2041"])

    draft_call = min(by_name(spans.get_finished_spans())["chat test-model"], key=lambda s: s.start_time)
    sent = json.loads(draft_call.attributes["gen_ai.input.messages"])
    answered = json.loads(draft_call.attributes["gen_ai.output.messages"])
    assert [m["role"] for m in sent] == ["system", "user"] and GOAL in sent[1]["parts"][0]["content"]
    assert json.loads(answered[0]["parts"][0]["content"]) == {"draft": DRAFT}
    assert answered[0]["finish_reason"] == "tool_calls"


def test_a_capture_value_that_is_neither_on_nor_off_is_refused():
    with pytest.raises(ValueError, match="OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT must be true or false"):
        tracing.capture_content({"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "maybe"})


@pytest.mark.django_db
def test_a_failed_request_and_its_retry_are_two_chat_spans_the_failed_one_an_error(
        spans, scripted_env, fake_openai, demo_data):
    scripted_env.setenv("OPENAI_MAX_RETRIES", "1")
    fake_openai.script(status(500, headers={"Retry-After": "0"}), tool_call("submit_draft", {"draft": DRAFT}),
                       tool_call("reflect", APPROVE))

    traced_run(demo_data["inc_pay_2041"])

    named = by_name(spans.get_finished_spans())
    [draft_stage] = named["stage draft"]
    failed, retried, _review = sorted(named["chat test-model"], key=lambda s: s.start_time)
    assert failed.parent.span_id == retried.parent.span_id == draft_stage.context.span_id
    assert failed.status.status_code == StatusCode.ERROR and failed.attributes["error.type"] == "llm_unavailable"
    assert (failed.attributes["gated_review.try_number"], retried.attributes["gated_review.try_number"]) == (1, 2)
    assert failed.end_time <= retried.start_time  # laid end to end
    assert "error.type" not in retried.attributes and retried.status.status_code == StatusCode.UNSET


@pytest.mark.django_db
def test_a_stopped_run_records_its_stop_reason_on_its_span(spans, scripted_env, fake_openai, demo_data):
    fake_openai.script(tool_call("submit_draft", {"draft": DRAFT}), tool_call("reflect", ESCALATE))

    run = traced_run(demo_data["inc_pay_2041"])

    [root] = by_name(spans.get_finished_spans())["invoke_agent reflection"]
    assert run.stop_reason == "policy_escalation"
    assert root.attributes["gated_review.run.stop_reason"] == "policy_escalation"
    assert root.attributes["gated_review.run.status"] == "stopped"


@pytest.mark.django_db
@pytest.mark.parametrize(("action", "label"), [("approve", "approved"), ("edit_approve", "edited"),
                                               ("reject", "rejected")])
def test_a_leads_decision_is_an_evaluation_event_under_the_runs_span(
        action, label, spans, scripted_env, fake_openai, demo_data, users, django_capture_on_commit_callbacks):
    fake_openai.script(tool_call("submit_draft", {"draft": DRAFT}), tool_call("reflect", ESCALATE))
    run = traced_run(demo_data["inc_pay_2041"])
    text = DRAFT.replace("We are", "We're") if action == "edit_approve" else ""

    with django_capture_on_commit_callbacks(execute=True):
        outcome = decide(run.escalation.pk, users.lead, action, text=text, note="Checked with legal.")

    assert outcome.won
    named = by_name(spans.get_finished_spans())
    [root], [review] = named["invoke_agent reflection"], named["human_review"]
    assert review.context.trace_id == root.context.trace_id and review.parent.span_id == root.context.span_id
    [event] = review.events
    assert event.name == "gen_ai.evaluation.result"
    assert dict(event.attributes) == {"gen_ai.evaluation.name": "human_review", "gen_ai.evaluation.score.label": label}
    assert review.attributes["gated_review.escalation.id"] == run.escalation.pk


@pytest.mark.django_db
def test_a_request_for_changes_is_an_evaluation_too(spans, scripted_env, fake_openai, demo_data, users,
                                                    django_capture_on_commit_callbacks):
    fake_openai.script(tool_call("submit_draft", {"draft": DRAFT}), tool_call("reflect", ESCALATE))
    run = traced_run(demo_data["inc_pay_2041"])

    with django_capture_on_commit_callbacks() as committed:
        request_changes(run.escalation.pk, users.lead, "Drop the refund sentence.", enqueue=False)
    assert "human_review" not in by_name(spans.get_finished_spans())  # not before the commit
    for callback in committed:
        callback()

    [review] = by_name(spans.get_finished_spans())["human_review"]
    assert review.events[0].attributes["gen_ai.evaluation.score.label"] == "changes_requested"


@pytest.mark.django_db
def test_a_request_is_a_server_span_that_continues_the_callers_trace(spans, client, users):
    client.force_login(users.ops)
    caller = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"

    response = client.get("/runs/", HTTP_TRACEPARENT=caller)

    assert response.status_code == 200
    [span] = [s for s in spans.get_finished_spans() if s.kind == SpanKind.SERVER]
    assert span.name == "GET /runs/" and span.attributes["http.route"] == "/runs/"
    assert span.attributes["http.response.status_code"] == 200
    assert span.attributes["gated_review.request_id"] == response["X-Request-ID"]
    assert f"{span.context.trace_id:032x}" == "0af7651916cd43dd8448eb211c80319c"
    assert f"{span.parent.span_id:016x}" == "b7ad6b7169203331"


@pytest.mark.django_db
def test_a_method_a_client_made_up_does_not_name_the_span(spans, client):
    client.generic("BREW", "/runs/")

    [span] = [s for s in spans.get_finished_spans() if s.kind == SpanKind.SERVER]
    assert span.name == "HTTP" and span.attributes["http.request.method"] == "_OTHER"


@pytest.mark.django_db
def test_a_run_started_from_the_incident_page_stores_the_requests_span_as_its_parent(spans, login, demo_data):
    response = login("ops").post("/incidents/inc_pay_2041/runs/", {
        "pipeline": "reflection", "goal": GOAL, "idempotency_key": "6f1c2a64-0d7e-4d59-9a57-3a1f0f5b6a11"})

    assert response.status_code == 302
    [request] = [s for s in spans.get_finished_spans() if s.kind == SpanKind.SERVER]
    assert request.name == "POST /incidents/<slug:incident_id>/runs/"
    assert ids(Run.objects.get().trace_parent) == ids_of(request)


@pytest.mark.django_db
def test_an_automatic_retry_joins_the_trace_of_the_run_it_retries_and_a_persons_retry_starts_its_own(
        spans, demo_data, users):
    with tracing.tracer().start_as_current_span("POST /incidents/x/run"):
        lost, _ = start_run(pipeline="reflection", goal=GOAL, incident=demo_data["inc_pay_2041"], enqueue=False)

    automatic = retry_run(lost, user=None)  # the sweep's: in no request
    with tracing.tracer().start_as_current_span("POST /runs/x/retry/") as retrying:
        by_hand = retry_run(lost, user=users.ops)

    assert lost.trace_parent and automatic.trace_parent == lost.trace_parent
    assert ids(by_hand.trace_parent) == ids_of(retrying)


@pytest.mark.django_db
def test_with_tracing_off_a_run_records_no_trace_context(scripted_env, fake_openai, demo_data, client, users):
    fake_openai.script(tool_call("submit_draft", {"draft": DRAFT}), tool_call("reflect", APPROVE))
    assert not tracing.enabled()

    run = traced_run(demo_data["inc_pay_2041"])

    assert run.stop_reason == "success" and (run.trace_parent, run.trace_span) == ("", "")


PROBE = """
import json, os, sys, threading
import django
django.setup()
import agents.tasks, reviewer.celery, reviewer.middleware
from agents import tracing
on = tracing.configure()
print(json.dumps({"on": on, "sdk": sorted(m for m in sys.modules if m.startswith("opentelemetry.sdk"))[:1],
                  "threads": sorted(t.name for t in threading.enumerate()),
                  "tracer": type(tracing.tracer()).__name__}))
"""


def probe(**env) -> dict:
    environ = {k: v for k, v in __import__("os").environ.items() if not k.startswith("OTEL_")}
    environ.update(DJANGO_SETTINGS_MODULE="reviewer.test_settings", **env)
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=environ, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_without_an_endpoint_no_sdk_is_loaded_and_no_exporter_thread_runs():
    off = probe()
    assert off == {"on": False, "sdk": [], "threads": ["MainThread"], "tracer": "NoOpTracer"}
    # The same probe sees them when an endpoint is configured (nothing listens there; nothing is sent).
    on = probe(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9", OTEL_BSP_SCHEDULE_DELAY="60000")
    assert on["on"] and on["sdk"] and on["tracer"] == "Tracer" and len(on["threads"]) == 2

"""The effective model settings of a run: the policy row's, the environment winning, computed once in
``agents.core.llm.client.effective_policy``; the prompts and the client both use them, and the run
records them. Driven through ``start_run`` + ``run_now`` against the scripted server, which refuses what
OpenAI refuses (a ``json_object`` request whose messages never say "json")."""

from __future__ import annotations

import json

import pytest

from agents.models import ModelCall, PipelinePolicy, Run
from agents.tasks import run_now, start_run
from agents.testing.scripted_demo import APPROVE, DEMO_CONTEXT, DRAFT, GOAL
from agents.testing.scripted_server import Reply, ScriptedServer, completion, content

pytestmark = pytest.mark.django_db

JSON_NOTE = "Answer with one JSON object with the fields:"


@pytest.fixture
def server():
    with ScriptedServer() as fake:
        yield fake


@pytest.fixture
def local_env(clean_model_env, server):
    clean_model_env.setenv("LLM_BACKEND", "openai")
    clean_model_env.setenv("OPENAI_BASE_URL", server.base_url)
    clean_model_env.setenv("OPENAI_MAX_RETRIES", "0")
    clean_model_env.setenv("OPENAI_TIMEOUT_SECONDS", "5")
    return clean_model_env


def test_json_mode_set_in_the_environment_only_puts_the_json_note_in_every_structured_request(local_env, server):
    assert PipelinePolicy.objects.get(pipeline="reflection", active=True).structured_output == "tools"
    local_env.setenv("OPENAI_STRUCTURED_OUTPUT", "json")
    server.script(content(json.dumps({"draft": DRAFT})), content(json.dumps(APPROVE)))

    run, _ = start_run(pipeline="reflection", goal=GOAL, context=DEMO_CONTEXT, enqueue=False)
    result = run_now(run.pk)

    structured = [r for r in server.requests if "response_format" in r]
    assert len(structured) == len(server.requests) == 2
    for request in structured:
        assert request["response_format"] == {"type": "json_object"} and "tools" not in request
        assert JSON_NOTE in request["messages"][0]["content"]
    assert (result.status, result.stop_reason) == ("ok", "success")
    run.refresh_from_db()
    assert run.details["model_settings"]["structured_output"] == "json"
    assert run.details["model_settings"]["endpoint"] == "default"


def test_the_run_records_its_effective_settings_the_environment_winning(local_env, server):
    PipelinePolicy.objects.filter(pipeline="reflection", active=True).update(
        model_name="row-model", structured_output="json", max_completion_tokens=700)
    local_env.setenv("OPENAI_MODEL", "env-model")
    local_env.setenv("OPENAI_ENDPOINT_OPTIONS", "tool_choice=required")
    server.script(content(json.dumps({"draft": DRAFT})), content(json.dumps(APPROVE)))

    run, _ = start_run(pipeline="reflection", goal=GOAL, context=DEMO_CONTEXT, enqueue=False)
    run_now(run.pk)

    run.refresh_from_db()
    assert run.details["model_settings"] == {
        "model": "env-model", "structured_output": "json", "timeout_seconds": 5.0, "max_retries": 0,
        "max_completion_tokens": 700, "endpoint": "default", "tool_choice": "required",
        "limit_param": "max_completion_tokens", "instructions_in_user": False,
        "concurrency": None, "min_call_seconds": 0,
    }
    draft, review = server.requests
    assert draft["model"] == review["model"] == "env-model"
    # the draft's limit comes from max_draft_chars (900 characters / 2 + 64); the review's is the row's ceiling
    assert (draft["max_completion_tokens"], review["max_completion_tokens"]) == (514, 700)


def test_finish_reason_length_ends_the_run_as_llm_truncated(local_env, server):
    function = {"name": "submit_draft", "arguments": '{"draft": "We are inv'}
    call = {"id": "call_1", "type": "function", "function": function}
    cut = completion({"role": "assistant", "content": None, "tool_calls": [call]}, "length", (400, 514))
    server.script(Reply(body=cut))

    run, _ = start_run(pipeline="reflection", goal=GOAL, context=DEMO_CONTEXT, enqueue=False)
    result = run_now(run.pk)

    assert (result.stop_reason, result.phase) == ("llm_truncated", "draft")
    [call] = ModelCall.objects.filter(run=run)
    assert (call.outcome, call.completion_tokens, call.raw) == ("llm_truncated", 514, '{"draft": "We are inv')
    assert Run.objects.get(pk=run.pk).stop_reason == "llm_truncated"


def test_a_structured_stage_answered_without_the_tool_call_says_so_on_the_call_and_in_the_trace(local_env, server):
    server.script(content(json.dumps({"draft": DRAFT})), content(json.dumps(APPROVE)))

    run, _ = start_run(pipeline="reflection", goal=GOAL, context=DEMO_CONTEXT, enqueue=False)
    result = run_now(run.pk)

    assert result.stop_reason == "success"
    notes = list(ModelCall.objects.filter(run=run).values_list("note", flat=True))
    assert len(notes) == 2 and all(n.startswith("no tool call (finish_reason: stop); the answer in the message "
                                                "content was accepted") for n in notes)
    assert [step.get("model_notes") for step in result.trace[:2]] == [[notes[0]], [notes[1]]]
    assert run.steps.get(phase="draft").measurements["model_notes"] == [notes[0]]


def test_tool_arguments_with_raw_newlines_inside_strings_are_accepted(local_env, server):
    # llama-cpp-python's grammar writes a line break inside a JSON string as a raw newline.
    from agents.testing.scripted_server import tool_call

    raw_draft = '{"draft": "' + DRAFT.replace(". ", ".\n", 1) + '"}'
    server.script(tool_call("submit_draft", raw_draft), tool_call("reflect", APPROVE))
    run, _ = start_run(pipeline="reflection", goal=GOAL, context=DEMO_CONTEXT, enqueue=False)
    assert run_now(run.pk).stop_reason == "success"

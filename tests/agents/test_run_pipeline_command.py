"""`manage.py run_pipeline`, run as a user would, each command line with its own environment, its own
standard output and error, and its exit status.

The command lines run one after the other in one Python process of their own (``COMMANDS``), as
``manage.py`` runs them: Python and Django started once for the module, not once a command (about
two seconds each, a minute and a half of the test run on a loaded machine). The environment is the
test's for each command (the command reads OPENAI_* and LLM_BACKEND when it runs), and the
process's descriptors 1 and 2 are files for each command, so whatever it or its logging writes is
in ``stdout`` and ``stderr``."""

import json
import os
import select
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from agents.testing.scripted_demo import APPROVE, DRAFT
from agents.testing.scripted_server import tool_call

ROOT = Path(__file__).parents[2]
CONTEXT = str(ROOT / "agents" / "fixtures" / "demo_context.json")
TIMEOUT_SECONDS = 60

COMMANDS = r"""
import json, os, sys, traceback
from django.core.management import ManagementUtility

requests, answers = os.fdopen(int(sys.argv[1])), os.fdopen(int(sys.argv[2]), "w")
for line in requests:
    request = json.loads(line)
    os.environ.clear()
    os.environ.update(request["env"])
    saved = os.dup(1), os.dup(2)
    with open(request["stdout"], "wb") as out, open(request["stderr"], "wb") as err:
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        code = 0
        try:
            ManagementUtility(["manage.py", "run_pipeline", *request["args"]]).execute()
        except SystemExit as exit:
            code = exit.code if isinstance(exit.code, int) else int(exit.code is not None)
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
    answers.write(json.dumps(code) + "\n")
    answers.flush()
"""


@pytest.fixture(scope="module")
def commands():
    """The process that runs the command lines; killed at the end of the module (or of a command
    that does not end within TIMEOUT_SECONDS)."""
    requests_read, requests_write = os.pipe()
    answers_read, answers_write = os.pipe()
    process = subprocess.Popen([sys.executable, "-c", COMMANDS, str(requests_read), str(answers_write)], cwd=ROOT,
                               pass_fds=(requests_read, answers_write), stdin=subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(requests_read)
    os.close(answers_write)
    with os.fdopen(requests_write, "w") as requests, os.fdopen(answers_read) as answers:
        yield SimpleNamespace(process=process, requests=requests, answers=answers)
    process.kill()
    process.wait()


@pytest.fixture
def manage(commands, tmp_path_factory):
    """``manage(*args, **env)``: ``manage.py run_pipeline ARGS`` with the test process's environment
    less its OPENAI_* and LLM_* variables, plus ``env``; its returncode, stdout and stderr."""
    def run(*args, **env):
        base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LLM_"))}
        folder = tmp_path_factory.mktemp("command")
        out, err = folder / "stdout", folder / "stderr"
        commands.requests.write(json.dumps({"args": args, "env": {**base, **env}, "stdout": str(out),
                                            "stderr": str(err)}) + "\n")
        commands.requests.flush()
        if not select.select([commands.answers], [], [], TIMEOUT_SECONDS)[0]:
            commands.process.kill()
            pytest.fail(f"manage.py run_pipeline {' '.join(args)[:200]} did not end within {TIMEOUT_SECONDS} s")
        code = json.loads(commands.answers.readline())
        return SimpleNamespace(returncode=code, stdout=out.read_text(), stderr=err.read_text())

    return run


@pytest.mark.parametrize("pipeline, goal", [
    ("reflection", "Customer update for the payment incident"),
    ("self_critique", "Customer update for the payment incident"),
])
def test_text_pipelines_succeed_offline_without_a_key(manage, pipeline, goal):
    out = manage(pipeline, "--goal", goal, "--context", CONTEXT)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert (result["status"], result["stop_reason"], result["model"]) == ("ok", "success", "offline model")
    assert {"run_id", "trace", "history", "answer", "outcome"} <= set(result)


def test_routing_needs_no_context(manage):
    out = manage("routing", "--goal", "Refund please, I was charged twice. user_id=42")
    result = json.loads(out.stdout)
    assert (out.returncode, result["stop_reason"], result["selected_route"]) == (0, "success", "billing_specialist")


def test_a_recorded_stop_exits_zero_and_prints_the_phase(manage):
    out = manage("reflection", "--goal", "Promise every customer a refund", "--context", CONTEXT)
    result = json.loads(out.stdout)
    assert (out.returncode, result["stop_reason"], result["phase"]) == (0, "policy_escalation", "review")


def test_openai_base_url_sends_the_run_to_that_server(manage, fake_openai):
    fake_openai.script(tool_call("submit_draft", {"draft": DRAFT}), tool_call("reflect", APPROVE))
    out = manage("reflection", "--goal", "Update", "--context", CONTEXT, OPENAI_API_KEY="sk-test-cmd",
                 OPENAI_BASE_URL=fake_openai.base_url, OPENAI_MODEL="served-model", OPENAI_TIMEOUT_SECONDS="5")
    result = json.loads(out.stdout)
    assert (out.returncode, result["stop_reason"], result["model"]) == (0, "success", "served-model")
    assert [r["model"] for r in fake_openai.requests] == ["served-model", "served-model"]
    assert fake_openai.requests[0].headers["authorization"] == "Bearer sk-test-cmd"
    assert "sk-test-cmd" not in out.stdout + out.stderr


def test_llm_backend_offline_wins_over_a_key(manage, fake_openai):
    out = manage("reflection", "--goal", "Update", "--context", CONTEXT, OPENAI_API_KEY="sk-x",
                 OPENAI_BASE_URL=fake_openai.base_url, LLM_BACKEND="offline")
    assert json.loads(out.stdout)["model"] == "offline model" and fake_openai.requests == []


@pytest.mark.parametrize("args, message", [
    (["reflection", "--goal", "x", "--context", "/nonexistent/ctx.json"], "cannot read context file"),
    (["reflection", "--goal", "x"], "--context is required"),
    (["reflection", "--goal", "  ", "--context", CONTEXT], "--goal must not be blank"),
    (["publish", "--goal", "x"], "invalid choice: 'publish'"),
])
def test_usage_errors_exit_non_zero_with_a_clear_message(manage, args, message):
    out = manage(*args)
    assert out.returncode != 0 and message in out.stderr and out.stdout == ""


@pytest.mark.parametrize("content, message", [
    (b"{not json", "is not valid JSON"),
    (b"[1, 2]", "must hold a JSON object, not list"),
    (b"\xff\xfe\x00bad", "is not UTF-8 text"),
])
def test_bad_context_files_are_usage_errors(manage, tmp_path, content, message):
    path = tmp_path / "ctx.json"
    path.write_bytes(content)
    out = manage("reflection", "--goal", "x", "--context", str(path))
    assert out.returncode == 1 and message in out.stderr


def test_bad_timeout_setting_is_a_usage_error(manage):
    out = manage(
        "reflection", "--goal", "x", "--context", CONTEXT, OPENAI_API_KEY="sk-x", OPENAI_TIMEOUT_SECONDS="soon"
    )
    assert out.returncode == 1 and "OPENAI_TIMEOUT_SECONDS" in out.stderr


def test_a_goal_with_a_control_character_is_a_usage_error(manage):
    out = manage("routing", "--goal", "refund\x1b[31m user_id=42")
    assert out.returncode == 1 and "control character (U+001B)" in out.stderr


def test_a_context_with_a_lone_surrogate_is_a_usage_error(manage, tmp_path):
    path = tmp_path / "ctx.json"
    path.write_text('{"region": "US \\ud800"}')
    out = manage("reflection", "--goal", "x", "--context", str(path))
    assert out.returncode == 1 and "not valid Unicode" in out.stderr


def test_a_context_file_over_the_limit_is_a_usage_error_naming_it(manage, tmp_path):
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


def test_a_context_file_with_a_list_entry_over_its_bound_is_a_usage_error_naming_it(manage, tmp_path):
    context = json.loads(Path(CONTEXT).read_text())
    path = tmp_path / "ctx.json"
    path.write_text(json.dumps({**context, "approved_actions": ["monitor", "y" * 600]}))

    out = manage("reflection", "--goal", "Update", "--context", str(path))

    assert out.returncode == 1 and out.stdout == ""
    assert (f"context file {path}: “approved_actions”: entry 2 has 600 characters; an entry holds at most 500"
            in out.stderr)


def test_an_endless_context_stream_is_refused_without_reading_it_all(manage):
    out = manage("reflection", "--goal", "Update", "--context", "/dev/zero")
    assert out.returncode == 1 and "is larger than 64 KB" in out.stderr


@pytest.mark.parametrize("pipeline, limit", [("reflection", 2000), ("routing", 4000)])
def test_a_goal_over_the_start_form_limit_is_a_usage_error(manage, pipeline, limit):
    out = manage(pipeline, "--goal", "x" * (limit + 1), "--context", CONTEXT)
    assert (
        out.returncode == 1 and f"--goal has {limit + 1} characters; the limit for {pipeline} is {limit}" in out.stderr
    )

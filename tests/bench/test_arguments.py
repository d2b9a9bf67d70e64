"""Every bench script runs with any valid argument and refuses an invalid one with argparse's message.

The benchmarks are run by hand (see README "Performance"); these tests only hold their arguments:
``bench/overhead.py --slow-runs 0`` used to divide by zero after the fast pass.
"""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.services import missing

ROOT = Path(__file__).resolve().parents[2]


def bench(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(ROOT), "LOG_LEVEL": "ERROR"}
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


def test_overhead_with_zero_runs_in_every_pass_finishes():
    done = bench("bench/overhead.py", "--runs", "0", "--slow-runs", "0", "--modes", "a", "--breakdown-runs", "0")
    assert done.returncode == 0, done.stderr
    assert "ZeroDivisionError" not in done.stderr
    assert "machine:" in done.stdout


def test_overhead_with_only_the_slow_pass_prints_its_table():
    done = bench("bench/overhead.py", "--runs", "0", "--slow-runs", "1", "--slow-latency", "0", "--modes", "a")
    assert done.returncode == 0, done.stderr
    assert "Share of wall time" in done.stdout
    assert "Overhead per run at 0 ms" not in done.stdout


INVALID = [
    ["bench/overhead.py", "--runs", "-1"],
    ["bench/overhead.py", "--slow-runs", "many"],
    ["bench/overhead.py", "--slow-latency", "nan"],
    ["bench/overhead.py", "--modes", "d"],
    ["bench/overhead.py", "--worker-concurrency", "0"],
    ["bench/concurrency.py", "--concurrency", "0"],
    ["bench/concurrency.py", "--concurrency", "2xz"],
    ["bench/concurrency.py", "--runs", "0"],
    ["bench/concurrency.py", "--latency", "-1"],
    ["bench/load.py", "--seconds", "0"],
    ["bench/load.py", "--think", "-1"],
    ["bench/model_cost.py", "--modes", ""],
    ["bench/pages.py", "--runs", "-5"],
    ["bench/pages.py", "--requests", "0"],
    ["bench/all.py", "--only", "nothing"],
    ["bench/status_page.py", "--clients", "0"],
    ["bench/status_page.py", "--seconds", "0"],
    ["bench/status_page.py", "--port", "http"],
    ["bench/status_page.py", "--run-every", "-1"],
    ["bench/live_polling.py", "--pages", "0"],
    ["bench/live_polling.py", "--seconds", "0"],
    ["bench/live_polling.py", "--paced-seconds", "-1"],
    ["bench/policy_lab.py", "--runs", "0"],
    ["bench/policy_lab.py", "--repeat", "many"],
    ["bench/metrics.py", "--sizes", "0"],
    ["bench/metrics.py", "--sizes", "1k"],
    ["bench/metrics.py", "--repeat", "0"],
    ["bench/guard_eval.py", "--part", "both"],
    ["bench/guard_eval.py", "--format", "yaml"],
    ["bench/guard_eval.py", "--min-recall", "1.5"],
    ["bench/guard_eval.py", "--min-safe-pass", "high"],
    ["bench/guard_speed.py", "--chars", "10"],
    ["bench/guard_speed.py", "--rounds", "0"],
    ["bench/worker_path.py", "--runs", "0"],
    ["bench/worker_path.py", "--rounds", "three"],
    ["bench/worker_path.py", "--profile", "-1"],
]

# Each script run as `python` would run it with those arguments, all in one interpreter: a new one for
# each of the 36 cases would spend a minute of the test run starting Python and Django.
RUN_EACH = """
import contextlib, io, json, runpy, sys
from pathlib import Path

ends = []
for argv in json.loads(sys.argv[1]):
    sys.argv, sys.path[0] = argv, str(Path(argv[0]).resolve().parent)
    err, code = io.StringIO(), 0
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            runpy.run_path(argv[0], run_name="__main__")
        except SystemExit as exit:
            code = exit.code
        except Exception:
            import traceback

            traceback.print_exc(file=err)
            code = 1
    ends.append((code, err.getvalue()))
print(json.dumps(ends))
"""


@pytest.fixture(scope="module")
def invalid_ends():
    done = bench("-c", RUN_EACH, json.dumps(INVALID), timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    return dict(zip(map(tuple, INVALID), json.loads(done.stdout.splitlines()[-1]), strict=True))


@pytest.mark.parametrize("args", INVALID, ids=lambda args: " ".join(args))
def test_an_invalid_argument_gets_a_message_not_a_traceback(invalid_ends, args):
    code, stderr = invalid_ends[tuple(args)]
    assert code == 2, stderr
    assert "error: argument" in stderr
    assert "Traceback" not in stderr


def test_pages_with_an_empty_store_skips_the_pages_it_has_no_row_for():
    done = bench("bench/pages.py", "--runs", "0", "--small-runs", "0", "--small-pending", "0", "--pending", "0",
                 "--decided", "0", "--incidents", "1", "--versions", "1", "--requests", "1", "--no-try", timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "skipped 'escalation page (oldest pending)'" in done.stdout
    assert "| dashboard" in done.stdout and "| API: runs" in done.stdout


def test_status_page_with_one_client_a_second_prints_its_table():
    done = bench("bench/status_page.py", "--clients", "1", "--seconds", "0.2", "--incidents", "3", "--run-every", "0",
                 timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "| status page" in done.stdout and "| static file (ceiling)" in done.stdout
    assert "machine:" in done.stdout


def test_live_polling_with_two_pages_prints_both_paths():
    done = bench("bench/live_polling.py", "--pages", "2", "--seconds", "1", "--paced-seconds", "1", timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "| 304 (unchanged), closed loop" in done.stdout and "| changed (200), every 3 s" in done.stdout
    assert "machine:" in done.stdout


def test_policy_lab_with_a_few_runs_prints_its_table():
    done = bench("bench/policy_lab.py", "--runs", "3", "--repeat", "1", "--decided", "0", timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "| route switched off (routing)" in done.stdout and "| new claim family (text pipelines)" in done.stdout
    assert "machine:" in done.stdout


def test_metrics_with_a_few_runs_prints_its_tables():
    done = bench("bench/metrics.py", "--sizes", "10", "--repeat", "1", timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "| 10 " in done.stdout and "| runs " in done.stdout and "| model_calls " in done.stdout
    assert "machine:" in done.stdout


def test_worker_path_with_one_run_a_side_prints_a_table_per_pipeline():
    done = bench("bench/worker_path.py", "--runs", "1", "--rounds", "1", "--warmup", "0", timeout=240)
    if done.returncode == 2 and "the reference pipelines are needed" in done.stderr:
        missing(f"bench/worker_path.py needs the reference pipelines: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr[-2000:]
    for pipeline in ("reflection", "self_critique", "routing"):
        assert f"### {pipeline} (" in done.stdout
    assert "outcomes: reference success, 3 calls; product success, 3 calls" in done.stdout
    assert "load average at start" in done.stdout and "machine:" in done.stdout
    # The summary: each pipeline's ratio against its target, and its statements a run within their limit.
    summary = done.stdout.split("### The worker path against the reference (")[1]
    assert "median of 1 rounds, load average " in summary
    for pipeline, limit in (("reflection", 31), ("self_critique", 31), ("routing", 22)):
        line = rf"\| {pipeline} +\| \d\.\d\d +\| (met|MISSED) +\| \d\.\d\d +\| \d+ +\| {limit}: met "
        assert re.search(line, summary), summary


def test_worker_path_without_the_reference_pipelines_says_so_and_exits_2(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(ROOT), "GATED_REVIEW_REFERENCE_DIR": str(tmp_path / "absent")}
    done = subprocess.run([sys.executable, "bench/worker_path.py", "--runs", "1"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "the reference pipelines are needed" in done.stderr and str(tmp_path / "absent") in done.stderr
    assert "Traceback" not in done.stderr

"""Our overhead per run: wall time minus the time spent waiting for the model.

    .venv/bin/python bench/overhead.py                 # 200 runs per pipeline and mode, ~3-4 minutes
    .venv/bin/python bench/overhead.py --runs 50 --modes a,b
    .venv/bin/python bench/overhead.py --candidate     # with bench/candidate_settings.py (10 ms broker polling)

For each pipeline (reflection, self_critique, routing; the revise path, so every stage is used):

  (a) core      run_pipeline with OpenAIChat against the scripted server, a null observer, no database
  (b) database  start_run(enqueue=False) + run_now: the row, the policy snapshot, the observer's
                writes, the result, all in this process
  (c) celery    start_run (enqueued) to a real worker process (threads pool); wall time is from
                submit to the row's finished_at

"Ours" is wall time minus the model wait our client recorded (the sum of the run's CallRecord
latencies, which includes the SDK's own request/response handling and the loopback HTTP round trip).
The scripted model server runs in another process, so its CPU time is not ours. A second, smaller
sample at 1 s per call (runs in flight together, started one by one over one latency, then all at
once) gives the share of wall time that is ours. A third pass times the parts of (b) under Python's
profiler (nothing in the product is patched), to show where its time goes.

(b) and (c) use the product's own settings (``--candidate``: ``bench/candidate_settings.py``);
``DATABASE_URL=postgres://...`` and ``CELERY_BROKER_URL=redis://...`` measure those instead (the
script makes its own database).
"""

from __future__ import annotations

import argparse
import cProfile
import re
import statistics
import sys
import threading
import time
import types
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common
from bench.common import PIPELINES, fmt_ms, median, percentile, print_table

TARGET_WORKER_MS = 25.0  # (c) submit -> finished, wall per run
TARGET_IDLE_CPU = 2.0  # % of one core, an idle (c) worker
TARGET_SHARE = 1.0  # % of wall time at 1 s model latency

MODE_NAMES = {"a": "(a) core", "b": "(b) database", "c": "(c) celery"}
FAILURES: list[str] = []


class WaitObserver:
    """A null observer that only adds up the model wait our client recorded."""

    def __init__(self):
        self.wait_ms = 0.0
        self.calls = 0

    def on_step(self, run_id, entry):
        pass

    def on_model_call(self, run_id, record):
        self.wait_ms += record.latency_ms
        self.calls += 1


# -- one run in each mode: a sample is (wall ms, model wait ms, model calls, ok) --------------------

def core_runner(base_url: str):
    from agents.core.llm.client import OpenAIChat
    from agents.core.llm.endpoints import Endpoint
    from agents.core.pipelines import run_pipeline
    from agents.core.policy import POLICY_CLASSES, ModelSettings

    settings = ModelSettings(model="bench-model")
    llm = OpenAIChat(
        settings, endpoint=Endpoint("bench", base_url)
    )  # one client, as a long-lived process would keep it
    policies = {p: POLICY_CLASSES[p](model=settings) for p in PIPELINES}

    def run(pipeline: str):
        inputs = common.run_inputs(pipeline)
        context = None if pipeline == "routing" else common.demo.DEMO_CONTEXT
        observer = WaitObserver()
        started = time.perf_counter()
        result = run_pipeline(pipeline, goal=inputs["goal"], context=context, policy=policies[pipeline], llm=llm,
                              observer=observer, workers=common.demo.demo_workers(pipeline))
        wall = (time.perf_counter() - started) * 1000
        return wall, observer.wait_ms, observer.calls, result.ok

    return run


def database_runner(demo: dict):
    from django.db import connection

    from agents import tasks
    from agents.models import Run

    def run(pipeline: str):
        inputs = common.run_inputs(pipeline, demo["incidents"])
        started = time.perf_counter()
        try:  # e.g. PostgreSQL "too many clients" when more threads than max_connections run at once
            row, _ = tasks.start_run(pipeline=pipeline, goal=inputs["goal"], incident=inputs["incident"],
                                     user=demo["user"], enqueue=False)
            tasks.run_now(row.pk)
            wall = (time.perf_counter() - started) * 1000
            wait = common.model_wait_ms([row.pk]).get(row.pk, 0.0)
            row = Run.objects.only("status", "model_calls").get(pk=row.pk)
            return wall, wait, row.model_calls, row.status == Run.Status.OK
        except Exception as error:
            FAILURES.append(f"(b) run: {type(error).__name__}: {str(error).splitlines()[-1][:200]}")
            return float("nan"), 0.0, 0, False
        finally:
            if threading.current_thread() is not threading.main_thread():
                connection.close()

    return run


def celery_results(submitted: dict[int, float]) -> dict[int, tuple[float, float, int, bool]]:
    from agents.models import Run

    waits = common.model_wait_ms(list(submitted))
    out = {}
    for row in Run.objects.filter(pk__in=list(submitted)).only("status", "finished_at", "model_calls", "stop_reason"):
        if row.finished_at is None or row.status != Run.Status.OK:
            FAILURES.append(f"(c) run {row.pk}: run left {row.status} {row.stop_reason}".rstrip())
            out[row.pk] = (float("nan"), 0.0, row.model_calls, False)
            continue
        out[row.pk] = ((row.finished_at.timestamp() - submitted[row.pk]) * 1000, waits.get(row.pk, 0.0),
                       row.model_calls, True)
    return out


def celery_runner(demo: dict, worker: common.CeleryWorker):
    def run(pipeline: str):
        pk, submitted = common.submit(pipeline, demo)
        common.wait_finished([pk], timeout=30, worker=worker, every=0.005)
        return celery_results({pk: submitted})[pk]

    return run


# -- measurement loops -----------------------------------------------------------------------------

def sequential(run, runs: int, warmup: int) -> dict[str, list[tuple]]:
    samples = {p: [] for p in PIPELINES}
    for pipeline in PIPELINES:
        for _ in range(warmup):
            run(pipeline)
    for _ in range(runs):  # interleave the pipelines so drift (cache, disk) hits all three alike
        for pipeline in PIPELINES:
            samples[pipeline].append(run(pipeline))
    return samples


def concurrent(run, runs: int, spacing: float) -> dict[str, list[tuple]]:
    """All runs in flight together; run i starts ``i * spacing`` seconds after the first."""
    jobs = [p for _ in range(runs) for p in PIPELINES]
    first = time.monotonic() + 0.05

    def start_at(job):
        index, pipeline = job
        time.sleep(max(0.0, first + index * spacing - time.monotonic()))
        return run(pipeline)

    with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        results = list(pool.map(start_at, enumerate(jobs)))
    samples = {p: [] for p in PIPELINES}
    for pipeline, sample in zip(jobs, results, strict=True):
        samples[pipeline].append(sample)
    return samples


def concurrent_celery(demo: dict, worker: common.CeleryWorker, runs: int, latency: float,
                      spacing: float) -> dict[str, list[tuple]]:
    jobs = [p for _ in range(runs) for p in PIPELINES]
    submitted, pipeline_of = {}, {}
    first = time.monotonic()
    for index, pipeline in enumerate(jobs):
        time.sleep(max(0.0, first + index * spacing - time.monotonic()))
        pk, when = common.submit(pipeline, demo)
        submitted[pk], pipeline_of[pk] = when, pipeline
    common.wait_finished(list(submitted), timeout=3 * latency * len(jobs) / worker.concurrency + 30, worker=worker,
                         stall=4 * latency + 10)
    samples = {p: [] for p in PIPELINES}
    for pk, sample in celery_results(submitted).items():
        samples[pipeline_of[pk]].append(sample)
    return samples


def summarize(samples: list[tuple]) -> dict:
    good = [s for s in samples if s[3]]
    ours = [s[0] - s[1] for s in good]
    shares = [(s[0] - s[1]) / s[0] * 100 for s in good]
    return {
        "n": len(samples),
        "failed": len(samples) - len(good),
        "calls": statistics.mode(s[2] for s in good) if good else 0,
        "wall": median([s[0] for s in good]),
        "wait": median([s[1] for s in good]),
        "ours": median(ours),
        "p95": percentile(ours, 95),
        "share": median(shares),
        "share_p95": percentile(shares, 95),
    }


# -- where (b)'s time goes -------------------------------------------------------------------------

class Parts:
    """Times the parts of run_now with Python's profiler: the cumulative time of the product functions
    below, found by their file and qualified name. Nothing in the product is wrapped or replaced; the
    profiler slows every call a little, so compare the parts with each other, not with (b) above."""

    NAMES = {
        ("agents/tasks.py", "start_run"): "start_run: row + policy snapshot",
        ("agents/tasks.py", "take"): "take (conditional UPDATE + the row)",
        ("agents/tasks.py", "llm_for"): "llm_for: the model client (cached per process)",
        ("agents/observer.py", "DatabaseObserver.on_step"): "observer: trace steps",
        ("agents/observer.py", "DatabaseObserver.on_model_call"): "observer: model calls",
        ("agents/observer.py", "record_result"): "record_result",
        ("agents/tasks.py", "Heartbeat.keep"): "heartbeat: add and remove the run",
    }
    LABELS = list(dict.fromkeys(NAMES.values()))

    @classmethod
    def measure(cls, function, *args) -> tuple[object, dict[str, float]]:
        """``function(*args)`` under the profiler: its value and the ms spent in each part."""
        profiler = cProfile.Profile()
        value = profiler.runcall(function, *args)
        spent: dict[str, float] = defaultdict(float)
        for entry in profiler.getstats():
            code = entry.code
            if not isinstance(code, types.CodeType):
                continue  # a built-in function
            path = Path(code.co_filename)
            where = path.relative_to(common.ROOT).as_posix() if path.is_relative_to(common.ROOT) else ""
            label = cls.NAMES.get((where, code.co_qualname))
            if label:
                spent[label] += entry.totaltime * 1000  # includes what it calls
        return value, spent


def breakdown(demo: dict, runs: int) -> tuple[list[list], dict[str, int]]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    run = database_runner(demo)
    per_pipeline: dict[str, dict[str, list[float]]] = {p: defaultdict(list) for p in PIPELINES}
    statements = {}
    for pipeline in PIPELINES:
        with CaptureQueriesContext(connection) as queries:
            run(pipeline)
        statements[pipeline] = sum(1 for q in queries.captured_queries
                                   if not q["sql"].startswith(("SAVEPOINT", "RELEASE")))
    for _ in range(runs):
        for pipeline in PIPELINES:
            (wall, wait, _, _), named = Parts.measure(run, pipeline)
            record = per_pipeline[pipeline]
            for label in Parts.LABELS:
                record[label].append(named.get(label, 0.0))
            # The observer's time includes none of the model wait: on_model_call runs after it.
            record["rest"].append(wall - wait - sum(named.values()))
            record["total"].append(wall - wait)
    rows = []
    for name, label in [*((label, label) for label in Parts.LABELS), ("rest", "the rest: core + run_now's own queries"),
                        ("total", "ours, total (under the profiler)")]:
        rows.append([label, *(fmt_ms(median(per_pipeline[p][name]), 2) for p in PIPELINES)])
    return rows, statements


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=common.whole(0), default=200,
                        help="runs per pipeline and mode at 0 ms (default 200; 0 skips that pass)")
    parser.add_argument("--slow-runs", type=common.whole(0), default=10,
                        help="runs per pipeline and mode at --slow-latency (default 10; 0 skips that pass)")
    parser.add_argument("--slow-latency", type=common.seconds(0), default=1.0,
                        help="seconds per model call (default 1)")
    parser.add_argument("--modes", type=common.choices_list(list(MODE_NAMES)), default=["a", "b", "c"],
                        help="any of a,b,c (default all)")
    parser.add_argument("--warmup", type=common.whole(0), default=5, help="unmeasured runs per pipeline first")
    parser.add_argument("--breakdown-runs", type=common.whole(0), default=50,
                        help="runs per pipeline for the (b) breakdown (0 skips it)")
    parser.add_argument("--worker-concurrency", type=common.whole(1), default=100,
                        help="threads of the (c) worker (default 100, as README recommends for bursts of 100)")
    parser.add_argument("--idle-seconds", type=common.seconds(0), default=10,
                        help="after (c) at 0 ms, how long to measure the idle worker's CPU (default 10; 0 skips it)")
    common.candidate_option(parser)
    args = parser.parse_args(argv)
    modes = args.modes

    db = common.BenchDatabase("overhead", settings_module=args.settings).setup()
    demo = common.load_demo()
    from django.conf import settings

    print(f"overhead: {db.describe()}; broker {settings.CELERY_BROKER_URL}; "
          f"{args.runs} runs per pipeline and mode at 0 ms, {args.slow_runs} at {args.slow_latency:g} s", flush=True)

    fast: dict[str, dict[str, dict]] = {}
    idle_cpu = worker_cpu = None
    slow: dict[tuple[str, str], dict[str, dict]] = {}
    parts_rows, statements = [], {}
    with common.ModelServer(0.0) as server:
        common.use_model(server.base_url)
        for mode in modes if args.runs else ():
            started = time.monotonic()
            if mode == "a":
                samples = sequential(core_runner(server.base_url), args.runs, args.warmup)
            elif mode == "b":
                samples = sequential(database_runner(demo), args.runs, args.warmup)
            else:
                with common.CeleryWorker(db, server.base_url, args.worker_concurrency) as worker:
                    cpu_before = worker.cpu_seconds()
                    samples = sequential(celery_runner(demo, worker), args.runs, args.warmup)
                    # CPU, unlike wall time, hardly moves with the machine's load: what one run costs the worker.
                    runs_done = (args.runs + args.warmup) * len(PIPELINES)
                    worker_cpu = (worker.cpu_seconds() - cpu_before) * 1000 / runs_done
                    if args.idle_seconds:
                        idle_cpu = worker.idle_cpu_percent(args.idle_seconds)
                    FAILURES.extend(f"(c) worker log: {line}" for line in worker.errors())
            fast[mode] = {p: summarize(s) for p, s in samples.items()}
            print(f"  {MODE_NAMES[mode]} at 0 ms: {time.monotonic() - started:.0f} s", flush=True)
        if "b" in modes and args.breakdown_runs:
            parts_rows, statements = breakdown(demo, args.breakdown_runs)

    # Staggered: the runs overlap (all in flight together) but start one by one over one model
    # latency, as independent requests arrive. Burst: all start at the same instant, the worst case.
    patterns = {"staggered": args.slow_latency / max(1, args.slow_runs * len(PIPELINES)), "burst": 0.0}
    with common.ModelServer(args.slow_latency) as server:
        common.use_model(server.base_url)
        for mode in modes if args.slow_runs else ():
            started = time.monotonic()
            for pattern, spacing in patterns.items():
                if mode == "a":
                    samples = concurrent(core_runner(server.base_url), args.slow_runs, spacing)
                elif mode == "b":
                    samples = concurrent(database_runner(demo), args.slow_runs, spacing)
                else:
                    with common.CeleryWorker(db, server.base_url, args.worker_concurrency) as worker:
                        sequential(celery_runner(demo, worker), 0, 1)  # the worker's first runs import the world
                        samples = concurrent_celery(demo, worker, args.slow_runs, args.slow_latency, spacing)
                        FAILURES.extend(f"(c) worker log: {line}" for line in worker.errors())
                slow[(mode, pattern)] = {p: summarize(s) for p, s in samples.items()}
            print(f"  {MODE_NAMES[mode]} at {args.slow_latency:g} s: {time.monotonic() - started:.0f} s", flush=True)

    label = common.settings_label(args.settings)
    rows = []
    for mode in fast:
        for pipeline in PIPELINES:
            s = fast[mode][pipeline]
            target = ""
            if mode == "c" and s["n"] > s["failed"]:
                missed_by = fmt_ms(s["wall"] - TARGET_WORKER_MS) + " ms"
                target = (f"wall ≤ {TARGET_WORKER_MS:g} ms: "
                          f"{common.verdict(s['wall'] <= TARGET_WORKER_MS, by=missed_by)}")
            rows.append([MODE_NAMES[mode], pipeline, s["calls"], s["n"], s["failed"], fmt_ms(s["wall"]),
                         fmt_ms(s["wait"]), fmt_ms(s["ours"]), fmt_ms(s["p95"]), target])
    if rows:
        print_table(
            f"Overhead per run at 0 ms model latency, ms{label}",
            ["mode", "pipeline", "calls", "runs", "failed", "wall median", "model wait median", "ours median",
             "ours p95", "target"],
            rows,
            ["ours = wall - model wait recorded by our client (sum of the run's call latencies)."],
        )
    if worker_cpu is not None:
        print(f"\n(c) worker CPU per run, the three pipelines together: {worker_cpu:.1f} ms")
    if idle_cpu is not None:
        ok = idle_cpu <= TARGET_IDLE_CPU
        print(f"\nIdle worker after (c): {idle_cpu:.2f} % of one core over {args.idle_seconds:g} s "
              f"(target ≤ {TARGET_IDLE_CPU:g} %: {common.verdict(ok, by=f'{idle_cpu - TARGET_IDLE_CPU:.2f} points')})")
    if parts_rows:
        print_table(
            f"Where (b)'s time goes: median ms per run over {args.breakdown_runs} runs{label}",
            ["part", *PIPELINES],
            parts_rows + [["SQL statements per run", *(statements[p] for p in PIPELINES)]],
        )
    rows = []
    for mode, pattern in slow:
        for pipeline in PIPELINES:
            s = slow[(mode, pattern)][pipeline]
            missed_by = f"{s['share'] - TARGET_SHARE:.2f} points"
            target = (f"≤ {TARGET_SHARE:g} %: {common.verdict(s['share'] <= TARGET_SHARE, by=missed_by)}"
                      if s["failed"] < s["n"] else "no run finished")
            rows.append([MODE_NAMES[mode], pattern, pipeline, s["n"], s["failed"], fmt_ms(s["wall"] / 1000, 3),
                         fmt_ms(s["ours"]),
                         fmt_ms(s["share"], 2), fmt_ms(s["share_p95"], 2), target])
    if rows:
        print_table(
            f"Share of wall time that is ours at {args.slow_latency:g} s per model call "
            f"({args.slow_runs} runs per pipeline in flight together){label}",
            ["mode", "start", "pipeline", "runs", "failed", "wall median s", "ours median ms", "ours/wall median %",
             "ours/wall p95 %", "target"],
            rows,
            [f"staggered: one run starts every {patterns['staggered'] * 1000:.0f} ms, so all overlap; "
             "burst: all start at the same instant (the worst case)."],
        )
    if FAILURES:
        print("\nFailures (mode, what, how often):")
        counts = Counter(re.sub(r" run \d+:", ":", line) for line in FAILURES)
        for line, count in sorted(counts.items()):
            print(f"  {line}" + (f" x{count}" if count > 1 else ""))
    common.print_machine({"database": db.vendor})


if __name__ == "__main__":
    main()

"""100 runs submitted at once through a real worker, at 1 s per model call.

    .venv/bin/python bench/concurrency.py                        # worker concurrency 8, 32 and 100, ~2-5 minutes
    .venv/bin/python bench/concurrency.py --concurrency 100,2x50 --runs 200   # 2x50: two worker processes
    .venv/bin/python bench/concurrency.py --candidate            # with bench/candidate_settings.py (10 ms polling)
    CELERY_BROKER_URL=redis://127.0.0.1:6379/0 .venv/bin/python bench/concurrency.py   # another broker

For each worker concurrency (``celery worker --pool threads --concurrency N``), the benchmark submits
``--runs`` runs (the three pipelines in turn, each on its revise path) as fast as ``start_run`` goes,
and waits for every row to finish. It compares the total wall time with the ideal: the critical path
of the slowest single run, measured alone on the same worker (its sequential model calls x latency
+ our overhead). Target: total <= 1.5 x ideal, and no run lost or failed.
"""

from __future__ import annotations

import argparse
import sys
import time
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common
from bench.common import PIPELINES, fmt_ms, median, percentile, print_table

TARGET_RATIO = 1.5


def finished_rows(pks: list[int]) -> dict[int, dict]:
    from agents.models import Run

    return {row["pk"]: row for row in Run.objects.filter(pk__in=pks).values(
        "pk", "pipeline", "status", "stop_reason", "finished_at", "model_calls", "deliveries")}


def solo(demo: dict, worker: common.CeleryWorker, pipeline: str, latency: float) -> dict:
    pk, submitted = common.submit(pipeline, demo)
    common.wait_finished([pk], timeout=10 * latency + 30, worker=worker)
    row = finished_rows([pk])[pk]
    wall = (row["finished_at"].timestamp() - submitted) if row["finished_at"] else float("nan")
    return {"wall": wall, "calls": row["model_calls"], "ok": row["status"] == "ok"}


def trial(db: common.BenchDatabase, demo: dict, base_url: str, processes: int, concurrency: int, runs: int,
          latency: float) -> dict:
    began = time.monotonic()

    def phase(name):
        print(f"    {name} at {time.monotonic() - began:.1f} s", flush=True)

    with ExitStack() as stack:
        worker = [stack.enter_context(common.CeleryWorker(db, base_url, concurrency)) for _ in range(processes)]
        # Warm up: the worker's first runs import the SDK and open connections.
        warm = [common.submit(p, demo)[0] for p in PIPELINES]
        common.wait_finished(warm, timeout=10 * latency + 60, worker=worker)
        # The ideal: the slowest pipeline's critical path, alone on this worker.
        alone = {p: solo(demo, worker, p, latency) for p in PIPELINES}
        slowest = max(PIPELINES, key=lambda p: (alone[p]["calls"], alone[p]["wall"]))
        ideal = alone[slowest]["wall"]
        phase("warm-up and solo runs done")

        jobs = [PIPELINES[i % len(PIPELINES)] for i in range(runs)]
        started = time.time()
        submitted = dict(common.submit(p, demo) for p in jobs)
        submit_seconds = time.time() - started
        # Generous: a worker that runs them one wave at a time still finishes within this.
        timeout = ideal * (runs / (processes * concurrency) + 2) + 60
        common.wait_finished(list(submitted), timeout=timeout, worker=worker, every=0.05, stall=2 * ideal + 5)
        rows = finished_rows(list(submitted))
        errors = sorted({line for w in worker for line in w.errors()})
        phase("burst done")

    phase("worker stopped")
    done = [r for r in rows.values() if r["finished_at"] is not None]
    lost = [r for r in rows.values() if r["status"] in ("queued", "running", "interrupted")]
    failed = [r for r in rows.values() if r["status"] == "stopped"]
    end = max((r["finished_at"].timestamp() for r in done), default=float("nan"))
    latencies = [r["finished_at"].timestamp() - submitted[r["pk"]] for r in done]
    total = end - started if not lost else float("nan")
    return {
        "concurrency": f"{processes} x {concurrency}", "runs": runs, "submit": submit_seconds, "ideal": ideal,
        "slowest": slowest,
        "calls": alone[slowest]["calls"], "total": total, "ratio": total / ideal, "lost": len(lost),
        "failed": len(failed), "median": median(latencies), "p95": percentile(latencies, 95),
        "max": max(latencies, default=float("nan")),
        "redelivered": sum(1 for r in rows.values() if r["deliveries"] > 1),
        "stop_reasons": sorted({r["stop_reason"] for r in failed}), "errors": errors,
        "lost_statuses": sorted({r["status"] for r in lost}),
    }


def worker_levels(text: str) -> list[tuple[int, int]]:
    """``8,32,2x50`` -> [(1, 8), (1, 32), (2, 50)]: (worker processes, threads each), all at least 1."""
    levels = []
    for item in (x.strip() for x in text.split(",") if x.strip()):
        try:
            processes, threads = item.split("x", 1) if "x" in item else ("1", item)
            level = (int(processes), int(threads))
        except ValueError:
            raise argparse.ArgumentTypeError(f"threads or PROCESSESxTHREADS are needed, got {item!r}") from None
        if min(level) < 1 or level[0] > 8:
            raise argparse.ArgumentTypeError(f"1-8 processes of at least 1 thread are needed, got {item!r}")
        levels.append(level)
    if not levels:
        raise argparse.ArgumentTypeError("at least one worker concurrency is needed")
    return levels


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=common.whole(1), default=100, help="runs submitted at once (default 100)")
    parser.add_argument("--latency", type=common.seconds(0), default=1.0, help="seconds per model call (default 1)")
    parser.add_argument("--concurrency", type=worker_levels, default=worker_levels("8,32,100"),
                        help="worker thread counts to try (default 8,32,100); 2x50 means two worker processes of 50")
    common.candidate_option(parser)
    args = parser.parse_args(argv)
    levels = args.concurrency

    db = common.BenchDatabase("concurrency", settings_module=args.settings).setup()
    demo = common.load_demo()
    from django.conf import settings

    print(f"concurrency: {db.describe()}; broker {settings.CELERY_BROKER_URL.split('@')[-1]}; {args.runs} runs at "
          f"{args.latency:g} s per model call; worker --pool threads --concurrency "
          f"{','.join(f'{p}x{t}' for p, t in levels)}", flush=True)
    results = []
    with common.ModelServer(args.latency) as server:
        common.use_model(server.base_url)
        for processes, threads in levels:
            started = time.monotonic()
            results.append(trial(db, demo, server.base_url, processes, threads, args.runs, args.latency))
            print(f"  concurrency {processes} x {threads}: {time.monotonic() - started:.0f} s", flush=True)

    label = common.settings_label(args.settings)
    rows = []
    for r in results:
        ok = r["ratio"] <= TARGET_RATIO and not r["lost"] and not r["failed"]
        why = []
        if r["ratio"] > TARGET_RATIO:
            why.append(f"ratio {(r['ratio'] / TARGET_RATIO - 1) * 100:.0f} % over")
        if r["lost"] or r["failed"]:
            why.append(f"{r['lost'] + r['failed']} runs lost/failed")
        rows.append([r["concurrency"], r["runs"], f"{r['submit']:.2f}", f"{r['ideal']:.2f} ({r['calls']} calls)",
                     fmt_ms(r["total"], 2), fmt_ms(r["ratio"], 2), fmt_ms(r["max"] / r["ideal"], 2), r["lost"],
                     r["failed"], r["redelivered"],
                     f"{fmt_ms(r['median'], 2)} / {fmt_ms(r['p95'], 2)} / {fmt_ms(r['max'], 2)}",
                     f"≤ {TARGET_RATIO:g}x, 0 lost: " + ("met" if ok else "MISSED (" + "; ".join(why) + ")")])
    print_table(
        f"{args.runs} runs submitted at once, {args.latency:g} s per model call, threads pool{label}",
        [
            "worker processes x threads",
            "runs",
            "submit s",
            "ideal s",
            "total s",
            "ratio",
            "slowest run / ideal",
            "lost",
            "failed",
            "redelivered",
            "per-run s median / p95 / max",
            "target",
        ],
        rows,
        [
            "ideal = the slowest pipeline's run alone on the same worker (its model calls x latency + our overhead). "
            "lost = still queued/running/interrupted at the end; failed = stopped.",
            "total = submit of the first run to finished_at of the last (so it includes the time this one "
            "process takes to call start_run 100 times); slowest run = the longest submit-to-finish of one run. "
            "n/a when runs were lost.",
        ],
    )
    for r in results:
        for reason in r["stop_reasons"]:
            print(f"  concurrency {r['concurrency']}: stopped with {reason}")
        for status in r["lost_statuses"]:
            print(f"  concurrency {r['concurrency']}: runs left {status}")
        for line in r["errors"]:
            print(f"  concurrency {r['concurrency']} worker log: {line}")
    common.print_machine({"database": db.vendor, "broker": settings.CELERY_BROKER_URL.split("@")[-1]})


if __name__ == "__main__":
    main()

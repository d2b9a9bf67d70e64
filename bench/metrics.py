"""/metrics: how long one scrape takes as the recorded runs grow (1,000, 10,000, 100,000 runs).

    .venv/bin/python bench/metrics.py                        # 1k, 10k, 100k runs; 5 scrapes each
    .venv/bin/python bench/metrics.py --sizes 1000,10000 --repeat 3
    DATABASE_URL=postgres://user@127.0.0.1:5432/postgres .venv/bin/python bench/metrics.py

The data: a few runs of each pipeline made for real with the offline model (their model calls and
trace steps as the product records them), copied with bulk inserts up to each size, and for every
20th run a pending escalation. A scrape is ``reviewer.operations.metrics.exposition()``, what the view answers
after its access check: every query and the text format, wall time in this process. Target: under
1 s at 100,000 runs, as Prometheus' default scrape timeout is 10 s and a scrape runs every 15-60 s.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common
from bench.common import median, print_table

TARGET_SECONDS = 1.0
SIZES = "1000,10000,100000"
TICKETS = ("I was charged twice for my subscription, please refund me. user_id=42",
           "The public API returns errors and latency is high since this morning.")


def sizes(text: str) -> list[int]:
    try:
        values = sorted({int(item) for item in text.split(",") if item.strip()})
    except ValueError:
        raise argparse.ArgumentTypeError(f"whole numbers separated by commas are needed, got {text!r}") from None
    if not values or values[0] < 1:
        raise argparse.ArgumentTypeError(f"every size must be at least 1, got {text!r}")
    return values


def real_runs() -> list:
    """A few runs of each pipeline, made for real by the offline model."""
    from agents.core.llm.offline import OfflineModel
    from agents.tasks import run_now, start_run

    demo = common.load_demo()
    made = []
    for pipeline in ("reflection", "self_critique"):
        for incident in list(demo["incidents"].values())[:3]:
            run, _ = start_run(pipeline=pipeline, goal="Write the customer update.", incident=incident, enqueue=False)
            made.append(run)
    for ticket in TICKETS:
        made.append(start_run(pipeline="routing", goal=ticket, enqueue=False)[0])
    for run in made:
        run_now(run.pk, llm=OfflineModel())
    return made


def grow_to(total: int, sources: list) -> None:
    """Copies of ``sources`` up to ``total`` runs, a pending escalation on every 20th new one."""
    from agents.models import Run
    from agents.testing.stored_runs import copy_runs
    from reviewer.models import Escalation

    new = copy_runs(sources, max(total - Run.objects.count(), 0))
    Escalation.objects.bulk_create([Escalation(run_id=pk, stop_reason="policy_escalation") for pk in new[::20]],
                                   batch_size=2000)


def family_times() -> dict[str, float]:
    """Milliseconds each part of the collector takes (its query, fetched, and its series)."""
    import inspect

    from django.utils import timezone

    from reviewer.operations.metrics import DatabaseCollector

    collector, now, times = DatabaseCollector(), timezone.now(), {}
    for name, method in inspect.getmembers(collector, inspect.ismethod):
        if name == "collect":
            continue
        started = time.perf_counter()
        list(method(now) if "now" in inspect.signature(method).parameters else method())
        times[name] = (time.perf_counter() - started) * 1000
    return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=sizes, default=sizes(SIZES),
                        help=f"stored runs at which a scrape is timed, comma-separated (default {SIZES})")
    parser.add_argument("--repeat", type=common.whole(1), default=5, help="scrapes per size (default 5)")
    args = parser.parse_args(argv)

    db = common.BenchDatabase("metrics").setup()
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from agents.models import ModelCall, Run
    from reviewer.operations.metrics import exposition

    print(f"metrics: {db.describe()}", flush=True)
    sources = real_runs()
    rows, failures = [], []
    for size in args.sizes:
        started = time.perf_counter()
        grow_to(size, sources)
        print(f"{Run.objects.count()} runs stored in {time.perf_counter() - started:.0f} s", flush=True)
        times, parts = [], {}
        for _ in range(args.repeat):
            with CaptureQueriesContext(connection) as queries:
                begun = time.perf_counter()
                body = exposition()
                times.append(time.perf_counter() - begun)
            for name, ms in family_times().items():
                parts.setdefault(name, []).append(ms)
        seconds = median(times)
        ok = seconds < TARGET_SECONDS
        if not ok:
            failures.append(str(size))
        rows.append([f"{Run.objects.count():,}", f"{ModelCall.objects.count():,}", len(queries),
                     f"{len(body):,}", f"{seconds * 1000:.0f}", f"{min(times) * 1000:.0f}–{max(times) * 1000:.0f}",
                     common.verdict(ok)])
    print_table(f"One scrape of /metrics (median of {args.repeat})",
                ["runs", "model calls", "queries", "bytes", "median ms", "range ms", f"< {TARGET_SECONDS:g} s"], rows)
    print_table(f"Where a scrape's time goes at {args.sizes[-1]:,} runs (median of {args.repeat})",
                ["part of DatabaseCollector (one query each)", "median ms"],
                [[name, f"{median(ms):.1f}"] for name, ms in sorted(parts.items(), key=lambda item: -median(item[1]))])
    common.print_machine({"database": db.vendor})
    if failures:
        print(f"\nmissed the target at: {', '.join(failures)} runs")


if __name__ == "__main__":
    main()

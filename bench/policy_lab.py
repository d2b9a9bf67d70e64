"""The policy lab: how long a preview of one change takes over the newest stored runs.

    .venv/bin/python bench/policy_lab.py                    # 1,000 runs per pipeline, 5 repetitions
    .venv/bin/python bench/policy_lab.py --runs 200 --repeat 3
    DATABASE_URL=postgres://user@127.0.0.1:5432/postgres .venv/bin/python bench/policy_lab.py

The data: a few runs of each pipeline made for real with the offline model (their model calls and
trace steps as the product records them), copied with bulk inserts up to ``--runs`` stored runs per
pipeline, and ``--decided`` decided escalations. Then ``agents.lab.preview`` (what the admin's
"Preview impact" and ``manage.py preview_policy`` call) is timed on three changes, each over the
newest ``--runs`` runs: a route switched off (routing), a smaller answer budget (reflection) and a
new claim family (both text pipelines, with the decided texts). Each figure is the median of
``--repeat`` previews, wall time in this process. Target: under 10 s for 1,000 runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common
from bench.common import median, print_table

TARGET_SECONDS = 10.0  # for 1,000 runs
TICKETS = ("I was charged twice for my subscription, please refund me. user_id=42",
           "The public API returns errors and latency is high since this morning.",
           "How much is the team plan?")


def make_runs(runs: int, decided: int) -> None:
    """``runs`` stored runs per pipeline, copies of a few real ones, and ``decided`` decided escalations."""
    from django.utils import timezone

    from agents.core.llm.offline import OfflineModel
    from agents.models import Run
    from agents.tasks import run_now, start_run
    from agents.testing.stored_runs import copy_runs
    from reviewer.models import Escalation

    demo = common.load_demo()
    incidents, user = demo["incidents"], demo["user"]
    real = []
    for pipeline in ("reflection", "self_critique"):
        for incident in list(incidents.values())[:3]:
            run, _ = start_run(pipeline=pipeline, goal="Write the customer update.", incident=incident, enqueue=False)
            run_now(run.pk, llm=OfflineModel())
            real.append(run)
    for ticket in TICKETS:
        run, _ = start_run(pipeline="routing", goal=ticket, enqueue=False)
        run_now(run.pk, llm=OfflineModel())
        real.append(run)
    for pipeline in common.PIPELINES:
        made = [run for run in real if run.pipeline == pipeline]
        copy_runs(made, max(runs - len(made), 0))
    stopped = Run.objects.filter(pipeline__in=("reflection", "self_critique"), status=Run.Status.STOPPED,
                                 escalation__isnull=True).exclude(candidate="")[:decided]
    Escalation.objects.bulk_create(
        Escalation(run=run, status=Escalation.Status.APPROVED if number % 2 else Escalation.Status.REJECTED,
                   stop_reason=run.stop_reason, candidate=run.candidate, final_text=run.candidate,
                   decided_by=user, decided_at=timezone.now())
        for number, run in enumerate(stopped))
    print(f"stored: {Run.objects.count()} runs, {Escalation.objects.exclude(status='pending').count()} decided "
          f"escalations", flush=True)


def changes() -> list[tuple[str, object]]:
    """(what, the unsaved row) for each change timed."""
    from agents.models import PipelinePolicy, RestrictedClaim, RouteTarget

    route = RouteTarget.objects.get(name="billing_specialist")
    route.allowed_policy = False
    policy = PipelinePolicy.objects.get(pipeline="reflection", active=True)
    policy.max_answer_chars = 300
    claim = RestrictedClaim(family="engineering staff", kind="restricted_claims", pattern=r"\bengineers\b")
    return [("route switched off (routing)", route), ("answer budget 300 (reflection)", policy),
            ("new claim family (text pipelines)", claim)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=common.whole(1), default=1000,
                        help="stored runs per pipeline, each preview replays the newest this many (default 1,000)")
    parser.add_argument("--decided", type=common.whole(0), default=200,
                        help="decided escalations the claim change is checked against (default 200)")
    parser.add_argument("--repeat", type=common.whole(1), default=5, help="previews per change (default 5)")
    args = parser.parse_args(argv)

    db = common.BenchDatabase("policy_lab").setup()
    from agents.lab import preview

    print(f"policy lab: {db.describe()}", flush=True)
    make_runs(args.runs, args.decided)
    rows, failures = [], []
    target = TARGET_SECONDS * args.runs / 1000
    for what, row in changes():
        times, texts, report = [], [], None
        for _ in range(args.repeat):
            started = time.perf_counter()
            report = preview(row, last=args.runs)
            times.append(time.perf_counter() - started)
            texts.append(report.texts_seconds)
        seconds = median(times)
        ok = seconds < target
        if not ok:
            failures.append(what)
        rows.append([what, report.runs, report.texts_judged, f"{seconds:.2f}", f"{median(texts):.2f}",
                     f"{min(times):.2f}–{max(times):.2f}", f"{report.runs / seconds:.0f}", report.headline(),
                     common.verdict(ok)])
    print_table(f"Policy lab preview over the newest {args.runs} runs (median of {args.repeat})",
                ["change", "runs replayed", "decided texts", "median s", "of which texts s", "range s", "runs/s",
                 "result", f"< {target:g} s"], rows)
    common.print_machine({"database": db.vendor})
    if failures:
        print(f"\nmissed the target: {', '.join(failures)}")


if __name__ == "__main__":
    main()

"""The learning loop: the guard's scorecard and the miner over many decisions.

    .venv/bin/python bench/learning.py                         # 100,000 decisions, 3 repetitions
    .venv/bin/python bench/learning.py --decisions 20000 --repeat 1
    DATABASE_URL=postgres://user@127.0.0.1:5432/postgres .venv/bin/python bench/learning.py

The data: the seeded history (``reviewer.learning.seed``: ``--seed-runs`` real runs of the reflection
pipeline on the demo incidents, decided by five leads through the desk), then copies of its decided
escalations with their decisions, written with bulk inserts, up to ``--decisions`` final decisions (each
copy on a run row of its own that holds only what the scorecard reads of a run). Timed, the median
of ``--repeat``: the scorecard alone (``scorecard()``: what the admin page and ``/metrics`` call), the
miner alone (``mine()``), and both from one read of the decisions (the labels read once). The replay
of each proposal is the policy lab's (``bench/policy_lab.py``), over the newest
``LEARNING_REPLAY_RUNS`` runs whatever the number of decisions, and is not in these figures.
Target: both under 10 s for 100,000 decisions.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common
from bench.common import median, print_table

TARGET_SECONDS = 10.0  # for 100,000 decisions
BATCH = 2000


def make_history(seed_runs: int, decisions: int) -> int:
    """The seeded history, copied up to ``decisions`` final decisions; returns how many there are."""
    from django.db import transaction

    from agents.models import Run
    from reviewer.learning.seed import seed
    from reviewer.models import Decision, Escalation

    common.load_demo()
    seed(seed_runs)
    final = ("approve", "edit_approve", "reject")
    sources = list(Decision.objects.filter(action__in=final).select_related("escalation", "escalation__run"))
    have = len(sources)
    with transaction.atomic():
        while have < decisions:
            chunk = sources[: min(BATCH, decisions - have, len(sources))]
            runs = Run.objects.bulk_create([Run(pipeline=d.escalation.run.pipeline, goal=d.escalation.run.goal,
                                                status=d.escalation.run.status, created_at=d.escalation.run.created_at)
                                            for d in chunk])
            escalations = Escalation.objects.bulk_create([
                _copy(d.escalation, run_id=run.pk, approval_rule_id=None) for d, run in zip(chunk, runs, strict=True)])
            Decision.objects.bulk_create([_copy(d, escalation_id=e.pk)
                                          for d, e in zip(chunk, escalations, strict=True)])
            have += len(chunk)
    return Decision.objects.filter(action__in=final).count()


def _copy(row, **changes):
    model = type(row)
    values = {f.attname: getattr(row, f.attname) for f in model._meta.concrete_fields if not f.primary_key}
    return model(**{**values, **changes})


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--decisions", type=common.whole(1), default=100_000,
                        help="final decisions to read (default 100,000)")
    parser.add_argument("--seed-runs", type=common.whole(10), default=240,
                        help="real runs of the seeded history the copies are made of (default 240)")
    parser.add_argument("--repeat", type=common.whole(1), default=3, help="timings of each (default 3)")
    args = parser.parse_args(argv)

    db = common.BenchDatabase("learning").setup()
    print(f"learning loop: {db.describe()}", flush=True)
    started = time.perf_counter()
    count = make_history(args.seed_runs, args.decisions)
    print(f"stored: {count} final decisions in {time.perf_counter() - started:.0f} s", flush=True)

    from reviewer.learning.miner import mine
    from reviewer.models.learning import labels, scorecard

    def both():
        read = list(labels())
        return scorecard(from_labels=read), mine(from_labels=read)

    target = TARGET_SECONDS * args.decisions / 100_000
    rows, failures = [], []
    for what, work in (("scorecard", scorecard), ("miner", mine), ("scorecard and miner, one read", both)):
        times, result = [], None
        for _ in range(args.repeat):
            begun = time.perf_counter()
            result = work()
            times.append(time.perf_counter() - begun)
        seconds = median(times)
        ok = seconds <= target
        if not ok:
            failures.append(what)
        card, proposals = result if isinstance(result, tuple) else (result, None) if what == "scorecard" \
            else (None, result)
        rows.append([what, count, f"{seconds:.2f}", f"{min(times):.2f}–{max(times):.2f}", f"{count / seconds:,.0f}",
                     f"{len(card.checks)} checks" if card else "",
                     f"{len(proposals)} proposals" if proposals is not None else "", common.verdict(ok)])
    print_table(f"Scorecard and miner over {count} decisions (median of {args.repeat})",
                ["what", "decisions", "median s", "range s", "decisions/s", "scorecard", "miner", f"≤ {target:g} s"],
                rows)
    common.print_machine({"database": db.vendor})
    if failures:
        print(f"\nmissed the target: {', '.join(failures)}")


if __name__ == "__main__":
    main()

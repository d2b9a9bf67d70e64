"""Run every benchmark, one after the other, and print their tables (each script in its own process).

    .venv/bin/python bench/all.py                        # SQLite + embedded broker, ~15-25 minutes
    .venv/bin/python bench/all.py --only overhead,pages  # a subset
    .venv/bin/python bench/all.py --quick                # smaller samples and data, ~5 minutes
    source .ci/services && DATABASE_URL=$TEST_POSTGRES_URL CELERY_BROKER_URL=$TEST_REDIS_URL \\
        .venv/bin/python bench/all.py                    # PostgreSQL + Redis (each script makes its own database)

Each script prints its tables and the machine with the load average at its start and end; the
figures of one script are comparable with each other, not across scripts on a shared machine.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import _loadavg, choices_list  # noqa: E402

# name -> (arguments, quick arguments); each full run stays under ~5 minutes on an idle 2-core machine.
BENCHES = {
    "overhead": (["--runs", "100", "--slow-runs", "34"], ["--runs", "20", "--slow-runs", "5", "--breakdown-runs", "5"]),
    "concurrency": (["--concurrency", "100"], ["--concurrency", "100", "--runs", "30"]),
    "pages": ([], ["--runs", "20000", "--pending", "1000", "--decided", "500", "--requests", "10", "--no-try"]),
    "model_cost": ([], []),
    "load": (["--clients", "50", "--seconds", "30"], ["--clients", "10", "--seconds", "5"]),
    "status_page": (["--clients", "20", "--seconds", "10"], ["--clients", "5", "--seconds", "2", "--incidents", "10"]),
    "live_polling": (["--pages", "50", "--seconds", "10"], ["--pages", "10", "--seconds", "2", "--paced-seconds", "3"]),
    "policy_lab": ([], ["--runs", "200", "--repeat", "2", "--decided", "50"]),
    "metrics": ([], ["--sizes", "1000,10000", "--repeat", "3"]),
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", type=choices_list(list(BENCHES)), default=list(BENCHES),
                        help="comma-separated subset of " + ", ".join(BENCHES) + " (default all)")
    parser.add_argument("--quick", action="store_true", help="smaller samples and data: a smoke run, not figures")
    args = parser.parse_args(argv)
    failed = []
    for name in args.only:
        full, quick = BENCHES[name]
        command = [sys.executable, str(ROOT / "bench" / f"{name}.py"), *(quick if args.quick else full)]
        print(f"\n## {name}: {' '.join(command[1:])} (load average {_loadavg()})", flush=True)
        started = time.monotonic()
        code = subprocess.call(command, cwd=ROOT)
        print(f"\n{name}: {time.monotonic() - started:.0f} s, exit {code}", flush=True)
        if code:
            failed.append(name)
    if failed:
        print("failed: " + ", ".join(failed), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

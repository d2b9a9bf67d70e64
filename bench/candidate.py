"""The changes the benchmarks recommend, applied from outside the product so that they can be
measured (``--candidate``). This file does not change the product:

1. ``immediate``: SQLite transactions start with ``BEGIN IMMEDIATE`` (``OPTIONS["transaction_mode"]``).
   Without it, ``record_result`` (a read, then a write, in one transaction) fails at once with
   "database is locked" when another connection committed in between; the busy timeout never applies.
2. ``sync``: SQLite ``PRAGMA synchronous=NORMAL`` (safe with WAL: a power cut can lose the last
   commits, never corrupt the file), so a commit does not wait for an fsync. The observer commits
   about 20 times per run, each holding the database's single write lock.
3. ``client``: the model client is built once per process and endpoint, not once per run.
   ``openai.OpenAI()`` creates an httpx client whose SSL context loads the CA bundle (~25-30 ms of
   CPU under the GIL), even for an ``http://`` endpoint.

4. ``poll``: the filesystem broker polls every 10 ms instead of 100 ms (an idle worker lists one
   folder 100 times a second), so a worker picks a run up ~5 ms after it is queued instead of ~50 ms.

1, 2 and 4 are ``bench/candidate_settings.py``; 3 is :func:`reuse_model_client`, and
``python -m bench.candidate -A reviewer worker ...`` starts a Celery worker with it. ``BENCH_CANDIDATE``
(set by the benchmarks' ``--candidate`` option) names the changes to apply.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ALL = ("immediate", "sync", "client", "poll")
_lock = threading.Lock()


def changes() -> set[str]:
    return set(os.environ.get("BENCH_CANDIDATE", ",".join(ALL)).split(",")) & set(ALL)


def reuse_model_client() -> None:
    """Patch ``agents.tasks.llm_for`` to keep one client per model settings in this process."""
    from agents import tasks

    if getattr(tasks.llm_for, "bench_cached", False):
        return
    build = tasks.llm_for
    cache: dict = {}

    def llm_for(policy):
        # The environment is part of the key only because a benchmark moves between fake servers.
        key = (policy.model, tuple(sorted((k, v) for k, v in os.environ.items() if k.startswith(("OPENAI_", "LLM_")))))
        with _lock:
            if key not in cache:
                cache[key] = build(policy)
            return cache[key]

    llm_for.bench_cached = True
    tasks.llm_for = llm_for


def _worker_main() -> None:
    from celery.signals import worker_init

    @worker_init.connect(weak=False)
    def patch(**kwargs):
        import django

        django.setup()
        if "client" in changes():
            reuse_model_client()

    from celery.__main__ import main

    sys.argv = ["celery", *sys.argv[1:]]
    main()


if __name__ == "__main__":
    _worker_main()

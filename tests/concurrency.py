"""Helpers for the tests that need real concurrency: work released in many threads at once.

Their database is PostgreSQL (the ``postgres`` fixture in tests/conftest.py): SQLite serialises
writers with a database lock, so it cannot show a race.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from django.db import connection


def at_once(work: Callable[[int], object], threads: int, *, within: float = 60.0) -> list:
    """``work(i)`` from ``threads`` threads released together, each on its own database connection
    (closed at its end, as a worker's task closes it); their answers in order. An exception is an
    answer the test shows; a thread still running after ``within`` seconds (say, queued on a lock)
    leaves ``None``."""
    barrier = threading.Barrier(threads)
    answers: list = [None] * threads

    def go(i: int) -> None:
        try:
            barrier.wait(timeout=30)
            answers[i] = work(i)
        except Exception as error:
            answers[i] = error
        finally:
            connection.close()

    started = [threading.Thread(target=go, args=(i,)) for i in range(threads)]
    for thread in started:
        thread.start()
    deadline = time.monotonic() + within
    for thread in started:
        thread.join(timeout=max(0.0, deadline - time.monotonic()))
    return list(answers)

"""The product settings plus the SQLite changes of :mod:`bench.candidate` (benchmarks only).

``BENCH_CANDIDATE`` lists the changes to apply (``immediate``, ``sync``, ``poll``); the benchmarks
set it from their ``--candidate`` option.
"""

import os

from reviewer.settings import *  # noqa: F403
from reviewer.settings import CELERY_BROKER_TRANSPORT_OPTIONS, CELERY_BROKER_URL, DATABASES

CHANGES = set(os.environ.get("BENCH_CANDIDATE", "immediate,sync,client,poll").split(","))

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    if "immediate" in CHANGES:
        DATABASES["default"]["OPTIONS"]["transaction_mode"] = "IMMEDIATE"
    if "sync" in CHANGES:
        DATABASES["default"]["OPTIONS"]["init_command"] = "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"

if "poll" in CHANGES and CELERY_BROKER_URL.startswith("filesystem"):
    # The filesystem broker looks for new messages every 0.1 s; a worker picks a run up 50 ms late on average.
    CELERY_BROKER_TRANSPORT_OPTIONS = {**CELERY_BROKER_TRANSPORT_OPTIONS, "polling_interval": 0.01}

"""The product settings plus the one change the benchmarks still propose (``--candidate``).

Without inotify (not Linux) the filesystem broker looks for new messages every 100 ms, so a worker
picks a run up ~50 ms after it is queued on average; here it looks every 10 ms (an idle worker then
lists a folder 100 times a second). On Linux the worker wakes on inotify and this changes only its
idle look interval's fallback. Only settings: the benchmarks select this module with
``DJANGO_SETTINGS_MODULE=bench.candidate_settings`` (their ``--candidate`` option), for their own
process and the worker they start. The other candidates measured earlier (SQLite ``IMMEDIATE``
transactions, ``synchronous=NORMAL``, one model client per process) ship in the product now.
"""

from reviewer.settings import *  # noqa: F403
from reviewer.settings import CELERY_BROKER_TRANSPORT_OPTIONS, CELERY_BROKER_URL

if CELERY_BROKER_URL.startswith("filesystem"):
    CELERY_BROKER_TRANSPORT_OPTIONS = {**CELERY_BROKER_TRANSPORT_OPTIONS, "polling_interval": 0.01}

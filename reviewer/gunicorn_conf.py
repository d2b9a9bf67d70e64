"""gunicorn's settings for this app, used by the demo and by production:

    gunicorn -c python:reviewer.gunicorn_conf reviewer.wsgi

Command-line options win over these (the demo passes --bind). Sized on the 2-core machine with
bench/load.py (README, Performance): the pages are CPU-bound Python, so one process per core; many
threads each, so that 50 clients are all being served rather than queued behind a few (of 2x4, 3x4,
4x2, 3x8, 3x16 and 2x16 workers x threads, 2x16 gave the most requests and the lowest p95).

The worker is gunicorn's threaded worker with one change (reviewer/operations/gunicorn_worker.py): a thread
gets a connection only once its request's headers are in, and a connection whose headers take
longer than 10 s is closed, so slow clients cannot take the threads (docs/deploy.md).
"""

import os

bind = os.environ.get("GUNICORN_BIND") or "127.0.0.1:8000"
workers = int(os.environ.get("WEB_CONCURRENCY") or 2)
threads = int(os.environ.get("GUNICORN_THREADS") or 16)
worker_class = "reviewer.operations.gunicorn_worker.HeaderTimeoutWorker"  # gthread, slow headers off-thread
keepalive = 5
timeout = 30
graceful_timeout = 5  # SIGTERM: requests in flight get this long, then the workers are stopped
loglevel = "warning"


def post_fork(server, worker):
    """Export traces from each web process when an OTLP endpoint is configured (agents.tracing): its
    batch span processor's thread is started here, after the fork, not in the master."""
    from agents import tracing

    tracing.configure()

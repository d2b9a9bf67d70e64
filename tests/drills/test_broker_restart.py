"""Restart drills: Redis restarts (SIGTERM, then SIGKILL) while a worker has runs in flight; PostgreSQL
restarts under an idle worker.

The worker runs as production runs it (``celery -A reviewer worker --pool threads``) against a
PostgreSQL and a Redis of the drill's own (tests/services.py), with beat beside it. Runs are held in
their draft call by the scripted model server while Redis goes away and comes back empty (no
persistence, as after a crash). What must follow:

- the worker process is still alive after each restart, and reconnects: a run started afterwards
  completes;
- the runs that were in flight end recorded: their answer comes back, the worker that kept them
  records them (or, had it lost them, the sweep would end them as ``worker_lost`` and retry them);
- beat keeps sending the sweeps to the new, empty Redis.

After a PostgreSQL restart the worker's pooled connections are dead; it stays up and the runs
started after the restart complete.
"""

from __future__ import annotations

import subprocess
import sys

import psycopg
import pytest
from kombu import Connection

from agents.testing.scripted_server import delay
from reviewer.celery import app as celery_app
from tests.drills.conftest import clean_script, good_reply
from tests.factories import wait_for
from tests.services import ROOT, django_call, migrate, product_env

pytestmark = [pytest.mark.postgres, pytest.mark.worker]

HELD_SECONDS = 5  # a held draft outlasts the restart: the run is in flight while Redis is down
TERMINAL = ("ok", "stopped", "interrupted")


def start(command: list[str], env: dict, log_path) -> subprocess.Popen:
    log = open(log_path, "ab")
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)


def statuses(pg_url: str, pks: list[int]) -> dict[int, str]:
    with psycopg.connect(pg_url) as conn:
        return dict(conn.execute("SELECT id, status FROM agents_run WHERE id = ANY(%s)", (pks,)).fetchall())


def enqueue(broker_url: str, pks: list[int]) -> None:
    """Send the runs' tasks to the drill's Redis, as ``start_run`` does on commit."""
    with Connection(broker_url) as connection:
        for pk in pks:
            celery_app.send_task("agents.tasks.execute_run", args=[pk], connection=connection)


def log_text(path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def drill_env(private_postgres, private_redis, fake_openai, tmp_path, markers: list[str]) -> tuple[dict, dict]:
    """The product's environment on the drill's servers, migrated, with the demo incidents and a
    queued reflection run (not enqueued) for each marker, answered by the marker's script."""
    env = product_env(tmp_path, private_postgres.url(), private_redis.url(),
                      OPENAI_API_KEY="sk-drill-test", OPENAI_BASE_URL=fake_openai.base_url,
                      OPENAI_MODEL="drill-model", OPENAI_MAX_RETRIES="0", OPENAI_TIMEOUT_SECONDS="60")
    migrate(env)
    runs = django_call(env, "from agents.store import load_demo_data\nfrom agents.tasks import start_run\n"
                            "from agents.testing.scripted_demo import GOAL\n"
                            "from reviewer.demo.seed import load_incidents\n"
                            "load_demo_data()\n"
                            "incident = {i.incident_id: i for i in load_incidents()}['inc_pay_2041']\n"
                            "result = {m: start_run(pipeline='reflection', goal=f'{GOAL} [{m}]', incident=incident,"
                            f" enqueue=False)[0].pk for m in {markers!r}}}")
    return env, runs


def start_worker(env: dict, log_path) -> subprocess.Popen:
    """A worker as docs/deploy.md runs it (the threads pool), once it says it is ready."""
    worker = start([sys.executable, "-m", "celery", "-A", "reviewer", "worker", "--pool", "threads",
                    "--concurrency", "8", "--loglevel", "INFO"], env, log_path)
    wait_for(lambda: " ready." in log_text(log_path) or worker.poll() is not None, timeout=60,
             message="the worker to start")
    assert worker.poll() is None, log_text(log_path)[-3000:]
    return worker


def test_a_worker_with_runs_in_flight_survives_graceful_and_hard_redis_restarts(
        private_postgres, private_redis, fake_openai, tmp_path):
    held = {restart: [f"held-{restart}-{n}" for n in range(2)] for restart in range(2)}
    fresh = {restart: f"after-{restart}" for restart in range(2)}
    for restart in range(2):
        for marker in held[restart]:
            fake_openai.script_for(f"[{marker}]", delay(HELD_SECONDS, good_reply("draft")), good_reply("review"))
        fake_openai.script_for(f"[{fresh[restart]}]", *clean_script())
    env, runs = drill_env(private_postgres, private_redis, fake_openai, tmp_path,
                          [*held[0], *held[1], *fresh.values()])
    worker_log, beat_log = tmp_path / "worker.log", tmp_path / "beat.log"
    worker = start_worker(env, worker_log)
    beat = start([sys.executable, "-m", "celery", "-A", "reviewer", "beat", "--loglevel", "INFO",
                  "--schedule", str(tmp_path / "beat-schedule")], env, beat_log)
    try:
        for restart, hard in enumerate((False, True)):
            pks = [runs[marker] for marker in held[restart]]
            enqueue(private_redis.url(), pks)
            wait_for(lambda pks=pks: set(statuses(private_postgres.url(), pks).values()) == {"running"},
                     timeout=30, message="the held runs to be running")
            private_redis.restart(hard=hard)
            wait_for(lambda: "Connected to" in log_text(worker_log).rpartition("Connection to broker lost")[2]
                     or worker.poll() is not None, timeout=30, message="the worker to reconnect")
            assert worker.poll() is None, f"the worker died:\n{log_text(worker_log)[-4000:]}"

            after = [runs[fresh[restart]]]
            enqueue(private_redis.url(), after)
            wait_for(lambda after=after: set(statuses(private_postgres.url(), after).values()) == {"ok"}, timeout=30,
                     message=f"the run started after restart {restart + 1} to complete")

        in_flight = [runs[marker] for marker in held[0] + held[1]]
        wait_for(lambda: set(statuses(private_postgres.url(), in_flight).values()) <= set(TERMINAL), timeout=30,
                 message="the runs in flight during the restarts to end")
        assert set(statuses(private_postgres.url(), in_flight).values()) == {"ok"}
        assert worker.poll() is None and beat.poll() is None
        # Beat sends the sweeps (at start and every 30 s) to the Redis that came back.
        wait_for(lambda: "Task agents.tasks.sweep_lost_runs[" in log_text(worker_log).rpartition(
                     "Connection to broker lost")[2], timeout=40, every=0.5,
                 message="beat's sweep to reach the worker after the last restart")
    finally:
        for process in (worker, beat):
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)


def test_a_worker_survives_a_postgres_restart_and_runs_what_comes_after(
        private_postgres, private_redis, fake_openai, tmp_path):
    markers = ["before", *(f"after-{n}" for n in range(3))]
    for marker in markers:
        fake_openai.script_for(f"[{marker}]", *clean_script())
    env, runs = drill_env(private_postgres, private_redis, fake_openai, tmp_path, markers)
    worker = start_worker(env, tmp_path / "worker.log")
    try:
        before = [runs["before"]]
        enqueue(private_redis.url(), before)  # the worker's pool holds connections from here on
        wait_for(lambda: set(statuses(private_postgres.url(), before).values()) == {"ok"}, timeout=30,
                 message="the run before the restart")

        private_postgres.restart()

        after = [runs[marker] for marker in markers[1:]]
        enqueue(private_redis.url(), after)
        wait_for(lambda: set(statuses(private_postgres.url(), after).values()) == {"ok"}, timeout=30,
                 message="the runs after the restart")
        assert worker.poll() is None
    finally:
        worker.kill()
        worker.wait(timeout=10)

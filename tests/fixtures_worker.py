"""A real Celery worker process for integration tests, sharing the test database and the broker."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from django.conf import settings
from django.db import connection

ROOT = Path(__file__).parents[1]


def database_url() -> str:
    """The URL of the database this test is using (the test database), for another process."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    if connection.vendor == "postgresql":
        auth = quote(db["USER"] or "") + (":" + quote(db["PASSWORD"]) if db.get("PASSWORD") else "")
        return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    raise RuntimeError(f"no worker support for {connection.vendor}")


class Worker:
    def __init__(self, log_path: Path, env: dict):
        self.log_path = log_path
        self.env = env
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 30) -> "Worker":
        self.log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "reviewer", "worker", "--pool", "threads", "--concurrency", "4",
             "--loglevel", "INFO", "--without-gossip", "--without-mingle", "-n", f"test-{os.getpid()}@%h"],
            cwd=ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while b" ready." not in self.log_path.read_bytes():
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the worker did not start:\n{self.log_path.read_text(errors='replace')[-3000:]}")
            time.sleep(0.1)
        return self

    def kill(self) -> None:
        """SIGKILL: no chance to clean up, as when a machine dies."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.close()


@pytest.fixture
def worker_env(transactional_db, tmp_path):
    """Environment for a worker process: the test settings, this test's database, the same broker."""
    if settings.CELERY_BROKER_URL.startswith("filesystem"):
        shutil.rmtree(settings.CELERY_BROKER_FOLDER, ignore_errors=True)
        settings.CELERY_BROKER_FOLDER.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LLM_"))}
    env.update(DJANGO_SETTINGS_MODULE="reviewer.test_settings", DATABASE_URL=database_url(), PYTHONUNBUFFERED="1")
    return env


@pytest.fixture
def start_worker(worker_env, tmp_path):
    """``start_worker(OPENAI_BASE_URL=...)`` starts a worker with extra environment; all stop at the end."""
    workers: list[Worker] = []

    def start(**extra_env) -> Worker:
        worker = Worker(tmp_path / f"worker-{len(workers)}.log", {**worker_env, **extra_env}).start()
        workers.append(worker)
        return worker

    yield start
    for worker in workers:
        worker.stop()


def wait_for(predicate, timeout: float = 30, every: float = 0.05, message: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout}s waiting for {message}")

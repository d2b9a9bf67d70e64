"""Fixtures every test folder uses: named users for every role, the demo incident data, real runs
made by the offline model, the scripted OpenAI-compatible server (and a model scripted on it in both
output modes), and real Celery worker processes. Test modules build on these instead of inventing
their own; rows made by hand come from ``tests/factories.py``."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import hypothesis
import pytest
from django.conf import settings

from agents.core.llm.breaker import reset_breakers
from agents.core.llm.client import OpenAIChat
from agents.core.llm.endpoints import Endpoint
from agents.core.policy import ModelSettings
from agents.testing.scripted_server import Reply, ScriptedServer, content, tool_call
from reviewer.roles import OPS, POLICY_ADMIN, SUPPORT_LEAD
from tests.factories import database_url, make_user

# No test depends on how fast this machine is: Hypothesis's per-example deadline is off for the whole
# suite (speed is measured in bench/).
hypothesis.settings.register_profile("suite", deadline=None)
hypothesis.settings.load_profile("suite")

settings.VAR_DIR.mkdir(parents=True, exist_ok=True)  # SQLite's test database file lives here
settings.STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # WhiteNoise warns about a missing folder

ROOT = Path(__file__).parents[1]
TEST_KEY = "sk-test-key-never-shown"


# -- which pass of the test command runs a test ---------------------------------------------------
# .ci/test runs the suite on SQLite with the embedded broker, then on PostgreSQL with Redis. A test
# that touches neither the database nor the broker of the pass gives the same answer twice, so it is
# marked ``backend_independent`` and the second pass leaves it out (``-m "not backend_independent"``).

# A test that asks for one of these (directly or through another fixture) uses the pass's database;
# a test without any of them cannot: pytest-django refuses it the database.
DATABASE_FIXTURES = {"db", "transactional_db", "django_db_reset_sequences", "django_db_serialized_rollback",
                     "live_server", "postgres", "worker_env", "start_worker"}
# What only the second pass shows: these never move to the first pass alone.
SECOND_PASS_MARKERS = ("postgres", "worker")


def uses_the_pass_backends(item) -> bool:
    return bool(DATABASE_FIXTURES & set(getattr(item, "fixturenames", ()))) or any(
        item.get_closest_marker(name) for name in ("django_db", *SECOND_PASS_MARKERS))


# The folders whose files take minutes each (drills with real processes, the demo's processes, the
# browser): they run first, so that no process of a pass starts one of them near the end and
# finishes it alone while the other waits (pass 1 hands out whole files, in this order:
# --no-loadscope-reorder). The other files follow, those with the most tests first.
LONG_FIRST = ("tests/drills/", "tests/processes/", "tests/browser/")


def pytest_collection_modifyitems(config, items):
    """Mark every test that uses no database fixture or marker, no live server and no worker as
    ``backend_independent``. A test may also say so itself when it brings its own database and
    broker (``tests/processes/test_demo_processes.py``); a test that needs PostgreSQL may not.

    Then the long folders first, the files with the most tests next (LONG_FIRST). pytest-django has
    already put each file's tests that use a transaction last; a file run after a transactional test
    finds the rows a new database has, since a flush runs the same post_migrate hooks that a
    migration does."""
    for item in items:
        explicit = item.get_closest_marker("backend_independent")
        if explicit is None and not uses_the_pass_backends(item):
            item.add_marker(pytest.mark.backend_independent)
        elif explicit is not None and ("postgres" in item.fixturenames or item.get_closest_marker("postgres")):
            raise pytest.UsageError(f"{item.nodeid} needs PostgreSQL: it cannot be backend_independent")
    per_file = Counter(item.nodeid.split("::")[0] for item in items)
    items.sort(key=lambda item: (
        next((i for i, folder in enumerate(LONG_FIRST) if item.nodeid.startswith(folder)), len(LONG_FIRST)),
        -per_file[item.nodeid.split("::")[0]]))


# -- people and demo data -------------------------------------------------------------------------


@pytest.fixture
def users(db):
    """A support lead, a second lead, an ops person, an admin and an outsider with no role."""
    return SimpleNamespace(
        lead=make_user("lead", group=SUPPORT_LEAD, first_name="Lena"),
        lead2=make_user("lead2", group=SUPPORT_LEAD, first_name="Lars"),
        ops=make_user("ops", group=OPS, first_name="Omar"),
        admin=make_user("admin", group=POLICY_ADMIN, staff=True),
        outsider=make_user("outsider"),
    )


@pytest.fixture
def login(client, users):
    """``login("lead")`` logs the test client in as that user and returns the client."""

    def log_in(name: str):
        client.force_login(getattr(users, name))
        return client

    return log_in


@pytest.fixture
def demo_data(db):
    """The demo incidents and the customers, plans and payments the routing specialists read."""
    from agents.store import load_demo_data
    from reviewer.demo.seed import load_incidents

    load_demo_data()
    return {incident.incident_id: incident for incident in load_incidents()}


@pytest.fixture
def demo_runs(demo_data, users):
    """The demo set of runs, made for real by the offline model: approved, revised, escalated,
    blocked and failed runs with their trace steps, model calls, reviews, audits and escalations."""
    from reviewer.demo.seed import run_demo_pipelines

    return run_demo_pipelines(user=users.ops)


# -- the model: the real openai SDK against the scripted server -------------------------------------


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """On PostgreSQL, the test database lets its flush between tests truncate the ledger, which the
    ledger's trigger refuses in any other database (reviewer/models/ledger.py)."""
    from django.db import connection

    with django_db_blocker.unblock():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(f"ALTER DATABASE {connection.ops.quote_name(connection.settings_dict['NAME'])} "
                               "SET reviewer.flushing_tests = 'on'")
            connection.close()
            connection.close_pool()  # the setting holds from the next connection on: none is kept from before


@pytest.fixture
def postgres(transactional_db):
    """A test that needs PostgreSQL (real concurrency, its pool) skips, saying so, on SQLite."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: set DATABASE_URL=postgres://... (the test command starts one)")


@pytest.fixture
def fake_openai():
    """A started local OpenAI-compatible server (``agents/testing/scripted_server.py``), stopped afterwards."""
    with ScriptedServer() as server:
        yield server


class Scripted:
    """A scripted model: the real openai SDK, pointed at the scripted server, in either output mode.

        def test_x(scripted):
            scripted.answer("submit_draft", {"draft": "..."})    # a tool call, or JSON content in json mode
            result = run_reflection(goal, context, scripted.policy(ReflectionPolicy), scripted.llm)
    """

    def __init__(self, fake: ScriptedServer, mode: str):
        self.fake = fake
        self.mode = mode
        self.settings = ModelSettings(
            model="test-model", structured_output=mode, timeout_seconds=2.0, max_retries=0
        )
        self.endpoint = Endpoint("test", fake.base_url, "TEST_KEY", TEST_KEY)

    @property
    def llm(self) -> OpenAIChat:
        return OpenAIChat(self.settings, endpoint=self.endpoint, sleep=lambda seconds: None)

    def policy(self, cls, **overrides):
        """A policy of ``cls`` whose model settings point at the scripted server."""
        return cls(model=self.settings, **overrides)

    def answer(self, tool: str, payload) -> Scripted:
        """A structured answer: a tool call in tools mode, JSON content in json mode."""
        if self.mode == "tools":
            self.fake.script(tool_call(tool, payload))
        else:
            self.fake.script(content(payload if isinstance(payload, str) else json.dumps(payload)))
        return self

    def text(self, text: str | None) -> Scripted:
        self.fake.script(content(text))
        return self

    def reply(self, *replies: Reply) -> Scripted:
        self.fake.script(*replies)
        return self

    def with_settings(self, **changes) -> Scripted:
        self.settings = dataclasses.replace(self.settings, **changes)
        return self


@pytest.fixture(params=["tools", "json"])
def scripted(request, fake_openai):
    """Both structured-output modes: a tool call, and a JSON object in JSON mode."""
    reset_breakers()
    yield Scripted(fake_openai, request.param)
    reset_breakers()


class HeldReplies:
    """Answers the scripted server gives only when the test says so: a test that watches a run in
    flight releases the model's next answer once it has seen what it came for, instead of racing a
    scripted delay against a loaded machine. Installed as the server's responder, so it answers the
    requests that no script covers, in order, each after its ``release()``."""

    HOLD_SECONDS = 60  # a test that failed before releasing: the request then gets the server's 500

    def __init__(self, replies: list[Reply]):
        self._replies = list(replies)
        self._released = threading.Semaphore(0)
        self._lock = threading.Lock()

    def release(self, count: int = 1) -> None:
        for _ in range(count):
            self._released.release()

    def __call__(self, body: dict) -> Reply | None:
        if not self._released.acquire(timeout=self.HOLD_SECONDS):
            return None
        with self._lock:
            return self._replies.pop(0) if self._replies else None


@pytest.fixture
def held_replies(fake_openai):
    """``held = held_replies(reply, ...)``: the scripted server's unscripted requests get these
    replies in order, each once ``held.release()`` is called."""

    def hold(*replies: Reply) -> HeldReplies:
        fake_openai.responder = HeldReplies(list(replies))
        return fake_openai.responder

    return hold


@pytest.fixture
def scripted_tools(fake_openai):
    """Tool-call mode only, for tests whose point is not the output mode."""
    reset_breakers()
    yield Scripted(fake_openai, "tools")
    reset_breakers()


@pytest.fixture
def clean_model_env(monkeypatch):
    """No model variables but the ones a test sets (``clean_model_env.setenv``); no breaker left from
    another test."""
    for name in [k for k in os.environ if k.startswith(("OPENAI_", "LLM_"))]:
        monkeypatch.delenv(name)
    reset_breakers()
    yield monkeypatch
    reset_breakers()


@pytest.fixture(autouse=True)
def answers_folder(tmp_path, monkeypatch) -> Path:
    """The answers a worker keeps on disk before the database has them (reviewer.outbox.answers): a
    folder per test, as each test has its own database rows (xdist processes share VAR_DIR)."""
    folder = tmp_path / "outbox-answers"
    monkeypatch.setattr(settings, "DELIVERY_ANSWERS_DIR", folder)
    return folder


# -- a real Celery worker process, sharing the test database and the broker ------------------------


class Worker:
    def __init__(self, log_path: Path, env: dict, *, pool: str = "threads", concurrency: int = 4):
        self.log_path = log_path
        self.env = env
        self.pool, self.concurrency = pool, concurrency  # production's pool is threads (docs/deploy.md)
        self.process: subprocess.Popen | None = None

    def start(self, timeout: float = 30) -> Worker:
        self.log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "reviewer", "worker", "--pool", self.pool,
             "--concurrency", str(self.concurrency),
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
        """At the end of a test: SIGKILL. Nothing is asserted after the test, and a warm shutdown
        (SIGTERM) waits 5-7 s for the worker's broker loop to come round, for every worker test."""
        if self.process and self.process.poll() is None:
            self.kill()
        self.log.close()


@pytest.fixture
def worker_env(transactional_db, tmp_path, answers_folder):
    """Environment for a worker process: the test settings, this test's database, the same broker, the
    same folder for the answers kept on disk."""
    if settings.CELERY_BROKER_URL.startswith("filesystem"):
        shutil.rmtree(settings.CELERY_BROKER_FOLDER, ignore_errors=True)
        settings.CELERY_BROKER_FOLDER.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LLM_"))}
    env.update(DJANGO_SETTINGS_MODULE="reviewer.test_settings", DATABASE_URL=database_url(),
               CELERY_BROKER_URL=settings.CELERY_BROKER_URL, DELIVERY_ANSWERS_DIR=str(answers_folder),
               PYTHONUNBUFFERED="1")
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


# -- a webhook receiver on loopback ----------------------------------------------------------------

WEBHOOK_SECRET = "whsec-test-secret-never-shown"


@pytest.fixture
def webhook_receiver(monkeypatch):
    """``webhook_receiver(fail_rate=0.3)`` starts a receiver (tests/factories.py) and declares it as the
    destination ``hook`` (secret in ``HOOK_SECRET``) in this process's environment; all stop at the end."""
    from tests.factories import WebhookReceiver

    receivers = []

    def start(**options) -> WebhookReceiver:
        receiver = WebhookReceiver(WEBHOOK_SECRET, **options)
        receivers.append(receiver)
        monkeypatch.setenv("OUTBOUND_DESTINATIONS", f"hook={receiver.url}|HOOK_SECRET")
        monkeypatch.setenv("HOOK_SECRET", WEBHOOK_SECRET)
        return receiver

    yield start
    for receiver in receivers:
        receiver.stop()


# -- private PostgreSQL and Redis servers, for the drills that stop and restart them ---------------


def _drill_pass_only() -> None:
    """A drill with servers of its own runs once, in the PostgreSQL + Redis pass (it is marked
    ``postgres``, so that pass selects it); in the SQLite pass it skips, saying so."""
    if not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        pytest.skip("a drill with its own PostgreSQL and Redis: the PostgreSQL + Redis pass runs it")


@pytest.fixture(scope="session")
def migrated_postgres_cluster():
    """The data folder of a PostgreSQL cluster migrated once per test process (tests/services.py),
    which every drill's private server copies; removed at the end."""
    from tests.services import migrated_cluster

    template = migrated_cluster()
    yield template.data
    template.remove()


@pytest.fixture
def private_postgres(request):
    """A PostgreSQL server of this test's own (tests/services.py) that it may stop and restart, its
    database migrated: a copy of ``migrated_postgres_cluster``."""
    from tests.services import PostgresServer, postgres_bin

    _drill_pass_only()
    if postgres_bin() is None:
        pytest.skip("no PostgreSQL server installed (apt-get install postgresql)")
    server = PostgresServer(template=request.getfixturevalue("migrated_postgres_cluster")).start()
    yield server
    server.remove()


@pytest.fixture
def private_redis(tmp_path):
    """A Redis server of this test's own (tests/services.py) that it may stop and restart."""
    from tests.services import RedisServer

    _drill_pass_only()
    if shutil.which("redis-server") is None:
        pytest.skip("no redis-server installed (apt-get install redis-server)")
    server = RedisServer(tmp_path / "redis").start()
    yield server
    server.stop(hard=True)

"""A flood of deliveries does not delay a run: with 10,000 deliveries waiting in the deliveries
queue, a run submitted starts within 5 s and finishes as usual.

The product runs as in production: its own PostgreSQL and Redis (tests/services.py) and one real
Celery worker per queue, started with the commands of the documented layout
(``reviewer.celery.WORKERS``, docs/deploy.md "Queues and workers"). An update is published to 10,000
status page subscribers through the product's own ``publish``: its outbox rows are committed and
their tasks sent to Redis. The mail server is a tarpit (it accepts connections and never greets), so
the deliveries worker's threads hang on their first sends and the rest of the flood stays queued in
Redis, as behind a slow mail server. Then a run is started as the desk starts one (``start_run``),
answered by the scripted model server.

With one queue for everything the run would wait behind all 10,000; here it waits for nothing. The
drill measures the delay from its submission to its ``started_at`` in the database, and waits at
most 5 s for it.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading

import psycopg
import pytest
import redis

from reviewer.celery import DELIVERIES, RUNS, WORKERS, worker_command
from tests.drills.conftest import clean_script
from tests.factories import wait_for
from tests.services import ROOT, django_call, migrate, product_env

pytestmark = [pytest.mark.postgres, pytest.mark.worker]

FLOOD = 10_000
START_WITHIN_SECONDS = 5
MARKER = "after-the-flood"

PUBLISH_TO_EVERY_SUBSCRIBER = """
from django.utils import timezone
from agents.store import load_demo_data
from agents.models import Run
from reviewer.models import Delivery, DeliveryChannel, Subscriber
from reviewer.outbox.publishing import publish
from reviewer.roles import OPS
from tests.factories import make_incident, make_run, make_user
from reviewer.demo.seed import load_incidents
load_demo_data()  # the policies
load_incidents()  # the demo incidents: the run below writes about one
DeliveryChannel.objects.create(name="Subscribers", kind="subscribers")
now = timezone.now()
Subscriber.objects.bulk_create(Subscriber(email=f"customer-{n}@example.com", confirmed_at=now)
                               for n in range(%(flood)d))
incident = make_incident("inc_flood")
text = "We are investigating slow payments in the EU. Current status: degraded."
run = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=text)
update = publish(incident, text, actor=make_user("ops", group=OPS), source_run=run)
result = {"rows": Delivery.objects.filter(update=update, subscriber__isnull=False).count(),
          "enqueued": not update.enqueued.failed}
"""

START_A_RUN = """
from agents.models import Incident
from agents.tasks import start_run
from agents.testing.scripted_demo import GOAL
incident = Incident.objects.get(incident_id="inc_pay_2041")
run, _ = start_run(pipeline="reflection", goal=f"{GOAL} [%(marker)s]", incident=incident)
result = run.pk
"""


class Tarpit:
    """A mail server that takes every connection and never says a word: each send waits on it."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0), backlog=128)
        self.port = self.server.getsockname()[1]
        self.held: list[socket.socket] = []
        self.stopped = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stopped.is_set():
            try:
                connection, _ = self.server.accept()
            except OSError:
                return
            self.held.append(connection)

    def stop(self) -> None:
        self.stopped.set()
        self.server.close()
        for connection in self.held:
            connection.close()


def log_text(path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def start_worker(name: str, env: dict, log_path) -> subprocess.Popen:
    """The worker ``name`` of the documented layout (its queues and threads), once it says it is ready."""
    log = open(log_path, "ab")
    worker = subprocess.Popen([sys.executable, "-m", *worker_command(name), "--loglevel", "INFO"], cwd=ROOT,
                              env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    wait_for(lambda: " ready." in log_text(log_path) or worker.poll() is not None, timeout=60,
             message=f"the {name} worker to start")
    assert worker.poll() is None, log_text(log_path)[-3000:]
    return worker


def run_row(pg_url: str, pk: int) -> dict:
    with psycopg.connect(pg_url) as conn:
        status, created, started = conn.execute(
            "SELECT status, created_at, started_at FROM agents_run WHERE id = %s", (pk,)).fetchone()
    return {"status": status, "created_at": created, "started_at": started}


def test_a_run_starts_within_5_s_while_10000_deliveries_wait_in_their_queue(
        private_postgres, private_redis, fake_openai, tmp_path):
    tarpit = Tarpit()
    env = product_env(
        tmp_path, private_postgres.url(), private_redis.url(),
        OPENAI_API_KEY="sk-drill-test", OPENAI_BASE_URL=fake_openai.base_url, OPENAI_MODEL="drill-model",
        OPENAI_MAX_RETRIES="0", OPENAI_TIMEOUT_SECONDS="60",
        EMAIL_BACKEND="django.core.mail.backends.smtp.EmailBackend", EMAIL_HOST="127.0.0.1",
        EMAIL_PORT=str(tarpit.port), EMAIL_TIMEOUT="300", DEFAULT_FROM_EMAIL="status@drill.example")
    fake_openai.script_for(f"[{MARKER}]", *clean_script())
    migrate(env)
    broker = redis.Redis.from_url(private_redis.url())
    workers = {}
    try:
        for name in WORKERS:
            workers[name] = start_worker(name, env, tmp_path / f"worker-{name}.log")

        published = django_call(env, PUBLISH_TO_EVERY_SUBSCRIBER % {"flood": FLOOD}, timeout=600)
        assert published == {"rows": FLOOD, "enqueued": True}
        # The deliveries worker's threads hang at the tarpit; the rest of the flood is in Redis.
        threads = WORKERS["deliveries"][1]
        wait_for(lambda: len(tarpit.held) >= threads, timeout=60,
                 message=f"the deliveries worker's {threads} threads to hang at the mail server")
        waiting = broker.llen(DELIVERIES)
        assert waiting >= FLOOD - 2 * threads, f"only {waiting} deliveries wait in Redis"

        # Submitted as the desk submits one: the run's row is committed (its created_at) and its task sent.
        pk = django_call(env, START_A_RUN % {"marker": MARKER})

        def started():
            assert all(w.poll() is None for w in workers.values()), "a worker died"
            return run_row(private_postgres.url(), pk)["started_at"] is not None

        try:
            wait_for(started, timeout=START_WITHIN_SECONDS, every=0.05, message="the run to start")
        except AssertionError:
            row = run_row(private_postgres.url(), pk)
            pytest.fail(f"run {pk} did not start within {START_WITHIN_SECONDS} s of its submission while "
                        f"{broker.llen(DELIVERIES)} deliveries waited in their queue: it is {row['status']}, "
                        f"{broker.llen(RUNS)} message(s) in the runs queue; the runs worker's log ends:\n"
                        f"{log_text(tmp_path / 'worker-runs.log')[-2000:]}")
        row = run_row(private_postgres.url(), pk)
        delay = (row["started_at"] - row["created_at"]).total_seconds()
        print(f"\nrun {pk} started {delay:.3f} s after it was submitted, with {waiting} deliveries waiting")
        assert delay < START_WITHIN_SECONDS, f"run {pk} started {delay:.1f} s after it was submitted"

        wait_for(lambda: run_row(private_postgres.url(), pk)["status"] in ("ok", "stopped", "interrupted"),
                 timeout=60, message="the run to finish")
        assert run_row(private_postgres.url(), pk)["status"] == "ok"
        assert broker.llen(DELIVERIES) >= FLOOD - 4 * threads  # the flood is still there: the run went past it
    finally:
        for worker in workers.values():
            if worker.poll() is None:
                worker.kill()
                worker.wait(timeout=10)
        tarpit.stop()

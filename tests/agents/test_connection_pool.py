"""The connection pool on PostgreSQL: a run waiting on the model, and a heartbeat between beats, hold
no database connection, so many runs in flight share a few (docs/running.md, "Worker pool").

Needs PostgreSQL: the pool is psycopg_pool's, which SQLite does not use.
"""

import dataclasses
import threading

import pytest
from django.db import connection

from agents import tasks
from agents.core.llm.base import LLM, ModelReply, StageRequest
from agents.core.llm.offline import OfflineModel
from agents.models import Run
from agents.tasks import Heartbeat, run_now, start_run

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def pool(postgres):
    assert connection.pool is not None, "the product settings pool PostgreSQL connections"
    return connection.pool


def in_thread(function):
    """``function()`` in a fresh thread (its own Django connection, as a worker thread has); its value."""
    box = {}

    def go():
        try:
            box["value"] = function()
        except BaseException as error:  # shown by the test, not lost in the thread
            box["error"] = error

    thread = threading.Thread(target=go)
    thread.start()
    thread.join(timeout=60)
    if "error" in box:
        raise box["error"]
    return box["value"]


@dataclasses.dataclass
class Watching:
    """A model that notes, while each call is in flight, whether the run's thread holds a connection
    and how many of the pool's connections are lent out."""

    inner: LLM
    seen: list = dataclasses.field(default_factory=list)
    label = "watching"
    endpoint = "offline"

    def complete(self, request: StageRequest) -> ModelReply:
        stats = connection.pool.get_stats()
        self.seen.append((request.stage, connection.connection is not None,
                          stats["pool_size"] - stats["pool_available"]))
        return self.inner.complete(request)


def test_a_run_waiting_on_the_model_holds_no_connection(pool, demo_data, settings, monkeypatch):
    # The heartbeat's side thread borrows a connection for a moment every few seconds; on a busy
    # machine one of its beats can fall inside a model call and be counted as the run's. This run
    # gets a heartbeat of its own whose first beat is an hour away (its beats are the test below).
    settings.RUN_HEARTBEAT_SECONDS = 3600
    monkeypatch.setattr(tasks, "HEARTBEAT", Heartbeat())
    run, _ = start_run(pipeline="reflection", goal="Write the customer update.",
                       incident=demo_data["inc_pay_2041"], enqueue=False)
    connection.close()  # this test's own connection goes back too
    stats = pool.get_stats()
    lent_before = stats["pool_size"] - stats["pool_available"]  # what other threads of the suite hold
    model = Watching(OfflineModel())

    in_thread(lambda: run_now(run.pk, llm=model))

    assert [stage for stage, _, _ in model.seen] == ["draft", "review", "revise"]
    assert all(not holds for _, holds, _ in model.seen), model.seen  # the run's thread gave it back
    assert all(lent == lent_before for _, _, lent in model.seen), model.seen  # to the pool: none more lent
    run.refresh_from_db()
    assert (run.status, run.stop_reason) == ("ok", "success")  # it took one again for what followed


def test_six_runs_waiting_on_the_model_at_once_hold_no_connection(pool, demo_data):
    runs = [start_run(pipeline="reflection", goal=f"Write the customer update {i}.",
                      incident=demo_data["inc_pay_2041"], enqueue=False)[0] for i in range(6)]
    barrier = threading.Barrier(len(runs))
    holding = []

    @dataclasses.dataclass
    class Together:
        """Each run's first call notes whether its thread holds a connection, then waits until all six
        are inside their first model call."""

        inner: LLM
        label = "together"
        endpoint = "offline"

        def complete(self, request: StageRequest) -> ModelReply:
            if request.stage == "draft":
                holding.append(connection.connection is not None)
                barrier.wait(timeout=30)
            return self.inner.complete(request)

    def execute(pk: int) -> None:  # as the worker's task does: the connection goes back at the end
        try:
            run_now(pk, llm=Together(OfflineModel()))
        finally:
            connection.close()

    threads = [threading.Thread(target=execute, args=(run.pk,)) for run in runs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert holding == [False] * 6  # six runs in flight at once, none holding a connection
    assert set(Run.objects.values_list("status", flat=True)) == {"ok"}


def test_a_heartbeat_hands_its_connection_back_between_beats(pool, demo_data):
    run, _ = start_run(pipeline="routing", goal="refund user_id=42", enqueue=False)
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING)
    before = Run.objects.get(pk=run.pk).heartbeat_at
    heartbeat = Heartbeat()

    def beat_once():
        with heartbeat.keep(run.pk):
            return heartbeat.beat(), connection.connection is not None

    assert in_thread(beat_once) == (1, False)  # touched the run, and holds no connection after
    assert Run.objects.get(pk=run.pk).heartbeat_at != before

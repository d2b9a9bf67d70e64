"""The embedded broker (reviewer/operations/broker.py): a waiting consumer wakes when a message arrives.

kombu's filesystem transport sleeps ``polling_interval`` between two looks at the folder; here the
polling interval is set to 60 s, so a consumer that still polled could not get a message in time.
"""

import threading
import time
import uuid

import pytest
from kombu import Connection

from reviewer.operations import broker


def connect(folder, polling_interval=60.0) -> Connection:
    (folder / "control").mkdir(exist_ok=True)
    return Connection("filesystem://", transport="reviewer.operations.broker:Transport", transport_options={
        "data_folder_in": str(folder), "data_folder_out": str(folder), "control_folder": str(folder / "control"),
        "polling_interval": polling_interval,
    })


def queue_name() -> str:
    # kombu remembers the queues and bindings it declared per process (not per folder): one name per test
    return f"runs-{uuid.uuid4().hex[:8]}"


def put_later(folder, name, body, after: float) -> threading.Thread:
    def put():
        time.sleep(after)
        with connect(folder) as conn, conn.SimpleQueue(name) as queue:
            queue.put(body)

    thread = threading.Thread(target=put)
    thread.start()
    return thread


@pytest.mark.skipif(broker.inotify_simple is None, reason="inotify is Linux only")
def test_a_waiting_consumer_gets_a_message_as_it_arrives_not_at_the_next_poll(tmp_path):
    name = queue_name()
    with connect(tmp_path) as conn, conn.SimpleQueue(name) as queue:
        producer = put_later(tmp_path, name, {"run": 1}, after=0.3)
        waited = time.monotonic()
        message = queue.get(block=True, timeout=30)  # a polling consumer sleeps min(60, 30) s first
        waited = time.monotonic() - waited
        producer.join()
        assert waited < 10, f"the consumer slept {waited:.1f} s: it polled instead of waking"
        assert message.payload == {"run": 1}
        message.ack()


def test_without_inotify_the_transport_polls_as_kombu_does(tmp_path, monkeypatch):
    monkeypatch.setattr(broker, "inotify_simple", None)
    name = queue_name()
    with connect(tmp_path, polling_interval=0.05) as conn, conn.SimpleQueue(name) as queue:
        producer = put_later(tmp_path, name, {"run": 2}, after=0.2)
        message = queue.get(block=True, timeout=10)
        producer.join()
        assert message.payload == {"run": 2}
        message.ack()


def test_an_idle_wait_ends_at_its_timeout(tmp_path):
    from queue import Empty

    with connect(tmp_path) as conn, conn.SimpleQueue(queue_name()) as queue, pytest.raises(Empty):
        queue.get(block=True, timeout=0.3)

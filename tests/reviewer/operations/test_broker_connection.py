"""What workers and beat do and log when the broker's connection drops (reviewer/celery.py,
reviewer/operations/broker.py)."""

import logging

import pytest
from kombu.exceptions import OperationalError
from kombu.message import Message
from redis.exceptions import ConnectionError as RedisConnectionError

from reviewer.celery import app
from reviewer.operations import broker
from tests.services import free_port


def test_a_lost_broker_is_tried_again_every_two_seconds_at_most():
    """kombu's waits grow to 30 s: a broker back after minutes was noticed up to 30 s late."""
    waits = []
    assert isinstance(app.connection_for_read(), broker.Connection)  # the workers' and beat's connections
    connection = app.amqp.Connection(f"redis://127.0.0.1:{free_port()}/0")  # nobody listens there
    with pytest.raises(OperationalError), connection:
        connection.ensure_connection(lambda error, interval: waits.append(interval), max_retries=3)
    assert waits == [1, 2, 2] and broker.RECONNECT_MAX_SECONDS == 2


class LostChannel:
    """A channel whose connection to the broker is gone: acknowledging fails."""

    no_ack_consumers = None

    def basic_ack(self, delivery_tag, multiple=False):
        raise RedisConnectionError("Connection closed by server.")


def test_an_acknowledgement_lost_with_the_broker_is_a_warning_that_says_what_follows(caplog):
    message = Message(body=b"{}", channel=LostChannel(), delivery_tag="tag-7")
    with caplog.at_level(logging.INFO, logger="celery.worker.request"):
        # What Celery's request does when a task with late acknowledgement ends.
        message.ack_log_error(logging.getLogger("celery.worker.request"), (RedisConnectionError,))
    [record] = caplog.records
    assert (record.levelname, record.exc_info) == ("WARNING", None)
    assert record.getMessage().startswith("task message tag-7 not acknowledged, the connection to the broker was lost")
    assert "delivered again after the visibility timeout" in record.getMessage()


def test_other_critical_lines_of_the_worker_stay_critical(caplog):
    with caplog.at_level(logging.INFO, logger="celery.worker.request"):
        logging.getLogger("celery.worker.request").critical("Unrecoverable error: %r", "boom")
    assert [(r.levelname, r.getMessage()) for r in caplog.records] == [("CRITICAL", "Unrecoverable error: 'boom'")]

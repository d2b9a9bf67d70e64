"""Publishing while the task queue (the Celery broker) is unreachable: the update is committed, so
the person gets the usual answer (201 in the API, the incident's page on the desk) with a note that
delivery will follow, never an error that a second click then answers "already published"; and the
outbox's sweep sends the deliveries once the broker is back. Starting a run in the same situation
answers 202, as it always did.

The broker is really unreachable: the Celery app sends to a Redis on a loopback port where nothing
listens. Real commits (``transaction=True``): the deliveries are enqueued when the transaction
commits, as in production."""

from __future__ import annotations

import os
import socket
from datetime import timedelta

import pytest
import time_machine
from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from agents.models import Run
from reviewer.celery import app
from reviewer.models import Delivery, DeliveryChannel, PublishedUpdate
from reviewer.outbox import tasks
from reviewer.outbox.publishing import DELIVERY_FOLLOWS
from tests.factories import make_incident, make_run, make_subscriber

pytestmark = pytest.mark.django_db(transaction=True)

TEXT = "We are investigating a problem in the EU. Current status: degraded."
BROKER_KEYS = ("broker_url", "broker_write_url", "broker_transport", "broker_transport_options")


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _use_broker(**conf) -> None:
    app.conf.update(conf)
    app._pool = None  # the connections and producers of the broker before are not reused
    app.amqp._producer_pool = None


def test_the_transport_the_broker_down_fixture_names_exists():
    # An import error would also look like a broker that is down: the fixture must name a real transport.
    from reviewer.operations.broker import RedisTransport

    assert RedisTransport.driver_type == "redis"


@pytest.fixture
def broker_down():
    """The Celery app sends to a Redis that is not there (as production's, stopped); restored after.
    Celery reads CELERY_BROKER_URL from the environment before its settings: it changes too."""
    before, environment = {key: app.conf[key] for key in BROKER_KEYS}, os.environ.get("CELERY_BROKER_URL")
    url = f"redis://127.0.0.1:{closed_port()}/0"
    os.environ["CELERY_BROKER_URL"] = url
    _use_broker(broker_url=url, broker_write_url=None, broker_transport="reviewer.operations.broker:RedisTransport",
                broker_transport_options={})
    yield
    if environment is None:
        del os.environ["CELERY_BROKER_URL"]
    else:
        os.environ["CELERY_BROKER_URL"] = environment
    _use_broker(**before)


@pytest.fixture
def passed_run(db):
    incident = make_incident()
    DeliveryChannel.objects.create(name="Subscribers", kind="subscribers")
    for address in ("ada@example.com", "bob@example.com"):
        make_subscriber(address)
    return make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=TEXT)


def sent_by_the_sweep(monkeypatch) -> list[int]:
    """The deliveries the sweep enqueues once the broker is back and their lease has passed."""
    sent = []
    monkeypatch.setattr(tasks.deliver, "delay", lambda pk: sent.append(pk))
    with time_machine.travel(timezone.now() + timedelta(seconds=settings.DELIVERY_LEASE_SECONDS + 1)):
        tasks.sweep_deliveries()
    return sorted(sent)


def test_a_publication_while_the_broker_is_down_answers_201_with_a_note_and_the_sweep_delivers_it(
        api, passed_run, broker_down, monkeypatch):
    ops = api("ops")

    response = ops.post(f"/runs/{passed_run.pk}/publish")

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["version"] == 1 and body["note"] == DELIVERY_FOLLOWS
    update = PublishedUpdate.objects.get(source_run=passed_run)
    rows = sorted(update.deliveries.values_list("pk", flat=True))
    assert len(rows) == 3  # the status page and two subscribers, committed and pending
    assert set(Delivery.objects.values_list("status", flat=True)) == {"pending"}
    again = ops.post(f"/runs/{passed_run.pk}/publish")  # a second click is told it is published, as ever
    assert again.status_code == 409 and again.json()["version"] == 1

    assert sent_by_the_sweep(monkeypatch) == rows


def test_a_publication_on_the_desk_while_the_broker_is_down_goes_to_the_incident_saying_delivery_follows(
        login, passed_run, broker_down):
    client = login("ops")

    response = client.post(reverse("publish_run", args=[passed_run.pk]),
                           {"title": "Problems in the EU", "state": "identified"}, follow=True)

    assert response.status_code == 200
    assert response.redirect_chain[-1][0].endswith("#updates")
    page = response.content.decode()
    assert "Published as update v1 for 2 channels. Delivery will follow" in page
    assert PublishedUpdate.objects.filter(source_run=passed_run).exists()


def test_starting_a_run_while_the_broker_is_down_answers_202(api, demo_data, broker_down):
    response = api("ops").post("/runs", {"pipeline": "routing", "goal": "My card was charged twice."})

    assert response.status_code == 202, response.content
    assert Run.objects.get(pk=response.json()["run_id"]).status == Run.Status.QUEUED


def test_a_publication_with_the_broker_up_has_no_note(api, passed_run, monkeypatch):
    sent = []
    monkeypatch.setattr(tasks.deliver, "delay", lambda pk: sent.append(pk))

    response = api("ops").post(f"/runs/{passed_run.pk}/publish")

    assert response.status_code == 201 and response.json()["note"] is None
    assert len(sent) == 3

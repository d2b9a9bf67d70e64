"""The outbox survives faults: failing and hanging receivers, a killed worker, duplicate deliveries.

Forty updates are published to a signed webhook and the status page while a real Celery worker
delivers them; the loopback receiver verifies every signature with README's snippet, answers 500
or hangs past the sender's timeout at random, and counts requests per Idempotency-Key. The worker
is SIGKILLed twice during the deliveries (the embedded broker then loses its tasks: the sweep, run
here as beat would, sends them again). Every outbox row must end delivered or dead-lettered, none
lost, and a receiver that drops duplicate keys must see each update exactly once.
``DRILL_SEED=n`` replays the receiver's random draw.
"""

from __future__ import annotations

import os
import time

import pytest

from agents.models import Run
from reviewer.models import Delivery, DeliveryChannel, PublishedUpdate
from reviewer.outbox.publishing import publish
from reviewer.outbox.tasks import sweep_deliveries
from tests.conftest import WEBHOOK_SECRET
from tests.factories import make_incident, make_run

pytestmark = pytest.mark.worker

UPDATES = 40
MAX_ATTEMPTS = 10
SEED = int(os.environ.get("DRILL_SEED") or 14)


def counts() -> dict[str, int]:
    return {status: Delivery.objects.filter(status=status).count() for status in ("pending", "delivered", "failed")}


def wait_delivered(at_least: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while counts()["delivered"] < at_least:
        assert time.monotonic() < deadline, f"stuck at {counts()}"
        time.sleep(0.1)


def test_every_delivery_ends_delivered_or_dead_lettered_through_worker_kills_and_a_flaky_receiver(
        start_worker, webhook_receiver, users):
    receiver = webhook_receiver(fail_rate=0.25, timeout_rate=0.15, hang_seconds=2, seed=SEED)
    env = {"OUTBOUND_DESTINATIONS": f"hook={receiver.url}|HOOK_SECRET", "HOOK_SECRET": WEBHOOK_SECRET,
           "DELIVERY_TIMEOUT_SECONDS": "1", "DELIVERY_BACKOFF_SECONDS": "1", "DELIVERY_BACKOFF_MAX_SECONDS": "4",
           "DELIVERY_MAX_ATTEMPTS": str(MAX_ATTEMPTS), "DELIVERY_LEASE_SECONDS": "3"}
    DeliveryChannel.objects.create(name="Hook", kind="webhook", destination="hook")
    incidents = [make_incident(f"inc_drill_{i}") for i in range(4)]
    worker = start_worker(**env)
    for number in range(UPDATES):
        incident = incidents[number % len(incidents)]
        run = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=f"Update {number}: on it.")
        publish(incident, run.answer, actor=users.ops, source_run=run)  # enqueued at commit
    total = 2 * UPDATES

    for kill_after in (UPDATES // 2, UPDATES):  # mid-way through, twice
        wait_delivered(kill_after)
        worker.kill()
        worker = start_worker(**env)

    from django.test.utils import override_settings

    deadline = time.monotonic() + 180
    with override_settings(DELIVERY_LEASE_SECONDS=3):
        while counts()["pending"]:
            assert time.monotonic() < deadline, f"deliveries left pending: {counts()}"
            sweep_deliveries()  # what beat does every 30 s
            time.sleep(1)

    final = counts()
    assert final["delivered"] + final["failed"] == total == Delivery.objects.count()  # none lost
    assert receiver.bad_signatures == 0
    assert max(Delivery.objects.values_list("attempts", flat=True)) <= MAX_ATTEMPTS
    hooks = Delivery.objects.filter(channel__kind="webhook").select_related("update", "update__incident")
    delivered_keys = {str(d.key) for d in hooks if d.status == "delivered"}
    # At least once: every delivered key reached the receiver, which kept its first body only.
    assert delivered_keys <= set(receiver.accepted)
    seen = [(body["incident"], body["version"]) for body in receiver.accepted.values()]
    assert len(seen) == len(set(seen))  # deduplicated by key, each update exactly once
    assert set(receiver.accepted) <= {str(d.key) for d in hooks}
    never_seen = [d for d in hooks if str(d.key) not in receiver.accepted]
    assert all(d.status == "failed" for d in never_seen)  # an update the receiver never saw is dead-lettered
    assert PublishedUpdate.objects.count() == UPDATES
    # Held means unknown, and a webhook is never in doubt: a repeat is dropped by its key, so it is sent again.
    held = [d for d in hooks if d.status == "held"]
    arrived = [d for d in held if receiver.requests[str(d.key)]]
    duplicates = sum(n - 1 for n in receiver.requests.values())
    print(f"drill seed {SEED}: {final}, {sum(receiver.requests.values())} webhook requests, {duplicates} duplicates; "
          f"held: {len(held)}, of which arrived: {len(arrived)}")
    assert len(arrived) * 10 <= len(held)
    assert duplicates > 0  # the faults did happen: the receiver had duplicates to drop

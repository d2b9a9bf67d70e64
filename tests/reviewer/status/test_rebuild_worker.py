"""With a real Celery worker: a publication is delivered to the status page and the page is rebuilt
by the worker, so the first customer after it reads the stored page (one query) with the update."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.models import Run
from reviewer.models import DeliveryChannel, StatusSnapshot
from reviewer.outbox.publishing import PublicFields, publish
from tests import factories
from tests.reviewer.status.conftest import TEXT


@pytest.mark.worker
def test_a_real_worker_delivers_the_update_and_rebuilds_the_page_before_anyone_asks(start_worker, users, client,
                                                                                    components):
    DeliveryChannel.objects.get_or_create(kind=DeliveryChannel.Kind.STATUS, defaults={"name": "Public status page"})
    start_worker()
    incident = factories.make_incident("inc_pay_1")
    run = factories.make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=TEXT)
    publish(incident, TEXT, actor=users.ops, source_run=run,
            fields=PublicFields(title="Card payments failing", components={components["Checkout"].pk: "major_outage"}))

    # The worker stores the page first, then the feeds and the JSON one by one: wait for the rebuild to
    # reach them all, not only the page (on a busy machine the test reads between two of them).
    def rebuilt():
        row = StatusSnapshot.objects.filter(name="page").first()
        stored = set(StatusSnapshot.objects.values_list("name", flat=True))
        return row is not None and row.fresh and TEXT in row.body and stored >= {"feed.atom", "summary.json"}

    factories.wait_for(rebuilt, message="the worker's rebuild of the page, its feeds and its JSON")
    with CaptureQueriesContext(connection) as queries:
        page = client.get("/status/").content.decode()
    assert len(queries) == 1 and TEXT in page and "Major outage" in page

"""Versions under real concurrency (PostgreSQL): runs started at once for an unchanged incident share
its newest version without queueing on its row; saves at once after a change number one version.

Needs PostgreSQL: SQLite serialises writers with a database lock, so it cannot show the race.
"""

import threading
import time

import pytest
from django.db import connection

from agents.models import Incident, IncidentFact, IncidentVersion
from tests.factories import make_incident

THREADS = 10

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def incident(transactional_db):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: set DATABASE_URL=postgres://... (the test command starts one)")
    incident = make_incident("inc_race", eta_minutes=45)
    incident.record_version()
    return incident


def at_once(work) -> list:
    """``work()`` from THREADS threads released together, each on its own connection; the answers."""
    barrier = threading.Barrier(THREADS)
    answers: list = [None] * THREADS

    def go(i: int) -> None:
        try:
            barrier.wait(timeout=30)
            answers[i] = work()
        except Exception as error:  # shown by the test
            answers[i] = error
        finally:
            connection.close()

    threads = [threading.Thread(target=go, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 20  # a thread still waiting then is a thread that queued on a lock
    for thread in threads:
        thread.join(timeout=max(0.0, deadline - time.monotonic()))
    return list(answers)


def test_unchanged_facts_give_every_run_the_newest_version_without_locking_the_incident(incident):
    # The incident's row stays locked by another transaction: a start that asked for the lock would wait.
    locker = connection  # this thread's connection holds the lock until the test's end
    locker.set_autocommit(False)
    Incident.objects.select_for_update().filter(pk=incident.pk).values_list("pk").first()
    try:
        answers = at_once(lambda: Incident.objects.get(pk=incident.pk).record_version().number)
    finally:
        locker.rollback()
        locker.set_autocommit(True)
    assert answers == [1] * THREADS
    assert IncidentVersion.objects.filter(incident=incident).count() == 1


def test_saves_at_once_after_a_change_number_one_new_version(incident):
    IncidentFact.objects.filter(incident=incident, key="eta_minutes").update(value="30")

    answers = at_once(lambda: Incident.objects.get(pk=incident.pk).record_version().number)

    assert answers == [2] * THREADS
    assert list(IncidentVersion.objects.filter(incident=incident).order_by("number")
                .values_list("number", flat=True)) == [1, 2]

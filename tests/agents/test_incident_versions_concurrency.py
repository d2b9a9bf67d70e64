"""Versions under real concurrency (PostgreSQL): runs started at once for an unchanged incident share
its newest version without queueing on its row; saves at once after a change number one version.

Needs PostgreSQL: SQLite serialises writers with a database lock, so it cannot show the race.
"""

import pytest
from django.db import connection

from agents.models import Incident, IncidentFact, IncidentVersion
from tests.concurrency import at_once
from tests.factories import make_incident

THREADS = 10

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def incident(postgres):
    incident = make_incident("inc_race", eta_minutes=45)
    incident.record_version()
    return incident


def record_at_once(incident) -> list:
    """record_version from THREADS threads at once, each with the incident as it loads it; the numbers
    (a thread still waiting after 20 s, on a lock, gives None)."""
    return at_once(lambda i: Incident.objects.get(pk=incident.pk).record_version().number, THREADS, within=20)


def test_unchanged_facts_give_every_run_the_newest_version_without_locking_the_incident(incident):
    # The incident's row stays locked by another transaction: a start that asked for the lock would wait.
    locker = connection  # this thread's connection holds the lock until the test's end
    locker.set_autocommit(False)
    Incident.objects.select_for_update().filter(pk=incident.pk).values_list("pk").first()
    try:
        answers = record_at_once(incident)
    finally:
        locker.rollback()
        locker.set_autocommit(True)
    assert answers == [1] * THREADS
    assert IncidentVersion.objects.filter(incident=incident).count() == 1


def test_saves_at_once_after_a_change_number_one_new_version(incident):
    IncidentFact.objects.filter(incident=incident, key="eta_minutes").update(value="30")

    answers = record_at_once(incident)

    assert answers == [2] * THREADS
    assert list(IncidentVersion.objects.filter(incident=incident).order_by("number")
                .values_list("number", flat=True)) == [1, 2]

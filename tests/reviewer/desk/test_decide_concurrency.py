"""Exactly-once decisions under real concurrency: twenty leads press a button at once.

Needs PostgreSQL: SQLite serialises writers with a database lock, so it cannot show the race.
"""

import threading

import pytest
from django.db import connection

from reviewer.desk import decisions
from reviewer.models import Decision, Escalation
from tests.factories import make_escalation, make_incident

THREADS = 20

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def escalation(postgres):
    return make_escalation(incident=make_incident("inc_race_1", title="Race"))


def test_twenty_simultaneous_decisions_store_exactly_one(escalation, users):
    leads = [users.lead, users.lead2]
    for lead in leads:
        lead.has_perm(decisions.DECIDE_PERMISSION)  # fill the permission cache before the threads share it
    barrier = threading.Barrier(THREADS)
    outcomes, errors = [], []
    lock = threading.Lock()

    def press(i: int) -> None:
        try:
            barrier.wait(timeout=30)
            action, note = ("approve", "") if i % 2 else ("reject", f"Lead {i} says no.")
            outcome = decisions.decide(escalation.pk, leads[i % 2], action, note=note)
            with lock:
                outcomes.append(outcome)
        except Exception as error:
            with lock:
                errors.append((i, error))
        finally:
            connection.close()  # each thread has its own connection; don't leak twenty of them

    threads = [threading.Thread(target=press, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert errors == []
    assert len(outcomes) == THREADS
    winners = [o for o in outcomes if o.won]
    assert len(winners) == 1
    assert sum(not o.won for o in outcomes) == THREADS - 1
    decision = Decision.objects.get(escalation=escalation)
    assert decision == winners[0].decision
    stored = Escalation.objects.get(pk=escalation.pk)
    assert stored.decided_by_id == decision.actor_id
    assert stored.status == ("approved" if decision.action == "approve" else "rejected")
    # Every loser was told who won.
    assert {o.escalation.decided_by_id for o in outcomes if not o.won} == {decision.actor_id}

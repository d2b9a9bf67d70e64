"""The API under real concurrency (PostgreSQL): twenty starts with one Idempotency-Key make one run;
twenty decisions on one escalation store one. Over HTTP, against the threaded live server.

Needs PostgreSQL: SQLite serialises writers with a database lock, so it cannot show the race.
"""

from collections import Counter

import pytest
import requests

from agents.models import Run
from reviewer.models import ApiToken, Decision
from tests.concurrency import at_once
from tests.factories import make_escalation, make_incident

THREADS = 20

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def test_twenty_simultaneous_starts_with_one_idempotency_key_make_one_run(postgres, live_server, users, demo_data):
    _, token = ApiToken.issue(users.ops, "race")
    body = {"pipeline": "reflection", "goal": "Write the customer update.", "incident_id": "inc_pay_2041"}

    answers = at_once(lambda i: requests.post(
        f"{live_server.url}/api/runs", json=body, timeout=60,
        headers={"Authorization": f"Bearer {token}", "Idempotency-Key": "one-key"}), THREADS)

    statuses = Counter(a.status_code for a in answers)
    assert statuses[202] == 1 and set(statuses) <= {200, 202, 409}, statuses
    assert Run.objects.count() == 1
    run_ids = {a.json()["run_id"] for a in answers if a.status_code in (200, 202)}
    assert run_ids == {str(Run.objects.get().pk)}
    assert all("still being processed" in a.json()["message"] for a in answers if a.status_code == 409)


def test_twenty_simultaneous_api_decisions_store_one(postgres, live_server, users):
    escalation = make_escalation(incident=make_incident("inc_api_race", title="Race"))
    tokens = [ApiToken.issue(users.lead, "race")[1], ApiToken.issue(users.lead2, "race")[1]]

    def decide(i: int):
        body = {"action": "approve"} if i % 2 else {"action": "reject", "note": f"Lead {i} says no."}
        return requests.post(f"{live_server.url}/api/escalations/{escalation.pk}/decision", json=body, timeout=60,
                             headers={"Authorization": f"Bearer {tokens[i % 2]}"})

    answers = at_once(decide, THREADS)

    assert Counter(a.status_code for a in answers) == {201: 1, 409: THREADS - 1}
    decision = Decision.objects.get(escalation=escalation)
    winner = decision.actor.username
    assert {a.json()["decided_by"] for a in answers if a.status_code == 409} == {winner}
    assert all(winner in a.json()["message"] for a in answers if a.status_code == 409)

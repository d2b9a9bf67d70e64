"""Approvals under a quorum at the same moment: each counted once, none lost, one decision.

Needs PostgreSQL: SQLite serialises writers with a database lock, so it cannot show the race.
"""

import pytest

from reviewer.desk import decisions
from reviewer.desk.approvals import ApprovalRefused
from reviewer.models import Approval, Decision, Escalation, LedgerEntry
from reviewer.roles import SUPPORT_LEAD
from tests.concurrency import at_once
from tests.factories import make_escalation, make_incident, make_user

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def leads(postgres, users):
    leads = [users.lead, users.lead2, *(make_user(f"lead{i}", group=SUPPORT_LEAD) for i in range(3, 9))]
    for lead in leads:
        lead.has_perm(decisions.DECIDE_PERMISSION)  # fill the permission cache before the threads share it
    return leads


def approve(escalation, user):
    return decisions.decide(escalation.pk, user, "approve")


def test_two_leads_approving_at_once_are_both_counted(leads):
    escalation = make_escalation(incident=make_incident("inc_quorum_race_1"), required_approvals=3)

    answers = at_once(lambda i: approve(escalation, leads[i]), 2)

    assert all(isinstance(a, decisions.Outcome) and a.won and a.decision is None for a in answers), answers
    assert sorted(Approval.objects.values_list("user__username", flat=True)) == ["lead", "lead2"]
    assert Escalation.objects.get(pk=escalation.pk).status == "pending"
    # Each approval's ledger entry counted it in turn: one is the first, the other the second.
    counted = sorted(entry.content.split('"counted":')[1][0] for entry in LedgerEntry.objects.filter(kind="approval"))
    assert counted == ["1", "2"]


def test_eight_leads_approving_a_two_of_many_at_once_decide_it_once(leads):
    escalation = make_escalation(incident=make_incident("inc_quorum_race_2"), required_approvals=2)

    answers = at_once(lambda i: approve(escalation, leads[i]), len(leads))

    assert not [a for a in answers if not isinstance(a, decisions.Outcome)], answers
    counted = [a for a in answers if a.won]
    assert len(counted) == 2  # the first two counted; the second decided
    assert sum(a.decision is not None for a in counted) == 1
    assert sum(not a.won for a in answers) == len(leads) - 2  # the rest were told it is decided
    decided = Escalation.objects.get(pk=escalation.pk)
    assert decided.status == "approved"
    assert Decision.objects.filter(escalation=escalation, action="approve").count() == 1
    assert Approval.objects.filter(escalation=escalation).count() == 2
    assert decided.decided_by_id in {a.approval.user_id for a in counted}


def test_one_lead_approving_twice_at_once_counts_once(leads):
    escalation = make_escalation(incident=make_incident("inc_quorum_race_3"), required_approvals=2)

    answers = at_once(lambda i: approve(escalation, leads[0]), 4)

    assert sum(isinstance(a, decisions.Outcome) and a.won for a in answers) == 1
    refused = [a for a in answers if isinstance(a, ApprovalRefused)]
    assert len(refused) == 3 and all(a.status == 409 for a in refused), answers
    assert Approval.objects.filter(escalation=escalation).count() == 1
    assert Escalation.objects.get(pk=escalation.pk).status == "pending"

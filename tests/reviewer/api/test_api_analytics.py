"""GET /api/analytics: the review analytics' figures over a window, each person's only for those who
may read every decision (docs/analytics.md)."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from reviewer.models import Decision, Escalation
from reviewer.roles import POLICY_ADMIN
from tests.factories import make_escalation, make_incident, make_user

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
FINDING = {"check": "patch_violation:liability", "message": "m", "found": "we compensate"}


def decided(escalation, actor, action, *, opened, at, violations=()):
    Escalation.objects.filter(pk=escalation.pk).update(
        opened_at=opened, decided_at=at, decided_by=actor, status="rejected" if action == "reject" else "approved")
    Decision.objects.create(escalation=escalation, actor=actor, action=action, at=at,
                            guard_results={"violations": list(violations)})


@pytest.fixture
def three_decisions(users):
    """Two reflection escalations on a P1 incident (one approved over a finding, one edited), one
    self-critique escalation on no incident rejected; one decided before the last 7 days."""
    with time_machine.travel(NOW, tick=False):
        p1 = make_incident("inc_p1", severity="P1")
        decided(make_escalation(incident=p1), users.lead, "approve", opened=NOW - timedelta(hours=2),
                at=NOW - timedelta(hours=1), violations=[FINDING])
        decided(make_escalation(incident=p1), users.lead2, "edit_approve", opened=NOW - timedelta(hours=3),
                at=NOW - timedelta(hours=1))
        decided(make_escalation(pipeline="self_critique"), users.lead, "reject", opened=NOW - timedelta(hours=1),
                at=NOW - timedelta(minutes=30))
        decided(make_escalation(), users.lead2, "reject", opened=NOW - timedelta(days=9),
                at=NOW - timedelta(days=8))
        yield


@pytest.fixture
def clock():
    with time_machine.travel(NOW, tick=False):
        yield


def test_the_figures_of_a_week_for_a_policy_admin(api, users, three_decisions, clock):
    response = api("admin").get("/analytics?days=7")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["days"] == 7 and body["decided"] == 3
    assert body["time_to_decision"] == [
        {"pipeline": "reflection", "severity": "P1", "decided": 2, "median_seconds": 3600, "p90_seconds": 7200},
        {"pipeline": "self_critique", "severity": "", "decided": 1, "median_seconds": 1800, "p90_seconds": 1800}]
    assert body["time_to_decision_overall"] == {"decided": 3, "median_seconds": 3600, "p90_seconds": 7200}
    reflection, self_critique = body["outcomes_by_pipeline"]
    assert reflection == {"pipeline": "reflection", "decided": 2, "as_is": 1, "edited": 1, "changes_requested": 0,
                          "rejected": 0, "rates": {"as_is": 0.5, "edited": 0.5, "changes_requested": 0, "rejected": 0}}
    assert (self_critique["pipeline"], self_critique["rejected"], self_critique["rates"]["rejected"]) == (
        "self_critique", 1, 1)
    assert {row["check"]: row["decided"] for row in body["outcomes_by_check"]} == {"policy_escalation": 3}
    assert body["quorum"] == {"decided": 0, "agreed": 0, "changed_after_approval": 0, "rejected_after_approval": 0,
                              "agreement_rate": None}
    assert [(p["username"], p["decided"], p["approved"], p["edited"], p["rejected"], p["overrides"],
             p["override_rate"]) for p in body["reviewers"]] == [
        ("lead", 2, 1, 0, 1, 1, 1.0), ("lead2", 1, 0, 1, 0, 0, 0.0)]


def test_the_window_reaches_back_as_many_days_as_asked(api, users, three_decisions, clock):
    body = api("admin").get("/analytics?days=30").json()
    assert body["decided"] == 4
    assert [(p["username"], p["decided"]) for p in body["reviewers"]] == [("lead", 2), ("lead2", 2)]


def test_a_lead_gets_the_figures_but_no_person(api, users, three_decisions, clock):
    response = api("lead").get("/analytics?days=7")
    assert response.status_code == 200
    body = response.json()
    assert body["decided"] == 3 and body["reviewers"] is None
    assert "lead2" not in response.content.decode()


def test_a_policy_admin_by_role_alone_gets_each_person(api, users, three_decisions, clock):
    users.padmin = make_user("padmin", group=POLICY_ADMIN)
    body = api("padmin").get("/analytics?days=7").json()
    assert [p["username"] for p in body["reviewers"]] == ["lead", "lead2"]


def test_ops_and_people_without_a_role_are_refused_and_a_bad_window_is_invalid(api, users, client):
    for name in ("ops", "outsider"):
        response = api(name).get("/analytics")
        assert response.status_code == 403
        assert response.json()["message"] == "Only support leads and policy admins can see the review analytics."
    assert client.get("/api/analytics").status_code == 401
    for days in ("0", "367", "week"):
        assert api("admin").get(f"/analytics?days={days}").status_code == 422


def test_an_empty_window_answers_zeros_and_no_times(api, users):
    body = api("admin").get("/analytics").json()
    assert (body["days"], body["decided"], body["time_to_decision"], body["time_to_decision_overall"]) == (
        30, 0, [], None)
    assert body["outcomes_by_pipeline"] == [] and body["reviewers"] == []

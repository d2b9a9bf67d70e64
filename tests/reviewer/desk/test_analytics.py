"""Review analytics (docs/analytics.md): every figure of the page equals what the test counts itself
from the decision, escalation and approval rows of a varied history, and only those who may read
every decision see the figures of each person."""

from __future__ import annotations

import math
import random
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest
import time_machine

from agents.models import Run
from reviewer.desk import analytics
from reviewer.models import Approval, Decision, Escalation
from reviewer.roles import POLICY_ADMIN, SUPPORT_LEAD
from tests.factories import make_escalation, make_incident, make_user

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
CHECKS = ("patch_violation:no_new_facts", "patch_violation:restricted_claims", "patch_violation:time_commitment",
          "invalid_answer:markup")
STORIES = ("approve", "override", "edit", "changes", "changes_then_reject", "reject", "quorum_agreed",
           "quorum_edited", "quorum_rejected", "pending")


def decision(escalation, actor, action, at, **fields):
    return Decision.objects.create(escalation=escalation, actor=actor, action=action, at=at, **fields)


def finish(escalation, actor, status, at, text=""):
    Escalation.objects.filter(pk=escalation.pk).update(status=status, decided_by=actor, decided_at=at, final_text=text)


def write_history(leads, *, count: int = 90, seed: int = 3, now: datetime = NOW):
    """``count`` escalations on two pipelines and three severities, opened up to 120 days before ``now``
    (about a third within 6 days, a third within 28), each decided by a story of decisions as the desk
    records them (some under a quorum, some left pending)."""
    rng = random.Random(seed)
    incidents = [make_incident(f"inc_p1_{seed}", severity="P1"), make_incident(f"inc_p3_{seed}", severity="P3"),
                 None]
    for i in range(count):
        story = STORIES[i % len(STORIES)]
        checks = rng.sample(CHECKS, rng.randint(0, 2))
        violations = [{"check": check, "message": "m", "found": "x"} for check in checks]
        escalation = make_escalation(incident=rng.choice(incidents),
                                     pipeline=rng.choice(["reflection", "self_critique"]),
                                     stop_reason=checks[0] if checks else "policy_escalation")
        Run.objects.filter(pk=escalation.run_id).update(guard={"violations": violations} if violations else None)
        # Whole seconds: the analytics measure to the millisecond (docs/analytics.md).
        opened = (now - timedelta(days=rng.uniform(0, rng.choice([6, 28, 120])))).replace(microsecond=0)
        decided = min(opened + timedelta(seconds=rng.randint(30, 3 * 86400)), now - timedelta(seconds=1))
        decided = decided.replace(microsecond=0)
        Escalation.objects.filter(pk=escalation.pk).update(opened_at=opened)
        first, second, third = rng.sample(leads, 3)
        block = {"ok": not violations, "violations": violations}
        quorum = story.startswith("quorum")
        if quorum:
            Escalation.objects.filter(pk=escalation.pk).update(required_approvals=2)
        if story == "approve":
            decision(escalation, first, "approve", decided, guard_results=block, note="fine")
            finish(escalation, first, "approved", decided, "text")
        elif story == "override":  # approved despite findings, with a justification
            decision(escalation, first, "approve", decided, guard_results=block, note="the guard is wrong here")
            finish(escalation, first, "approved", decided, "text")
        elif story == "edit":
            decision(escalation, first, "edit_approve", decided, guard_results={"ok": True, "violations": []})
            finish(escalation, first, "approved", decided, "edited text")
        elif story == "changes":
            decision(escalation, first, "request_changes", decided - timedelta(seconds=10), note="shorter")
            decision(escalation, second, "approve", decided, guard_results={"ok": True, "violations": []})
            finish(escalation, second, "approved", decided, "revised text")
        elif story == "changes_then_reject":
            decision(escalation, first, "request_changes", decided - timedelta(seconds=10), note="shorter")
            decision(escalation, first, "reject", decided, guard_results=block, note="still wrong")
            finish(escalation, first, "rejected", decided)
        elif story == "reject":
            decision(escalation, first, "reject", decided, guard_results=block, note="unsafe")
            finish(escalation, first, "rejected", decided)
        elif story == "quorum_agreed":
            Approval.objects.create(escalation=escalation, user=first, text_version=1, text_hash="h",
                                    at=decided - timedelta(seconds=5))
            Approval.objects.create(escalation=escalation, user=second, text_version=1, text_hash="h", at=decided)
            decision(escalation, second, "approve", decided, guard_results=block)
            finish(escalation, second, "approved", decided, "text")
        elif story == "quorum_edited":  # approved, then another lead edited: the approval is set aside
            Approval.objects.create(escalation=escalation, user=first, text_version=1, text_hash="h",
                                    at=decided - timedelta(seconds=20), superseded_at=decided - timedelta(seconds=10),
                                    superseded_because="edited")
            decision(escalation, second, "edit", decided - timedelta(seconds=10), guard_results={"violations": []})
            Approval.objects.create(escalation=escalation, user=first, text_version=2, text_hash="i",
                                    at=decided - timedelta(seconds=5))
            Approval.objects.create(escalation=escalation, user=third, text_version=2, text_hash="i", at=decided)
            decision(escalation, third, "approve", decided, guard_results={"violations": []})
            finish(escalation, third, "approved", decided, "edited text")
        elif story == "quorum_rejected":  # one approved, another rejected the same text
            Approval.objects.create(escalation=escalation, user=first, text_version=1, text_hash="h",
                                    at=decided - timedelta(seconds=5))
            decision(escalation, second, "reject", decided, guard_results=block, note="no")
            finish(escalation, second, "rejected", decided)


@pytest.fixture
def history(users):
    leads = [users.lead, users.lead2, make_user("lead3", group=SUPPORT_LEAD, first_name="Lea", last_name="Berg")]
    write_history(leads)
    return leads


# -- what the test counts itself, from the rows --------------------------------------------------------


def decided_rows(days: int) -> list[Escalation]:
    since = NOW - timedelta(days=days)
    return [e for e in Escalation.objects.select_related("run").prefetch_related("decisions", "approvals")
            if e.status != "pending" and since <= e.decided_at <= NOW]


def outcome_of(escalation: Escalation) -> str:
    actions = {d.action for d in escalation.decisions.all()}
    if escalation.status == "rejected":
        return "rejected"
    if actions & {"edit", "edit_approve"}:
        return "edited"
    return "changes_requested" if "request_changes" in actions else "as_is"


def nearest_rank(values: list[float], p: int) -> float:
    ordered = sorted(values)
    return ordered[math.ceil(len(ordered) * p / 100) - 1]


def counted(rows, key) -> dict:
    found: dict = defaultdict(Counter)
    for escalation in rows:
        for group in key(escalation):
            found[group][outcome_of(escalation)] += 1
    return {group: dict(counts) for group, counts in found.items()}


def severity_of(escalation: Escalation) -> str:
    return (escalation.run.context or {}).get("incident", {}).get("severity", "")


def checks_of(escalation: Escalation) -> set[str]:
    return {v["check"] for v in (escalation.run.guard or {}).get("violations", [])} or {escalation.stop_reason}


# -- the figures ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("days", analytics.WINDOWS)
def test_every_figure_equals_what_the_rows_say(history, days):
    rows = decided_rows(days)
    assert len(rows) > 10  # the window holds a varied history
    figures = analytics.report(days, people=True, now=NOW)

    assert figures["decided"] == len(rows)
    times = defaultdict(list)
    for e in rows:
        times[e.run.pipeline, severity_of(e)].append((e.decided_at - e.opened_at).total_seconds())
    assert {(r["pipeline"], r["severity"]): (r["decided"], r["median_seconds"], r["p90_seconds"])
            for r in figures["time_to_decision"]} == {
        key: (len(values), nearest_rank(values, 50), nearest_rank(values, 90)) for key, values in times.items()}
    every = [v for values in times.values() for v in values]
    assert figures["time_to_decision_overall"]["median_seconds"] == nearest_rank(every, 50)
    assert figures["time_to_decision_overall"]["p90_seconds"] == nearest_rank(every, 90)

    def outcomes_of(table, key):
        return {row[key]: {o: row[o] for o in ("as_is", "edited", "changes_requested", "rejected") if row[o]}
                for row in table}

    assert outcomes_of(figures["outcomes_by_pipeline"], "pipeline") == counted(rows, lambda e: [e.run.pipeline])
    assert outcomes_of(figures["outcomes_by_check"], "check") == counted(rows, checks_of)
    for row in figures["outcomes_by_pipeline"]:
        assert sum(row["rates"].values()) == pytest.approx(1)
        assert row["rates"]["edited"] == pytest.approx(row["edited"] / row["decided"])

    quorum = [e for e in rows if e.required_approvals > 1]
    set_aside = [e for e in quorum if any(a.superseded_at for a in e.approvals.all())]
    rejected_over = [e for e in quorum
                     if e.status == "rejected" and any(not a.superseded_at for a in e.approvals.all())]
    assert figures["quorum"] == {
        "decided": len(quorum), "changed_after_approval": len(set_aside), "rejected_after_approval": len(rejected_over),
        "agreed": len(quorum) - len(set(set_aside) | set(rejected_over)),
        "agreement_rate": (len(quorum) - len(set(set_aside) | set(rejected_over))) / len(quorum)}

    since = NOW - timedelta(days=days)
    made = [d for d in Decision.objects.select_related("actor") if since <= d.at <= NOW]
    people = {}
    for actor in {d.actor for d in made}:
        mine = [d for d in made if d.actor == actor]
        approving = [d for d in mine if d.action in ("approve", "edit_approve")]
        overrides = [d for d in approving if d.guard_results.get("violations")]
        people[actor.username] = {
            "decided": sum(d.action in ("approve", "edit_approve", "reject") for d in mine),
            "approved": sum(d.action == "approve" for d in mine),
            "edited": sum(d.action in ("edit", "edit_approve") for d in mine),
            "rejected": sum(d.action == "reject" for d in mine),
            "changes_requested": sum(d.action == "request_changes" for d in mine),
            "overrides": len(overrides),
            "override_rate": len(overrides) / len(approving) if approving else None,
            "quorum_approvals": Approval.objects.filter(user=actor, at__gte=since, at__lte=NOW).count()}
    assert {p["username"]: {k: p[k] for k in people[p["username"]]} for p in figures["reviewers"]} == people
    assert any(p["overrides"] for p in figures["reviewers"])


def test_a_decision_before_the_window_is_left_out(users):
    escalation = make_escalation()
    Escalation.objects.filter(pk=escalation.pk).update(opened_at=NOW - timedelta(days=9))
    decision(escalation, users.lead, "approve", NOW - timedelta(days=8))
    finish(escalation, users.lead, "approved", NOW - timedelta(days=8), "text")
    assert analytics.report(7, people=True, now=NOW)["decided"] == 0
    assert analytics.report(7, people=True, now=NOW)["reviewers"] == []
    month = analytics.report(30, people=True, now=NOW)
    assert month["decided"] == 1
    assert month["time_to_decision_overall"]["median_seconds"] == 86400
    assert month["outcomes_by_check"][0]["check"] == "policy_escalation"


def test_the_figures_take_the_same_number_of_queries_however_many_decisions(users, django_assert_num_queries):
    leads = [users.lead, users.lead2, make_user("lead3", group=SUPPORT_LEAD)]
    write_history(leads, count=10)
    with django_assert_num_queries(7) as few:
        analytics.report(90, people=True, now=NOW)
    write_history(leads, count=40, seed=4)
    with django_assert_num_queries(len(few)):
        analytics.report(90, people=True, now=NOW)


# -- the page and who sees what ---------------------------------------------------------------------------


@pytest.fixture
def frozen():
    with time_machine.travel(NOW, tick=False):
        yield NOW


@pytest.fixture
def people(users):
    """A policy admin without the superuser's blanket rights: the role's own permissions only."""
    return SimpleNamespace(admin=make_user("padmin", group=POLICY_ADMIN), lead=users.lead)


def test_a_policy_admin_sees_every_figure_and_each_person(client, history, people, frozen):
    client.force_login(people.admin)
    page = client.get("/analytics/?days=90").content.decode()
    assert 'id="time-to-decision"' in page and 'id="outcomes-by-pipeline"' in page and 'id="outcomes-by-check"' in page
    assert f'id="analytics-decided">{len(decided_rows(90))}<' in page
    assert 'id="reviewers"' in page and "Lea Berg" in page and "lead2" in page


def test_a_lead_sees_the_figures_but_no_person(client, history, people, frozen):
    client.force_login(people.lead)
    page = client.get("/analytics/?days=90").content.decode()
    assert 'id="time-to-decision"' in page and 'id="outcomes-by-check"' in page
    assert 'id="reviewers"' not in page and "Lea Berg" not in page and "lead3" not in page
    assert "Figures per person are shown to policy admins only." in page


def test_ops_and_people_without_a_role_cannot_open_the_page(client, users):
    for name in ("ops", "outsider"):
        client.force_login(getattr(users, name))
        response = client.get("/analytics/")
        assert response.status_code == 403
        assert "Only support leads and policy admins can see the review analytics." in response.content.decode()
    client.logout()
    assert client.get("/analytics/").status_code == 302


def test_an_empty_window_says_so_and_a_strange_window_is_the_default(client, people, frozen):
    client.force_login(people.admin)
    page = client.get("/analytics/?days=banana").content.decode()
    assert "No escalation was decided in the last 30 days" in page
    assert 'id="time-to-decision"' not in page
    assert "Nobody recorded a decision in this window." in page


def test_the_dashboard_links_the_page_for_those_who_may_see_it(client, users):
    for name, shown in (("lead", True), ("admin", True), ("ops", False)):
        client.force_login(getattr(users, name))
        assert ('href="/analytics/"' in client.get("/").content.decode()) is shown, name

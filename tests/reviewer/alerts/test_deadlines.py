"""Escalation deadlines: rules, the inbox's order and colours, the sweep's reminder and breach
(each once, on a controlled clock), holding statements and the dashboard's breach count."""

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import pytest
import time_machine
from django.urls import reverse

from agents.models import IncidentFact, Run
from reviewer.alerts import deadlines
from reviewer.desk import decisions
from reviewer.models import DeadlineBreach, DeadlineRule, Decision, Escalation, HoldingStatement
from tests import factories

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
GOOD_STATEMENT = "We are investigating a problem with payments in the EU. Current status: degraded."
# 40% is no fact of the incident: the guard refuses it.
BAD_STATEMENT = "About 40% of EU payments fail. Current status: degraded."


def at(minutes: float):
    return time_machine.travel(T0 + timedelta(minutes=minutes), tick=False)


@pytest.fixture
def incident(db):
    return factories.make_incident("inc_p1", severity="P1", eta_minutes=30)


@pytest.fixture
def rules(db):
    return SimpleNamespace(
        any=DeadlineRule.objects.create(minutes=120, reminder_minutes=30),
        p1=DeadlineRule.objects.create(severity="P1", minutes=10, reminder_minutes=3),
        p1_routing=DeadlineRule.objects.create(severity="P1", pipeline="routing", minutes=5, reminder_minutes=0),
        reflection=DeadlineRule.objects.create(pipeline="reflection", minutes=60, reminder_minutes=10),
    )


def open_on(incident, pipeline="reflection") -> Escalation:
    """An escalation opened the way the product opens one: the receiver of a finished run."""
    run = factories.make_run(pipeline, incident=incident, snapshot=True, status=Run.Status.STOPPED,
                             stop_reason="policy_escalation")
    result = SimpleNamespace(stop_reason="policy_escalation", escalation_reason="Unverified ETA.",
                             candidate="", guard=None)
    decisions.open_escalation(None, run=run, result=result, draft=GOOD_STATEMENT)
    return Escalation.objects.get(run=run)


def test_the_most_specific_rule_wins(rules):
    assert deadlines.rule_for("P1", "routing") == rules.p1_routing
    assert deadlines.rule_for("p1", "reflection") == rules.p1  # severity before pipeline
    assert deadlines.rule_for("P3", "reflection") == rules.reflection
    assert deadlines.rule_for("P3", "self_critique") == rules.any
    assert deadlines.rule_for("", "self_critique") == rules.any


def test_no_rule_means_no_deadline(incident):
    with at(0):
        escalation = open_on(incident)
    assert escalation.deadline_at is None and escalation.remind_at is None
    with at(10_000):  # a week later: announced late by nobody, and never breached
        assert deadlines.sweep() == {"opened": 0, "reminder": 0, "breach": 0}
    with at(2):
        assert deadlines.sweep() == {"opened": 1, "reminder": 0, "breach": 0}
    assert not DeadlineBreach.objects.exists()


def test_an_escalation_gets_its_deadline_when_it_opens_and_notifies_after_commit(
        incident, rules, django_capture_on_commit_callbacks):
    with at(0), django_capture_on_commit_callbacks(execute=False) as callbacks:
        escalation = open_on(incident)
    assert escalation.opened_at == T0
    assert escalation.deadline_at == T0 + timedelta(minutes=10)
    assert escalation.remind_at == T0 + timedelta(minutes=7)
    assert len(callbacks) == 1  # the "opened" notice: a task after the commit, not in the transaction


def test_the_sweep_reminds_then_records_the_breach_each_once_and_never_decides(incident, rules):
    with at(0):
        escalation = open_on(incident)
    with at(6):
        assert deadlines.sweep() == {"opened": 1, "reminder": 0, "breach": 0}
    with at(7):
        assert deadlines.sweep()["reminder"] == 1
    with at(8):
        assert deadlines.sweep()["reminder"] == 0
    with at(10):
        assert deadlines.sweep()["breach"] == 1
    with at(30):
        assert deadlines.sweep() == {"opened": 0, "reminder": 0, "breach": 0}

    escalation.refresh_from_db()
    assert escalation.reminded_at == T0 + timedelta(minutes=7)
    assert escalation.breached_at == T0 + timedelta(minutes=10)
    assert escalation.status == Escalation.Status.PENDING  # a deadline never approves anything
    assert escalation.decided_by is None and escalation.final_text == ""
    assert not Decision.objects.exists()
    breach = DeadlineBreach.objects.get()
    assert (breach.escalation, breach.deadline_at, breach.at) == (escalation, escalation.deadline_at,
                                                                   T0 + timedelta(minutes=10))


def test_a_late_sweep_skips_the_reminder_and_records_only_the_breach(incident, rules):
    with at(0):
        open_on(incident)
    with at(45):
        assert deadlines.sweep() == {"opened": 1, "reminder": 0, "breach": 1}


def test_an_escalation_decided_in_time_never_breaches(incident, rules, users):
    with at(0):
        escalation = open_on(incident)
    with at(2):
        decisions.decide(escalation.pk, users.lead, "reject", note="Not this one.")
    with at(60):
        assert deadlines.sweep() == {"opened": 0, "reminder": 0, "breach": 0}
    assert not DeadlineBreach.objects.exists()


def test_the_inbox_sorts_and_colours_by_time_left(incident, rules, login):
    with at(0):
        slow = open_on(factories.make_incident("inc_p3", severity="P3"))  # 60 min (reflection)
        none = factories.make_escalation(incident=factories.make_incident("inc_none"), age_minutes=500)
        urgent = open_on(incident)  # P1: 10 min
    Escalation.objects.filter(pk=none.pk).update(deadline_at=None)

    client = login("lead")
    with at(8):
        page = client.get(reverse("inbox")).content.decode()
    order = [page.index(f'id="esc-row-{e.pk}"') for e in (urgent, slow, none)]
    assert order == sorted(order)
    assert f'id="esc-row-{urgent.pk}" class="esc-row deadline-due-soon"' in page
    assert f'id="esc-row-{slow.pk}" class="esc-row deadline-on-time"' in page
    assert f'id="esc-row-{none.pk}" class="esc-row"' in page
    assert "due in 2 min" in page and "due in 52 min" in page

    with at(13):
        page = client.get(reverse("inbox")).content.decode()
    assert f'id="esc-row-{urgent.pk}" class="esc-row deadline-overdue"' in page
    assert "overdue by 3 min" in page


def test_the_dashboard_counts_breaches(incident, rules, login):
    with at(0):
        open_on(incident)
        open_on(incident)
    with at(11):
        deadlines.sweep()
        page = login("ops").get(reverse("home")).content.decode()
    assert 'id="dashboard-breaches">2</a>' in page and "deadline breaches in 7 days" in page


# -- holding statements --------------------------------------------------------------------------------


def test_an_admin_approves_a_holding_statement_that_passes_the_guard(incident, users):
    statement = HoldingStatement(incident=incident, text=GOOD_STATEMENT)
    deadlines.approve_holding_statement(statement, users.admin)
    assert statement.approved_by == users.admin and statement.guard["ok"]
    assert statement.approved_version == incident.latest_version()


def test_a_holding_statement_with_an_unsupported_number_is_refused_with_the_guards_message(incident, users):
    statement = HoldingStatement(incident=incident, text=BAD_STATEMENT)
    with pytest.raises(deadlines.HoldingStatementRefused, match="40%"):
        deadlines.approve_holding_statement(statement, users.admin)
    assert statement.approved_at is None


def test_the_admin_form_refuses_approval_with_the_guards_message(incident, users, client):
    client.force_login(users.admin)
    url = reverse("admin:reviewer_holdingstatement_add")
    response = client.post(url, {"incident": incident.pk, "text": BAD_STATEMENT, "approve": "on"})
    assert response.status_code == 200
    assert "The guard refused the holding statement" in response.content.decode()
    assert not HoldingStatement.objects.exists()

    response = client.post(url, {"incident": incident.pk, "text": GOOD_STATEMENT, "approve": "on"})
    assert response.status_code == 302
    statement = HoldingStatement.objects.get()
    assert statement.approved_by == users.admin and statement.written_by == users.admin


def test_a_breach_offers_the_statement_only_if_it_still_passes_against_the_current_facts(incident, rules, users):
    statement = HoldingStatement(incident=incident, text="Payments are degraded; the ETA is 30 minutes.")
    deadlines.approve_holding_statement(statement, users.admin)
    statement.save()
    assert deadlines.offerable_statement(incident) == statement

    # The facts change after approval: the statement's 30 minutes is no longer a fact.
    IncidentFact.objects.filter(incident=incident, key="eta_minutes").update(value="90")
    incident.record_version(users.admin)
    assert deadlines.offerable_statement(incident) is None
    with at(0):
        open_on(incident)
    with at(11):
        deadlines.sweep()
    assert DeadlineBreach.objects.get().holding_statement is None


# -- the breach page: ops publish the holding statement with one click ---------------------------------


@pytest.fixture
def breached(incident, rules, users):
    """A P1 escalation past its deadline, and an approved holding statement for its incident."""
    statement = HoldingStatement(incident=incident, text=GOOD_STATEMENT, written_by=users.admin)
    deadlines.approve_holding_statement(statement, users.admin)
    statement.save()
    with at(0):
        escalation = open_on(incident)
    with at(11):
        deadlines.sweep()
    return SimpleNamespace(escalation=escalation, statement=statement, breach=DeadlineBreach.objects.get())


def test_ops_publish_the_holding_statement_once_and_the_escalation_still_waits(breached, login, users):
    from reviewer.models import PublishedUpdate

    client = login("ops")
    page = client.get(reverse("breaches")).content.decode()
    assert "Publish holding statement" in page and GOOD_STATEMENT in page
    url = reverse("breach_publish", args=[breached.breach.pk])

    assert client.post(url).status_code == 302
    update = PublishedUpdate.objects.get()
    assert (update.text, update.published_by) == (GOOD_STATEMENT, users.ops)
    assert update.incident == breached.statement.incident
    assert "holding statement" in update.reason
    breached.breach.refresh_from_db()
    assert breached.breach.published_by == users.ops and breached.breach.holding_statement == breached.statement

    client.post(url)  # a second click publishes nothing more
    assert PublishedUpdate.objects.count() == 1
    page = client.get(reverse("breaches")).content.decode()
    assert "already published" in page and "Published by Omar" in page
    breached.escalation.refresh_from_db()
    assert breached.escalation.status == Escalation.Status.PENDING and not Decision.objects.exists()


def test_a_statement_that_no_longer_fits_the_facts_is_not_offered_nor_published(breached, login, users):
    from reviewer.models import PublishedUpdate

    breached.statement.text = "Payments are degraded; the ETA is 30 minutes."
    breached.statement.save()
    IncidentFact.objects.filter(incident=breached.statement.incident, key="eta_minutes").update(value="90")

    client = login("ops")
    page = client.get(reverse("breaches")).content.decode()
    assert "Publish holding statement" not in page and "No approved holding statement passes" in page
    client.post(reverse("breach_publish", args=[breached.breach.pk]))
    assert not PublishedUpdate.objects.exists()


def test_an_outsider_cannot_publish_a_holding_statement(breached, login):
    from reviewer.models import PublishedUpdate

    assert login("outsider").post(reverse("breach_publish", args=[breached.breach.pk])).status_code == 403
    assert not PublishedUpdate.objects.exists()


def test_the_demo_makes_deadline_rules_and_an_approved_holding_statement_per_p1_incident(demo_data, users):
    from reviewer.demo.seed import load_deadline_rules, load_holding_statements

    load_deadline_rules()
    load_holding_statements()
    load_holding_statements()  # once
    assert deadlines.rule_for("P1", "reflection").minutes == 10
    p1 = [i for i in demo_data.values() if i.severity == "P1"]
    statements = HoldingStatement.objects.all()
    assert len(p1) >= 1 and statements.count() == len(p1)
    assert all(s.approved_by == users.admin and s.guard["ok"] for s in statements)
    assert all(deadlines.offerable_statement(incident) is not None for incident in p1)


# -- a bounded sweep ------------------------------------------------------------------------------


@pytest.fixture
def many_breached(incident, rules, monkeypatch):
    """1,000 pending escalations past their deadline (bulk-created: the sweep is what is measured),
    deadlines a minute apart, and a channel that wants breaches; sending is not part of it."""
    from reviewer.models import Notification, NotificationChannel

    monkeypatch.setenv("OUTBOUND_DESTINATIONS", "team-hook=http://127.0.0.1:9/x")
    monkeypatch.setattr("reviewer.alerts.tasks.send_notification.delay", lambda pk: None)
    NotificationChannel.objects.create(name="duty managers", destination="team-hook", group="second",
                                       events=["breach"])
    runs = Run.objects.bulk_create(Run(pipeline="reflection", goal="Write it.", incident=incident,
                                       status=Run.Status.STOPPED, stop_reason="policy_escalation")
                                   for _ in range(1000))
    # Created newest deadline first, so the order of their ids is not the order of their deadlines.
    Escalation.objects.bulk_create(
        Escalation(run=run, stop_reason="policy_escalation", opened_at=T0 - timedelta(days=2),
                   notified_at=T0 - timedelta(days=2), deadline_at=T0 - timedelta(minutes=i))
        for i, run in enumerate(runs))
    return Notification


def test_one_sweep_handles_a_batch_oldest_deadline_first_in_few_queries_and_the_next_ones_the_rest(
        many_breached, settings, django_assert_max_num_queries):
    Notification = many_breached
    settings.DEADLINE_SWEEP_BATCH = 200
    with at(0):
        with django_assert_max_num_queries(30):  # 26 on SQLite with the ledger's first entries: none per row
            assert deadlines.sweep() == {"opened": 0, "reminder": 0, "breach": 200}
        oldest = list(Escalation.objects.order_by("deadline_at").values_list("pk", flat=True)[:200])
        assert sorted(DeadlineBreach.objects.values_list("escalation_id", flat=True)) == sorted(oldest)
        assert Notification.objects.filter(event="breach").count() == 200

        assert [deadlines.sweep()["breach"] for _ in range(5)] == [200, 200, 200, 200, 0]
    assert DeadlineBreach.objects.count() == 1000
    assert Escalation.objects.filter(breached_at=None).count() == 0
    per_escalation = Notification.objects.values_list("escalation_id", flat=True)
    assert len(per_escalation) == len(set(per_escalation)) == 1000  # none notified twice


def test_a_sweep_that_used_its_whole_batch_enqueues_a_follow_up_and_one_that_did_not_does_not(
        many_breached, settings, monkeypatch):
    from reviewer.alerts.tasks import sweep_deadlines

    follow_ups = []
    monkeypatch.setattr("reviewer.alerts.tasks.enqueue_on_commit", lambda name, *a, **k: follow_ups.append(name))
    settings.DEADLINE_SWEEP_BATCH = 600
    with at(0):
        assert sweep_deadlines.apply().get()["breach"] == 600
        assert follow_ups == ["reviewer.tasks.sweep_deadlines"]
        assert sweep_deadlines.apply().get()["breach"] == 400
        assert follow_ups == ["reviewer.tasks.sweep_deadlines"]


def test_a_sweep_takes_none_of_a_batch_another_sweep_took_part_of_meanwhile(many_breached, settings,
                                                                                monkeypatch):
    """A database without row locks (SQLite) lets two sweeps read the same due rows: the take is a
    conditional UPDATE, and a sweep that did not win every row of its batch takes none of it."""
    Notification = many_breached
    settings.DEADLINE_SWEEP_BATCH = 200
    take = deadlines.take

    def taken_meanwhile(event, pks, now):
        Escalation.objects.filter(pk=pks[7]).update(breached_at=now)  # the other sweep, in between
        return take(event, pks, now)

    monkeypatch.setattr(deadlines, "take", taken_meanwhile)
    with at(0):
        assert deadlines.sweep()["breach"] == 0
    assert not DeadlineBreach.objects.exists() and not Notification.objects.exists()
    monkeypatch.setattr(deadlines, "take", take)
    with at(0):
        assert deadlines.sweep()["breach"] == 200  # the next sweep takes the batch


def test_sweeps_at_once_share_the_due_breaches_and_take_each_once(many_breached, postgres, settings):
    """PostgreSQL: each sweep locks the rows it takes and skips those another sweep holds."""
    from tests.concurrency import at_once

    Notification = many_breached
    settings.DEADLINE_SWEEP_BATCH = 300
    with at(0):
        answers = at_once(lambda i: deadlines.sweep()["breach"], 4, within=120)
    assert all(isinstance(answer, int) for answer in answers), answers
    assert sum(answers) == 1000 and max(answers) <= 300
    assert DeadlineBreach.objects.count() == 1000
    per_escalation = Notification.objects.values_list("escalation_id", flat=True)
    assert len(per_escalation) == len(set(per_escalation)) == 1000

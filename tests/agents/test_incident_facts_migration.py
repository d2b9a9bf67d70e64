"""The migration that moved the payment columns into facts (agents 0006): every value kept, and the
pipelines end the same on the demo incident before and after."""

import json

import pytest
from django.core.management.sql import emit_post_migrate_signal
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from agents.core.llm.offline import OfflineModel
from agents.core.pipelines import run_pipeline
from agents.core.policy import default_policy
from agents.models import Incident

BEFORE = ("agents", "0007_claim_families")
AFTER = ("agents", "0008_incident_facts")

# What Incident.context() gave for the demo incident before the migration (the columns' era).
OLD_CONTEXT = {
    "report_date": "2026-11-22", "region": "US",
    "incident": {"incident_id": "inc_pay_2041", "severity": "P1", "status": "degraded",
                 "affected_checkout_pct": 27.0, "failed_payment_rate": 0.034, "chargeback_alerts": 5,
                 "eta_minutes": 45},
    "policy_hints": {"avoid_absolute_guarantees": True, "max_length_increase_pct": 20},
    "approved_actions": ["monitor payment failures every 15 minutes",
                         "publish customer update via status page every 15 minutes",
                         "prepare support macro with workaround guidance"],
}
# How the demo runs on it ended before the migration (recorded on the code of before): status,
# stop reason, outcome.
ENDS_BEFORE = {
    ("reflection", "Write the customer update for the P1 payment degradation."): ("ok", "success", "revised_once"),
    ("reflection", "Tell affected customers they will receive service credits for failed payments."):
        ("stopped", "policy_escalation", None),
    ("self_critique", "Write the customer update for the P1 payment degradation."): ("ok", "success", "revised_once"),
}


def migrate_forward():
    """Every app to its newest migration: the models of today read the migrated rows."""
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def migrate(target):
    executor = MigrationExecutor(connection)
    executor.migrate([target])
    executor.loader.build_graph()
    return executor.loader.project_state([target]).apps


@pytest.fixture(scope="module")
def migrated(django_db_setup, django_db_blocker):
    """The incidents of the columns' era, written at agents 0007 and migrated to today, once for the
    module: a migration back and forth takes 20-30 s, and the tests only read what it left."""
    with django_db_blocker.unblock():
        apps = migrate(BEFORE)
        OldIncident = apps.get_model("agents", "Incident")
        OldIncident.objects.create(
            incident_id="inc_pay_2041", title="P1 payment degradation in the US", report_date="2026-11-22",
            region="US", severity="P1", status="degraded", affected_checkout_pct=27.0, failed_payment_rate=0.034,
            chargeback_alerts=5, eta_minutes=45, policy_hints=OLD_CONTEXT["policy_hints"],
            approved_actions=OLD_CONTEXT["approved_actions"])
        # Odd values too: a float that is no short decimal, zero, a large count, and no facts at all.
        OldIncident.objects.create(incident_id="inc_odd", title="Odd", region="", affected_checkout_pct=1 / 3,
                                   failed_payment_rate=0.0, chargeback_alerts=2_000_000_000)
        OldIncident.objects.create(incident_id="inc_none", title="Nothing", region="EU")
        migrate(AFTER)
        migrate_forward()
        # What `manage.py migrate` does after its plan, and a migration executor does not: the hooks
        # that make the rows a fresh database has (the default status page channel among them).
        emit_post_migrate_signal(verbosity=0, interactive=False, db=connection.alias)
        yield
        Incident.objects.filter(incident_id__in=["inc_pay_2041", "inc_odd", "inc_none"]).delete()


def test_every_payment_column_becomes_a_fact_with_its_value(migrated, db):

    pay = Incident.objects.get(incident_id="inc_pay_2041")
    assert [(f.key, f.label, f.typed_value, f.unit) for f in pay.fact_list()] == [
        ("affected_checkout_pct", "Checkouts affected", 27, "%"),
        ("failed_payment_rate", "Failed payment rate", 0.034, "ratio"),
        ("chargeback_alerts", "Chargeback alerts", 5, "count"),
        ("eta_minutes", "ETA", 45, "minutes"),
    ]
    assert pay.regions == ["US"]
    odd = Incident.objects.get(incident_id="inc_odd")
    assert {f.key: f.typed_value for f in odd.fact_list()} == {
        "affected_checkout_pct": 1 / 3, "failed_payment_rate": 0, "chargeback_alerts": 2_000_000_000}
    assert odd.regions == []
    none = Incident.objects.get(incident_id="inc_none")
    assert none.fact_list() == [] and none.regions == ["EU"] and "fact_meta" not in none.context()


def test_the_run_context_keeps_the_shape_and_values_the_pipelines_read(migrated, db):

    context = Incident.objects.get(incident_id="inc_pay_2041").context()

    # The identity now also carries the title (what the incident is) and the state its status reads
    # as (agents 0014); the rest is as before.
    title = context["incident"].pop("title")
    assert title == "P1 payment degradation in the US"
    assert context["incident"].pop("state") == "investigating"
    assert {k: v for k, v in context.items() if k != "fact_meta"} == OLD_CONTEXT
    assert json.dumps(context["incident"]) == json.dumps({**OLD_CONTEXT["incident"], "affected_checkout_pct": 27})


@pytest.mark.parametrize("pipeline, goal", list(ENDS_BEFORE))
def test_the_pipelines_end_the_same_on_the_demo_incident_before_and_after(migrated, db, pipeline, goal):
    context = Incident.objects.get(incident_id="inc_pay_2041").context()

    before = run_pipeline(pipeline, goal=goal, context=OLD_CONTEXT, policy=default_policy(pipeline), llm=OfflineModel())
    after = run_pipeline(pipeline, goal=goal, context=context, policy=default_policy(pipeline), llm=OfflineModel())

    assert (before.status, before.stop_reason, before.outcome) == ENDS_BEFORE[pipeline, goal]
    assert (after.status, after.stop_reason, after.outcome) == ENDS_BEFORE[pipeline, goal]
    assert [s["phase"] for s in after.trace] == [s["phase"] for s in before.trace]
    if after.answer:
        assert "27%" in after.answer and "3.4%" in after.answer and "45 minutes" in after.answer


def test_the_migration_reverses_to_the_columns(migrated, transactional_db):
    apps = migrate(BEFORE)
    try:
        old = apps.get_model("agents", "Incident").objects.get(incident_id="inc_pay_2041")
    finally:
        migrate_forward()
    assert (old.affected_checkout_pct, old.failed_payment_rate, old.chargeback_alerts, old.eta_minutes, old.region) \
        == (27.0, 0.034, 5, 45, "US")

"""An incident's state and its facts' visibility (docs/incidents.md): the migration that adds them,
the run context's shape, the one incident action, the versions and the admin."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from agents.incidents import update_incident
from agents.models import Incident
from agents.models.incidents import state_for_status
from tests.agents.conftest import post_change

BEFORE = ("agents", "0013_run_page_queries")
AFTER = ("agents", "0014_incident_state_fact_visibility")

FACTS = [
    {"key": "failed_login_pct", "label": "Failed sign-ins", "value": "8", "unit": "%"},
    {"key": "on_call_engineer", "label": "On-call engineer", "value": "Dana Whitfield", "visibility": "internal"},
    {"key": "gateway_host", "label": "Gateway host", "value": "auth-gateway.eu.internal", "visibility": "internal"},
]


# ---------------------------------------------------------------- the migration


def migrate(target):
    executor = MigrationExecutor(connection)
    executor.migrate([target])
    executor.loader.build_graph()
    return executor.loader.project_state([target]).apps


@pytest.fixture
def before_the_migration(transactional_db):
    apps = migrate(BEFORE)
    yield apps
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


STATUSES = {
    "degraded": "investigating", "": "investigating", "Investigating login errors": "investigating",
    "Root cause found: expired certificate": "identified", "identified": "identified",
    "mitigated": "monitoring", "Monitoring the fix": "monitoring", "recovering": "monitoring",
    "resolved": "resolved", "Closed": "resolved", "resolved; monitoring": "resolved",
}


def test_the_migration_keeps_every_fact_public_and_reads_each_state_from_the_status(before_the_migration):
    apps = before_the_migration
    OldIncident, OldFact = apps.get_model("agents", "Incident"), apps.get_model("agents", "IncidentFact")
    OldVersion = apps.get_model("agents", "IncidentVersion")
    for i, status in enumerate(STATUSES):
        incident = OldIncident.objects.create(incident_id=f"inc_{i}", title=f"Incident {i}", status=status)
        OldFact.objects.create(incident=incident, key="eta_minutes", label="ETA", value="45", unit="minutes")
    old = OldIncident.objects.get(incident_id="inc_5")  # mitigated: a version from before states
    OldVersion.objects.create(incident=old, number=1, snapshot={
        "title": "Incident 5", "severity": "", "status": "mitigated", "regions": [],
        "facts": [{"key": "eta_minutes", "label": "ETA", "value": 45, "unit": "minutes"}],
        "approved_actions": [], "key_messages": [], "policy_hints": {}})

    migrate(AFTER)
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    states = {incident.status: incident.state for incident in Incident.objects.all()}
    assert states == STATUSES
    assert {fact.visibility for incident in Incident.objects.all() for fact in incident.fact_list()} == {"public"}
    # The version recorded before states existed reads with the state its status gives: no new version.
    migrated = Incident.objects.get(incident_id="inc_5")
    assert migrated.record_version().number == 1
    assert "internal" not in migrated.context() and migrated.context()["incident"]["state"] == "monitoring"


@pytest.mark.parametrize("status, state", list(STATUSES.items()))
def test_the_state_a_status_reads_as(status, state):
    assert state_for_status(status) == state


# ---------------------------------------------------------------- the context


def test_internal_facts_are_only_under_internal_and_the_state_is_in_the_identity(db):
    incident = update_incident("inc_login", title="Sign-in failures", state="identified", status="degraded",
                               facts=FACTS).incident

    context = incident.context()

    assert context["incident"] == {"incident_id": "inc_login", "title": "Sign-in failures", "state": "identified",
                                   "status": "degraded", "failed_login_pct": 8}
    assert context["fact_meta"] == [{"key": "failed_login_pct", "label": "Failed sign-ins", "unit": "%"}]
    assert context["internal"] == {"on_call_engineer": "Dana Whitfield", "gateway_host": "auth-gateway.eu.internal"}


def test_a_context_without_internal_facts_has_no_internal_entry(db):
    incident = update_incident("inc_plain", title="Exports failing", facts=FACTS[:1]).incident

    assert "internal" not in incident.context()
    assert incident.context()["incident"]["state"] == "investigating"


def test_the_incident_page_marks_internal_facts_for_people(db):
    incident = update_incident("inc_login", title="Sign-in failures", state="monitoring", facts=FACTS).incident

    assert ("State", "Monitoring") in incident.facts
    assert ("On-call engineer (internal)", "Dana Whitfield") in incident.facts
    assert ("Failed sign-ins", "8%") in incident.facts


# ---------------------------------------------------------------- the action and the versions


def test_a_state_change_and_a_visibility_change_are_new_versions_that_say_so(db, users):
    update_incident("inc_login", user=users.ops, title="Sign-in failures", facts=FACTS)

    change = update_incident("inc_login", user=users.ops, state="resolved",
                             upsert_facts=[{"key": "gateway_host", "value": "auth-gateway.eu.internal",
                                            "visibility": "public"}])

    assert change.version.number == 2
    assert change.version.changes == [
        {"what": "State", "before": "investigating", "after": "resolved"},
        {"what": "Gateway host visibility", "before": "internal", "after": "public"},
    ]
    assert change.version.snapshot["state"] == "resolved"
    assert change.incident.context()["incident"]["gateway_host"] == "auth-gateway.eu.internal"
    assert update_incident("inc_login", state="resolved").version.number == 2  # nothing changed


def test_an_unknown_state_or_visibility_is_refused(db):
    from django.core.exceptions import ValidationError

    from agents.incidents import FactInvalid

    with pytest.raises(ValidationError):
        update_incident("inc_x", title="X", state="fixed")
    with pytest.raises(FactInvalid):
        update_incident("inc_x", title="X", facts=[{"key": "host", "value": "a", "visibility": "secret"}])
    assert not Incident.objects.exists()


# ---------------------------------------------------------------- the admin


def test_an_admin_makes_a_fact_internal_and_sets_the_state(db, users, client):
    incident = update_incident("inc_login", title="Sign-in failures", facts=FACTS[:1] + [
        {"key": "on_call_engineer", "label": "On-call engineer", "value": "Dana Whitfield"}]).incident
    client.force_login(users.admin)

    response = post_change(client, "incident", incident, state="identified",
                           **{"fact_rows-1-visibility": "internal"})

    assert response.status_code == 302
    incident.refresh_from_db()
    assert incident.state == "identified"
    assert {f.key: f.visibility for f in incident.fact_list()} == {"failed_login_pct": "public",
                                                                    "on_call_engineer": "internal"}
    assert incident.context()["internal"] == {"on_call_engineer": "Dana Whitfield"}
    latest = incident.latest_version()
    assert latest.created_by == users.admin
    assert {"what": "On-call engineer visibility", "before": "public", "after": "internal"} in latest.changes


def test_the_admin_page_offers_visibility_and_state(db, users, client):
    incident = update_incident("inc_login", title="Sign-in failures", facts=FACTS).incident
    client.force_login(users.admin)

    html = client.get(f"/admin/agents/incident/{incident.pk}/change/").content.decode()

    assert 'name="state"' in html and 'name="fact_rows-0-visibility"' in html
    assert '<option value="internal" selected>' in html

"""Versions of an incident's facts: every change is a new immutable version, and a run records the
version it ran on."""

import pytest
from django.urls import reverse

from agents.models import IncidentFact, IncidentVersion
from agents.tasks import start_run
from tests.factories import make_incident


@pytest.fixture
def incident(db):
    return make_incident("inc_v", severity="P2", eta_minutes=45)


def test_the_first_record_is_version_one_and_an_unchanged_incident_keeps_it(incident, users):
    first = incident.record_version(users.ops)

    assert (first.number, first.changes, first.created_by) == (1, [], users.ops)
    assert incident.record_version(users.ops) == first
    assert incident.versions.count() == 1


def test_a_changed_fact_makes_a_new_version_that_says_what_changed(incident, users):
    incident.record_version()
    IncidentFact.objects.filter(incident=incident, key="eta_minutes").update(value="30")
    incident.status = "mitigated"
    incident.save()

    second = incident.record_version(users.admin)

    assert second.number == 2 and second.created_by == users.admin
    assert second.changes == [{"what": "Status", "before": "degraded", "after": "mitigated"},
                              {"what": "ETA", "before": "45 minutes", "after": "30 minutes"}]


def test_a_version_is_immutable(incident):
    version = incident.record_version()
    version.changes = ["forged"]
    with pytest.raises(ValueError, match="immutable"):
        version.save()
    with pytest.raises(ValueError, match="immutable"):
        version.delete()
    assert IncidentVersion.objects.get().changes == []


def test_a_run_records_the_version_it_ran_on(incident, users):
    run, _ = start_run(pipeline="reflection", goal="Write it.", incident=incident, user=users.ops, enqueue=False)
    IncidentFact.objects.filter(incident=incident, key="eta_minutes").update(value="30")
    later, _ = start_run(pipeline="reflection", goal="Write it.", incident=incident, user=users.ops, enqueue=False)

    assert run.incident_version.number == 1 and run.incident_version.snapshot["facts"][0]["value"] == 45
    assert later.incident_version.number == 2 and later.context["incident"]["eta_minutes"] == 30


def test_an_admin_edit_of_a_fact_in_line_records_a_version_by_its_author(incident, users, client):
    from tests.drills.test_bad_input import incident_form

    incident.record_version()
    client.force_login(users.admin)
    response = client.post(reverse("admin:agents_incident_change", args=[incident.pk]),
                           incident_form(incident, **{"fact_rows-0-value": "30"}))

    assert response.status_code == 302
    latest = incident.latest_version()
    assert (latest.number, latest.created_by) == (2, users.admin)
    assert latest.changes == [{"what": "ETA", "before": "45 minutes", "after": "30 minutes"}]


def test_an_admin_fact_that_does_not_fit_its_unit_is_refused_with_a_message(incident, users, client):
    from tests.drills.test_bad_input import incident_form

    client.force_login(users.admin)
    response = client.post(reverse("admin:agents_incident_change", args=[incident.pk]),
                           incident_form(incident, **{"fact_rows-0-value": "soon"}))

    assert response.status_code == 200
    assert "is not a number" in response.content.decode()
    assert IncidentFact.objects.get(incident=incident).value == "45"


def test_the_incident_page_shows_the_history(incident, users, client):
    incident.record_version(users.ops)
    IncidentFact.objects.filter(incident=incident, key="eta_minutes").update(value="30")
    incident.record_version(users.admin)
    client.force_login(users.ops)

    page = client.get(reverse("incident", args=[incident.incident_id])).content.decode()

    assert "History of the facts" in page and "v2" in page and "ETA 45 minutes → 30 minutes" in page

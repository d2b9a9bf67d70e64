"""What is ready to publish: the queue (reviewer.outbox.ready), the /publish/ page, its count in the
navigation and on the dashboard, the runs list's filter and the incident page's note."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from agents.models import Run
from reviewer.desk.decisions import decide
from reviewer.models import Decision
from reviewer.outbox import tasks
from reviewer.outbox.publishing import publish
from reviewer.outbox.ready import publish_queue, ready_to_publish
from reviewer.roles import POLICY_ADMIN
from tests.factories import make_escalation, make_incident, make_run, make_user

TEXT = "We are investigating a problem in the EU. Current status: degraded."
FLAGGED = TEXT + " We will restore service by 18:00 UTC."


@pytest.fixture(autouse=True)
def no_broker(monkeypatch):
    monkeypatch.setattr(tasks.deliver, "delay", lambda pk: None)


@pytest.fixture
def incident(db):
    return make_incident("inc_pay", title="Payments failing", severity="P1")


def approved(incident, lead, *, text: str = "", note: str = "", pipeline: str = "reflection"):
    """A run whose escalation the lead approved (edited to ``text`` if given), through decide()."""
    escalation = make_escalation(incident=incident, pipeline=pipeline, text=TEXT)
    if text:
        decide(escalation.pk, lead, Decision.Action.EDIT_APPROVE, text=text, note=note)
    else:
        decide(escalation.pk, lead, Decision.Action.APPROVE)
    return escalation.run


def passed(incident, text: str = TEXT, pipeline: str = "reflection", **fields):
    return make_run(pipeline, incident=incident, snapshot=True, status=Run.Status.OK, answer=text,
                    finished_at=timezone.now(), **fields)


def listed() -> list[int]:
    return [run.pk for run in publish_queue()]


def test_approved_and_gate_passed_texts_are_listed_and_nothing_else(users, incident):
    with time_machine.travel(timezone.now() - timedelta(minutes=10)):  # published before the others passed
        publish(incident, TEXT, actor=users.ops, source_run=passed(incident))
        again = TEXT + " The team is still working on it."  # a repeat would wait for a person's confirmation
        publish(incident, again, actor=None, source_run=passed(incident, again))  # what auto_publish does
    approve = approved(incident, users.lead)
    edit = approved(incident, users.lead, text=TEXT + " Payments in the EU are slow.", note="Checked.",
                    pipeline="self_critique")
    gate = passed(incident)

    make_escalation(incident=incident)  # pending
    rejected = make_escalation(incident=incident)
    decide(rejected.pk, users.lead, Decision.Action.REJECT, note="Not accurate.")
    passed(incident, pipeline="routing")  # routing runs answer tickets, not customers
    make_run("reflection", status=Run.Status.OK, answer=TEXT)  # on no incident
    make_run("reflection", incident=incident, status=Run.Status.STOPPED, stop_reason="llm_timeout")
    passed(incident, text="")  # nothing to publish
    passed(incident, created_at=timezone.now() - timedelta(hours=25))  # drafted before the window
    with time_machine.travel(timezone.now() - timedelta(hours=25)):
        approved(incident, users.lead)  # approved, but a day old: no longer news

    assert sorted(listed()) == sorted([approve.pk, edit.pk, gate.pk])
    assert ready_to_publish().count() == 3


def test_a_newer_update_drops_a_gate_passed_text_and_marks_an_approved_one(users, incident):
    gate = passed(incident)
    lead_asked = approved(incident, users.lead)
    with time_machine.travel(timezone.now() + timedelta(minutes=5)):
        publish(incident, TEXT, actor=users.ops, source_run=passed(incident))
    rows = {run.pk: run for run in publish_queue()}
    assert gate.pk not in rows  # nobody asked for it, and customers already read something newer
    assert rows[lead_asked.pk].newer_version == 1

    page = _ops_page(users, reverse("ready_to_publish"))
    assert "A newer update is published:" in page and "update v1 went" in page


def test_the_incident_with_the_most_recent_text_comes_first_and_its_texts_newest_first(users, incident):
    quiet = make_incident("inc_quiet", title="Slow search")
    now = timezone.now()
    with time_machine.travel(now - timedelta(minutes=30)):
        old = approved(incident, users.lead)
    with time_machine.travel(now - timedelta(minutes=20)):
        quiet_text = approved(quiet, users.lead)
    with time_machine.travel(now - timedelta(minutes=3)):
        newest = approved(incident, users.lead)
    assert listed() == [newest.pk, old.pk, quiet_text.pk]


def _ops_page(users, url: str, who: str = "ops") -> str:
    client = Client()
    client.force_login(getattr(users, who))
    response = client.get(url)
    assert response.status_code == 200
    return response.content.decode()


def test_the_page_says_who_approved_how_long_ago_and_links_to_the_confirmation(users, incident):
    with time_machine.travel(timezone.now() - timedelta(minutes=12)):
        run = approved(incident, users.lead)
    gate = passed(incident)
    page = _ops_page(users, reverse("ready_to_publish"))
    assert "<title>Ready to publish · Gated review</title>" in page
    assert "Payments failing" in page and "inc_pay" in page
    assert "by Lena," in page and "12 min ago</time>" in page
    assert "passed every gate" in page
    assert page.count("Review and publish…") == 2
    assert f'href="{reverse("publish_confirm", args=[run.pk])}"' in page
    assert f'href="{reverse("publish_confirm", args=[gate.pk])}"' in page


def test_overridden_findings_are_flagged_on_the_page(users, incident):
    approved(incident, users.lead, text=FLAGGED, note="The fix is deployed.", pipeline="self_critique")
    page = _ops_page(users, reverse("ready_to_publish"))
    assert "overridden finding" in page and "to acknowledge</strong>" in page
    assert "edited and approved" in page


def test_the_empty_page_says_what_will_appear_here(users, db):
    page = _ops_page(users, reverse("ready_to_publish"))
    assert "Nothing is waiting to be published." in page
    assert "When a support lead approves a text" in page


def test_text_on_the_page_is_escaped(users, db):
    incident = make_incident("inc_x", title="<script>alert(1)</script>")
    passed(incident, text="Hello <b>world</b>, we are investigating.")
    page = _ops_page(users, reverse("ready_to_publish"))
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;" in page
    assert "<b>world</b>" not in page


@pytest.mark.parametrize("who, status", [("ops", 200), ("lead", 200), ("policy_admin", 403), ("outsider", 403)])
def test_only_people_who_may_publish_open_the_page(client, users, who, status):
    person = make_user("policy", group=POLICY_ADMIN) if who == "policy_admin" else getattr(users, who)
    client.force_login(person)
    response = client.get(reverse("ready_to_publish"))
    assert response.status_code == status
    if status == 403:
        assert "Only ops staff and support leads can publish updates" in response.content.decode()


def test_the_page_needs_a_login(client, db):
    response = client.get(reverse("ready_to_publish"))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_the_navigation_and_the_dashboard_count_the_queue_for_ops(users, incident, client):
    approved(incident, users.lead)
    passed(incident)
    page = _ops_page(users, reverse("home"))
    assert '<span class="badge" id="ready-count">2</span>' in page
    assert f'<a href="{reverse("ready_to_publish")}" id="dashboard-ready">2</a>' in page
    assert "texts ready to publish" in page

    client.force_login(make_user("policy", group=POLICY_ADMIN))
    other = client.get(reverse("home")).content.decode()
    assert "ready-count" not in other and "dashboard-ready" not in other


def test_the_badge_is_hidden_at_zero(users, db):
    page = _ops_page(users, reverse("home"))
    assert 'id="ready-count" hidden>0</span>' in page


def test_the_runs_list_filters_what_is_ready_to_publish(users, incident):
    ready = approved(incident, users.lead)
    pending = make_escalation(incident=incident).run
    page = _ops_page(users, reverse("runs") + "?ready=on")
    assert f'href="/runs/{ready.pk}/"' in page and f'href="/runs/{pending.pk}/"' not in page
    assert 'name="ready"' in page and "checked" in page
    everything = _ops_page(users, reverse("runs"))
    assert f'href="/runs/{pending.pk}/"' in everything


def test_the_incident_page_says_what_waits_to_be_published(users, incident):
    first = approved(incident, users.lead)
    second = approved(incident, users.lead)
    approved(make_incident("inc_other"), users.lead)
    page = _ops_page(users, reverse("incident", args=[incident.incident_id]))
    assert "2 approved texts" in page and "are waiting to be published" in page
    for run in (first, second):
        assert f'<a href="{reverse("publish_confirm", args=[run.pk])}">Review and publish run {run.pk}</a>' in page
    passed(incident)
    page = _ops_page(users, reverse("incident", args=[incident.incident_id]))
    assert "3 texts" in page and "approved texts" not in page


def test_the_incident_page_says_nothing_when_nothing_waits_or_to_people_who_cannot_publish(users, incident, client):
    assert 'id="ready-to-publish"' not in _ops_page(users, reverse("incident", args=[incident.incident_id]))
    approved(incident, users.lead)
    client.force_login(make_user("policy", group=POLICY_ADMIN))
    assert 'id="ready-to-publish"' not in client.get(reverse("incident", args=[incident.incident_id])).content.decode()


def test_the_page_runs_as_many_queries_for_many_texts_as_for_one(users, incident, client,
                                                                 django_assert_max_num_queries):
    client.force_login(users.ops)
    approved(incident, users.lead, text=FLAGGED, note="The fix is deployed.", pipeline="self_critique")
    passed(incident)
    with CaptureQueriesContext(connection) as few:
        assert client.get(reverse("ready_to_publish")).status_code == 200
    for i in range(6):
        other = make_incident(f"inc_more_{i}")
        approved(other, users.lead2)
        approved(other, users.lead, text=FLAGGED, note="The fix is deployed.", pipeline="self_critique")
        passed(other)
    with django_assert_max_num_queries(len(few)):
        page = client.get(reverse("ready_to_publish")).content.decode()
    assert page.count("Review and publish…") == 20

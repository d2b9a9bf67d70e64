"""Scheduled maintenance (docs/status-page.md, 'Scheduled maintenance'): ops schedule a window whose
text passes the guard; the sweep moves it at its times (telling nobody unless asked) and reminds
subscribers once; an extension or a cancellation is emailed; the page, the banner, the components
and the JSON endpoints show each step, cached like the other representations."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.core import mail

from agents.core.guard.incident_claims import state_supports
from reviewer.models import Maintenance, MaintenanceNotice, Subscriber
from reviewer.outbox.maintenance import MaintenanceRefused, advance, post_update, remind, schedule

NOW = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)
TEXT = "We will upgrade the Checkout database. Checkout may be slow for a few minutes."
ENDPOINTS = ["/status/api/v2/scheduled-maintenances.json", "/status/api/v2/scheduled-maintenances/upcoming.json",
             "/status/api/v2/scheduled-maintenances/active.json"]


@pytest.fixture
def clock():
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


@pytest.fixture
def subscribers(components):
    """One subscriber of every update, one of Checkout, one of Sign-in only, one unconfirmed."""
    every = Subscriber.objects.create(email="every@example.com", confirmed_at=NOW)
    checkout = Subscriber.objects.create(email="checkout@example.com", confirmed_at=NOW)
    checkout.components.set([components["Checkout"]])
    sign_in = Subscriber.objects.create(email="signin@example.com", confirmed_at=NOW)
    sign_in.components.set([components["Sign-in"]])
    Subscriber.objects.create(email="unconfirmed@example.com")
    return every, checkout, sign_in


def window(components, users, *, start=timedelta(hours=2), length=timedelta(hours=1), **kwargs):
    return schedule(title="Database upgrade", text=TEXT, components=[components["Checkout"], components["API"]],
                    starts_at=NOW + start, ends_at=NOW + start + length, actor=users.ops, **kwargs)


def recipients():
    return sorted(address for message in mail.outbox for address in message.to)


def json_of(client, path):
    response = client.get(path)
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    return response.json()["scheduled_maintenances"]


def test_the_guard_knows_a_window_in_progress_from_one_scheduled():
    assert state_supports("in_progress", "in_progress") is True
    assert state_supports("in_progress", "scheduled") is False
    assert state_supports("in_progress", "completed") is False
    assert state_supports("in_progress", "investigating") is True  # an incident's text is not a window's
    assert state_supports("ongoing", "scheduled") is False


@pytest.mark.django_db(transaction=True)
def test_a_text_claiming_the_work_is_under_way_before_it_starts_is_refused(clock, components, users):
    with pytest.raises(MaintenanceRefused, match="maintenance is in progress"):
        schedule(title="Database upgrade", text="The maintenance is in progress.", components=[components["API"]],
                 starts_at=NOW + timedelta(hours=1), ends_at=NOW + timedelta(hours=2), actor=users.ops)
    assert not Maintenance.objects.exists()
    maintenance = window(components, users, start=timedelta(minutes=-5))
    advance()
    post_update(maintenance, text="The maintenance is in progress and will take longer.",
                ends_at=NOW + timedelta(hours=3))  # in progress now: true
    with pytest.raises(MaintenanceRefused, match="end after it starts"):
        window(components, users, length=timedelta(0))


@pytest.mark.django_db(transaction=True)
def test_a_window_moves_by_itself_at_its_times_and_tells_nobody(client, clock, subscribers, users, components):
    maintenance = window(components, users)
    assert recipients() == ["checkout@example.com", "every@example.com"]  # the announcement
    assert client.get("/status/").content.decode().count("Database upgrade") == 1
    [shown] = json_of(client, ENDPOINTS[1])
    assert (shown["name"], shown["status"], shown["impact"]) == ("Database upgrade", "scheduled", "maintenance")
    assert shown["scheduled_for"] == "2026-12-02T12:00:00Z" and shown["scheduled_until"] == "2026-12-02T13:00:00Z"
    assert [c["name"] for c in shown["components"]] == ["Checkout", "API"]
    assert shown["incident_updates"][0]["body"] == TEXT
    assert json_of(client, ENDPOINTS[2]) == []
    assert client.get("/status/api/v2/summary.json").json()["scheduled_maintenances"] == [shown]
    mail.outbox.clear()

    clock.move_to(NOW + timedelta(hours=2))
    assert advance() == 1 and advance() == 0
    assert mail.outbox == []
    maintenance.refresh_from_db()
    assert maintenance.status == "in_progress" and maintenance.started_at == NOW + timedelta(hours=2)
    page = client.get("/status/").content.decode()
    assert "Under maintenance" in page and "Maintenance in progress" in page
    summary = client.get("/status/api/v2/summary.json").json()
    assert summary["status"] == {"indicator": "maintenance", "description": "Under maintenance"}
    statuses = {c["name"]: c["status"] for c in summary["components"]}
    assert statuses == {"Checkout": "under_maintenance", "API": "under_maintenance", "Sign-in": "operational"}
    [active] = json_of(client, ENDPOINTS[2])
    assert active["status"] == "in_progress" and active["started_at"] == "2026-12-02T12:00:00Z"
    assert [u["status"] for u in active["incident_updates"]] == ["in_progress", "scheduled"]
    assert json_of(client, ENDPOINTS[1]) == []

    clock.move_to(NOW + timedelta(hours=3))
    assert advance() == 1
    assert mail.outbox == []
    assert json_of(client, ENDPOINTS[2]) == [] and json_of(client, ENDPOINTS[1]) == []
    [done] = json_of(client, ENDPOINTS[0])
    assert done["status"] == "completed" and done["resolved_at"] == "2026-12-02T13:00:00Z"
    summary = client.get("/status/api/v2/summary.json").json()
    assert summary["scheduled_maintenances"] == [] and summary["status"]["indicator"] == "none"
    page = client.get("/status/").content.decode()
    assert "All systems operational" in page and "component-under_maintenance" not in page
    assert "bar-under_maintenance" in page  # today's bar keeps the window, as history, not as downtime


@pytest.mark.django_db(transaction=True)
def test_moves_are_emailed_when_ops_ask(clock, subscribers, users, components):
    window(components, users, start=timedelta(minutes=30), notify_moves=True)
    mail.outbox.clear()
    clock.move_to(NOW + timedelta(minutes=30))
    advance()
    assert recipients() == ["checkout@example.com", "every@example.com"]
    assert "In progress" in mail.outbox[0].subject


@pytest.mark.django_db(transaction=True)
def test_an_incident_outage_outranks_maintenance_on_a_component(client, clock, components, users, publish_update,
                                                                 incident):
    window(components, users, start=timedelta(minutes=-1))
    advance()
    publish_update(incident, title="Card payments failing", components={"Checkout": "partial_outage"})
    summary = client.get("/status/api/v2/summary.json").json()
    statuses = {c["name"]: c["status"] for c in summary["components"]}
    assert statuses["Checkout"] == "partial_outage" and statuses["API"] == "under_maintenance"
    assert summary["status"]["indicator"] == "major"


@pytest.mark.django_db(transaction=True)
def test_subscribers_are_reminded_once_before_the_start(clock, subscribers, users, components, settings):
    settings.MAINTENANCE_REMINDER_MINUTES = 60
    maintenance = window(components, users, start=timedelta(hours=2))
    mail.outbox.clear()
    clock.move_to(NOW + timedelta(minutes=59))
    assert remind() == 0
    clock.move_to(NOW + timedelta(hours=1))
    advance()
    assert recipients() == ["checkout@example.com", "every@example.com"]
    assert mail.outbox[0].subject.startswith("[") and "Reminder: Database upgrade" in mail.outbox[0].subject
    assert "starts at 2026-12-02 12:00 UTC" in mail.outbox[0].body
    assert "Unsubscribe: http" in mail.outbox[0].body and mail.outbox[0].extra_headers["List-Unsubscribe"]
    Maintenance.objects.filter(pk=maintenance.pk).update(reminded_at=None)  # a sweep that lost its mark
    advance()
    advance()
    assert len(mail.outbox) == 2
    assert MaintenanceNotice.objects.filter(kind="reminder").count() == 2


@pytest.mark.django_db(transaction=True)
def test_an_extension_and_a_cancellation_are_emailed(client, clock, subscribers, users, components):
    maintenance = window(components, users)
    mail.outbox.clear()
    post_update(maintenance, text="We need one more hour for the upgrade.", ends_at=NOW + timedelta(hours=4))
    assert recipients() == ["checkout@example.com", "every@example.com"]
    [shown] = json_of(client, ENDPOINTS[1])
    assert shown["scheduled_until"] == "2026-12-02T14:00:00Z"
    mail.outbox.clear()
    post_update(maintenance, text="We called off the upgrade; nothing changes for you.", cancel=True)
    assert recipients() == ["checkout@example.com", "every@example.com"]
    assert json_of(client, ENDPOINTS[1]) == []
    [cancelled] = json_of(client, ENDPOINTS[0])
    assert cancelled["status"] == "cancelled"
    clock.move_to(NOW + timedelta(hours=5))
    assert advance() == 0  # a cancelled window never moves
    with pytest.raises(MaintenanceRefused):
        post_update(maintenance, text="Again.")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("path", ENDPOINTS)
def test_the_endpoints_are_cached_like_the_others(client, clock, components, users, path):
    first = client.get(path)
    assert first["Cache-Control"] == "public, max-age=10"
    assert client.get(path, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 304
    head = client.head(path)
    assert head.content == b"" and head["ETag"] == first["ETag"]
    window(components, users, start=timedelta(minutes=-1))
    advance()
    assert client.get(path, HTTP_IF_NONE_MATCH=first["ETag"]).status_code == 200


@pytest.mark.django_db(transaction=True)
def test_ops_schedule_and_cancel_from_the_desk(client, clock, components, users):
    client.force_login(users.ops)
    page = client.get("/maintenance/")
    assert page.status_code == 200 and "Schedule a window" in page.content.decode()
    response = client.post("/maintenance/", {
        "title": "Database & cache upgrade", "components": [components["API"].pk], "starts_at": "2026-12-02T11:00",
        "ends_at": "2026-12-02T12:00", "text": TEXT})
    assert response.status_code == 302, response.content.decode()[-3000:]
    maintenance = Maintenance.objects.get()
    assert maintenance.starts_at == NOW + timedelta(hours=1) and maintenance.created_by == users.ops
    assert "Database &amp; cache upgrade" in client.get("/status/").content.decode()
    refused = client.post("/maintenance/", {
        "title": "Later", "components": [components["API"].pk], "starts_at": "2026-12-02T11:00",
        "ends_at": "2026-12-02T12:00", "text": "Maintenance is now in progress."})
    assert refused.status_code == 400 and "The guard stopped the text" in refused.content.decode()
    client.post(f"/maintenance/{maintenance.pk}/update/",
                {"text": "We called off the upgrade; nothing changes for you.", "cancel": "on"})
    maintenance.refresh_from_db()
    assert maintenance.status == "cancelled"
    client.force_login(users.outsider)
    assert client.get("/maintenance/").status_code == 403


@pytest.mark.django_db(transaction=True)
def test_an_email_that_fails_is_not_sent_twice_and_the_others_still_go(clock, subscribers, users, components,
                                                                      monkeypatch):
    from django.core.mail import EmailMessage

    send = EmailMessage.send

    def failing(message, *args, **kwargs):
        if message.to == ["checkout@example.com"]:
            raise ConnectionRefusedError("mail server down")
        return send(message, *args, **kwargs)

    monkeypatch.setattr(EmailMessage, "send", failing)
    window(components, users)
    assert recipients() == ["every@example.com"]
    monkeypatch.setattr(EmailMessage, "send", send)
    advance()  # the sweep catches up only with what was never tried
    assert recipients() == ["every@example.com"]
    late = Subscriber.objects.create(email="late@example.com", confirmed_at=NOW)
    advance()
    assert recipients() == ["every@example.com", late.email]

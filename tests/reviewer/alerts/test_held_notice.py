"""Held deliveries reach ops: when a delivery becomes held (a send that may have gone out), ops'
notification channels are told once, with the incident, the update, the channel, what the receiver
said, the attempt and the link to the held deliveries; a real HTTP receiver on loopback."""

from __future__ import annotations

import pytest
from django.urls import reverse

from agents.models import Run
from reviewer.alerts import tasks as alert_tasks
from reviewer.models import Delivery, DeliveryChannel, NotificationChannel
from reviewer.outbox import publishing, tasks
from reviewer.outbox.publishing import publish
from tests.factories import make_incident, make_run
from tests.reviewer.alerts.test_notifications import Receiver

TEXT = "Card payments fail in the EU. We are working on a fix."


@pytest.fixture
def receiver(monkeypatch):
    started = Receiver()
    monkeypatch.setenv("OUTBOUND_DESTINATIONS", f"team-hook={started.url}")
    yield started
    started.stop()


@pytest.fixture
def notices(monkeypatch, db):
    """The ops channel and a leads channel on the receiver; the notice tasks run in the test (eager)."""
    NotificationChannel.objects.create(name="ops room", destination="team-hook", group="ops", events=["approved"])
    NotificationChannel.objects.create(name="leads room", destination="team-hook", group="leads", events=["opened"])
    told = []

    def notify(pk):
        told.append(pk)
        alert_tasks.notify_held.apply(args=[pk])

    monkeypatch.setattr(alert_tasks.notify_held, "delay", notify)
    monkeypatch.setattr(alert_tasks.send_held_notice, "delay",
                        lambda *args: alert_tasks.send_held_notice.apply(args=args))
    monkeypatch.setattr(tasks.deliver, "delay", lambda pk: None)
    return told


@pytest.fixture
def email(users, settings):
    settings.SITE_URL = "https://review.example"
    DeliveryChannel.objects.all().delete()
    DeliveryChannel.objects.create(name="Customers mail", kind="email", recipients="customers@example.com")
    incident = make_incident("inc_pay", title="Payments @here failing", severity="P1")
    run = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=TEXT)
    return publish(incident, TEXT, actor=users.ops, source_run=run).deliveries.get()


def timed_out(delivery, answered=None):
    raise tasks.MayHaveBeenSent("smtp (127.0.0.1): TimeoutError")


def test_ops_channels_are_told_once_when_a_delivery_is_held(email, notices, receiver, monkeypatch,
                                                            django_capture_on_commit_callbacks):
    monkeypatch.setattr(tasks, "send", timed_out)
    with django_capture_on_commit_callbacks(execute=True):
        assert tasks.attempt(email.pk) == "held"
    assert notices == [email.pk]
    [body] = receiver.bodies  # the ops room only, once
    assert body["title"] == "Held delivery: update v1 of inc_pay to Customers mail may have been sent"
    message = body["message"]
    assert "Incident: inc_pay (P1) Payments @\u200bhere failing" in message  # pings nobody
    assert "Attempt 1, held at " in message and "smtp (127.0.0.1): TimeoutError (it may have been sent)" in message
    assert message.endswith("https://review.example" + reverse("held_deliveries"))

    with django_capture_on_commit_callbacks(execute=True):
        assert tasks.attempt(email.pk) == "skipped"  # held: a redelivered task neither sends nor tells again
        assert tasks.sweep_deliveries() == 0
    assert len(receiver.bodies) == 1 and notices == [email.pk]


def test_a_row_the_sweep_holds_is_told_too(email, notices, receiver, settings, django_capture_on_commit_callbacks):
    settings.DELIVERY_LEASE_SECONDS = 0
    Delivery.objects.filter(pk=email.pk).update(status=Delivery.Status.SENDING, attempts=1)
    with django_capture_on_commit_callbacks(execute=True):
        tasks.sweep_deliveries()
    assert Delivery.objects.get(pk=email.pk).status == "held"
    assert notices == [email.pk] and len(receiver.bodies) == 1
    assert tasks.UNRECORDED in receiver.bodies[0]["message"]


def test_a_delivery_decided_before_the_notice_went_out_is_not_told(email, notices, receiver, users):
    Delivery.objects.filter(pk=email.pk).update(status=Delivery.Status.HELD, attempts=1, last_error="x")
    assert publishing.mark_held_delivery_sent(email, users.ops)
    assert alert_tasks.notify_held.apply(args=[email.pk]).get() == 0
    assert receiver.bodies == []


def test_a_failing_channel_is_retried_then_given_up_without_raising(email, notices, receiver):
    receiver.status = 500
    Delivery.objects.filter(pk=email.pk).update(status=Delivery.Status.HELD, attempts=1, last_error="x")
    channel = NotificationChannel.objects.get(group="ops")
    assert alert_tasks.send_held_notice.apply(args=[email.pk, channel.pk]).get() == "failed"
    assert len(receiver.bodies) == alert_tasks.NOTIFICATION_RETRIES + 1

"""The subscribers channel in the outbox (reviewer/outbox/publishing.py, channels.py, tasks.py): one
row per active subscriber the update concerns, each its own email through the same attempts, retries
and dead letter as every delivery; an address that unsubscribed before the send gets nothing."""

from __future__ import annotations

from datetime import timedelta

import pytest
import time_machine
from django.core import mail
from django.core.exceptions import ValidationError
from django.utils import timezone

from agents.models import Run
from reviewer.models import Delivery, DeliveryChannel
from reviewer.outbox import tasks
from reviewer.outbox.publishing import publish, retry_failed_delivery
from tests.factories import make_incident, make_run, make_subscriber

pytestmark = pytest.mark.django_db

TEXT = "Some card payments fail in the EU. We are working on a fix."


@pytest.fixture(autouse=True)
def subscribers_channel(monkeypatch):
    monkeypatch.setattr(tasks.deliver, "delay", lambda pk: None)
    monkeypatch.setattr(tasks.deliver, "apply_async", lambda args, countdown=0: None)
    DeliveryChannel.objects.all().delete()
    return DeliveryChannel.objects.create(name="Subscribers", kind="subscribers")


def published(users):
    incident = make_incident()
    run = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=TEXT)
    return publish(incident, TEXT, actor=users.ops, source_run=run)


def test_each_subscriber_gets_an_email_of_their_own_with_a_stable_message_id(users, settings):
    settings.DEFAULT_FROM_EMAIL = "Status <status@acme.example>"
    make_subscriber("ada@example.com")
    make_subscriber("bob@example.com")
    update = published(users)
    deliveries = list(update.deliveries.order_by("subscriber__email"))
    assert [tasks.attempt(d.pk) for d in deliveries] == ["delivered", "delivered"]
    assert [m.to for m in mail.outbox] == [["ada@example.com"], ["bob@example.com"]]
    assert [m.extra_headers["Message-ID"] for m in mail.outbox] == [f"<{d.key}@acme.example>" for d in deliveries]


def test_an_address_that_unsubscribes_before_the_send_gets_nothing_and_the_row_says_why(users):
    subscriber = make_subscriber()
    delivery = published(users).deliveries.get()
    subscriber.unsubscribe()
    assert tasks.attempt(delivery.pk) == "not sent"
    delivery.refresh_from_db()
    assert (delivery.status, delivery.last_error) == ("skipped", "not sent: the subscriber unsubscribed before it "
                                                                 "went out")
    assert mail.outbox == []
    assert tasks.attempt(delivery.pk) == "skipped" and not retry_failed_delivery(delivery, users.ops)


def test_a_failed_send_is_retried_then_dead_lettered_and_a_person_retry_sends_it_once(users, settings, monkeypatch):
    settings.DELIVERY_MAX_ATTEMPTS = 2
    make_subscriber()
    delivery = published(users).deliveries.get()
    real_send = mail.EmailMessage.send

    def refuse(self, fail_silently=False):
        raise ConnectionRefusedError("mail server down")

    monkeypatch.setattr(mail.EmailMessage, "send", refuse)
    with time_machine.travel(timezone.now(), tick=False) as clock:
        assert tasks.attempt(delivery.pk) == "retry"
        clock.shift(timedelta(seconds=settings.DELIVERY_BACKOFF_MAX_SECONDS + 1))
        assert tasks.attempt(delivery.pk) == "failed"
    delivery.refresh_from_db()
    assert (delivery.status, delivery.last_error) == ("failed", "email: ConnectionRefusedError: mail server down")

    monkeypatch.setattr(mail.EmailMessage, "send", real_send)
    assert retry_failed_delivery(delivery, users.ops)
    assert tasks.attempt(delivery.pk) == "delivered"
    assert tasks.attempt(delivery.pk) == "skipped"
    assert [m.to for m in mail.outbox] == [["customer@example.com"]]


def test_a_second_subscribers_channel_is_refused_and_never_sends_twice(users, subscribers_channel):
    second = DeliveryChannel(name="More subscribers", kind="subscribers")
    with pytest.raises(ValidationError, match="“Subscribers” already sends to the status page's subscribers"):
        second.full_clean()
    second.save()  # made past admin's check all the same
    make_subscriber()
    update = published(users)
    assert update.deliveries.filter(status=Delivery.Status.PENDING).count() == 1


def test_a_subscribers_channel_needs_no_destination_or_recipients(subscribers_channel):
    subscribers_channel.full_clean()
    subscribers_channel.recipients = "a@example.com"
    with pytest.raises(ValidationError, match="Only email channels have recipients"):
        subscribers_channel.full_clean()

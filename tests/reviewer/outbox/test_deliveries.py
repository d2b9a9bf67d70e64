"""Delivering the outbox (reviewer/outbox/tasks.py, reviewer/outbox/channels.py) against a real HTTP
receiver on loopback that verifies the signature with the snippet of docs/publishing.md: the body and
headers, retries with exponential backoff on a controlled clock, the dead letter, a person's retry,
the sweep."""

from __future__ import annotations

import json
from datetime import UTC, timedelta

import pytest
import time_machine
from django.core import mail
from django.utils import timezone

from agents.models import Run
from reviewer.models import DeliveryChannel, PublishedUpdate
from reviewer.outbox import publishing, tasks
from reviewer.outbox.channels import signature
from reviewer.outbox.publishing import publish
from tests.conftest import WEBHOOK_SECRET
from tests.factories import documented_verify, make_incident, make_run

TEXT = "We are investigating a problem in the EU. Current status: degraded."


@pytest.fixture
def enqueued(monkeypatch):
    """What the tasks would enqueue, instead of the broker: [(delivery pk, countdown seconds)]."""
    sent = []
    monkeypatch.setattr(tasks.deliver, "delay", lambda pk: sent.append((pk, 0)))
    monkeypatch.setattr(tasks.deliver, "apply_async", lambda args, countdown=0: sent.append((args[0], countdown)))
    return sent


@pytest.fixture
def published(users, enqueued):
    """``published(kind="webhook", destination="hook")``: a channel of that kind only, and one update."""

    def make(**channel):
        DeliveryChannel.objects.all().delete()
        DeliveryChannel.objects.create(name="only", **channel)
        incident = make_incident()
        run = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=TEXT)
        update = publish(incident, TEXT, actor=users.ops, source_run=run)
        return update.deliveries.get()

    return make


def test_the_documented_snippet_verifies_our_signature_and_refuses_tampering():
    verify = documented_verify()
    body, key, now = b'{"text": "All good."}', "5b0e3c1e-key", int(timezone.now().timestamp())
    header = signature("s3cret", now, key, body)
    assert verify("s3cret", header, key, body)
    assert not verify("s3cret", header, key, body + b" ")
    assert not verify("another", header, key, body)
    assert not verify("s3cret", signature("s3cret", now - 3600, key, body), key, body)
    # The Idempotency-Key is signed: the same body under a fresh key does not pass a duplicate check.
    assert not verify("s3cret", header, "a-fresh-key", body)


@pytest.mark.parametrize("header", [
    "garbage", "", "t=,v2=", "t=abc,v2=00", "v2=00", "t=1", "t=1,v2", ",,,", "t=1,v2=é", "t=1,v2=\u00ff\u0100",
    "t=1e3,v2=00", "t=99999999999999999999999,v2=00"])
def test_the_documented_snippet_answers_false_for_any_malformed_header(header):
    assert documented_verify()("s3cret", header, "key", b"{}") is False


def test_the_documented_snippet_answers_false_for_a_non_ascii_signature_of_the_right_length():
    body, now = b"{}", int(timezone.now().timestamp())
    valid = signature("s3cret", now, "key", body)
    forged = valid[:-1] + "\u00e9"  # what a client sends to make a naive compare_digest raise TypeError
    assert documented_verify()("s3cret", forged, "key", body) is False


def test_a_webhook_delivery_is_signed_and_carries_the_update_and_its_idempotency_key(webhook_receiver, published):
    receiver = webhook_receiver()
    delivery = published(kind="webhook", destination="hook")
    assert tasks.attempt(delivery.pk) == "delivered"
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_error) == ("delivered", 1, "")
    assert receiver.bad_signatures == 0
    body = receiver.accepted[str(delivery.key)]
    update = delivery.update
    assert body == {"incident": "inc_test_1", "version": 1, "text": TEXT, "text_hash": update.text_hash,
                    "public_title": "Service disruption", "state": "investigating", "impact": "minor",
                    "components": [],
                    "approved_by": "", "published_by": "ops", "policy_snapshot_id": update.policy_snapshot_id,
                    "facts_version": None, "published_at": update.published_at.isoformat()}
    assert tasks.attempt(delivery.pk) == "skipped"  # a duplicate message sends nothing more
    assert receiver.requests[str(delivery.key)] == 1


def test_a_wrong_secret_is_refused_by_the_receiver_and_recorded_as_the_last_error(webhook_receiver, published,
                                                                                     monkeypatch):
    receiver = webhook_receiver()
    monkeypatch.setenv("HOOK_SECRET", "not-the-receivers-secret")
    delivery = published(kind="webhook", destination="hook")
    assert tasks.attempt(delivery.pk) == "retry"
    delivery.refresh_from_db()
    assert receiver.bad_signatures == 1
    assert delivery.last_error == "hook (127.0.0.1): HTTP 401"
    assert "not-the-receivers-secret" not in delivery.last_error and WEBHOOK_SECRET not in delivery.last_error


def test_failures_back_off_exponentially_then_dead_letter_and_a_person_can_retry(
        webhook_receiver, published, enqueued, settings, users):
    settings.DELIVERY_MAX_ATTEMPTS = 3
    receiver = webhook_receiver(fail_rate=1.0)
    delivery = published(kind="webhook", destination="hook")
    enqueued.clear()
    with time_machine.travel(timezone.now(), tick=False) as clock:
        assert tasks.attempt(delivery.pk) == "retry"
        assert enqueued == [(delivery.pk, 10.0)]
        clock.shift(timedelta(seconds=5))
        assert tasks.attempt(delivery.pk) == "skipped"  # not due yet
        clock.shift(timedelta(seconds=5))
        assert tasks.attempt(delivery.pk) == "retry"
        assert enqueued[-1] == (delivery.pk, 20.0)  # doubled
        clock.shift(timedelta(seconds=20))
        assert tasks.attempt(delivery.pk) == "failed"
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_error) == ("failed", 3, "hook (127.0.0.1): HTTP 500")
    assert receiver.requests[str(delivery.key)] == 3
    assert tasks.attempt(delivery.pk) == "skipped"  # a dead letter stays dead until a person retries

    receiver.fail_rate = 0.0
    assert publishing.retry_failed_delivery(delivery, users.ops)
    assert not publishing.retry_failed_delivery(delivery, users.ops)  # only a failed delivery is retried
    assert tasks.attempt(delivery.pk) == "delivered"


def test_a_429_with_retry_after_holds_every_delivery_to_that_destination_until_then(
        webhook_receiver, published, enqueued, settings, users):
    settings.DELIVERY_LEASE_SECONDS = 60
    receiver = webhook_receiver(retry_after="120")
    first = published(kind="webhook", destination="hook")
    incident = first.update.incident
    run = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=TEXT + " Next update at 3pm.")
    second = publish(incident, run.answer, actor=users.ops, source_run=run).deliveries.get()
    enqueued.clear()
    with time_machine.travel(timezone.now(), tick=False) as clock:
        assert tasks.attempt(first.pk) == "retry"
        assert enqueued == [(first.pk, 120.0)]  # the destination's wait, not the 10 s backoff
        assert tasks.attempt(second.pk) == "skipped"  # its message came: nothing goes to the destination
        assert sum(receiver.requests.values()) == 1
        clock.shift(timedelta(seconds=119))
        assert tasks.sweep_deliveries() == 0
        receiver.retry_after = None
        clock.shift(timedelta(seconds=1))
        assert tasks.attempt(first.pk) == "delivered"
        clock.shift(timedelta(seconds=61))  # the second one's message was used up: the sweep sends it again
        assert tasks.sweep_deliveries() == 1
        assert tasks.attempt(second.pk) == "delivered"
    first.refresh_from_db()
    assert first.attempts == 2 and first.last_error == ""


def test_a_receiver_that_does_not_answer_in_time_is_a_failed_attempt(webhook_receiver, published, settings):
    settings.DELIVERY_TIMEOUT_SECONDS = 1
    webhook_receiver(timeout_rate=1.0, hang_seconds=2)
    delivery = published(kind="webhook", destination="hook")
    assert tasks.attempt(delivery.pk) == "retry"
    delivery.refresh_from_db()
    assert delivery.last_error == "hook (127.0.0.1): no answer within 1 s"


def test_a_destination_no_longer_declared_fails_closed(published, monkeypatch):
    monkeypatch.setenv("OUTBOUND_DESTINATIONS", "other=https://elsewhere.example")
    delivery = published(kind="webhook", destination="hook")
    assert tasks.attempt(delivery.pk) == "retry"
    delivery.refresh_from_db()
    assert "'hook' is not declared in OUTBOUND_DESTINATIONS" in delivery.last_error


def test_a_webhook_destination_without_a_secret_is_never_sent_unsigned(webhook_receiver, published, monkeypatch):
    receiver = webhook_receiver()
    monkeypatch.setenv("OUTBOUND_DESTINATIONS", f"hook={receiver.url}")
    delivery = published(kind="webhook", destination="hook")
    assert tasks.attempt(delivery.pk) == "retry"
    assert not receiver.requests


def test_slack_gets_the_text(webhook_receiver, published):
    receiver = webhook_receiver()
    receiver.secret = None  # Slack checks no signature: its URL is the credential
    delivery = published(kind="slack", destination="hook")
    assert tasks.attempt(delivery.pk) == "delivered"
    # The public title and state, never the incident's internal title ("Payment problems in the EU").
    assert receiver.accepted[str(delivery.key)] == {"text": f"Service disruption — Investigating (update 1)\n{TEXT}",
                                                    "mrkdwn": False, "unfurl_links": False, "unfurl_media": False}


def test_email_goes_through_djangos_mail_backend(published, settings):
    settings.SITE_URL = "https://status.example.com/"
    delivery = published(kind="email", recipients="ops@example.com\ncustomers@example.com")
    assert tasks.attempt(delivery.pk) == "delivered"
    (message,) = mail.outbox
    assert message.to == ["ops@example.com", "customers@example.com"]
    # What was published, never the incident's id or internal title ("Payment problems in the EU").
    assert message.subject == "Our service status: Service disruption — Investigating"
    posted = delivery.update.published_at.astimezone(UTC)
    assert message.body == (f"Service disruption\n\nStatus: Investigating\nImpact: Minor\n\n{TEXT}\n\n"
                            f"Posted {posted:%Y-%m-%d %H:%M} UTC\nStatus page: https://status.example.com/status/\n")
    assert "List-Unsubscribe" not in message.extra_headers  # an operator's list, not a subscription


def test_the_status_page_delivery_is_delivered_without_a_network(published):
    delivery = published(kind="status")
    assert tasks.attempt(delivery.pk) == "delivered"


def test_the_sweep_enqueues_only_deliveries_lost_for_a_lease_period(published, enqueued, settings,
                                                                    django_capture_on_commit_callbacks):
    settings.DELIVERY_LEASE_SECONDS = 60
    delivery = published(kind="status")
    enqueued.clear()
    with time_machine.travel(timezone.now(), tick=False) as clock, django_capture_on_commit_callbacks(execute=True):
        assert tasks.sweep_deliveries() == 0  # its own message may still be on its way
        clock.shift(timedelta(seconds=61))
        assert tasks.sweep_deliveries() == 1
        assert tasks.sweep_deliveries() == 0  # not again before another lease period
    assert [pk for pk, _ in enqueued] == [delivery.pk]


def test_an_attempt_whose_worker_died_is_sent_again_after_its_lease(webhook_receiver, published, enqueued,
                                                                    settings):
    settings.DELIVERY_LEASE_SECONDS = 60
    receiver = webhook_receiver()
    delivery = published(kind="webhook", destination="hook")
    with time_machine.travel(timezone.now(), tick=False) as clock:
        assert tasks.take_attempt(delivery.pk) is not None  # a worker took the attempt, then died
        assert tasks.attempt(delivery.pk) == "skipped"  # a duplicate message does not send during the lease
        clock.shift(timedelta(seconds=121))
        assert tasks.sweep_deliveries() == 1
        assert tasks.attempt(delivery.pk) == "delivered"
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("delivered", 2)
    assert json.loads(json.dumps(receiver.accepted))[str(delivery.key)]["version"] == 1


def test_a_delivery_whose_every_attempt_lost_its_worker_is_dead_lettered(published, settings):
    settings.DELIVERY_MAX_ATTEMPTS = 2
    settings.DELIVERY_LEASE_SECONDS = 60
    delivery = published(kind="status")
    with time_machine.travel(timezone.now(), tick=False) as clock:
        for _ in range(2):  # two workers took an attempt each and died
            assert tasks.take_attempt(delivery.pk) is not None
            clock.shift(timedelta(seconds=61))
        assert tasks.attempt(delivery.pk) == "skipped"
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.last_error) == ("failed", 2, tasks.LOST)


def test_an_unexpected_error_in_a_channel_counts_as_a_failed_attempt(published, monkeypatch):
    delivery = published(kind="status")

    def broken(delivery, answered):
        raise KeyError("a bug")

    monkeypatch.setattr(tasks, "send", broken)
    assert tasks.attempt(delivery.pk) == "retry"
    delivery.refresh_from_db()
    assert (delivery.status, delivery.last_error) == ("pending", "unexpected error: KeyError")


def test_beat_runs_the_deliveries_sweep(settings):
    schedule = settings.CELERY_BEAT_SCHEDULE["sweep-deliveries"]
    assert schedule["task"] == tasks.sweep_deliveries.name and schedule["schedule"] == settings.SWEEP_SECONDS == 5


def test_slack_text_is_escaped_so_it_links_and_pings_nobody(webhook_receiver, published, users):
    receiver = webhook_receiver()
    receiver.secret = None
    delivery = published(kind="slack", destination="hook")
    update = delivery.update
    type(update).objects.filter(pk=update.pk).update(text="<!channel> see <https://evil.example|status> & more")
    assert tasks.attempt(delivery.pk) == "delivered"
    text = receiver.accepted[str(delivery.key)]["text"]
    assert text.endswith("&lt;!channel&gt; see &lt;https://evil.example|status&gt; &amp; more")


def test_an_update_stored_with_a_line_break_in_its_title_is_still_emailed_on_one_subject_line(published):
    email = published(kind="email", recipients="customers@example.com")
    PublishedUpdate.objects.filter(pk=email.update_id).update(public_title="Payments\r\nBcc: everyone@example.com")

    assert tasks.attempt(email.pk) == "delivered"
    assert mail.outbox[0].subject == "Our service status: Payments Bcc: everyone@example.com — Investigating"
    assert mail.outbox[0].bcc == []


def test_an_email_names_the_update_by_its_public_title_not_the_incidents_own(published):
    email = published(kind="email", recipients="customers@example.com")
    PublishedUpdate.objects.filter(pk=email.update_id).update(public_title="Payments failing at checkout")

    assert tasks.attempt(email.pk) == "delivered"
    assert mail.outbox[0].subject == "Our service status: Payments failing at checkout — Investigating"


@pytest.mark.parametrize("kind", ["webhook", "slack"])
@pytest.mark.parametrize("status", [302, 307])
def test_a_delivery_does_not_follow_a_redirect_to_a_host_never_declared(webhook_receiver, published, kind, status):
    elsewhere = webhook_receiver()
    declared = webhook_receiver(redirect=(status, elsewhere.url))  # the one declared as "hook"
    if kind == "slack":
        declared.secret = elsewhere.secret = None  # Slack checks no signature: its URL is the credential
    delivery = published(kind=kind, destination="hook")
    assert tasks.attempt(delivery.pk) == "retry"
    delivery.refresh_from_db()
    assert delivery.last_error == f"hook (127.0.0.1): HTTP {status}"
    assert sum(declared.requests.values()) == 1
    assert not elsewhere.requests and elsewhere.bad_signatures == 0

"""Email, the subscribers' emails and Slack are sent at most once (reviewer/outbox/tasks.py,
channels.py): the attempt is recorded before the send; a send that may have left, or whose outcome
could not be recorded, is held for a person and never sent again by the sweep; a send that did not
leave is retried. The webhook stays at least once. Real receivers on loopback: an aiosmtpd server
and the tests' HTTP receiver, plus a port nobody listens on."""

from __future__ import annotations

import asyncio
import socket
import threading
from datetime import timedelta

import pytest
import time_machine
from aiosmtpd.controller import Controller
from django.core import mail
from django.db import OperationalError
from django.urls import reverse
from django.utils import timezone

from agents.models import Run
from reviewer.models import Delivery, DeliveryChannel
from reviewer.outbox import publishing, tasks
from reviewer.outbox.publishing import publish
from tests.factories import make_incident, make_run, make_subscriber
from tests.services import free_port

TEXT = "Card payments fail in the EU. We are working on a fix."


@pytest.fixture
def enqueued(monkeypatch):
    """What the tasks would enqueue, instead of the broker: [delivery pk]."""
    sent = []
    monkeypatch.setattr(tasks.deliver, "delay", lambda pk: sent.append(pk))
    monkeypatch.setattr(tasks.deliver, "apply_async", lambda args, countdown=0: sent.append(args[0]))
    return sent


@pytest.fixture
def published(users, enqueued):
    """``published(kind="email", recipients=...)``: a channel of that kind only, and one update's (first)
    delivery."""

    def make(**channel):
        DeliveryChannel.objects.all().delete()
        DeliveryChannel.objects.create(name="only", **channel)
        incident = make_incident()
        run = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=TEXT)
        return publish(incident, TEXT, actor=users.ops, source_run=run).deliveries.order_by("pk").first()

    return make


@pytest.fixture
def smtp_server(settings):
    """``smtp_server(answer="451 ...", delay=0)``: an aiosmtpd server on loopback that Django's SMTP
    backend sends to; it answers each message's DATA with ``answer`` after ``delay`` seconds and keeps
    what it received."""
    controllers = []

    def start(answer: str = "250 OK", delay: float = 0):
        received = []

        class Handler:
            async def handle_DATA(self, server, session, envelope):
                received.append(envelope.content)
                await asyncio.sleep(delay)
                return answer

        controller = Controller(Handler(), hostname="127.0.0.1", port=free_port())
        controller.start()
        controllers.append(controller)
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", controller.port, 1
        return received

    yield start
    for controller in controllers:
        controller.stop()


def dropping_receiver() -> tuple[str, threading.Event]:
    """An HTTP server that reads a request and hangs up without answering: the request was written."""
    listener = socket.create_server(("127.0.0.1", 0))
    got = threading.Event()

    def serve():
        connection, _ = listener.accept()
        connection.recv(65536)
        got.set()
        connection.close()
        listener.close()

    threading.Thread(target=serve, daemon=True).start()
    return f"http://127.0.0.1:{listener.getsockname()[1]}/hook", got


def database_down(delivery, answer=None):
    """Recording an outcome while the database is unreachable (what psycopg's pool raises, through Django)."""
    raise OperationalError("couldn't get a connection after 2.00 sec")


def reload(delivery: Delivery) -> Delivery:
    delivery.refresh_from_db()
    return delivery


def test_the_attempt_is_recorded_as_sending_before_the_email_goes_out(published, monkeypatch):
    delivery = published(kind="email", recipients="ops@example.com")
    seen = []
    real_send = mail.EmailMessage.send

    def send(message, fail_silently=False):
        seen.append(Delivery.objects.values_list("status", "attempts").get(pk=delivery.pk))
        return real_send(message, fail_silently)

    monkeypatch.setattr(mail.EmailMessage, "send", send)
    assert tasks.attempt(delivery.pk) == "delivered"
    assert seen == [("sending", 1)]
    assert reload(delivery).status == "delivered"


def test_a_webhook_attempt_stays_pending_while_it_is_sent(published, webhook_receiver, monkeypatch):
    webhook_receiver()
    delivery = published(kind="webhook", destination="hook")
    taken = tasks.take_attempt(delivery.pk)
    assert (taken.status, taken.attempts) == ("pending", 1)  # at least once: the sweep may send it again


class WorkerClock:
    """The worker's lease clock (``tasks.clock``), moved by the waits between tries (``tasks.pause``)."""

    def __init__(self):
        self.now, self.waits, self.connection_waits = 1000.0, [], []

    def __call__(self) -> float:
        return self.now

    def pause(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


@pytest.fixture
def worker_clock(monkeypatch):
    clock = WorkerClock()
    monkeypatch.setattr(tasks, "clock", clock)
    monkeypatch.setattr(tasks, "pause", clock.pause)
    monkeypatch.setattr(tasks, "_connect_within", clock.connection_waits.append)
    return clock


def test_an_email_whose_outcome_could_not_be_recorded_is_delivered_from_the_answer_kept_on_disk(
        published, enqueued, monkeypatch, settings, worker_clock, answers_folder, django_capture_on_commit_callbacks):
    settings.DELIVERY_LEASE_SECONDS = 20
    delivery = published(kind="email", recipients="ops@example.com")

    monkeypatch.setattr(tasks, "_delivered", database_down)
    enqueued.clear()
    with time_machine.travel(timezone.now(), tick=False), django_capture_on_commit_callbacks(execute=True):
        assert tasks.attempt(delivery.pk) == "unrecorded"
        assert len(mail.outbox) == 1  # sent once, and not again while recording failed
        waits = worker_clock.waits
        assert waits[:3] == [0.5, 1, 2] and max(waits) == tasks.RECORD_MAX_WAIT  # short waits...
        assert sum(waits) <= settings.DELIVERY_LEASE_SECONDS < sum(waits) + tasks.RECORD_MAX_WAIT  # ... the lease long
        assert len(worker_clock.connection_waits) == len(waits) + 1 >= 10  # a try every 2 s at most
        assert max(worker_clock.connection_waits) <= tasks.RECORD_CONNECTION_WAIT  # never the pool's 30 s
        assert reload(delivery).status == "sending"
        assert [path.name for path in answers_folder.iterdir()] == [f"{delivery.pk}-1.json"]
        assert tasks.sweep_deliveries() == 0  # the database is back: the sweep writes the answer kept
        assert tasks.attempt(delivery.pk) == "skipped"
    assert enqueued == [] and len(mail.outbox) == 1
    assert (reload(delivery).status, delivery.last_error) == ("delivered", "")
    assert (delivery.evidence["said"], delivery.evidence["attempt"]) == ("taken by locmem mail backend", 1)
    assert list(answers_folder.iterdir()) == []  # the database has it now


class Killed(BaseException):
    """SIGKILL at this line: nothing after it runs (no ``except Exception`` catches it)."""


@pytest.mark.parametrize("kind", ["email", "slack"])
def test_a_worker_killed_right_after_the_answer_leaves_a_delivered_row_not_a_held_one(
        published, webhook_receiver, monkeypatch, settings, enqueued, kind):
    receiver = webhook_receiver()
    receiver.secret = None
    delivery = published(**({"kind": "email", "recipients": "ops@example.com"} if kind == "email" else
                            {"kind": "slack", "destination": "hook"}))

    def killed(*args):
        raise Killed

    monkeypatch.setattr(tasks, "_delivered_now", killed)  # the answer arrived; the worker dies before the database
    with time_machine.travel(timezone.now(), tick=False) as clock:
        with pytest.raises(Killed):
            tasks.attempt(delivery.pk)
        assert reload(delivery).status == "sending"
        clock.shift(timedelta(seconds=settings.DELIVERY_LEASE_SECONDS))
        tasks.sweep_deliveries()
    assert (reload(delivery).status, enqueued) == ("delivered", [])
    assert delivery.evidence["said"] == ("taken by locmem mail backend" if kind == "email" else "HTTP 200 OK")
    sent = len(mail.outbox) if kind == "email" else receiver.requests[str(delivery.key)]
    assert sent == 1


def scripted_smtp(settings, drop: str) -> list[bytes]:
    """A mail server on loopback that speaks SMTP up to ``drop`` and then hangs up: ``before-content``
    (on the DATA command, before its 354), ``after-content`` (the message read, no answer) or
    ``after-answer`` (its 250 sent, then gone before QUIT). Returns the messages it read."""
    listener = socket.create_server(("127.0.0.1", 0))
    received: list[bytes] = []

    def serve():
        connection, _ = listener.accept()
        lines = connection.makefile("rb")
        connection.sendall(b"220 drill ESMTP\r\n")
        while line := lines.readline():
            command = line[:4].upper()
            if command != b"DATA":
                connection.sendall(b"250 drill\r\n")
                continue
            if drop != "before-content":
                connection.sendall(b"354 go ahead\r\n")
                content = []
                while (line := lines.readline()) not in (b".\r\n", b""):
                    content.append(line)
                received.append(b"".join(content))
                if drop == "after-answer":
                    connection.sendall(b"250 2.0.0 Ok: queued as D1\r\n")
            break
        connection.close()
        listener.close()

    threading.Thread(target=serve, daemon=True).start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", listener.getsockname()[1], 2
    return received


@pytest.mark.parametrize(("drop", "outcome", "arrived"), [
    ("before-content", "retry", 0),  # nothing of the message left: sent again later
    ("after-content", "held", 1),  # it may have been taken and no answer came: unknown
    ("after-answer", "delivered", 1),  # the server answered 250: known, whatever broke after it
])
def test_an_email_whose_connection_dropped_is_held_only_when_no_answer_came_after_its_content(
        published, settings, enqueued, drop, outcome, arrived):
    received = scripted_smtp(settings, drop)
    delivery = published(kind="email", recipients="ops@example.com")
    assert tasks.attempt(delivery.pk) == outcome
    assert len(received) == arrived
    evidence = reload(delivery).evidence
    if outcome == "delivered":
        assert evidence["said"] == "250 2.0.0 Ok: queued as D1" and evidence["attempt"] == 1
    elif outcome == "held":
        assert evidence["said"].startswith("email: SMTPServerDisconnected after the message was sent, before the "
                                           "server's answer")
    else:
        assert delivery.last_error.startswith("email: SMTPServerDisconnected before the message was sent")


def test_the_held_page_shows_what_the_mail_server_said_when_and_at_which_attempt(
        published, settings, enqueued, login):
    scripted_smtp(settings, "after-content")
    delivery = published(kind="email", recipients="ops@example.com")
    at = (timezone.now() + timedelta(minutes=5)).replace(microsecond=0)
    with time_machine.travel(at, tick=False):
        assert tasks.attempt(delivery.pk) == "held"
    Delivery.objects.filter(pk=delivery.pk).update(attempts=3)  # the page shows the evidence's attempt
    html = login("ops").get(reverse("held_deliveries")).content.decode()
    row = html[html.index(f'id="held-{delivery.pk}"'):]
    said = row[row.index('class="pre held-said">'):row.index("</dd>")]
    assert "email: SMTPServerDisconnected after the message was sent, before the server&#x27;s answer" in said
    assert f'<dd class="held-when"><time datetime="{at.isoformat()}">' in row
    assert '<dd class="held-attempt">1</dd>' in row


def test_the_held_page_escapes_what_the_receiver_said(held, login):
    Delivery.objects.filter(pk=held.pk).update(evidence={"said": "<script>alert(1)</script>", "attempt": 1,
                                                         "at": "2026-03-04T05:06:07+00:00"})
    html = login("ops").get(reverse("held_deliveries")).content.decode()
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_a_slack_post_answered_200_whose_body_was_cut_is_delivered(published, monkeypatch):
    listener = socket.create_server(("127.0.0.1", 0))

    def serve():
        connection, _ = listener.accept()
        connection.recv(65536)
        connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nok")  # then gone
        connection.close()
        listener.close()

    threading.Thread(target=serve, daemon=True).start()
    monkeypatch.setenv("OUTBOUND_DESTINATIONS", f"hook=http://127.0.0.1:{listener.getsockname()[1]}/hook")
    delivery = published(kind="slack", destination="hook")
    assert tasks.attempt(delivery.pk) == "delivered"
    assert reload(delivery).evidence["said"] == "HTTP 200 OK"


def test_a_sending_row_left_by_a_killed_worker_is_held_within_thirty_seconds(published, settings, enqueued):
    """The recovery time with the shipped settings: the lease, then at most one sweep interval."""
    from reviewer import settings as shipped

    settings.DELIVERY_LEASE_SECONDS, settings.SWEEP_SECONDS = shipped.DELIVERY_LEASE_SECONDS, shipped.SWEEP_SECONDS
    assert shipped.CELERY_BEAT_SCHEDULE["sweep-deliveries"]["schedule"] == shipped.SWEEP_SECONDS
    delivery = published(kind="slack", destination="hook")
    with time_machine.travel(timezone.now(), tick=False) as clock:
        assert tasks.take_attempt(delivery.pk).status == "sending"  # ... and the worker is killed here
        killed, held_at = timezone.now(), None
        while held_at is None:  # beat's sweeps, every SWEEP_SECONDS
            clock.shift(timedelta(seconds=settings.SWEEP_SECONDS))
            tasks.sweep_deliveries()
            if reload(delivery).status == "held":
                held_at = timezone.now()
    assert (held_at - killed).total_seconds() <= 30
    assert (held_at - killed).total_seconds() >= settings.DELIVERY_LEASE_SECONDS  # never within its lease
    assert enqueued == [] and delivery.last_error == tasks.UNRECORDED
    assert delivery.evidence["said"] == tasks.NO_ANSWER and delivery.evidence["attempt"] == 1


def test_a_webhook_whose_outcome_could_not_be_recorded_is_sent_again_by_the_sweep(
        published, webhook_receiver, enqueued, monkeypatch, settings, django_capture_on_commit_callbacks):
    settings.DELIVERY_LEASE_SECONDS = 20
    receiver = webhook_receiver()
    delivery = published(kind="webhook", destination="hook")
    monkeypatch.setattr(tasks, "pause", lambda seconds: None)
    real_delivered = tasks._delivered
    monkeypatch.setattr(tasks, "_delivered", database_down)
    enqueued.clear()
    with time_machine.travel(timezone.now(), tick=False) as clock, django_capture_on_commit_callbacks(execute=True):
        assert tasks.attempt(delivery.pk) == "unrecorded"
        monkeypatch.setattr(tasks, "_delivered", real_delivered)
        clock.shift(timedelta(seconds=2 * 20 + 1))  # at least once: sent again a lease after its lease
        assert tasks.sweep_deliveries() == 1
        assert tasks.attempt(delivery.pk) == "delivered"
    assert enqueued == [delivery.pk]
    assert receiver.requests[str(delivery.key)] == 2  # at least once: the receiver drops the repeated key


def test_an_outcome_recorded_after_the_database_came_back_is_recorded_once(published, monkeypatch):
    delivery = published(kind="slack", destination="hook")
    tries = []
    real_delivered = tasks._delivered

    def down_twice(delivery, answer):
        tries.append(1)
        if len(tries) <= 2:
            raise OperationalError("the database went away")
        return real_delivered(delivery, answer)

    monkeypatch.setattr(tasks, "_delivered", down_twice)
    monkeypatch.setattr(tasks, "pause", lambda seconds: None)
    monkeypatch.setattr(tasks, "send", lambda delivery, answered: None)
    assert tasks.attempt(delivery.pk) == "delivered"
    assert (len(tries), reload(delivery).status) == (3, "delivered")


def test_an_email_answered_after_the_timeout_is_held_not_sent_again(published, smtp_server, enqueued):
    received = smtp_server(delay=2)  # DATA is in; the answer comes after the 1 s timeout
    delivery = published(kind="email", recipients="ops@example.com")
    enqueued.clear()
    assert tasks.attempt(delivery.pk) == "held"
    assert (reload(delivery).status, len(received), enqueued) == ("held", 1, [])
    assert delivery.last_error.startswith("email: ") and delivery.last_error.endswith("(it may have been sent)")
    assert tasks.attempt(delivery.pk) == "skipped"


@pytest.mark.parametrize("answer", ["451 4.3.0 Try again later", "554 5.7.1 Rejected"])
def test_an_email_the_mail_server_refused_is_retried(published, smtp_server, enqueued, answer):
    received = smtp_server(answer=answer)
    delivery = published(kind="email", recipients="ops@example.com")
    enqueued.clear()
    assert tasks.attempt(delivery.pk) == "retry"
    assert (reload(delivery).status, len(received), enqueued) == ("pending", 1, [delivery.pk])
    assert delivery.last_error.startswith("email: SMTPDataError")


def test_a_subscriber_email_to_a_mail_server_that_is_not_there_is_retried(published, settings, enqueued):
    make_subscriber()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT = "127.0.0.1", free_port()  # nobody listens
    delivery = published(kind="subscribers")
    assert tasks.attempt(delivery.pk) == "retry"
    assert (reload(delivery).status, delivery.last_error) == ("pending",
                                                              "email: ConnectionRefusedError: [Errno 111] "
                                                              "Connection refused")


def test_a_slack_post_without_an_answer_in_time_is_held(published, webhook_receiver, settings):
    # (A webhook's is retried: test_deliveries.py, test_a_receiver_that_does_not_answer_in_time_is_a_failed_attempt.)
    settings.DELIVERY_TIMEOUT_SECONDS = 1
    receiver = webhook_receiver(timeout_rate=1.0, hang_seconds=2)
    receiver.secret = None
    slack = published(kind="slack", destination="hook")
    assert tasks.attempt(slack.pk) == "held"
    assert reload(slack).last_error == "hook (127.0.0.1): no answer within 1 s (it may have been sent)"
    assert receiver.requests[str(slack.key)] == 1


def test_a_slack_post_whose_connection_dropped_after_the_request_is_held(published, monkeypatch):
    url, got = dropping_receiver()
    monkeypatch.setenv("OUTBOUND_DESTINATIONS", f"hook={url}")
    delivery = published(kind="slack", destination="hook")
    assert tasks.attempt(delivery.pk) == "held"
    assert got.is_set() and reload(delivery).status == "held"
    assert delivery.last_error == "hook (127.0.0.1): ConnectionError (it may have been sent)"


@pytest.mark.parametrize("fail", ["refused", "500"])
def test_a_slack_post_that_did_not_leave_or_was_refused_is_retried(published, webhook_receiver, monkeypatch, fail):
    if fail == "refused":
        monkeypatch.setenv("OUTBOUND_DESTINATIONS", f"hook=http://127.0.0.1:{free_port()}/hook")
    else:
        webhook_receiver(fail_rate=1.0).secret = None
    delivery = published(kind="slack", destination="hook")
    assert tasks.attempt(delivery.pk) == "retry"
    expected = "hook (127.0.0.1): ConnectionError" if fail == "refused" else "hook (127.0.0.1): HTTP 500"
    assert (reload(delivery).status, delivery.last_error) == ("pending", expected)


def test_a_bug_while_sending_an_email_holds_it(published, monkeypatch):
    delivery = published(kind="email", recipients="ops@example.com")

    def broken(delivery, answered):
        raise KeyError("a bug")

    monkeypatch.setattr(tasks, "send", broken)
    assert tasks.attempt(delivery.pk) == "held"
    assert reload(delivery).last_error == "unexpected error: KeyError (it may have been sent)"


# -- a person's decision on a held delivery ---------------------------------------------------------


@pytest.fixture
def held(published):
    delivery = published(kind="email", recipients="ops@example.com")
    Delivery.objects.filter(pk=delivery.pk).update(status=Delivery.Status.HELD, attempts=1,
                                                   last_error=tasks.UNRECORDED)
    return reload(delivery)


def test_the_incident_page_shows_a_held_delivery_with_send_again_and_mark_as_sent(held, login):
    page = login("ops").get(reverse("incident", args=["inc_test_1"])).content.decode()
    assert "held</span> only" in page
    assert "Held: may have been sent — check before sending again" in page
    assert reverse("delivery_send_again", args=[held.pk]) in page
    assert reverse("delivery_mark_sent", args=[held.pk]) in page
    assert reverse("delivery_retry", args=[held.pk]) not in page


def test_a_person_sends_a_held_delivery_again_once(held, login, users, enqueued, django_capture_on_commit_callbacks):
    client = login("ops")
    enqueued.clear()
    with django_capture_on_commit_callbacks(execute=True):
        client.post(reverse("delivery_send_again", args=[held.pk]))
    assert (reload(held).status, held.attempts, held.retried_by, enqueued) == ("pending", 0, users.ops, [held.pk])
    assert tasks.attempt(held.pk) == "delivered"
    assert len(mail.outbox) == 1
    assert not publishing.send_held_delivery_again(held, users.ops)  # delivered: nothing to send again


def test_a_person_marks_a_held_delivery_as_sent_and_it_is_never_sent(held, login, users, enqueued):
    client = login("lead")
    enqueued.clear()
    response = client.post(reverse("delivery_mark_sent", args=[held.pk]), follow=True)
    assert "is marked as sent; it is not sent again" in response.content.decode()
    assert (reload(held).status, held.marked_sent_by, held.last_error) == ("delivered", users.lead, tasks.UNRECORDED)
    assert held.delivered_at is not None
    assert tasks.attempt(held.pk) == "skipped" and enqueued == [] and mail.outbox == []
    page = client.get(reverse("incident", args=["inc_test_1"])).content.decode()
    assert "marked as sent by lead" in page
    assert not publishing.mark_held_delivery_sent(held, users.lead)


@pytest.mark.parametrize("action", ["delivery_send_again", "delivery_mark_sent"])
def test_someone_who_cannot_publish_cannot_decide_a_held_delivery(held, login, action):
    assert login("outsider").post(reverse(action, args=[held.pk])).status_code == 403
    assert reload(held).status == "held"


@pytest.mark.parametrize("action", ["delivery_send_again", "delivery_mark_sent"])
def test_a_held_decision_is_a_post(held, login, action):
    assert login("ops").get(reverse(action, args=[held.pk])).status_code == 405


def test_a_failed_delivery_is_neither_sent_again_nor_marked_as_sent_by_the_held_actions(published, users):
    delivery = published(kind="email", recipients="ops@example.com")
    Delivery.objects.filter(pk=delivery.pk).update(status=Delivery.Status.FAILED)
    assert not publishing.send_held_delivery_again(delivery, users.ops)
    assert not publishing.mark_held_delivery_sent(delivery, users.ops)
    assert reload(delivery).status == "failed"


def test_held_subscriber_deliveries_are_listed_one_by_one_and_counted_as_held(published, login):
    make_subscriber("ada@example.com")
    make_subscriber("bob@example.com")
    published(kind="subscribers")
    ada = Delivery.objects.get(subscriber__email="ada@example.com")
    Delivery.objects.filter(pk=ada.pk).update(status=Delivery.Status.HELD, last_error=tasks.UNRECORDED)
    page = login("ops").get(reverse("incident", args=["inc_test_1"])).content.decode()
    assert "· ada@example.com" in page and "· bob@example.com" not in page
    assert "1 held</span>" in page and "1 pending</span>" in page
    assert reverse("delivery_send_again", args=[ada.pk]) in page

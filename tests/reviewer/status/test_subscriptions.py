"""Subscribing to the status page by email (reviewer/status/subscriptions.py): double opt-in by a POST
on the emailed link, one email per subscriber per update through the outbox, one-click unsubscribing
(RFC 8058) with no CSRF token, the same answer for known and unknown addresses, and bad input."""

from __future__ import annotations

import re
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
import time_machine
from django.core import mail
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents.models import Run
from reviewer.models import StatusComponent, Subscriber
from reviewer.outbox import tasks
from reviewer.outbox.publishing import CONFIRM_REPEAT, PublicFields, publish
from reviewer.status import tasks as status_tasks
from tests.factories import make_incident, make_run, make_subscriber

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("subscriber_channels")]

SUBSCRIBE = "/status/subscribe/"
TEXT = "Some card payments fail in the EU. We are working on a fix."
INTERNAL_TITLE = "P1 PSP timeout on db-7 failover"


@pytest.fixture(autouse=True)
def worker(monkeypatch):
    """The subscribe form's task, run at once as a worker runs it (its retries included), not by a broker."""
    monkeypatch.setattr(status_tasks.subscribe_to_status, "delay",
                        lambda *args: status_tasks.subscribe_to_status.apply(args=args))


@pytest.fixture
def incident():
    return make_incident("inc_pay_2041", title=INTERNAL_TITLE)


def publish_and_deliver(users, incident, **fields):
    """Publish TEXT with ``fields`` (PublicFields) and make one attempt of each of its deliveries; the
    tests publish it again on purpose, so a repeat is confirmed."""
    fields.setdefault("confirmed", frozenset({CONFIRM_REPEAT}))
    run = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=TEXT)
    update = publish(incident, TEXT, actor=users.ops, source_run=run, fields=PublicFields(**fields))
    for delivery in update.deliveries.all():
        tasks.attempt(delivery.pk)
    return update


def link_in(message, prefix: str) -> str:
    """The path of the first link in the email's body whose path starts with ``prefix``."""
    for url in re.findall(r"https?://\S+", message.body):
        if urlsplit(url).path.startswith(prefix):
            return urlsplit(url).path
    raise AssertionError(f"no {prefix} link in {message.body!r}")


def test_a_customer_subscribes_confirms_gets_each_update_once_and_unsubscribes_in_one_click(users, incident):
    checkout = StatusComponent.objects.create(name="Checkout")
    client = Client(enforce_csrf_checks=True)
    page = client.get(SUBSCRIBE)
    token = page.cookies["csrftoken"].value
    response = client.post(SUBSCRIBE, {"email": "Ada@Example.com", "scope": "all", "csrfmiddlewaretoken": token})
    assert response.status_code == 200 and "ada@example.com" in response.content.decode().lower()
    (confirmation,) = mail.outbox
    assert confirmation.to == ["ada@example.com"]
    assert confirmation.subject == "Our service status: confirm your subscription"
    confirm = link_in(confirmation, "/status/subscribe/confirm/")
    subscriber = Subscriber.objects.get()

    # A mail scanner's GET confirms nothing; the button's POST does.
    page = client.get(confirm)
    assert page.status_code == 200 and ">Confirm</button>" in page.content.decode()
    subscriber.refresh_from_db()
    assert subscriber.confirmed_at is None
    assert client.post(confirm, {"csrfmiddlewaretoken": token}).status_code == 200
    subscriber.refresh_from_db()
    assert subscriber.active

    mail.outbox.clear()
    update = publish_and_deliver(users, incident, title="Card payments failing", state="identified",
                                 components={checkout.pk: "partial_outage"})
    (message,) = mail.outbox
    assert message.to == ["ada@example.com"]
    assert message.subject == "Our service status: Card payments failing — Identified"
    unsubscribe = f"https://status.example.com/status/unsubscribe/{subscriber.key}/"
    assert message.extra_headers["List-Unsubscribe"] == f"<{unsubscribe}>"
    assert message.extra_headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    assert "Card payments failing" in message.body and "Status: Identified" in message.body
    assert "Checkout: Partial outage" in message.body and TEXT in message.body
    assert "https://status.example.com/status/\n" in message.body and unsubscribe in message.body
    # Without the unsubscribe link: its random key may hold any letters ("…aedb-711e…").
    whole = " ".join([message.subject, message.body, *message.extra_headers.values()]).replace(str(subscriber.key), "")
    assert "inc_pay_2041" not in whole and "db-7" not in whole and "P1" not in whole

    # The outbox sends it once: a second attempt (a redelivered task) finds it delivered.
    delivery = update.deliveries.get(subscriber=subscriber)
    assert (delivery.status, tasks.attempt(delivery.pk)) == ("delivered", "skipped")
    assert len(mail.outbox) == 1

    # The mail provider's one-click POST: no cookie, no CSRF token.
    provider = Client(enforce_csrf_checks=True)
    response = provider.post(urlsplit(unsubscribe).path, "List-Unsubscribe=One-Click",
                             content_type="application/x-www-form-urlencoded")
    assert response.status_code == 200
    subscriber.refresh_from_db()
    assert subscriber.unsubscribed_at is not None and not subscriber.active

    mail.outbox.clear()
    second = publish_and_deliver(users, incident, state="monitoring")
    assert mail.outbox == [] and not second.deliveries.filter(subscriber__isnull=False).exists()


def test_the_subscribe_form_needs_its_csrf_token():
    response = Client(enforce_csrf_checks=True).post(SUBSCRIBE, {"email": "ada@example.com", "scope": "all"})
    assert response.status_code == 403 and not Subscriber.objects.exists() and mail.outbox == []


def test_the_answer_is_the_same_for_a_known_and_an_unknown_address_and_a_confirmed_one_is_not_asked_again(client):
    make_subscriber("known@example.com")
    known = client.post(SUBSCRIBE, {"email": "known@example.com", "scope": "all"})
    unknown = client.post(SUBSCRIBE, {"email": "unknown@example.com", "scope": "all"})
    assert known.status_code == unknown.status_code == 200
    assert known.content.decode().replace("known@", "X@") == unknown.content.decode().replace("unknown@", "X@")
    assert [m.to for m in mail.outbox] == [["unknown@example.com"]]  # the confirmed address got nothing
    assert Subscriber.objects.get(email="known@example.com").active


def test_an_unconfirmed_or_unsubscribed_address_is_asked_again_at_most_every_ten_minutes(client):
    api, checkout = StatusComponent.objects.create(name="API"), StatusComponent.objects.create(name="Checkout")
    gone = make_subscriber("gone@example.com")
    gone.unsubscribe()
    with time_machine.travel(timezone.now(), tick=False) as clock:
        client.post(SUBSCRIBE, {"email": "gone@example.com", "scope": "chosen", "components": [api.pk]})
        clock.shift(timedelta(minutes=9))
        again = client.post(SUBSCRIBE, {"email": "gone@example.com", "scope": "chosen", "components": [checkout.pk]})
        assert again.status_code == 200 and len(mail.outbox) == 1  # the same answer, and no second email yet
        clock.shift(timedelta(minutes=2))
        client.post(SUBSCRIBE, {"email": "gone@example.com", "scope": "all"})
    assert [m.to for m in mail.outbox] == [["gone@example.com"]] * 2
    gone.refresh_from_db()
    assert (gone.confirmed_at, gone.unsubscribed_at, list(gone.components.all())) == (None, None, [])
    assert Subscriber.objects.count() == 1


def test_only_a_confirmed_subscriber_gets_updates(users, incident):
    make_subscriber("pending@example.com", confirmed=False)
    update = publish_and_deliver(users, incident)
    assert mail.outbox == [] and not update.deliveries.filter(subscriber__isnull=False).exists()


def test_a_subscriber_to_some_components_gets_only_the_updates_about_them(users, incident):
    api, checkout = StatusComponent.objects.create(name="API"), StatusComponent.objects.create(name="Checkout")
    make_subscriber("api@example.com", api)
    make_subscriber("all@example.com")
    publish_and_deliver(users, incident, title="Checkout is slow", components={checkout.pk: "degraded_performance"})
    assert [m.to for m in mail.outbox] == [["all@example.com"]]
    mail.outbox.clear()
    publish_and_deliver(users, incident, components={api.pk: "major_outage", checkout.pk: "operational"})
    assert sorted(m.to[0] for m in mail.outbox) == ["all@example.com", "api@example.com"]


@pytest.mark.parametrize(("data", "message"), [
    ({"email": "a" * 250 + "@example.com", "scope": "all"}, "at most 254 characters (it has 262)"),
    ({"email": "not an address", "scope": "all"}, "Enter an email address such as name@example.com."),
    ({"email": "", "scope": "all"}, "Enter an email address: the link to confirm goes to it."),
    ({"email": "ada@example.com", "scope": "chosen", "components": ["999"]}, "There is no component 999"),
    ({"email": "ada@example.com", "scope": "chosen", "components": ["abc"]}, "“abc” is not a component"),
    ({"email": "ada@example.com", "scope": "chosen"}, "Choose at least one component, or every update."),
    ({"email": "ada@example.com", "scope": "some"}, "Choose every update, or only some components."),
])
def test_bad_input_is_refused_with_a_precise_message_and_nothing_is_stored_or_sent(client, data, message):
    response = client.post(SUBSCRIBE, data)
    assert response.status_code == 422 and message in response.content.decode()
    assert not Subscriber.objects.exists() and mail.outbox == []


def test_a_mail_server_that_fails_is_tried_again_by_the_worker_and_the_answer_is_the_same(client, monkeypatch):
    real_send, tries = mail.EmailMessage.send, []

    def refuse_once(self, fail_silently=False):
        tries.append(self.to)
        if len(tries) == 1:
            raise ConnectionRefusedError("no mail server")
        return real_send(self, fail_silently)

    monkeypatch.setattr(mail.EmailMessage, "send", refuse_once)
    response = client.post(SUBSCRIBE, {"email": "ada@example.com", "scope": "all"})
    assert response.status_code == 200 and "could not" not in response.content.decode()
    assert tries == [["ada@example.com"]] * 2  # the retry sends at once: the failed try counted nothing
    assert [m.to for m in mail.outbox] == [["ada@example.com"]]


def test_a_broker_that_is_down_is_said_plainly_whatever_the_address(client, monkeypatch):
    def down(*args):
        raise ConnectionRefusedError("no broker")

    monkeypatch.setattr(status_tasks.subscribe_to_status, "delay", down)
    make_subscriber("known@example.com")
    for address in ("known@example.com", "ada@example.com"):
        response = client.post(SUBSCRIBE, {"email": address, "scope": "all"})
        assert response.status_code == 503 and "could not be taken just now" in response.content.decode()
    assert Subscriber.objects.count() == 1 and mail.outbox == []


def test_a_new_and_a_confirmed_address_take_the_same_path_with_the_same_queries(client, monkeypatch):
    queued = []
    monkeypatch.setattr(status_tasks.subscribe_to_status, "delay", lambda *args: queued.append(args))
    make_subscriber("known@example.com")
    answers, counts = [], []
    for address in ("known@example.com", "new@example.com"):
        with CaptureQueriesContext(connection) as queries:
            answers.append(answer_of(client.post(SUBSCRIBE, {"email": address, "scope": "all"}), address))
        counts.append(len(queries))
    assert answers[0] == answers[1] and counts[0] == counts[1]
    assert queued == [("known@example.com", [], "127.0.0.1", "email", ""),
                      ("new@example.com", [], "127.0.0.1", "email", "")]
    assert Subscriber.objects.count() == 1 and mail.outbox == []  # the worker does the rest


# -- limits: per mailbox, per domain, per client -------------------------------------------------------------


def answer_of(response, address: str) -> str:
    """The answer page with the address it names taken out: what is left must not tell the cases apart."""
    assert response.status_code == 200
    return response.content.decode().replace(address, "ADDRESS")


def test_plus_addresses_of_one_mailbox_get_at_most_the_mailbox_limit_of_emails(client, settings):
    settings.SUBSCRIBE_MAILBOX_LIMIT = 3
    with time_machine.travel(timezone.now(), tick=False) as clock:
        answers = {answer_of(client.post(SUBSCRIBE, {"email": f"Ada+{n}@Example.com", "scope": "all"}),
                             f"Ada+{n}@Example.com") for n in range(40)}
        client.post(SUBSCRIBE, {"email": "ada@example.com", "scope": "all"})  # the mailbox itself: limited too
        assert len(mail.outbox) == 3 and len(answers) == 1
        clock.shift(timedelta(minutes=settings.SUBSCRIBE_LIMIT_WINDOW_MINUTES + 1))
        client.post(SUBSCRIBE, {"email": "ada+later@example.com", "scope": "all"})
    assert len(mail.outbox) == 4  # a new window
    assert [m.to for m in mail.outbox[:3]] == [["ada+0@example.com"], ["ada+1@example.com"], ["ada+2@example.com"]]


def test_dots_in_a_gmail_address_are_the_same_mailbox(client, settings):
    settings.SUBSCRIBE_MAILBOX_LIMIT = 1
    for address in ("ada.lovelace@gmail.com", "adalovelace@gmail.com", "a.d.a.lovelace+x@googlemail.com"):
        client.post(SUBSCRIBE, {"email": address, "scope": "all"})
    client.post(SUBSCRIBE, {"email": "ada.lovelace@example.com", "scope": "all"})  # dots count elsewhere
    assert [m.to for m in mail.outbox] == [["ada.lovelace@gmail.com"], ["ada.lovelace@example.com"]]


def test_many_addresses_from_one_client_get_a_bounded_number_of_emails(settings):
    settings.SUBSCRIBE_CLIENT_LIMIT = 5
    flooder, neighbour = Client(REMOTE_ADDR="203.0.113.7"), Client(REMOTE_ADDR="198.51.100.2")
    answers = {answer_of(flooder.post(SUBSCRIBE, {"email": f"victim{n}@example{n}.org", "scope": "all"}),
                         f"victim{n}@example{n}.org") for n in range(30)}
    assert len(mail.outbox) == 5 and len(answers) == 1
    assert Subscriber.objects.count() == 5  # the limited requests store nothing either
    neighbour.post(SUBSCRIBE, {"email": "ada@example.com", "scope": "all"})
    assert mail.outbox[-1].to == ["ada@example.com"]


def test_one_domain_gets_a_bounded_number_of_emails_whatever_the_clients(settings):
    settings.SUBSCRIBE_DOMAIN_LIMIT = 4
    for n in range(10):
        Client(REMOTE_ADDR=f"192.0.2.{n + 1}").post(SUBSCRIBE, {"email": f"person{n}@corp.example", "scope": "all"})
    assert len(mail.outbox) == 4


def test_the_answer_is_the_same_for_a_new_a_confirmed_and_a_limited_address(client, settings):
    settings.SUBSCRIBE_MAILBOX_LIMIT = 1
    make_subscriber("known@example.com")
    client.post(SUBSCRIBE, {"email": "grace@example.com", "scope": "all"})
    new = answer_of(client.post(SUBSCRIBE, {"email": "ada@example.com", "scope": "all"}), "ada@example.com")
    confirmed = answer_of(client.post(SUBSCRIBE, {"email": "known@example.com", "scope": "all"}), "known@example.com")
    limited = answer_of(client.post(SUBSCRIBE, {"email": "grace+2@example.com", "scope": "all"}),
                        "grace+2@example.com")
    assert new == confirmed == limited
    assert [m.to for m in mail.outbox] == [["grace@example.com"], ["ada@example.com"]]

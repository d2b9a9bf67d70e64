"""Webhook and Slack subscribers (reviewer/status/subscriptions.py, reviewer/models/subscriber_urls.py,
reviewer/outbox/channels.py): real receivers on loopback confirm through the link, get each published
update once (a webhook's signed with the secret its owner was shown), and unsubscribe through the link
in what they received; every refused URL says why; the host limit holds."""

from __future__ import annotations

import hashlib
import hmac
import html
import re
import socket
from urllib.parse import urlsplit

import pytest
from django.core import mail
from django.test import Client

from agents.models import Run
from reviewer.models import DeliveryChannel, StatusComponent, Subscriber, subscriber_urls
from reviewer.outbox import tasks
from reviewer.outbox.publishing import CONFIRM_REPEAT, PublicFields, publish
from reviewer.status import tasks as status_tasks
from tests.factories import WebhookReceiver, make_incident, make_run

pytestmark = pytest.mark.django_db

SUBSCRIBE = "/status/subscribe/"
TEXT = "Some card payments fail in the EU. We are working on a fix."
INTERNAL_TITLE = "P1 PSP timeout on db-7 failover"


@pytest.fixture(autouse=True)
def channels(monkeypatch, settings):
    """The status page and the subscribers channel, deliveries run by hand; loopback taken as a
    subscriber's host (SUBSCRIBER_PRIVATE_ALLOWED), as a company's own receiver on its network would be."""
    monkeypatch.setattr(tasks.deliver, "delay", lambda pk: None)
    monkeypatch.setattr(tasks.deliver, "apply_async", lambda args, countdown=0: None)
    monkeypatch.setattr(status_tasks.subscribe_to_status, "delay",
                        lambda *args: status_tasks.subscribe_to_status.apply(args=args))
    settings.SITE_URL = "https://status.example.com"
    settings.SUBSCRIBER_PRIVATE_ALLOWED = ["127.0.0.1"]
    DeliveryChannel.objects.all().delete()
    DeliveryChannel.objects.create(name="Status page", kind="status")
    DeliveryChannel.objects.create(name="Subscribers", kind="subscribers")


@pytest.fixture
def receiver():
    started = []

    def start(secret=None, **options) -> WebhookReceiver:
        started.append(WebhookReceiver(secret, **options))
        return started[-1]

    yield start
    for one in started:
        one.stop()


def publish_and_deliver(users, incident, **fields):
    fields.setdefault("confirmed", frozenset({CONFIRM_REPEAT}))
    run = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=TEXT)
    update = publish(incident, TEXT, actor=users.ops, source_run=run, fields=PublicFields(**fields))
    return update, {d.subscriber_id: tasks.attempt(d.pk) for d in update.deliveries.all()}


def path_of(url: str) -> str:
    return urlsplit(url).path


def test_a_webhook_subscriber_confirms_by_email_gets_each_update_once_signed_and_unsubscribes_by_its_link(users):
    incident = make_incident("inc_pay_2041", title=INTERNAL_TITLE)
    checkout = StatusComponent.objects.create(name="Checkout")
    hook = WebhookReceiver(secret=None)
    try:
        response = Client().post(SUBSCRIBE, {"kind": "webhook", "email": "ops@customer.example", "url": hook.url,
                                             "scope": "all"})
        assert response.status_code == 200 and "an email is on its way" in response.content.decode()
        (confirmation,) = mail.outbox
        assert confirmation.to == ["ops@customer.example"] and "webhook at 127.0.0.1" in confirmation.body
        confirm = re.search(r"https://status\.example\.com(/status/subscribe/confirm/\S+/)", confirmation.body)[1]
        page = Client().get(confirm).content.decode()
        assert "the webhook at 127.0.0.1" in page and "<button" in page and not Subscriber.objects.get().active

        confirmed = Client().post(confirm).content.decode()
        secret = html.unescape(re.search(r'class="webhook-secret"><code>([^<]+)</code>', confirmed)[1])
        assert len(secret) == 64 and "shown only once" in confirmed
        assert secret not in Client().get(confirm).content.decode()  # only the click that confirmed sees it
        hook.secret = secret  # the receiver now checks every signature with the secret it was shown

        first, outcomes = publish_and_deliver(users, incident, title="Card payments failing", state="identified",
                                              components={checkout.pk: "partial_outage"})
        second, more = publish_and_deliver(users, incident, state="monitoring")
        assert {*outcomes.values(), *more.values()} == {"delivered"}
        keys = [str(u.deliveries.get(subscriber__isnull=False).key) for u in (first, second)]
        assert dict(hook.requests) == {keys[0]: 1, keys[1]: 1} and hook.bad_signatures == 0
        # A redelivered task finds it delivered and sends nothing more.
        assert tasks.attempt(first.deliveries.get(subscriber__isnull=False).pk) == "skipped"

        body = hook.accepted[keys[0]]
        unsubscribe = body.pop("unsubscribe_url")
        assert body == {"type": "incident_update", "title": "Card payments failing", "state": "identified",
                        "impact": "major", "text": TEXT, "version": first.version,
                        "components": [{"name": "Checkout", "status": "partial_outage"}],
                        "published_at": first.published_at.isoformat(),
                        "url": "https://status.example.com/status/incidents/inc_pay_2041/"}
        # The internal title's words are nowhere in what the receiver got (the unsubscribe links hold a random
        # token, which may hold any letters: "…aedb-711e…" once did).
        sent = str([{k: v for k, v in b.items() if k != "unsubscribe_url"} for b in hook.accepted.values()])
        assert "db-7" not in sent and "P1" not in sent

        assert "<button" in Client().get(path_of(unsubscribe)).content.decode()  # a GET changes nothing
        assert Subscriber.objects.get().active
        Client().post(path_of(unsubscribe))
        third, outcomes = publish_and_deliver(users, incident, state="monitoring")
        assert outcomes == {None: "delivered"} and len(hook.requests) == 2
    finally:
        hook.stop()


def test_the_signature_is_hmac_sha256_over_the_time_the_key_and_the_body_with_the_shown_secret(users, receiver,
                                                                                             monkeypatch):
    """The receiver above checks with the documented snippet; here the test computes the HMAC itself."""
    from reviewer.outbox import channels

    sent = []
    monkeypatch.setattr(channels, "post", lambda where, raw, headers, answered=None, request=None:
                        sent.append((raw, headers)))
    subscriber = Subscriber.objects.create(kind="webhook", email="ops@customer.example",
                                           url="http://127.0.0.1:9/hook")
    assert subscriber.confirm() and len(subscriber.secret) == 64
    update, outcomes = publish_and_deliver(users, make_incident())
    ((raw, headers),) = sent
    t, v2 = re.fullmatch(r"t=(\d+),v2=([0-9a-f]{64})", headers["X-Signature"]).groups()
    expected = hmac.new(subscriber.secret.encode(), f"{t}.{headers['Idempotency-Key']}.".encode() + raw,
                        hashlib.sha256).hexdigest()
    assert v2 == expected and headers["Idempotency-Key"] == str(update.deliveries.get(subscriber=subscriber).key)


def test_a_webhook_subscriber_that_fails_is_tried_again_not_held_and_the_others_still_get_it(users, receiver):
    failing, working = receiver(fail_rate=1.0), receiver()
    for email, hook in (("a@customer.example", failing), ("b@customer.example", working)):
        Subscriber.objects.create(kind="webhook", email=email, url=hook.url).confirm()
    update, outcomes = publish_and_deliver(users, make_incident())
    by_url = {d.subscriber.url: (outcomes[d.subscriber_id], d)
              for d in update.deliveries.filter(subscriber__isnull=False)}
    assert by_url[failing.url][0] == "retry" and by_url[working.url][0] == "delivered"
    by_url[failing.url][1].refresh_from_db()
    assert by_url[failing.url][1].last_error == "webhook subscriber (127.0.0.1): HTTP 500"
    assert len(working.accepted) == 1 and sum(failing.requests.values()) == 1


def test_a_webhook_subscriber_whose_receiver_times_out_is_tried_again_with_the_same_key(users, receiver, settings):
    settings.DELIVERY_TIMEOUT_SECONDS = 0.5
    hook = receiver(timeout_rate=1.0, hang_seconds=1.5)
    Subscriber.objects.create(kind="webhook", email="a@customer.example", url=hook.url).confirm()
    update, outcomes = publish_and_deliver(users, make_incident())
    assert "retry" in outcomes.values()  # at least once: not held, as an email or Slack would be
    assert update.deliveries.get(subscriber__isnull=False).status == "pending"


def test_a_webhook_subscriber_to_some_components_gets_only_the_updates_about_them(users, receiver):
    checkout = StatusComponent.objects.create(name="Checkout")
    api = StatusComponent.objects.create(name="API")
    hook = receiver()
    subscriber = Subscriber.objects.create(kind="webhook", email="a@customer.example", url=hook.url)
    subscriber.components.set([api])
    subscriber.confirm()
    incident = make_incident()
    about_checkout, _ = publish_and_deliver(users, incident, components={checkout.pk: "degraded_performance"})
    about_api, _ = publish_and_deliver(users, incident, components={api.pk: "degraded_performance"})
    assert not about_checkout.deliveries.filter(subscriber=subscriber).exists()
    assert list(hook.accepted) == [str(about_api.deliveries.get(subscriber=subscriber).key)]


def test_a_webhook_subscriber_redirect_is_not_followed(users, receiver):
    elsewhere = receiver()
    hook = receiver(redirect=(307, elsewhere.url))
    Subscriber.objects.create(kind="webhook", email="a@customer.example", url=hook.url).confirm()
    _, outcomes = publish_and_deliver(users, make_incident())
    assert "retry" in outcomes.values() and not elsewhere.requests


def test_a_slack_subscription_is_confirmed_by_its_first_message_then_gets_updates_and_unsubscribes(
        users, receiver, settings):
    settings.SUBSCRIBER_SLACK_HOSTS = ["127.0.0.1"]
    slack = receiver()  # Slack signs nothing
    incident = make_incident("inc_pay_2041", title=INTERNAL_TITLE)
    response = Client().post(SUBSCRIBE, {"kind": "slack", "email": "ignored@example.com", "url": slack.url,
                                         "scope": "all"})
    assert response.status_code == 200 and "Check your Slack channel" in response.content.decode()
    assert mail.outbox == [] and Subscriber.objects.get().email == ""
    first = slack.accepted[""]  # the confirmation message carries no Idempotency-Key
    assert first["mrkdwn"] is False and first["unfurl_links"] is False
    confirm = re.search(r"https://status\.example\.com(/status/subscribe/confirm/\S+/)", first["text"])[1]
    assert "your Slack channel" in Client().get(confirm).content.decode()
    Client().post(confirm)
    assert Subscriber.objects.get().active and Subscriber.objects.get().secret == ""

    update, outcomes = publish_and_deliver(users, incident, title="Payments & refunds slow", state="identified")
    assert set(outcomes.values()) == {"delivered"}
    message = slack.accepted[str(update.deliveries.get(subscriber__isnull=False).key)]
    assert message["text"].startswith("Payments &amp; refunds slow — Identified (update 1)\n")
    assert TEXT in message["text"] and message["mrkdwn"] is False and message["unfurl_media"] is False
    assert "Details: https://status.example.com/status/incidents/inc_pay_2041/" in message["text"]
    unsubscribe = re.search(r"Unsubscribe: (\S+)", message["text"])[1]
    Client().post(path_of(unsubscribe))
    _, outcomes = publish_and_deliver(users, incident, state="monitoring")
    assert outcomes == {None: "delivered"} and sum(slack.requests.values()) == 2


def test_a_slack_delivery_that_may_have_arrived_is_held_not_sent_twice(users, receiver, settings):
    settings.SUBSCRIBER_SLACK_HOSTS = ["127.0.0.1"]
    settings.DELIVERY_TIMEOUT_SECONDS = 0.5
    slack = receiver(timeout_rate=1.0, hang_seconds=1.5)
    Subscriber.objects.create(kind="slack", url=slack.url).confirm()
    _, outcomes = publish_and_deliver(users, make_incident())
    assert sorted(outcomes.values(), key=str) == ["delivered", "held"]


FAKE_DNS = {"hooks.example.com": "93.184.215.14", "intranet.example.com": "10.1.2.3",
            "metadata.example.com": "169.254.169.254", "shared.example.com": "100.64.0.7",
            "v6loop.example.com": "::1", "mapped.example.com": "::ffff:192.168.0.1", "hooks.slack.com": "34.1.2.3"}


@pytest.fixture
def fake_dns(monkeypatch):
    """Names resolved from FAKE_DNS (the tests reach no outside resolver); any other name is unknown."""
    def resolve(host, port, *args, **kwargs):
        if host in FAKE_DNS:
            return [(socket.AF_INET6 if ":" in FAKE_DNS[host] else socket.AF_INET, socket.SOCK_STREAM, 6, "",
                     (FAKE_DNS[host], port))]
        if re.fullmatch(r"[\d.]+|[0-9a-f:]+", host):
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (host, port))]
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(subscriber_urls.socket, "getaddrinfo", resolve)


@pytest.mark.parametrize(("kind", "url", "message"), [
    ("webhook", "http://hooks.example.com/status", "Use an https address: updates are not sent unencrypted."),
    ("webhook", "https://user:pw@hooks.example.com/status", "Leave the user name and password out of the address"),
    ("webhook", "ftp://hooks.example.com/status", "Enter a full address such as https://example.com/status-hook."),
    ("webhook", "hooks.example.com/status", "Enter a full address such as https://example.com/status-hook."),
    ("webhook", "https://intranet.example.com/hook", "The host intranet.example.com has a private or reserved"),
    ("webhook", "https://metadata.example.com/latest", "The host metadata.example.com has a private or reserved"),
    ("webhook", "https://shared.example.com/hook", "The host shared.example.com has a private or reserved"),
    ("webhook", "https://v6loop.example.com/hook", "The host v6loop.example.com has a private or reserved"),
    ("webhook", "https://mapped.example.com/hook", "The host mapped.example.com has a private or reserved"),
    ("webhook", "https://127.0.0.2:8443/hook", "The host 127.0.0.2 has a private or reserved"),
    ("webhook", "https://0.0.0.0/hook", "The host 0.0.0.0 has a private or reserved"),
    ("webhook", "https://nowhere.invalid/hook", "We could not find the host nowhere.invalid; check the address."),
    ("webhook", "", "Enter the URL updates are sent to."),
    ("slack", "https://hooks.example.com/services/T1/B1/x", "Enter a Slack incoming-webhook address, on hooks.slack"),
    ("slack", "http://127.0.0.1:9/hook", "Enter a Slack incoming-webhook address, on hooks.slack.com."),
])
def test_each_refused_url_is_named_on_the_form_and_nothing_is_stored_or_sent(client, fake_dns, kind, url, message):
    response = client.post(SUBSCRIBE, {"kind": kind, "email": "ops@customer.example", "url": url, "scope": "all"})
    assert response.status_code == 422 and html.escape(message) in response.content.decode()
    assert 'aria-invalid="true"' in response.content.decode()
    assert not Subscriber.objects.exists() and mail.outbox == []


def test_a_public_https_url_is_taken_and_loopback_over_http_only_when_allowed(client, fake_dns, settings):
    assert subscriber_urls.check_subscriber_url(" https://hooks.example.com/s?x=1 ", "webhook") == \
        "https://hooks.example.com/s?x=1"
    assert subscriber_urls.check_subscriber_url("https://hooks.slack.com/services/T1/B1/x", "slack")
    assert subscriber_urls.check_subscriber_url("http://127.0.0.1:9/hook", "webhook")
    settings.SUBSCRIBER_PRIVATE_ALLOWED = ["10.0.0.0/8"]
    assert subscriber_urls.check_subscriber_url("http://intranet.example.com/hook", "webhook")
    with pytest.raises(subscriber_urls.UnsafeURL, match="private or reserved"):
        subscriber_urls.check_subscriber_url("https://127.0.0.1:9/hook", "webhook")


def test_a_webhook_needs_an_email_for_its_confirmation_link(client, fake_dns):
    response = client.post(SUBSCRIBE, {"kind": "webhook", "url": "https://hooks.example.com/x", "scope": "all"})
    assert response.status_code == 422 and "the link to confirm goes to it" in response.content.decode()


def test_the_host_limit_counts_confirmations_to_one_host_whatever_the_address_or_client(fake_dns, settings):
    settings.SUBSCRIBE_HOST_LIMIT = 2
    for number in range(3):
        Client(REMOTE_ADDR=f"203.0.113.{number}").post(SUBSCRIBE, {
            "kind": "webhook", "email": f"ops{number}@customer{number}.example",
            "url": f"https://hooks.example.com/hook/{number}", "scope": "all"})
    assert [m.to for m in mail.outbox] == [["ops0@customer0.example"], ["ops1@customer1.example"]]
    assert Subscriber.objects.count() == 2


def test_slack_counts_each_workspace_as_a_host():
    from reviewer.status.subscriptions import url_host

    assert url_host("slack", "https://hooks.slack.com/services/T01/B02/xyz") == "hooks.slack.com/T01"
    assert url_host("webhook", "https://Hooks.Example.com/a/b") == "hooks.example.com"
    assert url_host("email", "") == ""


def test_one_subscription_per_url_and_a_confirmed_one_is_left_as_it_is(client, fake_dns):
    url = "https://hooks.example.com/x"
    client.post(SUBSCRIBE, {"kind": "webhook", "email": "a@customer.example", "url": url, "scope": "all"})
    Subscriber.objects.get().confirm()
    client.post(SUBSCRIBE, {"kind": "webhook", "email": "b@other.example", "url": url, "scope": "all"})
    assert [s.email for s in Subscriber.objects.all()] == ["a@customer.example"] and len(mail.outbox) == 1
    # The same address may also have an email subscription of its own.
    client.post(SUBSCRIBE, {"kind": "email", "email": "a@customer.example", "scope": "all"})
    assert sorted(Subscriber.objects.values_list("kind", flat=True)) == ["email", "webhook"]


def test_maintenance_notices_reach_webhook_and_slack_subscribers_with_their_unsubscribe_link(
        users, receiver, settings, django_capture_on_commit_callbacks):
    from datetime import timedelta

    from django.utils import timezone

    from reviewer.outbox.maintenance import schedule

    settings.SUBSCRIBER_SLACK_HOSTS = ["127.0.0.1"]
    hook, slack = receiver(), receiver()
    webhook = Subscriber.objects.create(kind="webhook", email="ops@customer.example", url=hook.url)
    webhook.confirm()
    hook.secret = webhook.secret
    Subscriber.objects.create(kind="slack", url=slack.url).confirm()
    api = StatusComponent.objects.create(name="API")
    starts = timezone.now() + timedelta(hours=2)
    with django_capture_on_commit_callbacks(execute=True):
        schedule(title="Database upgrade", text="We will upgrade the API database. The API may be slow for a minute.",
                 components=[api], starts_at=starts, ends_at=starts + timedelta(hours=1), actor=users.ops)
    ((key, body),) = hook.accepted.items()
    assert hook.bad_signatures == 0 and key
    assert body == {"type": "maintenance_update", "title": "Database upgrade", "status": "scheduled",
                    "text": "We will upgrade the API database. The API may be slow for a minute.",
                    "scheduled_for": starts.isoformat(), "scheduled_until": (starts + timedelta(hours=1)).isoformat(),
                    "components": [{"name": "API"}], "url": "https://status.example.com/status/",
                    "unsubscribe_url": webhook.unsubscribe_url}
    ((_, message),) = slack.accepted.items()
    assert message["text"].startswith("[Our service status] Scheduled: Database upgrade")
    assert message["mrkdwn"] is False
    assert "You get this message because you subscribed to Our service status.\nUnsubscribe: " \
           "https://status.example.com/status/unsubscribe/" in message["text"]


def test_admin_shows_the_kind_and_the_urls_host_never_the_url_or_the_secret(login):
    admin = login("admin")
    webhook = Subscriber.objects.create(kind="webhook", email="ops@customer.example",
                                        url="https://hooks.customer.example/status/abc123token")
    webhook.confirm()
    slack = Subscriber.objects.create(kind="slack", url="https://hooks.slack.com/services/T01/B02/slacktoken")
    pages = [admin.get("/admin/reviewer/subscriber/").content.decode(),
             admin.get(f"/admin/reviewer/subscriber/{webhook.pk}/change/").content.decode(),
             admin.get(f"/admin/reviewer/subscriber/{slack.pk}/change/").content.decode()]
    assert "hooks.customer.example" in pages[0] and "hooks.slack.com" in pages[0] and "Webhook" in pages[0]
    assert "hooks.customer.example" in pages[1] and "hooks.slack.com" in pages[2]
    for page in pages:
        assert webhook.secret not in page and "abc123token" not in page and "slacktoken" not in page


@pytest.fixture
def tls_receiver(tmp_path, monkeypatch):
    """An HTTPS receiver on 127.0.0.1 with a certificate for hooks.test only, trusted through
    REQUESTS_CA_BUNDLE; hooks.test resolves to 127.0.0.1 in this process, and each lookup is counted."""
    import datetime
    import ssl
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "hooks.test")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("hooks.test")]), critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    (tmp_path / "cert.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                         serialization.PrivateFormat.PKCS8,
                                                         serialization.NoEncryption()))
    received = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            received.append((self.headers["Host"], self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(tmp_path / "cert.pem"))
    lookups = []
    real = socket.getaddrinfo

    def resolve(host, port, *args, **kwargs):
        if host == "hooks.test":
            lookups.append(host)
            return real("127.0.0.1", port, *args, **kwargs)
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(subscriber_urls.socket, "getaddrinfo", resolve)
    yield f"https://hooks.test:{server.server_address[1]}/hook", received, lookups
    server.shutdown()
    server.server_close()


def test_a_send_connects_to_the_address_it_checked_naming_the_host_in_tls(users, tls_receiver):
    url, received, lookups = tls_receiver
    Subscriber.objects.create(kind="webhook", email="a@customer.example", url=url).confirm()
    update, outcomes = publish_and_deliver(users, make_incident())
    assert set(outcomes.values()) == {"delivered"}  # the certificate of hooks.test was checked and taken
    ((host, body),) = received
    assert host == urlsplit(url).netloc and b'"type": "incident_update"' in body
    assert lookups == ["hooks.test"]  # resolved once, by the check: the connection used that address

"""Sending one outbox row to its channel: the public status page, a signed generic
webhook, a Slack incoming webhook, or email through Django's mail backend.

Each channel carries the text as plain text for its medium (docs/publishing.md, 'Plain text on every
channel'): escaped Slack text with formatting and previews off, a plain-text email, a JSON string in
the webhook, and the status page's autoescaped template. What goes with the text is what was published
with it (the public title, state, impact and components), never the incident's internal title or id,
except in the webhook, which the operator's own systems receive (docs/publishing.md, 'The webhook').

A status page subscriber gets an email of their own, with a one-click unsubscribe (RFC 8058), and
none once they have unsubscribed, even for an update published before (:class:`NotSent`). A webhook
subscriber gets the public fields as JSON signed with its own secret, a Slack subscription a message;
both with the unsubscribe link, to a URL checked again before each send (``post_to_subscriber_url``).

A webhook's URL and signing secret come from the operator's allowlist (``reviewer.outbox.destinations``)
by the channel's destination name, at the moment of sending: the secret only ever goes to the URL
it was declared with. Redirects are not followed (a body for one host is not resent to another).

The signature, like Stripe's and GitHub's: ``X-Signature: t=<unix seconds>,v2=<hex>``, where hex is
HMAC-SHA256 with the secret over ``<t>.<Idempotency-Key>.<raw body>``: the key receivers drop duplicates
by is signed too, so nobody can replay a body under a fresh key. ``Idempotency-Key`` is the delivery's
key, the same on every attempt (docs/publishing.md, "The webhook").
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import smtplib
import socket
import time
from datetime import UTC

import requests
import urllib3
from django.conf import settings
from django.core.mail import EmailMessage, get_connection
from urllib3.exceptions import NewConnectionError

from reviewer.models import (
    Delivery,
    DeliveryChannel,
    PublishedUpdate,
    Subscriber,
    UnsafeURL,
    absolute_url,
    post_to_subscriber_url,
    status_page_name,
)
from reviewer.outbox.destinations import Destination, DestinationError, resolve
from reviewer.outbox.publishing import DEFAULT_TITLE

SIGNATURE_HEADER = "X-Signature"
USER_AGENT = "gated-review-outbox/1"


class DeliveryFailed(Exception):
    """This attempt failed and the message did not leave (a refused connection, an unknown host, an
    SMTP or HTTP error answer); the message (no URL, no secret) is stored as the delivery's last error."""


class MayHaveBeenSent(DeliveryFailed):
    """This attempt failed after the message may have reached the receiver: a timeout or a dropped
    connection once the request or the email's DATA was on its way. A channel sent at most once holds
    the delivery for a person rather than send it again (``reviewer.outbox.tasks``)."""


class RateLimited(DeliveryFailed):
    """The destination answered 429 Too Many Requests: nothing was taken, and it asks for no more
    until ``retry_after`` seconds have passed (0 when it did not say, in whole seconds)."""

    def __init__(self, message: str, retry_after: float):
        super().__init__(message)
        self.retry_after = retry_after


def retry_after_seconds(value: str | None) -> float:
    """``Retry-After`` in seconds; 0 for a missing or unreadable value (an HTTP date included: the
    backoff then decides)."""
    value = (value or "").strip()
    return float(value) if value.isdigit() else 0.0


class NotSent(Exception):
    """This delivery must not be sent at all (its subscriber unsubscribed); the message says why."""


def headline(update: PublishedUpdate) -> str:
    """The update's public title and state: “Payments delayed — Identified”."""
    title = update.public_title or DEFAULT_TITLE
    return f"{title} — {update.get_state_display()}" if update.state else title


def component_lines(update: PublishedUpdate, *, public: bool = False) -> list[str]:
    """“Checkout: Partial outage”, one per component the update names (with ``public``, only those
    on the public page: never an audience's own)."""
    return [f"{row.component.name}: {row.get_status_display()}" for row in update.components
            if not public or row.component.public]


def email_subject(update: PublishedUpdate) -> str:
    return " ".join(f"{status_page_name()}: {headline(update)}".split())  # one line, even from an old row


def email_body(update: PublishedUpdate, unsubscribe_url: str = "") -> str:
    """The plain-text email of an update: what the status page shows of it, and where to read more. A
    subscriber's (with ``unsubscribe_url``) names the public components only, as the public page does."""
    lines = [update.public_title or DEFAULT_TITLE, ""]
    if update.state:
        lines.append(f"Status: {update.get_state_display()}")
    lines.append(f"Impact: {update.get_impact_display()}")
    components = component_lines(update, public=bool(unsubscribe_url))
    if components:
        lines += ["", "Components:", *(f"- {line}" for line in components)]
    lines += ["", update.text, "",
              f"Posted {update.published_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC",
              f"Status page: {absolute_url('status')}"]
    if unsubscribe_url:
        lines += ["", "-- ", f"You get this email because you subscribed to {status_page_name()}.",
                  f"Unsubscribe: {unsubscribe_url}"]
    return "\n".join(lines) + "\n"


def _message_id(delivery: Delivery) -> str:
    """The same Message-ID on every attempt, so a mail client can drop a copy sent again after a lost worker."""
    domain = settings.DEFAULT_FROM_EMAIL.rpartition("@")[2].strip("<> ") or "localhost"
    return f"<{delivery.key}@{domain}>"


# Errors that say the mail server did not take the message, wherever they are raised: a refused
# connection, an unknown host, or the server's own error answer (to MAIL FROM, RCPT TO or DATA).
EMAIL_NOT_SENT = (ConnectionRefusedError, socket.gaierror, smtplib.SMTPResponseException,
                  smtplib.SMTPRecipientsRefused, smtplib.SMTPNotSupportedError)


def _send_email(delivery: Delivery, to: list[str], unsubscribe_url: str = "", answered=None) -> None:
    update = delivery.update
    headers = {"Message-ID": _message_id(delivery)}
    if unsubscribe_url:
        headers |= {"List-Unsubscribe": f"<{unsubscribe_url}>", "List-Unsubscribe-Post": "List-Unsubscribe=One-Click"}
    # A plain-text body only: no HTML part a mail client would render.
    message = EmailMessage(email_subject(update), email_body(update, unsubscribe_url), settings.DEFAULT_FROM_EMAIL,
                           to, headers=headers, connection=get_connection())
    try:  # connecting, TLS and login: nothing of the message has left yet
        message.connection.open()
    except Exception as error:  # any backend
        raise DeliveryFailed(f"email: {type(error).__name__}: {str(error)[:200]}") from None
    smtp = getattr(message.connection, "connection", None)
    transaction = SmtpTransaction(smtp, answered) if isinstance(smtp, smtplib.SMTP) else None
    try:
        message.send()
    except EMAIL_NOT_SENT as error:
        raise DeliveryFailed(f"email: {type(error).__name__}: {str(error)[:200]}") from None
    except Exception as error:  # a timeout or a dropped connection
        if transaction is not None and transaction.answer:
            return  # the server had taken it (250 after DATA): what broke after that changes nothing
        if transaction is not None and not transaction.content_sent:  # MAIL, RCPT or DATA itself: nothing left
            raise DeliveryFailed(f"email: {type(error).__name__} before the message was sent: "
                                 f"{str(error)[:200]}") from None
        raise MayHaveBeenSent(f"email: {type(error).__name__} after the message was sent, before the server's "
                              f"answer: {str(error)[:200]}") from None
    finally:
        with contextlib.suppress(Exception):  # the server has answered the message; QUIT changes nothing
            message.connection.close()
    if transaction is None and answered is not None:  # another backend (file, memory): it took the message
        answered(f"taken by {type(message.connection).__module__.rpartition('.')[2]} mail backend")


class SmtpTransaction:
    """Watches one SMTP connection's DATA: whether the message's content was written to the server,
    and the server's answer to it, passed to ``answered`` the moment a 250 arrives (before QUIT or
    anything else can fail)."""

    def __init__(self, smtp: smtplib.SMTP, answered=None):
        self.content_sent, self.answer, self.answered = False, "", answered
        send, data = smtp.send, smtp.data

        def sending(payload):
            if self.in_data and isinstance(payload, bytes) and payload.endswith(b"\r\n.\r\n"):
                self.content_sent = True  # written to the socket: from here it may have arrived
            return send(payload)

        def watched_data(content):
            self.in_data = True
            try:
                code, reply = data(content)
            finally:
                self.in_data = False
            if code == 250:
                self.answer = f"{code} {reply.decode(errors='replace')}"
                if self.answered is not None:
                    self.answered(self.answer)
            return code, reply

        self.in_data = False
        smtp.send, smtp.data = sending, watched_data


def signature(secret: str, timestamp: int, key: str, body: bytes) -> str:
    """The ``X-Signature`` header value for ``body`` sent at ``timestamp`` with the Idempotency-Key ``key``."""
    signed = f"{timestamp}.{key}.".encode() + body
    return f"t={timestamp},v2={hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()}"


def slack_escaped(text: str) -> str:
    """Slack reads ``<...>`` as links and mentions (``<!channel>``): its three control characters are
    escaped, so a text is shown as written and pings nobody."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_message(title: str, version: int, text: str) -> dict:
    """A Slack message that shows the update as plain text: the control characters escaped (no link,
    mention or ``<!channel>`` can form), mrkdwn off (``*``, ``_`` and ``~`` show as written), and no
    link or media previews fetched for the channel."""
    return {"text": f"{slack_escaped(title)} (update {version})\n{slack_escaped(text)}", "mrkdwn": False,
            "unfurl_links": False, "unfurl_media": False}


def send(delivery: Delivery, answered=None) -> None:
    """Deliver once; raises :class:`DeliveryFailed` (or :class:`MayHaveBeenSent` when the message may have
    left) with a message fit for the page, or :class:`NotSent`. ``answered(said)`` is called the moment
    the receiver took the message (an SMTP 250 after DATA, an HTTP 2xx), with what it said: from then
    on nothing that breaks makes it a failure."""
    channel, update = delivery.channel, delivery.update
    kind = channel.kind
    if kind == DeliveryChannel.Kind.STATUS:
        return  # the status page shows the updates whose status delivery is delivered
    if kind == DeliveryChannel.Kind.EMAIL:
        return _send_email(delivery, channel.recipient_list, answered=answered)
    if kind == DeliveryChannel.Kind.SUBSCRIBERS:
        subscriber = delivery.subscriber
        if subscriber is None:
            raise DeliveryFailed("a subscribers delivery without a subscriber")
        if not subscriber.active:  # read when the attempt was taken: an unsubscribe before it stops it
            raise NotSent("not sent: the subscriber unsubscribed before it went out")
        if subscriber.kind == Subscriber.Kind.EMAIL:
            return _send_email(delivery, [subscriber.email], subscriber.unsubscribe_url, answered=answered)
        return send_to_subscriber_url(subscriber, subscriber_body(update, subscriber), str(delivery.key), answered)
    try:
        destination = resolve(channel.destination)
    except DestinationError as error:
        raise DeliveryFailed(str(error)) from None
    if kind == DeliveryChannel.Kind.SLACK:
        components = component_lines(update)
        text = "\n".join([*components, "", update.text]) if components else update.text
        body = json.dumps(slack_message(headline(update), update.version, text)).encode()
        headers = {}
    else:
        if not destination.secret:
            raise DeliveryFailed(f"{destination.name}: declared without a secret variable; generic webhooks are "
                                 "always signed (name=url|SECRET_VARIABLE)")
        body = json.dumps(update.payload(), ensure_ascii=False, sort_keys=True).encode()
        headers = {SIGNATURE_HEADER: signature(destination.secret, int(time.time()), str(delivery.key), body)}
    headers.update({"Content-Type": "application/json", "Idempotency-Key": str(delivery.key),
                    "User-Agent": USER_AGENT})
    post(destination, body, headers, answered)


def subscriber_body(update: PublishedUpdate, subscriber: Subscriber) -> dict:
    """What a webhook subscriber receives of an update (the public fields and components only, as on the status page),
    or the Slack message of a Slack subscription, each with the subscriber's unsubscribe link."""
    if subscriber.kind == Subscriber.Kind.SLACK:
        components = component_lines(update, public=True)
        lines = [*components, "", update.text] if components else [update.text]
        lines += ["", f"Details: {incident_url(update)}", f"Unsubscribe: {subscriber.unsubscribe_url}"]
        return slack_message(headline(update), update.version, "\n".join(lines))
    return {"type": "incident_update", "title": update.public_title or DEFAULT_TITLE, "state": update.state,
            "impact": update.impact, "text": update.text, "version": update.version,
            "components": [{"name": row.component.name, "status": row.status} for row in update.components
                           if row.component.public],  # as on the public page: never an audience's
            "published_at": update.published_at.isoformat(), "url": incident_url(update),
            "unsubscribe_url": subscriber.unsubscribe_url}


def incident_url(update: PublishedUpdate) -> str:
    """The incident's public page, where the update and those before it are read."""
    return absolute_url("status_incident", update.incident.incident_id)


def send_to_subscriber_url(subscriber: Subscriber, body: dict, key: str, answered=None) -> None:
    """POST ``body`` to a webhook subscriber (signed with its own secret, ``key`` as Idempotency-Key) or
    a Slack subscription, once its URL passes the checks again (its host's addresses may have changed
    since it subscribed); raises :class:`DeliveryFailed` otherwise."""
    where = Destination(f"{subscriber.get_kind_display().lower()} subscriber", subscriber.url)
    raw = json.dumps(body, ensure_ascii=False, sort_keys=True).encode()
    headers = {"Content-Type": "application/json", "Idempotency-Key": key, "User-Agent": USER_AGENT}
    if subscriber.kind == Subscriber.Kind.WEBHOOK:
        if not subscriber.secret:
            raise DeliveryFailed(f"{where.name} ({where.host}): no signing secret; it was never confirmed")
        headers[SIGNATURE_HEADER] = signature(subscriber.secret, int(time.time()), key, raw)
    try:  # checked again, and sent to the address the check resolved
        post(where, raw, headers, answered,
             request=lambda url, **options: post_to_subscriber_url(url, subscriber.kind, **options))
    except UnsafeURL as refused:  # raised before any connection: nothing left
        raise DeliveryFailed(f"{where.name} ({where.host}): refused: {refused}") from None


def post(destination: Destination, body: bytes, headers: dict, answered=None, request=None) -> None:
    """POST ``body`` to a declared destination (or a subscriber's, through ``request``), redirects not
    followed; raises :class:`DeliveryFailed` naming the destination and its host (never the URL) unless
    it answers 2xx. A 2xx status line is the answer (``answered``), read before the body: a connection
    that breaks in the body took it."""
    where = f"{destination.name} ({destination.host})"
    try:
        response = (request or requests.post)(destination.url, data=body, headers=headers, allow_redirects=False,
                                 timeout=settings.DELIVERY_TIMEOUT_SECONDS, stream=True)
    except requests.ConnectTimeout:  # no connection was made: nothing was sent
        raise DeliveryFailed(f"{where}: no connection within {settings.DELIVERY_TIMEOUT_SECONDS} s") from None
    except requests.Timeout:  # the request was sent and no answer came: it may have been taken
        raise MayHaveBeenSent(f"{where}: no answer within {settings.DELIVERY_TIMEOUT_SECONDS} s") from None
    except requests.RequestException as error:
        failure = DeliveryFailed if _not_connected(error) else MayHaveBeenSent
        raise failure(f"{where}: {type(error).__name__}") from None
    with response:
        if 200 <= response.status_code < 300:
            if answered is not None:
                answered(f"HTTP {response.status_code} {response.reason or ''}".strip())
            with contextlib.suppress(Exception):  # a body cut short changes nothing: it was taken
                response.raw.read(64 * 1024)
            return
    if response.status_code == 429:
        raise RateLimited(f"{where}: HTTP 429 (rate limited)", retry_after_seconds(response.headers.get("Retry-After")))
    raise DeliveryFailed(f"{where}: HTTP {response.status_code}")


def _not_connected(error: requests.RequestException) -> bool:
    """True when the request never left: the connection was refused, the host unknown, the TLS
    handshake failed, or the URL was unusable. A connection dropped once the request was written
    ("Connection aborted") may have delivered it."""
    if isinstance(error, (requests.exceptions.SSLError, requests.exceptions.InvalidURL,
                          requests.exceptions.MissingSchema, requests.exceptions.InvalidSchema)):
        return True
    reason = getattr(error.args[0], "reason", None) if error.args else None  # urllib3's MaxRetryError
    return isinstance(reason, (NewConnectionError, urllib3.exceptions.SSLError))

"""Sending one outbox row to its channel: the public status page, a signed generic
webhook, a Slack incoming webhook, or email through Django's mail backend.

Each channel carries the text as plain text for its medium (docs/publishing.md, 'Plain text on every
channel'): escaped Slack text with formatting and previews off, a plain-text email, a JSON string in
the webhook, and the status page's autoescaped template.

A webhook's URL and signing secret come from the operator's allowlist (``reviewer.destinations``)
by the channel's destination name, at the moment of sending: the secret only ever goes to the URL
it was declared with. Redirects are not followed (a body for one host is not resent to another).

The signature, like Stripe's and GitHub's: ``X-Signature: t=<unix seconds>,v1=<hex>``, where hex is
HMAC-SHA256 with the secret over ``<t>.<raw body>``; ``Idempotency-Key`` is the delivery's key, the
same on every attempt (README: "Verifying a webhook").
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time

import requests
from django.conf import settings
from django.core.mail import send_mail

from reviewer.destinations import DestinationError, resolve
from reviewer.models import Delivery, DeliveryChannel

SIGNATURE_HEADER = "X-Signature"
USER_AGENT = "gated-review-outbox/1"


class DeliveryFailed(Exception):
    """This attempt failed; the message (no URL, no secret) is stored as the delivery's last error."""


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """The ``X-Signature`` header value for ``body`` sent at ``timestamp``."""
    signed = f"{timestamp}.".encode() + body
    return f"t={timestamp},v1={hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()}"


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


def send(delivery: Delivery) -> None:
    """Deliver once; raises :class:`DeliveryFailed` with a message fit for the page."""
    channel, update = delivery.channel, delivery.update
    kind = channel.kind
    if kind == DeliveryChannel.Kind.STATUS:
        return  # the status page shows the updates whose status delivery is delivered
    # What customers read as the incident's name: the public title the person publishing approved; an
    # update from before public titles has only the incident's own title and id.
    title = update.public_title or f"[{update.incident.incident_id}] {update.incident.title}"
    if kind == DeliveryChannel.Kind.EMAIL:
        subject = f"{title}: update {update.version}"
        try:  # a plain-text body only: no HTML part a mail client would render
            send_mail(subject, update.text, settings.DEFAULT_FROM_EMAIL, channel.recipient_list)
        except Exception as error:  # any backend: SMTP errors, refused connections, timeouts
            raise DeliveryFailed(f"email: {type(error).__name__}: {str(error)[:200]}") from None
        return
    try:
        destination = resolve(channel.destination)
    except DestinationError as error:
        raise DeliveryFailed(str(error)) from None
    if kind == DeliveryChannel.Kind.SLACK:
        body = json.dumps(slack_message(update.public_title or update.incident.title, update.version,
                                        update.text)).encode()
        headers = {}
    else:
        if not destination.secret:
            raise DeliveryFailed(f"{destination.name}: declared without a secret variable; generic webhooks are "
                                 "always signed (name=url|SECRET_VARIABLE)")
        body = json.dumps(update.payload(), ensure_ascii=False, sort_keys=True).encode()
        headers = {SIGNATURE_HEADER: signature(destination.secret, int(time.time()), body)}
    headers.update({"Content-Type": "application/json", "Idempotency-Key": str(delivery.key),
                    "User-Agent": USER_AGENT})
    where = f"{destination.name} ({destination.host})"
    try:
        response = requests.post(destination.url, data=body, headers=headers, allow_redirects=False,
                                 timeout=settings.DELIVERY_TIMEOUT_SECONDS)
    except requests.Timeout:
        raise DeliveryFailed(f"{where}: no answer within {settings.DELIVERY_TIMEOUT_SECONDS} s") from None
    except requests.RequestException as error:
        raise DeliveryFailed(f"{where}: {type(error).__name__}") from None
    if not 200 <= response.status_code < 300:
        raise DeliveryFailed(f"{where}: HTTP {response.status_code}")

"""Sending the ledger's head hash out of the database (docs/ledger.md, 'Anchoring').

Someone who can write to the database could rewrite the ledger and recompute every hash after
the entry they changed; the head hashes already sent elsewhere, to a receiver they do not
control, would then disagree with the recomputed chain. Each hour the head (its seq and hash) is
posted as JSON to ``LEDGER_ANCHOR_DESTINATION``, a destination the operator declared in
``OUTBOUND_DESTINATIONS``, signed like the webhook deliveries when it has a secret. Unset: nothing
is sent.
"""

from __future__ import annotations

import json
import time

from django.conf import settings
from django.utils import timezone

from reviewer.models import LedgerHead
from reviewer.outbox.channels import SIGNATURE_HEADER, USER_AGENT, post, signature
from reviewer.outbox.destinations import resolve


def head_payload() -> dict:
    head = LedgerHead.objects.filter(pk=1).first() or LedgerHead(seq=0, hash="")
    return {"ledger_head": {"seq": head.seq, "hash": head.hash}, "site": settings.SITE_URL,
            "sent_at": timezone.now().isoformat()}


def send_head() -> dict | None:
    """Post the head to the anchor destination; the payload sent, or None when none is set.
    Raises ``DeliveryFailed`` (no URL, no secret in its message) when the receiver did not take it."""
    if not settings.LEDGER_ANCHOR_DESTINATION:
        return None
    destination = resolve(settings.LEDGER_ANCHOR_DESTINATION)
    payload = head_payload()
    body = json.dumps(payload, sort_keys=True).encode()
    key = f"ledger-{payload['ledger_head']['seq']}-{payload['ledger_head']['hash'][:16]}"
    headers = {"Content-Type": "application/json", "Idempotency-Key": key, "User-Agent": USER_AGENT}
    if destination.secret:
        headers[SIGNATURE_HEADER] = signature(destination.secret, int(time.time()), key, body)
    post(destination, body, headers)
    return payload

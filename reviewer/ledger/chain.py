"""Appending to the ledger and verifying it (docs/ledger.md).

Each entry's ``content`` is the canonical JSON of ``{"seq", "kind", "subject", "created_at",
"data"}`` (sorted keys, no whitespace, UTF-8 kept, no floats: a number with a fraction is written
as a string, so no float formatting or database round trip can change the bytes), and its hash is
``SHA-256(prev_hash + "\\n" + content)``. The first entry chains to the checkpoint ("" before any
pruning). Appends take turns on the head row: each begins by updating it, which holds its row lock
(PostgreSQL) or the database's write lock (SQLite) until the transaction ends.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import pgtrigger
from django.conf import settings
from django.db import models, transaction
from django.utils import timezone

from reviewer.models import LedgerEntry, LedgerHead, LedgerVerification

Kind = LedgerEntry.Kind
PROTECT_TRIGGER = "reviewer.LedgerEntry:ledger_entry_append_only"


def plain(value: Any) -> Any:
    """``value`` as JSON that serializes to the same bytes everywhere: floats and decimals become
    strings, datetimes ISO 8601 in UTC, tuples lists; NaN and the like cannot slip in."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return value
    if isinstance(value, (float, Decimal)):
        return str(value)
    if isinstance(value, datetime):
        return iso(value)
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return str(value)


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="microseconds")


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def digest(prev_hash: str, content: str) -> str:
    return hashlib.sha256(f"{prev_hash}\n{content}".encode()).hexdigest()


def sha256(text: str) -> str:
    """The full SHA-256 of a text an entry speaks of (the text itself stays in its own table)."""
    return hashlib.sha256((text or "").encode()).hexdigest()


def _document(seq: int, kind: str, subject: str, created_at: datetime, data: Any) -> str:
    return canonical({"seq": seq, "kind": kind, "subject": subject, "created_at": iso(created_at),
                      "data": plain(data)})


def _take_head() -> LedgerHead:
    """The head row, locked for this transaction (created on first use, e.g. after a flush)."""
    # The UPDATE comes first: it takes the lock on both databases before anything is read.
    if not LedgerHead.objects.filter(pk=1).update(seq=models.F("seq")):
        LedgerHead.objects.get_or_create(pk=1)
        LedgerHead.objects.filter(pk=1).update(seq=models.F("seq"))
    return LedgerHead.objects.select_for_update().get(pk=1)


def append(kind: str, subject: str, data: dict, *, at: datetime | None = None) -> LedgerEntry:
    """Append one entry, inside the caller's transaction: it commits with what it records, or not at all."""
    return append_many([(kind, subject, data, at)])[0]


def append_many(events: list[tuple[str, str, dict, datetime | None]]) -> list[LedgerEntry]:
    """Append entries for ``(kind, subject, data, at)`` events in their order, in a fixed number of
    queries (the head taken once, one insert, the head moved once), inside the caller's transaction."""
    if not events:
        return []
    with transaction.atomic():
        head = _take_head()
        seq, prev_hash, entries = head.seq, head.hash, []
        for kind, subject, data, at in events:
            seq, created_at = seq + 1, at or timezone.now()
            content = _document(seq, kind, subject, created_at, data)
            entry = LedgerEntry(seq=seq, kind=kind, subject=subject[:100], created_at=created_at, content=content,
                                prev_hash=prev_hash, hash=digest(prev_hash, content))
            entries.append(entry)
            prev_hash = entry.hash
        LedgerEntry.objects.bulk_create(entries)
        LedgerHead.objects.filter(pk=1).update(seq=seq, hash=prev_hash)
    return entries


# ---------------------------------------------------------------- verification


@dataclass(frozen=True)
class Verdict:
    ok: bool
    count: int
    head_hash: str
    broken_seq: int | None = None
    message: str = ""


def verify() -> Verdict:
    """Recompute the chain from the checkpoint to the head. The first entry that does not hold is
    named: its content changed (or does not say its own columns), its hash is not its own, it does
    not chain to the entry before, or a seq is missing or out of place. Then the last entry must be
    the head row's: a head further on means entries at the end were removed, one behind means
    entries were added after it by hand. Last, the head an earlier verification found must still
    be in the chain (or pruned since): a ledger emptied (TRUNCATE, head row included) and perhaps
    written anew would otherwise verify clean."""
    head = LedgerHead.objects.filter(pk=1).first() or LedgerHead(seq=0, hash="")
    expected_seq, prev_hash, count = head.checkpoint_seq + 1, head.checkpoint_hash, 0
    earlier = LedgerVerification.objects.filter(ok=True, count__gt=0).order_by("-at", "-id").first()
    found_earlier = earlier is None or earlier.head_hash == head.checkpoint_hash
    rows = LedgerEntry.objects.order_by("seq", "id").values_list(
        "seq", "kind", "subject", "created_at", "content", "prev_hash", "hash")
    for seq, kind, subject, created_at, content, stored_prev, stored_hash in rows.iterator(chunk_size=2000):
        problem = _problem(expected_seq, prev_hash, seq, kind, subject, created_at, content, stored_prev,
                           stored_hash)
        if problem:
            return Verdict(False, count, prev_hash, expected_seq, f"entry {expected_seq}: {problem}")
        expected_seq, prev_hash, count = seq + 1, stored_hash, count + 1
        found_earlier = found_earlier or stored_hash == earlier.head_hash
    if not found_earlier and not (head.pruned_at and head.pruned_at >= earlier.at):
        return Verdict(False, count, prev_hash, 1,
                       f"entry 1: the ledger was emptied or rewritten (the verification of "
                       f"{earlier.at:%Y-%m-%d %H:%M:%S} UTC counted {earlier.count} entries up to the head "
                       f"{earlier.head_hash[:12]}…, which is no longer in it)")
    last_seq = expected_seq - 1
    if head.seq > last_seq:
        return Verdict(False, count, prev_hash, last_seq + 1,
                       f"entry {last_seq + 1}: missing (the head says the last entry is {head.seq})")
    if head.seq < last_seq:
        return Verdict(False, count, prev_hash, head.seq + 1,
                       f"entry {head.seq + 1}: added after the head (entry {head.seq}), not by an append")
    if head.hash != prev_hash:
        return Verdict(False, count, prev_hash, last_seq, f"entry {last_seq}: not the entry the head names")
    return Verdict(True, count, prev_hash)


def _problem(expected_seq, prev_hash, seq, kind, subject, created_at, content, stored_prev, stored_hash) -> str:
    if seq != expected_seq:
        return f"missing or out of place (entry {seq} stands where it should be)"
    if stored_prev != prev_hash:
        return "does not chain to the entry before it"
    if digest(stored_prev, content) != stored_hash:
        return "its content does not match its hash (changed)"
    try:
        document = json.loads(content)
    except ValueError:
        return "its content is not JSON"
    columns = {"seq": seq, "kind": kind, "subject": subject, "created_at": iso(created_at)}
    if {key: document.get(key) for key in columns} != columns:
        return "its columns do not match its content (changed)"
    return ""


def verify_and_record() -> LedgerVerification:
    """Verify and store the result: the dashboard shows the last one. Hourly from beat, once as beat
    starts, and on the dashboard's "Verify now"; a broken ledger is also logged as an error."""
    verdict = verify()
    if not verdict.ok:
        logging.getLogger("agents.ledger").error("the ledger is broken: %s", verdict.message)
    return LedgerVerification.objects.create(ok=verdict.ok, count=verdict.count, head_hash=verdict.head_hash,
                                             broken_seq=verdict.broken_seq, message=verdict.message)


def last_verification() -> LedgerVerification | None:
    return LedgerVerification.objects.order_by("-at", "-id").first()


# ---------------------------------------------------------------- retention


def prune(now: datetime | None = None) -> int:
    """Remove the entries older than LEDGER_RETENTION_DAYS (never fewer than 183) and move the
    checkpoint to the last one removed, so the chain still verifies from there. Refuses (returns 0)
    while the ledger does not verify: a broken chain is evidence and is kept whole."""
    cutoff = (now or timezone.now()) - timedelta(days=settings.LEDGER_RETENTION_DAYS)
    with transaction.atomic():
        head = _take_head()
        if not verify().ok:
            return 0
        last = LedgerEntry.objects.filter(created_at__lt=cutoff).order_by("-seq").first()
        if last is None:
            return 0
        # Only here, in this transaction, may rows of the ledger be deleted (PostgreSQL's trigger).
        with pgtrigger.ignore(PROTECT_TRIGGER):
            removed, _ = LedgerEntry.objects.filter(seq__lte=last.seq).delete()
        head.checkpoint_seq, head.checkpoint_hash, head.pruned_at = last.seq, last.hash, timezone.now()
        head.save(update_fields=["checkpoint_seq", "checkpoint_hash", "pruned_at"])
    return removed

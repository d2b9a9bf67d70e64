"""The ledger's rows (docs/ledger.md): the hash-chained entries, the head and each verification
(``reviewer.ledger.chain`` writes and reads them)."""

from __future__ import annotations

import pgtrigger
from django.db import models
from django.utils import timezone


def no_truncate(name: str) -> pgtrigger.Trigger:
    """PostgreSQL refuses TRUNCATE of the table (row triggers never see one). The setting it reads is
    on only in the test database (tests/conftest.py), whose flush between tests truncates every table."""
    return pgtrigger.Trigger(
        name=name, operation=pgtrigger.Truncate, level=pgtrigger.Statement, when=pgtrigger.Before,
        condition=pgtrigger.Condition("current_setting('reviewer.flushing_tests', true) IS DISTINCT FROM 'on'"),
        func="RAISE EXCEPTION 'the ledger''s table % cannot be truncated: it is append-only', TG_TABLE_NAME;")


class LedgerEntry(models.Model):
    """One event the product records for good, chained to the one before it: a decision, a
    publication, a policy change, a deadline breach or a dataset export. Written only by
    ``reviewer.ledger.chain.append``, inside the transaction of what it records; never edited. On
    PostgreSQL the database itself refuses UPDATE and DELETE of these rows (pruning aside).

    ``content`` is the canonical JSON of the whole entry (its seq, kind, subject, time and data),
    stored as text so that its bytes are the bytes hashed; ``hash`` is the SHA-256 of
    ``prev_hash`` and ``content``, so changing, removing, inserting or reordering a row breaks
    the chain from there on."""

    class Kind(models.TextChoices):
        DECISION = "decision"
        PUBLICATION = "publication"
        POLICY_CHANGE = "policy_change", "policy change"
        BREACH = "breach", "deadline breach"
        EXPORT = "export", "dataset export"
        APPROVAL = "approval", "approval (of a quorum)"
        APPROVALS_RESET = "approvals_reset", "approvals reset"
        SNOOZE = "snooze", "snooze (not now)"

    seq = models.PositiveBigIntegerField(unique=True)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    subject = models.CharField(max_length=100)  # what it is about: "decision:12", "publication:3"
    created_at = models.DateTimeField()
    content = models.TextField()
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64, unique=True)

    class Meta:
        ordering = ["seq"]
        verbose_name_plural = "ledger entries"
        indexes = [models.Index(fields=["created_at"], name="ledger_entry_created")]
        triggers = [
            # The rows of the ledger are never changed nor removed, whoever holds the database's
            # password; pruning alone lifts this, inside its own transaction (pgtrigger.ignore).
            pgtrigger.Protect(name="ledger_entry_append_only", operation=pgtrigger.Update | pgtrigger.Delete),
            # TRUNCATE passes row triggers; this one refuses it (the test database alone allows it,
            # for the flush between tests: tests/conftest.py). SQLite has no TRUNCATE.
            no_truncate("ledger_entry_no_truncate"),
        ]

    def __str__(self) -> str:
        return f"Ledger entry {self.seq} ({self.kind} {self.subject})"


class LedgerHead(models.Model):
    """The ledger's one head row: the last entry's seq and hash, and the checkpoint left by pruning
    (the seq and hash of the last entry pruned, which the first kept entry chains to). Every append
    updates it first, so appends take turns on its row lock and the chain never forks."""

    seq = models.PositiveBigIntegerField(default=0)
    hash = models.CharField(max_length=64, blank=True)
    checkpoint_seq = models.PositiveBigIntegerField(default=0)
    checkpoint_hash = models.CharField(max_length=64, blank=True)
    pruned_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        triggers = [no_truncate("ledger_head_no_truncate")]

    def __str__(self) -> str:
        return f"Ledger head at {self.seq}"


class LedgerVerification(models.Model):
    """The result of one verification of the ledger (the scheduled task's or a command's)."""

    at = models.DateTimeField(default=timezone.now)
    ok = models.BooleanField()
    count = models.PositiveBigIntegerField(default=0)
    head_hash = models.CharField(max_length=64, blank=True)
    broken_seq = models.PositiveBigIntegerField(null=True, blank=True)  # the first bad entry
    message = models.TextField(blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        get_latest_by = "at"

    def __str__(self) -> str:
        return f"Ledger {'verified' if self.ok else 'broken'} at {self.at:%Y-%m-%d %H:%M}"

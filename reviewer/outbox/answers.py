"""The answers journal: a receiver's answer to a send at most once, kept on the worker's disk the
moment it arrives, before anything that can fail (docs/publishing.md, 'Held means unknown').

An email is sent once the mail server answers 250 to its DATA; a Slack post once the receiver
answers 2xx. From then on the outcome is known, whatever follows: the connection dropping before
QUIT, the worker SIGKILLed before it writes ``delivered``, the database unreachable for longer than
the attempt's lease. So the answer is written here first, as one small file per attempt in
``DELIVERY_ANSWERS_DIR`` (``VAR_DIR/outbox-answers/``), flushed to disk (``fsync``) and renamed into
place; then the outcome is written to the database, and the file removed once the database has it.

The delivery sweep reads the journal (:func:`replay`) before it holds a ``sending`` row: an attempt
whose answer is here becomes ``delivered`` with that answer as its evidence, and is never held, never
sent again. A row the sweep of another machine held meanwhile turns delivered when this machine's
sweep reads its file. A file whose attempt is no longer in flight (a person decided, or the row was
recorded) is only removed.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from datetime import datetime
from pathlib import Path

from django.conf import settings
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from reviewer.models import Delivery, DeliveryChannel, StatusSnapshot

log = logging.getLogger("agents.deliveries")


def folder() -> Path:
    return Path(settings.DELIVERY_ANSWERS_DIR)


def _path(delivery_pk: int, attempt: int) -> Path:
    return folder() / f"{delivery_pk}-{attempt}.json"


def evidence(said: str, attempt: int, at: datetime | None = None, **more) -> dict:
    """What a row shows of its last attempt: what the receiver or mail server said (or that nothing
    came), when, and which attempt."""
    return {"said": said[:300], "at": (at or timezone.now()).isoformat(), "attempt": attempt, **more}


def keep(delivery_pk: int, attempt: int, said: str) -> dict | None:
    """Write the answer ``said`` to attempt ``attempt`` of a delivery to disk, flushed, before
    anything else happens; returns its evidence, or None when the disk refused it (the database
    write that follows is then the only record, as it is without a journal)."""
    entry = evidence(said, attempt, recorded="answer kept on the worker's disk before the database")
    entry["delivery"] = delivery_pk
    path = _path(delivery_pk, attempt)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(f".{os.getpid()}.partial")
        with open(partial, "w", encoding="utf-8") as file:
            json.dump(entry, file)
            file.flush()
            os.fsync(file.fileno())
        os.replace(partial, path)
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)  # the rename itself survives a power cut
        finally:
            os.close(directory)
    except OSError as error:
        log.error("delivery %s: the answer %r could not be kept on disk: %s", delivery_pk, said, error)
        return None
    return entry


def forget(delivery_pk: int, attempt: int) -> None:
    """The database has the attempt's outcome: its file is no longer needed."""
    with contextlib.suppress(FileNotFoundError):
        _path(delivery_pk, attempt).unlink()


def entries() -> list[dict]:
    """Every answer kept and not yet in the database, the oldest first."""
    found = []
    for path in sorted(folder().glob("*.json")) if folder().is_dir() else []:
        try:
            found.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):  # removed meanwhile, or cut by a crash before its rename
            continue
    return sorted(found, key=lambda entry: entry["at"])


def replay() -> int:
    """Write every kept answer to the database: the attempt it answered becomes ``delivered`` (from
    ``sending`` or ``held``), with the answer as its evidence; each file is removed once written.
    Raises the database's error when it is unreachable (the files wait for the next sweep). Returns
    how many rows turned delivered."""
    delivered = 0
    for entry in entries():
        delivered += mark_delivered(entry)
        forget(entry["delivery"], entry["attempt"])
    if delivered:
        log.warning("%s deliveries recorded as delivered from the answers kept on disk", delivered)
    return delivered


def mark_delivered(entry: dict) -> int:
    """A kept answer reaches the database: its attempt, still ``sending`` or already ``held``, is
    delivered, with the answer as its evidence. Returns 1, or 0 when that attempt is no longer in
    flight (its outcome was written, or a person decided)."""
    evidence = {key: value for key, value in entry.items() if key != "delivery"}
    delivered = Delivery.objects.filter(pk=entry["delivery"], attempts=entry["attempt"],
                                        status__in=(Delivery.Status.SENDING, Delivery.Status.HELD)).update(
        status=Delivery.Status.DELIVERED, delivered_at=parse_datetime(entry["at"]) or timezone.now(),
        last_error="", evidence=evidence)
    if delivered and Delivery.objects.filter(pk=entry["delivery"], channel__kind=DeliveryChannel.Kind.STATUS).exists():
        StatusSnapshot.objects.outdate()  # the update is public now: the page and its history show it
    return delivered

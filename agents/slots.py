"""The model endpoints' slots in the database, shared by every worker thread and process.

``DatabaseSlots`` implements the ``SlotStore`` protocol of ``agents.core.llm.slots``. A slot is
taken with a conditional ``UPDATE ... WHERE`` its lease is over, and the row count says who won,
so it works the same on SQLite and PostgreSQL, without holding a lock or a transaction while the
model answers.

The limits an admin set are read on every call, except inside :func:`limits_per_run` (the worker
runs each run in one): there every endpoint's limits are read once, with one query for all of them,
and a change an admin makes reaches the next run.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import timedelta

from django.db.models import Q
from django.utils import timezone

from agents.core.llm.slots import Limits
from agents.models import EndpointLimit, EndpointSlot

# Inside limits_per_run: every endpoint's limits, read at the first call of the run (None outside one).
_run_limits: ContextVar[dict[str, Limits] | None] = ContextVar("endpoint_limits_of_the_run", default=None)
_UNREAD: dict[str, Limits] = {}


@contextmanager
def limits_per_run() -> Iterator[None]:
    """The limits an admin set, read once for what runs in this block (one run), not on every call."""
    token = _run_limits.set(_UNREAD)
    try:
        yield
    finally:
        _run_limits.reset(token)


class DatabaseSlots:
    def limits(self, endpoint: str) -> Limits:
        known = _run_limits.get()
        if known is None:
            row = EndpointLimit.objects.filter(endpoint=endpoint).values("concurrency", "max_completion_tokens").first()
            return Limits(**row) if row else Limits()
        if known is _UNREAD:  # the run's first look: every endpoint's limits in one query (a handful of rows)
            known = {row.pop("endpoint"): Limits(**row)
                     for row in EndpointLimit.objects.values("endpoint", "concurrency", "max_completion_tokens")}
            _run_limits.set(known)
        return known.get(endpoint, Limits())

    def take(self, endpoint: str, capacity: int, lease_seconds: float) -> str | None:
        if EndpointSlot.objects.filter(endpoint=endpoint, number__lt=capacity).count() < capacity:
            EndpointSlot.objects.bulk_create(
                [EndpointSlot(endpoint=endpoint, number=number) for number in range(capacity)], ignore_conflicts=True)
        now = timezone.now()
        free = Q(leased_until__isnull=True) | Q(leased_until__lte=now)  # never leased, released, or lapsed
        token, until = uuid.uuid4().hex, now + timedelta(seconds=lease_seconds)
        slots = EndpointSlot.objects.filter(free, endpoint=endpoint, number__lt=capacity)
        for pk in slots.values_list("pk", flat=True):
            if EndpointSlot.objects.filter(free, pk=pk).update(token=token, leased_until=until):
                return token
            # Another call took this one between the read and the update: try the next.
        return None

    def release(self, endpoint: str, token: str) -> None:
        EndpointSlot.objects.filter(endpoint=endpoint, token=token).update(token="", leased_until=None)

    def held(self, endpoint: str) -> int:
        """How many of the endpoint's slots are leased now."""
        return EndpointSlot.objects.filter(endpoint=endpoint, leased_until__gt=timezone.now()).count()

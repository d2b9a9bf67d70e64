"""The model endpoints' slots in the database, shared by every worker thread and process.

``DatabaseSlots`` implements the ``SlotStore`` protocol of ``agents.core.llm.slots``. A slot is
taken with a conditional ``UPDATE ... WHERE`` its lease is over, and the row count says who won,
so it works the same on SQLite and PostgreSQL, without holding a lock or a transaction while the
model answers.
"""

from __future__ import annotations

import uuid
from datetime import timedelta

from django.db.models import Q
from django.utils import timezone

from agents.core.llm.slots import Limits
from agents.models import EndpointLimit, EndpointSlot


class DatabaseSlots:
    def limits(self, endpoint: str) -> Limits:
        row = EndpointLimit.objects.filter(endpoint=endpoint).values("concurrency", "max_completion_tokens").first()
        return Limits(**row) if row else Limits()

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

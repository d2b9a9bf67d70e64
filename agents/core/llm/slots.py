"""How many calls an endpoint takes at once: slots shared by every worker thread and process.

An endpoint that declares ``concurrency=N`` (``agents/core/llm/endpoints.py``, or an admin's
endpoint limits) gets at most N requests from this product at a time. A call takes a slot before
its request and waits for one, polling, at most for what is left of its run's time budget; then
the run stops as ``max_seconds`` without sending anything.

A slot is a lease: it ends by itself ``lease`` seconds after it was taken (the request's timeout
plus :data:`LEASE_MARGIN_SECONDS`), so a worker that died holding one does not hold it for ever.
A call releases its slot as soon as the server has answered (an answer, an error status, a refused
connection). A call whose client *timed out* does not: the server may still be generating for it,
and the next call would queue behind that work on the server instead of here. Its slot is left to
its lease, which the endpoint's completion ceiling makes long enough for the abandoned answer to
end (docs/running.md, "Local servers").

The store is behind :class:`SlotStore`: the runner keeps the leases in the database
(``agents/slots.py``), where every process of every worker sees them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

#: How long a slot outlives its request's timeout: the time a server that is still generating an
#: abandoned answer (at most the completion ceiling) has to finish it before the next call is sent.
LEASE_MARGIN_SECONDS = 30.0
#: How often a call that waits for a slot asks again.
POLL_SECONDS = 0.25


@dataclass(frozen=True)
class Limits:
    """What an admin set for an endpoint; None where they set nothing."""

    concurrency: int | None = None
    max_completion_tokens: int | None = None


class SlotStore(Protocol):
    def limits(self, endpoint: str) -> Limits:
        """The limits an admin set for the endpoint (read on every call: a change reaches the next one)."""
        ...

    def take(self, endpoint: str, capacity: int, lease_seconds: float) -> str | None:
        """A free slot of the endpoint's ``capacity``, leased for ``lease_seconds``: its token, or None
        when every slot is held."""
        ...

    def release(self, endpoint: str, token: str) -> None:
        """Give the slot back (nothing happens when its lease already ended and another call took it)."""
        ...

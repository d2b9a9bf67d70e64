"""How many calls an endpoint takes at once: slots shared by every worker thread and process.

An endpoint that declares ``concurrency=N`` (``agents/core/llm/endpoints.py``, or an admin's
endpoint limits) gets at most N requests from this product at a time. A call takes a slot before
its request and waits for one, polling, at most for what is left of its run's time budget; then
the run stops as ``max_seconds`` without sending anything.

A slot is a lease: it ends by itself :func:`lease_seconds` after it was taken (twice the request's
timeout), so a worker that died holding one does not hold it for ever. A call releases its slot as
soon as the server has answered (an answer, an error status, a refused connection). A call whose
client *timed out* does not: the server may still be generating for it, and the next call would
queue behind that work on the server instead of here. Its slot is left to its lease: the server gets
as long again as the timeout to finish the abandoned answer, which the endpoint's completion
ceiling bounds (docs/running.md, "Local servers": the timeout is set so that one answer at the
ceiling fits in it).

The store is behind :class:`SlotStore`: the runner keeps the leases in the database
(``agents/slots.py``), where every process of every worker sees them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

#: How often a call that waits for a slot asks again.
POLL_SECONDS = 0.25


def lease_seconds(timeout: float) -> float:
    """How long a call holds its slot unless it gives it back: its request's timeout, then as long
    again for a server that is still generating the answer its client gave up on."""
    return 2 * timeout


@dataclass(frozen=True)
class Limits:
    """What an admin set for an endpoint; None where they set nothing."""

    concurrency: int | None = None
    max_completion_tokens: int | None = None


class SlotStore(Protocol):
    def limits(self, endpoint: str) -> Limits:
        """The limits an admin set for the endpoint (asked on every call; a store may answer from what
        it read at the start of the run, so that a change reaches the next run)."""
        ...

    def take(self, endpoint: str, capacity: int, lease_seconds: float) -> str | None:
        """A free slot of the endpoint's ``capacity``, leased for ``lease_seconds``: its token, or None
        when every slot is held."""
        ...

    def release(self, endpoint: str, token: str) -> None:
        """Give the slot back (nothing happens when its lease already ended and another call took it)."""
        ...

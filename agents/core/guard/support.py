"""What a text is checked against: the evidence every check reads, gathered once per checked text.
Plain Python: no Django here."""

from __future__ import annotations

import functools
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from agents.core.policy import GuardRules


@dataclass(frozen=True)
class Support:
    # What the text may draw facts from: the context JSON (and, for a revision, the original draft),
    # instructions to the model removed (agents.core.guard.patch.allowed_text).
    allowed_text: str
    rules: GuardRules
    # What may license a restricted claim (agents.core.guard.patch.claim_evidence); by default the
    # allowed text.
    claim_evidence: str
    # The values of the context's ratio facts (agents.core.units.ratio_values): given, only they
    # support a percentage read as a ratio; None (a context without units) lets a bare number do.
    ratios: frozenset[Decimal] | None = None
    # The run context itself, for the checks that read the incident's structure (its state, its
    # declared contacts, its internal facts); None skips them.
    context: Mapping | None = None
    # The strict claim form (avoid_absolute_guarantees): no support licenses a restricted claim.
    strict_claims: bool = False
    # The incident's lifecycle state (agents.core.guard.incident_claims.incident_state), or None.
    state: str | None = None
    # Texts besides the context that lend words to grounding (agents.core.guard.grounding): the goal
    # ops wrote, the text a revision revises.
    licensed_texts: tuple[str, ...] = ()
    # The context's content as a key (incident_key): what is read from the context alone is read once
    # per incident (per_incident). None: each reading computes it.
    context_key: str | None = None


def incident_key(context: Any) -> str | None:
    """The context's content as canonical JSON, the key of what is read from it alone; None for a
    value that is no JSON (then nothing is kept for it)."""
    try:
        return json.dumps(context, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return None


_INCIDENTS = 256  # contexts kept per reading: a replay reads hundreds of incidents in turn


def per_incident(read: Callable[..., Any]) -> Callable[..., Any]:
    """Keep what ``read(context, *args)`` finds in a context, per incident: one run checks several texts
    against the same context, and a policy-lab replay many runs of each incident. The key is the
    context's content (incident_key), so a changed context is read again; the value must never be
    changed by its users (a string, a tuple, a frozenset, a frozen dataclass). A caller that has the
    key passes it (``key=``), to serialise the context once per checked text."""
    kept: OrderedDict[tuple, Any] = OrderedDict()
    lock = threading.Lock()

    @functools.wraps(read)
    def cached(context, *args, key: str | None = None):
        key = incident_key(context) if key is None else key
        if key is None:
            return read(context, *args)
        with lock:
            if (key, args) in kept:
                kept.move_to_end((key, args))
                return kept[key, args]
        value = read(context, *args)
        with lock:
            kept[key, args] = value
            if len(kept) > _INCIDENTS:
                kept.popitem(last=False)
        return value

    return cached

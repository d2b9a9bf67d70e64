"""What a text is checked against: the evidence every check reads, gathered once per checked text.
Plain Python: no Django here."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

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

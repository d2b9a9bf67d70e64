"""Policies as plain data: the budgets, allowlists and guard rules a run executes under.

The defaults here are the contract's defaults. The Django side stores policies as rows that admins
edit and converts them into these objects; every run keeps ``policy.to_dict()`` as its snapshot.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

DECISIONS = ("approve", "revise", "escalate")

# type -> high risk?
DEFAULT_ISSUE_TYPES: dict[str, bool] = {
    "overconfidence": False,
    "missing_uncertainty": False,
    "contradiction": False,
    "scope_leak": False,
    "policy_violation": True,
    "legal_risk": True,
}

@dataclass(frozen=True, kw_only=True)
class ClaimFamily:
    """One restricted claim and the other words it is made in (docs/contract.md, 'Fact and claim checks').

    ``pattern`` is the canonical claim, ``paraphrases`` its other wordings and inflections: each a
    case-insensitive RE2 pattern, matched in linear time (agents.core.patterns). Every match gets the
    same hedge handling; ``hedges`` are extra words that hedge this family only ("about 45 minutes"
    is an estimate, not a promise). A ``strict_only`` family applies only when the context asks to
    avoid absolute guarantees: firm time promises.
    """

    name: str = ""  # shown in the violation; "" for a bare pattern (snapshots from before families)
    pattern: str
    paraphrases: tuple[str, ...] = ()
    hedges: tuple[str, ...] = ()
    strict_only: bool = False

    @property
    def patterns(self) -> tuple[str, ...]:
        return (self.pattern, *self.paraphrases)

    @classmethod
    def of(cls, item: Any) -> ClaimFamily:
        """A family from a dataclass, a snapshot's dict, or a bare pattern."""
        if isinstance(item, ClaimFamily):
            return item
        if isinstance(item, dict):
            known = {f.name for f in dataclasses.fields(cls)}
            data = {k: v for k, v in item.items() if k in known}
            for key in ("paraphrases", "hedges"):
                data[key] = tuple(data.get(key) or ())
            return cls(**data)
        return cls(pattern=item)


# A number of minutes or hours, written as people write it: "45", "forty-five", "an", "a couple of".
_QUANTITY = (
    r"(?:\d+(?:[.,]\d+)?|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen"
    r"|(?:twenty|thirty|forty|fifty|sixty|ninety)(?:[\s-](?:one|two|three|four|five|six|seven|eight|nine))?"
    r"|a\s+couple\s+of|a\s+few|half\s+an?|a\s+half|a\s+dozen|a\s+quarter\s+of\s+an?)"
)
_TIME_UNIT = r"(?:minutes?|mins?|hours?|hrs?|days?)"
_ESTIMATE = r"(?:(?:about|around|approximately|roughly|an\s+estimated|some)\s+)?"

# The defaults: the common ways an incident update over-claims. The first pattern of each family is
# the contract's; the rest are its paraphrases. Installed as rows by migration 0006.
DEFAULT_CLAIM_FAMILIES: tuple[ClaimFamily, ...] = (
    ClaimFamily(name="resolution", pattern=r"\bresolved\b", paraphrases=(
        r"\b(?:fixed|solved|remedied|rectified)\b",
        r"\b(?:outage|issue|problem|incident|disruption)\s+is\s+(?:now\s+)?(?:over|behind\s+us|gone)\b",
        r"\bno\s+longer\s+(?:an?\s+)?(?:issue|problem)\b",
        r"\bmarked\s+(?:as\s+)?resolved\b",
    )),
    ClaimFamily(name="recovery", pattern=r"\bfully\s+recovered\b", paraphrases=(
        r"\b(?:fully|completely|entirely|totally)\s+(?:restored|recovered|operational|functional|back)\b",
        r"\b(?:has|have)\s+(?:now\s+)?recovered\b",
        r"\b(?:service|services|payments|checkouts?|everything|all\s+\w+)\s+(?:is|are|has\s+been|have\s+been)"
        r"\s+(?:now\s+)?restored\b",
        r"\bback\s+to\s+normal\b",
        r"\b(?:operating|running|working)\s+normally\b",
        r"\bnormal\s+(?:service|operations?)\s+(?:has|have)\s+resumed\b",
    )),
    ClaimFamily(name="closure", pattern=r"\bincident\s+closed\b", paraphrases=(
        r"\b(?:incident|issue|case|ticket)\s+(?:is|has\s+been|was)\s+(?:now\s+)?closed\b",
        r"\bclos(?:ed|ing)\s+(?:the|this)\s+(?:incident|issue)\b",
    )),
    ClaimFamily(name="stability", pattern=r"\ball\s+payments\s+(?:are|is)\s+stable\b", paraphrases=(
        r"\b(?:payments|checkouts?|services?|systems?|platform|everything|things)\s+(?:is|are)\s+(?:now\s+)?"
        r"(?:fully\s+|completely\s+)?stable\b",
        r"\bstable\s+again\b",
        r"\bstabili[sz]ed\b",
    )),
    ClaimFamily(name="guarantees", pattern=r"\bguarantee(?:s|d|ing)?\b", paraphrases=(
        r"\bwe\s+promise\b",
        r"\bwe\s+(?:can\s+)?assure\s+you\b",
        r"\bwe\s+(?:are\s+)?commit(?:ted)?\s+to\s+(?:having|restoring|fixing|resolving)\b",
    )),
    ClaimFamily(name="absolute assurances", pattern=r"\bnever\s+happen\s+again\b", paraphrases=(
        r"\b(?:cannot|can[’']t|won[’']t|will\s+not)\s+happen\s+again\b",
        r"\b(?:100|one\s+hundred)\s*(?:%|percent)\s+(?:sure|certain|safe|reliable)\b",
        r"\b(?:completely|totally|perfectly)\s+safe\b",
        r"\bnothing\s+to\s+worry\s+about\b",
        r"\b(?:absolutely|definitely|certainly)\s+(?:will|be|is|are)\b",
        r"\bwith\s+(?:absolute\s+)?certainty\b",
    )),
    ClaimFamily(
        name="time promises",
        pattern=rf"\b(?:within|in\s+under|in\s+less\s+than|in\s+no\s+more\s+than)\s+(?:the\s+next\s+)?"
        rf"{_ESTIMATE}{_QUANTITY}[\s-]*{_TIME_UNIT}\b",
        paraphrases=(
            rf"\b(?:will|shall|going\s+to)\s+(?:\w+\s+){{0,4}}?in\s+{_ESTIMATE}{_QUANTITY}[\s-]*{_TIME_UNIT}\b",
            r"\bby\s+\d{1,2}(?::\d{2}(?:\s*(?:am|pm|utc|gmt|cet)\b)?|\s*(?:am|pm|a\.m\.|p\.m\.|o[’']clock))",
            r"\bby\s+(?:noon|midnight|tonight|tomorrow|(?:the\s+)?end\s+of\s+(?:the\s+)?(?:day|hour))\b",
            r"\bat\s+the\s+(?:very\s+)?latest\b",
            r"\bno\s+later\s+than\b",
        ),
        hedges=("estimate", "estimated", "estimates", "eta", "expect", "expected", "about", "around",
                "approximately", "roughly", "currently", "likely", "probably", "should", "aim", "target",
                "targeting", "hope", "believe", "think", "anticipate", "anticipated", "some"),
        strict_only=True,
    ),
)

# The canonical patterns, the families' keys in GuardRules.restricted_claims.
DEFAULT_RESTRICTED_CLAIMS: tuple[str, ...] = tuple(f.pattern for f in DEFAULT_CLAIM_FAMILIES)

DEFAULT_REGIONS: tuple[str, ...] = ("us", "eu", "uk", "ua", "apac", "global", "emea", "latam")

# Region words: a region named in words or as an adjective is a mention of its token.
DEFAULT_REGION_WORDS: dict[str, tuple[str, ...]] = {
    "us": ("United States", "U.S.", "USA", "American"),
    "eu": ("Europe", "European", "EU-wide"),
    "uk": ("United Kingdom", "Britain", "British"),
    "ua": ("Ukraine", "Ukrainian"),
    "apac": ("Asia-Pacific", "Asia Pacific", "Asia", "Asian"),
    "global": ("worldwide", "globally", "all regions", "every region"),
    "emea": ("Middle East", "Africa", "African"),
    "latam": ("Latin America", "Latin American", "South America", "South American"),
}


@dataclass(frozen=True, kw_only=True)
class GuardRules:
    """The admin-editable lists the patch guard and the final-answer checks read.

    ``restricted_claims`` names the claims in force by their canonical pattern; ``claim_families``
    says what else each one matches (a pattern without a family matches only itself, as in snapshots
    from before families). ``region_words`` maps a region token to its names in words.
    """

    restricted_claims: tuple[str, ...] = DEFAULT_RESTRICTED_CLAIMS
    regions: tuple[str, ...] = DEFAULT_REGIONS
    claim_families: tuple[ClaimFamily, ...] = DEFAULT_CLAIM_FAMILIES
    region_words: tuple[tuple[str, tuple[str, ...]], ...] = tuple(DEFAULT_REGION_WORDS.items())

    def __post_init__(self):
        # A snapshot read back from JSON holds lists and dicts: make them the frozen forms.
        object.__setattr__(self, "claim_families", tuple(ClaimFamily.of(f) for f in self.claim_families))
        words = self.region_words.items() if isinstance(self.region_words, dict) else self.region_words
        object.__setattr__(self, "region_words", tuple((str(t), tuple(w)) for t, w in words))

    def families(self) -> list[ClaimFamily]:
        """The families in force, in the order of ``restricted_claims``."""
        by_pattern = {f.pattern: f for f in self.claim_families}
        return [by_pattern.get(p) if isinstance(p, str) and p in by_pattern else ClaimFamily(pattern=p)
                for p in self.restricted_claims]

    @classmethod
    def from_snapshot(cls, data: dict[str, Any]) -> GuardRules:
        """Rules from a run's snapshot. One stored before families and region words had none: it
        keeps matching exactly what it matched then."""
        values = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()
                  if k in {f.name for f in dataclasses.fields(cls)}}
        values.setdefault("claim_families", ())
        values.setdefault("region_words", ())
        return cls(**values)


@dataclass(frozen=True, kw_only=True)
class ModelSettings:
    """Which OpenAI-compatible endpoint a policy's stages talk to, by the name the operator
    declared it with (``agents/llm/endpoints.py``). No URL and no API key is ever here."""

    model: str = "gpt-4.1-mini"
    endpoint: str = "default"
    # Only in run snapshots stored before endpoints were named: the URL such a run asks for is
    # used only when an endpoint is declared with exactly that URL (else llm_misconfigured).
    base_url: str | None = None
    structured_output: str = "tools"  # "tools" (function calling) or "json" (json_object mode)
    timeout_seconds: float = 60.0
    max_retries: int = 2
    temperature: float = 0.0
    # The most tokens one answer may have. A text stage's limit is derived from its character
    # budget (see agents/core/prompts.py), never above this.
    max_completion_tokens: int = 1024
    # USD per 1,000 tokens; 0 means calls cost nothing against the run's cost budget.
    input_cost_per_1k: float = 0.0
    output_cost_per_1k: float = 0.0


@dataclass(frozen=True, kw_only=True)
class Policy:
    """What every pipeline shares: wall time, token and cost budgets, prompts, the model."""

    max_seconds: float
    max_tokens: int | None = None  # None: no token budget
    max_cost: float | None = None  # USD; None: no cost budget
    prompts: dict[str, str] = field(default_factory=dict)  # stage -> system prompt override
    model: ModelSettings = field(default_factory=ModelSettings)

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        for key, value in data.items():
            if isinstance(value, (set, frozenset)):
                data[key] = sorted(value)
        data["pipeline"] = self.pipeline
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]):
        """Build a policy from a snapshot or a database row's fields; unknown keys are ignored."""
        names = {f.name: f for f in dataclasses.fields(cls)}
        kwargs: dict[str, Any] = {}
        for key, value in data.items():
            if key not in names:
                continue
            if key == "model" and isinstance(value, dict):
                value = ModelSettings(**value)
            elif key == "guard" and isinstance(value, dict):
                value = GuardRules.from_snapshot(value)
            elif key == "routes" and isinstance(value, dict):
                value = {name: RouteTarget(**spec) for name, spec in value.items()}
            elif key in ("decisions_policy", "decisions_execution"):
                value = frozenset(value)
            kwargs[key] = value
        return cls(**kwargs)


@dataclass(frozen=True, kw_only=True)
class TextPolicy(Policy):
    """Shared by the two text pipelines (reflection, self-critique)."""

    max_draft_chars: int = 900
    max_answer_chars: int = 900
    min_patch_similarity: float = 0.45
    decisions_policy: frozenset[str] = frozenset(DECISIONS)
    decisions_execution: frozenset[str] = frozenset(DECISIONS)
    auto_revision: bool = True  # the emergency brake: off removes "revise" from execution
    # Publishes a gate-passed run with no person involved: its final answer then carries no link,
    # contact or mention at all (agents.core.guard.check_final_answer).
    auto_publish: bool = False
    issue_types: dict[str, bool] = field(default_factory=lambda: dict(DEFAULT_ISSUE_TYPES))
    guard: GuardRules = field(default_factory=GuardRules)

    @property
    def execution_allowlist(self) -> frozenset[str]:
        if self.auto_revision:
            return self.decisions_execution
        return self.decisions_execution - {"revise"}

    @property
    def high_risk_types(self) -> frozenset[str]:
        return frozenset(name for name, high in self.issue_types.items() if high)


@dataclass(frozen=True, kw_only=True)
class ReflectionPolicy(TextPolicy):
    pipeline = "reflection"

    max_seconds: float = 30
    max_review_issues: int = 4
    max_fix_items: int = 4


@dataclass(frozen=True, kw_only=True)
class SelfCritiquePolicy(TextPolicy):
    pipeline = "self_critique"

    max_seconds: float = 120
    max_answer_chars: int = 980
    min_patch_similarity: float = 0.4
    max_risks: int = 5
    max_required_changes: int = 5
    max_length_increase_pct: float = 20
    max_revise_attempts: int = 3


@dataclass(frozen=True, kw_only=True)
class RouteTarget:
    description: str
    worker: str  # name in the worker registry
    allowed_policy: bool = True
    allowed_execution: bool = True


DEFAULT_ROUTES: dict[str, RouteTarget] = {
    "billing_specialist": RouteTarget(
        description="Refunds, charges, invoices and other billing questions for a named customer.",
        worker="billing_specialist",
    ),
    "technical_specialist": RouteTarget(
        description="Errors, bugs, incidents, API problems and latency.",
        worker="technical_specialist",
    ),
    "sales_specialist": RouteTarget(
        description="Prices, pricing, quotes, plans and discounts.",
        worker="sales_specialist",
    ),
}


@dataclass(frozen=True, kw_only=True)
class RoutingPolicy(Policy):
    pipeline = "routing"

    max_seconds: float = 60
    max_route_attempts: int = 3
    max_delegations: int = 3
    routes: dict[str, RouteTarget] = field(default_factory=lambda: dict(DEFAULT_ROUTES))


# The pipelines, defined once: name -> policy class, in the order pages list them.
POLICY_CLASSES: dict[str, type[Policy]] = {
    "reflection": ReflectionPolicy,
    "self_critique": SelfCritiquePolicy,
    "routing": RoutingPolicy,
}
PIPELINE_NAMES = tuple(POLICY_CLASSES)
TEXT_PIPELINES = tuple(name for name, cls in POLICY_CLASSES.items() if issubclass(cls, TextPolicy))
# (name, label) pairs for forms and filters: "self_critique" -> "Self-critique".
PIPELINE_CHOICES = [(name, name.replace("_", "-").capitalize()) for name in POLICY_CLASSES]


def default_policy(pipeline: str) -> Policy:
    return POLICY_CLASSES[pipeline]()

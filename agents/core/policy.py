"""Policies as plain data: the budgets, allowlists and guard rules a run executes under (SPEC §3, §6).

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

# Case-insensitive word patterns (Python regular expressions).
DEFAULT_RESTRICTED_CLAIMS: tuple[str, ...] = (
    r"\bresolved\b",
    r"\bfully\s+recovered\b",
    r"\bincident\s+closed\b",
    r"\ball\s+payments\s+(?:are|is)\s+stable\b",
)

DEFAULT_REGIONS: tuple[str, ...] = ("us", "eu", "uk", "ua", "apac", "global", "emea", "latam")


@dataclass(frozen=True, kw_only=True)
class GuardRules:
    """The admin-editable lists the patch guard and the final-answer checks read."""

    restricted_claims: tuple[str, ...] = DEFAULT_RESTRICTED_CLAIMS
    regions: tuple[str, ...] = DEFAULT_REGIONS


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
                value = GuardRules(**{k: tuple(v) for k, v in value.items()})
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

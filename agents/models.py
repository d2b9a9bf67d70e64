"""Policies as rows that admins edit (SPEC §6), their change record, and the routing workers' data.

The pipeline core never sees these models: ``agents.policy_rows.load_policy`` turns the active row and
the shared lists into the plain ``agents.core.policy`` dataclasses, and ``agents.store.DatabaseData``
serves the specialists' facts. Validation lives in ``clean()`` so every form (admin or not) that
calls ``full_clean()`` refuses the same things with the same messages.
"""

from __future__ import annotations

import dataclasses
import json
import re
from datetime import timedelta
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist, ValidationError
from django.core.serializers.json import DjangoJSONEncoder
from django.core.validators import RegexValidator
from django.db import connection, models, transaction
from django.db.models import prefetch_related_objects
from django.db.models.functions import Coalesce
from django.forms.models import model_to_dict
from django.utils import timezone

from agents.core.inputs import control_character
from agents.core.llm.endpoints import NAME_HELP, NAME_PATTERN
from agents.core.llm.schemas import STAGE_TOOLS
from agents.core.patterns import pattern_problem
from agents.core.policy import (
    DECISIONS,
    PIPELINE_CHOICES,
    POLICY_CLASSES,
    ClaimFamily,
    ModelSettings,
    TextPolicy,
)
from agents.core.stops import escalating_reasons, opens_escalation
from agents.core.units import FACT_VALUE_MAX_CHARS, UNITS, parse_value, show

# The budgets of §3; a row keeps the ones its pipeline's dataclass has and leaves the others empty.
BUDGET_FIELDS = (
    "max_seconds",
    "max_draft_chars",
    "max_answer_chars",
    "min_patch_similarity",
    "max_review_issues",
    "max_fix_items",
    "max_risks",
    "max_required_changes",
    "max_length_increase_pct",
    "max_revise_attempts",
    "max_route_attempts",
    "max_delegations",
)

# Every range admin enforces, in one place: (lowest, highest), both allowed.
BUDGET_RANGES: dict[str, tuple[int | float, int | float]] = {
    "max_seconds": (1, 3600),
    "max_draft_chars": (50, 20000),
    "max_answer_chars": (50, 20000),
    "min_patch_similarity": (0, 1),
    "max_length_increase_pct": (0, 500),
    "max_review_issues": (0, 50),
    "max_fix_items": (0, 50),
    "max_risks": (0, 50),
    "max_required_changes": (0, 50),
    "max_revise_attempts": (1, 10),
    "max_route_attempts": (1, 10),
    "max_delegations": (1, 10),
    "max_tokens": (1, 10_000_000),
    "max_cost": (0, 10_000),
    "timeout_seconds": (1, 600),
    "max_retries": (0, 10),
    "max_completion_tokens": (16, 100_000),
    "input_cost_per_1k": (0, 1000),
    "output_cost_per_1k": (0, 1000),
}

# The model stages each pipeline asks; a prompt for another stage would never be read.
PIPELINE_STAGES: dict[str, tuple[str, ...]] = {
    "reflection": ("draft", "review", "revise"),
    "self_critique": ("draft", "shorten", "critique", "revise", "revise_strict"),
    "routing": ("route", "finalize"),
}
STAGE_CHOICES = [(stage, stage) for stage in (*STAGE_TOOLS, "revise_strict")]


def policy_fields(pipeline: str) -> frozenset[str]:
    """The fields of the pipeline's policy dataclass: what a row of that pipeline uses."""
    return frozenset(f.name for f in dataclasses.fields(POLICY_CLASSES[pipeline]))


def is_text_pipeline(pipeline: str) -> bool:
    return issubclass(POLICY_CLASSES[pipeline], TextPolicy)


def stage_tool(stage: str) -> str | None:
    """The tool a stage's prompt must name (§5.1); the strict revise asks for the revise tool."""
    return STAGE_TOOLS["revise" if stage == "revise_strict" else stage]


def all_decisions() -> list[str]:
    return list(DECISIONS)


def _range_error(name: str, value) -> str | None:
    low, high = BUDGET_RANGES[name]
    if not (low <= value <= high):  # NaN fails too
        return f"Must be between {low} and {high} (got {value})."
    return None


def _words(items) -> str:
    return ", ".join(items)


class PipelinePolicy(models.Model):
    pipeline = models.CharField(max_length=20, choices=PIPELINE_CHOICES)
    name = models.CharField(max_length=100)
    active = models.BooleanField(
        default=False, help_text="On: new runs of this pipeline use this policy (one active policy per "
        "pipeline; a run keeps the snapshot it started with). Off: the row is kept but not used."
    )
    auto_revision = models.BooleanField(
        "auto-revision",
        default=True,
        help_text="The emergency brake. On: when the reviewer asks for a revision, the model rewrites the "
        "text and the patch guard checks it. Off: “revise” leaves execution, so no model rewrites any text "
        "of this pipeline: a run whose review asks for a revision stops there and goes to a person.",
    )
    auto_publish = models.BooleanField(
        "auto-publish",
        default=False,
        help_text="Off by default. Switched on, a run of this pipeline that passed every gate (ended ok, "
        "no escalation) is published to the delivery channels at once, without a person's click. "
        "Escalated, blocked or failed runs are never published automatically.",
    )
    decisions_policy = models.JSONField(
        "decisions allowed by policy",
        default=all_decisions,
        blank=True,
        help_text="Allowed by policy: the decisions the reviewer model may return at all. A decision not "
        "ticked here is an invalid answer and stops the run (…_decision_not_allowed_policy). None ticked "
        "allows nothing.",
    )
    decisions_execution = models.JSONField(
        "decisions allowed in execution",
        default=all_decisions,
        blank=True,
        help_text="Allowed in execution: the decisions acted on now; must be among those allowed by policy. "
        "A decision allowed by policy but not here stops the run for a person instead of being acted on "
        "(…_decision_denied_execution), e.g. revise with auto-revision off.",
    )

    # Budgets (§3). Empty where the pipeline has no such budget; left blank on a pipeline that
    # has one, clean() fills in the contract's default.
    max_seconds = models.PositiveIntegerField(null=True, blank=True, help_text="Wall-time budget of a run.")
    max_draft_chars = models.PositiveIntegerField(null=True, blank=True)
    max_answer_chars = models.PositiveIntegerField(null=True, blank=True)
    min_patch_similarity = models.FloatField(
        null=True, blank=True, help_text="A revision less similar to the draft than this is refused."
    )
    max_review_issues = models.PositiveSmallIntegerField(null=True, blank=True)
    max_fix_items = models.PositiveSmallIntegerField(null=True, blank=True)
    max_risks = models.PositiveSmallIntegerField(null=True, blank=True)
    max_required_changes = models.PositiveSmallIntegerField(null=True, blank=True)
    max_length_increase_pct = models.FloatField(
        "max length increase %", null=True, blank=True
    )
    max_revise_attempts = models.PositiveSmallIntegerField(null=True, blank=True)
    max_route_attempts = models.PositiveSmallIntegerField(null=True, blank=True)
    max_delegations = models.PositiveSmallIntegerField(null=True, blank=True)

    max_tokens = models.PositiveIntegerField(
        null=True, blank=True, help_text="Tokens a run may use in all. Empty: no token budget."
    )
    max_cost = models.DecimalField(
        "max cost (USD)", max_digits=10, decimal_places=4, null=True, blank=True,
        help_text="Cost a run may reach. Empty: no cost budget.",
    )

    # The model endpoint (§5.3), by the name the operator declared it with in the environment
    # (LLM_ENDPOINTS): its base URL and key live there together, never in a row an admin edits.
    model_name = models.CharField(max_length=200, default=ModelSettings.model)
    endpoint = models.CharField(
        max_length=50,
        blank=True,
        validators=[RegexValidator(f"^{NAME_PATTERN}$", f"An endpoint name: {NAME_HELP}.")],
        help_text="One of the endpoints the operator declared (LLM_ENDPOINTS; OPENAI_BASE_URL and "
        "OPENAI_API_KEY declare “default”). Blank: default.",
    )
    structured_output = models.CharField(
        max_length=10,
        choices=[("tools", "tools (function calling)"), ("json", "JSON mode")],
        default=ModelSettings.structured_output,
        help_text="JSON mode is for servers without tool support.",
    )
    timeout_seconds = models.FloatField(default=ModelSettings.timeout_seconds)
    max_retries = models.PositiveSmallIntegerField(default=ModelSettings.max_retries)
    max_completion_tokens = models.PositiveIntegerField(
        default=ModelSettings.max_completion_tokens,
        help_text="The most tokens one model answer may have (sent with every request). The draft's and "
        "the revision's limits are derived from their character budgets, never above this.",
    )
    input_cost_per_1k = models.DecimalField(
        "input cost per 1k tokens (USD)", max_digits=10, decimal_places=6, default=Decimal("0")
    )
    output_cost_per_1k = models.DecimalField(
        "output cost per 1k tokens (USD)", max_digits=10, decimal_places=6, default=Decimal("0")
    )

    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["pipeline", "-active", "name"]
        verbose_name = "pipeline policy"
        verbose_name_plural = "pipeline policies"
        constraints = [
            models.UniqueConstraint(
                fields=["pipeline"],
                condition=models.Q(active=True),
                name="agents_one_active_policy_per_pipeline",
                violation_error_message="Another policy is already active for this pipeline.",
            ),
            models.UniqueConstraint(fields=["pipeline", "name"], name="agents_policy_name_per_pipeline"),
        ]

    def __str__(self) -> str:
        return f"{self.get_pipeline_display()}: {self.name}"

    def clean(self):
        if self.pipeline not in POLICY_CLASSES:
            return  # the field's own choice check reports it
        errors: dict[str, str] = {}
        used = policy_fields(self.pipeline)
        defaults = POLICY_CLASSES[self.pipeline]()
        for name in BUDGET_FIELDS:
            if name not in used:
                setattr(self, name, None)
            elif getattr(self, name) is None:
                setattr(self, name, getattr(defaults, name))
        for name in BUDGET_RANGES:
            value = getattr(self, name)
            if value is not None and (message := _range_error(name, value)):
                errors[name] = message

        if is_text_pipeline(self.pipeline):
            allowed = self._clean_decisions("decisions_policy", errors)
            executed = self._clean_decisions("decisions_execution", errors)
            if allowed is not None and executed is not None and (extra := set(executed) - set(allowed)):
                errors["decisions_execution"] = (
                    "The execution allowlist is wider than the policy allowlist: "
                    f"{_words(d for d in DECISIONS if d in extra)} not allowed by policy. "
                    "Allow it by policy first, or untick it here."
                )
        else:
            self.decisions_policy, self.decisions_execution = [], []

        if self.active:
            other = (
                PipelinePolicy.objects.filter(pipeline=self.pipeline, active=True)
                .exclude(pk=self.pk)
                .first()
            )
            if other is not None:
                errors["active"] = (
                    f"“{other.name}” is already the active {self.get_pipeline_display().lower()} "
                    "policy. Only one policy per pipeline can be active: deactivate that one first."
                )
        if errors:
            raise ValidationError(errors)

    def _clean_decisions(self, name: str, errors: dict[str, str]) -> list[str] | None:
        value = getattr(self, name)
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            errors[name] = f"Must be a list of decisions among {_words(DECISIONS)}."
            return None
        if unknown := sorted(set(value) - set(DECISIONS)):
            errors[name] = f"Unknown decisions: {_words(unknown)}. Known: {_words(DECISIONS)}."
            return None
        ordered = [d for d in DECISIONS if d in value]
        setattr(self, name, ordered)
        return ordered


class StagePrompt(models.Model):
    """A system prompt that replaces the default of one stage (agents.core.prompts.DEFAULT_PROMPTS)."""

    policy = models.ForeignKey(PipelinePolicy, on_delete=models.CASCADE, related_name="stage_prompts")
    stage = models.CharField(max_length=20, choices=STAGE_CHOICES)
    text = models.TextField(help_text="Must name the stage's tool (e.g. submit_draft for draft).")

    class Meta:
        ordering = ["policy", "stage"]
        constraints = [
            models.UniqueConstraint(fields=["policy", "stage"], name="agents_one_prompt_per_stage"),
        ]

    def __str__(self) -> str:
        return f"{self.stage} prompt"

    def clean(self):
        errors: dict[str, str] = {}
        try:
            policy = self.policy
        except PipelinePolicy.DoesNotExist:
            policy = None
        if policy is not None and policy.pipeline in PIPELINE_STAGES:
            stages = PIPELINE_STAGES[policy.pipeline]
            if self.stage not in stages:
                errors["stage"] = (
                    f"The {policy.get_pipeline_display().lower()} pipeline has no {self.stage} "
                    f"stage; its stages are {_words(stages)}."
                )
        if not (self.text or "").strip():
            errors["text"] = "A prompt cannot be blank: delete the row to use the default prompt."
        elif self.stage in dict(STAGE_CHOICES) and (tool := stage_tool(self.stage)):
            if not re.search(rf"\b{re.escape(tool)}\b", self.text):
                errors["text"] = (
                    f"The {self.stage} prompt must keep its tool: name “{tool}” in the text "
                    f"(e.g. “Call {tool}.”), because the stage answers through that tool (SPEC §5.1)."
                )
        if errors:
            raise ValidationError(errors)


# ---------------------------------------------------------------- shared lists

_NAME = re.compile(r"[a-z][a-z0-9_]*")


def _check_name(value: str, what: str) -> None:
    if not _NAME.fullmatch(value or ""):
        raise ValidationError(
            {"name": f"A {what} name is lower-case letters, digits and underscores, "
                     "starting with a letter (like “scope_leak”)."}
        )


class IssueType(models.Model):
    """An issue (reflection) or risk (self-critique) type the reviewer model may report."""

    name = models.CharField(max_length=50, unique=True)
    high_risk = models.BooleanField(
        default=False, help_text="On: an issue of this type cannot be approved or revised: the run goes "
        "to a person. Off: the reviewer may ask for a revision."
    )
    enabled = models.BooleanField(
        default=True, help_text="On: the reviewer model may report this type. Off: a review or critique "
        "naming it is refused (…_not_allowed_policy) and the run stops."
    )
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self):
        _check_name(self.name, "type")


class RouteTarget(models.Model):
    """A specialist the routing pipeline may delegate to (§3.3)."""

    name = models.CharField(max_length=50, unique=True)
    description = models.TextField(help_text="Shown to the model in the route catalog.")
    worker = models.CharField(max_length=50, help_text="Name of a registered worker.")
    allowed_policy = models.BooleanField(
        "allowed by policy", default=True,
        help_text="On: the route is in the catalog the model chooses from. Off: the model is not offered it, "
        "and choosing it anyway stops the run (invalid_route:route_not_allowed).",
    )
    allowed_execution = models.BooleanField(
        "allowed in execution", default=True,
        help_text="On: a choice of this route is delegated to its worker. Off (a switch for an outage of "
        "that worker): the choice stops the run (route_denied) instead. Needs “allowed by policy”.",
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def clean(self):
        _check_name(self.name, "route")
        errors: dict[str, str] = {}
        if not (self.description or "").strip():
            errors["description"] = "The model chooses routes by their description: it cannot be blank."
        names = worker_names()
        if self.worker not in names:
            errors["worker"] = (
                f"No worker named “{self.worker}” is registered. Registered workers: {_words(names)}."
            )
        if self.allowed_execution and not self.allowed_policy:
            errors["allowed_execution"] = (
                "Allowed in execution is wider than allowed by policy: allow the route by policy "
                "first, or switch execution off too."
            )
        if errors:
            raise ValidationError(errors)


def worker_names() -> list[str]:
    """The names registered in agents.core.specialists (the built-in specialists)."""
    from agents.core.specialists import DemoData, builtin_workers

    return sorted(builtin_workers(DemoData()))


def split_lines(text: str) -> tuple[str, ...]:
    """One entry a line, blank lines and surrounding spaces left out."""
    return tuple(line.strip() for line in (text or "").splitlines() if line.strip())


def split_words(text: str) -> tuple[str, ...]:
    """Comma-separated entries, trimmed; empty ones left out."""
    return tuple(word.strip() for word in (text or "").split(",") if word.strip())


class RestrictedClaim(models.Model):
    """A claim family (issue 11): a canonical claim the text may not make unsupported, plus its
    paraphrases and inflections, each a case-insensitive regular expression in RE2 syntax."""

    pattern = models.CharField(
        "canonical claim",
        max_length=500, unique=True,
        help_text=r"Case-insensitive, in RE2 syntax (matched in linear time): e.g. \bfully\s+recovered\b. "
        r"Lookarounds, backreferences and possessive quantifiers are refused; write \z, not \Z.",
    )
    family = models.CharField(
        max_length=80, blank=True,
        help_text="The family's name, shown with every violation (e.g. “recovery”). Blank: the canonical pattern.",
    )
    paraphrases = models.TextField(
        blank=True,
        help_text="Other wordings and inflections of the same claim: one RE2 pattern a line, each checked "
        "like the canonical one, with the same hedge handling (“not yet fixed” is not the claim).",
    )
    hedges = models.CharField(
        max_length=500, blank=True,
        help_text="Extra words that hedge this family only, comma-separated, read before the claim and "
        "inside it (e.g. estimate, about, expect for time promises).",
    )
    strict_only = models.BooleanField(
        default=False,
        help_text="On: check this family only when the incident asks to avoid absolute guarantees "
        "(§3.4.6). Off: check it on every text.",
    )
    enabled = models.BooleanField(
        default=True, help_text="On: the guard checks every text for this claim. Off: the family is kept "
        "but not checked."
    )
    note = models.CharField(max_length=200, blank=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.family or self.pattern

    def as_family(self) -> ClaimFamily:
        return ClaimFamily(
            name=self.family, pattern=self.pattern, paraphrases=split_lines(self.paraphrases),
            hedges=tuple(w.lower() for w in split_words(self.hedges)), strict_only=self.strict_only,
        )

    def clean(self):
        errors = {}
        for name in ("pattern", "family", "paraphrases", "hedges", "note"):
            if found := control_character(getattr(self, name) or ""):
                errors[name] = f"This contains a control character (U+{ord(found):04X}); remove it."
        # Compiled for RE2, as the guard runs it: a pattern that would need backtracking (and could
        # take minutes on a long text) is refused here, with what to write instead.
        if "pattern" not in errors and (problem := pattern_problem(self.pattern or "")):
            errors["pattern"] = problem
        if "paraphrases" not in errors:
            problems = [f"Line {n}: {problem}" for n, line in enumerate((self.paraphrases or "").splitlines(), 1)
                        if line.strip() and (problem := pattern_problem(line.strip()))]
            if problems:
                errors["paraphrases"] = problems
        if "hedges" not in errors:
            bad = [w for w in split_words(self.hedges) if not re.fullmatch(r"[A-Za-z’']+", w)]
            if bad:
                errors["hedges"] = f"Hedges are single words, comma-separated; not: {', '.join(bad)}."
        if errors:
            raise ValidationError(errors)


class RegionToken(models.Model):
    """A word that names a region; a revision may name only regions its context names."""

    token = models.CharField(max_length=32, unique=True)
    words = models.CharField(
        max_length=300, blank=True,
        help_text="The region's names in words and adjectives, comma-separated (e.g. Europe, European); "
        "a mention of one is a mention of the region.",
    )
    enabled = models.BooleanField(
        default=True, help_text="On: the guard reads this token and its words as the region. Off: not read."
    )

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.token

    def clean(self):
        token = (self.token or "").strip()
        if not re.fullmatch(r"[A-Za-z]{2,32}", token):
            raise ValidationError(
                {"token": "A region token must be a single word of letters (like “emea”), "
                          f"got “{self.token}”."}
            )
        # Stored lower-case; the guard matches two-letter tokens only in upper case (§3.5.4).
        self.token = token.lower()
        bad = [w for w in split_words(self.words) if not re.fullmatch(r"[A-Za-z][A-Za-z .’'-]{0,60}", w)]
        if bad:
            raise ValidationError({"words": "Region words are letters, spaces, dots, apostrophes and hyphens, "
                                            f"comma-separated; not: {', '.join(bad)}."})

    def as_words(self) -> tuple[str, tuple[str, ...]]:
        return self.token.lower(), split_words(self.words)


# ---------------------------------------------------------------- the change record


def snapshot(obj: models.Model) -> dict:
    """A row's editable fields as JSON-safe data (Decimals become strings)."""
    data = model_to_dict(obj)
    data["id"] = obj.pk
    return json.loads(json.dumps(data, cls=DjangoJSONEncoder))


class PolicyChange(models.Model):
    ADDED, CHANGED, DELETED = "added", "changed", "deleted"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    username = models.CharField(max_length=150, blank=True, help_text="Kept if the user is deleted.")
    at = models.DateTimeField(default=timezone.now, db_index=True)
    model_label = models.CharField(max_length=100)
    object_id = models.CharField(max_length=64)
    object_repr = models.CharField(max_length=200)
    policy = models.ForeignKey(
        PipelinePolicy, null=True, blank=True, on_delete=models.SET_NULL, related_name="changes",
        help_text="The policy the changed row belongs to, while it exists.",
    )
    action = models.CharField(
        max_length=10, choices=[(ADDED, "added"), (CHANGED, "changed"), (DELETED, "deleted")]
    )
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["model_label", "object_id"])]

    def __str__(self) -> str:
        return f"{self.object_repr} {self.action}"

    @classmethod
    def record(cls, user, obj: models.Model, action: str, *, before=None, after=None,
               object_id=None, policy: PipelinePolicy | None = None) -> PolicyChange:
        user = user if getattr(user, "is_authenticated", False) else None
        return cls.objects.create(
            user=user,
            username=user.get_username() if user else "",
            model_label=obj._meta.label_lower,
            object_id=str(object_id if object_id is not None else obj.pk),
            object_repr=str(obj)[:200],
            policy=policy,
            action=action,
            before=before,
            after=after,
        )

    @property
    def changed_fields(self) -> list[str]:
        before, after = self.before or {}, self.after or {}
        return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k) and k != "id")


# ---------------------------------------------------------------- the routing workers' data


class Plan(models.Model):
    code = models.CharField(max_length=50, unique=True, help_text="e.g. pro_monthly, free, team_plus")
    price = models.DecimalField(max_digits=10, decimal_places=2)
    currency = models.CharField(max_length=3, default="USD")
    period = models.CharField(max_length=20, default="month")
    recommended = models.BooleanField(
        default=False, help_text="On: the plan the sales specialist recommends (one plan at most)."
    )

    class Meta:
        ordering = ["code"]
        constraints = [
            models.UniqueConstraint(
                fields=["recommended"], condition=models.Q(recommended=True),
                name="agents_one_recommended_plan",
                violation_error_message="Another plan is already the recommended one.",
            ),
        ]

    def __str__(self) -> str:
        return self.code


class Customer(models.Model):
    user_id = models.PositiveBigIntegerField(unique=True)
    name = models.CharField(max_length=200)
    country = models.CharField(max_length=2)
    plan = models.ForeignKey(Plan, on_delete=models.PROTECT, related_name="customers")

    class Meta:
        ordering = ["user_id"]

    def __str__(self) -> str:
        return f"{self.name} (user_id={self.user_id})"


class Payment(models.Model):
    FIRST, RENEWAL = "first", "renewal"

    customer = models.ForeignKey(Customer, on_delete=models.CASCADE, related_name="payments")
    amount = models.DecimalField(max_digits=10, decimal_places=2)
    currency = models.CharField(max_length=3, default="USD")
    paid_at = models.DateField()
    kind = models.CharField(max_length=10, choices=[(FIRST, "first"), (RENEWAL, "renewal")])

    class Meta:
        ordering = ["customer", "paid_at"]
        indexes = [models.Index(fields=["customer", "paid_at"])]

    def __str__(self) -> str:
        return f"{self.customer} {self.kind} {self.amount} {self.currency} on {self.paid_at}"


class ServiceIncident(models.Model):
    """A service's status as the technical specialist looks it up to answer a ticket (§3.3): the
    routing specialists' data, like plans and payments. It is not the product's incident (``Incident``,
    with facts and versions, which runs draft updates for), so admin calls it a service status."""

    CLOSED_STATES = ("resolved",)

    incident_id = models.CharField(
        "status id", max_length=32, unique=True,
        help_text="The status page's id, e.g. INC-4021, which the technical specialist quotes to a customer. "
        "Product incidents (with facts and runs) are under Incidents.",
    )
    service = models.CharField(max_length=100)
    state = models.CharField(
        max_length=20,
        choices=[(s, s) for s in ("investigating", "identified", "monitoring", "mitigated", "resolved")],
    )
    next_update_minutes = models.PositiveIntegerField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]
        indexes = [models.Index(fields=["state", "updated_at"])]
        verbose_name = "service status (technical specialist)"
        verbose_name_plural = "service statuses (technical specialist)"

    def __str__(self) -> str:
        return self.incident_id

    def clean(self):
        self.incident_id = (self.incident_id or "").strip().upper()


# ---------------------------------------------------------------- incidents and runs

class IncidentQuerySet(models.QuerySet):
    def with_latest_run(self):
        """Each incident with its run count and its newest run's id, status and stop reason."""
        latest = Run.objects.filter(incident=models.OuterRef("pk")).order_by("-created_at", "-id")
        # A correlated count per incident reads the run_incident_newest index; Count("runs") joined
        # and grouped every run of every incident (PostgreSQL: a hash join over all runs).
        count = (Run.objects.filter(incident=models.OuterRef("pk")).order_by().values("incident")
                 .annotate(n=models.Count("id")).values("n"))
        return self.annotate(
            run_count=Coalesce(models.Subquery(count), 0),
            latest_run_id=models.Subquery(latest.values("pk")[:1]),
            latest_status=models.Subquery(latest.values("status")[:1]),
            latest_stop_reason=models.Subquery(latest.values("stop_reason")[:1]),
        )


class Incident(models.Model):
    """An incident: its identity, its facts (``IncidentFact`` rows, each with a unit) and what ops
    approved for customers; ``context()`` is the run context of SPEC §3.3 built from them."""

    incident_id = models.SlugField(max_length=64, unique=True, help_text="e.g. inc_pay_2041")
    title = models.CharField(max_length=200)
    report_date = models.DateField(default=timezone.localdate)
    regions = models.JSONField(default=list, blank=True, help_text='Region tokens, e.g. ["EU", "UK"]')
    severity = models.CharField(max_length=8, blank=True, help_text="P0-P5")
    status = models.CharField(max_length=200, blank=True, help_text="e.g. degraded, mitigated")
    policy_hints = models.JSONField(default=dict, blank=True)
    approved_actions = models.JSONField(default=list, blank=True)
    key_messages = models.JSONField(default=list, blank=True, help_text="Sentences ops wants in the update")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = IncidentQuerySet.as_manager()

    class Meta:
        ordering = ["-report_date", "incident_id"]

    def __str__(self) -> str:
        return f"{self.incident_id}: {self.title}"

    @property
    def region(self) -> str:
        """The regions as one text, as the run context and people read them ("EU, UK")."""
        return ", ".join(r for r in self.regions or [] if isinstance(r, str) and r.strip())

    def fact_list(self) -> list[IncidentFact]:
        return list(self.fact_rows.all())

    @property
    def facts(self) -> list[tuple[str, str]]:
        """The incident's identity and facts as (label, text) for people; unset ones are left out."""
        rows = [("Severity", self.severity), ("Regions", self.region), ("Status", self.status)]
        rows += [(fact.label, fact.shown) for fact in self.fact_list()]
        return [(label, value) for label, value in rows if value]

    def snapshot(self) -> dict:
        """What a version holds: the identity, the facts (as stored) and the lists ops edits."""
        return {
            "title": self.title, "severity": self.severity, "status": self.status, "regions": list(self.regions or []),
            "facts": [{"key": f.key, "label": f.label, "value": f.typed_value, "unit": f.unit}
                      for f in self.fact_list()],
            "approved_actions": self.approved_actions or [], "key_messages": self.key_messages or [],
            "policy_hints": self.policy_hints or {},
        }

    def latest_version(self) -> IncidentVersion | None:
        return self.versions.order_by("-number").first()

    def record_version(self, user=None) -> IncidentVersion:
        """A new version when the facts differ from the newest one (the newest otherwise).

        The common case, facts unchanged, takes no lock: 100 runs started at once for one incident
        do not queue on its row. Only a new version locks the incident row and looks again, so two
        saves at once number their versions one after the other (SQLite's transaction holds the
        database's write lock from its start: no row lock to ask). The facts read last are kept as
        this instance's ``fact_rows``, so the ``context()`` a run takes right after is the version's
        without reading them again."""
        with transaction.atomic():
            latest, snapshot = self._newest_and_now()
            if latest is not None and latest.snapshot == snapshot:
                return latest
            if connection.features.has_select_for_update:
                Incident.objects.select_for_update().filter(pk=self.pk).values_list("pk").first()
                latest, snapshot = self._newest_and_now()  # another save may have numbered one meanwhile
                if latest is not None and latest.snapshot == snapshot:
                    return latest
            changes = fact_changes(latest.snapshot, snapshot) if latest else []
            return IncidentVersion.objects.create(
                incident=self, number=(latest.number + 1) if latest else 1, snapshot=snapshot, changes=changes,
                created_by=user if getattr(user, "pk", None) else None)

    def _newest_and_now(self) -> tuple[IncidentVersion | None, dict]:
        """The newest version and the snapshot of the facts as stored now (read afresh)."""
        getattr(self, "_prefetched_objects_cache", {}).pop("fact_rows", None)
        prefetch_related_objects([self], "fact_rows")
        return self.latest_version(), json.loads(json.dumps(self.snapshot(), cls=DjangoJSONEncoder))

    def context(self) -> dict:
        """The run context, in the shape the pipelines read: the identity (id, title, severity, status:
        what the incident is, so a model drafts about this incident) and each fact's typed value
        under ``incident``, each fact's key, label and unit under ``fact_meta`` (for the number rules)."""
        facts = self.fact_list()
        identity = {"incident_id": self.incident_id, "title": self.title, "severity": self.severity,
                    "status": self.status}
        values = {k: v for k, v in identity.items() if v not in (None, "")}
        values.update((fact.key, fact.typed_value) for fact in facts)
        context = {
            "report_date": self.report_date.isoformat(),
            "region": self.region,
            "incident": values,
            "policy_hints": self.policy_hints or {},
            "approved_actions": self.approved_actions or [],
        }
        if facts:
            context["fact_meta"] = [{"key": f.key, "label": f.label, "unit": f.unit} for f in facts]
        if self.key_messages:
            context["key_messages"] = self.key_messages
        return context


def fact_changes(before: dict, after: dict) -> list[dict]:
    """What changed between two version snapshots, one entry per field or fact, for people:
    ``{"what": "ETA", "before": "45 minutes", "after": "30 minutes"}`` (None where there was none)."""
    changes = []
    for name in ("title", "severity", "status", "regions", "approved_actions", "key_messages", "policy_hints"):
        if before.get(name) != after.get(name):
            changes.append({"what": name.replace("_", " ").capitalize(), "before": before.get(name),
                            "after": after.get(name)})
    old = {f["key"]: f for f in before.get("facts", [])}
    new = {f["key"]: f for f in after.get("facts", [])}
    for key in [*old, *(k for k in new if k not in old)]:
        a, b = old.get(key), new.get(key)
        if a is None or b is None or (a["value"], a["unit"], a["label"]) != (b["value"], b["unit"], b["label"]):
            changes.append({"what": (b or a)["label"], "before": a and show(a["value"], a["unit"]),
                            "after": b and show(b["value"], b["unit"])})
    return changes


def changes_text(changes: list[dict]) -> str:
    """The changes in one line for people: "ETA 45 minutes → 30 minutes; Status degraded → mitigated"."""
    parts = []
    for change in changes:
        before, after = change.get("before"), change.get("after")
        if isinstance(before, str | None) and isinstance(after, str | None):
            parts.append(f"{change['what']} {before or '—'} → {after or '—'}")
        else:
            parts.append(f"{change['what']} changed")
    return "; ".join(parts)


class IncidentVersion(models.Model):
    """One immutable version of an incident's facts: who, when, what changed since the one before.
    ``Incident.record_version()`` writes one whenever the facts differ from the newest version."""

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    snapshot = models.JSONField()  # identity, facts and lists, as Incident.snapshot() gives them
    changes = models.JSONField(default=list)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["incident", "-number"]
        constraints = [models.UniqueConstraint(fields=["incident", "number"], name="incident_version_once")]

    def __str__(self) -> str:
        return f"{self.incident_id} v{self.number}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ValueError("An incident version is immutable; record a new one.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ValueError("An incident version is immutable.")

    @property
    def changes_text(self) -> str:
        return changes_text(self.changes)


class IncidentFact(models.Model):
    """One fact of an incident: a key the context uses, a label for people, a value in a unit."""

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="fact_rows")
    position = models.PositiveSmallIntegerField(default=0)
    key = models.SlugField(max_length=64, help_text="e.g. failed_payment_rate (the context's name for it)")
    label = models.CharField(max_length=100, help_text="e.g. Failed payment rate")
    value = models.CharField(max_length=FACT_VALUE_MAX_CHARS, help_text="e.g. 0.034, 27, 45, degraded")
    unit = models.CharField(max_length=10, choices=list(UNITS.items()), default="text")

    class Meta:
        ordering = ["incident", "position", "id"]
        constraints = [models.UniqueConstraint(fields=["incident", "key"], name="incident_fact_key_once")]

    def __str__(self) -> str:
        return f"{self.label}: {self.shown}"

    def clean(self):
        if self.key in ("incident_id", "title", "severity", "status"):
            raise ValidationError({"key": f"“{self.key}” is part of the incident's identity, not a fact."})
        for name in ("label", "value"):
            found = control_character(getattr(self, name) or "")
            if found:
                message = f"The {name} contains a control character (U+{ord(found):04X}); remove it."
                raise ValidationError({name: message})
        try:
            parse_value(self.value or "", self.unit)
        except ValueError as error:
            raise ValidationError({"value": str(error)}) from None

    @property
    def typed_value(self):
        """The value as the context carries it: a number in every unit but text (the text when it
        does not parse, so a row written before a check never breaks a run)."""
        try:
            return parse_value(self.value, self.unit)
        except ValueError:
            return self.value

    @property
    def shown(self) -> str:
        return show(self.typed_value, self.unit)


def since(window: str | None, now=None):
    """The earliest ``created_at`` of a time window (``today``, ``24h``, ``7d``); None for any time."""
    now = now or timezone.now()
    if window == "today":
        return timezone.localtime(now).replace(hour=0, minute=0, second=0, microsecond=0)
    if window == "24h":
        return now - timedelta(hours=24)
    if window == "7d":
        return now - timedelta(days=7)
    return None


# The run list's pseudo-status for "queued or running".
IN_FLIGHT_FILTER = "in_flight"


class RunQuerySet(models.QuerySet):
    def since(self, window: str | None):
        cutoff = since(window)
        return self if cutoff is None else self.filter(created_at__gte=cutoff)

    def filtered(self, *, stop_reason: str = "", status: str = "", pipeline: str = "", since: str | None = None):
        """The run list's filters; ``status`` may also be ``in_flight`` (queued or running)."""
        runs = self.since(since)
        if stop_reason:
            runs = runs.filter(stop_reason=stop_reason)
        if status == IN_FLIGHT_FILTER:
            runs = runs.filter(status__in=Run.IN_FLIGHT)
        elif status:
            runs = runs.filter(status=status)
        if pipeline:
            runs = runs.filter(pipeline=pipeline)
        return runs

    def retry_counts(self, pks: list[int]) -> dict[int, int]:
        """How many retries each of these runs has, in one query (not a join over every listed run)."""
        rows = self.filter(retry_of_id__in=pks).order_by().values("retry_of_id").annotate(n=models.Count("id"))
        return {row["retry_of_id"]: row["n"] for row in rows}

    def failed(self):
        """The runs :attr:`Run.failed` accepts, as one filter (``opens_escalation``'s rule as SQL, read by
        the ``run_status_reason`` index; no pass over the stored reasons first)."""
        exact, prefixes = escalating_reasons()
        escalating = models.Q(stop_reason__in=exact)
        for prefix in prefixes:
            escalating |= models.Q(stop_reason__startswith=prefix)
        return self.filter((models.Q(status=Run.Status.STOPPED) & ~escalating)
                           | models.Q(status=Run.Status.INTERRUPTED))


class Run(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        OK = "ok"
        STOPPED = "stopped"
        INTERRUPTED = "interrupted"

    IN_FLIGHT = (Status.QUEUED, Status.RUNNING)

    pipeline = models.CharField(max_length=20, choices=PIPELINE_CHOICES)
    goal = models.TextField()
    incident = models.ForeignKey(Incident, null=True, blank=True, on_delete=models.PROTECT, related_name="runs")
    incident_version = models.ForeignKey("IncidentVersion", null=True, blank=True, on_delete=models.PROTECT,
                                         related_name="runs")  # the version of the facts the run ran on
    context = models.JSONField(default=dict, blank=True)  # the snapshot the run used
    policy = models.JSONField(default=dict)  # the policy snapshot the run ran under
    model_label = models.CharField(max_length=200, blank=True)
    endpoint = models.CharField(max_length=300, blank=True)

    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED)
    stop_reason = models.CharField(max_length=200, blank=True)
    phase = models.CharField(max_length=20, blank=True)
    # While in flight: the stage whose model call is waiting for an answer, and that call's number in
    # the run ("revising (model call 3)…" on the run page); cleared when a step ends.
    working_on = models.CharField(max_length=20, blank=True)
    working_call = models.PositiveIntegerField(null=True, blank=True)
    outcome = models.CharField(max_length=40, blank=True)
    answer = models.TextField(blank=True)
    selected_route = models.CharField(max_length=100, blank=True)
    escalation_reason = models.TextField(blank=True)
    candidate = models.TextField(blank=True)  # the text a gate blocked
    guard = models.JSONField(null=True, blank=True)
    details = models.JSONField(default=dict, blank=True)

    triggered_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="runs")
    idempotency_key = models.CharField(max_length=200, blank=True)
    retry_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="retries")

    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(max_length=200, blank=True)
    deliveries = models.PositiveIntegerField(default=0)
    duration_ms = models.FloatField(null=True, blank=True)

    model_calls = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=0)

    objects = RunQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["incident", "-created_at"], name="run_incident_newest"),
            models.Index(fields=["stop_reason", "-created_at"], name="run_stop_reason_newest"),
            models.Index(fields=["status", "heartbeat_at"], name="run_status_heartbeat"),
            models.Index(fields=["-created_at"], name="run_newest"),
            # The dashboard's counts by status and stop reason over a time window, index-only.
            models.Index(fields=["created_at", "status", "stop_reason"], name="run_window_counts"),
            # failed runs: their count, and the page's ids sorted without reading the wide rows
            models.Index(fields=["status", "stop_reason", "created_at"], name="run_failed_newest"),
        ]
        permissions = [("start_run", "Can start pipeline runs")]
        constraints = [
            models.UniqueConstraint(fields=["triggered_by", "idempotency_key"], condition=~models.Q(idempotency_key=""),
                                    name="run_idempotency_key_per_user"),
        ]

    def __str__(self) -> str:
        return f"Run {self.pk} ({self.pipeline}, {self.status})"

    @property
    def in_flight(self) -> bool:
        return self.status in self.IN_FLIGHT

    @property
    def failed(self) -> bool:
        """A failed run is retried, not decided: interrupted, or stopped by a reason that opens no escalation."""
        if self.status == Run.Status.INTERRUPTED:
            return True
        return self.status == Run.Status.STOPPED and not opens_escalation(self.stop_reason)

    def show_progress(self, steps, calls, usage: dict | None = None) -> None:
        """While the run is in flight, its phase and usage as its stored steps and model calls say.

        The observer writes only those rows while a run is in flight (one INSERT per step or call,
        no UPDATE of the run); ``record_result`` writes the final phase and totals on the run.
        ``usage`` (``call_usage()``) counts every call when ``calls`` are only the newest ones.
        """
        if not self.in_flight:
            return
        if steps:
            self.phase = steps[-1].phase
        if usage is None:
            usage = {"model_calls": len(calls), "prompt_tokens": sum(c.prompt_tokens for c in calls),
                     "completion_tokens": sum(c.completion_tokens for c in calls)}
        self.model_calls = usage["model_calls"]
        self.prompt_tokens = usage["prompt_tokens"]
        self.completion_tokens = usage["completion_tokens"]

    def call_usage(self) -> dict:
        """The number of its model calls and their tokens, counted in the database (one query)."""
        return self.calls.aggregate(model_calls=models.Count("id"),
                                    prompt_tokens=Coalesce(models.Sum("prompt_tokens"), 0),
                                    completion_tokens=Coalesce(models.Sum("completion_tokens"), 0))

    def related(self, name: str):
        """A reverse one-to-one (``review``, ``audit``, ``escalation``) or None when there is none."""
        try:
            return getattr(self, name)
        except ObjectDoesNotExist:
            return None


class TraceStep(models.Model):
    """One completed step, written by the observer while the run is in flight."""
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="steps")
    index = models.PositiveIntegerField()
    phase = models.CharField(max_length=20)
    status = models.CharField(max_length=12)  # ok, stopped, retry
    stop_reason = models.CharField(max_length=200, blank=True)
    decision = models.CharField(max_length=20, blank=True)
    duration_ms = models.FloatField(default=0)
    measurements = models.JSONField(default=dict, blank=True)
    output = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["run_id", "index"]  # run_id, not run: no join to order by the run's own ordering
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="trace_step_once")]

    def __str__(self) -> str:
        return f"Run {self.run_id} step {self.index} ({self.phase}, {self.status})"



class ModelCall(models.Model):
    """One request to the model endpoint (each transport retry is its own row)."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="calls")
    stage = models.CharField(max_length=20)
    attempt = models.PositiveIntegerField(default=1)
    try_number = models.PositiveIntegerField(default=1)
    delivery = models.PositiveIntegerField(default=1)  # which delivery of the run's task made it
    model = models.CharField(max_length=200)
    latency_ms = models.FloatField(default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    outcome = models.CharField(max_length=200, default="ok")
    raw = models.TextField(blank=True)  # kept whole for audit
    error = models.TextField(blank=True)
    note = models.TextField(blank=True)  # what the server did unasked (e.g. answered without the tool)
    # The request's messages as sent ([{"role": "system", "content": ...}, {"role": "user", ...}]),
    # keys redacted like every stored text; empty for calls recorded before requests were kept.
    request = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["run_id", "id"]

    def __str__(self) -> str:
        return f"Run {self.run_id} {self.stage} call (attempt {self.attempt}, try {self.try_number})"



class Review(models.Model):
    """The reviewer model's verdict (reflection review or self-critique), as the gateway accepted it."""

    class Kind(models.TextChoices):
        REVIEW = "review"
        CRITIQUE = "critique"

    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="review")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    decision = models.CharField(max_length=20)
    severity = models.CharField(max_length=10, blank=True)
    issues = models.JSONField(default=list, blank=True)  # issues or risks: [{type, note}]
    instructions = models.JSONField(default=list, blank=True)  # fix plan or required changes
    reason = models.TextField(blank=True)
    quality = models.CharField(max_length=20, blank=True)
    completeness = models.CharField(max_length=20, blank=True)

    def __str__(self) -> str:
        return f"{self.get_kind_display()} of run {self.run_id}: {self.decision}"



class AuditDiff(models.Model):
    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="audit")
    before_text = models.TextField()
    after_text = models.TextField()
    changed = models.BooleanField()
    before_hash = models.CharField(max_length=12)
    after_hash = models.CharField(max_length=12)
    before_chars = models.PositiveIntegerField()
    after_chars = models.PositiveIntegerField()
    delta = models.IntegerField()
    length_increase_pct = models.FloatField()
    risks_count = models.PositiveIntegerField(default=0)
    required_changes_count = models.PositiveIntegerField(default=0)
    diff_unit = models.CharField(max_length=10)
    unified_diff = models.TextField(blank=True)
    diff_excerpt = models.JSONField(default=list, blank=True)

    def __str__(self) -> str:
        return f"Audit of run {self.run_id} ({self.before_hash} -> {self.after_hash})"


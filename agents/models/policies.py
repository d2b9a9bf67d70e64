"""Policies as rows that admins edit, the shared lists they read, and the record of every change.

The pipeline core never sees these models: ``agents.policy_rows.load_policy`` turns the active row and
the shared lists into the plain ``agents.core.policy`` dataclasses. Validation lives in ``clean()`` so
every form (admin or not) that calls ``full_clean()`` refuses the same things with the same messages.
"""

from __future__ import annotations

import dataclasses
import json
import re
from decimal import Decimal

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.serializers.json import DjangoJSONEncoder
from django.core.validators import RegexValidator
from django.db import models
from django.forms.models import model_to_dict
from django.utils import timezone

from agents.core.declarations import NAME_HELP, NAME_PATTERN
from agents.core.inputs import control_character
from agents.core.llm.schemas import STAGE_TOOLS
from agents.core.patterns import pattern_problem
from agents.core.policy import (
    CLAIM_CHECKS,
    DECISIONS,
    HEDGING,
    PIPELINE_CHOICES,
    POLICY_CLASSES,
    SUPPORTS,
    ClaimFamily,
    ModelSettings,
    TextPolicy,
)

# The budgets; a row keeps the ones its pipeline's dataclass has and leaves the others empty.
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
    "judge_timeout_seconds": (1, 600),
}
# The second reader's fields: a text policy's only, all blank while it names no reader.
JUDGE_FIELDS = ("judge_endpoint", "judge_model", "judge_timeout_seconds")

# The model stages each pipeline asks; a prompt for another stage would never be read.
PIPELINE_STAGES: dict[str, tuple[str, ...]] = {
    "reflection": ("draft", "review", "revise", "judge"),
    "self_critique": ("draft", "shorten", "critique", "revise", "revise_strict", "judge"),
    "routing": ("route", "finalize"),
}
STAGE_CHOICES = [(stage, stage) for stage in (*STAGE_TOOLS, "revise_strict")]


def policy_fields(pipeline: str) -> frozenset[str]:
    """The fields of the pipeline's policy dataclass: what a row of that pipeline uses."""
    return frozenset(f.name for f in dataclasses.fields(POLICY_CLASSES[pipeline]))


def is_text_pipeline(pipeline: str) -> bool:
    return issubclass(POLICY_CLASSES[pipeline], TextPolicy)


def stage_tool(stage: str) -> str | None:
    """The tool a stage's prompt must name; the strict revise asks for the revise tool."""
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
    grounding = models.BooleanField(
        default=True,
        help_text="On by default: every sentence of a customer-facing text must be supported by the "
        "incident (its public facts, key messages, approved actions, the goal) or by the grounding vocabulary; "
        "a sentence that states anything else stops as unsupported_statement and goes to a person. Off: only the "
        "named checks read the text.",
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

    # Budgets. Empty where the pipeline has no such budget; left blank on a pipeline that
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

    # The model endpoint, by the name the operator declared it with in the environment
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

    # The second reader (docs/guard.md, 'The second reader'): a model at a declared endpoint that reads
    # a text policy's final answer against the incident's public facts. Blank endpoint: no reader.
    judge_endpoint = models.CharField(
        "second reader's endpoint",
        max_length=50,
        blank=True,
        validators=[RegexValidator(f"^{NAME_PATTERN}$", f"An endpoint name: {NAME_HELP}.")],
        help_text="Blank (the default): no second reader. Otherwise one of the endpoints the operator declared "
        "(LLM_ENDPOINTS; “default” for OPENAI_BASE_URL and OPENAI_API_KEY): after the final-answer checks, "
        "its model reads the text against the incident's public facts and lists what they do not support. "
        "Its findings, or no usable answer from it, send the text to a person.",
    )
    judge_model = models.CharField(
        "second reader's model", max_length=200, blank=True,
        help_text="The model name the second reader's endpoint serves. Needed when an endpoint is chosen.",
    )
    judge_timeout_seconds = models.FloatField(
        "second reader's timeout (seconds)", null=True, blank=True,
        help_text="How long one call of the second reader may take. Blank: the policy's timeout. A reader "
        "that does not answer in time sends the text to a person (invalid_answer:judge_unavailable).",
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
            self._clean_judge(errors)
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
            self.judge_endpoint, self.judge_model, self.judge_timeout_seconds = "", "", None

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

    def _clean_judge(self, errors: dict[str, str]) -> None:
        self.judge_endpoint = (self.judge_endpoint or "").strip()
        self.judge_model = (self.judge_model or "").strip()
        if not self.judge_endpoint:
            if self.judge_model or self.judge_timeout_seconds is not None:
                errors["judge_endpoint"] = ("Choose the second reader's endpoint, or clear its model and timeout: "
                                            "without an endpoint there is no second reader.")
            return
        if not self.judge_model:
            errors["judge_model"] = "Name the model the second reader's endpoint serves."
        elif found := control_character(self.judge_model):
            errors["judge_model"] = f"This contains a control character (U+{ord(found):04X}); remove it."

    def judge_settings(self) -> ModelSettings | None:
        """The second reader's model settings, None when the row names none. Its structured output,
        retries and completion limit are the policy's own."""
        if not self.judge_endpoint or not is_text_pipeline(self.pipeline):
            return None
        timeout = self.judge_timeout_seconds if self.judge_timeout_seconds is not None else self.timeout_seconds
        return ModelSettings(model=self.judge_model, endpoint=self.judge_endpoint,
                             structured_output=self.structured_output, timeout_seconds=float(timeout),
                             max_retries=self.max_retries, max_completion_tokens=self.max_completion_tokens)

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
                    f"(e.g. “Call {tool}.”), because the stage answers through that tool."
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
    """A specialist the routing pipeline may delegate to."""

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
    from agents.core.specialists import BUILTIN_WORKERS

    return sorted(BUILTIN_WORKERS)


def split_lines(text: str) -> tuple[str, ...]:
    """One entry a line, blank lines and surrounding spaces left out."""
    return tuple(line.strip() for line in (text or "").splitlines() if line.strip())


def split_words(text: str) -> tuple[str, ...]:
    """Comma-separated entries, trimmed; empty ones left out."""
    return tuple(word.strip() for word in (text or "").split(",") if word.strip())


class RestrictedClaim(models.Model):
    """A claim family: a canonical claim the text may not make unsupported, plus its
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
        "(its policy hint avoid_absolute_guarantees). Off: check it on every text.",
    )
    kind = models.CharField(
        "check",
        max_length=32, choices=list(CLAIM_CHECKS.items()), default="restricted_claims",
        help_text="The check a match fails: its stop reason is patch_violation:<check> on a revision and "
        "invalid_answer:<check> on a final answer, and the lead sees it under this name.",
    )
    support = models.CharField(
        max_length=16, choices=list(SUPPORTS.items()), default="evidence",
        help_text="What lets a match pass: the incident's facts making the same claim (always), or the "
        "incident's state as well (resolved, monitoring), or a sentence about the next update (time).",
    )
    supported_by = models.TextField(
        "also supported by", blank=True,
        help_text="Patterns that, found unhedged in the incident's facts, support the claim too: one RE2 "
        "pattern a line (e.g. \\bmaintenance\\b for “planned outage”). Each fact is also read as "
        "“Label: value”.",
    )
    hedging = models.CharField(
        max_length=16, choices=list(HEDGING.items()), default="any",
        help_text="What lets a match pass as not asserted. Money and blame use “only a negation”: "
        "“if you were charged twice, we will refund you” is still a promise.",
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
            check=self.kind, support=self.support, supported_by=split_lines(self.supported_by),
            hedging=self.hedging,
        )

    def clean(self):
        errors = {}
        for name in ("pattern", "family", "paraphrases", "hedges", "supported_by", "note"):
            if found := control_character(getattr(self, name) or ""):
                errors[name] = f"This contains a control character (U+{ord(found):04X}); remove it."
        # Compiled for RE2, as the guard runs it: a pattern that would need backtracking (and could
        # take minutes on a long text) is refused here, with what to write instead.
        if "pattern" not in errors and (problem := pattern_problem(self.pattern or "")):
            errors["pattern"] = problem
        for name in ("paraphrases", "supported_by"):
            if name in errors:
                continue
            problems = [f"Line {n}: {problem}" for n, line in enumerate((getattr(self, name) or "").splitlines(), 1)
                        if line.strip() and (problem := pattern_problem(line.strip()))]
            if problems:
                errors[name] = problems
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
        # Stored lower-case; the guard matches two-letter tokens only in upper case.
        self.token = token.lower()
        bad = [w for w in split_words(self.words) if not re.fullmatch(r"[A-Za-z][A-Za-z .’'-]{0,60}", w)]
        if bad:
            raise ValidationError({"words": "Region words are letters, spaces, dots, apostrophes and hyphens, "
                                            f"comma-separated; not: {', '.join(bad)}."})

    def as_words(self) -> tuple[str, tuple[str, ...]]:
        return self.token.lower(), split_words(self.words)


class GroundingTerm(models.Model):
    """A word or phrase of ordinary update language that the grounding check accepts without the
    incident supporting it ("we apologize for the inconvenience", "a fix has been implemented")."""

    text = models.CharField(
        max_length=120, unique=True,
        help_text="One word, or a phrase of up to eight words (a phrase licenses its words only together: "
        "“back to normal”). Letters, spaces, apostrophes and hyphens.",
    )
    advice = models.BooleanField(
        default=False,
        help_text="On: it may also stand in a sentence that tells customers what to do (“contact support”). "
        "Off: advice built on it needs an approved action.",
    )
    action = models.BooleanField(
        default=False,
        help_text="On: it may also say what the company did, does or will do (“we are investigating”, “a fix "
        "will be deployed”). Off: such a statement built on it needs an approved action, a key message or a fact.",
    )
    enabled = models.BooleanField(default=True, help_text="Off: the grounding check does not read it.")
    note = models.CharField(max_length=200, blank=True, help_text="Why it is ordinary language (for reviewers).")

    class Meta:
        ordering = ["text"]

    def __str__(self) -> str:
        return self.text

    def clean(self):
        text = " ".join((self.text or "").split()).lower()
        if not re.fullmatch(r"[a-z][a-z'’-]*(?: [a-z][a-z'’-]*){0,7}", text):
            raise ValidationError({"text": "A grounding term is one word or a phrase of up to eight words of "
                                           f"letters, apostrophes and hyphens, got “{self.text}”."})
        self.text = text

    def as_term(self) -> tuple[str, bool, bool]:
        return self.text, self.advice, self.action


# ---------------------------------------------------------------- the change record


def snapshot(obj: models.Model) -> dict:
    """A row's editable fields as JSON-safe data (Decimals become strings)."""
    data = model_to_dict(obj)
    data["id"] = obj.pk
    return json.loads(json.dumps(data, cls=DjangoJSONEncoder))


class PolicyChange(models.Model):
    ADDED, CHANGED, DELETED = "added", "changed", "deleted"
    # A proposed change an admin turned down (reviewer.learning: an amendment mined from decisions): kept
    # in the history with its reason, the row unchanged.
    DISMISSED = "dismissed"

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
        max_length=10, choices=[(ADDED, "added"), (CHANGED, "changed"), (DELETED, "deleted"),
                 (DISMISSED, "proposed, dismissed")]
    )
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    # The policy lab's summary of the preview run on exactly these values before they were saved
    # (agents.lab.Preview.summary); empty when the change was saved without one.
    preview = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["model_label", "object_id"])]

    def __str__(self) -> str:
        return f"{self.object_repr} {self.action}"

    @classmethod
    def record(cls, user, obj: models.Model, action: str, *, before=None, after=None,
               object_id=None, policy: PipelinePolicy | None = None, preview: dict | None = None) -> PolicyChange:
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
            preview=preview,
        )

    @property
    def changed_fields(self) -> list[str]:
        before, after = self.before or {}, self.after or {}
        return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k) and k != "id")


class PolicyStamp(models.Model):
    """One row whose stamp the database rewrites, with a trigger on every table a policy is built from,
    whenever any of their rows changes, by whatever means: the version a worker keeps a policy's snapshot
    by (``agents/policy_stamp.py``). Written by no Python code but that module."""

    stamp = models.BigIntegerField()

    def __str__(self) -> str:
        return f"policy stamp {self.stamp}"

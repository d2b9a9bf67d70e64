"""Load the policy a run executes under from the database.

The active ``PipelinePolicy`` row of a pipeline plus the shared lists become the plain
``agents.core.policy`` dataclass the core takes. Configuration fails closed: an allowlist that cannot
be read allows nothing, never everything.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from django.apps import apps as django_apps
from django.db import models

from agents.core.llm.endpoints import DEFAULT_ENDPOINT
from agents.core.policy import (
    DECISIONS,
    DEFAULT_CLAIM_FAMILIES,
    DEFAULT_ISSUE_TYPES,
    DEFAULT_REGION_WORDS,
    DEFAULT_REGIONS,
    DEFAULT_ROUTES,
    DEFAULT_VOCABULARY,
    PIPELINE_CHOICES,
    POLICY_CLASSES,
    TEXT_PIPELINES,
    GuardRules,
    ModelSettings,
    Policy,
    TextPolicy,
)
from agents.core.policy import RouteTarget as Route
from agents.models import (
    BUDGET_FIELDS,
    GroundingTerm,
    IssueType,
    PipelinePolicy,
    RegionToken,
    RestrictedClaim,
    RouteTarget,
    policy_fields,
)
from agents.policy_stamp import read_stamp

log = logging.getLogger(__name__)


class PolicyMissing(LookupError):
    """No active policy for a pipeline: the run cannot start (the caller records why)."""

    def __init__(self, pipeline: str):
        self.pipeline = pipeline
        super().__init__(
            f"No active policy for the {pipeline} pipeline: activate one in admin "
            "(Gated pipelines › Pipeline policies)."
        )


def load_policy(pipeline: str, *, proposed: models.Model | None = None) -> Policy:
    """The active policy of ``pipeline`` as its ``agents.core.policy`` dataclass.

    ``proposed``: an unsaved row (a policy, a route, a claim family, a region, an issue type) read
    in place of its stored version, or added when it is new: the policy lab's proposed policy. A
    proposed policy row of this pipeline stands in for the active one, active or not.
    """
    row = _policy_row(pipeline, proposed)
    used = policy_fields(pipeline)
    values = _model_values(row)
    # A budget left empty on the row (only possible outside admin) keeps the contract's default.
    values.update(
        {name: getattr(row, name) for name in BUDGET_FIELDS if name in used and getattr(row, name) is not None}
    )
    if "decisions_policy" in used:
        values.update(_decision_values(row, pipeline))
    if "issue_types" in used:
        values["issue_types"] = _issue_types(proposed)
    if "guard" in used:
        values["guard"] = _guard_rules(row, proposed)
    if "routes" in used:
        values["routes"] = _routes(proposed)
    return POLICY_CLASSES[pipeline](**values)


def _policy_row(pipeline: str, proposed: models.Model | None) -> PipelinePolicy:
    """The proposed policy row of ``pipeline``, else its active one; raises :class:`PolicyMissing`."""
    if pipeline not in POLICY_CLASSES:
        raise ValueError(f"unknown pipeline {pipeline!r}; known: {', '.join(POLICY_CLASSES)}")
    if isinstance(proposed, PipelinePolicy) and proposed.pipeline == pipeline:
        return proposed
    row = PipelinePolicy.objects.filter(pipeline=pipeline, active=True).first()
    if row is None:
        raise PolicyMissing(pipeline)
    return row


def _model_values(row: PipelinePolicy) -> dict[str, Any]:
    """What every pipeline's policy takes from its row: the cost limits, the prompts, the model."""
    return {
        "max_tokens": row.max_tokens,
        "max_cost": float(row.max_cost) if row.max_cost is not None else None,
        # no prefetch: 0.4 ms cheaper; a proposed row not yet saved has no prompts of its own
        "prompts": dict(row.stage_prompts.values_list("stage", "text")) if row.pk is not None else {},
        "model": ModelSettings(
            model=row.model_name,
            endpoint=row.endpoint or DEFAULT_ENDPOINT,
            structured_output=row.structured_output,
            timeout_seconds=float(row.timeout_seconds),
            max_retries=row.max_retries,
            max_completion_tokens=row.max_completion_tokens,
            input_cost_per_1k=float(row.input_cost_per_1k),
            output_cost_per_1k=float(row.output_cost_per_1k),
        ),
    }


def _decision_values(row: PipelinePolicy, pipeline: str) -> dict[str, Any]:
    """A text pipeline's allowlists (execution within policy), its automatic steps and its judge."""
    allowed = _allowlist(row, "decisions_policy")
    executed = _allowlist(row, "decisions_execution")
    if executed - allowed:
        log.warning(
            "policy %s (%s): execution allowlist wider than policy allowlist; %s not executed",
            row.pk, pipeline, sorted(executed - allowed),
        )
    return {"decisions_policy": allowed, "decisions_execution": executed & allowed,
            "auto_revision": row.auto_revision, "auto_publish": row.auto_publish, "judge": row.judge_settings()}


def _issue_types(proposed: models.Model | None) -> dict[str, bool]:
    if isinstance(proposed, IssueType):
        return {t.name: t.high_risk for t in _rows(IssueType, proposed) if t.enabled}
    return dict(IssueType.objects.filter(enabled=True).values_list("name", "high_risk"))


def _guard_rules(row: PipelinePolicy, proposed: models.Model | None) -> GuardRules:
    claims = [c for c in _rows(RestrictedClaim, proposed) if c.enabled]
    regions = [t for t in _rows(RegionToken, proposed) if t.enabled]
    return GuardRules(
        restricted_claims=tuple(c.pattern for c in claims),
        claim_families=tuple(c.as_family() for c in claims),
        regions=tuple(t.token.lower() for t in regions),
        region_words=tuple(t.as_words() for t in regions),
        vocabulary=(tuple(t.as_term() for t in _rows(GroundingTerm, proposed) if t.enabled)
                    if row.grounding else None),
    )


def _routes(proposed: models.Model | None) -> dict[str, Route]:
    return {
        r.name: Route(
            description=r.description, worker=r.worker,
            allowed_policy=r.allowed_policy, allowed_execution=r.allowed_policy and r.allowed_execution,
        )
        for r in _rows(RouteTarget, proposed)
    }


def _rows(model: type[models.Model], proposed: models.Model | None) -> list:
    """The rows of a shared list in the order they were added, ``proposed`` in place of its stored
    version (a new one last)."""
    if not isinstance(proposed, model):
        return list(model.objects.order_by("id"))
    rows = [proposed if row.pk == proposed.pk else row for row in model.objects.order_by("id")]
    return rows if proposed.pk is not None else [*rows, proposed]


def _allowlist(row: PipelinePolicy, name: str) -> frozenset[str]:
    """A decision allowlist; anything but a list of known decisions reads as empty (fail closed)."""
    value = getattr(row, name)
    if isinstance(value, list) and all(isinstance(d, str) and d in DECISIONS for d in value):
        return frozenset(value)
    log.warning(
        "policy %s (%s): %s is not a list of known decisions (%r); reading it as empty",
        row.pk, row.pipeline, name, value,
    )
    return frozenset()


_active_snapshots: dict[str, tuple[int, dict[str, Any]]] = {}  # pipeline -> (policy stamp, snapshot)


def active_policy_snapshot(pipeline: str) -> dict[str, Any]:
    """``load_policy(pipeline).to_dict()`` as JSON data, the snapshot a new run stores, kept in this
    process by the policy stamp (``agents/policy_stamp.py``: one row the database rewrites on any change
    to any table a policy is built from): while nothing of the policy changed, a run starts with one
    plain read. Kept only when the stamp is the same after building it as before, so a change made
    meanwhile is never kept under the old stamp; without a stamp nothing is kept.

    The kept snapshot is shared by every run this process starts (a copy would make ~3,000 objects a
    run for the garbage collector): read it, never change it."""
    stamp = read_stamp()
    kept = _active_snapshots.get(pipeline)
    if stamp is not None and kept is not None and kept[0] == stamp:
        return kept[1]
    snapshot = policy_snapshot(load_policy(pipeline))
    if stamp is not None and read_stamp() == stamp:
        _active_snapshots[pipeline] = (stamp, snapshot)
    return snapshot


_stored_policies: dict[str, tuple[str, dict[str, Any], Policy]] = {}  # pipeline -> the last one a run stored


def stored_policy(pipeline: str, text: str) -> tuple[Policy, dict[str, Any]]:
    """The policy a run stored (its column's JSON text as read), built, and as JSON data. The last one of
    each pipeline is kept in this process by its text: the runs of a worker mostly store the same
    snapshot, which is then neither decoded nor built again. Both are shared: read them, never change them
    (the policy is frozen)."""
    kept = _stored_policies.get(pipeline)
    if kept is None or kept[0] != text:
        data = json.loads(text)
        kept = _stored_policies[pipeline] = (text, data, POLICY_CLASSES[pipeline].from_dict(data))
    return kept[2], kept[1]


def policy_snapshot(policy: Policy) -> dict[str, Any]:
    """What a run stores: ``policy.to_dict()`` as JSON data; ``type(policy).from_dict`` rebuilds it."""
    return json.loads(json.dumps(policy.to_dict()))


# ---------------------------------------------------------------- the contract's defaults as rows

ISSUE_DESCRIPTIONS = {
    "overconfidence": "States something as certain that the context does not make certain.",
    "missing_uncertainty": "Leaves out the uncertainty the context has (an ETA stated as a promise).",
    "contradiction": "Contradicts the context or itself.",
    "scope_leak": "Goes beyond what the update is about, or beyond the incident's facts.",
    "policy_violation": "Breaks a communication policy. High risk: escalates to a person.",
    "legal_risk": "Could create a legal commitment or liability. High risk: escalates to a person.",
}
CLAIM_NOTES = {
    "resolution": "“resolved” while it is not, “the outage is over”…",
    "recovery": "“fully recovered”, “back to normal”, “fully restored”…",
    "closure": "“incident closed”, “the incident has been closed”…",
    "stability": "“all payments are stable”, “stable again”, “stabilised”…",
    "guarantees": "“guaranteed”, “we promise”, “we assure you”…",
    "absolute assurances": "“never happen again”, “completely safe”, “nothing to worry about”…",
    "time promises": "With avoid_absolute_guarantees: “fixed within 45 minutes”, “by 14:00 at the latest”; "
                     "hedged estimates pass.",
    "working again": "“is working again”, “returned to normal levels”, “no longer affected”… while it is "
                     "investigated or identified.",
    "still ongoing": "“still ongoing”, “we are investigating the errors”… on a resolved incident.",
    "planned work": "“planned outage”, “scheduled maintenance”… unless the incident is maintenance.",
    "credits and refunds": "“you will receive a service credit”, “we will refund”, “fees will be waived”…",
    "goodwill gifts": "“your next delivery fee is on us”, “a complimentary month”, “as a thank-you, …”",
    "fault and negligence": "“our fault”, “negligence”, “we take full responsibility”…",
    "data reassurance": "“your data is safe”, “no account data was lost or accessed”…",
    "data breach": "“data breach”, “hacked”, “unauthorised access”…",
    "time commitments": "“within the hour”, “shortly”, “done within minutes”… for the fix; a sentence about "
                        "the next update passes.",
    "fix under way": "“a fix is being rolled out”, “we have identified why”… while it is still investigated.",
    "fix in place": "“fixed”, “a fix has been implemented”, “monitoring the results”… before it is monitoring, "
                    "unless a fact says the fix is in.",
    "not yet closed": "“before closing this incident”… once it is resolved.",
    "why unknown": "“we are still looking into why”… once the cause is identified.",
}


def claim_row_values(family, model) -> dict:
    """A default family as a RestrictedClaim row's values, for the columns ``model`` has (the data
    migration 0002 runs with the model as it was before families)."""
    values = {"pattern": family.pattern, "note": CLAIM_NOTES.get(family.name, ""), "family": family.name,
              "paraphrases": "\n".join(family.paraphrases), "hedges": ", ".join(family.hedges),
              "strict_only": family.strict_only, "kind": family.check, "support": family.support,
              "supported_by": "\n".join(family.supported_by), "hedging": family.hedging}
    columns = {f.name for f in model._meta.get_fields()}
    return {k: v for k, v in values.items() if k in columns}


def add_default_families(apps, schema_editor, names: tuple[str, ...]) -> None:
    """A data migration's step: the default families ``names`` join a store whose families were
    installed before (one with a row of the same name or pattern keeps it); an empty store gets every
    default from install_defaults instead."""
    claim = apps.get_model("agents", "RestrictedClaim")
    rows = claim.objects.using(schema_editor.connection.alias)
    if not rows.exists():
        return
    defaults = {family.name: family for family in DEFAULT_CLAIM_FAMILIES}
    for name in names:
        if not rows.filter(family=name).exists() and not rows.filter(pattern=defaults[name].pattern).exists():
            rows.create(**claim_row_values(defaults[name], claim))


def remove_default_families(apps, schema_editor, names: tuple[str, ...]) -> None:
    """The step undone: the default families ``names`` leave the store (a row whose pattern an admin
    changed stays)."""
    patterns = {family.pattern for family in DEFAULT_CLAIM_FAMILIES if family.name in names}
    rows = apps.get_model("agents", "RestrictedClaim").objects.using(schema_editor.connection.alias)
    rows.filter(family__in=names, pattern__in=patterns).delete()


def add_default_terms(apps, schema_editor, texts: tuple[str, ...], *, advice: tuple[str, ...] = (),
                      action: tuple[str, ...] = (), mark_held: bool = False):
    """A data migration's step: the vocabulary terms ``texts`` join a store whose terms were installed
    before (``advice`` / ``action`` marking some of them); a term the store holds stays as its admins
    left it, unless ``mark_held``: then a held term of ``advice`` / ``action`` gets that mark too.
    Returns the store's rows for the migration's further steps, or None for an empty store, which gets
    every default from install_defaults after migrating."""
    term = apps.get_model("agents", "GroundingTerm")
    rows = term.objects.using(schema_editor.connection.alias)
    if not rows.exists():
        return None
    have = set(rows.values_list("text", flat=True))
    marks = (lambda text: {"action": text in action}) if action else (lambda text: {})  # no column before 0032
    rows.bulk_create(term(text=text, advice=text in advice, **marks(text)) for text in texts if text not in have)
    if mark_held:
        rows.filter(text__in=action).update(action=True)
        rows.filter(text__in=advice).update(advice=True)
    return rows


def family_rows(apps, schema_editor, family: str):
    """A claim family's rows whose canonical pattern is still the default one: an admin's own pattern
    marks a row a data migration leaves alone."""
    from agents.core.policy import DEFAULT_CLAIM_FAMILIES

    pattern = next(f for f in DEFAULT_CLAIM_FAMILIES if f.name == family).pattern
    model = apps.get_model("agents", "RestrictedClaim")
    return model.objects.using(schema_editor.connection.alias).filter(family=family, pattern=pattern)


def add_paraphrases(apps, schema_editor, family: str, new: list[str], field: str = "paraphrases"):
    """A data migration's step: ``new`` lines join the family's default rows (their paraphrases, or
    another list of patterns: ``field="supported_by"``)."""
    for row in family_rows(apps, schema_editor, family):
        lines = [line for line in getattr(row, field).splitlines() if line.strip()]
        added = [line for line in new if line not in lines]
        if added:
            setattr(row, field, "\n".join([*lines, *added]))
            row.save(update_fields=[field])


def remove_paraphrases(apps, schema_editor, family: str, new: list[str], field: str = "paraphrases"):
    """The step undone: the ``new`` lines leave the family's default rows."""
    for row in family_rows(apps, schema_editor, family):
        lines = [line for line in getattr(row, field).splitlines() if line.strip()]
        if set(new) & set(lines):
            setattr(row, field, "\n".join(line for line in lines if line not in new))
            row.save(update_fields=[field])


def region_row_values(token: str, model) -> dict:
    values = {"token": token, "words": ", ".join(DEFAULT_REGION_WORDS.get(token, ()))}
    columns = {f.name for f in model._meta.get_fields()}
    return {k: v for k, v in values.items() if k in columns}
POLICY_TABLES = ("PipelinePolicy", "IssueType", "RouteTarget", "RestrictedClaim", "RegionToken", "PolicyChange")


def install_defaults(apps=None, using: str = "default") -> bool:
    """Fill an empty policy store with the contract's defaults read from ``agents.core.policy``.

    Runs from the data migration (with its historical ``apps``) and after every ``migrate`` or
    ``flush`` (a post_migrate hook, so a flushed database does not leave every run PolicyMissing).
    A store with any policy row, list row or recorded change is left alone: defaults never come
    back over what an admin deleted. Returns whether it installed anything.
    """
    if apps is None:
        from django.apps import apps
    model = {name: apps.get_model("agents", name) for name in POLICY_TABLES}
    if any(model[name].objects.using(using).exists() for name in POLICY_TABLES):
        return False

    for pipeline, cls in POLICY_CLASSES.items():
        policy, text = cls(), issubclass(cls, TextPolicy)
        budgets = {name: getattr(policy, name) for name in BUDGET_FIELDS if name in policy_fields(pipeline)}
        model["PipelinePolicy"].objects.using(using).create(
            pipeline=pipeline,
            name=f"{pipeline.replace('_', '-').capitalize()} default",
            active=True,
            auto_revision=getattr(policy, "auto_revision", True),
            decisions_policy=[d for d in DECISIONS if text and d in policy.decisions_policy],
            decisions_execution=[d for d in DECISIONS if text and d in policy.decisions_execution],
            max_tokens=policy.max_tokens,
            max_cost=policy.max_cost,
            model_name=policy.model.model,  # the endpoint stays blank: "default" (a column 0002 lacks)
            structured_output=policy.model.structured_output,
            timeout_seconds=policy.model.timeout_seconds,
            max_retries=policy.model.max_retries,
            input_cost_per_1k=str(policy.model.input_cost_per_1k),
            output_cost_per_1k=str(policy.model.output_cost_per_1k),
            **budgets,
        )
    model["IssueType"].objects.using(using).bulk_create(
        model["IssueType"](name=name, high_risk=high, description=ISSUE_DESCRIPTIONS.get(name, ""))
        for name, high in DEFAULT_ISSUE_TYPES.items()
    )
    model["RouteTarget"].objects.using(using).bulk_create(
        model["RouteTarget"](name=name, description=route.description, worker=route.worker,
                             allowed_policy=route.allowed_policy, allowed_execution=route.allowed_execution)
        for name, route in DEFAULT_ROUTES.items()
    )
    claim = model["RestrictedClaim"]
    claim.objects.using(using).bulk_create(claim(**claim_row_values(f, claim)) for f in DEFAULT_CLAIM_FAMILIES)
    region = model["RegionToken"]
    region.objects.using(using).bulk_create(region(**region_row_values(t, region)) for t in DEFAULT_REGIONS)
    install_vocabulary(apps, using)
    return True


def install_vocabulary(apps=None, using: str = "default") -> None:
    """The grounding vocabulary's first terms (agents.core.vocabulary), into an empty vocabulary."""
    try:
        term = (apps or django_apps).get_model("agents", "GroundingTerm")
    except LookupError:  # a data migration from before the vocabulary: its own migration installs it
        return
    if not term.objects.using(using).exists():
        # A migration's model from before the action flag has no such field.
        has_action = any(f.name == "action" for f in term._meta.get_fields())
        term.objects.using(using).bulk_create(
            term(text=text, advice=advice, **({"action": action} if has_action else {}))
            for text, advice, action in DEFAULT_VOCABULARY)


def install_defaults_after_migrate(sender, using="default", apps=None, **kwargs) -> None:
    """The post_migrate hook: a flush (``manage.py flush``, a transactional test's teardown) empties
    the tables the data migration filled; without this every later run would stop PolicyMissing."""
    try:
        install_defaults(apps, using=using)
    except LookupError:  # migrated back to before these models exist
        pass


def brakes_on() -> list[str]:
    """The pipelines (display names) whose active policy has auto-revision off: the emergency brake
    holds them, so a revision their reviewer asks for stops and goes to a person (one query)."""
    labels = dict(PIPELINE_CHOICES)
    rows = (PipelinePolicy.objects.filter(active=True, auto_revision=False, pipeline__in=TEXT_PIPELINES)
            .order_by("pipeline").values_list("pipeline", flat=True).distinct())
    return [labels.get(pipeline, pipeline) for pipeline in rows]

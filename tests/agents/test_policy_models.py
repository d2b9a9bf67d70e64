"""Policy rows: the contract's defaults as data, and load_policy failing closed."""

import dataclasses
import json
import logging

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.db import IntegrityError, transaction
from django.db.models import JSONField, Value

from agents.core.policy import (
    DEFAULT_ISSUE_TYPES,
    DEFAULT_REGIONS,
    DEFAULT_RESTRICTED_CLAIMS,
    DEFAULT_ROUTES,
    POLICY_CLASSES,
    ReflectionPolicy,
    RoutingPolicy,
    SelfCritiquePolicy,
)
from agents.models import (
    IssueType,
    PipelinePolicy,
    PolicyChange,
    RegionToken,
    RestrictedClaim,
    RouteTarget,
    StagePrompt,
)
from agents.policy_rows import PolicyMissing, install_defaults, load_policy, policy_snapshot

pytestmark = pytest.mark.django_db


def active(pipeline):
    return PipelinePolicy.objects.get(pipeline=pipeline, active=True)


@pytest.mark.parametrize("cls", [ReflectionPolicy, SelfCritiquePolicy, RoutingPolicy])
def test_migration_creates_an_active_policy_equal_to_the_contract_defaults(cls):
    loaded, default = load_policy(cls.pipeline), cls()
    assert type(loaded) is cls
    for f in dataclasses.fields(cls):
        assert getattr(loaded, f.name) == getattr(default, f.name), f.name
    assert loaded == default


def test_migration_creates_the_shared_lists_with_the_contracts_defaults():
    assert dict(IssueType.objects.values_list("name", "high_risk")) == DEFAULT_ISSUE_TYPES
    assert {n for n, high in DEFAULT_ISSUE_TYPES.items() if high} == {"legal_risk", "policy_violation"}
    assert list(RestrictedClaim.objects.values_list("pattern", flat=True)) == list(DEFAULT_RESTRICTED_CLAIMS)
    assert list(RegionToken.objects.values_list("token", flat=True)) == list(DEFAULT_REGIONS)
    routes = {r.name: r for r in RouteTarget.objects.all()}
    assert set(routes) == set(DEFAULT_ROUTES)
    for name, route in routes.items():
        assert (route.worker, route.allowed_policy, route.allowed_execution) == (name, True, True)
        assert route.description == DEFAULT_ROUTES[name].description


def test_each_pipeline_has_exactly_one_active_policy():
    counts = {p: PipelinePolicy.objects.filter(pipeline=p, active=True).count() for p in POLICY_CLASSES}
    assert counts == {"reflection": 1, "self_critique": 1, "routing": 1}


def test_database_refuses_a_second_active_policy_for_a_pipeline():
    with pytest.raises(IntegrityError), transaction.atomic():
        PipelinePolicy.objects.create(pipeline="reflection", name="Second", active=True)


def test_validation_names_the_policy_that_is_already_active():
    second = PipelinePolicy(pipeline="reflection", name="Second", active=True)
    with pytest.raises(ValidationError) as error:
        second.full_clean()
    assert "“Reflection default” is already the active reflection policy" in str(error.value)


def test_load_policy_reflects_a_changed_row():
    PipelinePolicy.objects.filter(pipeline="reflection").update(
        max_seconds=45, max_draft_chars=700, min_patch_similarity=0.6, auto_revision=False,
        decisions_execution=["approve", "escalate"], max_tokens=5000, model_name="local-model",
        endpoint="local", structured_output="json",
    )
    StagePrompt.objects.create(policy=active("reflection"), stage="draft", text="Be brief. Call submit_draft.")
    policy = load_policy("reflection")
    assert (policy.max_seconds, policy.max_draft_chars, policy.min_patch_similarity) == (45, 700, 0.6)
    assert policy.auto_revision is False and policy.execution_allowlist == {"approve", "escalate"}
    assert policy.max_tokens == 5000 and policy.max_cost is None
    assert (policy.model.model, policy.model.endpoint, policy.model.structured_output) == (
        "local-model", "local", "json")
    assert policy.prompts == {"draft": "Be brief. Call submit_draft."}


def test_switching_auto_revision_off_removes_revise_from_execution():
    PipelinePolicy.objects.filter(pipeline="self_critique").update(auto_revision=False)
    assert load_policy("self_critique").execution_allowlist == {"approve", "escalate"}


def test_an_empty_allowlist_allows_nothing():
    PipelinePolicy.objects.filter(pipeline="reflection").update(decisions_policy=[], decisions_execution=[])
    policy = load_policy("reflection")
    assert policy.decisions_policy == frozenset() and policy.execution_allowlist == frozenset()


JSON_NULL = Value(None, JSONField())


@pytest.mark.parametrize("corrupt", ["approve", {"approve": True}, ["approve", "ship_it"], [1, 2], JSON_NULL])
def test_a_corrupt_allowlist_reads_as_empty_and_logs_a_warning(corrupt, caplog):
    PipelinePolicy.objects.filter(pipeline="reflection").update(decisions_policy=corrupt)
    with caplog.at_level(logging.WARNING, logger="agents.policy_rows"):
        policy = load_policy("reflection")
    assert policy.decisions_policy == frozenset()
    assert policy.execution_allowlist == frozenset()  # never wider than the policy allowlist
    assert any("decisions_policy" in r.getMessage() and r.levelno == logging.WARNING for r in caplog.records)


def test_an_execution_allowlist_wider_than_policy_is_cut_back_to_it(caplog):
    PipelinePolicy.objects.filter(pipeline="reflection").update(decisions_policy=["approve", "escalate"])
    with caplog.at_level(logging.WARNING, logger="agents.policy_rows"):
        policy = load_policy("reflection")
    assert policy.execution_allowlist == {"approve", "escalate"}
    assert "wider than policy allowlist" in caplog.text


def test_disabled_issue_types_claims_and_regions_are_left_out():
    IssueType.objects.filter(name="scope_leak").update(enabled=False)
    RestrictedClaim.objects.filter(pattern=r"\bresolved\b").update(enabled=False)
    RegionToken.objects.filter(token="latam").update(enabled=False)
    policy = load_policy("self_critique")
    assert "scope_leak" not in policy.issue_types and len(policy.issue_types) == 5
    # The defaults are seven claim families (once four patterns); the disabled one goes
    # with its paraphrases.
    assert r"\bresolved\b" not in policy.guard.restricted_claims
    assert len(policy.guard.restricted_claims) == len(DEFAULT_RESTRICTED_CLAIMS) - 1
    assert "resolution" not in [f.name for f in policy.guard.families()]
    assert "latam" not in policy.guard.regions and len(policy.guard.regions) == 7


def test_routes_are_keyed_by_name_with_their_switches():
    RouteTarget.objects.filter(name="sales_specialist").update(allowed_execution=False)
    routes = load_policy("routing").routes
    assert set(routes) == set(DEFAULT_ROUTES)
    assert routes["sales_specialist"].allowed_execution is False
    assert routes["billing_specialist"].worker == "billing_specialist"


def test_no_active_policy_raises_policy_missing_with_a_clear_message():
    PipelinePolicy.objects.filter(pipeline="routing").update(active=False)
    with pytest.raises(PolicyMissing, match="No active policy for the routing pipeline") as error:
        load_policy("routing")
    assert error.value.pipeline == "routing"


@pytest.mark.parametrize("pipeline", list(POLICY_CLASSES))
def test_snapshot_is_json_and_round_trips_through_from_dict(pipeline):
    PipelinePolicy.objects.filter(pipeline=pipeline).update(max_cost="1.25", max_tokens=900)
    policy = load_policy(pipeline)
    snapshot = policy_snapshot(policy)
    assert snapshot == json.loads(json.dumps(snapshot))
    assert snapshot["pipeline"] == pipeline and snapshot["max_cost"] == 1.25
    assert type(policy).from_dict(snapshot) == policy


def test_a_prompt_for_a_stage_its_pipeline_lacks_is_refused_naming_the_stages():
    prompt = StagePrompt(policy=active("routing"), stage="draft", text="Call submit_draft.")
    with pytest.raises(
        ValidationError, match="The routing pipeline has no draft stage; its stages are route, finalize."
    ):
        prompt.full_clean()


def test_the_finalize_prompt_has_no_tool_to_keep():
    StagePrompt(policy=active("routing"), stage="finalize", text="Answer in two sentences.").full_clean()


def test_a_row_keeps_only_its_pipelines_budgets_and_fills_blank_ones_with_defaults():
    row = PipelinePolicy(pipeline="routing", name="Lean", max_draft_chars=500)
    row.full_clean()
    assert row.max_draft_chars is None and row.max_route_attempts == 3 and row.max_seconds == 60
    assert row.decisions_policy == [] and row.decisions_execution == []


def test_defaults_are_not_installed_over_existing_policy_data():
    RegionToken.objects.filter(token="latam").delete()
    assert install_defaults() is False
    assert not RegionToken.objects.filter(token="latam").exists()


def test_defaults_are_not_reinstalled_once_an_admin_has_changed_anything():
    for model in (PipelinePolicy, IssueType, RouteTarget, RestrictedClaim, RegionToken):
        model.objects.all().delete()
    PolicyChange.objects.create(model_label="agents.regiontoken", object_id="1", object_repr="us", action="deleted")
    assert install_defaults() is False
    with pytest.raises(PolicyMissing):
        load_policy("reflection")


@pytest.mark.django_db(transaction=True)
def test_a_flushed_database_gets_the_contract_defaults_back():
    PipelinePolicy.objects.filter(pipeline="reflection").update(max_seconds=99)
    call_command("flush", interactive=False, verbosity=0)
    assert load_policy("reflection") == ReflectionPolicy()
    assert load_policy("routing") == RoutingPolicy()
    assert RegionToken.objects.count() == len(DEFAULT_REGIONS)

"""Policies in admin: validated on save, every change recorded, the record read-only."""

from decimal import Decimal

import pytest

from agents.models import (
    BUDGET_RANGES,
    PipelinePolicy,
    PolicyChange,
    RegionToken,
    RestrictedClaim,
    RouteTarget,
    StagePrompt,
)
from agents.policy_rows import load_policy
from tests.agents.conftest import admin_url, form_data, post_add, post_change
from tests.factories import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def boss(db):
    return make_user("boss", staff=True, email="boss@example.com")


@pytest.fixture
def admin_client(client, boss):
    client.force_login(boss)
    return client


def reflection_policy():
    return PipelinePolicy.objects.get(pipeline="reflection", active=True)


def assert_refused(response, message: str):
    assert response.status_code == 200, "a refused form is shown again, not redirected"
    assert message in response.content.decode()


# ---------------------------------------------------------------- refusals


def test_restricted_claim_that_does_not_compile_is_refused_naming_the_regex_error(admin_client):
    response = post_add(admin_client, "restrictedclaim", pattern=r"\bfixed(", enabled="on")
    assert_refused(response, "This pattern cannot be used: the linear-time engine (RE2) refuses it (missing ): ")
    assert not RestrictedClaim.objects.filter(pattern=r"\bfixed(").exists()


def test_restricted_claim_matching_every_text_is_refused(admin_client):
    response = post_add(admin_client, "restrictedclaim", pattern=r"(fixed)?", enabled="on")
    assert_refused(response, "matches the empty text")


def test_execution_allowlist_wider_than_policy_is_refused_naming_the_extra_decision(admin_client):
    response = post_change(
        admin_client, "pipelinepolicy", reflection_policy(),
        decisions_policy=["approve", "escalate"], decisions_execution=["approve", "revise", "escalate"],
    )
    assert_refused(response, "The execution allowlist is wider than the policy allowlist: revise not allowed by policy")
    assert reflection_policy().decisions_policy == ["approve", "revise", "escalate"]


@pytest.mark.parametrize(
    "field, value",
    [("max_seconds", "5000"), ("max_draft_chars", "10"), ("min_patch_similarity", "1.5"),
     ("max_review_issues", "51"), ("max_cost", "-1")],
)
def test_budget_out_of_range_is_refused_with_the_range(admin_client, field, value):
    response = post_change(admin_client, "pipelinepolicy", reflection_policy(), **{field: value})
    low, high = BUDGET_RANGES[field]
    assert_refused(response, f"Must be between {low} and {high}")
    assert PolicyChange.objects.count() == 0


def test_self_critique_attempts_out_of_range_are_refused(admin_client):
    policy = PipelinePolicy.objects.get(pipeline="self_critique", active=True)
    response = post_change(
        admin_client, "pipelinepolicy", policy, max_revise_attempts="0", max_length_increase_pct="600"
    )
    assert_refused(response, "Must be between 1 and 10")
    assert "Must be between 0 and 500" in response.content.decode()


def test_stage_prompt_without_its_tool_is_refused_naming_the_tool(admin_client):
    policy = reflection_policy()
    response = post_change(admin_client, "pipelinepolicy", policy, **{
        "stage_prompts-TOTAL_FORMS": "1", "stage_prompts-0-stage": "draft",
        "stage_prompts-0-text": "Write a calm, short customer update.",
    })
    assert_refused(response, "The draft prompt must keep its tool: name “submit_draft”")
    assert not StagePrompt.objects.exists()


def test_stage_prompt_for_a_stage_the_pipeline_lacks_is_refused(admin_client):
    response = post_change(admin_client, "pipelinepolicy", reflection_policy(), **{
        "stage_prompts-TOTAL_FORMS": "1", "stage_prompts-0-stage": "route",
        "stage_prompts-0-text": "Call route.",
    })
    assert_refused(response, "Select a valid choice. route is not one of the available choices.")
    stages = response.context["inline_admin_formsets"][0].formset.form.base_fields["stage"].choices
    assert [value for value, _ in stages] == ["", "draft", "review", "revise", "judge"]


def test_activating_a_second_policy_for_a_pipeline_is_refused_with_a_message(admin_client):
    response = post_add(admin_client, "pipelinepolicy", "?pipeline=reflection",
                        pipeline="reflection", name="Stricter", active="on")
    assert_refused(response, "“Reflection default” is already the active reflection policy")
    assert PipelinePolicy.objects.filter(pipeline="reflection").count() == 1


def test_region_token_must_be_a_single_word(admin_client):
    response = post_add(admin_client, "regiontoken", token="north america", enabled="on")
    assert_refused(response, "A region token must be a single word of letters")
    assert not RegionToken.objects.filter(token__icontains="north").exists()


def test_route_target_with_an_unknown_worker_is_refused_listing_the_registered_ones(admin_client):
    route = RouteTarget.objects.get(name="sales_specialist")
    response = post_change(admin_client, "routetarget", route, worker="sales_bot")
    assert_refused(
        response,
        "No worker named “sales_bot” is registered. Registered workers: "
        "billing_specialist, sales_specialist, technical_specialist.",
    )


def test_route_allowed_in_execution_but_not_by_policy_is_refused(admin_client):
    route = RouteTarget.objects.get(name="sales_specialist")
    data = form_data(admin_client.get(admin_url("routetarget", "change", route.pk)))
    del data["allowed_policy"]
    response = admin_client.post(admin_url("routetarget", "change", route.pk), data)
    assert_refused(response, "Allowed in execution is wider than allowed by policy")


# ---------------------------------------------------------------- recorded changes


def test_a_valid_change_is_saved_and_recorded_with_who_before_and_after(admin_client, boss):
    policy = reflection_policy()
    response = post_change(admin_client, "pipelinepolicy", policy, max_seconds="45", max_tokens="8000")
    assert response.status_code == 302
    assert (load_policy("reflection").max_seconds, load_policy("reflection").max_tokens) == (45, 8000)
    change = PolicyChange.objects.get()
    assert (change.user, change.username, change.action, change.model_label) == (
        boss, "boss", "changed", "agents.pipelinepolicy")
    assert (change.before["max_seconds"], change.after["max_seconds"]) == (30, 45)
    assert (change.before["max_tokens"], change.after["max_tokens"]) == (None, 8000)
    assert change.changed_fields == ["max_seconds", "max_tokens"] and change.policy == policy


def test_saving_an_unchanged_form_records_nothing(admin_client):
    assert post_change(admin_client, "pipelinepolicy", reflection_policy()).status_code == 302
    assert PolicyChange.objects.count() == 0


def test_a_stage_prompt_added_inline_is_saved_and_recorded(admin_client):
    policy = reflection_policy()
    response = post_change(admin_client, "pipelinepolicy", policy, **{
        "stage_prompts-TOTAL_FORMS": "1", "stage_prompts-0-stage": "review",
        "stage_prompts-0-text": "Review strictly. Call reflect.",
    })
    assert response.status_code == 302
    assert load_policy("reflection").prompts == {"review": "Review strictly. Call reflect."}
    change = PolicyChange.objects.get()
    assert (change.model_label, change.action, change.policy) == ("agents.stageprompt", "added", policy)
    assert change.after["text"] == "Review strictly. Call reflect." and change.before is None


def test_an_inline_prompt_change_and_delete_are_recorded_with_before(admin_client):
    policy = reflection_policy()
    prompt = StagePrompt.objects.create(policy=policy, stage="draft", text="Call submit_draft.")
    post_change(admin_client, "pipelinepolicy", policy, **{"stage_prompts-0-text": "Be brief. Call submit_draft."})
    post_change(admin_client, "pipelinepolicy", policy, **{"stage_prompts-0-DELETE": "on"})
    changed, deleted = PolicyChange.objects.order_by("id")
    assert (changed.action, changed.before["text"], changed.after["text"]) == (
        "changed", "Call submit_draft.", "Be brief. Call submit_draft.")
    assert (deleted.action, deleted.object_id, deleted.before["text"], deleted.after) == (
        "deleted", str(prompt.pk), "Be brief. Call submit_draft.", None)


def test_adding_a_shared_list_row_is_recorded(admin_client, boss):
    response = post_add(admin_client, "regiontoken", token="MENA", enabled="on")
    assert response.status_code == 302
    token = RegionToken.objects.get(token="mena")  # stored lower-case
    change = PolicyChange.objects.get()
    assert (change.action, change.object_id, change.after["token"], change.user) == (
        "added",
        str(token.pk),
        "mena",
        boss,
    )


def test_delete_through_admin_is_recorded_with_before(admin_client):
    claim = RestrictedClaim.objects.get(pattern=r"\bincident\s+closed\b")
    response = admin_client.post(admin_url("restrictedclaim", "delete", claim.pk), {"post": "yes"})
    assert response.status_code == 302 and not RestrictedClaim.objects.filter(pk=claim.pk).exists()
    change = PolicyChange.objects.get()
    assert (change.action, change.object_id, change.before["pattern"], change.after) == (
        "deleted", str(claim.pk), r"\bincident\s+closed\b", None)


def test_bulk_delete_records_each_row_and_a_deleted_policy_takes_its_prompts_along(admin_client):
    policy = PipelinePolicy.objects.create(pipeline="routing", name="Spare")
    StagePrompt.objects.create(policy=policy, stage="route", text="Call route.")
    response = admin_client.post(admin_url("pipelinepolicy", "changelist"), {
        "action": "delete_selected", "_selected_action": [policy.pk], "post": "yes",
    })
    assert response.status_code == 302 and not PipelinePolicy.objects.filter(pk=policy.pk).exists()
    records = {(c.model_label, c.action) for c in PolicyChange.objects.all()}
    assert records == {("agents.pipelinepolicy", "deleted"), ("agents.stageprompt", "deleted")}


def test_policy_change_page_shows_the_history_of_changes(admin_client):
    policy = reflection_policy()
    post_change(admin_client, "pipelinepolicy", policy, max_seconds="40")
    page = admin_client.get(admin_url("pipelinepolicy", "change", policy.pk)).content.decode()
    assert "History of changes" in page and "max_seconds" in page
    assert f"?policy__id__exact={policy.pk}" in page
    listing = admin_client.get(admin_url("policychange", "changelist") + f"?policy__id__exact={policy.pk}")
    assert listing.status_code == 200 and "Reflection: Reflection default" in listing.content.decode()


def test_routing_policy_page_shows_only_routing_budgets(admin_client):
    policy = PipelinePolicy.objects.get(pipeline="routing", active=True)
    form = admin_client.get(admin_url("pipelinepolicy", "change", policy.pk)).context["adminform"].form
    assert {"max_route_attempts", "max_delegations", "max_seconds"} <= set(form.fields)
    assert not {"max_draft_chars", "auto_revision", "decisions_policy"} & set(form.fields)


def test_reflection_policy_page_leads_with_the_emergency_brake(admin_client):
    page = admin_client.get(admin_url("pipelinepolicy", "change", reflection_policy().pk)).content.decode()
    assert page.index("Emergency brake") < page.index("Budgets")
    assert "max_risks" not in page and "max_route_attempts" not in page


# ---------------------------------------------------------------- the record is read-only


def test_policy_change_cannot_be_added_or_changed_in_admin(admin_client):
    post_change(admin_client, "pipelinepolicy", reflection_policy(), max_seconds="40")
    change = PolicyChange.objects.get()
    assert admin_client.get(admin_url("policychange", "add")).status_code == 403
    assert admin_client.post(admin_url("policychange", "add"), {"action": "added"}).status_code == 403
    assert admin_client.post(admin_url("policychange", "change", change.pk), {"action": "deleted"}).status_code == 403
    assert admin_client.post(admin_url("policychange", "delete", change.pk), {"post": "yes"}).status_code == 403
    assert PolicyChange.objects.get().action == "changed"
    assert admin_client.get(admin_url("policychange", "changelist")).status_code == 200
    page = admin_client.get(admin_url("policychange", "change", change.pk)).content.decode()
    assert "<td>max_seconds</td><td>30</td><td>40</td>" in page


# ---------------------------------------------------------------- the emergency brake


def test_auto_revision_action_switches_it_off_and_records_the_change(admin_client, boss):
    policies = PipelinePolicy.objects.filter(active=True)
    response = admin_client.post(admin_url("pipelinepolicy", "changelist"), {
        "action": "switch_auto_revision_off", "_selected_action": [p.pk for p in policies],
    }, follow=True)
    assert "Auto-revision switched off for 2 policies." in response.content.decode()
    assert load_policy("reflection").execution_allowlist == {"approve", "escalate"}
    assert load_policy("self_critique").auto_revision is False
    changes = PolicyChange.objects.all()
    assert len(changes) == 2
    assert all((c.before["auto_revision"], c.after["auto_revision"], c.user) == (True, False, boss) for c in changes)


def test_auto_revision_can_be_switched_back_on(admin_client):
    PipelinePolicy.objects.update(auto_revision=False)
    admin_client.post(admin_url("pipelinepolicy", "changelist"), {
        "action": "switch_auto_revision_on", "_selected_action": [reflection_policy().pk],
    })
    assert load_policy("reflection").auto_revision is True
    assert PolicyChange.objects.get().after["auto_revision"] is True


def test_a_new_policy_for_a_pipeline_gets_the_contract_defaults_for_blank_budgets(admin_client):
    response = post_add(admin_client, "pipelinepolicy", "?pipeline=self_critique",
                        pipeline="self_critique", name="Draft copy", max_seconds="", max_cost="0.50")
    assert response.status_code == 302
    row = PipelinePolicy.objects.get(name="Draft copy")
    assert (row.max_seconds, row.max_answer_chars, row.max_revise_attempts, row.max_route_attempts) == (
        120,
        980,
        3,
        None,
    )
    assert row.max_cost == Decimal("0.50") and row.active is False
    assert PolicyChange.objects.get().action == "added"

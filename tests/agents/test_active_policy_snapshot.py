"""A run's policy snapshot is kept per process by the policy's version: the same snapshot as building
it, no building while nothing changed, and any change to any row the policy is built from (however it
was made) gives the next run the changed policy."""

import json
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from agents.models import (
    GroundingTerm,
    IssueType,
    PipelinePolicy,
    RegionToken,
    RestrictedClaim,
    RouteTarget,
    StagePrompt,
)
from agents.policy_rows import active_policy_snapshot, load_policy
from agents.tasks import start_run

pytestmark = pytest.mark.django_db

PIPELINES = ("reflection", "self_critique", "routing")


def tables_read(queries) -> set[str]:
    return {table for q in queries.captured_queries for table in re.findall(r'(?:FROM|JOIN) "(\w+)"', q["sql"])}


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_the_version_covers_every_table_the_policy_is_built_from(pipeline):
    PipelinePolicy.objects.filter(pipeline=pipeline, active=True).update(grounding=True)
    with CaptureQueriesContext(connection) as built:
        load_policy(pipeline)
    active_policy_snapshot(pipeline)
    with CaptureQueriesContext(connection) as versioned:  # kept: the version's reads alone
        active_policy_snapshot(pipeline)
    assert tables_read(built) <= tables_read(versioned), (
        f"load_policy reads {tables_read(built) - tables_read(versioned)}, which the policy version does not cover")


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_the_kept_snapshot_is_the_built_one_and_is_not_built_again(pipeline):
    first = active_policy_snapshot(pipeline)
    with CaptureQueriesContext(connection) as queries:
        again = active_policy_snapshot(pipeline)
    assert json.dumps(again, sort_keys=True) == json.dumps(first, sort_keys=True) == json.dumps(
        load_policy(pipeline).to_dict(), sort_keys=True)
    assert again is not first
    # Only the version's plain reads: one a table, none of the ORM's queries with their joins and orders.
    assert all(q["sql"].startswith("SELECT * FROM") for q in queries.captured_queries), queries.captured_queries


CHANGES = {
    "the policy row": lambda: PipelinePolicy.objects.filter(pipeline="reflection", active=True).update(
        max_draft_chars=321),
    "a stage prompt": lambda: StagePrompt.objects.create(
        policy=PipelinePolicy.objects.get(pipeline="reflection", active=True), stage="draft",
        text="Call submit_draft. Write the update."),
    "an issue type": lambda: IssueType.objects.filter(name="scope_leak").update(high_risk=True),
    "a claim family": lambda: RestrictedClaim.objects.filter(pk=RestrictedClaim.objects.order_by("id")[0].pk).update(
        enabled=False),
    "a region": lambda: RegionToken.objects.filter(pk=RegionToken.objects.order_by("id")[0].pk).update(enabled=False),
    "a grounding term": lambda: GroundingTerm.objects.create(text="kept in check"),
}


@pytest.mark.parametrize("change", CHANGES)
def test_any_change_to_a_row_of_the_policy_reaches_the_next_run(change):
    PipelinePolicy.objects.filter(pipeline="reflection", active=True).update(grounding=True)
    before, _ = start_run(pipeline="reflection", goal="Update", context={"incident": {"status": "degraded"}},
                          enqueue=False)
    CHANGES[change]()  # an UPDATE or INSERT of its own, as a shell or another process makes it
    after, _ = start_run(pipeline="reflection", goal="Update", context={"incident": {"status": "degraded"}},
                         enqueue=False)
    built = json.loads(json.dumps(load_policy("reflection").to_dict()))
    before.refresh_from_db()
    after.refresh_from_db()  # what the runs stored
    assert after.policy == built != before.policy


def test_a_route_switched_off_reaches_the_next_routing_run():
    before, _ = start_run(pipeline="routing", goal="refund user_id=42", enqueue=False)
    RouteTarget.objects.filter(name="billing_specialist").update(allowed_execution=False)
    after, _ = start_run(pipeline="routing", goal="refund user_id=42", enqueue=False)
    before.refresh_from_db()
    after.refresh_from_db()
    assert before.policy["routes"]["billing_specialist"]["allowed_execution"] is True
    assert after.policy["routes"]["billing_specialist"]["allowed_execution"] is False

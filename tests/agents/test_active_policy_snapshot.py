"""A run's policy snapshot is kept per process by the policy stamp: the same snapshot as building it,
no building while nothing changed (one read of the stamp), and any change to any row the policy is
built from (however it was made: the ORM, plain SQL) gives the next run the changed policy."""

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
from agents.policy_stamp import STAMPED, read_stamp
from agents.tasks import start_run

pytestmark = pytest.mark.django_db

PIPELINES = ("reflection", "self_critique", "routing")


def tables_read(queries) -> set[str]:
    return {table for q in queries.captured_queries for table in re.findall(r'(?:FROM|JOIN) "(\w+)"', q["sql"])}


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_the_stamp_covers_every_table_the_policy_is_built_from(pipeline):
    PipelinePolicy.objects.filter(pipeline=pipeline, active=True).update(grounding=True)
    with CaptureQueriesContext(connection) as built:
        load_policy(pipeline)
    stamped = {model._meta.db_table for model in STAMPED}
    assert tables_read(built) <= stamped, f"load_policy reads {tables_read(built) - stamped}, which no stamp covers"


@pytest.mark.parametrize("table", [model._meta.db_table for model in STAMPED])
def test_a_plain_sql_update_insert_or_delete_of_any_stamped_table_changes_the_stamp(table):
    if not StagePrompt.objects.exists():  # the one stamped table the defaults leave empty
        StagePrompt.objects.create(policy=PipelinePolicy.objects.first(), stage="draft", text="Write it.")
    stamps = [read_stamp()]
    with connection.cursor() as cursor:  # as a database client would, no Django in it
        cursor.execute(f'UPDATE "{table}" SET "id" = "id"')
        stamps.append(read_stamp())
        cursor.execute(f'SELECT * FROM "{table}" ORDER BY "id" DESC LIMIT 1')
        columns, row = [column[0] for column in cursor.description], cursor.fetchone()
        cursor.execute(f'DELETE FROM "{table}" WHERE "id" = %s', [row[0]])
        stamps.append(read_stamp())
        names = ", ".join(f'"{column}"' for column in columns)
        cursor.execute(f'INSERT INTO "{table}" ({names}) VALUES ({", ".join(["%s"] * len(row))})', list(row))
        stamps.append(read_stamp())
    assert None not in stamps
    assert len(set(stamps)) == len(stamps), stamps


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_the_kept_snapshot_is_the_built_one_and_is_not_built_again(pipeline):
    first = active_policy_snapshot(pipeline)
    with CaptureQueriesContext(connection) as queries:
        again = active_policy_snapshot(pipeline)
    assert json.dumps(again, sort_keys=True) == json.dumps(first, sort_keys=True) == json.dumps(
        load_policy(pipeline).to_dict(), sort_keys=True)
    assert again is first  # kept, not built again
    # One plain read of the stamp: none of the ORM's queries with their joins and orders.
    [query] = queries.captured_queries
    assert tables_read(queries) == {"agents_policystamp"}, query


def test_without_a_stamp_nothing_is_kept():
    with connection.cursor() as cursor:
        cursor.execute('DELETE FROM "agents_policystamp"')  # as a flush leaves it until the next migrate
    assert read_stamp() is None
    active_policy_snapshot("reflection")
    with CaptureQueriesContext(connection) as queries:
        active_policy_snapshot("reflection")
    assert "agents_pipelinepolicy" in tables_read(queries)  # built again
    IssueType.objects.filter(name="scope_leak").update(high_risk=True)  # the next change writes a stamp again
    assert read_stamp() is not None


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

"""``manage.py preview_policy``: the policy lab from a shell, the same report as the admin's."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from agents.core.llm.offline import OfflineModel
from agents.models import PolicyChange, RouteTarget
from agents.tasks import run_now, start_run


def routing_run(goal):
    run, _ = start_run(pipeline="routing", goal=goal, enqueue=False)
    run_now(run.pk, llm=OfflineModel())
    return run


def preview(*args) -> str:
    out = StringIO()
    call_command("preview_policy", *args, stdout=out)
    return out.getvalue()


def test_a_route_switched_off_lists_the_runs_it_would_stop(demo_data):
    billing = routing_run("Please refund my last payment, I was charged twice. user_id=42")
    routing_run("How much is the team plan?")
    out = preview("route", "billing_specialist", "--set", "allowed_policy=false", "--set", "allowed_execution=false")
    assert "1 of 2 runs would change (1 would stop, 0 would pass)." in out
    assert f"run {billing.pk} (routing): success -> invalid_route:route_not_allowed:billing_specialist" in out
    assert RouteTarget.objects.get(name="billing_specialist").allowed_policy is True
    assert not PolicyChange.objects.exists()


def test_the_summary_as_json(demo_data):
    routing_run("Please refund my last payment, I was charged twice. user_id=42")
    summary = json.loads(preview("policy", "routing", "--set", "max_delegations=1", "--last", "5", "--json"))
    assert summary["runs"] == 1 and summary["pipelines"] == ["routing"]
    assert summary["counts"]["unchanged"] == 1
    assert summary["window"] == "the only stored run"  # fewer than the 5 asked for


@pytest.mark.parametrize(("args", "message"), [
    (("route", "billing_specialist", "--set", "colour=red"), "a route target has no field 'colour'"),
    (("policy", "reflection", "--set", "max_answer_chars=5"), "max_answer_chars: Must be between 50 and 20000"),
    (("route", "no_such_route"), "no route target 'no_such_route'"),
    (("route", "billing_specialist", "--set", "allowed_policy"), "--set takes FIELD=VALUE"),
    (("policy", "reflection", "--since", "2026-05-02", "--until", "2026-05-01"), "must be before"),
    (("policy", "reflection", "--last", "0"), "--last: Ensure this value is greater than or equal to 1."),
])
def test_values_it_cannot_preview_are_refused_saying_why(demo_data, args, message):
    with pytest.raises(CommandError, match=message.replace("(", r"\(")):
        preview(*args)

"""The routing pipeline: route answers validated, delegations gated, specialists on demo data."""

import dataclasses

import pytest

from agents.core.pipelines import run_routing
from agents.core.pipelines.routing import truncate_observation
from agents.core.policy import DEFAULT_ROUTES, RoutingPolicy
from agents.core.specialists import DemoData, builtin_workers

REFUND = "Please refund me, I was charged twice. user_id=42"


def route(target, ticket=REFUND, **extra):
    return {"kind": "route", "target": target, "args": {"ticket": ticket}, **extra}


def run(scripted, ticket=REFUND, workers=None, **policy_overrides):
    policy = scripted.policy(RoutingPolicy, **policy_overrides)
    return run_routing(ticket, None, policy, scripted.llm, workers=workers or builtin_workers(DemoData()))


def routes_with(name, **changes):
    return {**DEFAULT_ROUTES, name: dataclasses.replace(DEFAULT_ROUTES[name], **changes)}


def test_refund_ticket_reaches_billing_and_is_answered_from_its_observation(scripted):
    scripted.answer("route", route("billing_specialist")).text("Anna, your 49.00 USD refund is approved.")
    result = run(scripted)
    assert (result.status, result.stop_reason, result.selected_route) == ("ok", "success", "billing_specialist")
    assert result.answer == "Anna, your 49.00 USD refund is approved."
    delegate = result.history[1]["output"]
    assert (delegate["refundable"], delegate["refund_amount"], delegate["customer"]) == (True, "49.00", "Anna")
    assert [s["phase"] for s in result.trace] == ["route", "delegate", "finalize"]
    assert "tools" not in scripted.fake.requests[-1] and "response_format" not in scripted.fake.requests[-1]


def test_free_plan_customer_is_not_refundable():
    observation = builtin_workers(DemoData())["billing_specialist"]({"ticket": "refund for user_id=7"})
    assert (observation["refundable"], observation["refund_amount"]) == (False, "0.00")


def test_technical_and_sales_specialists_answer_with_demo_facts():
    workers = builtin_workers(DemoData())
    tech = workers["technical_specialist"]({"ticket": "The API returns errors"})
    assert (tech["incident"], tech["service"], tech["state"], tech["next_update_minutes"]) == (
        "INC-4021", "public-api", "mitigated", 30)
    sales = workers["sales_specialist"]({"ticket": "What is your pricing for 20 seats?"})
    assert (sales["recommended_plan"], sales["price"], sales["currency"]) == ("team_plus", "199.00", "USD")


def test_reroute_then_the_right_specialist(scripted):
    scripted.answer("route", route("sales_specialist")).answer("route", route("billing_specialist")).text("Refunded.")
    result = run(scripted)
    assert (result.stop_reason, result.selected_route) == ("success", "billing_specialist")
    assert [s.get("observation_status") for s in result.trace if s["phase"] == "delegate"] == ["needs_reroute", "done"]
    second_prompt = scripted.fake.requests[1]["messages"][1]["content"]
    assert 'FORBIDDEN TARGETS:\n["sales_specialist"]' in second_prompt
    assert '"last_observation_status":"needs_reroute"' in second_prompt


ROUTE_STOPS = [
    pytest.param("billing please", "invalid_route:non_json", id="invalid_route:non_json"),
    pytest.param(["billing_specialist"], "invalid_route:not_object", id="invalid_route:not_object"),
    pytest.param(
        dict(route("billing_specialist"), kind="answer"), "invalid_route:bad_kind", id="invalid_route:bad_kind"
    ),
    pytest.param(
        route("billing_specialist", answer="refunded"), "invalid_route:extra_keys", id="invalid_route:extra_keys"
    ),
    pytest.param(route(" "), "invalid_route:missing_target", id="invalid_route:missing_target"),
    pytest.param(
        route("legal_team"),
        "invalid_route:route_not_allowed:legal_team",
        id="invalid_route:route_not_allowed:legal_team",
    ),
    pytest.param(
        dict(route("billing_specialist"), args="refund"), "invalid_route:bad_args", id="invalid_route:bad_args"
    ),
    pytest.param(
        dict(route("billing_specialist"), args=None),
        "invalid_route:missing_ticket",
        id="invalid_route:missing_ticket-null-args",
    ),
    pytest.param(
        route("billing_specialist", ticket=""), "invalid_route:missing_ticket", id="invalid_route:missing_ticket"
    ),
]


@pytest.mark.parametrize("payload, reason", ROUTE_STOPS)
def test_route_answer_stops(scripted, payload, reason):
    scripted.answer("route", payload)
    result = run(scripted)
    assert (result.status, result.stop_reason, result.phase) == ("stopped", reason, "route")
    if reason == "invalid_route:non_json":
        assert result.details["raw"] == "billing please"


def test_route_not_allowed_by_policy_switch(scripted_tools):
    scripted_tools.answer("route", route("billing_specialist"))
    result = run(scripted_tools, routes=routes_with("billing_specialist", allowed_policy=False))
    assert result.stop_reason == "invalid_route:route_not_allowed:billing_specialist"


def test_same_target_after_a_reroute_is_invalid_route_repeat_target_after_reroute(scripted):
    scripted.answer("route", route("sales_specialist")).answer("route", route("sales_specialist"))
    result = run(scripted)
    assert (result.stop_reason, result.phase) == ("invalid_route:repeat_target_after_reroute", "route")


def test_ticket_whitespace_is_normalised_before_delegation(scripted_tools):
    scripted_tools.answer("route", route("billing_specialist", ticket="  refund \n\n user_id=42  ")).text("Done.")
    result = run(scripted_tools)
    assert result.history[0]["output"]["args"]["ticket"] == "refund user_id=42"


def test_delegation_budget_is_max_delegations(scripted_tools):
    scripted_tools.answer("route", route("sales_specialist")).answer("route", route("billing_specialist"))
    result = run(scripted_tools, max_delegations=1)
    assert (result.stop_reason, result.phase) == ("max_delegations", "delegate")


def test_execution_switch_off_is_route_denied(scripted):
    scripted.answer("route", route("billing_specialist"))
    result = run(scripted, routes=routes_with("billing_specialist", allowed_execution=False))
    assert (result.stop_reason, result.phase) == ("route_denied:billing_specialist", "delegate")


def test_unregistered_worker_is_route_missing(scripted_tools):
    scripted_tools.answer("route", route("billing_specialist"))
    result = run(scripted_tools, routes=routes_with("billing_specialist", worker="refund_bot"))
    assert result.stop_reason == "route_missing:billing_specialist"


def test_same_target_and_arguments_twice_is_loop_detected(scripted_tools):
    ticket = "Hello, user_id=42 here."  # no billing, technical or sales words: everyone asks for a reroute
    for target in ("sales_specialist", "billing_specialist", "sales_specialist"):
        scripted_tools.answer("route", route(target, ticket=ticket))
    result = run(scripted_tools, ticket=ticket)
    assert (result.stop_reason, result.phase) == ("loop_detected", "delegate")


def test_worker_rejecting_its_arguments_is_route_bad_args(scripted_tools):
    scripted_tools.answer("route", route("billing_specialist", ticket="refund please, I forgot my id"))
    result = run(scripted_tools)
    assert result.stop_reason == "route_bad_args:billing_specialist"
    assert "user_id" in result.details["error"]


def test_worker_that_raises_is_route_error(scripted_tools):
    def broken(args):
        raise ConnectionError("billing database down")

    workers = dict(builtin_workers(DemoData()), billing_specialist=broken)
    scripted_tools.answer("route", route("billing_specialist"))
    result = run(scripted_tools, workers=workers)
    assert (result.stop_reason, result.status) == ("route_error:billing_specialist", "stopped")
    assert "billing database down" in result.details["error"]


def test_unexpected_observation_status_is_route_bad_observation(scripted_tools):
    workers = dict(builtin_workers(DemoData()), billing_specialist=lambda args: {"status": "maybe", "note": "hmm"})
    scripted_tools.answer("route", route("billing_specialist"))
    result = run(scripted_tools, workers=workers)
    assert result.stop_reason == "route_bad_observation"
    assert result.details["received"] == "maybe" and result.details["expected"] == ["done", "needs_reroute"]
    assert result.details["observation"] == {"status": "maybe", "note": "hmm"}


def test_every_attempt_rerouted_is_max_route_attempts(scripted):
    ticket = "Hello, user_id=42 here."
    scripted.answer("route", route("sales_specialist", ticket=ticket)).answer(
        "route", route("billing_specialist", ticket=ticket))
    result = run(scripted, ticket=ticket, max_route_attempts=2)
    assert (result.stop_reason, result.status) == ("max_route_attempts", "stopped")


def test_empty_finalize_answer_is_llm_empty(scripted):
    scripted.answer("route", route("billing_specialist")).text("")
    result = run(scripted)
    assert (result.stop_reason, result.phase) == ("llm_empty", "finalize")


def test_long_observations_are_truncated_for_the_model_but_kept_whole(scripted_tools):
    long_text = "a" * 5000
    workers = dict(builtin_workers(DemoData()),
                   billing_specialist=lambda args: {"status": "done", "summary": long_text, "rows": list(range(400))})
    scripted_tools.answer("route", route("billing_specialist")).text("Done.")
    result = run(scripted_tools, workers=workers)
    assert result.history[1]["output"]["summary"] == long_text
    prompt = scripted_tools.fake.requests[-1]["messages"][1]["content"]
    assert "[truncated, 5000 characters in full]" in prompt and "characters of JSON in full]" in prompt
    shown = truncate_observation({"summary": long_text})
    assert shown["summary"].startswith("a" * 1000) and len(shown["summary"]) < 1100


def test_routing_without_workers_is_refused_rather_than_run_on_demo_data():
    from agents.core.llm.offline import OfflineModel
    from agents.core.pipelines import run_pipeline
    from agents.core.policy import default_policy

    with pytest.raises(ValueError, match="the routing pipeline needs its workers"):
        run_pipeline("routing", goal="Refund please. user_id=42", context=None, policy=default_policy("routing"),
                     llm=OfflineModel())

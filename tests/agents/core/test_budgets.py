"""Budgets and model failures inside a run: every one ends as a recorded stop (docs/contract.md, 'Budgets')."""

from agents.core.llm.breaker import breaker_for
from agents.core.pipelines import run_reflection
from agents.core.policy import ReflectionPolicy
from agents.testing.scripted_demo import APPROVE, DEMO_CONTEXT, DRAFT, GOAL
from agents.testing.scripted_server import content, delay, hang_up, status, tool_call


def run(scripted, **policy_overrides):
    return run_reflection(GOAL, DEMO_CONTEXT, scripted.policy(ReflectionPolicy, **policy_overrides), scripted.llm)


def test_a_model_call_is_cut_at_the_runs_remaining_wall_time_max_seconds(scripted_tools):
    # The endpoint's own timeout is 60 s: the run's 0.3 s budget is what bounds the request.
    scripted_tools.reply(delay(2, tool_call("submit_draft", {"draft": DRAFT})))
    result = run(scripted_tools, max_seconds=0.3)
    assert (result.stop_reason, result.phase) == ("max_seconds", "draft")
    assert result.duration_ms < 1500
    assert len(scripted_tools.fake.requests) == 1  # the review call was never made


def test_timed_out_retries_stay_within_the_runs_wall_time_max_seconds(scripted_tools):
    # Before: each retry waited its full timeout (a 30 s run stopped after 182.8 s of retries).
    scripted_tools.with_settings(timeout_seconds=0.4, max_retries=5)
    scripted_tools.reply(*[delay(2, tool_call("submit_draft", {"draft": DRAFT}))] * 6)
    result = run(scripted_tools, max_seconds=1.0)
    assert (result.stop_reason, result.phase) == ("max_seconds", "draft")
    # The budget cut the retries short (six tries would each wait out their timeout); how long that
    # took on the clock depends on the machine's load, so it is not asserted.
    assert len(scripted_tools.fake.requests) < 6


def test_token_budget_is_max_tokens(scripted_tools):
    # Each answer may have 8 tokens and uses 15 with its prompt: the review fits in what the draft
    # left (10), and its answer spends the budget.
    scripted_tools.with_settings(max_completion_tokens=8)
    scripted_tools.answer("submit_draft", {"draft": DRAFT}).answer("reflect", APPROVE)
    result = run(scripted_tools, max_tokens=25)
    assert (result.stop_reason, result.phase) == ("max_tokens", "review")
    assert result.usage["prompt_tokens"] + result.usage["completion_tokens"] == 30


def test_a_call_whose_answer_may_exceed_the_tokens_left_is_not_sent_max_tokens(scripted_tools):
    scripted_tools.with_settings(max_completion_tokens=160)
    scripted_tools.answer("submit_draft", {"draft": DRAFT}).answer("reflect", APPROVE)
    result = run(scripted_tools, max_tokens=100)
    assert (result.stop_reason, result.phase) == ("max_tokens", "draft")
    assert "160 tokens and the run has 100 left" in result.details["message"]
    assert scripted_tools.fake.requests == [] and result.usage["model_calls"] == 0


def test_cost_budget_is_max_cost(scripted_tools):
    scripted_tools.with_settings(input_cost_per_1k=1.0, output_cost_per_1k=2.0)
    scripted_tools.answer("submit_draft", {"draft": DRAFT})
    result = run(scripted_tools, max_cost=0.005)
    assert (result.stop_reason, result.phase) == ("max_cost", "draft")
    assert result.usage["cost"] == 0.02  # 10 prompt tokens at 1.0/1k + 5 completion tokens at 2.0/1k


def test_persistent_429_is_llm_rate_limited(scripted):
    scripted.with_settings(max_retries=1).reply(status(429, headers={"Retry-After": "0"}), status(429))
    result = run(scripted)
    assert (result.stop_reason, result.phase) == ("llm_rate_limited", "draft")
    assert result.usage["model_calls"] == 2


def test_persistent_5xx_is_llm_unavailable(scripted_tools):
    scripted_tools.with_settings(max_retries=1).reply(status(500), status(503))
    assert run(scripted_tools).stop_reason == "llm_unavailable"


def test_dropped_connection_is_llm_unavailable(scripted_tools):
    scripted_tools.reply(hang_up())
    assert run(scripted_tools).stop_reason == "llm_unavailable"


def test_slow_model_is_llm_timeout(scripted_tools):
    scripted_tools.with_settings(timeout_seconds=0.2).reply(delay(1.0, content("late")))
    assert run(scripted_tools).stop_reason == "llm_timeout"


def test_retry_after_a_429_then_success(scripted):
    scripted.with_settings(max_retries=2).reply(status(429, headers={"Retry-After": "0"}))
    scripted.answer("submit_draft", {"draft": DRAFT}).answer("reflect", APPROVE)
    result = run(scripted)
    assert result.stop_reason == "success"
    assert result.usage["model_calls"] == 3  # the rejected request is recorded too


def test_empty_model_message_is_llm_empty(scripted):
    scripted.reply(content(""))
    assert run(scripted).stop_reason == "llm_empty"


def test_call_to_another_tool_is_llm_wrong_tool(scripted_tools):
    scripted_tools.reply(tool_call("reflect", {"decision": "approve"}))
    assert run(scripted_tools).stop_reason == "llm_wrong_tool"


def test_open_circuit_fails_fast_without_calling_the_server_llm_circuit_open(scripted_tools):
    llm = scripted_tools.llm
    threshold = breaker_for(llm.endpoint).failure_threshold
    scripted_tools.reply(*[status(500)] * threshold)
    policy = scripted_tools.policy(ReflectionPolicy)
    reasons = [run_reflection(GOAL, DEMO_CONTEXT, policy, llm).stop_reason for _ in range(threshold + 1)]
    assert reasons == ["llm_unavailable"] * threshold + ["llm_circuit_open"]
    assert len(scripted_tools.fake.requests) == threshold


def test_blank_goal_stops_before_any_model_call_invalid_input(scripted_tools):
    result = run_reflection("   ", DEMO_CONTEXT, scripted_tools.policy(ReflectionPolicy), scripted_tools.llm)
    assert (result.stop_reason, result.phase, scripted_tools.fake.requests) == ("invalid_input:goal", "input", [])


def test_context_that_is_not_an_object_is_invalid_input_context(scripted_tools):
    result = run_reflection(GOAL, ["not", "a", "mapping"], scripted_tools.policy(ReflectionPolicy), scripted_tools.llm)
    assert result.stop_reason == "invalid_input:context"

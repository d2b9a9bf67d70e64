"""Property tests: arbitrary JSON-like model answers never crash a validator or a pipeline; every
outcome is a documented stop reason or a valid, typed decision."""

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from agents.core.llm.base import CallRecord, ModelReply
from agents.core.pipelines import run_pipeline
from agents.core.policy import ReflectionPolicy, RoutingPolicy, SelfCritiquePolicy, default_policy
from agents.core.stops import STOP_REASONS, Stop
from agents.core.validation import (
    CritiqueVerdict,
    ReviewVerdict,
    RouteCall,
    validate_critique,
    validate_review,
    validate_route,
)
from agents.testing.scripted_demo import DEMO_CONTEXT, DRAFT, demo_workers

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=40),
    lambda children: st.lists(children, max_size=6) | st.dictionaries(st.text(max_size=12), children, max_size=6),
    max_leaves=30,
)
words = st.sampled_from(["approve", "revise", "escalate", "APPROVE", " revise ", "", "ship", None, 3])
issue = st.fixed_dictionaries({"type": st.sampled_from(["overconfidence", "legal_risk", "tone", "", None]),
                               "note": st.sampled_from(["n", "", None, 5])}) | json_values
# Answers shaped like the real thing, with each field sometimes wrong, reach the deeper checks.
reviews = (
    st.fixed_dictionaries(
        {},
        optional={
            "decision": words,
            "issues": st.lists(issue, max_size=6) | json_values,
            "fix_plan": st.lists(st.sampled_from(['Add "a caveat here"', "", 4, "Replace 'x' with 'y'"]), max_size=6)
            | json_values,
            "reason": st.sampled_from(["why", "", None, 1]),
            "severity": st.sampled_from(["low", "HIGH", "", "odd", None]),
            "risks": st.lists(issue, max_size=7) | json_values,
            "required_changes": st.lists(
                st.sampled_from(['ADD "a caveat here"', "REMOVE 'x'", "soften", ""]), max_size=7
            ),
        },
    )
    | json_values
)


def documented(reason: str) -> bool:
    return reason in STOP_REASONS or any(
        name.endswith(">") and reason.startswith(name.split("<", 1)[0]) for name in STOP_REASONS)


@given(reviews)
def test_review_validator_returns_a_review_or_a_documented_stop(value):
    try:
        review = validate_review(value, ReflectionPolicy(), max_issues=4, max_fix_items=4)
    except Stop as stop:
        assert documented(stop.reason), stop.reason
    else:
        assert isinstance(review, ReviewVerdict) and review.decision in ("approve", "revise", "escalate")
        assert all(issue["type"] in ReflectionPolicy().issue_types for issue in review.issues)


@given(reviews)
def test_critique_validator_returns_a_critique_or_a_documented_stop(value):
    try:
        critique = validate_critique(value, SelfCritiquePolicy(), max_risks=5, max_required_changes=5)
    except Stop as stop:
        assert documented(stop.reason), stop.reason
    else:
        assert isinstance(critique, CritiqueVerdict) and critique.severity in ("low", "medium", "high")
        assert not (critique.decision == "approve" and critique.high_risk)


routes = (
    st.fixed_dictionaries(
        {},
        optional={
            "kind": st.sampled_from(["route", "answer", None]),
            "target": st.sampled_from(["billing_specialist", "sales_specialist", "nobody", "", None, 1]),
            "args": st.fixed_dictionaries({}, optional={"ticket": st.sampled_from(["refund user_id=42", " ", None, 3])})
            | json_values,
        },
    )
    | json_values
)


@given(routes, st.sampled_from([None, "sales_specialist"]))
def test_route_validator_returns_a_call_or_a_documented_stop(value, forbidden):
    text = json.dumps(value)
    try:
        call = validate_route(text, (True, value), RoutingPolicy(), forbidden=forbidden)
    except Stop as stop:
        assert documented(stop.reason), stop.reason
    else:
        assert isinstance(call, RouteCall) and call.target in RoutingPolicy().routes and call.target != forbidden


class ReplayLLM:
    """Answers each call with the next scripted text (the transport is covered by the SDK tests)."""

    label = endpoint = "replay"

    def __init__(self, texts):
        self.texts = list(texts)

    def complete(self, request):
        text = self.texts.pop(0) if self.texts else ""
        record = CallRecord(stage=request.stage, attempt=request.attempt, try_number=1, model="replay", latency_ms=0)
        return ModelReply(text=text, via_tool=True, prompt_tokens=1, completion_tokens=1, calls=(record,))


answers = st.lists(
    st.one_of(json_values.map(json.dumps), reviews.map(json.dumps), routes.map(json.dumps),
              st.just(json.dumps({"draft": DRAFT})), st.just(json.dumps({"revised_answer": DRAFT + " It may change."})),
              st.text(max_size=60)),
    min_size=1, max_size=6,
)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(["reflection", "self_critique", "routing"]), answers)
def test_pipelines_end_in_success_or_a_documented_stop_whatever_the_model_says(name, texts):
    result = run_pipeline(name, goal="refund user_id=42", context=DEMO_CONTEXT, policy=default_policy(name),
                          llm=ReplayLLM(texts), workers=demo_workers(name))
    assert result.status in ("ok", "stopped")
    assert documented(result.stop_reason) and not result.stop_reason.startswith("internal_error"), result.stop_reason
    json.dumps(result.to_dict())  # every result can be stored and served as JSON
    if result.status == "ok":
        assert result.answer

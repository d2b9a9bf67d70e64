"""The replay engine (agents/core/replay.py) on runs recorded in memory with the offline model: no
database, no model server."""

import dataclasses
import json
from pathlib import Path

from agents.core.llm.base import CallRecord
from agents.core.llm.offline import OfflineModel
from agents.core.pipelines import run_pipeline
from agents.core.policy import default_policy
from agents.core.replay import (
    DIVERGED,
    NOT_REPLAYABLE,
    UNCHANGED,
    WOULD_PASS,
    WOULD_STOP,
    Ending,
    PlaybackModel,
    Recording,
    answers,
    delegations_from_trace,
    replay,
)
from agents.testing.scripted_demo import demo_workers

CONTEXT = json.loads((Path(__file__).parents[3] / "agents/fixtures/demo_context.json").read_text())


class Recorder:
    def __init__(self):
        self.calls, self.steps = [], []

    def on_step(self, run_id, entry):
        self.steps.append(entry)

    def on_model_call(self, run_id, record):
        self.calls.append(record)


def record(pipeline, goal="Customer update", policy=None, context=CONTEXT) -> Recording:
    policy = policy or default_policy(pipeline)
    heard = Recorder()
    result = run_pipeline(pipeline, goal=goal, context=context, policy=policy, llm=OfflineModel(), observer=heard,
                          workers=demo_workers(pipeline))
    return Recording(pipeline=pipeline, status=result.status, goal=goal, context=context,
                     policy=json.loads(json.dumps(policy.to_dict())), calls=heard.calls, ending=Ending.of(result),
                     delegations=delegations_from_trace(heard.steps, result.details))


def without_route(policy, name):
    routes = dict(policy.routes)
    routes[name] = dataclasses.replace(routes[name], allowed_policy=False, allowed_execution=False)
    return dataclasses.replace(policy, routes=routes)


def test_a_run_replayed_under_its_own_policy_is_unchanged():
    for pipeline, goal in (("reflection", "Customer update"), ("self_critique", "Customer update"),
                           ("routing", "Please refund my last payment, user_id=42")):
        recording = record(pipeline, goal)
        assert recording.ending.status == "ok"
        assert replay(recording, default_policy(pipeline)).verdict == UNCHANGED


def test_removing_the_route_a_run_used_stops_it_and_leaves_the_others():
    billing = record("routing", "Please refund my last payment, user_id=42")
    technical = record("routing", "The API returns errors, is INC-4021 still open?")
    assert (billing.ending.selected_route, technical.ending.selected_route) == (
        "billing_specialist", "technical_specialist")
    proposed = without_route(default_policy("routing"), "billing_specialist")
    stopped = replay(billing, proposed)
    assert stopped.verdict == WOULD_STOP
    assert stopped.after.stop_reason == "invalid_route:route_not_allowed:billing_specialist"
    assert stopped.group == stopped.after.stop_reason
    assert replay(technical, proposed).verdict == UNCHANGED


def test_a_smaller_answer_budget_stops_the_runs_whose_answer_is_longer():
    recording = record("reflection")
    result = replay(recording, dataclasses.replace(default_policy("reflection"), max_answer_chars=60))
    assert result.verdict == WOULD_STOP
    assert result.after.stop_reason.endswith("too_long")
    assert result.before.stop_reason == "success"


def test_a_looser_budget_lets_a_stopped_run_pass():
    tight = dataclasses.replace(default_policy("reflection"), max_answer_chars=60)
    recording = record("reflection", policy=tight)
    assert recording.ending.status == "stopped"
    result = replay(recording, default_policy("reflection"))
    assert result.verdict == WOULD_PASS
    assert result.after.stop_reason == "success" and result.after.text


def test_a_path_that_needs_an_unrecorded_answer_is_diverged_and_says_which():
    recording = record("self_critique")
    draft_chars = len(recording.ending.text)
    # A draft limit below the recorded draft: self-critique asks the model to shorten it, which the
    # run never did.
    shorter = dataclasses.replace(default_policy("self_critique"), max_draft_chars=draft_chars // 2)
    result = replay(recording, shorter)
    assert result.verdict == DIVERGED
    assert result.after is None
    assert "model call 2 (shorten, attempt 1)" in result.note


def test_a_delegation_with_arguments_never_recorded_is_diverged():
    recording = record("routing", "Please refund my last payment, user_id=42")
    recording = dataclasses.replace(recording, delegations=())
    result = replay(recording, default_policy("routing"))
    assert result.verdict == DIVERGED
    assert "delegation to billing_specialist" in result.note


def test_runs_that_cannot_be_replayed_say_why():
    recording = record("reflection")
    cases = {
        "did not finish": dataclasses.replace(recording, status="running"),
        "no model answers": dataclasses.replace(recording, calls=()),
        "old format": dataclasses.replace(recording, policy={**recording.policy, "model": {"api_key_env": "KEY"}}),
    }
    for why, case in cases.items():
        result = replay(case, default_policy("reflection"))
        assert result.verdict == NOT_REPLAYABLE
        assert why in result.note


def test_a_snapshot_read_before_is_not_read_again_and_a_changed_one_is():
    recording = record("reflection")
    assert replay(recording, default_policy("reflection")).verdict != NOT_REPLAYABLE
    # The same snapshot, another run: known to read. The same content changed: read again, and refused.
    copy = dataclasses.replace(recording, policy=json.loads(json.dumps(recording.policy)))
    assert replay(copy, default_policy("reflection")).verdict != NOT_REPLAYABLE
    changed = dataclasses.replace(recording, policy={**recording.policy, "model": {"api_key_env": "KEY"}})
    assert replay(changed, default_policy("reflection")).verdict == NOT_REPLAYABLE


def test_a_transport_retry_belongs_to_the_call_before_it_and_a_recorded_failure_fails_again():
    calls = [CallRecord("draft", 1, 1, "m", 10, outcome="llm_unavailable", error="HTTP 503"),
             CallRecord("draft", 1, 2, "m", 20, outcome="llm_unavailable", error="HTTP 503")]
    assert [len(a.tries) for a in answers(calls)] == [2]
    recording = dataclasses.replace(record("reflection"), calls=calls,
                                    ending=Ending(status="stopped", stop_reason="llm_unavailable"))
    result = replay(recording, default_policy("reflection"))
    assert result.verdict == UNCHANGED
    assert result.usage["model_calls"] == 2


def test_the_wall_time_budget_sees_the_recorded_latencies():
    slow = [dataclasses.replace(call, latency_ms=40_000) for call in record("reflection").calls]
    recording = dataclasses.replace(record("reflection"), calls=slow)
    result = replay(recording, default_policy("reflection"))  # 30 s: the second call starts after 40 s
    assert result.verdict == WOULD_STOP
    assert result.after.stop_reason == "max_seconds"
    model = PlaybackModel(slow)
    assert model.clock() == 0


def test_a_run_under_an_older_policy_is_compared_with_a_replay_under_the_current_one():
    older = dataclasses.replace(default_policy("reflection"), max_answer_chars=60)
    recording = record("reflection", policy=older)
    current = default_policy("reflection")
    # The proposal changes nothing of what the run depends on: the difference since is not its doing.
    proposed = dataclasses.replace(current, max_review_issues=3)
    result = replay(recording, proposed, current=current)
    assert result.verdict == UNCHANGED
    assert "current policy" in result.note

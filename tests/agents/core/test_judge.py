"""The second reader (docs/guard.md, 'The second reader'), driven through the real openai SDK against
the scripted server: the run's model and the reader's are two clients of it, asked in turn."""

import dataclasses
import json

import pytest

from agents.core.judge import MAX_FINDINGS, Unreadable, read_verdict
from agents.core.llm.client import OpenAIChat, UnavailableModel, judge_from_env
from agents.core.pipelines import run_pipeline, run_reflection, run_self_critique
from agents.core.policy import ModelSettings, ReflectionPolicy, SelfCritiquePolicy
from agents.core.stops import STOP_REASONS, explain, opens_escalation
from agents.testing.scripted_demo import APPROVE, CRITIQUE_APPROVE, DEMO_CONTEXT, DRAFT, GOAL
from agents.testing.scripted_server import content, delay, status, tool_call

UNSUPPORTED = "invalid_answer:judge_unsupported"
UNAVAILABLE = "invalid_answer:judge_unavailable"
SENTENCE = "About 27% of checkouts are affected."
WORDS = "27% of checkouts"


def judge_settings(scripted, **changes) -> ModelSettings:
    return ModelSettings(model="judge-model", endpoint="test", structured_output=scripted.mode,
                         timeout_seconds=changes.pop("timeout_seconds", 2.0), max_retries=changes.pop("max_retries", 0),
                         **changes)


def judge_llm(scripted, settings: ModelSettings) -> OpenAIChat:
    return OpenAIChat(settings, endpoint=scripted.endpoint, sleep=lambda seconds: None)


def run(scripted, *, judge: ModelSettings | None = None, draft: str = DRAFT, observer=None, **overrides):
    """A reflection run whose review approves ``draft``; the judge's answers are scripted after it."""
    policy = scripted.policy(ReflectionPolicy, judge=judge, **overrides)
    return run_reflection(GOAL, DEMO_CONTEXT, policy, scripted.llm, observer=observer,
                          judge=judge_llm(scripted, judge) if judge else None)


def approved(scripted, draft: str = DRAFT):
    return scripted.answer("submit_draft", {"draft": draft}).answer("reflect", APPROVE)


def judgement(scripted, payload):
    """The reader's answer as the scripted server sends it in the test's output mode."""
    if scripted.mode == "tools":
        return tool_call("submit_judgement", payload)
    return content(json.dumps(payload))


def judge_step(result) -> dict:
    [step] = [step for step in result.trace if step["phase"] == "judge"]
    return step


# -- off by default ----------------------------------------------------------------------------------


def test_a_policy_names_no_second_reader_by_default():
    assert ReflectionPolicy().judge is None and SelfCritiquePolicy().judge is None


def test_without_a_second_reader_no_extra_model_call_is_made(scripted):
    approved(scripted)
    result = run(scripted)
    assert (result.stop_reason, result.answer) == ("success", DRAFT)
    assert len(scripted.fake.requests) == 2 and result.usage["model_calls"] == 2
    assert [step["phase"] for step in result.trace] == ["draft", "review", "finalize"]


# -- what it finds ---------------------------------------------------------------------------------


def test_a_sentence_the_reader_finds_unsupported_stops_the_text_for_a_person(scripted):
    approved(scripted).answer("submit_judgement", {"unsupported": [{"sentence": SENTENCE, "words": WORDS}]})
    result = run(scripted, judge=judge_settings(scripted))
    assert (result.status, result.stop_reason, result.phase) == ("stopped", UNSUPPORTED, "judge")
    assert opens_escalation(result.stop_reason)
    assert result.candidate == DRAFT and result.answer is None
    assert result.guard["violations"] == [{
        "check": UNSUPPORTED, "found": WORDS, "sentence": SENTENCE,
        "message": f"“{WORDS}” (in “{SENTENCE}”): the second reader finds nothing in the incident's public facts "
                   "that supports it.",
    }]
    step = judge_step(result)
    assert (step["status"], step["stop_reason"], step["findings"]) == ("stopped", UNSUPPORTED, 1)


INTERNAL = {"runbook": "fail over pay-gw-7 to the standby cluster", "owner": "Dana Whitfield"}


def test_the_reader_is_asked_with_its_own_model_and_the_public_facts_only(scripted):
    approved(scripted).answer("submit_judgement", {"unsupported": []})
    settings = judge_settings(scripted)
    policy = scripted.policy(ReflectionPolicy, judge=settings)
    context = {**DEMO_CONTEXT, "internal": INTERNAL}
    result = run_reflection(GOAL, context, policy, scripted.llm, judge=judge_llm(scripted, settings))
    asked = scripted.fake.requests[2]
    assert asked["model"] == "judge-model" and scripted.fake.requests[0]["model"] == "test-model"
    prompt = "\n".join(message["content"] for message in asked["messages"])
    assert DRAFT in prompt and "payment" in prompt
    # The internal facts: the run's reviewer reads them, the second reader never does.
    assert all(value not in prompt for value in INTERNAL.values()) and "INTERNAL" not in prompt
    assert INTERNAL["runbook"] in scripted.fake.requests[1]["messages"][1]["content"]
    if scripted.mode == "tools":
        assert asked["tools"][0]["function"]["name"] == "submit_judgement"
    else:
        assert asked["response_format"] == {"type": "json_object"} and "json" in prompt.lower()
    assert result.stop_reason == "success"


def test_the_reader_call_is_recorded_as_its_own_step_with_model_tokens_and_latency(scripted):
    heard = []

    class Recorder:
        def on_step(self, run_id, entry):
            heard.append(("step", entry["phase"], entry["status"]))
            if entry["phase"] == "judge":
                heard.append(entry)

        def on_model_call(self, run_id, record):
            heard.append(("call", record.stage, record.model, record.outcome, record.prompt_tokens,
                          record.completion_tokens, bool(record.messages), record.raw))

    approved(scripted).answer("submit_judgement", {"unsupported": []})
    run(scripted, judge=judge_settings(scripted), observer=Recorder())
    raw = json.dumps({"unsupported": []})
    assert heard[:5] == [("call", "draft", "test-model", "ok", 10, 5, True, heard[0][-1]),
                         ("step", "draft", "ok"), heard[2], ("step", "review", "ok"), ("step", "finalize", "ok")]
    assert heard[5] == ("call", "judge", "judge-model", "ok", 10, 5, True, raw)
    assert heard[6] == ("step", "judge", "ok")
    entry = heard[7]
    assert (entry["judge_model"], entry["judge_endpoint"], entry["prompt_tokens"], entry["completion_tokens"]) == (
        "judge-model", "test", 10, 5)
    assert entry["latency_ms"] > 0 and entry["output"] == {"unsupported": [], "dropped": []}


def test_a_reader_that_finds_nothing_ends_the_run_as_without_it(scripted):
    approved(scripted)
    without = run(scripted)
    approved(scripted).answer("submit_judgement", {"unsupported": []})
    judged = run(scripted, judge=judge_settings(scripted))
    assert (judged.status, judged.stop_reason, judged.outcome, judged.answer, judged.guard) == (
        without.status, without.stop_reason, without.outcome, without.answer, without.guard)
    assert judged.usage["model_calls"] == without.usage["model_calls"] + 1
    assert judge_step(judged)["findings"] == 0


@pytest.mark.parametrize(("item", "why"), [
    ({"sentence": "Refunds will be issued to every customer today.", "words": "Refunds"},
     "the sentence is not in the text"),
    ({"sentence": SENTENCE, "words": "every region"}, "the words are not in the sentence"),
    ({"sentence": SENTENCE, "words": "  "}, "an empty quote"),
])
def test_a_quote_that_is_not_in_the_text_is_dropped_and_recorded(scripted, item, why):
    approved(scripted).answer("submit_judgement", {"unsupported": [item]})
    result = run(scripted, judge=judge_settings(scripted))
    assert (result.status, result.stop_reason, result.answer) == ("ok", "success", DRAFT)
    step = judge_step(result)
    assert step["findings"] == 0
    assert [entry["why"] for entry in step["dropped"]] == [why]
    assert step["dropped"][0]["sentence"] == " ".join(item["sentence"].split())


def test_a_quote_is_matched_with_its_whitespace_collapsed_and_kept_next_to_a_dropped_one(scripted):
    spaced = SENTENCE.replace(" ", "\n  ", 2)
    answer = {"unsupported": [{"sentence": spaced, "words": WORDS},
                              {"sentence": "Nothing like this is in the text.", "words": "Nothing"}]}
    approved(scripted).answer("submit_judgement", answer)
    result = run(scripted, judge=judge_settings(scripted))
    assert result.stop_reason == UNSUPPORTED
    assert [(v["sentence"], v["found"]) for v in result.guard["violations"]] == [(SENTENCE, WORDS)]
    assert [entry["why"] for entry in judge_step(result)["dropped"]] == ["the sentence is not in the text"]


# -- a reader that gives no answer never reads as a pass -------------------------------------------------


def test_a_reader_that_times_out_stops_the_text_as_judge_unavailable(scripted):
    approved(scripted).reply(delay(30, judgement(scripted, {"unsupported": []})))
    result = run(scripted, judge=judge_settings(scripted, timeout_seconds=0.3))
    assert (result.stop_reason, result.phase) == (UNAVAILABLE, "judge")
    assert opens_escalation(result.stop_reason) and result.candidate == DRAFT
    step = judge_step(result)
    assert (step["status"], step["judge_error"]) == ("stopped", "llm_timeout")
    assert [v["check"] for v in result.guard["violations"]] == [UNAVAILABLE]


def test_a_reader_whose_server_fails_past_its_retries_stops_the_text_as_judge_unavailable(scripted):
    heard = []

    class Recorder:
        def on_step(self, run_id, entry):
            pass

        def on_model_call(self, run_id, record):
            heard.append((record.stage, record.try_number, record.outcome))

    approved(scripted).reply(status(500), status(500))
    result = run(scripted, judge=judge_settings(scripted, max_retries=1), observer=Recorder())
    assert result.stop_reason == UNAVAILABLE
    assert heard[2:] == [("judge", 1, "llm_unavailable"), ("judge", 2, "llm_unavailable")]
    step = judge_step(result)
    assert step["judge_error"] == "llm_unavailable" and "HTTP 500" in step["judge_message"]


@pytest.mark.parametrize("answer", [
    "the text looks fine to me",
    {"unsupported": "none"},
    {"unsupported": [], "reasoning": "all fine"},
    {"unsupported": [{"sentence": SENTENCE}]},
    {"unsupported": [{"sentence": SENTENCE, "words": ["27%"]}]},
    {"unsupported": ["About 27% of checkouts are affected."]},
    {"unsupported": [{"sentence": SENTENCE, "words": WORDS}] * (MAX_FINDINGS + 1)},
    [],
], ids=["prose", "not-a-list", "extra-key", "no-words", "words-not-text", "bare-sentence", "too-many", "a-list"])
def test_a_reader_that_answers_garbage_stops_the_text_as_judge_unavailable(scripted, answer):
    approved(scripted).answer("submit_judgement", answer)
    result = run(scripted, judge=judge_settings(scripted))
    assert (result.stop_reason, result.phase) == (UNAVAILABLE, "judge")
    step = judge_step(result)
    assert step["judge_error"] == "unreadable" and step["raw"]
    assert "findings" not in step


def test_a_reader_with_no_model_given_stops_the_text_as_judge_unavailable(scripted):
    approved(scripted)
    policy = scripted.policy(ReflectionPolicy, judge=judge_settings(scripted))
    result = run_reflection(GOAL, DEMO_CONTEXT, policy, scripted.llm)
    assert result.stop_reason == UNAVAILABLE and len(scripted.fake.requests) == 2


def test_a_reader_at_an_endpoint_not_declared_answers_nothing_and_sends_nothing(scripted):
    approved(scripted)
    settings = judge_settings(scripted)
    policy = scripted.policy(ReflectionPolicy, judge=settings)
    reader = UnavailableModel(settings, "the endpoint 'test' is not declared")
    result = run_pipeline("reflection", goal=GOAL, context=DEMO_CONTEXT, policy=policy, llm=scripted.llm, judge=reader)
    assert result.stop_reason == UNAVAILABLE and len(scripted.fake.requests) == 2
    step = judge_step(result)
    assert (step["judge_error"], step["judge_message"]) == ("llm_misconfigured",
                                                            "llm_misconfigured: the endpoint 'test' is not declared")


# -- it only adds ----------------------------------------------------------------------------------


UNSTABLE = DRAFT + " All payments are stable."


@pytest.mark.parametrize(("answer", "added"), [
    ({"unsupported": []}, []),
    ({"unsupported": [{"sentence": SENTENCE, "words": WORDS}]}, [UNSUPPORTED]),
    ("garbage", [UNAVAILABLE]),
], ids=["finds-nothing", "finds-another", "answers-garbage"])
def test_a_reader_never_removes_a_finding_of_the_checks(scripted, answer, added):
    approved(scripted, UNSTABLE)
    plain = run(scripted)
    approved(scripted, UNSTABLE).answer("submit_judgement", answer)
    judged = run(scripted, judge=judge_settings(scripted))
    assert (plain.stop_reason, plain.phase) == ("invalid_answer:restricted_claims", "finalize")
    assert (judged.stop_reason, judged.phase, judged.candidate) == (plain.stop_reason, "finalize", UNSTABLE)
    kept = len(plain.guard["violations"])
    assert kept >= 1 and judged.guard["violations"][:kept] == plain.guard["violations"]
    assert [v["check"] for v in judged.guard["violations"][kept:]] == added
    # The text the checks stopped was still read: its findings are shown with theirs.
    assert [step["phase"] for step in judged.trace][-2:] == ["finalize", "judge"]


def test_an_empty_or_too_long_text_is_not_read(scripted):
    approved(scripted)
    result = run(scripted, judge=judge_settings(scripted), max_answer_chars=50)
    assert result.stop_reason == "invalid_answer:too_long" and len(scripted.fake.requests) == 2
    assert "judge" not in [step["phase"] for step in result.trace]


# -- self-critique, snapshots, the catalogue --------------------------------------------------------------


def test_self_critique_asks_the_reader_after_its_final_checks(scripted):
    scripted.answer("submit_draft", {"draft": DRAFT}).answer("submit_critique", CRITIQUE_APPROVE)
    scripted.answer("submit_judgement", {"unsupported": [{"sentence": SENTENCE, "words": WORDS}]})
    settings = judge_settings(scripted)
    policy = scripted.policy(SelfCritiquePolicy, judge=settings)
    result = run_self_critique(GOAL, DEMO_CONTEXT, policy, scripted.llm, judge=judge_llm(scripted, settings))
    assert (result.stop_reason, result.phase, result.candidate) == (UNSUPPORTED, "judge", DRAFT)
    assert result.critique["decision"] == "approve" and result.audit is not None


def test_a_policy_snapshot_keeps_its_reader():
    policy = ReflectionPolicy(judge=ModelSettings(model="judge-model", endpoint="local", timeout_seconds=12.5))
    assert ReflectionPolicy.from_dict(json.loads(json.dumps(policy.to_dict()))) == policy
    assert ReflectionPolicy.from_dict(ReflectionPolicy().to_dict()).judge is None


def test_the_reader_stops_are_catalogued_and_open_escalations():
    for reason in (UNSUPPORTED, UNAVAILABLE):
        assert reason in STOP_REASONS and explain(reason) == STOP_REASONS[reason]
        assert opens_escalation(reason)


def test_read_verdict_refuses_every_other_shape_and_bounds_its_size():
    assert read_verdict({"unsupported": []}, DRAFT).findings == ()
    with pytest.raises(Unreadable, match="at most 20"):
        read_verdict({"unsupported": [{"sentence": SENTENCE, "words": WORDS}] * 21}, DRAFT)
    long = read_verdict({"unsupported": [{"sentence": SENTENCE, "words": "x" * 301}]}, DRAFT)
    assert [d["why"] for d in long.dropped] == ["the words are longer than 300 characters"]
    assert len(long.dropped[0]["words"]) == 300
    twice = read_verdict({"unsupported": [{"sentence": SENTENCE, "words": WORDS}] * 2}, DRAFT)
    assert len(twice.findings) == 1


# -- the reader's model from the environment --------------------------------------------------------------


LOCAL = "http://127.0.0.1:9/v1"


def test_no_reader_is_built_for_a_policy_without_one():
    assert judge_from_env(ReflectionPolicy(), {"LLM_ENDPOINTS": f"local={LOCAL}"}) is None


def test_the_reader_takes_its_declared_endpoint_and_keeps_its_own_model_and_timeout():
    policy = ReflectionPolicy(judge=ModelSettings(model="judge-model", endpoint="local", timeout_seconds=7))
    reader = judge_from_env(policy, {"LLM_ENDPOINTS": f"local={LOCAL}", "OPENAI_MODEL": "other-model",
                                     "OPENAI_TIMEOUT_SECONDS": "99"})
    assert isinstance(reader, OpenAIChat)
    assert (reader.label, reader.settings.timeout_seconds) == ("judge-model", 7)
    assert reader.endpoint == f"{LOCAL}#judge-model"


@pytest.mark.parametrize(("environ", "says"), [
    ({}, "no model endpoint is declared"),
    ({"LLM_BACKEND": "offline", "LLM_ENDPOINTS": f"local={LOCAL}"}, "no model endpoint is declared"),
    ({"LLM_ENDPOINTS": f"other={LOCAL}"}, "the endpoint 'local', which is not declared"),
])
def test_a_reader_that_cannot_be_reached_here_is_unavailable_not_absent(environ, says):
    policy = ReflectionPolicy(judge=ModelSettings(model="judge-model", endpoint="local"))
    reader = judge_from_env(policy, environ)
    assert isinstance(reader, UnavailableModel) and says in reader.why


def test_a_reader_counts_against_the_run_budget(scripted):
    """Its tokens are the run's: a reader call the token budget has no room for is not sent."""
    approved(scripted)
    settings = dataclasses.replace(judge_settings(scripted), max_completion_tokens=5000)
    result = run(scripted, judge=settings, max_tokens=2000)
    assert result.stop_reason == UNAVAILABLE and len(scripted.fake.requests) == 2
    assert judge_step(result)["judge_error"] == "max_tokens"


# -- replay --------------------------------------------------------------------------------------


def test_a_run_read_by_the_reader_replays_with_its_recorded_answers(scripted):
    from agents.core.replay import DIVERGED, UNCHANGED, Ending, Recording, replay

    calls = []

    class Recorder:
        def on_step(self, run_id, entry):
            pass

        def on_model_call(self, run_id, record):
            calls.append(record)

    approved(scripted).answer("submit_judgement", {"unsupported": [{"sentence": SENTENCE, "words": WORDS}]})
    settings = judge_settings(scripted)
    result = run(scripted, judge=settings, observer=Recorder())
    policy = scripted.policy(ReflectionPolicy, judge=settings)
    recording = Recording(pipeline="reflection", status=result.status, goal=GOAL, context=DEMO_CONTEXT,
                          policy=json.loads(json.dumps(policy.to_dict())), calls=calls, ending=Ending.of(result))
    assert [call.stage for call in calls] == ["draft", "review", "judge"]
    assert replay(recording, policy).verdict == UNCHANGED
    # Without the reader the recorded text would have passed; a reader the run never asked cannot be replayed.
    assert replay(recording, dataclasses.replace(policy, judge=None)).after.stop_reason == "success"
    unread = dataclasses.replace(recording, calls=calls[:2])  # a run recorded before it had a reader
    diverged = replay(unread, policy)
    assert (diverged.verdict, diverged.note) == (DIVERGED, "model call 3 (judge, attempt 1): the run recorded only 2 "
                                                           "model call(s)")

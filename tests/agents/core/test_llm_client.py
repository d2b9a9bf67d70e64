"""The openai SDK backend, driven through the real SDK against a local fake server."""

from __future__ import annotations

import dataclasses
import email.utils
import json
import logging
import time
from datetime import UTC, datetime

import openai
import pytest
import time_machine

from agents.core.llm.base import LLMError, StageRequest
from agents.core.llm.breaker import breaker_for, reset_breakers
from agents.core.llm.client import OpenAIChat, client_from_env
from agents.core.llm.endpoints import Endpoint
from agents.core.llm.offline import OfflineModel
from agents.core.llm.schemas import openai_tool
from agents.core.policy import ModelSettings
from agents.testing.scripted_server import (
    content,
    delay,
    hang_up,
    no_choices,
    status,
    tool_call,
    unused_base_url,
)

KEY = "sk-test-KEY-7f3a9c1e-do-not-leak"

REVIEW = {"decision": "approve", "issues": [], "fix_plan": [], "reason": "fine"}
REVIEW_REQUEST = StageRequest(
    stage="review", system="You review drafts.", user="Draft: all good.", tool="reflect", attempt=1
)
JSON_REVIEW_REQUEST = dataclasses.replace(REVIEW_REQUEST, system="You review drafts. Answer in JSON.")
TEXT_REQUEST = StageRequest(
    stage="finalize", system="You write the answer.", user="Ticket: hello", tool=None
)


@pytest.fixture(autouse=True)
def _fresh_breakers():
    reset_breakers()
    yield
    reset_breakers()


class Sleeps(list):
    """A ``sleep`` stub that records the delays it was asked for instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps():
    return Sleeps()


@pytest.fixture
def make_chat(fake_openai, sleeps):
    chats = []

    def make(*, api_key=KEY, base_url=None, rng=lambda: 1.0, breaker_threshold=50, **fields):
        fields.setdefault("timeout_seconds", 0.5)
        fields.setdefault("max_retries", 2)
        chat = OpenAIChat(
            ModelSettings(**fields),
            endpoint=Endpoint("test", base_url or fake_openai.base_url, "TEST_KEY", api_key or ""),
            breaker_threshold=breaker_threshold,
            sleep=sleeps,
            rng=rng,
        )
        chats.append(chat)
        return chat

    yield make
    for chat in chats:
        chat.close()


def stop_reason(chat, request=REVIEW_REQUEST) -> LLMError:
    with pytest.raises(LLMError) as caught:
        chat.complete(request)
    return caught.value


# -- what is sent and what comes back ---------------------------------------------------------


def test_tool_mode_sends_the_stage_tool_and_tool_choice_and_returns_the_arguments(
    make_chat, fake_openai
):
    fake_openai.script(tool_call("reflect", REVIEW))
    chat = make_chat(model="gpt-test", temperature=0.0)

    reply = chat.complete(REVIEW_REQUEST)

    assert json.loads(reply.text) == REVIEW
    assert reply.via_tool is True
    [sent] = fake_openai.requests
    assert sent.path == "/v1/chat/completions"
    assert sent["model"] == "gpt-test"
    assert sent["temperature"] == 0.0
    assert sent["messages"] == [
        {"role": "system", "content": "You review drafts."},
        {"role": "user", "content": "Draft: all good."},
    ]
    assert sent["tools"] == [openai_tool("reflect")]
    assert sent["tool_choice"] == {"type": "function", "function": {"name": "reflect"}}
    assert "response_format" not in sent


def test_json_mode_asks_for_a_json_object_and_returns_the_content(make_chat, fake_openai):
    fake_openai.script(content(json.dumps(REVIEW)))
    chat = make_chat(structured_output="json")

    reply = chat.complete(JSON_REVIEW_REQUEST)

    assert json.loads(reply.text) == REVIEW
    assert reply.via_tool is False
    [sent] = fake_openai.requests
    assert sent["response_format"] == {"type": "json_object"}
    assert "tools" not in sent and "tool_choice" not in sent


@pytest.mark.parametrize("mode", ["tools", "json"])
def test_the_request_is_the_one_the_sdks_create_sends(mode, make_chat, fake_openai):
    """The client posts its params as they are, without ``chat.completions.create``'s walk over them:
    the SDK's own ``create`` with the same params sends the same body (its keys in its own order) and the
    same headers."""
    request = REVIEW_REQUEST if mode == "tools" else JSON_REVIEW_REQUEST
    answer = tool_call("reflect", REVIEW) if mode == "tools" else content(json.dumps(REVIEW))
    fake_openai.script(answer, answer)
    chat = make_chat(model="gpt-test", structured_output=mode)
    chat.complete(request)
    ours = fake_openai.requests[0]

    sdk = openai.OpenAI(api_key=KEY, base_url=fake_openai.base_url, max_retries=0)
    try:
        sdk.chat.completions.create(**ours, timeout=0.5)
    finally:
        sdk.close()
    theirs = fake_openai.requests[1]

    assert dict(ours) == dict(theirs)
    assert ours.path == theirs.path == "/v1/chat/completions"
    assert ours.headers == theirs.headers
    assert ours.headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.parametrize("mode", ["tools", "json"])
def test_a_stage_without_a_tool_asks_for_plain_text(make_chat, fake_openai, mode):
    fake_openai.script(content("Your refund is on its way."))
    chat = make_chat(structured_output=mode)

    reply = chat.complete(TEXT_REQUEST)

    assert reply.text == "Your refund is on its way."
    assert reply.via_tool is False
    [sent] = fake_openai.requests
    assert not {"tools", "tool_choice", "response_format"} & sent.keys()


def test_tool_mode_takes_the_content_when_the_server_answers_without_a_tool_call(
    make_chat, fake_openai
):
    fake_openai.script(content('{"decision": "approve"}'))

    reply = make_chat().complete(REVIEW_REQUEST)

    assert reply.text == '{"decision": "approve"}'
    assert reply.via_tool is False


def test_invalid_json_arguments_are_returned_verbatim_for_the_pipeline_to_judge(
    make_chat, fake_openai
):
    fake_openai.script(tool_call("reflect", '{"decision": "appro'))

    reply = make_chat().complete(REVIEW_REQUEST)

    assert reply.text == '{"decision": "appro'


def test_calling_another_tool_stops_with_llm_wrong_tool(make_chat, fake_openai):
    fake_openai.script(tool_call("submit_draft", {"draft": "x"}))

    error = stop_reason(make_chat())

    assert error.reason == "llm_wrong_tool"
    assert "'reflect'" in str(error) and "'submit_draft'" in str(error)
    [record] = error.calls
    assert record.outcome == "llm_wrong_tool"
    assert record.raw == '{"draft": "x"}'
    assert (record.prompt_tokens, record.completion_tokens) == (10, 5)


@pytest.mark.parametrize("text", [None, "", "  \n "])
@pytest.mark.parametrize(
    "mode, request_",
    [("tools", REVIEW_REQUEST), ("json", JSON_REVIEW_REQUEST), ("tools", TEXT_REQUEST)],
)
def test_an_empty_message_stops_with_llm_empty(make_chat, fake_openai, text, mode, request_):
    fake_openai.script(content(text))

    error = stop_reason(make_chat(structured_output=mode), request_)

    assert error.reason == "llm_empty"
    assert [r.outcome for r in error.calls] == ["llm_empty"]
    assert len(fake_openai.requests) == 1  # an answered request is not retried


def test_a_tool_call_with_empty_arguments_stops_with_llm_empty(make_chat, fake_openai):
    fake_openai.script(tool_call("reflect", ""))

    assert stop_reason(make_chat()).reason == "llm_empty"


def test_an_answer_without_choices_stops_with_llm_empty(make_chat, fake_openai):
    fake_openai.script(no_choices())

    error = stop_reason(make_chat())

    assert error.reason == "llm_empty"
    assert "no choices" in str(error)


def test_a_choice_without_a_message_stops_with_llm_empty(make_chat, fake_openai):
    fake_openai.script(status(200, {"object": "chat.completion", "choices": [{"index": 0}]}))

    assert stop_reason(make_chat()).reason == "llm_empty"


# -- tokens and call records ------------------------------------------------------------------


def test_usage_tokens_are_read_into_the_reply_and_the_record(make_chat, fake_openai):
    fake_openai.script(tool_call("reflect", REVIEW, usage=(321, 45)))

    reply = make_chat().complete(REVIEW_REQUEST)

    assert (reply.prompt_tokens, reply.completion_tokens) == (321, 45)
    [record] = reply.calls
    assert (record.prompt_tokens, record.completion_tokens) == (321, 45)


def test_an_answer_without_usage_counts_zero_tokens(make_chat, fake_openai):
    fake_openai.script(content("plain", usage=None))

    reply = make_chat().complete(TEXT_REQUEST)

    assert (reply.prompt_tokens, reply.completion_tokens) == (0, 0)


def test_every_http_attempt_is_recorded_with_its_try_number_and_outcome(make_chat, fake_openai):
    fake_openai.script(status(500), status(429), tool_call("reflect", REVIEW, usage=(7, 3)))
    request = StageRequest(stage="revise", system="s", user="u", tool="reflect", attempt=2)

    reply = make_chat(model="gpt-test").complete(request)

    assert [(r.try_number, r.outcome) for r in reply.calls] == [
        (1, "llm_unavailable"),
        (2, "llm_rate_limited"),
        (3, "ok"),
    ]
    assert {(r.stage, r.attempt, r.model) for r in reply.calls} == {("revise", 2, "gpt-test")}
    assert all(r.latency_ms > 0 for r in reply.calls)
    assert reply.calls[0].error.startswith("HTTP 500")
    assert reply.calls[1].error.startswith("HTTP 429")
    assert reply.calls[2].raw == json.dumps(REVIEW) and reply.calls[2].error == ""
    assert (reply.prompt_tokens, reply.completion_tokens) == (7, 3)


# -- transient failures, retries and backoff --------------------------------------------------


def test_429_then_success_waits_as_long_as_retry_after_says(make_chat, fake_openai, sleeps):
    fake_openai.script(status(429, headers={"Retry-After": "3"}), tool_call("reflect", REVIEW))

    reply = make_chat().complete(REVIEW_REQUEST)

    assert json.loads(reply.text) == REVIEW
    assert sleeps == [3.0]
    assert len(fake_openai.requests) == 2


def test_retry_after_ms_is_honoured_before_llm_rate_limited(make_chat, fake_openai, sleeps):
    fake_openai.script(status(429, headers={"retry-after-ms": "1500"}), content("ok"))

    make_chat().complete(TEXT_REQUEST)

    assert sleeps == [1.5]


def test_retry_after_as_an_http_date_is_honoured_before_llm_rate_limited(
    make_chat, fake_openai, sleeps
):
    # The clock stands still (time-machine): the wait is the date's five seconds however long the
    # request took on a loaded machine.
    with time_machine.travel(datetime(2026, 11, 23, 9, 0, tzinfo=UTC), tick=False):
        when = email.utils.formatdate(time.time() + 5, usegmt=True)
        fake_openai.script(status(429, headers={"Retry-After": when}), content("ok"))

        make_chat().complete(TEXT_REQUEST)

    assert sleeps == [5.0]


def test_a_very_long_retry_after_is_capped_at_20_seconds_before_llm_rate_limited(
    make_chat, fake_openai, sleeps
):
    fake_openai.script(status(429, headers={"Retry-After": "3600"}), content("ok"))

    make_chat().complete(TEXT_REQUEST)

    assert sleeps == [20.0]


def test_without_retry_after_the_backoff_is_exponential_with_full_jitter_and_capped(
    make_chat, fake_openai, sleeps
):
    fake_openai.script(*[status(503)] * 7)

    error = stop_reason(make_chat(max_retries=6, rng=lambda: 1.0))

    assert error.reason == "llm_unavailable"
    assert sleeps == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]


def test_the_jitter_scales_each_backoff_step(make_chat, fake_openai, sleeps):
    fake_openai.script(status(500), status(500), content("ok"))

    make_chat(rng=lambda: 0.25).complete(TEXT_REQUEST)

    assert sleeps == [0.125, 0.25]


def test_persistent_429_stops_with_llm_rate_limited_after_the_retries(
    make_chat, fake_openai, sleeps
):
    fake_openai.script(*[status(429, headers={"Retry-After": "0"})] * 3)

    error = stop_reason(make_chat(max_retries=2))

    assert error.reason == "llm_rate_limited"
    assert len(fake_openai.requests) == 3
    assert [(r.try_number, r.outcome) for r in error.calls] == [
        (1, "llm_rate_limited"),
        (2, "llm_rate_limited"),
        (3, "llm_rate_limited"),
    ]
    assert sleeps == [0.0, 0.0]


@pytest.mark.parametrize("code", [500, 502, 503])
def test_persistent_5xx_stops_with_llm_unavailable_after_the_retries(
    make_chat, fake_openai, code
):
    fake_openai.script(*[status(code)] * 2)

    error = stop_reason(make_chat(max_retries=1))

    assert error.reason == "llm_unavailable"
    assert len(fake_openai.requests) == 2
    assert f"HTTP {code}" in str(error)


@pytest.mark.parametrize("code, reason", [(408, "llm_timeout"), (409, "llm_unavailable")])
def test_408_and_409_are_retried_then_stop_with_llm_timeout_or_llm_unavailable(
    make_chat, fake_openai, code, reason
):
    fake_openai.script(*[status(code)] * 2)

    error = stop_reason(make_chat(max_retries=1))

    assert error.reason == reason
    assert len(fake_openai.requests) == 2


def test_a_server_slower_than_the_timeout_stops_with_llm_timeout(make_chat, fake_openai):
    fake_openai.script(delay(3, content("late")), delay(3, content("late")))

    error = stop_reason(make_chat(timeout_seconds=0.3, max_retries=1), TEXT_REQUEST)

    assert error.reason == "llm_timeout"
    assert [r.outcome for r in error.calls] == ["llm_timeout", "llm_timeout"]
    assert len(fake_openai.requests) == 2


def test_a_timeout_then_an_answer_succeeds(make_chat, fake_openai):
    fake_openai.script(delay(3, content("late")), content("on time"))

    reply = make_chat(timeout_seconds=0.3).complete(TEXT_REQUEST)

    assert reply.text == "on time"
    assert [r.outcome for r in reply.calls] == ["llm_timeout", "ok"]


def test_a_dropped_connection_stops_with_llm_unavailable(make_chat, fake_openai):
    fake_openai.script(hang_up(), hang_up())

    error = stop_reason(make_chat(max_retries=1))

    assert error.reason == "llm_unavailable"
    assert len(fake_openai.requests) == 2


def test_a_refused_connection_stops_with_llm_unavailable(make_chat, sleeps):
    error = stop_reason(make_chat(base_url=unused_base_url(), max_retries=2))

    assert error.reason == "llm_unavailable"
    assert [r.try_number for r in error.calls] == [1, 2, 3]
    assert "refused" in str(error).lower()
    assert len(sleeps) == 2


# -- permanent failures -----------------------------------------------------------------------


@pytest.mark.parametrize("code", [401, 403])
def test_refused_credentials_stop_with_llm_auth_failed_without_a_retry(
    make_chat, fake_openai, code
):
    fake_openai.script(status(code))

    error = stop_reason(make_chat(max_retries=3))

    assert error.reason == "llm_auth_failed"
    assert len(fake_openai.requests) == 1
    assert [r.outcome for r in error.calls] == ["llm_auth_failed"]


@pytest.mark.parametrize("code", [400, 404, 422])
def test_a_rejected_request_stops_with_llm_bad_request_without_a_retry(
    make_chat, fake_openai, code
):
    body = {"error": {"message": "Unknown parameter: 'tool_choice'", "type": "invalid_request"}}
    fake_openai.script(status(code, body))

    error = stop_reason(make_chat(max_retries=3))

    assert error.reason == "llm_bad_request"
    assert "Unknown parameter" in str(error)
    assert len(fake_openai.requests) == 1


# -- the key stays secret ---------------------------------------------------------------------


def test_the_key_never_appears_in_llm_auth_failed_errors_records_or_logs(
    make_chat, fake_openai, caplog
):
    caplog.set_level(logging.INFO, logger="agents.core.llm")
    echo = {"error": {"message": f"Incorrect API key provided: {KEY}.", "type": "auth"}}
    fake_openai.script(status(500, echo), status(401, echo))
    chat = make_chat()

    error = stop_reason(chat)

    assert fake_openai.requests[0].headers["authorization"] == f"Bearer {KEY}"  # it was used
    assert error.reason == "llm_auth_failed"
    assert "Incorrect API key provided" in str(error)
    seen = [str(error), repr(error), chat.endpoint, repr(chat), caplog.text]
    seen += [repr(record) for record in error.calls]
    assert not [text for text in seen if KEY in text]
    assert "retry in" in caplog.text and "llm_auth_failed" in caplog.text


def test_the_endpoint_names_the_server_and_model_without_credentials(make_chat):
    base_url = "https://user:secret@llm.example.com/openai/v1/?api-key=secret"
    chat = make_chat(base_url=base_url, model="m1")

    assert chat.endpoint == "https://llm.example.com/openai/v1#m1"
    assert chat.label == "m1"


def test_without_a_key_the_sdk_sends_a_placeholder(make_chat, fake_openai):
    fake_openai.script(content("ok"))

    make_chat(api_key=None).complete(TEXT_REQUEST)

    assert fake_openai.requests[0].headers["authorization"] == "Bearer not-needed"


# -- the circuit breaker ----------------------------------------------------------------------


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_failures_in_a_row_open_the_circuit_and_calls_stop_with_llm_circuit_open_without_a_request(
    make_chat, fake_openai
):
    fake_openai.script(status(500), status(500))
    chat = make_chat(max_retries=0, breaker_threshold=2)

    assert stop_reason(chat).reason == "llm_unavailable"
    assert stop_reason(chat).reason == "llm_unavailable"
    error = stop_reason(chat)

    assert error.reason == "llm_circuit_open"
    assert len(fake_openai.requests) == 2
    [record] = error.calls
    assert (record.outcome, record.latency_ms, record.try_number) == ("llm_circuit_open", 0.0, 1)


def test_the_circuit_half_opens_after_the_cooldown_and_a_success_closes_it_after_llm_circuit_open(
    make_chat, fake_openai
):
    fake_openai.script(status(503), status(503), content("back"), content("again"))
    chat = make_chat(max_retries=0)
    clock = Clock()
    breaker = breaker_for(chat.endpoint, failure_threshold=2, cooldown_seconds=30, clock=clock)
    stop_reason(chat, TEXT_REQUEST)
    stop_reason(chat, TEXT_REQUEST)
    assert stop_reason(chat, TEXT_REQUEST).reason == "llm_circuit_open"

    clock.now = 30
    assert breaker.state == "half_open"
    assert chat.complete(TEXT_REQUEST).text == "back"

    assert breaker.state == "closed"
    assert chat.complete(TEXT_REQUEST).text == "again"
    assert len(fake_openai.requests) == 4


def test_a_failed_half_open_trial_reopens_the_circuit_with_llm_circuit_open(
    make_chat, fake_openai
):
    fake_openai.script(status(503), status(503), hang_up())
    chat = make_chat(max_retries=0)
    clock = Clock()
    breaker_for(chat.endpoint, failure_threshold=2, cooldown_seconds=30, clock=clock)
    stop_reason(chat)
    stop_reason(chat)

    clock.now = 30
    assert stop_reason(chat).reason == "llm_unavailable"  # the trial
    assert stop_reason(chat).reason == "llm_circuit_open"
    assert len(fake_openai.requests) == 3


def test_the_circuit_opening_during_retries_stops_with_llm_circuit_open(
    make_chat, fake_openai
):
    fake_openai.script(status(500), status(500))

    error = stop_reason(make_chat(max_retries=3, breaker_threshold=2))

    assert error.reason == "llm_circuit_open"
    assert [r.outcome for r in error.calls] == [
        "llm_unavailable",
        "llm_unavailable",
        "llm_circuit_open",
    ]
    assert "last error: llm_unavailable" in str(error)
    assert len(fake_openai.requests) == 2


def test_rejected_requests_do_not_open_the_circuit_so_no_llm_circuit_open(
    make_chat, fake_openai
):
    fake_openai.script(status(400), status(401), status(400), content("ok"))
    chat = make_chat(max_retries=0, breaker_threshold=2)

    assert [stop_reason(chat).reason for _ in range(3)] == [
        "llm_bad_request",
        "llm_auth_failed",
        "llm_bad_request",
    ]
    assert chat.complete(TEXT_REQUEST).text == "ok"


def test_clients_of_one_endpoint_share_a_circuit_so_both_see_llm_circuit_open(
    make_chat, fake_openai
):
    fake_openai.script(status(500), status(500))
    first = make_chat(max_retries=0, breaker_threshold=2)
    second = make_chat(max_retries=0, breaker_threshold=2)

    stop_reason(first)
    stop_reason(second)

    assert stop_reason(first).reason == "llm_circuit_open"
    assert stop_reason(second).reason == "llm_circuit_open"
    assert make_chat(model="other-model", max_retries=0).endpoint != first.endpoint


# -- configuration from the environment -------------------------------------------------------


def test_without_a_key_the_environment_picks_the_offline_model():
    assert isinstance(client_from_env(environ={}), OfflineModel)
    assert isinstance(client_from_env(environ={"OPENAI_API_KEY": "  "}), OfflineModel)


def test_llm_backend_offline_picks_the_offline_model_even_with_a_key():
    environ = {"LLM_BACKEND": "offline", "OPENAI_API_KEY": KEY}
    assert isinstance(client_from_env(environ=environ), OfflineModel)


def test_with_a_key_the_environment_picks_the_sdk_with_its_settings():
    environ = {
        "OPENAI_API_KEY": KEY,
        "OPENAI_MODEL": "gpt-env",
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
        "OPENAI_TIMEOUT_SECONDS": "12.5",
        "OPENAI_MAX_RETRIES": "4",
        "OPENAI_STRUCTURED_OUTPUT": "json",
    }
    chat = client_from_env(ModelSettings(temperature=0.0, input_cost_per_1k=0.1), environ=environ)

    assert isinstance(chat, OpenAIChat)
    assert chat.label == "gpt-env"
    assert chat.endpoint == "http://127.0.0.1:9/v1#gpt-env"
    assert chat.settings == ModelSettings(
        model="gpt-env",
        timeout_seconds=12.5,
        max_retries=4,
        structured_output="json",
        temperature=0.0,
        input_cost_per_1k=0.1,
    )
    chat.close()


def test_unset_variables_keep_the_given_settings():
    given = ModelSettings(model="policy-model", endpoint="local", max_retries=1)

    chat = client_from_env(given, environ={"LLM_ENDPOINTS": "local=http://127.0.0.1:9/v1"})

    assert chat.settings == given
    assert client_from_env(environ={"OPENAI_API_KEY": KEY}).settings == ModelSettings()


def test_llm_backend_openai_uses_the_sdk_without_a_key(fake_openai):
    fake_openai.script(content("local"))
    environ = {"LLM_BACKEND": "openai", "OPENAI_BASE_URL": fake_openai.base_url}

    chat = client_from_env(environ=environ)

    assert isinstance(chat, OpenAIChat)
    assert chat.complete(TEXT_REQUEST).text == "local"
    assert fake_openai.requests[0].headers["authorization"] == "Bearer not-needed"
    chat.close()


@pytest.mark.parametrize(
    "name, value, message",
    [
        ("OPENAI_TIMEOUT_SECONDS", "soon", "OPENAI_TIMEOUT_SECONDS must be a number"),
        ("OPENAI_TIMEOUT_SECONDS", "0", "OPENAI_TIMEOUT_SECONDS must be more than 0"),
        ("OPENAI_MAX_RETRIES", "two", "OPENAI_MAX_RETRIES must be a whole number"),
        ("OPENAI_MAX_RETRIES", "-1", "OPENAI_MAX_RETRIES must not be negative"),
        ("OPENAI_STRUCTURED_OUTPUT", "xml", "OPENAI_STRUCTURED_OUTPUT must be"),
        ("LLM_BACKEND", "magic", "LLM_BACKEND must be"),
    ],
)
def test_a_bad_environment_value_raises_a_clear_value_error(name, value, message):
    with pytest.raises(ValueError, match=message):
        client_from_env(environ={"OPENAI_API_KEY": KEY, name: value})


def test_an_unknown_structured_output_mode_is_refused():
    with pytest.raises(ValueError, match="structured_output"):
        OpenAIChat(ModelSettings(structured_output="xml"), endpoint=Endpoint("x", "http://127.0.0.1:9/v1"))


def test_breaker_settings_come_from_the_environment():
    chat = client_from_env(environ={"OPENAI_API_KEY": "sk-x", "LLM_BREAKER_THRESHOLD": "2",
                                    "LLM_BREAKER_COOLDOWN_SECONDS": "0.5"})
    assert (chat.breaker.failure_threshold, chat.breaker.cooldown_seconds) == (2, 0.5)
    with pytest.raises(ValueError, match="LLM_BREAKER_THRESHOLD"):
        client_from_env(environ={"OPENAI_API_KEY": "sk-x", "LLM_BREAKER_THRESHOLD": "many"})


# -- bounded calls, endpoint settings, what the server did ------------------------------------------


def test_every_request_carries_a_completion_limit_from_the_stage_never_above_the_ceiling(make_chat, fake_openai):
    fake_openai.script(tool_call("reflect", REVIEW), tool_call("reflect", REVIEW), content("hi"))
    chat = make_chat(max_completion_tokens=300)
    chat.complete(dataclasses.replace(REVIEW_REQUEST, max_completion_tokens=120))
    chat.complete(dataclasses.replace(REVIEW_REQUEST, max_completion_tokens=5000))
    chat.complete(TEXT_REQUEST)
    assert [r["max_completion_tokens"] for r in fake_openai.requests] == [120, 300, 300]
    assert all("max_tokens" not in r for r in fake_openai.requests)


@pytest.mark.parametrize("mode, reply", [("tools", tool_call("reflect", '{"decision": "appr')),
                                         ("json", content('{"decision": "appr'))])
def test_finish_reason_length_is_llm_truncated_not_invalid_json(make_chat, fake_openai, mode, reply):
    body = dict(reply.body)
    body["choices"] = [dict(body["choices"][0], finish_reason="length")]
    fake_openai.script(dataclasses.replace(reply, body=body))
    request = JSON_REVIEW_REQUEST if mode == "json" else REVIEW_REQUEST
    error = stop_reason(make_chat(structured_output=mode), dataclasses.replace(request, max_completion_tokens=64))
    assert error.reason == "llm_truncated"
    [record] = error.calls
    assert record.outcome == "llm_truncated" and record.raw == '{"decision": "appr'
    assert "64 tokens" in record.error
    assert len(fake_openai.requests) == 1  # a cut answer is not retried: it would be cut again


def test_an_answer_that_used_the_whole_limit_is_llm_truncated_whatever_its_finish_reason(make_chat, fake_openai):
    # llama-cpp-python answers a tool call cut at max_tokens with finish_reason "tool_calls".
    fake_openai.script(tool_call("reflect", '{"decision": "appr', usage=(300, 64)))
    error = stop_reason(make_chat(), dataclasses.replace(REVIEW_REQUEST, max_completion_tokens=64))
    assert error.reason == "llm_truncated"
    assert "finish_reason: tool_calls" in error.calls[0].error


def endpoint_chat(fake_openai, **options):
    return OpenAIChat(ModelSettings(), endpoint=Endpoint("local", fake_openai.base_url, **options))


@pytest.mark.parametrize("form, sent", [
    ("named", {"type": "function", "function": {"name": "reflect"}}),
    ("required", "required"),
    ("auto", "auto"),
    ("omit", None),
])
def test_the_tool_choice_form_is_an_endpoint_setting(fake_openai, form, sent):
    fake_openai.script(tool_call("reflect", REVIEW))
    endpoint_chat(fake_openai, tool_choice=form).complete(REVIEW_REQUEST)
    [request] = fake_openai.requests
    assert request.get("tool_choice") == sent
    assert request["tools"][0]["function"]["name"] == "reflect"


def test_the_limit_parameter_and_instructions_in_user_are_endpoint_settings(fake_openai):
    fake_openai.script(tool_call("reflect", REVIEW))
    endpoint_chat(fake_openai, limit_param="max_tokens", instructions_in_user=True).complete(REVIEW_REQUEST)
    [request] = fake_openai.requests
    assert request["max_tokens"] == 1024 and "max_completion_tokens" not in request
    system, user = request["messages"]
    assert system == {"role": "system", "content": "You review drafts."}
    assert user["content"] == "INSTRUCTIONS:\nYou review drafts.\n\nDraft: all good."


def test_endpoint_settings_are_declared_with_the_endpoint():
    from agents.core.llm.endpoints import EndpointError, declared_endpoints

    endpoints = declared_endpoints({"LLM_ENDPOINTS": "local=http://127.0.0.1:8080/v1;tool_choice=required;"
                                                     "instructions_in_user=yes;limit_param=max_tokens,"
                                    "oa=https://api.openai.com/v1|OA_KEY", "OA_KEY": KEY})
    local, oa = endpoints["local"], endpoints["oa"]
    assert (local.tool_choice, local.instructions_in_user, local.limit_param) == ("required", True, "max_tokens")
    assert (oa.tool_choice, oa.instructions_in_user, oa.limit_param) == ("named", False, "max_completion_tokens")
    default = declared_endpoints({"OPENAI_BASE_URL": "http://127.0.0.1:1/v1",
                                  "OPENAI_ENDPOINT_OPTIONS": "tool_choice=omit"})["default"]
    assert default.tool_choice == "omit"
    with pytest.raises(EndpointError, match="tool_choice must be one of"):
        declared_endpoints({"LLM_ENDPOINTS": "local=http://127.0.0.1:8080/v1;tool_choice=object"})
    with pytest.raises(EndpointError, match="unknown endpoint setting"):
        declared_endpoints({"OPENAI_API_KEY": KEY, "OPENAI_ENDPOINT_OPTIONS": "grammar=on"})


def test_an_answer_without_the_tool_call_is_noted_on_the_call(make_chat, fake_openai):
    fake_openai.script(content(json.dumps(REVIEW)))
    reply = make_chat().complete(REVIEW_REQUEST)
    assert json.loads(reply.text) == REVIEW and reply.via_tool is False
    [record] = reply.calls
    assert record.note.startswith("no tool call (finish_reason: stop); the answer in the message content was accepted")


def post_json(url: str, body: dict) -> tuple[int, dict]:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=5) as answer:
            return answer.status, json.loads(answer.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


@pytest.mark.parametrize("change, message", [
    ({"response_format": {"type": "json_object"}}, "must contain the word 'json'"),
    ({"tool_choice": {"type": "function", "function": {"name": "route"}}}, "function 'route' not found"),
    ({"tools": None, "tool_choice": "required"}, "only allowed when 'tools' are specified"),
    ({"tool_choice": "any"}, "Supported values are: 'none', 'auto', and 'required'"),
    ({"max_tokens": 10}, "cannot both be set"),
    ({"max_completion_tokens": 0}, "Expected a value >= 1"),
    ({"temperature": 3}, "Expected a value <= 2"),
    ({"messages": []}, "too short - 'messages'"),
    ({"max_completion_tokens": None}, "no completion limit"),
])
def test_the_scripted_server_refuses_what_the_api_refuses(fake_openai, change, message):
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_completion_tokens": 10,
            "tools": [openai_tool("reflect")]}
    body.update(change)
    body = {k: v for k, v in body.items() if v is not None}
    fake_openai.script(content("never served"))
    code, answer = post_json(fake_openai.base_url + "/chat/completions", body)
    assert code == 400
    assert message in answer["error"]["message"]
    assert answer["error"]["type"] == "invalid_request_error"
    # a refused request consumes no scripted reply
    code, answer = post_json(fake_openai.base_url + "/chat/completions",
                             {"model": "m", "messages": [{"role": "user", "content": "hi"}],
                              "max_completion_tokens": 10})
    assert (code, answer["choices"][0]["message"]["content"]) == (200, "never served")

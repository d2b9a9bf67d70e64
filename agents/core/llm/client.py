"""The openai SDK backend of the LLM layer: any OpenAI-compatible chat completions server.

Every HTTP request becomes a :class:`CallRecord` (latency, tokens, outcome, raw answer), transient
failures are retried here with backoff and jitter, a circuit breaker per endpoint fails fast when
the server keeps failing, and whatever cannot be answered ends as an :class:`LLMError` whose
``reason`` is a stop reason from ``agents/core/stops.py``. The client is built from one declared
:class:`~agents.core.llm.endpoints.Endpoint`: its base URL and its key together, so the key goes to that
URL only. The key never leaves the SDK client: it is not in ``endpoint``, in records, in error
messages or in logs, and every configured key is redacted from the texts this module writes.
"""

from __future__ import annotations

import dataclasses
import email.utils
import logging
import math
import os
import random
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from agents.core.llm.base import LLM, CallRecord, LLMError, ModelReply, StageRequest
from agents.core.llm.breaker import CircuitBreaker, breaker_for
from agents.core.llm.endpoints import Endpoint, configured_keys, lower, redact, resolve_endpoint
from agents.core.llm.schemas import openai_tool
from agents.core.llm.slots import POLL_SECONDS, SlotStore, lease_seconds
from agents.core.policy import ModelSettings, Policy

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletion

log = logging.getLogger("agents.core.llm")

STRUCTURED_OUTPUT_MODES = ("tools", "json")
BACKOFF_BASE_SECONDS = 0.5
BACKOFF_CAP_SECONDS = 8.0
RETRY_AFTER_CAP_SECONDS = 20.0  # a longer server-requested wait is shortened to this
MAX_ERROR_CHARS = 500
CHAT_PATH = "/chat/completions"
# What ``chat.completions.create`` gives the SDK's post besides the body: bearer auth and the timeout.
CHAT_SECURITY = {"bearer_auth": True}

P = TypeVar("P", bound=Policy)


def _sdk():
    """The openai SDK, imported by the first client that needs it: importing it is a third of the
    start-up of every process that imports this module (web, worker, ``manage.py``), and a process
    on the offline model never sends a request."""
    import openai

    return openai


class OpenAIChat:
    """Implements the :class:`~agents.core.llm.base.LLM` protocol with the openai SDK."""

    def __init__(
        self,
        settings: ModelSettings,
        *,
        endpoint: Endpoint,
        breaker_threshold: int = 5,
        breaker_cooldown: float = 30.0,
        sleep: Callable[[float], None] = time.sleep,
        rng: Callable[[], float] = random.random,
        slots: SlotStore | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        if settings.structured_output not in STRUCTURED_OUTPUT_MODES:
            raise ValueError(
                f"structured_output must be one of {STRUCTURED_OUTPUT_MODES}, "
                f"got {settings.structured_output!r}"
            )
        if settings.max_retries < 0:
            raise ValueError(f"max_retries must not be negative, got {settings.max_retries}")
        self.settings = settings
        self.label = settings.model
        self._api_key = endpoint.api_key
        self._breaker_threshold = breaker_threshold
        self._breaker_cooldown = breaker_cooldown
        self._sleep = sleep
        self._rng = rng
        self._clock = clock
        self._slots = slots
        self._endpoint = endpoint
        # max_retries=0: the SDK would otherwise retry 408/409/429/5xx and timeouts on its own,
        # invisibly. We retry ourselves so that every HTTP attempt is recorded as a CallRecord
        # and counted by the circuit breaker.
        self._client = _sdk().OpenAI(
            # Local servers (vLLM, Ollama, llama.cpp) need no key, but the SDK refuses to start
            # without one.
            api_key=endpoint.api_key or "not-needed",
            base_url=endpoint.base_url,
            timeout=settings.timeout_seconds,
            max_retries=0,
        )
        self.endpoint = f"{_public_url(self._client.base_url)}#{settings.model}"
        self._tool_choice = endpoint.tool_choice
        self._limit_param = endpoint.limit_param
        self._instructions_in_user = endpoint.instructions_in_user

    def __repr__(self) -> str:
        return f"<OpenAIChat {self.endpoint}>"

    @property
    def breaker(self) -> CircuitBreaker:
        # Looked up on every call, so that reset_breakers() also reaches existing clients.
        return breaker_for(
            self.endpoint,
            failure_threshold=self._breaker_threshold,
            cooldown_seconds=self._breaker_cooldown,
        )

    def close(self) -> None:
        self._client.close()

    def limited_endpoint(self) -> Endpoint:
        """The endpoint as declared, under the limits an admin set for it (the lower of each applies)."""
        if self._slots is None:
            return self._endpoint
        limits = self._slots.limits(self._endpoint.name)
        return self._endpoint.limited(limits.concurrency, limits.max_completion_tokens)

    @property
    def endpoint_settings(self) -> dict[str, Any]:
        """The endpoint's request settings and limits, for the run record (no URL, no key)."""
        return self.limited_endpoint().settings()

    def completion_limit(self, request: StageRequest, endpoint: Endpoint | None = None) -> int:
        """Every request is bounded: the stage's own limit, never above the policy's ceiling nor the
        endpoint's."""
        endpoint = endpoint or self.limited_endpoint()
        ceiling = lower(self.settings.max_completion_tokens, endpoint.max_completion_tokens)
        return min(request.max_completion_tokens or ceiling, ceiling)

    def complete(self, request: StageRequest) -> ModelReply:
        endpoint = self.limited_endpoint()
        params = self._params(request, endpoint)
        records: list[CallRecord] = []
        tries = self.settings.max_retries + 1
        # The run's remaining wall time bounds every request of this call and the waits between them.
        deadline = None if request.time_left is None else self._clock() + request.time_left
        for try_number in range(1, tries + 1):
            timeout = self._timeout(deadline, endpoint, records)
            breaker = self.breaker
            if not breaker.allow():
                message = (
                    f"{self.endpoint} failed {breaker.failure_threshold} times in a row; "
                    f"calls are paused for {breaker.cooldown_seconds:g}s"
                )
                if records:  # the breaker opened during this call's retries
                    message += f" (last error: {records[-1].outcome}: {records[-1].error})"
                records.append(
                    self._record(request, try_number, 0.0, "llm_circuit_open", error=message)
                )
                self._log_failure(request, try_number, "llm_circuit_open", message)
                raise LLMError("llm_circuit_open", message, calls=tuple(records))

            slot = self._take_slot(endpoint, deadline, timeout, records)
            abandoned = False
            try:
                if slot is not None:  # the wait for the slot took some of the run's time
                    timeout = self._timeout(deadline, endpoint, records)
                started = time.perf_counter()
                response = self._send(params, timeout)
            except _sdk().APIError as exc:
                # A client that timed out leaves the server generating: its slot waits out its lease.
                abandoned = isinstance(exc, _sdk().APITimeoutError)
                latency_ms = (time.perf_counter() - started) * 1000
                reason, transient = _classify(exc)
                message = self._redact(_describe(exc))
                records.append(self._record(request, try_number, latency_ms, reason, error=message))
                if transient:
                    breaker.record_failure()
                else:
                    # The endpoint is up and answered: a 4xx is our problem, not an outage.
                    breaker.record_success()
                if transient and try_number < tries:
                    wait = self._retry_delay(try_number, exc)
                    if deadline is not None:
                        wait = max(0.0, min(wait, deadline - self._clock()))
                    log.info(
                        "LLM %s stage=%s attempt=%s try %s/%s failed with %s (%s); retry in %.2fs",
                        self.endpoint, request.stage, request.attempt, try_number, tries,
                        reason, message, wait,
                    )
                    self._sleep(wait)
                    continue
                self._log_failure(request, try_number, reason, message)
                # "from None": the SDK exception may quote the server's error body, which can
                # echo the key; keep it out of any traceback that gets logged.
                raise LLMError(reason, message, calls=tuple(records)) from None
            finally:
                if slot is not None and not abandoned:
                    self._slots.release(endpoint.name, slot)

            latency_ms = (time.perf_counter() - started) * 1000
            breaker.record_success()
            return self._reply(request, response, try_number, latency_ms, records, params[self._limit_param])
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    def _send(self, params: dict[str, Any], timeout: float) -> ChatCompletion:
        """The request ``chat.completions.create(**params, timeout=timeout)`` sends, posted as it is.

        ``create`` first walks the params against the SDK's typed dicts to rename aliased keys and format
        dates and files; the chat request's types have none, so for our plain strings and dicts that walk
        returns what it was given, at ~1 ms a call (most of it the tool's JSON Schema).
        ``tests/agents/core/test_llm_client.py`` checks that both send the same request."""
        from openai.types.chat import ChatCompletion

        return self._client.post(CHAT_PATH, body=params, cast_to=ChatCompletion,
                                 options={"timeout": timeout, "security": CHAT_SECURITY})

    def _timeout(self, deadline: float | None, endpoint: Endpoint, records: list[CallRecord]) -> float:
        """The next request's timeout: the endpoint's, cut to what is left of the run's time. A request
        that would have less than the endpoint's ``min_call_seconds`` is not sent."""
        timeout = self.settings.timeout_seconds
        if deadline is None:
            return timeout
        left = deadline - self._clock()
        last = f" (last error: {records[-1].outcome}: {records[-1].error})" if records else ""
        if left <= 0:
            raise LLMError("llm_timeout", "the run's time budget ran out before this request" + last,
                           calls=tuple(records))
        if left < endpoint.min_call_seconds:
            raise LLMError("max_seconds", f"{left:.1f}s of the run's time was left, less than the endpoint's "
                           f"min_call_seconds ({endpoint.min_call_seconds}); no request was sent" + last,
                           calls=tuple(records))
        return min(timeout, left)

    def _take_slot(self, endpoint: Endpoint, deadline: float | None, timeout: float,
                   records: list[CallRecord]) -> str | None:
        """A slot of an endpoint that declares its concurrency (None for one that does not), waited for
        at most until the run's deadline (else the request's timeout)."""
        if endpoint.concurrency is None or self._slots is None:
            return None
        waited_from = self._clock()
        until = deadline if deadline is not None else waited_from + timeout
        while (slot := self._slots.take(endpoint.name, endpoint.concurrency, lease_seconds(timeout))) is None:
            left = until - self._clock()
            if left <= 0:
                message = (f"the endpoint {endpoint.name!r} takes {endpoint.concurrency} call(s) at once and none "
                           f"came free in {self._clock() - waited_from:.1f}s; no request was sent")
                log.warning("LLM %s: %s", self.endpoint, message)
                raise LLMError("max_seconds" if deadline is not None else "llm_timeout", message,
                               calls=tuple(records))
            self._sleep(min(POLL_SECONDS, left))
        return slot

    # -- request ---------------------------------------------------------------------------

    def _messages(self, request: StageRequest) -> list[dict[str, str]]:
        user = request.user
        if self._instructions_in_user:  # for chat templates that drop the system message
            user = f"INSTRUCTIONS:\n{request.system}\n\n{user}"
        return [{"role": "system", "content": request.system}, {"role": "user", "content": user}]

    def _params(self, request: StageRequest, endpoint: Endpoint) -> dict[str, Any]:
        params: dict[str, Any] = {
            "model": self.settings.model,
            "messages": self._messages(request),
            "temperature": self.settings.temperature,
            self._limit_param: self.completion_limit(request, endpoint),
        }
        if request.tool is not None:
            if self.settings.structured_output == "tools":
                params["tools"] = [openai_tool(request.tool)]
                if self._tool_choice == "named":
                    params["tool_choice"] = {"type": "function", "function": {"name": request.tool}}
                elif self._tool_choice != "omit":
                    params["tool_choice"] = self._tool_choice
            else:
                params["response_format"] = {"type": "json_object"}
        return params

    def _retry_delay(self, try_number: int, exc: openai.APIError) -> float:
        """The server's Retry-After when it sent one, else exponential backoff with full jitter."""
        if isinstance(exc, _sdk().APIStatusError):
            retry_after = _retry_after_seconds(exc.response.headers)
            if retry_after is not None:
                return min(retry_after, RETRY_AFTER_CAP_SECONDS)
        ceiling = min(BACKOFF_CAP_SECONDS, BACKOFF_BASE_SECONDS * 2 ** (try_number - 1))
        return self._rng() * ceiling

    # -- answer ----------------------------------------------------------------------------

    def _reply(
        self,
        request: StageRequest,
        response: Any,
        try_number: int,
        latency_ms: float,
        records: list[CallRecord],
        limit: int,
    ) -> ModelReply:
        """The stage's reply from the server's answer. An answer the stage cannot use (no message, cut,
        the wrong tool, empty) is recorded as a failed call and raised as :class:`LLMError`."""
        usage = getattr(response, "usage", None)
        answered = {"prompt_tokens": int(getattr(usage, "prompt_tokens", 0) or 0),
                    "completion_tokens": int(getattr(usage, "completion_tokens", 0) or 0),
                    "response_model": _label(getattr(response, "model", None)),
                    "finish_reason": _finish_reason(response)}
        try:
            message, finish_reason = _first_choice(response)
            _check_not_cut(limit, message, finish_reason, answered["completion_tokens"])
            text, via_tool, note = self._answer(request, message, finish_reason)
            _check_not_empty(message, text, via_tool, note)
        except _Unusable as unusable:
            raise self._record_unusable(request, try_number, latency_ms, records, answered, unusable) from None
        records.append(
            self._record(request, try_number, latency_ms, "ok", **answered, raw=text, note=self._redact(note))
        )
        return ModelReply(
            text=text,
            via_tool=via_tool,
            prompt_tokens=sum(r.prompt_tokens for r in records),
            completion_tokens=sum(r.completion_tokens for r in records),
            calls=tuple(records),
        )

    def _answer(self, request: StageRequest, message: Any, finish_reason: Any) -> tuple[str, bool, str]:
        """The answer's text, whether it came as the tool call's arguments, and a note for the call
        record ("" when the answer came the way the stage asked)."""
        via_tool = False
        note = ""
        if request.tool is not None and self.settings.structured_output == "tools":
            tool_calls = message.tool_calls or []
            if tool_calls:
                text, via_tool = _tool_arguments(request, tool_calls[0]), True
            else:
                # Some servers ignore tool_choice and answer in the content; the pipeline
                # validates that text like any other, and the call and the trace say so.
                text = message.content or ""
                if isinstance(text, str) and text.strip():
                    note = (f"no tool call (finish_reason: {finish_reason}); the answer in the message "
                            "content was accepted and validated as the stage's JSON")
                else:
                    note = f"no tool call (finish_reason: {finish_reason}) and no content"
        else:
            text = message.content or ""
        if not isinstance(text, str):  # the SDK does not validate answers; some servers are odd
            text = ""
        return text, via_tool, note

    def _record_unusable(
        self,
        request: StageRequest,
        try_number: int,
        latency_ms: float,
        records: list[CallRecord],
        answered: dict[str, Any],
        unusable: _Unusable,
    ) -> LLMError:
        """The error to raise for an answer the stage cannot use, once its call is recorded and logged."""
        message = self._redact(unusable.message)  # it may quote the model (a tool name, a refusal)
        records.append(
            self._record(request, try_number, latency_ms, unusable.reason, **answered, raw=unusable.raw,
                         error=message)
        )
        self._log_failure(request, try_number, unusable.reason, message)
        return LLMError(unusable.reason, message, calls=tuple(records))

    # -- bookkeeping -----------------------------------------------------------------------

    def _record(
        self,
        request: StageRequest,
        try_number: int,
        latency_ms: float,
        outcome: str,
        **fields: Any,
    ) -> CallRecord:
        return CallRecord(
            stage=request.stage,
            attempt=request.attempt,
            try_number=try_number,
            model=self.settings.model,
            latency_ms=round(latency_ms, 3),
            outcome=outcome,
            # A call the open circuit breaker refused sent nothing: no request to show.
            messages=() if outcome == "llm_circuit_open" else tuple(self._messages(request)),
            **fields,
        )

    def _log_failure(
        self, request: StageRequest, try_number: int, reason: str, message: str
    ) -> None:
        log.warning(
            "LLM %s stage=%s attempt=%s failed on try %s with %s: %s",
            self.endpoint, request.stage, request.attempt, try_number, reason, message,
        )

    def _redact(self, text: str) -> str:
        """Every configured key out (this endpoint's and the others'), then cut to length."""
        return redact(text, [self._api_key, *configured_keys()])[:MAX_ERROR_CHARS]


class _Unusable(Exception):
    """An answer the stage cannot use: ``_reply`` records its call as failed with ``reason`` (a stop
    reason) and raises :class:`LLMError`. ``raw`` is whatever text the answer carried."""

    def __init__(self, reason: str, message: str, raw: str = ""):
        super().__init__(message)
        self.reason, self.message, self.raw = reason, message, raw


def _check_not_cut(limit: int, message: Any, finish_reason: Any, completion_tokens: int) -> None:
    # llama-cpp-python reports a tool call cut at the limit as finish_reason "tool_calls": an answer
    # that used the whole limit is taken as cut too.
    if finish_reason == "length" or completion_tokens >= limit:
        raise _Unusable(
            "llm_truncated",
            f"the answer was cut at the completion limit ({limit} tokens; {completion_tokens} generated; "
            f"finish_reason: {finish_reason})",
            raw=_answer_text(message),
        )


def _label(value: Any) -> str:
    """A short label the server sent (its model name, a finish reason), "" when it sent none: the SDK
    does not validate answers, and a label is kept for the record, never trusted."""
    return value[:200] if isinstance(value, str) else ""


def _finish_reason(response: Any) -> str:
    choices = getattr(response, "choices", None)
    return _label(getattr(choices[0], "finish_reason", None)) if choices else ""


def _first_choice(response: Any) -> tuple[Any, Any]:
    """The message of the answer's first choice and its finish reason."""
    choices = getattr(response, "choices", None)
    if not choices:
        raise _Unusable("llm_empty", "the answer had no choices")
    message = getattr(choices[0], "message", None)
    if message is None:
        raise _Unusable("llm_empty", "the answer's first choice had no message")
    return message, getattr(choices[0], "finish_reason", None)


def _tool_arguments(request: StageRequest, call: Any) -> str:
    """The arguments of the tool call, which must call the stage's tool."""
    function = getattr(call, "function", None)  # custom tool calls have none
    name = getattr(function, "name", None)
    arguments = getattr(function, "arguments", None) or ""
    if name != request.tool:
        raise _Unusable(
            "llm_wrong_tool", f"the stage asked for tool {request.tool!r}, the model called {name!r}", raw=arguments
        )
    return arguments


def _check_not_empty(message: Any, text: str, via_tool: bool, note: str) -> None:
    """An empty answer is unusable. Its error says why: the note when there is one (no tool call
    came), else the model's refusal, else what was empty."""
    if not text.strip():
        refusal = getattr(message, "refusal", None)
        where = "tool call arguments" if via_tool else "message"
        detail = f"the model refused: {refusal}" if refusal else f"the {where} was empty"
        if note:
            detail = note
        raise _Unusable("llm_empty", detail, raw=text)


def _answer_text(message: Any) -> str:
    """Whatever text a (possibly cut) answer carries: its tool arguments, else its content."""
    for call in getattr(message, "tool_calls", None) or []:
        arguments = getattr(getattr(call, "function", None), "arguments", None)
        if isinstance(arguments, str):
            return arguments
    content = getattr(message, "content", None)
    return content if isinstance(content, str) else ""


def _classify(exc: openai.APIError) -> tuple[str, bool]:
    """(stop reason, transient?) for an SDK error."""
    openai = _sdk()
    if isinstance(exc, openai.APITimeoutError):
        return "llm_timeout", True
    if isinstance(exc, openai.APIConnectionError):
        return "llm_unavailable", True  # refused or dropped connection
    if isinstance(exc, openai.APIStatusError):
        code = exc.status_code
        if code == 429:
            return "llm_rate_limited", True
        if code == 408:  # the server's own request timeout
            return "llm_timeout", True
        if code == 409 or code >= 500:  # 409: a lock timeout on the server side
            return "llm_unavailable", True
        if code in (401, 403):
            return "llm_auth_failed", False
        return "llm_bad_request", False
    return "llm_unavailable", False  # e.g. an answer the SDK could not read


def _describe(exc: openai.APIError) -> str:
    if isinstance(exc, _sdk().APIStatusError):
        # The SDK's message repeats the status code ("Error code: 429 - ..."); prefer the
        # server's own error message when the body has one.
        body = exc.body if isinstance(exc.body, dict) else {}
        detail = body.get("message")
        return f"HTTP {exc.status_code}: {detail if isinstance(detail, str) else exc.message}"
    cause = exc.__cause__
    if cause is not None and str(cause):
        return f"{exc.message} ({type(cause).__name__}: {cause})"
    return exc.message


def _retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asked us to wait: ``retry-after-ms``, else ``Retry-After`` (seconds
    or an HTTP date). None when it sent neither, or nothing readable."""
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            continue
        if math.isnan(seconds):
            continue
        return max(seconds, 0.0)
    value = headers.get("retry-after")
    if value:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # an HTTP date is GMT
            return None
        return max(when.timestamp() - time.time(), 0.0)
    return None


def _public_url(url: Any) -> str:
    """The base URL without user info, query or fragment (where a key might hide)."""
    clean = url.copy_with(username=None, password=None, query=None, fragment=None)
    return str(clean).rstrip("/")


# -- configuration from the environment ---------------------------------------------------


def client_from_env(
    settings: ModelSettings | None = None, environ: Mapping[str, str] = os.environ, slots: SlotStore | None = None
) -> LLM:
    """The model the environment asks for, at the endpoint ``settings`` chooses by name.

    ``LLM_BACKEND=offline``, or no endpoint declared (neither ``OPENAI_API_KEY`` nor
    ``LLM_ENDPOINTS``): the embedded offline model. ``LLM_BACKEND=openai`` forces the SDK
    even without a key (local servers that need none). ``OPENAI_*`` variables override the matching
    fields of ``settings`` where they are set; the endpoint comes from
    :func:`~agents.core.llm.endpoints.resolve_endpoint`, which fails closed (``EndpointError``, a
    ``ValueError``) for a name or a URL the operator did not declare. ``slots`` holds the endpoint's
    calls to its concurrency and adds the limits an admin set (``agents/core/llm/slots.py``).
    """
    if _offline(environ):
        from agents.core.llm.offline import OfflineModel

        return OfflineModel()
    settings = settings_from_env(settings or ModelSettings(), environ)
    endpoint = resolve_endpoint(settings.endpoint, settings.base_url, environ)
    threshold_count, cooldown_seconds = _breaker_settings(environ)
    return OpenAIChat(settings, endpoint=endpoint, breaker_threshold=threshold_count,
                      breaker_cooldown=cooldown_seconds, slots=slots)


def _breaker_settings(environ: Mapping[str, str]) -> tuple[int, float]:
    threshold = _env(environ, "LLM_BREAKER_THRESHOLD") or "5"
    cooldown = _env(environ, "LLM_BREAKER_COOLDOWN_SECONDS") or "30"
    try:
        threshold_count, cooldown_seconds = int(threshold), float(cooldown)
    except ValueError:
        raise ValueError(
            f"LLM_BREAKER_THRESHOLD must be a whole number and LLM_BREAKER_COOLDOWN_SECONDS a number of "
            f"seconds, got {threshold!r} and {cooldown!r}"
        ) from None
    if threshold_count < 1 or not (math.isfinite(cooldown_seconds) and cooldown_seconds >= 0):
        raise ValueError("LLM_BREAKER_THRESHOLD must be at least 1 and LLM_BREAKER_COOLDOWN_SECONDS not negative")
    return threshold_count, cooldown_seconds


class UnavailableModel:
    """A model that cannot be asked: every call fails as ``llm_misconfigured`` with why, and no request
    is sent. Stands for a second reader whose endpoint is not declared here."""

    def __init__(self, settings: ModelSettings, why: str):
        self.label = settings.model
        self.endpoint = f"{settings.endpoint} (not available)"
        self.why = why

    def complete(self, request: StageRequest) -> ModelReply:
        raise LLMError("llm_misconfigured", self.why)


def judge_from_env(policy: Policy, environ: Mapping[str, str] = os.environ,
                   slots: SlotStore | None = None) -> LLM | None:
    """The second reader's model for a text policy that names one (``policy.judge``), else None.

    Its endpoint is chosen by name among the declared ones, as a policy's is (``LLM_ENDPOINT`` wins
    there too); its model and timeout are its own: the ``OPENAI_*`` overrides of the policy's model
    settings do not apply to it. An endpoint that is not declared, or the embedded offline model, gives
    a model that answers nothing (:class:`UnavailableModel`): the run stops for a person as
    ``invalid_answer:judge_unavailable``, never as a pass."""
    settings = getattr(policy, "judge", None)
    if settings is None:
        return None
    try:
        if _offline(environ):
            return UnavailableModel(settings, "no model endpoint is declared (the embedded offline model does not "
                                              "read for the second reader)")
        endpoint = resolve_endpoint(settings.endpoint, None, environ)
        threshold_count, cooldown_seconds = _breaker_settings(environ)
    except ValueError as error:
        return UnavailableModel(settings, f"the second reader's endpoint: {error}")
    return OpenAIChat(settings, endpoint=endpoint, breaker_threshold=threshold_count,
                      breaker_cooldown=cooldown_seconds, slots=slots)


def _offline(environ: Mapping[str, str]) -> bool:
    """Whether the environment asks for the embedded offline model (see :func:`client_from_env`)."""
    backend = _env(environ, "LLM_BACKEND").lower()
    if backend not in ("", "offline", "openai"):
        raise ValueError(f"LLM_BACKEND must be 'offline' or 'openai', got {backend!r}")
    return backend == "offline" or (
        backend == "" and not _env(environ, "OPENAI_API_KEY") and not _env(environ, "LLM_ENDPOINTS"))


def effective_policy(policy: P, environ: Mapping[str, str] = os.environ, slots: SlotStore | None = None) -> P:
    """The policy a run executes under: its model settings as the environment makes them
    (:func:`settings_from_env`, the environment winning), its completion ceiling never above its
    endpoint's (declared, or set by an admin through ``slots``). The one place that computes them:
    the prompts (the JSON-mode note), the budgets and the client (``response_format``) all read
    this policy's ``model``. Bad values raise ``ValueError``, as :func:`settings_from_env` and
    :func:`~agents.core.llm.endpoints.resolve_endpoint` do."""
    model = settings_from_env(policy.model, environ)
    if not _offline(environ):
        endpoint = resolve_endpoint(model.endpoint, model.base_url, environ)
        if slots is not None:
            limits = slots.limits(endpoint.name)
            endpoint = endpoint.limited(limits.concurrency, limits.max_completion_tokens)
        ceiling = lower(model.max_completion_tokens, endpoint.max_completion_tokens)
        model = dataclasses.replace(model, max_completion_tokens=ceiling)
    return dataclasses.replace(policy, model=model)


def settings_from_env(settings: ModelSettings, environ: Mapping[str, str]) -> ModelSettings:
    """``settings`` with the fields that ``OPENAI_*`` variables set replaced; bad values raise.

    ``OPENAI_BASE_URL`` is not among them: it is the URL of the ``default`` endpoint, bound to
    ``OPENAI_API_KEY`` (``agents/core/llm/endpoints.py``); ``LLM_ENDPOINT`` overrides the endpoint.
    """
    changes: dict[str, Any] = {}
    if model := _env(environ, "OPENAI_MODEL"):
        changes["model"] = model
    if timeout := _env(environ, "OPENAI_TIMEOUT_SECONDS"):
        try:
            seconds = float(timeout)
        except ValueError:
            raise ValueError(
                f"OPENAI_TIMEOUT_SECONDS must be a number of seconds, got {timeout!r}"
            ) from None
        if not (math.isfinite(seconds) and seconds > 0):
            raise ValueError(f"OPENAI_TIMEOUT_SECONDS must be more than 0, got {timeout!r}")
        changes["timeout_seconds"] = seconds
    if retries := _env(environ, "OPENAI_MAX_RETRIES"):
        try:
            count = int(retries)
        except ValueError:
            raise ValueError(
                f"OPENAI_MAX_RETRIES must be a whole number, got {retries!r}"
            ) from None
        if count < 0:
            raise ValueError(f"OPENAI_MAX_RETRIES must not be negative, got {retries!r}")
        changes["max_retries"] = count
    if mode := _env(environ, "OPENAI_STRUCTURED_OUTPUT").lower():
        if mode not in STRUCTURED_OUTPUT_MODES:
            raise ValueError(f"OPENAI_STRUCTURED_OUTPUT must be 'tools' or 'json', got {mode!r}")
        changes["structured_output"] = mode
    return dataclasses.replace(settings, **changes)


def _env(environ: Mapping[str, str], name: str) -> str:
    """The variable's value, stripped; unset and blank are the same."""
    return (environ.get(name) or "").strip()

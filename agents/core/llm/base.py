"""What a pipeline stage sends to a model and what comes back, whichever backend answers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class StageRequest:
    """One model call a stage wants to make.

    ``system`` and ``user`` are the rendered prompt; ``inputs`` are the structured values the prompt
    was rendered from (the offline model reads these instead of parsing prose). ``tool`` names the
    stage's tool; ``None`` asks for plain text.
    """

    stage: str
    system: str
    user: str
    tool: str | None
    inputs: Mapping[str, Any] = field(default_factory=dict)
    attempt: int = 1
    #: The most tokens the answer may have (sent as the request's completion limit).
    max_completion_tokens: int | None = None
    #: The run's remaining wall time, set by the frame: no request of this call waits longer.
    time_left: float | None = None


@dataclass(frozen=True)
class CallRecord:
    """One request to the model endpoint (each HTTP attempt of a retried call is its own record)."""

    stage: str
    attempt: int  # the stage's attempt (revise attempts 1..3)
    try_number: int  # 1 for the first request, 2.. for transport retries
    model: str
    latency_ms: float
    prompt_tokens: int = 0
    completion_tokens: int = 0
    outcome: str = "ok"  # "ok", or the stop reason / error class this request ended with
    raw: str = ""  # what the model answered (tool arguments, JSON or text), kept for audit
    error: str = ""
    note: str = ""  # what the server did that the stage did not ask for (e.g. no tool call)
    response_model: str = ""  # the model the server says answered ("" when no answer came)
    finish_reason: str = ""  # why the server stopped generating ("stop", "tool_calls", "length", ...)
    #: The request's messages as sent (``{"role": ..., "content": ...}``: the system and the user
    #: message), so a person can read what the model was asked next to what it answered.
    messages: tuple[dict[str, str], ...] = ()


@dataclass(frozen=True)
class ModelReply:
    """A model answer that the transport accepted. Its ``text`` is still untrusted input."""

    text: str  # tool-call arguments, JSON-mode content, or plain text
    via_tool: bool
    prompt_tokens: int
    completion_tokens: int
    calls: tuple[CallRecord, ...]


class LLMError(Exception):
    """A model call that produced no usable answer; ``reason`` is its stop reason."""

    def __init__(self, reason: str, message: str = "", calls: tuple[CallRecord, ...] = ()):
        super().__init__(f"{reason}: {message}" if message else reason)
        self.reason = reason
        self.calls = calls


class LLM(Protocol):
    #: Shown wherever a model name is shown ("offline model" for the embedded one).
    label: str
    #: Identifies the endpoint for the circuit breaker and the run record. Never contains a key.
    endpoint: str

    def complete(self, request: StageRequest) -> ModelReply: ...

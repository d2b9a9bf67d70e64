"""The frame every pipeline runs in: clock and budgets, the trace, and the one place stops are caught.

A pipeline body is a plain function ``body(run, goal, context, policy) -> dict`` that raises
:class:`~agents.core.stops.Stop` when a gate says no. :func:`execute` turns either ending into a
:class:`RunResult`; nothing a model answers can make it raise.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Protocol

from agents.core.llm.base import LLM, CallRecord, LLMError, ModelReply, StageRequest
from agents.core.policy import Policy
from agents.core.stops import Stop

log = logging.getLogger("agents.run")

REASON_PREVIEW_CHARS = 120  # the result shows this much of an escalation reason; storage keeps it whole


class Observer(Protocol):
    """Hears each step and each model request as it happens (the Django side persists them).

    ``on_call_start`` (optional: an observer without it is not told) hears that a stage is about to
    call the model, with the number that call will have in the run, so a page can say what the run
    is waiting for ("revising (model call 3)…")."""

    def on_step(self, run_id: str, entry: dict[str, Any]) -> None: ...

    def on_model_call(self, run_id: str, record: CallRecord) -> None: ...


class NullObserver:
    def on_step(self, run_id: str, entry: dict[str, Any]) -> None:
        pass

    def on_call_start(self, run_id: str, stage: str, call_number: int) -> None:
        pass

    def on_model_call(self, run_id: str, record: CallRecord) -> None:
        pass


@dataclass
class RunResult:
    """The result of a pipeline run. ``to_dict()`` is what the command prints and the API returns."""

    run_id: str
    pipeline: str
    status: str  # "ok" | "stopped"
    stop_reason: str
    phase: str | None = None
    outcome: str | None = None
    answer: str | None = None
    selected_route: str | None = None
    review: dict | None = None
    critique: dict | None = None
    audit: dict | None = None
    escalation_reason: str | None = None  # whole; the dict shows a preview
    candidate: str | None = None  # the text a gate blocked, kept for the person who decides
    guard: dict | None = None  # the blocking guard result (violations, measurements)
    details: dict = field(default_factory=dict)  # stop details: raw model text, observation, ...
    trace: list[dict] = field(default_factory=list)
    history: list[dict] = field(default_factory=list)
    model: str = ""
    usage: dict = field(default_factory=dict)
    duration_ms: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        if self.escalation_reason is not None:
            data["escalation_reason"] = self.escalation_reason[:REASON_PREVIEW_CHARS]
        if self.ok:
            data.pop("phase")
        return data


class RunState:
    """One run in flight: the wall clock, the token and cost budgets, the trace and the history."""

    def __init__(self, *, run_id: str, policy: Policy, llm: LLM, observer: Observer, clock=time.monotonic,
                 judge: LLM | None = None):
        self.run_id = run_id
        self.policy = policy
        self.llm = llm
        self.judge = judge  # the second reader's model, when the policy names one (agents.core.judge)
        self.observer = observer
        self.clock = clock
        self.started = clock()
        self.phase: str | None = None
        self.trace: list[dict] = []
        self.history: list[dict] = []
        self.calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self._entry: dict | None = None  # the step in flight

    # -- budgets -----------------------------------------------------------------------------
    @property
    def cost(self) -> float:
        model = self.policy.model
        return (self.prompt_tokens * model.input_cost_per_1k + self.completion_tokens * model.output_cost_per_1k) / 1000

    def elapsed(self) -> float:
        return self.clock() - self.started

    def _check_budgets(self) -> None:
        policy = self.policy
        if policy.max_tokens is not None and self.prompt_tokens + self.completion_tokens > policy.max_tokens:
            raise Stop("max_tokens", used=self.prompt_tokens + self.completion_tokens, budget=policy.max_tokens)
        if policy.max_cost is not None and self.cost > policy.max_cost:
            raise Stop("max_cost", used=round(self.cost, 6), budget=policy.max_cost)

    # -- model calls ---------------------------------------------------------------------------
    def ask(self, request: StageRequest, llm: LLM | None = None) -> ModelReply:
        """Call the model for one stage (``llm``: another than the run's, the second reader's), within
        the run's budgets. Failures become stops."""
        llm = llm or self.llm
        if self.elapsed() >= self.policy.max_seconds:
            raise Stop("max_seconds", elapsed=round(self.elapsed(), 3), budget=self.policy.max_seconds)
        self._check_budgets()  # a budget already spent stops before spending more
        self._check_room_for(request, llm)
        # No request of this call may outlast the run's wall-time budget.
        request = replace(request, time_left=self.policy.max_seconds - self.elapsed())
        if (starting := getattr(self.observer, "on_call_start", None)) is not None:
            starting(self.run_id, request.stage, self.calls + 1)
        try:
            reply = llm.complete(request)
        except LLMError as error:
            self._account(error.calls)
            if error.reason == "max_seconds" or (error.reason == "llm_timeout"
                                                 and self.elapsed() >= self.policy.max_seconds):
                # The call was cut (or not sent: no free slot, too little time left) by the run's
                # budget, not by the endpoint's own timeout.
                raise Stop("max_seconds", elapsed=round(self.elapsed(), 3), budget=self.policy.max_seconds,
                           message=str(error)) from None
            raise Stop(error.reason, message=str(error)) from None
        self._account(reply.calls)
        self._check_budgets()
        return reply

    def _check_room_for(self, request: StageRequest, llm: LLM) -> None:
        """A call whose answer may use more tokens than the run has left is not sent: it would spend
        the server's time on an answer the budget then refuses."""
        if self.policy.max_tokens is None:
            return
        limit = getattr(llm, "completion_limit", None)
        ceiling = self.policy.model.max_completion_tokens
        needs = limit(request) if limit else min(request.max_completion_tokens or ceiling, ceiling)
        left = self.policy.max_tokens - self.prompt_tokens - self.completion_tokens
        if needs > left:
            raise Stop("max_tokens", used=self.prompt_tokens + self.completion_tokens, budget=self.policy.max_tokens,
                       message=f"the call may answer with up to {needs} tokens and the run has {left} left; "
                               "it was not sent")

    def _account(self, calls: tuple[CallRecord, ...]) -> None:
        for record in calls:
            if record.note and self._entry is not None:  # what the server did shows in the step too
                self._entry.setdefault("model_notes", []).append(record.note)
            self.calls += 1
            self.prompt_tokens += record.prompt_tokens
            self.completion_tokens += record.completion_tokens
            self.observer.on_model_call(self.run_id, record)

    # -- trace -------------------------------------------------------------------------------
    @contextmanager
    def step(self, phase: str) -> Iterator[dict]:
        """Time one step; on exit append its trace entry and tell the observer.

        The body fills the yielded dict with measurements (``decision``, ``similarity``, ...) and
        may set ``output`` for the history. A step that ends in a stop is recorded as stopped.
        """
        self.phase = phase
        entry: dict[str, Any] = {}
        self._entry = entry
        started = self.clock()
        try:
            yield entry
        except Stop as stop:
            stop.phase = stop.phase or phase
            self._finish(phase, entry, started, status="stopped", stop_reason=stop.reason)
            raise
        self._finish(phase, entry, started, status="ok")

    def _finish(self, phase: str, entry: dict, started: float, **extra: Any) -> None:
        output = entry.pop("output", None)
        record = {
            "index": len(self.trace) + 1,
            "phase": phase,
            **extra,
            **entry,
            "duration_ms": round((self.clock() - started) * 1000, 3),
        }
        self.trace.append(record)
        if output is not None:
            self.history.append({"index": record["index"], "phase": phase, "output": output})
        self.observer.on_step(self.run_id, dict(record, output=output))


Body = Callable[[RunState, str, Mapping[str, Any], Policy], dict]


def execute(
    body: Body,
    *,
    pipeline: str,
    goal: str,
    context: Mapping[str, Any] | None,
    policy: Policy,
    llm: LLM,
    observer: Observer | None = None,
    run_id: str | None = None,
    clock=time.monotonic,
    judge: LLM | None = None,
) -> RunResult:
    """Run one pipeline body and return its result; stops and crashes are results too."""
    run = RunState(
        run_id=run_id or uuid.uuid4().hex, policy=policy, llm=llm, observer=observer or NullObserver(), clock=clock,
        judge=judge,
    )
    result = RunResult(run_id=run.run_id, pipeline=pipeline, status="ok", stop_reason="success", model=llm.label)
    try:
        _check_input(goal, context)  # preconditions, before any token is spent
        fields = body(run, goal, context or {}, policy)
    except Stop as stop:
        result.status = "stopped"
        result.stop_reason = stop.reason
        result.phase = stop.phase or run.phase
        details = dict(stop.details)
        for name in ("candidate", "guard", "escalation_reason", "review", "critique", "audit"):
            if name in details:
                setattr(result, name, details.pop(name))
        result.details = _jsonable(details)
    except Exception as error:
        log.exception("run %s crashed in phase %s", run.run_id, run.phase)
        result.status = "stopped"
        result.stop_reason = "internal_error:" + type(error).__name__
        result.phase = run.phase
        result.details = {"error": str(error)[:500]}
    else:
        for name, value in fields.items():
            setattr(result, name, value)
    result.trace = run.trace
    result.history = run.history
    result.usage = {
        "model_calls": run.calls,
        "prompt_tokens": run.prompt_tokens,
        "completion_tokens": run.completion_tokens,
        "cost": round(run.cost, 6),
    }
    result.duration_ms = round(run.elapsed() * 1000, 3)
    return result


def _check_input(goal: Any, context: Any) -> None:
    if not isinstance(goal, str) or not goal.strip():
        raise Stop("invalid_input:goal", phase="input")
    if context is not None and not isinstance(context, Mapping):
        raise Stop("invalid_input:context", phase="input")


def _jsonable(value: Any) -> Any:
    """Stop details go to JSON columns and stdout: keep what JSON can hold, stringify the rest."""
    return json.loads(json.dumps(value, default=str))


def parse_json(text: str) -> tuple[bool, Any]:
    """(True, value) when ``text`` is JSON, else (False, None). Tolerates a fenced code block and raw
    control characters (newlines, tabs) inside strings, as llama.cpp's grammar-constrained tool
    arguments carry them (``strict=False``)."""
    candidate = text.strip()
    if candidate.startswith("```"):
        candidate = candidate.strip("`")
        candidate = candidate.split("\n", 1)[1] if "\n" in candidate else ""
    try:
        return True, json.loads(candidate, strict=False)
    except (ValueError, RecursionError):
        return False, None

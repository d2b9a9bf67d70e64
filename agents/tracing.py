"""OpenTelemetry traces of runs, off unless an OTLP endpoint is configured (docs/operations.md, Tracing).

With ``OTEL_EXPORTER_OTLP_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` set, each process that
serves pages or runs tasks calls :func:`configure` once it is forked (gunicorn's ``post_fork``, the
Celery worker's process init): a tracer provider with a batch span processor and the OTLP/HTTP
protobuf exporter, which reads the standard ``OTEL_*`` variables itself. Without it nothing of the
SDK is imported, no exporter thread starts, and every span asked for here is the API's no-op span.

A run is one trace: the web request that started it (``reviewer.middleware.TracingMiddleware``) ->
``invoke_agent {pipeline}``, the run in the worker -> ``stage {phase}`` per step ->
``chat {model}`` per request to the model, named and described by the OpenTelemetry GenAI semantic
conventions. A lead's decision adds a ``human_review`` span under the run's span, carrying a
``gen_ai.evaluation.result`` event. The request and the run meet through the run's row: the request's
W3C ``traceparent`` is stored on it (``Run.trace_parent``), so a run enqueued again by the sweep, or
taken over by another worker, still joins the trace of the request that started it.

Prompts and answers are exported only when ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` is
true, and then redacted of every configured key like everything else the product stores.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Link, Span, SpanKind, Status, StatusCode
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from agents.core.llm.base import CallRecord
from agents.core.llm.endpoints import redact

log = logging.getLogger("agents.tracing")

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
CAPTURE_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
# The values OpenTelemetry's own GenAI instrumentations take for it; content goes on the spans.
CAPTURE_ON = {"true", "1", "yes", "span_only", "span_and_event"}
CAPTURE_OFF = {"", "false", "0", "no", "no_content"}
DEFAULT_SERVICE_NAME = "gated-review"
SCOPE = "gated_review"
EVALUATION_NAME = "human_review"
# A lead's decision (reviewer.desk.decisions) as the label of the evaluation it records.
EVALUATION_LABELS = {"approve": "approved", "edit_approve": "edited", "reject": "rejected",
                     "request_changes": "changes_requested",
                     # under a quorum: an approval that counted without completing it, and an edit
                     # that others must approve
                     "approval": "approval_counted", "edit": "edited_for_approval"}
# What a stage span says of its step: the trace step's columns, never its output (model text).
STEP_ATTRIBUTES = ("index", "status", "stop_reason", "decision", "duration_ms")

_provider = None  # this process's TracerProvider once configured
_pid: int | None = None  # the process it was built in
_lock = threading.Lock()
_propagator = TraceContextTextMapPropagator()
_NO_OP = trace.NoOpTracer()


def endpoint_configured(environ: Mapping[str, str] = os.environ) -> bool:
    return any(environ.get(name, "").strip() for name in ENDPOINT_VARIABLES)


def capture_content(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether prompts and answers go on the spans: off unless the operator says so; a value that is
    neither on nor off is refused, naming the variable."""
    value = environ.get(CAPTURE_VARIABLE, "").strip().lower()
    if value in CAPTURE_ON:
        return True
    if value in CAPTURE_OFF:
        return False
    raise ValueError(f"{CAPTURE_VARIABLE} must be true or false, got {environ[CAPTURE_VARIABLE]!r}")


def configure() -> bool:
    """Start exporting this process's spans when an OTLP endpoint is configured; whether tracing is on.

    Once per process: a child forked from a configured process builds its own provider (the batch
    processor's export thread is the parent's)."""
    global _provider, _pid
    if not endpoint_configured():
        return False
    capture_content()  # a bad value stops the process at start, not a run halfway
    with _lock:
        if _provider is not None and _pid == os.getpid():
            return True
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import SERVICE_NAME, Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        service = os.environ.get("OTEL_SERVICE_NAME", "").strip() or DEFAULT_SERVICE_NAME
        # process.pid: which of the web or worker processes a span is from.
        provider = TracerProvider(resource=Resource.create({SERVICE_NAME: service, "process.pid": os.getpid()}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        _provider, _pid = provider, os.getpid()
    log.info("tracing on: spans of service %s go to the OTLP endpoint", service)
    return True


def use_provider(provider) -> None:
    """Trace with ``provider`` (the tests': an in-memory exporter); None turns tracing off again."""
    global _provider, _pid
    with _lock:
        _provider, _pid = provider, os.getpid() if provider is not None else None


def shutdown() -> None:
    """Export what is buffered and stop tracing in this process."""
    global _provider, _pid
    with _lock:
        provider, _provider, _pid = _provider, None, None
    if provider is not None:
        provider.shutdown()


def enabled() -> bool:
    return _provider is not None


def tracer() -> trace.Tracer:
    """The configured provider's tracer, else the API's no-op tracer."""
    provider = _provider
    return provider.get_tracer(SCOPE) if provider is not None else _NO_OP


# -- propagation: W3C traceparent ----------------------------------------------------------------

def traceparent(span: Span | None = None) -> str:
    """The W3C traceparent of ``span`` (default: the span in progress), "" when tracing is off or
    there is none."""
    if _provider is None:
        return ""
    carrier: dict[str, str] = {}
    _propagator.inject(carrier, context=trace.set_span_in_context(span) if span is not None else None)
    return carrier.get("traceparent", "")


def context_of(parent: str) -> Context | None:
    """The context to start a child of the traceparent ``parent`` in; None (the current context) for
    "" or a value that is not a traceparent."""
    if not parent:
        return None
    context = _propagator.extract({"traceparent": parent})
    return context if trace.get_current_span(context).get_span_context().is_valid else None


def context_from_headers(headers: Mapping[str, str]) -> Context:
    """The caller's trace context from a request's ``traceparent``/``tracestate`` headers."""
    return _propagator.extract({k.lower(): v for k, v in headers.items()
                                if k.lower() in ("traceparent", "tracestate")})


# -- the run -------------------------------------------------------------------------------------

@contextmanager
def run_span(*, pipeline: str, run_id: int, parent: str) -> Iterator[Span]:
    """The run's span, a child of the span that started it (``parent``, a traceparent), current for
    the length of the run."""
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": pipeline,
                  "gated_review.pipeline": pipeline, "gated_review.run.id": run_id}
    with tracer().start_as_current_span(f"invoke_agent {pipeline}", context=context_of(parent),
                                        kind=SpanKind.INTERNAL, attributes=attributes) as span:
        yield span


def end_run(span: Span, *, stop_reason: str, status: str) -> None:
    span.set_attribute("gated_review.run.stop_reason", stop_reason)
    span.set_attribute("gated_review.run.status", status)
    if stop_reason.startswith("internal_error"):
        span.set_attribute("error.type", stop_reason.partition(":")[2] or stop_reason)
        span.set_status(Status(StatusCode.ERROR, stop_reason))


def provider_name(llm: Any) -> str:
    """``gen_ai.provider.name`` of a model: the product talks to OpenAI-compatible servers only; the
    offline model (no endpoint settings) is its own."""
    return "openai" if getattr(llm, "endpoint_settings", None) else "gated_review.offline"


class TracingObserver:
    """Writes a run's stage and model-call spans, and passes every step and call on to ``inner`` (the
    database observer) first: the spans follow what the run records and never change it.

    The frame tells a step and a call when they end, with their durations; the spans are written
    then, starting that long before. A call's retries are laid end to end, ending when its answer
    came (the waits between them are not measured)."""

    def __init__(self, inner: Any, run: Span, *, provider: str):
        self.inner = inner
        self.run_context = trace.set_span_in_context(run)
        self.provider = provider
        self.capture = capture_content()
        self._call_number = 0
        self._calls: list[tuple[int, CallRecord, int]] = []  # (call number, record, when it was told)

    def on_step(self, run_id: str, entry: dict[str, Any]) -> None:
        self.inner.on_step(run_id, entry)
        try:
            self._stage_span(entry)
        except Exception:  # a span that cannot be written never stops a run
            log.exception("run %s: the span of step %s was not written", run_id, entry.get("phase"))

    def on_call_start(self, run_id: str, stage: str, call_number: int) -> None:
        self._call_number = call_number
        if (starting := getattr(self.inner, "on_call_start", None)) is not None:
            starting(run_id, stage, call_number)

    def on_model_call(self, run_id: str, record: CallRecord) -> None:
        self.inner.on_model_call(run_id, record)
        self._calls.append((self._call_number, record, time.time_ns()))

    def close(self) -> None:
        """Calls told outside any step (none today) go under the run's span."""
        self._chat_spans(self.run_context, self._timed_calls())

    def _stage_span(self, entry: dict[str, Any]) -> None:
        end = time.time_ns()
        calls = self._timed_calls()
        start = min([end - int((entry.get("duration_ms") or 0) * 1_000_000), *(s for _, s, _ in calls)])
        attributes = {f"gated_review.step.{name}": entry[name] for name in STEP_ATTRIBUTES if entry.get(name)}
        span = tracer().start_span(f"stage {entry['phase']}", context=self.run_context, start_time=start,
                                   attributes={"gated_review.step.phase": entry["phase"], **attributes})
        self._chat_spans(trace.set_span_in_context(span), calls)
        span.end(end_time=end)

    def _timed_calls(self) -> list[tuple[CallRecord, int, int]]:
        """The calls told since the last step, as (record, start, end) in nanoseconds."""
        told, self._calls = self._calls, []
        timed: list[tuple[CallRecord, int, int]] = []
        for index, (number, record, at) in enumerate(told):
            later = [r for n, r, _ in told[index + 1:] if n == number]  # its retries after it
            last_told = max([at, *(t for n, _, t in told[index + 1:] if n == number)])
            end = last_told - sum(int(r.latency_ms * 1_000_000) for r in later)
            timed.append((record, end - int(record.latency_ms * 1_000_000), end))
        return timed

    def _chat_spans(self, parent: Context, calls: list[tuple[CallRecord, int, int]]) -> None:
        for record, start, end in calls:
            span = tracer().start_span(f"chat {record.model}", context=parent, kind=SpanKind.CLIENT,
                                       start_time=start, attributes=self._chat_attributes(record))
            if record.outcome != "ok":
                span.set_status(Status(StatusCode.ERROR, record.outcome))
            span.end(end_time=end)

    def _chat_attributes(self, record: CallRecord) -> dict[str, Any]:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": self.provider,
            "gen_ai.system": self.provider,  # the older name, still read by some receivers
            "gen_ai.request.model": record.model,
            "gen_ai.usage.input_tokens": record.prompt_tokens,
            "gen_ai.usage.output_tokens": record.completion_tokens,
            "gated_review.stage": record.stage,
            "gated_review.stage.attempt": record.attempt,
            "gated_review.try_number": record.try_number,
        }
        if record.response_model:
            attributes["gen_ai.response.model"] = record.response_model
        if record.finish_reason:
            attributes["gen_ai.response.finish_reasons"] = (record.finish_reason,)
        if record.outcome != "ok":
            attributes["error.type"] = record.outcome
        if self.capture:
            record = redact(record)
            attributes["gen_ai.input.messages"] = json.dumps(
                [{"role": m["role"], "parts": [{"type": "text", "content": m["content"]}]} for m in record.messages],
                ensure_ascii=False)
            if record.raw:
                attributes["gen_ai.output.messages"] = json.dumps(
                    [{"role": "assistant", "parts": [{"type": "text", "content": record.raw}],
                      "finish_reason": record.finish_reason or record.outcome}], ensure_ascii=False)
        return attributes


# -- a lead's decision ---------------------------------------------------------------------------

def record_evaluation(run_span: str, *, run_id: int, escalation_id: int, action: str) -> None:
    """A lead's decision on a run as a GenAI evaluation on the run's trace: a short ``human_review``
    span under the run's span (``run_span``, its stored traceparent) with a ``gen_ai.evaluation.result``
    event, linked to the request that decided. Nothing when tracing is off or the run was not traced."""
    parent = context_of(run_span)
    if _provider is None or parent is None:
        return
    label = EVALUATION_LABELS.get(action, str(action))
    deciding = trace.get_current_span().get_span_context()
    with tracer().start_as_current_span(
        EVALUATION_NAME, context=parent, links=[Link(deciding)] if deciding.is_valid else [],
        attributes={"gated_review.run.id": run_id, "gated_review.escalation.id": escalation_id,
                    "gated_review.decision.action": str(action)},
    ) as span:
        span.add_event("gen_ai.evaluation.result", {"gen_ai.evaluation.name": EVALUATION_NAME,
                                                    "gen_ai.evaluation.score.label": label})

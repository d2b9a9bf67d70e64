"""A run's trace end to end, as an OTLP receiver gets it: a web request starts a run over the API, a
real Celery worker runs it with the openai SDK against the scripted model, and both processes export
to a loopback OTLP/HTTP receiver that decodes what it is sent with ``opentelemetry-proto``. One
trace: the request -> the run -> its stages -> its model calls; then a lead's decision on the
escalation adds an evaluation under the run. And gunicorn's web processes export their requests'
spans, continuing the caller's trace."""

from __future__ import annotations

import gzip
import socket
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import requests
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan

from agents import tracing
from agents.models import Run
from agents.tasks import start_run
from agents.testing.scripted_demo import DRAFT, ESCALATE
from agents.testing.scripted_server import tool_call
from reviewer.models import ApiToken
from tests.conftest import Worker
from tests.factories import wait_for
from tests.processes.conftest import own_sqlite_env

pytestmark = pytest.mark.worker
ROOT = Path(__file__).parents[2]


def value_of(any_value):
    kind = any_value.WhichOneof("value")
    if kind == "array_value":
        return tuple(value_of(v) for v in any_value.array_value.values)
    return getattr(any_value, kind) if kind else None


def attributes_of(key_values) -> dict:
    return {kv.key: value_of(kv.value) for kv in key_values}


@dataclass
class ReceivedSpan:
    service: str
    pid: int
    name: str
    kind: int
    trace_id: str
    span_id: str
    parent_id: str
    attributes: dict
    events: list[tuple[str, dict]] = field(default_factory=list)
    links: list[tuple[str, str]] = field(default_factory=list)


class OTLPReceiver:
    """An OTLP/HTTP traces endpoint on 127.0.0.1: decodes each ``ExportTraceServiceRequest`` and keeps
    its spans, with the service that sent them."""

    def __init__(self):
        self.spans: list[ReceivedSpan] = []
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path != "/v1/traces" or self.headers.get("Content-Type") != "application/x-protobuf":
                    self.send_response(404)
                    self.end_headers()
                    return
                receiver.take(ExportTraceServiceRequest.FromString(body))
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def take(self, request: ExportTraceServiceRequest) -> None:
        for resource_spans in request.resource_spans:
            resource = attributes_of(resource_spans.resource.attributes)
            service, pid = resource.get("service.name", ""), resource.get("process.pid", 0)
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    received = ReceivedSpan(
                        service=service, pid=pid, name=span.name, kind=span.kind, trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(), parent_id=span.parent_span_id.hex(),
                        attributes=attributes_of(span.attributes),
                        events=[(e.name, attributes_of(e.attributes)) for e in span.events],
                        links=[(link.trace_id.hex(), link.span_id.hex()) for link in span.links])
                    with self.lock:
                        self.spans.append(received)

    def named(self, name: str) -> list[ReceivedSpan]:
        with self.lock:
            return [s for s in self.spans if s.name == name]

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def otlp_receiver():
    receiver = OTLPReceiver()
    yield receiver
    receiver.stop()


@pytest.fixture
def traced_web(otlp_receiver, monkeypatch):
    """Tracing on in this process, whose live server answers the web requests; off again afterwards."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", otlp_receiver.url)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "gated-review-web")
    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "50")  # milliseconds: export soon after a span ends
    assert tracing.configure()
    yield
    tracing.shutdown()


def test_a_run_started_by_a_web_request_is_one_trace_from_the_request_to_its_model_calls_and_its_decision(
    otlp_receiver, traced_web, live_server, start_worker, fake_openai, users, demo_data
):
    fake_openai.script(tool_call("submit_draft", {"draft": DRAFT}, usage=(312, 87)),
                       tool_call("reflect", ESCALATE, usage=(455, 63)))
    start_worker(OPENAI_API_KEY="sk-trace", OPENAI_BASE_URL=fake_openai.base_url, OPENAI_MAX_RETRIES="0",
                 OPENAI_MODEL="test-model", OTEL_EXPORTER_OTLP_ENDPOINT=otlp_receiver.url,
                 OTEL_SERVICE_NAME="gated-review-worker", OTEL_BSP_SCHEDULE_DELAY="50")
    tokens = {name: ApiToken.issue(getattr(users, name), "trace")[1] for name in ("ops", "lead")}

    def call(method, path, who, body=None):
        return requests.request(method, f"{live_server.url}/api{path}", json=body, timeout=10,
                                headers={"Authorization": f"Bearer {tokens[who]}"})

    started = call("POST", "/runs", "ops", {"pipeline": "reflection", "goal": "Write the customer update.",
                                            "incident_id": "inc_pay_2041"})
    assert started.status_code == 202, started.text
    run = wait_for(lambda: Run.objects.filter(pk=started.json()["run_id"], status__in=["ok", "stopped"]).first(),
                   message="the run to finish")
    assert run.stop_reason == "policy_escalation"

    [root] = wait_for(lambda: otlp_receiver.named("invoke_agent reflection"), message="the run's span")
    [request] = wait_for(lambda: otlp_receiver.named("POST /api/runs"), message="the request's span")
    calls = wait_for(lambda: len(found := otlp_receiver.named("chat test-model")) == 2 and found,
                     message="the two model calls' spans")
    stages = {s.name: s for s in otlp_receiver.spans if s.name.startswith("stage ")}

    # One trace: the request (web) -> the run (worker) -> its stages -> its model calls.
    assert {s.trace_id for s in [request, root, *stages.values(), *calls]} == {request.trace_id}
    assert (request.service, request.kind, request.parent_id) == ("gated-review-web", ProtoSpan.SPAN_KIND_SERVER, "")
    assert request.attributes["http.response.status_code"] == 202
    assert (root.service, root.parent_id) == ("gated-review-worker", request.span_id)
    assert root.attributes["gated_review.run.id"] == run.pk
    assert root.attributes["gated_review.pipeline"] == "reflection"
    assert root.attributes["gated_review.incident.id"] == "inc_pay_2041"
    assert root.attributes["gated_review.run.stop_reason"] == "policy_escalation"
    assert set(stages) == {"stage draft", "stage review"}
    assert all(s.parent_id == root.span_id for s in stages.values())

    by_stage = {c.attributes["gated_review.stage"]: c for c in calls}
    assert by_stage["draft"].parent_id == stages["stage draft"].span_id
    assert by_stage["review"].parent_id == stages["stage review"].span_id
    for stage, (input_tokens, output_tokens) in {"draft": (312, 87), "review": (455, 63)}.items():
        attributes = by_stage[stage].attributes
        assert by_stage[stage].kind == ProtoSpan.SPAN_KIND_CLIENT
        assert attributes["gen_ai.operation.name"] == "chat"
        assert attributes["gen_ai.provider.name"] == attributes["gen_ai.system"] == "openai"
        assert attributes["gen_ai.request.model"] == attributes["gen_ai.response.model"] == "test-model"
        assert (attributes["gen_ai.usage.input_tokens"], attributes["gen_ai.usage.output_tokens"]) == (
            input_tokens, output_tokens)
        assert attributes["gen_ai.response.finish_reasons"] == ("tool_calls",)
        assert "gen_ai.input.messages" not in attributes  # no prompt text unless the operator asks

    # A lead decides the escalation: an evaluation under the run's span, in the same trace.
    escalation = call("GET", "/escalations?incident_id=inc_pay_2041", "lead").json()[0]
    assert escalation["run_id"] == run.pk
    decided = call("POST", f"/escalations/{escalation['id']}/decision", "lead", {"action": "approve"})
    assert decided.status_code == 201, decided.text
    [review] = wait_for(lambda: otlp_receiver.named("human_review"), message="the decision's evaluation")
    assert (review.trace_id, review.parent_id) == (root.trace_id, root.span_id)
    assert review.events == [("gen_ai.evaluation.result", {"gen_ai.evaluation.name": "human_review",
                                                           "gen_ai.evaluation.score.label": "approved"})]
    # ...linked to the request that decided, which is a trace of its own.
    [deciding] = wait_for(lambda: [s for s in list(otlp_receiver.spans) if (s.trace_id, s.span_id) in review.links],
                          message="the deciding request's span")
    assert deciding.name.startswith("POST /api/escalations/") and deciding.name.endswith("/decision")


@pytest.mark.backend_independent  # its own SQLite database, no broker: the same in both passes
def test_gunicorns_web_processes_export_their_requests_spans(otlp_receiver, tmp_path):
    """gunicorn as production runs it: each web process starts its exporter after the fork
    (``post_fork``), and a request continues the trace its caller sent."""
    env = {k: v for k, v in own_sqlite_env(tmp_path).items() if not k.startswith("OTEL_")}
    env.update(OTEL_EXPORTER_OTLP_ENDPOINT=otlp_receiver.url, OTEL_SERVICE_NAME="gated-review-web",
               OTEL_BSP_SCHEDULE_DELAY="50")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log = (tmp_path / "web.log").open("ab")
    gunicorn = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "python:reviewer.gunicorn_conf", "--bind",
                                 f"127.0.0.1:{port}", "reviewer.wsgi"], cwd=ROOT, env=env, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
    caller = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    def ask():
        try:  # the OpenAPI document: served without a database
            return requests.get(f"http://127.0.0.1:{port}/api/openapi.json", timeout=5,
                                headers={"traceparent": caller}).status_code == 200
        except requests.RequestException:  # refused while it starts, or slow while it loads the app
            return gunicorn.poll() is not None

    try:
        wait_for(ask, timeout=120, every=0.2, message="gunicorn to serve")
        assert gunicorn.poll() is None, (tmp_path / "web.log").read_text()
        spans = wait_for(lambda: otlp_receiver.named("GET /api/openapi.json"), message="the request's span")
    finally:
        gunicorn.terminate()
        gunicorn.wait(timeout=30)
        log.close()
    span = spans[0]
    assert (span.service, span.kind) == ("gated-review-web", ProtoSpan.SPAN_KIND_SERVER)
    assert (span.trace_id, span.parent_id) == ("4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7")
    assert span.pid not in (0, gunicorn.pid)  # from a forked web process, not the master


def test_a_prefork_workers_pool_process_exports_the_runs_it_executes(otlp_receiver, worker_env, tmp_path, demo_data):
    """With the prefork pool the run executes in a forked pool process: tracing starts there
    (``worker_process_init``), after the fork."""
    worker = Worker(tmp_path / "worker.log", {
        **worker_env, "LLM_BACKEND": "offline", "OTEL_EXPORTER_OTLP_ENDPOINT": otlp_receiver.url,
        "OTEL_SERVICE_NAME": "gated-review-worker", "OTEL_BSP_SCHEDULE_DELAY": "50"}, pool="prefork", concurrency=1)
    worker.start()
    try:
        run, _ = start_run(pipeline="reflection", goal="Customer update", incident=demo_data["inc_pay_2041"])
        [root] = wait_for(lambda: otlp_receiver.named("invoke_agent reflection"), message="the run's span")
    finally:
        worker.stop()
    assert root.attributes["gated_review.run.id"] == run.pk and root.parent_id == ""  # started in no request
    assert root.pid not in (0, worker.process.pid)  # the pool process, not the worker's main process
    offline = [s for s in otlp_receiver.spans if s.name == "chat offline model"]
    assert offline and all(s.attributes["gen_ai.provider.name"] == "gated_review.offline" for s in offline)

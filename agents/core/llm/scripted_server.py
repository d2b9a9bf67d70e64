"""A local OpenAI-compatible HTTP server with scripted answers, for the tests and the benchmarks.

The tests drive the real openai SDK against it (real sockets, real retries); the benchmarks in
``bench/`` run it with a ``responder`` that plays every stage after a set latency. It is plain Python
(no Django), so both import it without the product's settings.

    with ScriptedServer() as server:
        server.script(status(429, headers={"Retry-After": "1"}), tool_call("reflect", {...}))
        chat = OpenAIChat(ModelSettings(), endpoint=Endpoint("test", server.base_url, "TEST_KEY", "sk-test"))
        ...
        assert len(server.requests) == 2

Replies are served in the order they were scripted, one per request. A request that finds the queue
empty gets a 500 whose message says "no scripted reply", so a test that makes more calls than it
scripted fails loudly instead of hanging.
"""

from __future__ import annotations

import itertools
import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_PATH = "/v1/chat/completions"


@dataclass(frozen=True)
class Reply:
    """One scripted answer. Build it with the helpers below rather than by hand."""

    status: int = 200
    body: dict[str, Any] | None = None  # a chat.completion without "id"/"model"/"created" yet
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    hang_up: bool = False


class ReceivedRequest(dict):
    """A request's parsed JSON body (the dict itself), with its ``path`` and ``headers``."""

    def __init__(self, body: dict, *, path: str, headers: dict[str, str]):
        super().__init__(body)
        self.path = path
        self.headers = headers  # lower-cased names


def _usage(usage: tuple[int, int] | None) -> dict[str, Any]:
    if usage is None:
        return {}
    prompt, completion = usage
    return {
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
    }


def completion(message: dict, finish_reason: str, usage: tuple[int, int] | None) -> dict:
    return {
        "object": "chat.completion",
        "choices": [
            {"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}
        ],
        **_usage(usage),
    }


def tool_call(
    name: str, arguments: dict | str, *, usage: tuple[int, int] | None = (10, 5)
) -> Reply:
    """The model calls tool ``name``; a str ``arguments`` is sent verbatim (to script bad JSON)."""
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_fake_1",
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
        ],
    }
    return Reply(body=completion(message, "tool_calls", usage))


def content(text: str | None, *, usage: tuple[int, int] | None = (10, 5)) -> Reply:
    """The model answers in the message content (JSON mode, plain text, or a tool-less server)."""
    return Reply(body=completion({"role": "assistant", "content": text}, "stop", usage))


def no_choices(*, usage: tuple[int, int] | None = (10, 0)) -> Reply:
    return Reply(body={"object": "chat.completion", "choices": [], **_usage(usage)})


def status(code: int, body: dict | None = None, headers: dict | None = None) -> Reply:
    """An HTTP error: ``status(429, headers={"Retry-After": "0"})``, ``status(500)``."""
    if body is None:
        body = {"error": {"message": f"fake error {code}", "type": "fake_error", "code": None}}
    return Reply(status=code, body=body, headers=dict(headers or {}))


def delay(seconds: float, reply: Reply) -> Reply:
    """Wait ``seconds`` before answering ``reply`` (to trigger the client's timeout)."""
    return Reply(
        status=reply.status,
        body=reply.body,
        headers=reply.headers,
        delay=reply.delay + seconds,
        hang_up=reply.hang_up,
    )


def hang_up() -> Reply:
    """Close the connection without answering (the client sees a dropped connection)."""
    return Reply(hang_up=True)


def unused_base_url() -> str:
    """A base URL on a local port where nothing listens (the connection is refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


class ScriptedServer:
    def __init__(self, responder: Callable[[dict], Reply] | None = None):
        self.requests: list[ReceivedRequest] = []
        self._queue: list[Reply] = []
        self._marked: dict[str, list[Reply]] = {}
        # Answers what no script covers (benchmarks use one that plays every stage with a latency).
        self.responder = responder
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self.base_url = ""

    def script(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def script_for(self, marker: str, *replies: Reply) -> None:
        """Replies for requests whose body contains ``marker`` (e.g. a run's goal), in their own order,
        so that concurrent runs each get their own script."""
        with self._lock:
            self._marked.setdefault(marker, []).extend(replies)

    def start(self) -> ScriptedServer:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                fake._serve(self)

            def do_GET(self):
                fake._send(self, 404, {"error": {"message": "ScriptedServer serves POST only"}}, {})

            def log_message(self, format, *args):  # keep pytest output clean
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        host, port = self._server.server_address[:2]
        self.base_url = f"http://{host}:{port}/v1"
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # ends any scripted delay early
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ScriptedServer:
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    # -- serving ---------------------------------------------------------------------------

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        if not isinstance(body, dict):
            body = {"_body": body}
        headers = {name.lower(): value for name, value in handler.headers.items()}
        with self._lock:
            self.requests.append(ReceivedRequest(body, path=handler.path, headers=headers))
            reply = self._next_reply(raw.decode("utf-8", "replace"))
        if reply is None and self.responder is not None:
            reply = self.responder(body)

        if handler.path.rstrip("/") != CHAT_PATH:
            message = f"ScriptedServer serves POST {CHAT_PATH} only, not {handler.path}"
            self._send(handler, 404, {"error": {"message": message, "type": "scripted_server"}}, {})
            return
        if reply is None:
            message = "ScriptedServer: no scripted reply left for this request (script more replies)"
            self._send(handler, 500, {"error": {"message": message, "type": "scripted_server"}}, {})
            return
        if reply.delay and self._stopping.wait(reply.delay):
            return
        if reply.hang_up:
            handler.close_connection = True
            try:
                handler.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return
        payload = dict(reply.body or {})
        if reply.status == 200 and payload.get("object") == "chat.completion":
            payload = {
                "id": f"chatcmpl-fake-{next(self._ids)}",
                "created": int(time.time()),
                "model": body.get("model", "fake-model"),
                **payload,
            }
        self._send(handler, reply.status, payload, reply.headers)

    def _next_reply(self, raw_body: str) -> Reply | None:
        for marker, replies in self._marked.items():
            if replies and marker in raw_body:
                return replies.pop(0)
        return self._queue.pop(0) if self._queue else None

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, code: int, payload: dict, headers: dict) -> None:
        data = json.dumps(payload).encode("utf-8")
        try:
            handler.send_response(code)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(data)
        except OSError:
            pass  # the client gave up (timeout) before the answer came

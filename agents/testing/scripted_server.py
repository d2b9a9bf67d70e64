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

The server is as strict as the API it imitates: a request that OpenAI's chat completions endpoint
refuses (see :func:`refusal`: a ``json_object`` request whose messages never say "json", a
``tool_choice`` naming a tool the request does not declare, ...) gets OpenAI's HTTP 400 and consumes
no scripted reply. It also refuses, as the product's own rule, a request without a completion limit.
"""

from __future__ import annotations

import itertools
import json
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_PATH = "/v1/chat/completions"
ROLES = ("system", "developer", "user", "assistant", "tool")
TOOL_NAME = re.compile(r"[a-zA-Z0-9_-]{1,64}")
LIMIT_PARAMS = ("max_completion_tokens", "max_tokens")


Refusal = tuple[str, str | None] | None  # (message, param) of an HTTP 400, or None


def refusal(body: dict, *, require_limit: bool = True) -> Refusal:
    """(message, param) of the HTTP 400 that OpenAI's chat completions API answers ``body`` with,
    or None for a request it accepts. The rules the product relies on, in OpenAI's words, checked
    in OpenAI's order: the model and messages, the sampling limits, the tools, the response format."""
    for check in (_model_and_messages, _sampling, _tools, _tool_choice, _response_format):
        if found := check(body):
            return found
    if require_limit and not any(name in body for name in LIMIT_PARAMS):
        # Not OpenAI's rule: the product's (every request is bounded), checked on every test request.
        return "ScriptedServer: the request sets no completion limit (max_completion_tokens or max_tokens)", None
    return None


def _model_and_messages(body: dict) -> Refusal:
    if not isinstance(body.get("model"), str) or not body["model"]:
        return "you must provide a model parameter", "model"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return "[] is too short - 'messages'", "messages"
    for number, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            return (f"Invalid value for 'messages[{number}].role': expected one of "
                    f"{', '.join(repr(r) for r in ROLES)}."), f"messages[{number}].role"
        content = message.get("content")
        if content is None and not (message["role"] == "assistant" and message.get("tool_calls")):
            return f"Invalid value for 'messages[{number}].content': expected a string, got null.", \
                f"messages[{number}].content"
    return None


def _sampling(body: dict) -> Refusal:
    temperature = body.get("temperature")
    if temperature is not None and not (isinstance(temperature, (int, float)) and 0 <= temperature <= 2):
        return ("Invalid 'temperature': decimal above maximum value. Expected a value <= 2, but got "
                f"{temperature} instead."), "temperature"
    if all(name in body for name in LIMIT_PARAMS):
        return ("max_tokens and max_completion_tokens cannot both be set; max_tokens is deprecated in "
                "favor of max_completion_tokens."), "max_tokens"
    for name in LIMIT_PARAMS:
        value = body.get(name)
        if value is not None and not (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
            return (f"Invalid '{name}': integer below minimum value. Expected a value >= 1, but got "
                    f"{value} instead."), name
    return None


def _tools(body: dict) -> Refusal:
    tools = body.get("tools")
    if tools is None:
        return None
    if not isinstance(tools, list) or not tools:
        return "[] is too short - 'tools'", "tools"
    for number, tool in enumerate(tools):
        function = tool.get("function") if isinstance(tool, dict) else None
        if not isinstance(tool, dict) or tool.get("type") != "function" or not isinstance(function, dict):
            return f"Missing required parameter: 'tools[{number}].function'.", f"tools[{number}].function"
        name = function.get("name")
        if not isinstance(name, str) or not TOOL_NAME.fullmatch(name):
            return (f"Invalid 'tools[{number}].function.name': string does not match pattern. Expected a "
                    "string that matches the pattern '^[a-zA-Z0-9_-]+$'."), f"tools[{number}].function.name"
    return None


def _tool_choice(body: dict) -> Refusal:
    """Checked after :func:`_tools`: the tools, when there are any, are well formed."""
    choice = body.get("tool_choice")
    if choice is None:
        return None
    if body.get("tools") is None:
        return ("Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are "
                "specified."), "tool_choice"
    if isinstance(choice, str):
        if choice not in ("none", "auto", "required"):
            return (f"Invalid value: '{choice}'. Supported values are: 'none', 'auto', and 'required'."), \
                "tool_choice"
        return None
    name = (choice.get("function") or {}).get("name") if isinstance(choice, dict) else None
    if not isinstance(choice, dict) or choice.get("type") != "function" or not isinstance(name, str):
        return "Missing required parameter: 'tool_choice.function'.", "tool_choice.function"
    if name not in [tool["function"]["name"] for tool in body["tools"]]:
        return (f"Invalid value for 'tool_choice': function '{name}' not found in 'tools' "
                "parameter."), "tool_choice"
    return None


def _response_format(body: dict) -> Refusal:
    response_format = body.get("response_format")
    if response_format is None:
        return None
    kind = response_format.get("type") if isinstance(response_format, dict) else None
    if kind not in ("text", "json_object", "json_schema"):
        return (f"Invalid value: '{kind}'. Supported values are: 'text', 'json_object', and "
                "'json_schema'."), "response_format.type"
    if kind == "json_object" and "json" not in json.dumps(body["messages"]).lower():
        return ("'messages' must contain the word 'json' in some form, to use 'response_format' of "
                "type 'json_object'."), "messages"
    return None


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
    def __init__(self, responder: Callable[[dict], Reply] | None = None, *, require_limit: bool = True):
        self.requests: list[ReceivedRequest] = []
        # Requests being worked on now, and the most at once: a request whose client gave up is still
        # in flight here until its reply is written, as on a server that keeps generating.
        self.in_flight = 0
        self.max_in_flight = 0
        self.require_limit = require_limit
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
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            self._answer(handler)
        finally:
            with self._lock:
                self.in_flight -= 1

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length else b""
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        if not isinstance(body, dict):
            body = {"_body": body}
        headers = {name.lower(): value for name, value in handler.headers.items()}
        refused = refusal(body, require_limit=self.require_limit) if handler.path.rstrip("/") == CHAT_PATH else None
        with self._lock:
            self.requests.append(ReceivedRequest(body, path=handler.path, headers=headers))
            if refused is not None:  # a refused request consumes no scripted reply
                message, param = refused
                error = {"message": message, "type": "invalid_request_error", "param": param, "code": None}
                self._send(handler, 400, {"error": error}, {})
                return
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

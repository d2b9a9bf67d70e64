"""The demo's stand-in for the places updates and notifications go (a webhook receiver, Slack, a
chat tool): a small HTTP server on loopback that answers 200 to every POST and writes what it got to
a log file, so every channel can be tried without sending anything off the machine.

    python -m reviewer.demo.receiver --port 8001 --log var/demo-receiver.log

Plain Python (no Django): ``manage.py demo`` starts it with the web app, the worker and beat.
"""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

MAX_BODY = 1_000_000  # what the demo's senders send is small; a larger body is cut in the log
# Headers worth seeing: the webhook's signature and idempotency key, what sent it.
SHOWN_HEADERS = ("content-type", "user-agent", "x-gated-review-signature", "x-gated-review-timestamp",
                 "idempotency-key", "x-gated-review-event", "x-gated-review-delivery")


def entry(path: str, headers: dict[str, str], body: bytes) -> str:
    """One received request as the log shows it: time, path, the headers worth seeing and the body
    (JSON pretty-printed)."""
    text = body[:MAX_BODY].decode("utf-8", "replace")
    try:
        text = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except ValueError:
        pass
    lines = [f"=== {datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC  POST {path}"]
    lines += [f"{name}: {value}" for name, value in headers.items() if name.lower() in SHOWN_HEADERS
              or name.lower().startswith("x-")]
    return "\n".join([*lines, "", text, "", ""])


def serve(port: int, log: Path) -> None:
    log.parent.mkdir(parents=True, exist_ok=True)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # the name http.server calls
            length = min(int(self.headers.get("Content-Length") or 0), MAX_BODY)
            body = self.rfile.read(length)
            with log.open("a", encoding="utf-8") as out:
                out.write(entry(self.path, dict(self.headers.items()), body))
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"ok")  # what Slack answers

        def log_message(self, format, *args):  # the log file holds what matters; nothing on stderr
            pass

    with ThreadingHTTPServer(("127.0.0.1", port), Handler) as server:
        server.serve_forever()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--log", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        serve(args.port, args.log)
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()

"""Load on the production web server: N logged-in clients on the inbox and a run page.

Starts the real demo (`manage.py demo`: gunicorn, a Celery worker and beat, the demo data) in a
temp folder on a free 127.0.0.1 port, logs every client in through the login form (its own session
each, before the clock starts), then each client requests the inbox and a run page in turn, as fast
as the answers come back (a closed loop: no think time unless --think), until --seconds have passed
or --max-requests were sent. Prints a Markdown table and the machine it ran on, then stops the demo.
Loopback only; it stops by itself.

    .venv/bin/python bench/load.py                          # 50 clients, 60 s
    .venv/bin/python bench/load.py --clients 20 --seconds 10 --web-workers 2 --web-threads 8
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import _loadavg, fmt_ms, percentile, print_table, seconds, whole  # noqa: E402
from reviewer import gunicorn_conf  # noqa: E402  (plain module: gunicorn's settings, as the demo uses them)

HOST = "127.0.0.1"  # loopback only, never anything else
USER = "lead"  # the role that works the inbox (and may see runs)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


class Session:
    """One logged-in client: its own keep-alive connection and session cookie."""

    def __init__(self, port: int):
        self.port = port
        self.cookies: dict[str, str] = {}
        self.connection = http.client.HTTPConnection(HOST, port, timeout=30)

    def request(self, method: str, path: str, body: str | None = None) -> tuple[int, bytes]:
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        if body is not None:
            headers |= {"Content-Type": "application/x-www-form-urlencoded", "Referer": f"http://{HOST}:{self.port}/"}
        reused = self.connection.sock is not None
        try:
            self.connection.request(method, path, body=body, headers=headers)
            response = self.connection.getresponse()
            data = response.read()
        except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
            self.connection.close()
            if not reused:
                raise
            # The server closed an idle keep-alive connection (gunicorn's keepalive): like a browser,
            # send the request again once, on a new connection.
            self.connection.request(method, path, body=body, headers=headers)
            response = self.connection.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException):
            self.connection.close()  # a fresh connection next time
            raise
        for header in response.headers.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(header).items():
                self.cookies[name] = morsel.value
        if response.headers.get("Connection", "").lower() == "close":
            self.connection.close()
        return response.status, data

    def log_in(self, username: str, password: str) -> None:
        status, page = self.request("GET", "/accounts/login/")
        token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1).decode()
        status, _ = self.request("POST", "/accounts/login/", urlencode(
            {"username": username, "password": password, "csrfmiddlewaretoken": token}))
        if status != 302 or "sessionid" not in self.cookies:
            raise SystemExit(f"login as {username} failed with HTTP {status}")


class DemoServer:
    """`manage.py demo` in a temp folder: its own SQLite database, broker, key and static files."""

    def __init__(self, port: int, web_workers: int, web_threads: int):
        self.port = port
        self.folder = Path(tempfile.mkdtemp(prefix="bench-load-"))
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith(("DJANGO_", "DATABASE_", "CELERY_", "OPENAI_", "LLM_", "SECRET_KEY", "DEBUG"))}
        self.env.update(DJANGO_SETTINGS_MODULE="reviewer.settings", VAR_DIR=str(self.folder),
                        STATIC_ROOT=str(self.folder / "static"), SECRET_KEY=secrets.token_urlsafe(50),
                        DATABASE_URL=f"sqlite:///{self.folder / 'demo.sqlite3'}", PYTHONUNBUFFERED="1")
        self.args = ["--port", str(port), "--web-workers", str(web_workers), "--web-threads", str(web_threads)]
        self.process: subprocess.Popen | None = None

    def start(self) -> dict[str, str]:
        subprocess.run([sys.executable, "manage.py", "demo", "--setup-only"], cwd=ROOT, env=self.env, check=True,
                       stdout=subprocess.DEVNULL, timeout=600)
        self.log = (self.folder / "demo.log").open("w")
        self.process = subprocess.Popen([sys.executable, "manage.py", "demo", *self.args], cwd=ROOT, env=self.env,
                                        stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                if Session(self.port).request("GET", "/accounts/login/")[0] == 200:
                    return json.loads((self.folder / "demo-logins.json").read_text())
            except OSError:
                time.sleep(0.2)  # not listening yet
        raise SystemExit(f"the demo did not start; see {self.folder / 'demo.log'}")

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)  # the demo stops gunicorn, the worker and beat
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
        shutil.rmtree(self.folder, ignore_errors=True)


def run_page(session: Session) -> str:
    status, page = session.request("GET", "/runs/")
    match = re.search(rb'href="(/runs/\d+/)"', page)
    if status != 200 or not match:
        raise SystemExit(f"no run page found on /runs/ (HTTP {status})")
    return match.group(1).decode()


def load(sessions: list[Session], paths: list[str], seconds: float, max_requests: int, think: float):
    """Every client requests the paths in turn until the time or the request budget is spent."""
    results: list[tuple[str, float, bool]] = []  # (path, seconds, ok)
    lock = threading.Lock()
    sent = 0
    start = time.monotonic()
    stop_at = start + seconds

    def client(index: int, session: Session):
        nonlocal sent
        turn = index  # clients start on different pages
        while time.monotonic() < stop_at:
            with lock:
                if sent >= max_requests:
                    return
                sent += 1
            path = paths[turn % len(paths)]
            turn += 1
            begin = time.perf_counter()
            try:
                status, _ = session.request("GET", path)
                ok = status == 200
            except (OSError, http.client.HTTPException):
                ok = False
            elapsed = time.perf_counter() - begin
            with lock:
                results.append((path, elapsed, ok))
            if think:
                time.sleep(think)  # a person reading the page (only with --think)

    threads = [threading.Thread(target=client, args=(i, s), daemon=True) for i, s in enumerate(sessions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=seconds + 60)
    return results, time.monotonic() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=whole(1), default=50)
    parser.add_argument("--seconds", type=seconds(0, above=True), default=60)
    parser.add_argument("--max-requests", type=whole(1), default=200_000, help="stop after this many requests")
    parser.add_argument("--think", type=seconds(0), default=0.0, help="seconds each client waits between requests")
    parser.add_argument("--web-workers", type=whole(1), default=gunicorn_conf.workers)
    parser.add_argument("--web-threads", type=whole(1), default=gunicorn_conf.threads)
    args = parser.parse_args(argv)
    if not (0 < args.seconds <= 600 and 0 < args.clients <= 500 and 0 < args.max_requests <= 1_000_000):
        parser.error("bounded runs only: --seconds 1-600, --clients 1-500, --max-requests up to 1,000,000")

    server = DemoServer(free_port(), args.web_workers, args.web_threads)
    try:
        logins = server.start()
        sessions = [Session(server.port) for _ in range(args.clients)]
        with ThreadPoolExecutor(4) as pool:  # before the clock: password hashing is not what we measure
            list(pool.map(lambda s: s.log_in(USER, logins[USER]), sessions))
        paths = ["/inbox/", run_page(sessions[0])]
        load_before = _loadavg()
        results, wall = load(sessions, paths, args.seconds, args.max_requests, args.think)
        load_after = _loadavg()
    finally:
        server.stop()

    def row(label, rows):
        times = [t * 1000 for _, t, _ in rows]
        errors = sum(1 for *_, ok in rows if not ok)
        return [label, len(rows), f"{len(rows) / wall:.1f}", fmt_ms(percentile(times, 50)),
                fmt_ms(percentile(times, 95)), fmt_ms(percentile(times, 99)), fmt_ms(max(times, default=float("nan"))),
                errors]

    rows = [row(path, [r for r in results if r[0] == path]) for path in paths] + [row("**all**", results)]
    print_table(
        f"{args.clients} logged-in clients, {wall:.0f} s, "
        f"gunicorn {args.web_workers} workers x {args.web_threads} threads",
        ["page", "requests", "req/s", "p50 ms", "p95 ms", "p99 ms", "max ms", "errors"],
        rows,
        [
            f"machine: {os.cpu_count()} cores; load average (1/5/15 min) before {load_before}, after {load_after}; "
            f"think time {args.think} s; the clients run on the same cores as the server"
        ],
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

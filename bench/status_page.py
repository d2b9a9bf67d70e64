"""The public status page under incident traffic: requests per second and p95 of /status/ (in English
and in French), its Atom feed (in English and in German) and its JSON (summary, components, incidents,
unresolved incidents, scheduled maintenances) on the production server, against a static file of the
same size served by the same server (the ceiling).

Works in a throwaway database and VAR_DIR (bench.common.BenchDatabase) holding the demo data, a few
components and --incidents incidents with published updates; starts gunicorn with
reviewer/gunicorn_conf.py on 127.0.0.1 (--port, 0 for a free one), and beside it a Celery worker
executing runs against the scripted OpenAI-compatible server (one run started every --run-every
seconds while the clock runs), as during an incident. Then --clients keep-alive clients a path
request it as fast as the answers come (a closed loop) for --seconds or --max-requests a path, the
paths taking turns a second at a time. Prints a Markdown table and the machine's load, then stops
everything. Loopback only.

    .venv/bin/python bench/status_page.py                      # 20 clients, 10 s a path
    .venv/bin/python bench/status_page.py --clients 50 --seconds 20 --port 18110
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import (  # noqa: E402
    BenchDatabase,
    CeleryWorker,
    ModelServer,
    _loadavg,
    fmt_ms,
    load_demo,
    percentile,
    print_machine,
    print_table,
    seconds,
    submit,
    verdict,
    whole,
)
from bench.load import HOST, Session, free_port, load  # noqa: E402
from reviewer import gunicorn_conf  # noqa: E402

CEILING = "bench-ceiling.html"  # a static file of the status page's size, served by WhiteNoise
PATHS = {"/status/": "status page", "/status/?lang=fr": "status page in French", "/status/feed/": "Atom feed",
         "/status/feed/de/": "Atom feed in German", "/status/api/v2/summary.json": "JSON summary",
         "/status/api/v2/components.json": "JSON components", "/status/api/v2/incidents.json": "JSON incidents",
         "/status/api/v2/incidents/unresolved.json": "JSON unresolved incidents",
         "/status/api/v2/scheduled-maintenances.json": "JSON maintenances",
         "/status/api/v2/scheduled-maintenances/upcoming.json": "JSON upcoming maintenances",
         "/status/api/v2/scheduled-maintenances/active.json": "JSON active maintenances"}
TARGET_SHARE, TARGET_P95_MS = 0.5, 50.0
SLICE_SECONDS = 1.0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=whole(1), default=20)
    parser.add_argument("--seconds", type=seconds(0, above=True), default=10, help="per path")
    parser.add_argument("--max-requests", type=whole(1), default=100_000, help="per path")
    parser.add_argument("--incidents", type=whole(1), default=60)
    parser.add_argument("--run-every", type=seconds(0), default=0.5,
                        help="seconds between runs started beside the load (0: no runs)")
    parser.add_argument("--port", type=whole(0), default=0, help="127.0.0.1 port for gunicorn (0: a free one)")
    parser.add_argument("--web-workers", type=whole(1), default=gunicorn_conf.workers)
    parser.add_argument("--web-threads", type=whole(1), default=gunicorn_conf.threads)
    args = parser.parse_args(argv)
    if not (args.seconds <= 300 and args.clients <= 500 and args.max_requests <= 1_000_000
            and args.incidents <= 5000 and args.port <= 65535):
        parser.error("bounded runs only: --seconds up to 300, --clients up to 500, --max-requests up to 1,000,000, "
                     "--incidents up to 5000, --port up to 65535")
    port = args.port or free_port()

    db = BenchDatabase("status")
    os.environ["STATIC_ROOT"] = str(db.var_dir / "static")
    db.setup()
    demo = load_demo()
    size = prepare(args.incidents)
    with ModelServer(latency=0.05) as model, CeleryWorker(db, model.base_url, concurrency=2) as worker:
        server = start_gunicorn(port, args.web_workers, args.web_threads, db)
        try:
            runs = Runs(demo, args.run_every)
            runs.start()
            paths = [*PATHS, f"/static/{CEILING}"]
            sessions = {path: [Session(port) for _ in range(args.clients)] for path in paths}
            for path in paths:  # warm up: every process and connection has served each path once
                load(sessions[path], [path], 0.5, args.clients * 4, 0.0)
            load_before = _loadavg()
            # The paths take turns a slice at a time, so that a change in the machine's load (other
            # work, the runs beside) falls on all of them alike rather than on whichever came first.
            rounds = max(1, round(args.seconds / SLICE_SECONDS))
            measured = {path: ([], 0.0) for path in paths}
            for _ in range(rounds):
                for path in paths:
                    results, wall = load(sessions[path], [path], args.seconds / rounds,
                                         max(1, args.max_requests // rounds), 0.0)
                    measured[path] = (measured[path][0] + results, measured[path][1] + wall)
            load_after = _loadavg()
            runs.stop()
        finally:
            stop(server)
        errors = worker.errors()

    def rate(path):
        results, wall = measured[path]
        return len(results) / wall

    ceiling = rate(f"/static/{CEILING}")
    rows = []
    for path, (results, _) in measured.items():
        times = [t * 1000 for _, t, _ in results]
        failed = sum(1 for *_, ok in results if not ok)
        share = rate(path) / ceiling if ceiling else float("nan")
        p95 = percentile(times, 95)
        met = path == f"/static/{CEILING}" or (share >= TARGET_SHARE and p95 <= TARGET_P95_MS and not failed)
        rows.append([PATHS.get(path, "static file (ceiling)"), path, len(results), f"{rate(path):.0f}",
                     f"{share:.2f}", fmt_ms(percentile(times, 50)), fmt_ms(p95), fmt_ms(percentile(times, 99)),
                     failed, "—" if path.startswith("/static/") else verdict(met)])
    print_table(
        f"Status page under load: {args.clients} clients a path, {args.seconds:g} s each, "
        f"gunicorn {args.web_workers} workers x {args.web_threads} threads, {args.incidents} incidents",
        ["what", "path", "requests", "req/s", "× static", "p50 ms", "p95 ms", "p99 ms", "errors",
         f"≥ {TARGET_SHARE} × static, p95 ≤ {TARGET_P95_MS:g} ms"],
        rows,
        [f"Every answer {size} bytes (the static file is as large as the page). Runs started beside the load: "
         f"{runs.started} (one every {args.run_every:g} s, a Celery worker, the scripted model at 50 ms a call); "
         f"worker errors: {', '.join(errors) or 'none'}.",
         f"Load average (1/5/15 min) before {load_before}, after {load_after}; the clients run on the same "
         f"{os.cpu_count()} cores as the server."],
    )
    print_machine()
    return 0


def prepare(incidents: int) -> int:
    """Seed the data, build the stored page and write the static file of its size; returns the size."""
    from django.core.management import call_command
    from django.utils import timezone

    from reviewer.models import Delivery, DeliveryChannel, PublishedUpdate, StatusComponent, UpdateComponent
    from reviewer.status import snapshots

    channel, _ = DeliveryChannel.objects.get_or_create(kind=DeliveryChannel.Kind.STATUS,
                                                       defaults={"name": "Public status page"})
    components = [StatusComponent.objects.create(name=name, position=i, description=f"{name} for every customer")
                  for i, name in enumerate(["Checkout", "API", "Sign-in", "Dashboard", "Webhooks"], 1)]
    from agents.models import Incident

    now = timezone.now()
    states = ["investigating", "identified", "resolved"]
    for number in range(incidents):
        incident = Incident.objects.create(incident_id=f"inc_bench_{number}", title=f"Internal {number}")
        last = 3 if number % 3 else 2  # every third incident is still ongoing
        for version in range(1, last + 1):
            update = PublishedUpdate.objects.create(
                incident=incident, version=version, text_hash="0" * 12, public_title=f"Disruption {number}",
                text=f"Update {version} on disruption {number}: we are working on it and will write again.",
                state=states[version - 1], impact="major", published_at=now)
            status = "operational" if states[version - 1] == "resolved" else "partial_outage"
            UpdateComponent.objects.create(update=update, component=components[number % 5], status=status)
            Delivery.objects.create(update=update, channel=channel, status="delivered", attempts=1, delivered_at=now)
    # Two maintenance windows: one in progress, one tomorrow (their JSON lists something).
    from reviewer.models import Maintenance, MaintenanceUpdate

    for title, starts in (("Database upgrade", now - timedelta(minutes=5)), ("Network work", now + timedelta(days=1))):
        window = Maintenance.objects.create(title=title, starts_at=starts, ends_at=starts + timedelta(hours=2),
                                            status="in_progress" if starts < now else "scheduled")
        window.components.set(components[:2])
        MaintenanceUpdate.objects.create(maintenance=window, status=window.status,
                                         text=f"{title}: checkout and the API may be slow for a few minutes.")
    snapshots.rebuild()
    body = snapshots.current("page").body.encode()
    call_command("collectstatic", interactive=False, verbosity=0)
    (Path(os.environ["STATIC_ROOT"]) / CEILING).write_bytes(body)
    return len(body)


def start_gunicorn(port: int, workers: int, threads: int, db: BenchDatabase) -> subprocess.Popen:
    log = (db.var_dir / "gunicorn.log").open("ab")
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "python:reviewer.gunicorn_conf", "--bind", f"{HOST}:{port}",
         "--workers", str(workers), "--threads", str(threads), "reviewer.wsgi"],
        cwd=ROOT, env={**os.environ, "PYTHONUNBUFFERED": "1"}, stdout=log, stderr=subprocess.STDOUT,
        start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if Session(port).request("GET", "/status/")[0] == 200:
                return process
        except OSError:
            time.sleep(0.2)  # not listening yet
    stop(process)
    raise SystemExit(f"gunicorn did not start on {HOST}:{port}; see {db.var_dir / 'gunicorn.log'}")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


class Runs:
    """Runs started one every ``every`` seconds in a thread while the load runs (at most 600)."""

    def __init__(self, demo: dict, every: float):
        self.demo, self.every, self.started = demo, every, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def start(self) -> None:
        if self.every:
            self._thread.start()

    def _loop(self) -> None:
        from django.db import connection

        try:
            while not self._stop.wait(self.every) and self.started < 600:
                submit("reflection", self.demo)
                self.started += 1
        finally:
            connection.close()

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=30)


if __name__ == "__main__":
    sys.exit(main())

"""Shared pieces of the benchmarks: the stage-playing model server, a throwaway database, a real
Celery worker, statistics and table printing.

The model is the product's scripted OpenAI-compatible server (``agents.testing.scripted_server``,
which the tests use too) with a responder that answers every stage correctly (by the tool the
request asks for) after a configurable latency, from the scripted demo answers
(``agents.testing.scripted_demo``). It runs in its own process, so its CPU time is not counted as
ours; our client measures each call's latency, and the benchmarks subtract that wait from wall
time to isolate our own cost.

    .venv/bin/python -m bench.common serve --latency 0.2   # prints the base URL, serves until killed
"""

from __future__ import annotations

import argparse
import atexit
import datetime as dt
import hashlib
import json
import math
import os
import platform
import re
import secrets
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agents.testing import scripted_demo as demo  # noqa: E402  (plain Python: no Django settings needed)
from agents.testing.scripted_server import Reply, ScriptedServer, content, delay, tool_call  # noqa: E402

TEXT_GOAL = demo.GOAL
ROUTING_GOAL = "I was charged twice for my subscription, please refund me. user_id=42"
APPROVE_MARKER = "[approve]"  # a goal containing this gets an approving review/critique; others a revise
FINAL_ANSWER = "We checked your account: the duplicate charge of 49.00 USD will be refunded within 5 days."
PIPELINES = ("reflection", "self_critique", "routing")
PRODUCT_SETTINGS = "reviewer.settings"
CANDIDATE_SETTINGS = "bench.candidate_settings"  # --candidate: the one change still proposed

# -- statistics -------------------------------------------------------------------------------


def median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    if not ordered:
        return math.nan
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (p95 of 50 values is the 48th smallest)."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    rank = max(1, math.ceil(pct / 100 * len(ordered)))
    return ordered[rank - 1]


def fmt_ms(value: float, digits: int = 1) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def verdict(ok: bool, *, by: str = "") -> str:
    return "met" if ok else f"MISSED{(' by ' + by) if by else ''}"


# -- arguments: every valid value works, anything else gets argparse's message (exit 2) ---------


def whole(minimum: int = 0):
    """An argparse type: a whole number ≥ ``minimum`` (``--slow-runs 0`` is valid and skips that pass)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"a whole number is needed, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        return value

    parse.__name__ = f"whole number ≥ {minimum}"
    return parse


def seconds(minimum: float = 0.0, *, above: bool = False):
    """An argparse type: a finite number of seconds ≥ ``minimum`` (> with ``above``)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"a number of seconds is needed, got {text!r}") from None
        if not math.isfinite(value) or value < minimum or (above and value == minimum):
            raise argparse.ArgumentTypeError(f"must be a finite number {'>' if above else '≥'} {minimum:g}, got {text}")
        return value

    parse.__name__ = "seconds"
    return parse


def choices_list(allowed: Sequence[str]):
    """An argparse type: a comma-separated, non-empty subset of ``allowed`` (order kept, repeats dropped)."""

    def parse(text: str) -> list[str]:
        items = list(dict.fromkeys(x.strip() for x in text.split(",") if x.strip()))
        unknown = [x for x in items if x not in allowed]
        if unknown or not items:
            raise argparse.ArgumentTypeError(f"a comma-separated list of {', '.join(allowed)} is needed, got {text!r}")
        return items

    parse.__name__ = "list"
    return parse


# -- tables -----------------------------------------------------------------------------------


def print_table(title: str, headers: Sequence[str], rows: Iterable[Sequence[Any]], notes: Sequence[str] = ()) -> str:
    """Print a Markdown table (pastes into the README as is) and return its text."""
    rows = [[str(cell) for cell in row] for row in rows]
    widths = [max(len(str(h)), *(len(r[i]) for r in rows)) if rows else len(str(h)) for i, h in enumerate(headers)]

    def line(cells):
        return "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

    out = [f"\n### {title}", "", line(headers), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [line(r) for r in rows]
    out += [""] + [f"{note}" for note in notes]
    text = "\n".join(out)
    print(text, flush=True)
    return text


def _loadavg() -> str | None:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return None


_LOAD_AT_START = _loadavg()  # other work on the machine makes the figures noisier; say how much


def machine_info() -> dict[str, str]:
    """Where the figures came from."""
    cpu = "unknown"
    try:
        for row in Path("/proc/cpuinfo").read_text().splitlines():
            if row.startswith("model name"):
                cpu = row.split(":", 1)[1].strip()
                break
        ram_kb = next(int(r.split()[1]) for r in Path("/proc/meminfo").read_text().splitlines()
                      if r.startswith("MemTotal"))
        ram = f"{ram_kb / 1024 / 1024:.1f} GiB"
    except (OSError, StopIteration):
        ram = "unknown"
    info = {
        "date": dt.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z"),
        "nproc": str(os.cpu_count()),
        "cpu": cpu,
        "ram": ram,
        "load average at start / end": f"{_LOAD_AT_START} / {_loadavg()}",
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
    }
    try:
        from django.db import connection

        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SHOW server_version")
                info["postgresql"] = cursor.fetchone()[0]
    except Exception:
        pass
    return info


def print_machine(extra: dict[str, str] | None = None) -> None:
    info = machine_info() | (extra or {})
    print("\nmachine: " + "; ".join(f"{k} {v}" for k, v in info.items()), flush=True)


# -- the model: plays every stage correctly, after a latency ---------------------------------

_SECTION = re.compile(r"(?:^|\n\n)([A-Z][A-Z ]*[A-Z]):\n")
_QUOTED = re.compile(r"\"([^\"]{3,160})\"|'([^']{3,160})'")


def sections(user_message: str) -> dict[str, str]:
    """The titled sections of a stage's user message (``CONTEXT``, ``GOAL``, ``DRAFT``, ...)."""
    parts = _SECTION.split(user_message)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def _stage_tool(body: dict) -> str | None:
    """The tool a request asks for: from ``tools`` (tool mode) or the system prompt (JSON mode)."""
    tools = body.get("tools") or []
    if tools:
        return tools[0]["function"]["name"]
    if body.get("response_format"):
        from agents.core.llm.schemas import TOOLS

        system = next((m["content"] for m in body.get("messages", []) if m.get("role") == "system"), "")
        return next((name for name in re.findall(r"\bCall (\w+)", system) if name in TOOLS), None)
    return None


def stage_answer(tool: str | None, user_message: str) -> dict | str:
    """The correct answer for one stage: a draft the demo context supports, a review or critique
    (approve when the goal carries APPROVE_MARKER, else revise with one ADD phrase), the revision
    (draft + the phrase), a route to the billing specialist, or the final text."""
    parts = sections(user_message)
    approve = APPROVE_MARKER in parts.get("GOAL", "")
    if tool == "submit_draft":
        return {"draft": demo.DRAFT}
    if tool == "reflect":
        return demo.APPROVE if approve else demo.REVISE
    if tool == "submit_critique":
        return demo.CRITIQUE_APPROVE if approve else demo.CRITIQUE_REVISE
    if tool == "submit_revision":
        draft = parts.get("DRAFT", demo.DRAFT).strip()
        instructions = " ".join(json.loads(parts.get("INSTRUCTIONS", "[]")))
        phrases = [a or b for a, b in _QUOTED.findall(instructions)]
        return {"revised_answer": " ".join([draft, *(p for p in phrases if p not in draft)])}
    if tool == "route":
        return {"kind": "route", "target": "billing_specialist", "args": {"ticket": parts.get("TICKET", "").strip()}}
    return FINAL_ANSWER


class StageResponder:
    """``ScriptedServer(responder=StageResponder(latency=0.2))``: every request answered correctly by
    its stage after ``latency`` seconds. Usage is an estimate (characters / 4) so token budgets and
    the run's token columns hold plausible numbers."""

    def __init__(self, latency: float = 0.0):
        self.latency = latency

    def __call__(self, body: dict) -> Reply:
        messages = body.get("messages", [])
        user = next((m["content"] for m in messages if m.get("role") == "user"), "")
        tool = _stage_tool(body)
        answer = stage_answer(tool, user)
        sent = sum(len(m.get("content") or "") for m in messages) + len(json.dumps(body.get("tools", "")))
        text = answer if isinstance(answer, str) else json.dumps(answer)
        usage = (max(1, sent // 4), max(1, len(text) // 4))
        if isinstance(answer, str):
            reply = content(answer, usage=usage)
        elif body.get("tools"):
            reply = tool_call(tool, answer, usage=usage)
        else:
            reply = content(text, usage=usage)
        return delay(self.latency, reply) if self.latency else reply


class ModelServer:
    """The fake model in a child process on 127.0.0.1: ``with ModelServer(latency=1.0) as server:``."""

    def __init__(self, latency: float = 0.0):
        self.latency = latency
        self.process: subprocess.Popen | None = None
        self.base_url = ""

    def __enter__(self) -> ModelServer:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bench.common", "serve", "--latency", str(self.latency)],
            cwd=ROOT, stdout=subprocess.PIPE, text=True, start_new_session=True,
        )
        self.base_url = (self.process.stdout.readline() or "").strip()
        if not self.base_url.startswith("http"):
            self.process.kill()
            raise RuntimeError("the fake model server did not start")
        return self

    def __exit__(self, *exc_info) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def serve(latency: float) -> None:
    # The stock backlog of 5 drops SYNs when 100 runs connect at once (the client then waits ~1 s
    # to retry): raise it in this process only.
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    ThreadingHTTPServer.request_queue_size = 1024
    # Keep-alive, as OpenAI's API and local model servers (llama.cpp, vLLM) answer: the client keeps
    # its connection, so a call's wait is not also a new TCP connection each time (HTTP/1.0 closes).
    # (with TCP_NODELAY, or Nagle holds the body back for the delayed ACK of the headers: +40 ms a call).
    BaseHTTPRequestHandler.protocol_version = "HTTP/1.1"
    BaseHTTPRequestHandler.disable_nagle_algorithm = True
    fake = ScriptedServer(responder=StageResponder(latency)).start()
    fake.requests = _Discard()  # a long benchmark would otherwise keep every request body
    print(fake.base_url, flush=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        while True:
            time.sleep(3600)
    finally:
        fake.stop()


class _Discard(list):
    def append(self, item) -> None:
        pass


# -- a throwaway database ---------------------------------------------------------------------


class BenchDatabase:
    """A temp folder (VAR_DIR) and a database of our own: SQLite in the folder, or, when
    ``DATABASE_URL`` is a PostgreSQL URL, a new database on that server that we drop at the end.
    Never the developer's database: a SQLite ``DATABASE_URL`` is ignored."""

    def __init__(self, name: str, *, keep: bool = False, settings_module: str = PRODUCT_SETTINGS):
        self.name = name
        self.keep = keep
        # This process and the workers it starts run with these settings (--candidate: CANDIDATE_SETTINGS).
        self.settings_module = settings_module
        self.var_dir = Path(tempfile.mkdtemp(prefix=f"bench-{name}-"))
        self.pg_admin_url: str | None = None
        self.pg_database: str | None = None
        given = os.environ.get("DATABASE_URL", "")
        if given.startswith(("postgres://", "postgresql://")):
            self.pg_database = f"bench_{name}_{os.getpid()}"
            self.pg_admin_url = given
            self.url = _with_database(given, self.pg_database)
        else:
            self.url = f"sqlite:///{self.var_dir / 'bench.sqlite3'}"
        self.vendor = "postgresql" if self.pg_database else "sqlite"

    def setup(self) -> BenchDatabase:
        """Create the database, point Django at it (before ``django.setup()``), migrate."""
        if self.pg_database:
            import psycopg

            with psycopg.connect(self.pg_admin_url, autocommit=True) as conn:
                conn.execute(f'CREATE DATABASE "{self.pg_database}"')
        atexit.register(self.cleanup)
        (self.var_dir / "broker" / "control").mkdir(parents=True, exist_ok=True)
        os.environ.update(
            DJANGO_SETTINGS_MODULE=self.settings_module,
            DATABASE_URL=self.url,
            VAR_DIR=str(self.var_dir),
            ALLOWED_HOSTS="testserver,127.0.0.1,localhost",
            LOG_LEVEL=os.environ.get("LOG_LEVEL", "ERROR"),
            DEBUG="false",
            SECRET_KEY=os.environ.get("SECRET_KEY") or secrets.token_hex(32),  # DEBUG off needs a key of its own
        )
        import django
        from django.core.management import call_command

        django.setup()
        template = None if self.pg_database else _migrated_template(self.settings_module)
        if template and template.exists():
            shutil.copyfile(template, self.var_dir / "bench.sqlite3")
        call_command("migrate", verbosity=0)  # on a copy of the template: nothing to apply, the hooks run
        if template and not template.exists():
            _save_template(self.var_dir / "bench.sqlite3", template)
        return self

    def cleanup(self) -> None:
        try:
            from django.db import connections

            connections.close_all()
        except Exception:
            pass
        if self.pg_database and not self.keep:
            import psycopg

            with psycopg.connect(self.pg_admin_url, autocommit=True) as conn:
                # Only the database this script created.
                conn.execute(f'DROP DATABASE IF EXISTS "{self.pg_database}" WITH (FORCE)')
            self.pg_database = None
        if not self.keep:
            shutil.rmtree(self.var_dir, ignore_errors=True)

    def describe(self) -> str:
        where = f"PostgreSQL database {self.pg_database}" if self.pg_database else f"SQLite {self.url[10:]}"
        return where + (f" with {self.settings_module}" if self.settings_module != PRODUCT_SETTINGS else "")


def _migrated_template(settings_module: str) -> Path:
    """Where a migrated SQLite database for these migrations is kept (``var/bench/``): every bench
    run copies it rather than migrating from nothing (about 10 s a run on a loaded 2-core machine).
    Its name is a digest of every app's migration files, Django's version and the settings module,
    so a changed or added migration makes a new one."""
    import django
    from django.apps import apps

    digest = hashlib.sha256(f"{django.get_version()} {settings_module}".encode())
    for app in sorted(apps.get_app_configs(), key=lambda app: app.label):
        for path in sorted((Path(app.path) / "migrations").glob("*.py")):
            digest.update(f"{app.label}/{path.name}".encode() + path.read_bytes())
    return ROOT / "var" / "bench" / f"migrated-{digest.hexdigest()[:16]}.sqlite3"


def _save_template(database: Path, template: Path) -> None:
    """A consistent copy (SQLite's backup, so the write-ahead log is in it), written beside and
    renamed into place: two benches started together never read half a file. Older templates go."""
    from django.db import connections

    connections.close_all()
    template.parent.mkdir(parents=True, exist_ok=True)
    for old in template.parent.glob("migrated-*.sqlite3"):
        old.unlink(missing_ok=True)
    partial = template.with_suffix(f".{os.getpid()}.partial")
    source, copy = sqlite3.connect(database), sqlite3.connect(partial)
    try:
        source.backup(copy)
    finally:
        source.close()
        copy.close()
    os.replace(partial, template)


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


def candidate_option(parser: argparse.ArgumentParser) -> None:
    """``--candidate``: measure with ``bench/candidate_settings.py`` instead of the product settings;
    the script's ``args.settings`` is the settings module either way."""
    parser.add_argument("--candidate", dest="settings", action="store_const", const=CANDIDATE_SETTINGS,
                        default=PRODUCT_SETTINGS,
                        help=f"run with DJANGO_SETTINGS_MODULE={CANDIDATE_SETTINGS}: the product settings with the "
                             "filesystem broker polled every 10 ms instead of 100 ms")


def settings_label(settings_module: str) -> str:
    """A table title's suffix that says which settings were measured."""
    return f" ({settings_module})" if settings_module != PRODUCT_SETTINGS else ""


def use_model(base_url: str) -> None:
    """Point this process's model client (``client_from_env``) at the fake server."""
    for key in [k for k in os.environ if k.startswith(("OPENAI_", "LLM_"))]:
        del os.environ[key]
    os.environ.update(LLM_BACKEND="openai", OPENAI_BASE_URL=base_url, OPENAI_MODEL="bench-model")


def load_demo() -> dict:
    """Demo incidents, customers, plans (the routing specialists read them) and a user in every role."""
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from agents.store import load_demo_data
    from reviewer.demo.seed import load_incidents
    from reviewer.roles import ROLE_PERMISSIONS

    load_demo_data()
    incidents = {i.incident_id: i for i in load_incidents()}
    user, _ = get_user_model().objects.get_or_create(username="bench", defaults={"first_name": "Bench"})
    user.groups.set(Group.objects.filter(name__in=list(ROLE_PERMISSIONS)))
    return {"incidents": incidents, "user": user}


# -- a real Celery worker ---------------------------------------------------------------------


class CeleryWorker:
    """``celery -A reviewer worker --pool threads --concurrency N`` on the benchmark's database."""

    def __init__(self, db: BenchDatabase, base_url: str, concurrency: int, *, loglevel: str = "WARNING"):
        self.db = db
        self.concurrency = concurrency
        self.log_path = db.var_dir / f"worker-{concurrency}-{time.monotonic_ns()}.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "LLM_"))}
        env.update(DJANGO_SETTINGS_MODULE=db.settings_module, DATABASE_URL=db.url, VAR_DIR=str(db.var_dir),
                   LLM_BACKEND="openai", OPENAI_BASE_URL=base_url, OPENAI_MODEL="bench-model",
                   PYTHONUNBUFFERED="1", LOG_LEVEL="WARNING")
        self.env = env
        self.loglevel = loglevel
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> CeleryWorker:
        self.crashes: list[str] = []
        self._start()
        return self

    def _start(self) -> None:
        self.log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "reviewer", "worker", "--pool", "threads",
             "--concurrency", str(self.concurrency), "--loglevel", self.loglevel, "--without-gossip",
             "--without-mingle", "--without-heartbeat", "-n", f"{self.log_path.stem}-{os.getpid()}@%h"],
            cwd=ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
        )

    def cpu_seconds(self) -> float:
        """CPU time (user + system) the worker process has used so far (Linux /proc)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def idle_cpu_percent(self, seconds: float) -> float:
        """Share of one core the worker uses while it has nothing to do, over ``seconds``."""
        before, started = self.cpu_seconds(), time.monotonic()
        time.sleep(seconds)
        return (self.cpu_seconds() - before) / (time.monotonic() - started) * 100

    def errors(self) -> list[str]:
        """The distinct exceptions the worker logged, each with the last frame of our code that raised
        it and how often: "OperationalError: database is locked (agents/observer.py:85 in record_result) x3"."""
        found: dict[str, int] = {}
        where = ""
        frame = re.compile(
            r'^\s*File "' + re.escape(str(ROOT)) + r'/((?:agents|reviewer)/[^"]+)", line (\d+), in (\w+)'
        )
        last = ""
        for line in self.log_path.read_text(errors="replace").splitlines():
            if line.startswith("Traceback"):
                where = ""
            elif line.startswith(("The above exception", "During handling of the above")) and last:
                found[last] -= 1  # only the last exception of a chain counts
                last = ""
            elif match := frame.match(line):
                where = f"{match[1]}:{match[2]} in {match[3]}"
            elif re.match(r"^(?:\w+\.)+\w*(?:Error|Exception): ", line) and "The above exception" not in line:
                key = f"{line.split(': ', 1)[0].split('.')[-1]}: {line.split(': ', 1)[1]}" + (
                    f" ({where})" if where else ""
                )
                found[key] = found.get(key, 0) + 1
                last = key
        return [f"{key} x{count}" for key, count in sorted(found.items()) if count] + self.crashes

    def restart_if_dead(self) -> bool:
        """A worker that exited is recorded (with the last exception it logged) and started again, so
        that one crash does not end the benchmark; the runs it held are lost."""
        if self.process.poll() is None:
            return False
        tail = self.log_path.read_text(errors="replace").splitlines()
        last = next(
            (line for line in reversed(tail) if re.match(r"^[\w.]+(?:Error|Exception): ", line)), "no exception"
        )
        self.crashes.append(f"the worker process exited (code {self.process.returncode}) after: {last}")
        self.log.close()
        self._start()
        return True

    def __exit__(self, *exc_info) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.log.close()


def run_inputs(pipeline: str, incidents: dict | None = None, *, approve: bool = False) -> dict:
    """What a benchmark run is started with: the demo incident for the text pipelines, the refund
    ticket for routing."""
    marker = f" {APPROVE_MARKER}" if approve else ""
    if pipeline == "routing":
        return {"goal": ROUTING_GOAL + marker, "incident": None}
    incident = (incidents or {}).get("inc_pay_2041")
    return {"goal": TEXT_GOAL + marker, "incident": incident}


def submit(pipeline: str, demo: dict) -> tuple[int, float]:
    """Start a run the way the product does (row, then enqueue on commit); returns (pk, wall-clock time)."""
    from agents.tasks import start_run

    inputs = run_inputs(pipeline, demo["incidents"])
    submitted = time.time()
    row, _ = start_run(pipeline=pipeline, goal=inputs["goal"], incident=inputs["incident"], user=demo["user"])
    return row.pk, submitted


def wait_finished(run_pks: Sequence[int], timeout: float, worker: CeleryWorker | Sequence[CeleryWorker] | None = None,
                  every: float = 0.01, stall: float | None = None) -> None:
    """Until every run has left queued/running, ``timeout`` passed, (with ``stall``) no run finished
    for ``stall`` seconds (runs whose worker thread crashed stay "running"), or a worker died."""
    from agents.models import Run

    workers = [] if worker is None else [worker] if isinstance(worker, CeleryWorker) else list(worker)
    deadline = time.monotonic() + timeout
    pending = set(run_pks)
    progress = time.monotonic()
    while pending and time.monotonic() < deadline:
        if stall is not None and time.monotonic() - progress > stall:
            return
        done = set(Run.objects.filter(pk__in=pending).exclude(status__in=Run.IN_FLIGHT).values_list("pk", flat=True))
        if done:
            progress = time.monotonic()
        pending -= done
        if pending:
            if any([w.restart_if_dead() for w in workers]):  # noqa: C419 (restart every dead worker, not the first)
                return  # what the dead worker held is lost; the caller counts it
            time.sleep(every)


def model_wait_ms(run_pks: Sequence[int]) -> dict[int, float]:
    """Recorded model wait per run: the sum of its ModelCall latencies, as our client measured them."""
    from django.db.models import Sum

    from agents.models import ModelCall

    rows = ModelCall.objects.filter(run_id__in=run_pks).values("run_id").annotate(ms=Sum("latency_ms"))
    return {row["run_id"]: row["ms"] or 0.0 for row in rows}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    serve_parser = sub.add_parser("serve", help="run the stage-playing fake model until killed")
    serve_parser.add_argument("--latency", type=float, default=0.0, help="seconds per call")
    args = parser.parse_args(argv)
    if args.command == "serve":
        serve(args.latency)


if __name__ == "__main__":
    main()

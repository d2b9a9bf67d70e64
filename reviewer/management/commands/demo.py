"""python manage.py demo: the whole product on this machine with the embedded defaults.

Migrates, loads the demo incidents, customers and users, runs the demo pipelines with the offline
model (first start only), then serves the web app (gunicorn), a Celery worker per queue (runs,
notifications, deliveries: reviewer.celery.WORKERS) and Celery beat (the sweep) until Ctrl-C or
SIGTERM. Each child runs in its own process group and is stopped with its whole group. A child
that ends on its own is started again after a pause that doubles with each quick failure (as
systemd's Restart=always does for production, docs/deploy.md); after RestartPolicy.GIVE_UP_AFTER
quick failures in a row the demo stops the others and exits, so no child (beat included) outlives
the others or keeps the port.
"""

import ctypes
import logging
import os
import secrets
import shlex
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from agents.models import Run
from reviewer.celery import WORKERS, worker_command
from reviewer.demo.seed import (
    DEMO_RECIPIENTS,
    DEMO_WEBHOOK_SECRET_VARIABLE,
    demo_destinations,
    load_everything,
    run_demo_pipelines,
)
from reviewer.models import Escalation

STOP_SECONDS = 15  # then SIGKILL: a worker's warm shutdown waits for the runs in flight
DEMO_THREADS = {"runs": 32}  # the other workers have production's threads (reviewer.celery.WORKERS)


class Command(BaseCommand):
    help = "Set up the demo data and serve the web app and its workers on 127.0.0.1."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=8000)
        parser.add_argument("--setup-only", action="store_true", help="Prepare the data, then exit (no servers).")
        parser.add_argument("--web-workers", type=int, help="gunicorn worker processes (reviewer/gunicorn_conf.py)")
        parser.add_argument("--web-threads", type=int, help="threads per gunicorn worker (reviewer/gunicorn_conf.py)")

    def handle(self, *args, port, setup_only, web_workers, web_threads, **options):
        log_to_file(Path(settings.VAR_DIR) / "log" / "demo.log")
        declare_demo_outbound(port)
        call_command("migrate", interactive=False, verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)  # WhiteNoise serves them
        logins_file = Path(settings.VAR_DIR) / "demo-logins.json"
        logins = load_everything(logins_file)
        ran = run_demo_pipelines(user=get_user_model().objects.get(username="ops"))
        counts = {status: Run.objects.filter(status=status).count() for status in ("ok", "stopped")}
        self.stdout.write(f"Demo data ready: {len(ran)} new demo runs; {counts['ok']} succeeded, "
                          f"{counts['stopped']} stopped, {Escalation.objects.filter(status='pending').count()} "
                          "escalations pending.")
        if setup_only:
            return self.print_logins(logins, port)
        self.serve(port, logins, web_workers=web_workers, web_threads=web_threads)

    def print_logins(self, logins, port):
        """The URL and the logins, as the last thing the demo prints (the servers log to files)."""
        self.stdout.write(self.style.SUCCESS(f"\n  Open http://127.0.0.1:{port}/  (admin: http://127.0.0.1:{port}/admin/)\n"))
        self.stdout.write(f"  API docs: http://127.0.0.1:{port}/api/docs; a token and a first call, "
                          "from any shell:")
        for line in token_hint(port):
            self.stdout.write(f"    {line}")
        self.stdout.write("")
        order = list(DEMO_ROLES)
        for username, password in sorted(logins.items(), key=lambda login: (
                order.index(login[0]) if login[0] in order else len(order))):
            self.stdout.write(f"  {username:6} / {password:16} {DEMO_ROLES.get(username, '')}")
        self.stdout.write(f"  (kept in {Path(settings.VAR_DIR) / 'demo-logins.json'})\n")
        self.stdout.flush()

    def serve(self, port, logins, *, web_workers, web_threads):
        # SIGTERM (a service manager, `kill`) stops the children like Ctrl-C does, instead of ending
        # this process alone and leaving them running. SIGINT is handled here too: a process started in
        # the background by a non-interactive shell (a script's `cmd &`) inherits SIGINT ignored, and
        # Python then never turns Ctrl-C into KeyboardInterrupt.
        signal.signal(signal.SIGTERM, _stop_requested)
        signal.signal(signal.SIGINT, _stop_requested)
        web = [sys.executable, "-m", "gunicorn", "-c", "python:reviewer.gunicorn_conf", "--bind", f"127.0.0.1:{port}"]
        web += ["--workers", str(web_workers)] if web_workers else []
        web += ["--threads", str(web_threads)] if web_threads else []
        receiver_log = Path(settings.VAR_DIR) / "demo-receiver.log"
        commands = {
            "web": [*web, "reviewer.wsgi"],
            "receiver": [sys.executable, "-m", "reviewer.demo.receiver", "--port", str(receiver_port(port)),
                         "--log", str(receiver_log)],
            **worker_commands(),
            "beat": [sys.executable, "-m", "celery", "-A", "reviewer", "beat", "--loglevel", "WARNING",
                     "--schedule", settings.CELERY_BEAT_SCHEDULE_FILENAME],
        }
        # Each child logs to its own file: the URL and the logins stay the last lines on the screen.
        log_dir = Path(settings.VAR_DIR) / "log"
        log_dir.mkdir(parents=True, exist_ok=True)
        logs = {name: log_dir / f"{name}.log" for name in commands}
        children, failure = {}, ""
        try:
            self.stdout.write(f"Starting the web app, a worker per queue, beat and the demo's receiver "
                              f"(their logs: {log_dir}/)…")
            for name, command in commands.items():
                children[name] = _start_child(command, logs[name])
            if _wait_until_serving(port, children.values()):
                self.stdout.write(f"  What was sent: webhooks, Slack and notifications in {receiver_log}, "
                                  f"emails in {os.environ.get('EMAIL_FILE_PATH', 'the mail server')}.")
                self.stdout.write("  Ctrl-C stops the web app, the workers, beat and the receiver.")
                self.print_logins(logins, port)
                failure = self.supervise(commands, children, logs)
            else:
                ended = [name for name, child in children.items() if child.poll() is not None]
                failure = (f"{', '.join(ended)} ended on its own while starting" if ended
                           else f"the web app did not answer on port {port} within {SERVE_WAIT_SECONDS} s")
                self.stderr.write(f"{failure}; stopping the others…")
                for name in ended or ["web"]:
                    self.stderr.write(f"The end of {logs[name]}:\n{_tail(logs[name])}")
        except (KeyboardInterrupt, StopRequested):
            self.stdout.write("\nStopping…")
        finally:
            signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut the clean-up short
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            stop_all(children.values())
        if failure:
            raise CommandError(f"{failure}; the demo stopped the others.")


    def supervise(self, commands, children, logs) -> str:
        """Start again every child that ends, after its policy's pause, until Ctrl-C or SIGTERM (an
        exception) or a child that keeps failing (its message returned)."""
        policies = {name: RestartPolicy() for name in children}
        for name in children:
            policies[name].started(time.monotonic())
        due: dict[str, float] = {}  # child -> when to start it again
        while True:
            now = time.monotonic()
            for name, child in children.items():
                if name in due or child.poll() is None:
                    continue
                _stop_group(child.pid)  # what it left in its group (gunicorn's workers) goes with it
                pause = policies[name].ended(now)
                if pause is None:
                    failure = (f"{name} ended {RestartPolicy.GIVE_UP_AFTER} times in a row within "
                               f"{RestartPolicy.QUICK_SECONDS} s of starting (exit code {child.returncode})")
                    _note(logs[name], f"{failure}; the demo gives up and stops the others")
                    self.stderr.write(f"{failure}; stopping the others…\nThe end of {logs[name]}:\n{_tail(logs[name])}")
                    return failure
                message = f"{name} ended (exit code {child.returncode}); starting it again in {pause:g} s"
                _note(logs[name], message)
                self.stderr.write(message)
                due[name] = now + pause
            for name, when in list(due.items()):
                if when <= now:
                    del due[name]
                    _note(logs[name], f"starting {name} again")
                    children[name] = _start_child(commands[name], logs[name])
                    policies[name].started(now)
            time.sleep(SUPERVISE_EVERY_SECONDS)


DEMO_ROLES = {"lead": "support lead: works the escalation inbox",
              "lead2": "support lead: the second approval where a rule asks for two",
              "ops": "ops staff: starts runs",
              "admin": "policy admin: tunes policies and manages users in the admin site"}
# What a command run from another shell needs to reach this demo's database with its key: the
# variables the demo was started with (a key by its file, never printed itself).
HINT_VARIABLES = ("DEBUG", "SECRET_KEY_FILE", "VAR_DIR", "DATABASE_URL", "DJANGO_SETTINGS_MODULE")
HINT_DEFAULTS = {"DJANGO_SETTINGS_MODULE": "reviewer.settings"}  # manage.py's own: no need to say it


def token_hint(port: int) -> list[str]:
    """Two lines to paste into any shell: a token for the demo's lead, then a call with it. The
    command names this interpreter and the repository by full path, and carries the variables the
    demo was started with (`.ci/demo` makes SECRET_KEY_FILE; a start with DEBUG=1 needs DEBUG=1)."""
    env = [f"{name}={shlex.quote(os.environ[name])}" for name in HINT_VARIABLES
           if os.environ.get(name) and os.environ[name] != HINT_DEFAULTS.get(name)
           and not (name == "DATABASE_URL" and not os.environ[name].startswith("sqlite"))]
    command = " ".join([*env, shlex.quote(sys.executable), shlex.quote(str(Path(settings.BASE_DIR) / "manage.py")),
                        "api_token", "lead", "--name", "demo"])
    return [f"TOKEN=$({command})",
            f'curl -H "Authorization: Bearer $TOKEN" http://127.0.0.1:{port}/api/escalations']


def log_to_file(path: Path) -> None:
    """The demo's own log lines (a library's warning, a task sent while loading the data) go to a
    file: the screen holds only what the demo prints, its URL and logins last."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path)
    root = logging.getLogger()
    for old in [h for h in root.handlers if isinstance(h, logging.StreamHandler)
                and not isinstance(h, logging.FileHandler)]:
        handler.setFormatter(old.formatter)
        for each in old.filters:
            handler.addFilter(each)
        root.removeHandler(old)
    root.addHandler(handler)


class RestartPolicy:
    """When to start a child again that ended: at once after a long life, after a pause that
    doubles with each quick failure in a row (1, 2, 4, 8 s), and never after GIVE_UP_AFTER quick
    failures in a row (something is wrong that restarting will not fix: a bad setting, a busy port)."""

    QUICK_SECONDS = 30  # a child that ended sooner after its start failed quickly
    FIRST_PAUSE_SECONDS = 1
    GIVE_UP_AFTER = 5

    def __init__(self):
        self.quick_failures = 0
        self.since = 0.0

    def started(self, now: float) -> None:
        self.since = now

    def ended(self, now: float) -> float | None:
        """The pause before the next start, or None: give up."""
        if now - self.since >= self.QUICK_SECONDS:
            self.quick_failures = 0
            return 0
        self.quick_failures += 1
        if self.quick_failures >= self.GIVE_UP_AFTER:
            return None
        return self.FIRST_PAUSE_SECONDS * 2 ** (self.quick_failures - 1)


SUPERVISE_EVERY_SECONDS = 0.5  # how often the demo looks at its children


def worker_commands() -> dict[str, list[str]]:
    """The demo's workers: one per queue, as in production (docs/deploy.md, "Queues and workers"), so
    a flood of mail never delays a run. The runs' worker has 32 threads, room for the demo's bursts."""
    return {f"worker-{name}": [sys.executable, "-m", *worker_command(name, concurrency=DEMO_THREADS.get(name)),
                               "--loglevel", "WARNING"] for name in WORKERS}


def _start_child(command: list[str], log_path: Path) -> subprocess.Popen:
    with log_path.open("ab") as log:
        return subprocess.Popen(command, cwd=settings.BASE_DIR, start_new_session=True, stdout=log,
                                stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)


def _note(log_path: Path, message: str) -> None:
    """A line of the demo's own in a child's log, where its operator looks for why it stopped."""
    with log_path.open("a") as log:
        log.write(f"[{time.strftime('%Y-%m-%d %H:%M:%S')}: demo] {message}\n")


def _stop_group(pgid: int) -> None:
    """SIGTERM to what is left of an ended child's process group, SIGKILL after STOP_SECONDS."""
    _signal_group(pgid, signal.SIGTERM)
    _wait_group(pgid, time.monotonic() + STOP_SECONDS)
    _signal_group(pgid, signal.SIGKILL)


def receiver_port(port: int) -> int:
    """The demo's receiver listens on the port after the web app's."""
    return port + 1


def declare_demo_outbound(port: int) -> None:
    """Where the demo sends, unless the operator says otherwise: the destinations on the demo's
    receiver (signed webhook, Slack, notifications), email into files under var/ (Django's file
    backend) and links back to this port, for this process and the ones it starts."""
    os.environ.setdefault("OUTBOUND_DESTINATIONS", demo_destinations(receiver_port(port)))
    os.environ.setdefault("OUTBOUND_EMAIL_RECIPIENTS", DEMO_RECIPIENTS)  # the demo's email channel's address
    os.environ.setdefault("SITE_URL", f"http://127.0.0.1:{port}")  # the links in notifications
    os.environ.setdefault(DEMO_WEBHOOK_SECRET_VARIABLE, secrets.token_urlsafe(32))
    if "EMAIL_BACKEND" not in os.environ:
        os.environ["EMAIL_BACKEND"] = "django.core.mail.backends.filebased.EmailBackend"
        os.environ.setdefault("EMAIL_FILE_PATH", str(Path(settings.VAR_DIR) / "demo-mail"))


SERVE_WAIT_SECONDS = 120  # gunicorn's start on a loaded 2-core machine, with room


def _wait_until_serving(port: int, children) -> bool:
    """True once the web app says it is ready (``/readyz``: its database, migrations and broker);
    False as soon as a child has ended (or after SERVE_WAIT_SECONDS), so the demo never prints a URL
    that does not answer."""
    deadline = time.monotonic() + SERVE_WAIT_SECONDS
    while time.monotonic() < deadline:
        if any(child.poll() is not None for child in children):
            return False
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5) as response:
                if response.status == 200:
                    return True
        except OSError:  # not listening yet, or not ready (503 is an HTTPError, an OSError)
            pass
        time.sleep(0.1)  # asking a server that is not ready yet; the deadline bounds it
    return False


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


class StopRequested(Exception):
    """SIGTERM or SIGINT arrived."""


def _stop_requested(signum, frame):
    raise StopRequested


def _die_with_parent():
    """In a child, before exec: SIGTERM when the demo itself dies, even by SIGKILL (Linux)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _signal_group(pgid: int, signum: int) -> None:
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        pass


def stop_all(children) -> None:
    """SIGTERM to every child's whole process group (a child that already ended may have left
    processes in its group: gunicorn's workers, a forked helper), then SIGKILL to what is left after
    STOP_SECONDS. Returns when every group is empty."""
    children = list(children)
    for child in children:
        _signal_group(child.pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_SECONDS
    for child in children:
        try:
            child.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    for child in children:
        _wait_group(child.pid, deadline)
        if _group_alive(child.pid):
            _signal_group(child.pid, signal.SIGKILL)
        child.wait()
        _wait_group(child.pid, time.monotonic() + 5)


def _wait_group(pgid: int, deadline: float) -> None:
    while _group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.05)

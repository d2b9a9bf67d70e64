"""`manage.py demo` as a person runs it: a real process on a free loopback port serving the app with
gunicorn, a Celery worker per queue and beat. Ctrl-C (SIGINT) and SIGTERM stop every child and grandchild and
free the port; a worker that dies is started again and takes work."""

import json
import os
import secrets
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from reviewer.management.commands.demo import receiver_port
from tests.processes.conftest import own_sqlite_env

ROOT = Path(__file__).parents[2]
READY_SECONDS = 180  # a loaded 2-core machine: migrate is done by the fixture, this is start-up only
# The demo brings its own SQLite database and embedded broker (demo_env): the same in both passes.
pytestmark = [pytest.mark.worker, pytest.mark.backend_independent]


@pytest.fixture(scope="module")
def first_setup(tmp_path_factory):
    """The demo's data, prepared once (`demo --setup-only`) in a folder of its own: its environment,
    and what it printed, stdout and stderr in one stream as a terminal shows them."""
    var_dir = tmp_path_factory.mktemp("demo")
    env = own_sqlite_env(var_dir)
    out = subprocess.run([sys.executable, "manage.py", "demo", "--setup-only"], cwd=ROOT, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    assert out.returncode == 0, out.stdout
    return env, out.stdout


@pytest.fixture(scope="module")
def demo_env(first_setup):
    return first_setup[0]


def free_port() -> int:
    """A free loopback port whose next port is free too: the demo's receiver listens on the port after
    the web app's (``receiver_port``), and on a busy machine (CI runs two passes at once) a port the
    system hands out may have a neighbour in use."""
    while True:
        with socket.socket() as sock, socket.socket() as neighbour:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
            try:
                neighbour.bind(("127.0.0.1", receiver_port(port)))
            except (OSError, OverflowError):  # in use, or past 65535
                continue
            return port


def processes() -> dict[int, tuple[int, str, str, str]]:
    """pid -> (parent pid, state, start time, command line), from /proc."""
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        table[int(entry.name)] = (int(fields[1]), fields[0], fields[19], cmdline)
    return table


def descendants(pid: int) -> dict[int, tuple[str, str]]:
    """Every live descendant of ``pid``: pid -> (start time, command line)."""
    table = processes()
    found, frontier = {}, [pid]
    while frontier:
        parent = frontier.pop()
        for child, (ppid, state, started, cmdline) in table.items():
            if ppid == parent and child not in found and state != "Z":
                found[child] = (started, cmdline)
                frontier.append(child)
    return found


def alive(pid: int, started: str) -> bool:
    """Still the same process (not a reused pid), and not a zombie."""
    row = processes().get(pid)
    return row is not None and row[2] == started and row[1] != "Z"


def serves(port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=5) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def port_free(port: int) -> bool:
    with socket.socket() as sock:
        if sock.connect_ex(("127.0.0.1", port)) == 0:
            return False
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def wait_for(condition, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)  # polling for a state, bounded by the deadline; nothing depends on its length
    raise AssertionError(f"timed out after {seconds} s waiting for {what}")


def sigint_ignored():
    """In the child before exec: SIGINT ignored, as a script's background job (`cmd &`) inherits it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class Demo:
    def __init__(self, env, log_path: Path, *, preexec_fn=None, key_file: Path | None = None):
        if key_file is not None:  # started as `.ci/demo` starts it: the key in a file, not in the environment
            env = {k: v for k, v in env.items() if k != "SECRET_KEY"}
            key_file.write_text(secrets.token_urlsafe(50))
            env["SECRET_KEY_FILE"] = str(key_file)
        self.port = free_port()
        for old in Path(env["VAR_DIR"]).glob("celerybeat-schedule*"):
            old.unlink()
        self.schedule = Path(env["VAR_DIR"])
        self.log_path = log_path
        self.log = log_path.open("w")
        self.seen: dict[int, tuple[str, str]] = {}
        self.process = subprocess.Popen([sys.executable, "manage.py", "demo", "--port", str(self.port)], cwd=ROOT,
                                        env=env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True,
                                        preexec_fn=preexec_fn)

    def wait_ready(self) -> dict[int, tuple[str, str]]:
        """The demo says it is ready (its logins, the last lines it prints once ``/readyz`` answers and
        before it starts watching its children), and beat has started (it writes its schedule file
        when it starts). Not the login page alone: it can answer before ``/readyz`` does, and a child
        that ends in between ends the demo's start, as it should."""
        wait_for(lambda: "(kept in" in self.log_path.read_text(errors="replace") or self.process.poll() is not None,
                 READY_SECONDS, "the demo to print its logins")
        assert self.process.poll() is None, self.log_path.read_text()
        assert serves(self.port), self.log_path.read_text()
        wait_for(lambda: any(self.schedule.glob("celerybeat-schedule*")), READY_SECONDS, "beat to start")
        tree = descendants(self.process.pid)
        assert len(tree) >= 3, tree
        self.seen.update(tree)
        return tree

    def kill_everything(self):
        """After the test, whatever happened: nothing of this demo is left running (orphans included)."""
        self.seen.update(descendants(self.process.pid))
        for pid, (started, _) in self.seen.items():
            if alive(pid, started):
                os.kill(pid, signal.SIGKILL)
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.log.close()


@pytest.fixture
def demo(demo_env, tmp_path):
    started = []

    def start(**options):
        started.append(Demo(demo_env, tmp_path / f"demo-{len(started)}.log", **options))
        return started[-1]

    yield start
    for each in started:
        each.kill_everything()


def assert_all_gone(demo: Demo, tree: dict[int, tuple[str, str]]):
    wait_for(lambda: not [pid for pid, (started, _) in tree.items() if alive(pid, started)], 30,
             "every child of the demo to end")
    wait_for(lambda: port_free(demo.port), 30, f"port {demo.port} to be free")


def test_the_demo_serves_with_gunicorn_not_runserver(demo):
    running = demo()
    tree = running.wait_ready()
    commands = [cmdline for _, cmdline in tree.values()]
    assert any("gunicorn" in c and "reviewer.wsgi" in c for c in commands), commands
    assert not any("runserver" in c for c in commands)
    assert any("celery -A reviewer beat" in c for c in commands)
    # A worker per queue (reviewer.celery.WORKERS): a flood of deliveries never delays a run.
    workers = sorted(c.partition(" -Q ")[2].split()[0] for c in commands if "celery -A reviewer worker" in c)
    assert workers == ["deliveries", "notifications,celery", "runs"], commands
    with urllib.request.urlopen(f"http://127.0.0.1:{running.port}/accounts/login/", timeout=10) as response:
        assert "script-src 'self'" in response.headers["Content-Security-Policy"]
    # The demo printed its URL once /readyz said so: the database, the migrations and the broker are there.
    with urllib.request.urlopen(f"http://127.0.0.1:{running.port}/readyz", timeout=10) as response:
        assert json.load(response)["checks"] == {"database": "ok", "migrations": "ok", "broker": "ok"}


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_to_the_demo_stops_every_child_and_frees_the_port(demo, signum):
    # Started as a background job of a script is (SIGINT ignored): Ctrl-C and `kill -INT` still stop it.
    running = demo(preexec_fn=sigint_ignored)
    tree = running.wait_ready()
    os.kill(running.process.pid, signum)  # SIGINT is what Ctrl-C sends (the children are in their own sessions)
    # A bound for a stuck stop, not a speed: the demo's own budget is STOP_SECONDS, then SIGKILL and up to
    # 5 s per child for its group to empty; a busy machine stretches every step of it.
    try:
        running.process.wait(timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the demo did not stop; still running: {descendants(running.process.pid)}\n"
                    f"its output:\n{running.log_path.read_text(errors='replace')[-3000:]}")
    assert_all_gone(running, tree)
    assert "Stopping" in running.log_path.read_text()


def test_a_killed_worker_is_started_again_and_takes_work(demo, demo_env):
    running = demo()
    tree = running.wait_ready()
    worker = next(pid for pid, (_, cmdline) in tree.items()
                  if "celery" in cmdline and " worker" in cmdline and " -Q runs " in cmdline
                  and processes()[pid][0] == running.process.pid)
    os.kill(worker, signal.SIGKILL)  # the runs' worker dies (OOM killer, a crash)

    def new_worker():
        return [pid for pid, (_, cmdline) in descendants(running.process.pid).items()
                if "celery -A reviewer worker" in cmdline and " -Q runs " in cmdline and pid != worker]

    try:
        wait_for(new_worker, 60, "the demo to start the worker again")
    except AssertionError as timed_out:
        printed = running.log_path.read_text(errors="replace")[-3000:]
        raise AssertionError(f"{timed_out}; the demo printed:\n{printed}") from None
    assert running.process.poll() is None
    worker_log = Path(demo_env["VAR_DIR"]) / "log" / "worker-runs.log"
    assert "demo] worker-runs ended (exit code -9); starting it again in" in worker_log.read_text()
    enqueued = subprocess.run([sys.executable, "manage.py", "run_pipeline", "reflection", "--goal", "Customer update",
                               "--incident", "inc_pay_2041", "--enqueue"], cwd=ROOT, env=demo_env,
                              capture_output=True, text=True, timeout=120)
    assert enqueued.returncode == 0, enqueued.stderr
    run_pk = json.loads(enqueued.stdout.strip().splitlines()[-1])["stored_run"]
    wait_for(lambda: run_status(demo_env, run_pk) in ("ok", "stopped"), READY_SECONDS, "the new worker to run it")
    assert serves(running.port)


def test_beat_verifies_the_ledger_as_the_demo_starts(demo, demo_env):
    # Not an hour later: the dashboard's badge has a result as soon as beat and a worker are up.
    with sqlite3.connect(demo_env["DATABASE_URL"].removeprefix("sqlite:///")) as db:
        db.execute("DELETE FROM reviewer_ledgerverification")
    running = demo()
    running.wait_ready()

    def verified():
        with sqlite3.connect(demo_env["DATABASE_URL"].removeprefix("sqlite:///")) as db:
            return db.execute("SELECT ok FROM reviewer_ledgerverification").fetchall()

    assert wait_for(verified, READY_SECONDS, "the ledger's first verification") == [(1,)]


def run_status(env, run_pk: int) -> str:
    with sqlite3.connect(env["DATABASE_URL"].removeprefix("sqlite:///")) as db:
        return db.execute("SELECT status FROM agents_run WHERE id = ?", (run_pk,)).fetchone()[0]


def test_the_demo_prints_the_url_and_logins_last_and_the_servers_log_to_files(demo, demo_env, tmp_path):
    running = demo(key_file=tmp_path / "secret-key")
    running.wait_ready()
    log_dir = Path(demo_env["VAR_DIR"]) / "log"
    # The worker's banner is written (to its file) once it is up; gunicorn logs warnings only.
    wait_for(lambda: "runs@" in (log_dir / "worker-runs.log").read_text(errors="replace"), READY_SECONDS,
             "the runs' worker's banner")
    assert (log_dir / "web.log").exists() and (log_dir / "beat.log").exists()
    wait_for(lambda: "(kept in" in running.log_path.read_text(), 30, "the logins")

    output = running.log_path.read_text()
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    assert lines[-1].startswith("(kept in") and lines[-1].endswith("demo-logins.json)")
    assert [line.split()[0] for line in lines[-5:-1]] == ["lead", "lead2", "ops", "admin"]
    assert lines[-9] == f"Open http://127.0.0.1:{running.port}/  (admin: http://127.0.0.1:{running.port}/admin/)"
    assert "celery@" not in output and "[tasks]" not in output
    assert not [line for line in lines if line.startswith("{")], output  # no log line among what it prints

    # The token hint, pasted as printed into a new shell elsewhere that has none of the demo's variables.
    token_line, curl_line = lines[-7], lines[-6]
    assert token_line.startswith("TOKEN=$(") and curl_line.startswith("curl "), output
    answer = newcomer_shell(f"{token_line}\n{curl_line} --fail --silent --show-error", tmp_path)
    assert answer.returncode == 0, answer.stderr
    assert isinstance(json.loads(answer.stdout), list), answer.stdout


def newcomer_shell(script: str, cwd: Path) -> subprocess.CompletedProcess:
    """``script`` in bash, in another folder, with only PATH and HOME: a new terminal's shell."""
    return subprocess.run(["bash", "-c", "set -e\n" + script], cwd=cwd, capture_output=True, text=True,
                          env={"PATH": os.environ["PATH"], "HOME": str(cwd)}, timeout=120)


def test_the_first_start_prints_no_log_line_among_its_own(first_setup):
    # The first start runs the demo pipelines; what they log (a library's warning, a task sent) goes
    # to var/log/demo.log, not between the lines the demo prints.
    env, output = first_setup
    assert "Demo data ready: 8 new demo runs" in output, output
    assert not [line for line in output.splitlines() if line.strip().startswith("{")], output
    assert (Path(env["VAR_DIR"]) / "log" / "demo.log").exists()


def test_the_token_hint_of_a_demo_started_with_debug_works_as_printed(demo_env, tmp_path):
    # `DEBUG=1 python manage.py demo`: no key of its own; the hint's command needs DEBUG=1 too.
    env = {k: v for k, v in demo_env.items() if k != "SECRET_KEY"} | {"DEBUG": "1"}
    out = subprocess.run([sys.executable, "manage.py", "demo", "--setup-only"], cwd=ROOT, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    assert out.returncode == 0, out.stdout
    token_line = next(line.strip() for line in out.stdout.splitlines() if line.strip().startswith("TOKEN=$("))
    answer = newcomer_shell(f'{token_line}\necho "$TOKEN"', tmp_path)
    assert answer.returncode == 0, answer.stderr
    assert answer.stdout.strip().startswith("gr_"), (answer.stdout, answer.stderr)

"""Private PostgreSQL and Redis servers that a fault drill may stop and restart, and the product's
processes (worker, beat, web) started against them.

The servers of the test pass are shared by every test of the pass: a drill that stops one would stop
the other tests with it. A drill therefore starts its own, on free loopback ports in its own folder,
and drives the product only through processes and SQL: it seeds with :func:`django_call` (a Python
snippet run in a child process with the product's settings) and reads the outcome the same way.

    pg = PostgresServer().start()
    redis = RedisServer(tmp_path / "redis").start()
    env = product_env(tmp_path, pg.url(), redis.url())
    migrate(env)                   # from PostgresServer(template=...): nothing left to do
    ...
    pg.stop(); pg.start()          # the database goes away and comes back on the same port
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).parents[1]


def missing(message: str):
    """A service a test needs is not installed: a skip that says so, or in CI (which installs every
    one: .ci/test) a failure."""
    import pytest

    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message, pytrace=False)
    pytest.skip(message)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def postgres_bin() -> Path | None:
    """The newest installed PostgreSQL's bin folder (Debian's layout), or None."""
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]))
    return found[-1].parent if found else None


def _as_postgres() -> list[str]:
    """initdb and postgres refuse to run as root: as root they run as the ``postgres`` user."""
    return ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []


def _wait_for_port(port: int, timeout: float, what: str, process: subprocess.Popen | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"{what} exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"{what} did not listen on 127.0.0.1:{port} within {timeout}s")


class PostgresServer:
    """A throwaway PostgreSQL cluster with a ``gated_review`` database, trust auth, on loopback.
    ``PostgresServer(template=migrated_cluster().data)`` starts from a copy of a cluster whose database is
    migrated already, instead of initdb, createdb and the migrations."""

    def __init__(self, port: int | None = None, template: Path | None = None):
        self.bin = postgres_bin()
        if self.bin is None:
            raise RuntimeError("no PostgreSQL server installed (apt-get install postgresql)")
        # A folder of its own in /tmp: as root the server runs as ``postgres``, which cannot enter
        # pytest's private temporary folders.
        self.folder, self.port = Path(tempfile.mkdtemp(prefix="gated-review-pg-")), port or free_port()
        self.data = self.folder / "data"
        self.template = template

    def url(self, database: str = "gated_review") -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, *args: str) -> None:
        result = subprocess.run([*_as_postgres(), *args], capture_output=True, text=True, timeout=120)
        if result.returncode:
            raise RuntimeError(f"{args[0]} failed: {result.stdout[-2000:]}{result.stderr[-2000:]}")

    def start(self) -> PostgresServer:
        if not self.data.exists():
            self.folder.mkdir(parents=True, exist_ok=True)
            if os.geteuid() == 0:
                shutil.chown(self.folder, "postgres")
            if self.template is not None:
                self._run("cp", "-a", str(self.template), str(self.data))  # as postgres: its files stay its own
                self._pg_ctl_start()
                return self
            self._run(str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres", "-A", "trust")
            self._pg_ctl_start()
            self._run(str(self.bin / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
                      "gated_review")
        else:
            self._pg_ctl_start()
        return self

    def _pg_ctl_start(self) -> None:
        # fsync off: a drill's data need not survive a power cut, and the machine is shared.
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.folder / "postgres.log"), "-w",
                  "-o", f"-h 127.0.0.1 -p {self.port} -k {self.folder} -F", "start")

    def stop(self, mode: str = "fast") -> None:
        """``fast``: disconnects every client and shuts down cleanly (a restart); ``immediate``: a crash."""
        if (self.data / "postmaster.pid").exists():
            self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "stop")

    def restart(self, mode: str = "fast") -> None:
        self.stop(mode)
        self.start()

    def remove(self) -> None:
        self.stop("immediate")
        shutil.rmtree(self.folder, ignore_errors=True)

    def log(self) -> str:
        path = self.folder / "postgres.log"
        return path.read_text(errors="replace") if path.exists() else ""


def migrated_cluster() -> PostgresServer:
    """A stopped cluster whose ``gated_review`` database has every migration: each drill's server
    starts from a copy of its data folder (``PostgresServer(template=...)``) instead of initdb and the
    migrations, which cost each drill 10-40 s of a busy machine. ``tests/conftest.py`` makes one per
    test process and removes it at the end."""
    server = PostgresServer().start()
    try:
        migrate(product_env(server.folder, server.url(), "memory://"))
    finally:
        server.stop()
    return server


class RedisServer:
    """A throwaway Redis on loopback without persistence (a restart empties it, as a crash would)."""

    def __init__(self, folder: Path, port: int | None = None):
        self.executable = shutil.which("redis-server")
        if self.executable is None:
            raise RuntimeError("no redis-server installed (apt-get install redis-server)")
        self.folder, self.port = folder, port or free_port()
        self.process: subprocess.Popen | None = None

    def url(self, database: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{database}"

    def start(self) -> RedisServer:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.log_file = open(self.folder / "redis.log", "ab")
        self.process = subprocess.Popen(
            [self.executable, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "", "--appendonly", "no",
             "--dir", str(self.folder)], stdout=self.log_file, stderr=subprocess.STDOUT)
        _wait_for_port(self.port, 20, "redis-server", self.process)
        return self

    def stop(self, hard: bool = False) -> None:
        """SIGTERM (a graceful shutdown), or SIGKILL when ``hard``."""
        if self.process and self.process.poll() is None:
            self.process.kill() if hard else self.process.terminate()
            self.process.wait(timeout=20)
        if self.process:
            self.log_file.close()

    def restart(self, hard: bool = False) -> None:
        self.stop(hard)
        self.start()


def product_env(folder: Path, database_url: str, broker_url: str, **extra: str) -> dict[str, str]:
    """The environment of the product's processes for a drill: the test settings (their key, DEBUG
    off), the drill's own database, broker and var folder, and no model endpoint of the caller's."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "LLM_", "PYTEST_XDIST", "DATABASE_", "CELERY_", "DELIVERY_ANSWERS"))}
    env.update(DJANGO_SETTINGS_MODULE="reviewer.test_settings", DATABASE_URL=database_url,
               CELERY_BROKER_URL=broker_url, TEST_VAR_DIR=str(folder / "var"), PYTHONUNBUFFERED="1", **extra)
    return env


def django_call(env: dict[str, str], code: str, timeout: float = 120):
    """Run ``code`` in a child process with the product set up (``django.setup()``); the snippet
    assigns ``result``, which comes back through JSON."""
    script = "import django, json\ndjango.setup()\nresult = None\n" + code + \
        "\nprint('\\nRESULT:' + json.dumps(result, default=str))\n"
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)
    if done.returncode:
        raise RuntimeError(f"django_call failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.rpartition("\nRESULT:")[2])


def migrate(env: dict[str, str]) -> None:
    done = subprocess.run([sys.executable, "manage.py", "migrate", "--no-input", "-v", "0"], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    if done.returncode:
        raise RuntimeError(f"migrate failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")

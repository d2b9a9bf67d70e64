"""The demo's receiver (reviewer/demo/receiver.py), a real process on loopback: it answers 200 to what
the demo's webhook, Slack and notification channels post and logs each request for people to read."""

import json
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.factories import wait_for

ROOT = Path(__file__).parents[3]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def accepts(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def receiver(tmp_path):
    port, log = free_port(), tmp_path / "demo-receiver.log"
    process = subprocess.Popen([sys.executable, "-m", "reviewer.demo.receiver", "--port", str(port), "--log", str(log)],
                               cwd=ROOT)
    wait_for(lambda: accepts(port), message=f"the receiver to listen on {port}")
    yield f"http://127.0.0.1:{port}", log
    process.terminate()
    process.wait(timeout=10)


def test_the_receiver_answers_ok_and_logs_the_signed_body_it_got(receiver):
    url, log = receiver
    body = json.dumps({"incident": "inc_pay_2041", "text": "We are investigating failing payments."}).encode()
    request = urllib.request.Request(f"{url}/webhook", data=body, method="POST", headers={
        "Content-Type": "application/json", "X-Signature": "t=1,v2=abc", "Idempotency-Key": "k-1"})

    with urllib.request.urlopen(request, timeout=10) as response:
        assert (response.status, response.read()) == (200, b"ok")

    logged = log.read_text()
    assert "POST /webhook" in logged and "X-Signature: t=1,v2=abc" in logged and "Idempotency-Key: k-1" in logged
    assert '"text": "We are investigating failing payments."' in logged  # the JSON body, pretty-printed

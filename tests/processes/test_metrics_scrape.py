"""A real Prometheus scrapes the product's /metrics, with its token, and what it stored is what the
runs recorded, worker-made runs included: the figures of other processes reach the endpoint through
the database."""

import json
import shutil
import socket
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from django.db.models import Count

from agents.models import Run
from agents.tasks import start_run
from tests.factories import wait_for
from tests.services import missing

pytestmark = pytest.mark.worker

TOKEN = "scrape-token-for-prometheus"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Prometheus:
    """Debian's prometheus binary on loopback, scraping one target every second."""

    def __init__(self, folder: Path, target: str):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        config = folder / "prometheus.yml"
        # JSON is YAML: the product's /metrics, with its bearer token, once a second.
        config.write_text(json.dumps({
            "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
            "scrape_configs": [{"job_name": "gated_review", "metrics_path": "/metrics",
                                "authorization": {"type": "Bearer", "credentials": TOKEN},
                                "static_configs": [{"targets": [target]}]}]}))
        self.log_path = folder / "prometheus.log"
        self.log = open(self.log_path, "wb")
        self.process = subprocess.Popen(
            ["prometheus", f"--config.file={config}", f"--storage.tsdb.path={folder / 'data'}",
             f"--web.listen-address=127.0.0.1:{self.port}"],
            stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def get(self, path: str, **params) -> dict:
        url = f"{self.url}{path}?{urllib.parse.urlencode(params)}"
        with urllib.request.urlopen(url, timeout=5) as response:
            return json.load(response)

    def ready(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"prometheus ended:\n{self.log_path.read_text(errors='replace')[-3000:]}")
        try:
            with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as response:
                return response.status == 200
        except OSError:
            return False

    def query(self, expression: str) -> dict:
        """{labels other than job and instance: value} of an instant query."""
        body = self.get("/api/v1/query", query=expression)
        assert body["status"] == "success", body
        return {tuple(sorted((k, v) for k, v in item["metric"].items() if k not in ("job", "instance", "__name__"))):
                float(item["value"][1]) for item in body["data"]["result"]}

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)
        self.log.close()


@pytest.fixture
def prometheus(live_server, settings, tmp_path):
    """Prometheus scraping the live server's /metrics with the token it requires."""
    if shutil.which("prometheus") is None:
        missing("needs Prometheus: apt-get install prometheus (the test command installs it)")
    settings.METRICS_TOKEN = TOKEN
    server = Prometheus(tmp_path, urllib.parse.urlsplit(live_server.url).netloc)
    try:
        wait_for(server.ready, timeout=60, message="Prometheus to start")
        yield server
    finally:
        server.stop()


def recorded_runs() -> dict:
    rows = Run.objects.exclude(status__in=Run.IN_FLIGHT).values("pipeline", "status", "stop_reason").annotate(
        n=Count("id"))
    return {(("pipeline", r["pipeline"]), ("status", r["status"]), ("stop_reason", r["stop_reason"])): float(r["n"])
            for r in rows}


def test_prometheus_reads_back_the_runs_a_worker_made_by_pipeline_and_stop_reason(
        prometheus, start_worker, demo_data):
    start_worker(LLM_BACKEND="offline")
    made = [start_run(pipeline="routing", goal="refund user_id=42")[0],
            start_run(pipeline="routing", goal="refund user_id=42")[0],
            start_run(pipeline="reflection", goal="Customer update", incident=demo_data["inc_pay_2041"])[0]]
    wait_for(lambda: not Run.objects.filter(pk__in=[r.pk for r in made], status__in=Run.IN_FLIGHT).exists(),
             message="the worker to finish the runs")
    expected = recorded_runs()
    assert sum(expected.values()) == 3 and all(key[0] in (("pipeline", "routing"), ("pipeline", "reflection"))
                                               for key in expected)
    # The next scrape after the runs ended carries them all.
    seen = wait_for(lambda: (found := prometheus.query("gated_review_runs_total")) == expected and found,
                    timeout=30, message=f"Prometheus to report {expected}")
    assert seen == expected
    assert prometheus.query("gated_review_runs_queued") == {(): 0.0}
    scraped = prometheus.get("/api/v1/targets")["data"]["activeTargets"]
    assert [t["health"] for t in scraped] == ["up"]

"""The systemd units of docs/deploy/ start what docs/deploy.md says, and start it again whenever it ends."""

import configparser
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from reviewer.celery import WORKERS, worker_command
from tests.services import missing

DEPLOY = Path(__file__).parents[1] / "docs" / "deploy"
WORKER_UNITS = {name: f"gated-review-worker-{name}.service" for name in WORKERS}  # one per worker of the layout
UNITS = {"web": "gated-review-web.service", **{f"worker-{n}": unit for n, unit in WORKER_UNITS.items()},
         "beat": "gated-review-beat.service"}


def unit(name: str) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # systemd's keys are case-sensitive
    parser.read(DEPLOY / UNITS[name])
    return parser


@pytest.mark.parametrize("name", UNITS)
def test_every_process_is_started_again_whenever_it_ends(name):
    service = unit(name)["Service"]
    assert service["Restart"] == "always"
    assert service["EnvironmentFile"] == "/etc/gated-review/env"
    assert "StartLimitBurst" in unit(name)["Unit"]


def test_the_units_run_the_documented_commands():
    docs = (DEPLOY.parent / "deploy.md").read_text()
    assert "-c python:reviewer.gunicorn_conf" in unit("web")["Service"]["ExecStart"]
    for name in WORKERS:  # each worker of reviewer.celery.WORKERS, as its command says (%%h: systemd's escape)
        command = unit(f"worker-{name}")["Service"]["ExecStart"].replace("%%", "%")
        assert f"-m {' '.join(worker_command(name))} --loglevel INFO" in command
    assert "celery -A reviewer beat" in unit("beat")["Service"]["ExecStart"]
    for filename in UNITS.values():
        assert f"(deploy/{filename})" in docs


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_systemd_finds_nothing_wrong_but_the_paths_of_this_machine(tmp_path):
    for filename in UNITS.values():
        shutil.copy(DEPLOY / filename, tmp_path / filename)
    done = subprocess.run(["systemd-analyze", "verify", "--man=no", *(f"./{f}" for f in UNITS.values())],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    problems = [line for line in (done.stdout + done.stderr).splitlines()
                if line.strip() and "is not executable: No such file or directory" not in line]
    assert problems == []


# -- the monitoring samples: Prometheus alerting rules and a Grafana dashboard ----------------------

METRIC_NAME = re.compile(r"\bgated_review_[a-z_]+\b")


def alert_rules() -> list[dict]:
    groups = yaml.safe_load((DEPLOY / "prometheus-alerts.yml").read_text())["groups"]
    return [rule for group in groups for rule in group["rules"]]


def dashboard_expressions() -> list[str]:
    dashboard = json.loads((DEPLOY / "grafana-dashboard.json").read_text())
    return [target["expr"] for panel in dashboard["panels"] for target in panel["targets"]]


def exposed_names() -> set[str]:
    """Every sample name /metrics can carry (a counter's _total, a histogram's _bucket, _count and _sum)."""
    from prometheus_client.parser import text_string_to_metric_families

    from reviewer.operations.metrics import exposition

    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum"), "gauge": ("",)}
    return {family.name + suffix for family in text_string_to_metric_families(exposition().decode())
            for suffix in suffixes[family.type]}


def test_the_alerts_and_the_dashboard_use_only_series_the_endpoint_exposes(db):
    rules, expressions = alert_rules(), dashboard_expressions()
    assert {rule["alert"] for rule in rules} >= {
        "GatedReviewEscalationWaitingTooLong", "GatedReviewDeadLetters", "GatedReviewCircuitBreakerOpen",
        "GatedReviewRunsFailing", "GatedReviewQueueGrowing"}
    used = {name for text in [r["expr"] for r in rules] + expressions for name in METRIC_NAME.findall(text)}
    assert used and used <= exposed_names(), used - exposed_names()
    assert len(expressions) >= 15


def test_promtool_accepts_the_alert_rules_and_every_dashboard_query(tmp_path):
    if shutil.which("promtool") is None:
        missing("promtool is not installed: apt-get install prometheus (the test command installs it)")
    # The dashboard's queries as recording rules, so that promtool parses each one.
    recorded = tmp_path / "dashboard-queries.yml"
    recorded.write_text(json.dumps({"groups": [{"name": "dashboard", "rules": [
        {"record": f"dashboard:query_{i}", "expr": expr} for i, expr in enumerate(dashboard_expressions())]}]}))
    done = subprocess.run(["promtool", "check", "rules", str(DEPLOY / "prometheus-alerts.yml"), str(recorded)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr

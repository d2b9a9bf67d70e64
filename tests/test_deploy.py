"""The systemd units of docs/deploy/ start what docs/deploy.md says, and start it again whenever it ends."""

import configparser
import shutil
import subprocess
from pathlib import Path

import pytest

DEPLOY = Path(__file__).parents[1] / "docs" / "deploy"
UNITS = {"web": "gated-review-web.service", "worker": "gated-review-worker.service",
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
    assert "celery -A reviewer worker --pool threads" in unit("worker")["Service"]["ExecStart"]
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

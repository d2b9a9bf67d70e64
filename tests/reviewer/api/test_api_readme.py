"""The API walk-through of docs/api.md, run as written (bash, curl, jq and the api_token command)
against a live test server; only the address is the test server's instead of the demo's."""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from agents.core.llm.offline import OfflineModel
from agents.models import Incident, Run
from agents.tasks import run_now
from reviewer.models import ApiToken, Decision
from tests.factories import database_url

ROOT = Path(__file__).parents[3]


def api_blocks() -> list[str]:
    page = (ROOT / "docs" / "api.md").read_text()
    section = page.split("\n## Walk-through\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.*?)```", section, re.DOTALL)


def test_the_readme_has_the_four_api_examples():
    token, incident, start, decide = api_blocks()
    assert "api_token" in token and "PUT" in incident and "Idempotency-Key" in start and "decision" in decide


@pytest.mark.skipif(not (shutil.which("curl") and shutil.which("jq")), reason="needs curl and jq")
def test_the_readme_api_examples_work_against_a_live_server(live_server, users, tmp_path):
    """As the demo has them: the admin is a policy admin, not a superuser; each step's token is the
    role's that may do it. The token command runs with the production settings, which refuse to
    start without the key file the walk-through names."""
    users.admin.is_superuser = False
    users.admin.save()
    key_file = tmp_path / "secret-key"
    key_file.write_text("a-key-for-this-test-only-0123456789-abcdefghijklmnopqrstuvwxyz\n")
    token, incident, start, decide = api_blocks()
    token = token.replace("http://127.0.0.1:8000", live_server.url).replace("var/secret-key", str(key_file))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SECRET_KEY", "DJANGO_"))}
    env.update(DJANGO_SETTINGS_MODULE="reviewer.settings", DATABASE_URL=database_url(), VAR_DIR=str(tmp_path))

    def bash(*blocks: str) -> str:
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", "\n".join(blocks)], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    made = json.loads(bash(token, incident))
    assert made["incident_id"] == "inc_db_7" and made["facts"][0]["shown"] == "45 minutes"
    assert Incident.objects.get(incident_id="inc_db_7").versions.get().created_by == users.admin

    started = json.loads(bash(token, start))
    again = json.loads(bash(token, start))
    assert started["status"] == "queued" and again["run_id"] == started["run_id"] and Run.objects.count() == 1
    assert Run.objects.get().triggered_by == users.ops

    run_now(int(started["run_id"]), llm=OfflineModel())  # what the demo's worker does
    assert Run.objects.get().stop_reason == "policy_escalation"

    decided = json.loads(bash(token, decide))
    assert decided["status"] == "rejected" and decided["decided_by"] == "lead"
    assert Decision.objects.get().note == "Credits are not approved."
    assert {t.user.username for t in ApiToken.objects.all()} == {"admin", "ops", "lead"}

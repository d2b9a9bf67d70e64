"""House rules that keep the core what SPEC §2 says it is."""

import ast
import re
import subprocess
import sys
from pathlib import Path

from agents.stops import STOP_REASONS, explain, opens_escalation

ROOT = Path(__file__).parents[2]
GLUE = {"apps.py", "admin.py", "models.py", "tasks.py", "observer.py", "forms.py", "policies.py", "store.py"}
GLUE_DIRS = {"management", "migrations"}


def core_modules():
    for path in sorted((ROOT / "agents").rglob("*.py")):
        parts = path.relative_to(ROOT / "agents").parts
        if parts[0] in GLUE_DIRS or path.name in GLUE:
            continue
        yield path


def test_core_modules_import_no_django():
    offenders = []
    for path in core_modules():
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            offenders += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] == "django"]
    assert offenders == []


def test_running_every_pipeline_loads_no_django_module():
    code = (
        "import sys, json; from agents.pipelines import run_pipeline; from agents.policy import default_policy;"
        "from agents.llm.offline import OfflineModel;"
        "ctx = json.load(open('agents/fixtures/demo_context.json'));"
        "[run_pipeline(n, goal='refund user_id=42' if n == 'routing' else 'Customer update', context=ctx,"
        " policy=default_policy(n), llm=OfflineModel()) for n in ('reflection', 'self_critique', 'routing')];"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'django'))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_stop_reason_of_the_contract_is_asserted_by_some_test():
    """Each name in the catalogue (SPEC §3/§5) appears in a test file, so the list is easy to check."""
    tests = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("test_*.py") if p.name != Path(__file__).name)
    missing = []
    for name in STOP_REASONS:
        probe = name.split("<", 1)[0]  # "route_denied:<target>" -> "route_denied:"
        if f'"{probe}' not in tests:
            missing.append(name)
    assert missing == []


def test_every_stop_reason_raised_in_the_core_is_catalogued():
    raised = set()
    for path in core_modules():
        raised |= set(re.findall(r'Stop\(\s*f?"([a-z_]+(?::[a-z_]+)?)', path.read_text()))
    exact = {name for name in STOP_REASONS if "<" not in name}
    families = tuple(name.split("<", 1)[0] for name in STOP_REASONS if "<" in name)  # "route_denied:"
    assert {r for r in raised if r not in exact and not r.startswith(families) and r + ":" not in families} == set()


def test_explanations_match_detail_suffixes_and_escalation_rules():
    assert explain("route_denied:billing_specialist") == STOP_REASONS["route_denied:<target>"]
    assert explain("no_such_reason") == "Unknown stop reason."
    assert opens_escalation("policy_escalation") and opens_escalation("patch_violation:no_new_facts")
    assert opens_escalation("invalid_answer:restricted_claims") and not opens_escalation("invalid_answer:too_long")
    assert not opens_escalation("llm_timeout")

"""The house rules of the README's architecture page, one test each.

1. The core (``agents/core/``) is plain Python: it imports no Django, no Celery, no reviewer and none
   of the agents app's Django modules.
2. One direction between the apps: reviewer imports agents, agents never imports reviewer.
3. Views only orchestrate: no view module imports another.
4. Nothing outside the core imports a private (``_name``) of the core.
5. The test doubles (``agents/testing/``) are for tests and benchmarks: nothing else under
   ``agents/`` or ``reviewer/`` imports them.
"""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]


def imports(folder: str):
    """(file, imported module, imported names) for every import under ``folder``."""
    for path in sorted((ROOT / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield path.relative_to(ROOT).as_posix(), alias.name, []
            elif isinstance(node, ast.ImportFrom) and node.module:
                yield path.relative_to(ROOT).as_posix(), node.module, [a.name for a in node.names]


def under(module: str, *packages: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def test_the_core_imports_no_framework_and_nothing_of_the_app_around_it():
    offenders = [f"{path}: {module}" for path, module, _ in imports("agents/core")
                 if under(module, "django", "celery", "reviewer")
                 or (under(module, "agents") and not under(module, "agents.core"))]
    assert offenders == []


def test_the_agents_app_never_imports_the_reviewer_app():
    offenders = [f"{path}: {module}" for path, module, _ in imports("agents") if under(module, "reviewer")]
    assert offenders == []


def test_no_view_module_imports_another():
    offenders = [
        f"{path}: {module}" for path, module, _ in imports("reviewer/views") if under(module, "reviewer.views")
    ]
    assert offenders == []


def test_nothing_outside_the_core_imports_a_private_name_of_the_core():
    offenders = [f"{path}: {module}.{name}"
                 for folder in ("agents", "reviewer", "bench", "tests")
                 for path, module, names in imports(folder)
                 if not path.startswith("agents/core/") and under(module, "agents.core")
                 for name in names if name.startswith("_")]
    assert offenders == []


def test_production_code_never_imports_the_test_doubles():
    offenders = [f"{path}: {module}" for folder in ("agents", "reviewer")
                 for path, module, names in imports(folder)
                 if not path.startswith("agents/testing/")
                 and (under(module, "agents.testing") or (module == "agents" and "testing" in names))]
    assert offenders == []


def test_running_every_pipeline_loads_no_django_module():
    code = (
        "import sys, json; from agents.core.pipelines import run_pipeline;"
        "from agents.core.policy import default_policy;"
        "from agents.core.llm.offline import OfflineModel;"
        "ctx = json.load(open('agents/fixtures/demo_context.json'));"
        "[run_pipeline(n, goal='refund user_id=42' if n == 'routing' else 'Customer update', context=ctx,"
        " policy=default_policy(n), llm=OfflineModel()) for n in ('reflection', 'self_critique', 'routing')];"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'celery', 'reviewer')))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_template_lines_stay_readable():
    """Templates keep lines to 120 characters, and a {# comment #} closes on its own line (Django's
    one-line comments: an unclosed one is shown to the user as text)."""
    offenders = [f"{path.relative_to(ROOT)}:{number}"
                 for path in sorted((ROOT / "templates").rglob("*.html"))
                 for number, line in enumerate(path.read_text().splitlines(), 1)
                 if len(line) > 120 or ("{#" in line and "#}" not in line)]
    assert offenders == []

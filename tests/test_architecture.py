"""The house rules of docs/architecture.md ("One direction"), one test each.

1. The core (``agents/core/``) is plain Python: it imports no Django, no Celery, no reviewer and none
   of the agents app's Django modules.
2. One direction between the apps: reviewer imports agents, agents never imports reviewer.
3. Inside reviewer, the concerns form a one-way chain: api -> learning -> desk -> alerts -> outbox -> ledger; status,
   accounts and operations read the models only, and the project's wiring imports no concern except
   through its doors. reviewer/'s root holds the wiring only. In no package does a module import
   another in a circle.
4. A concern enqueues tasks by name: only the wiring imports a tasks module.
5. Views only orchestrate: no view module imports another.
6. Nothing outside the core imports a private (``_name``) of the core.
7. The test doubles (``agents/testing/``) are for tests and benchmarks: nothing else under
   ``agents/`` or ``reviewer/`` imports them.
8. No module binds one name twice at its top level: the second binding silently replaces the first for
   every function that reads it, the first's readers included.
"""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]


def imports(folder: str):
    """(file, imported module, imported names) for every import under ``folder``, inside functions
    too; a relative import (``from .celery import app``) is read as the module it names."""
    for path in sorted((ROOT / folder).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield path.relative_to(ROOT).as_posix(), alias.name, []
            elif isinstance(node, ast.ImportFrom) and (node.module or node.level):
                yield path.relative_to(ROOT).as_posix(), absolute(path, node), [a.name for a in node.names]


def absolute(path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module
    package = path.relative_to(ROOT).parent.parts
    base = package[: len(package) - node.level + 1]
    return ".".join([*base, *([node.module] if node.module else [])])


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


# Each concern of reviewer/ with the concerns it must not import: the chain api -> learning -> desk -> alerts ->
# outbox -> ledger, read from the bottom up. The ledger is at the bottom because every concern above
# records into it (a decision, a publication, a breach, an export) inside its own transaction; it
# imports only the models. Beside the chain, reading the models only and imported by the doors only:
# status (the public page), accounts (signing in, single sign-on, the lockout) and operations
# (metrics, health checks, logs, error pages, the broker, the web server's worker). demo seeds data.
CHAIN = ("api", "learning", "desk", "alerts", "outbox", "ledger")
SIDES = ("status", "accounts", "operations")
CONCERNS = (*CHAIN, *SIDES, "demo")
FORBIDDEN = {
    **{concern: (*CHAIN[:CHAIN.index(concern)], *SIDES, "demo") for concern in CHAIN},
    **{side: tuple(c for c in CONCERNS if c != side) for side in SIDES},
    "demo": ("api", *SIDES),
}
# What a side concern may import of reviewer/ besides itself: the models (and, for accounts, the roles
# that single sign-on gives; for status, the role check of its staff-only internal page), no other
# module of the wiring or of the concerns.
SIDE_READS = {"status": ("reviewer.models", "reviewer.permissions"), "operations": ("reviewer.models",),
              "accounts": ("reviewer.models", "reviewer.roles")}
# The project's wiring at reviewer/'s root that may import concerns: the doors (URLs, admin, template
# tags, commands, the middleware that answers the probes and gives each request its id) and the app's
# ready(), which connects signals and registers the tasks.
DOORS = ("reviewer/urls.py", "reviewer/admin/", "reviewer/apps.py", "reviewer/middleware.py", "reviewer/templatetags/",
         "reviewer/management/")
# The one import of a concern by the models: a delivery channel's clean() checks its destination's
# name against the operator's allowlist, a module that imports nothing of the project (checked below).
MODELS_READ = {("reviewer/models/outbox.py", "reviewer.outbox.destinations")}
# reviewer/'s root: the project's wiring (settings, URLs, the WSGI and Celery apps, middleware, roles
# and permissions, startup, gunicorn's configuration) and the packages Django looks for in an app
# (models, admin, migrations, management commands, template tags); everything else is a concern's.
ROOT_MODULES = {"__init__.py", "apps.py", "celery.py", "gunicorn_conf.py", "middleware.py", "permissions.py",
                "roles.py", "settings.py", "startup.py", "test_settings.py", "urls.py", "wsgi.py"}
ROOT_PACKAGES = {"models", "admin", "migrations", "management", "templatetags"}


def concern_of(path_or_module: str) -> str | None:
    parts = path_or_module.removesuffix(".py").replace("/", ".").split(".")
    return parts[1] if len(parts) >= 2 and parts[0] == "reviewer" and parts[1] in CONCERNS else None


def test_each_concern_of_reviewer_imports_only_the_concerns_below_it():
    offenders = [f"{path}: {module}" for path, module, _ in imports("reviewer")
                 if (concern := concern_of(path)) and concern_of(module) in FORBIDDEN[concern]]
    assert offenders == []


def test_the_wiring_of_reviewer_imports_no_concern_except_through_its_doors():
    offenders = [f"{path}: {module}" for path, module, _ in imports("reviewer")
                 if concern_of(path) is None and concern_of(module) and not path.startswith(DOORS)
                 and (path, module) not in MODELS_READ]
    assert offenders == []


def test_what_the_models_read_of_a_concern_imports_nothing_of_the_project():
    """Nothing but the core, which is plain Python below every app (the grammar of declarations)."""
    for _, module in MODELS_READ:
        path = module.replace(".", "/") + ".py"
        imported = [m for p, m, _ in imports(path.rsplit("/", 1)[0]) if p == path]
        assert imported and [m for m in imported if under(m, "reviewer", "agents", "django", "celery")
                             and not under(m, "agents.core")] == []


def test_the_side_concerns_read_the_models_only():
    """status, accounts and operations import of reviewer/ only themselves and the models (accounts the
    roles too): no concern, and no other module of the wiring."""
    offenders = [f"{path}: {target}" for side, reads in SIDE_READS.items()
                 for path, module, names in imports(f"reviewer/{side}")
                 for target in ([f"{module}.{name}" for name in names] if module == "reviewer" else [module])
                 if under(target, "reviewer") and not under(target, f"reviewer.{side}", *reads)]
    assert offenders == []


def test_the_root_of_reviewer_holds_only_the_wiring():
    """The concerns' models, admin and views live in the concerns (or in models/ and admin/, by
    concern); the root counts at most 16 modules: its .py files besides __init__.py, and its packages
    that are not concerns."""
    folder = ROOT / "reviewer"
    assert {p.name for p in folder.glob("*.py")} == ROOT_MODULES
    assert {p.parent.name for p in folder.glob("*/__init__.py")} == ROOT_PACKAGES | set(CONCERNS)
    assert {p.name for p in folder.iterdir() if p.is_dir() and p.name != "__pycache__"} == ROOT_PACKAGES | set(CONCERNS)
    assert len(ROOT_MODULES - {"__init__.py"}) + len(ROOT_PACKAGES) <= 16


def test_the_root_urls_include_each_concerns_urls():
    """reviewer/urls.py names no view: each path includes a concern's urls.py (or the admin's)."""
    tree = ast.parse((ROOT / "reviewer" / "urls.py").read_text())
    paths = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "path"]
    assert paths
    included = []
    for call in paths:
        target = call.args[1]
        if isinstance(target, ast.Call) and getattr(target.func, "id", "") == "include":
            included.append(target.args[0].value)
        else:
            assert ast.unparse(target) == "admin.site.urls"
    assert included == [f"reviewer.{c}.urls" for c in ("desk", "status", "accounts", "api", "operations")]


def module_name(path: str) -> str:
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def import_graph(folder: str) -> dict[str, set[str]]:
    """Module -> the modules of ``folder`` it imports, at the top or inside a function."""
    package = folder.replace("/", ".")
    known = {module_name(p.relative_to(ROOT).as_posix()) for p in (ROOT / folder).rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in known}
    for path, module, names in imports(folder):
        if under(module, package):
            source = module_name(path)
            # "from package import module" imports that module; the package's own names only when some
            # imported name is not a module of it.
            submodules = {f"{module}.{name}" for name in names} & known
            targets = submodules | ({module} if len(submodules) < len(names) or not names else set())
            # A package's __init__ importing its own submodules puts the package together: no circle.
            graph[source] |= {t for t in targets if t in known and t != source and not t.startswith(source + ".")}
    return graph


def circles(graph: dict[str, set[str]]) -> list[str]:
    found, state = [], {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = "open"
        for target in sorted(graph[node]):
            if state.get(target) == "open":
                found.append(" -> ".join(stack[stack.index(target):] + [node, target]) if target in stack
                             else f"{node} -> {target}")
            elif target not in state:
                visit(target, stack + [node])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    return found


# Every package of the project: each folder at the root that holds an __init__.py.
PACKAGES = sorted(path.parent.name for path in ROOT.glob("*/__init__.py"))


def test_no_module_of_any_package_imports_itself_through_others():
    assert {"agents", "reviewer"} <= set(PACKAGES)
    # Every package below them is read too: each concern of reviewer/, its models and its admin.
    read = {module.split(".")[1] for module in import_graph("reviewer") if module.count(".") >= 2}
    assert {*CONCERNS, "models", "admin"} <= read
    assert [circle for package in PACKAGES for circle in circles(import_graph(package))] == []


def test_the_circle_check_reads_imports_inside_functions_and_relative_imports(tmp_path, monkeypatch):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("from .a import f\n")
    (tmp_path / "pkg" / "a.py").write_text("from pkg.b import g\n\ndef f():\n    return g()\n")
    (tmp_path / "pkg" / "b.py").write_text("def g():\n    from pkg import a\n    return a\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert circles(import_graph("pkg")) == ["pkg.a -> pkg.b -> pkg.a"]


def test_the_circle_check_finds_a_circle():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a -> b -> c -> a"]


def bound_twice(source: str) -> list[str]:
    """The names a module's top level binds more than once (assignments, functions, classes)."""
    seen, twice = set(), []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name]
        elif isinstance(node, ast.Assign):
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names = [node.target.id]
        else:
            continue
        twice += [name for name in names if name in seen]
        seen.update(names)
    return twice


def test_no_module_binds_a_top_level_name_twice():
    found = {path.relative_to(ROOT).as_posix(): bound_twice(path.read_text())
             for package in ("agents", "reviewer") for path in sorted((ROOT / package).rglob("*.py"))
             if "migrations" not in path.parts}
    assert {path: names for path, names in found.items() if names} == {}
    assert bound_twice("_CLAUSES = 1\n\ndef f():\n    return _CLAUSES\n\n_CLAUSES = 2\n") == ["_CLAUSES"]


def test_only_the_wiring_imports_a_tasks_module():
    """Concerns enqueue through reviewer.celery.enqueue_on_commit by task name, so a tasks module can
    import what it runs without that code importing it back."""
    offenders = [f"{path}: {module}" for path, module, names in imports("reviewer")
                 if under(module, "reviewer") and not path.endswith("/tasks.py") and path != "reviewer/apps.py"
                 and (module.endswith(".tasks") or "tasks" in names)]
    assert offenders == []


def test_every_task_enqueued_by_name_is_registered_and_every_task_keeps_its_name():
    from reviewer.celery import app

    enqueued = set()
    helpers = ("enqueue_on_commit", "enqueue_each_on_commit")
    for path in sorted((ROOT / "reviewer").rglob("*.py")):
        if path == ROOT / "reviewer" / "celery.py":
            continue  # where the helpers are defined: one calls the other with the name it was given
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") in helpers:
                first = node.args[0]
                assert isinstance(first, ast.Constant), f"{path}: enqueue a task by its literal name"
                enqueued.add(first.value)
    registered = {name for name in app.tasks if name.startswith(("reviewer.", "agents."))}
    assert enqueued and enqueued <= registered
    # The names queued messages and beat's schedule carry: they outlive any move of the code.
    assert registered == {
        "agents.tasks.execute_run", "agents.tasks.sweep_lost_runs", "reviewer.tasks.deliver",
        "reviewer.tasks.sweep_deliveries", "reviewer.tasks.execute_change_request", "reviewer.tasks.notify_opened",
        "reviewer.tasks.send_notification", "reviewer.tasks.notify_held", "reviewer.tasks.send_held_notice",
        "reviewer.tasks.sweep_deadlines", "reviewer.tasks.rebuild_status_page", "reviewer.tasks.subscribe_to_status",
        "reviewer.tasks.verify_ledger", "reviewer.tasks.prune_ledger", "reviewer.tasks.anchor_ledger",
        "reviewer.tasks.sweep_maintenance"}


def test_no_view_module_imports_another():
    views = ("reviewer.desk.views", "reviewer.status.views", "reviewer.accounts.views")
    offenders = [f"{path}: {module}" for folder in ("reviewer/desk/views", "reviewer/status", "reviewer/accounts")
                 for path, module, _ in imports(folder) if under(module, *views)]
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
        "from agents.testing.scripted_demo import demo_workers;"
        "ctx = json.load(open('agents/fixtures/demo_context.json'));"
        "[run_pipeline(n, goal='refund user_id=42' if n == 'routing' else 'Customer update', context=ctx,"
        " policy=default_policy(n), llm=OfflineModel(), workers=demo_workers(n))"
        " for n in ('reflection', 'self_critique', 'routing')];"
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

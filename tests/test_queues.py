"""Every task reaches a worker: each task the product registers goes to a queue that the documented
layout (docs/deploy.md, "Queues and workers"; the systemd units of docs/deploy/) and the demo consume.
A worker that does not listen to a queue strands its tasks without a word. No database."""

import configparser
import re
from pathlib import Path

import pytest

from reviewer.celery import DEFAULT, DELIVERIES, NOTIFICATIONS, QUEUES, ROUTES, RUNS, WORKERS, app, queue_of
from reviewer.management.commands.demo import worker_commands

ROOT = Path(__file__).parents[1]
DEPLOY = ROOT / "docs" / "deploy"


def product_tasks() -> list[str]:
    app.loader.import_default_modules()  # every tasks module, as a worker loads them
    return sorted(name for name in app.tasks if not name.startswith("celery."))


def consumed(command: list[str] | str) -> set[str]:
    """The queues a worker command consumes: its -Q, or every declared queue without one."""
    words = command.split() if isinstance(command, str) else command
    if "-Q" not in words:
        return set(app.amqp.queues)
    return set(words[words.index("-Q") + 1].split(","))


def unit_commands() -> dict[str, str]:
    commands = {}
    for path in sorted(DEPLOY.glob("gated-review-worker*.service")):
        parser = configparser.ConfigParser(strict=False, interpolation=None)
        parser.optionxform = str
        parser.read(path)
        commands[path.name] = parser["Service"]["ExecStart"]
    return commands


def test_the_product_registers_the_tasks_the_routes_name():
    tasks = product_tasks()
    assert set(ROUTES) <= set(tasks), set(ROUTES) - set(tasks)  # a misspelt route sends its task to the default queue
    assert len(tasks) >= 12


@pytest.mark.parametrize("task, queue", [
    ("agents.tasks.execute_run", RUNS), ("reviewer.tasks.execute_change_request", RUNS),
    ("reviewer.tasks.send_notification", NOTIFICATIONS), ("reviewer.tasks.sweep_deadlines", NOTIFICATIONS),
    ("reviewer.tasks.deliver", DELIVERIES), ("reviewer.tasks.rebuild_status_page", DEFAULT),
])
def test_a_task_goes_to_the_queue_of_its_kind(task, queue):
    assert queue_of(task) == queue


def test_every_task_goes_to_a_queue_that_the_production_workers_consume():
    units = unit_commands()
    assert sorted(units) == sorted(f"gated-review-worker-{name}.service" for name in WORKERS)
    by_units = set().union(*(consumed(command) for command in units.values()))
    by_layout = {queue for queues, _ in WORKERS.values() for queue in queues}
    assert by_units == by_layout == set(QUEUES)
    stranded = {task: queue_of(task) for task in product_tasks() if queue_of(task) not in by_units}
    assert stranded == {}


def test_every_task_goes_to_a_queue_that_the_demo_consumes_with_a_worker_per_queue():
    commands = worker_commands()
    assert len(commands) == len(WORKERS) >= 3
    consumed_by = [consumed(command) for command in commands.values()]
    assert RUNS in consumed_by[0] and DELIVERIES not in consumed_by[0]  # a flood of mail never delays a run
    assert all(not (a & b) for i, a in enumerate(consumed_by) for b in consumed_by[i + 1:])  # one worker a queue
    every = set().union(*consumed_by)
    assert {task: queue_of(task) for task in product_tasks() if queue_of(task) not in every} == {}


def test_a_worker_without_queues_named_consumes_every_queue():
    # The tests' and the benchmarks' workers, and a development worker, start without -Q.
    assert set(app.amqp.queues) == set(QUEUES)
    for path in ("tests/conftest.py", "bench/common.py", "tests/drills/test_broker_restart.py"):
        text = (ROOT / path).read_text()
        assert '"worker"' in text and '"-Q"' not in text, path


def test_the_deploy_page_documents_each_queue_and_its_worker_command():
    page = (ROOT / "docs" / "deploy.md").read_text()
    section = page.partition("## Queues and workers")[2].partition("\n## ")[0]
    rows = {match[1]: match[0] for match in re.finditer(r"^\| `(\w+)`.*$", section, re.M)}
    assert set(rows) == set(QUEUES)
    for name, (queues, threads) in WORKERS.items():
        assert f"`-Q {','.join(queues)} --concurrency {threads} -n {name}@%h`" in rows[queues[0]]

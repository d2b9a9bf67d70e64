import os

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewer.settings")

app = Celery("reviewer")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Each concern keeps its tasks in its own tasks.py; ReviewerConfig.ready() imports them too, so every
# process that enqueues has them registered.
TASK_PACKAGES = ["agents", "reviewer.desk", "reviewer.outbox", "reviewer.alerts", "reviewer.status", "reviewer.ledger"]
app.autodiscover_tasks(TASK_PACKAGES)


@app.on_after_configure.connect
def make_broker_folder(sender, **kwargs):
    """The filesystem transport needs its folder to exist before the first message."""
    from django.conf import settings

    if settings.CELERY_BROKER_URL.startswith("filesystem"):
        os.makedirs(settings.CELERY_BROKER_FOLDER, exist_ok=True)


@signals.worker_process_init.connect  # prefork and solo pools: in each process that runs tasks
@signals.worker_ready.connect  # the threads pool, which forks none: its tasks run in this process
def start_tracing(**kwargs):
    """Export the runs' traces when an OTLP endpoint is configured (agents.tracing). Here, after
    any fork: the batch span processor's export thread would not survive one."""
    from agents import tracing

    tracing.configure()


def enqueue_on_commit(task_name: str, *args, robust: bool = False) -> None:
    """Send the task registered as ``task_name`` with ``args`` once the current transaction commits.

    A concern enqueues its tasks by name, so that a tasks module can import the code it runs without
    that code importing the tasks module back: the imports inside ``reviewer/`` stay a one-way chain.
    ``robust``: a broker that is down must not fail a commit that already happened (the sweeps send
    what was not enqueued).
    """
    from django.db import transaction

    transaction.on_commit(lambda: app.tasks[task_name].delay(*args), robust=robust)

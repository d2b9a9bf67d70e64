import logging
import os

from celery import Celery, signals
from kombu import Exchange, Queue

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewer.settings")

log = logging.getLogger("reviewer.celery")

# amqp: broker connections that try again every 2 s while the broker is away (reviewer/operations/broker.py).
app = Celery("reviewer", amqp="reviewer.operations.broker:AMQP")
app.config_from_object("django.conf:settings", namespace="CELERY")
# Each concern keeps its tasks in its own tasks.py; ReviewerConfig.ready() imports them too, so every
# process that enqueues has them registered.
TASK_PACKAGES = ["agents", "reviewer.desk", "reviewer.outbox", "reviewer.alerts", "reviewer.status", "reviewer.ledger"]
app.autodiscover_tasks(TASK_PACKAGES)

# -- queues by kind (docs/deploy.md, "Queues and workers") ------------------------------------------
# One queue per kind of work, each with workers of its own, so that 10,000 deliveries waiting never
# delay a run: a run waits only for the runs before it.
RUNS = "runs"  # pipeline runs and what a person waits on: a run's re-enqueue, a requested revision
NOTIFICATIONS = "notifications"  # telling leads and ops: new escalations, reminders, breaches
DELIVERIES = "deliveries"  # the outbox: webhooks, email, Slack, status page subscribers
DEFAULT = "celery"  # Celery's default queue: anything else (the ledger's checks, status page rebuilds)
QUEUES = (RUNS, NOTIFICATIONS, DELIVERIES, DEFAULT)
ROUTES = {
    "agents.tasks.execute_run": RUNS,
    "reviewer.tasks.execute_change_request": RUNS,
    # The sweeps go where their work goes: behind a backlog they wait with it, so a sweep never sends
    # a second message for work that is only queued.
    "agents.tasks.sweep_lost_runs": RUNS,
    "reviewer.tasks.notify_opened": NOTIFICATIONS,
    "reviewer.tasks.send_notification": NOTIFICATIONS,
    "reviewer.tasks.notify_held": NOTIFICATIONS,
    "reviewer.tasks.send_held_notice": NOTIFICATIONS,
    "reviewer.tasks.sweep_deadlines": NOTIFICATIONS,
    "reviewer.tasks.deliver": DELIVERIES,
    "reviewer.tasks.sweep_deliveries": DELIVERIES,
}
# The worker processes of an installation (docs/deploy.md, docs/deploy/) and of the demo: the queues
# each consumes and its threads. Every queue has a worker (tests/test_queues.py).
WORKERS = {
    "runs": ((RUNS,), 16),
    "notifications": ((NOTIFICATIONS, DEFAULT), 4),
    "deliveries": ((DELIVERIES,), 8),
}
# Every queue is declared: a worker started without -Q consumes all of them (a development worker,
# the tests' workers); -Q picks some.
app.conf.task_queues = [Queue(name, Exchange(name), routing_key=name) for name in QUEUES]
app.conf.task_routes = {name: {"queue": queue} for name, queue in ROUTES.items()}
app.conf.task_default_queue = DEFAULT


def queue_of(task_name: str) -> str:
    """The queue a task's messages go to."""
    return app.amqp.router.route({}, task_name)["queue"].name


def worker_command(name: str, *, concurrency: int | None = None) -> list[str]:
    """The arguments after ``python -m`` of the worker ``name`` of :data:`WORKERS`."""
    queues, threads = WORKERS[name]
    return ["celery", "-A", "reviewer", "worker", "--pool", "threads", "--concurrency", str(concurrency or threads),
            "-Q", ",".join(queues), "-n", f"{name}@%h"]


class LostAcknowledgement(logging.Filter):
    """Says what a lost acknowledgement means, at the level it deserves.

    When the broker's connection drops (a Redis restart) while a task ends, kombu cannot send its
    acknowledgement and logs ``Couldn't ack`` as CRITICAL with a traceback, although the worker lives
    on and nothing is lost: the task ran (late acknowledgement: its outcome is recorded in the
    database), and a broker that kept the message delivers it again after the visibility timeout,
    where the task finds its work done (every task is idempotent; the sweeps recover what is not).
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno == logging.CRITICAL and str(record.msg).startswith("Couldn't ack"):
            tag, reason = (tuple(record.args or ()) + (None, None))[:2]
            record.levelno, record.levelname = logging.WARNING, logging.getLevelName(logging.WARNING)
            record.msg = ("task message %s not acknowledged, the connection to the broker was lost (%r); "
                          "if the broker kept it, it is delivered again after the visibility timeout and the "
                          "task finds its work done")
            record.args = (tag, reason)
            record.exc_info = record.exc_text = None
        return True


# kombu writes it to the logger of the worker's requests (celery.worker.request).
logging.getLogger("celery.worker.request").addFilter(LostAcknowledgement())


@app.on_after_configure.connect
def make_broker_folder(sender, **kwargs):
    """The filesystem transport needs its folder to exist before the first message."""
    from django.conf import settings

    if settings.CELERY_BROKER_URL.startswith("filesystem"):
        os.makedirs(settings.CELERY_BROKER_FOLDER, exist_ok=True)


@signals.beat_init.connect
def verify_ledger_at_start(sender=None, **kwargs):
    """Beat verifies the ledger once as it starts, then hourly (CELERY_BEAT_SCHEDULE): a fresh
    installation or the demo shows a verified ledger within moments of starting, not an hour later."""
    app.tasks["reviewer.tasks.verify_ledger"].apply_async()  # by name: the wiring imports no tasks module


@signals.worker_process_init.connect  # prefork and solo pools: in each process that runs tasks
@signals.worker_ready.connect  # the threads pool, which forks none: its tasks run in this process
def start_tracing(**kwargs):
    """Export the runs' traces when an OTLP endpoint is configured (agents.tracing). Here, after
    any fork: the batch span processor's export thread would not survive one."""
    from agents import tracing

    tracing.configure()


class Enqueued:
    """What became of the tasks sent on commit. Until the commit ``error`` is "", and stays so when
    every task was sent; a robust send that the broker refused names its error there."""

    def __init__(self):
        self.error = ""

    @property
    def failed(self) -> bool:
        return bool(self.error)


def enqueue_on_commit(task_name: str, *args, robust: bool = False) -> Enqueued:
    """Send the task registered as ``task_name`` with ``args`` once the current transaction commits.

    A concern enqueues its tasks by name, so that a tasks module can import the code it runs without
    that code importing the tasks module back: the imports inside ``reviewer/`` stay a one-way chain.
    ``robust``: a broker that is down must not fail a commit that already happened (the sweeps send
    what was not enqueued); the returned :class:`Enqueued` says so once the transaction committed.
    """
    return enqueue_each_on_commit(task_name, [args], robust=robust)


def enqueue_each_on_commit(task_name: str, arguments, *, robust: bool = False) -> Enqueued:
    """Send the task ``task_name`` once for each tuple of ``arguments`` when the current transaction
    commits, in one go. ``robust``: the first send the broker refuses ends the sending (each further
    one would wait for the broker again) and is recorded in the returned :class:`Enqueued`; the sweeps
    send what was not enqueued. Without it the error reaches the caller, after the commit."""
    from django.db import transaction

    arguments, enqueued = [tuple(args) for args in arguments], Enqueued()

    def send():
        task = app.tasks[task_name]
        for number, args in enumerate(arguments):
            try:
                task.delay(*args)
            except Exception as error:
                if not robust:
                    raise
                enqueued.error = f"{type(error).__name__}: {error}"[:300]
                log.warning("%s: %d of %d task(s) not sent, left to the sweep: %s", task_name,
                            len(arguments) - number, len(arguments), enqueued.error)
                return

    if arguments:
        transaction.on_commit(send, robust=robust)
    return enqueued

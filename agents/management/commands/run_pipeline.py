"""python manage.py run_pipeline {reflection|self_critique|routing} --goal TEXT [--context FILE]

Runs one pipeline in-process and prints its result as JSON. Without --incident nothing is read from or
stored in the database: routing delegates to the built-in specialists on the demo's in-memory facts
(customers 42 and 7, incident INC-4021); with --incident the run is stored and reads the database.
Exit 0 for a success and for a recorded stop; a usage error (unknown pipeline, unreadable context, a
context file over CONTEXT_MAX_BYTES or with a list entry over its bound, a goal over the start-run
form's limit) exits non-zero with a message.
"""

import json

from django.core.management.base import BaseCommand, CommandError

from agents.core.inputs import (
    CONTEXT_MAX_BYTES,
    CONTROL,
    GOAL_MAX_CHARS,
    TICKET_MAX_CHARS,
    context_problem,
)
from agents.core.llm.client import client_from_env, effective_policy
from agents.core.pipelines import PIPELINE_NAMES, run_pipeline
from agents.core.policy import default_policy
from agents.core.specialists import DemoData, builtin_workers


def read_context(path: str) -> dict:
    try:
        with open(path, "rb") as handle:
            # Read one byte past the limit, never the whole file: it may be huge, or endless (a pipe).
            raw = handle.read(CONTEXT_MAX_BYTES + 1)
    except OSError as error:
        raise CommandError(f"cannot read context file {path}: {error.strerror}") from None
    if len(raw) > CONTEXT_MAX_BYTES:
        raise CommandError(f"context file {path} is larger than {CONTEXT_MAX_BYTES // 1024} KB "
                           f"({CONTEXT_MAX_BYTES} bytes), the limit for an incident context")
    try:
        context = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise CommandError(f"context file {path} is not UTF-8 text") from None
    except (ValueError, RecursionError) as error:
        raise CommandError(f"context file {path} is not valid JSON: {error}") from None
    if not isinstance(context, dict):
        raise CommandError(f"context file {path} must hold a JSON object, not {type(context).__name__}")
    try:
        json.dumps(context, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise CommandError(
            f"context file {path} holds text that is not valid Unicode (a lone surrogate escape)"
        ) from None
    if problem := context_problem(context):
        raise CommandError(f"context file {path}: {problem}")
    return context


class Command(BaseCommand):
    help = "Run one gated pipeline and print its result as JSON."

    def add_arguments(self, parser):
        parser.add_argument("pipeline", choices=PIPELINE_NAMES)
        parser.add_argument("--goal", required=True, help="What the run should achieve (for routing: the ticket).")
        parser.add_argument("--context", help="JSON file with the incident context (optional for routing).")
        parser.add_argument(
            "--incident", help="Run on this stored incident (its id, e.g. inc_pay_2041) and store the run."
        )
        parser.add_argument("--enqueue", action="store_true",
                            help="With --incident: hand the run to a worker instead of running it here.")

    def handle(self, *args, pipeline, goal, context, incident, enqueue, **options):
        if not goal.strip():
            raise CommandError("--goal must not be blank")
        control = CONTROL.search(goal)
        if control:  # PostgreSQL cannot store NUL; no page should show the others
            raise CommandError(f"--goal contains a control character (U+{ord(control.group()):04X}); remove it")
        limit = TICKET_MAX_CHARS if pipeline == "routing" else GOAL_MAX_CHARS  # as the start-run form
        if len(goal.strip()) > limit:
            raise CommandError(f"--goal has {len(goal.strip())} characters; the limit for {pipeline} is {limit}")
        if incident is not None:
            return self.stored_run(pipeline, goal, incident, context, enqueue)
        if enqueue:
            raise CommandError("--enqueue needs --incident: only stored runs go to a worker")
        if context is None and pipeline != "routing":
            raise CommandError(f"--context is required for the {pipeline} pipeline")
        context_data = read_context(context) if context else None
        try:
            policy = effective_policy(default_policy(pipeline))
            llm = client_from_env(policy.model)
        except ValueError as error:
            raise CommandError(str(error)) from None
        workers = builtin_workers(DemoData()) if pipeline == "routing" else None  # see the module's docstring
        result = run_pipeline(pipeline, goal=goal, context=context_data, policy=policy, llm=llm, workers=workers)
        self.stdout.write(json.dumps(result.to_dict(), indent=2, ensure_ascii=False, default=str))

    def stored_run(self, pipeline, goal, incident_id, context, enqueue):
        from agents.models import Incident
        from agents.policy_rows import PolicyMissing
        from agents.tasks import run_now, start_run

        if context:
            raise CommandError("--context and --incident exclude each other: a stored run uses the incident's facts")
        incident = Incident.objects.filter(incident_id=incident_id).first()
        if incident is None:
            raise CommandError(
                f"no incident {incident_id!r}; known: "
                f"{', '.join(Incident.objects.values_list('incident_id', flat=True)) or 'none'}"
            )
        if problem := context_problem(incident.context()):
            raise CommandError(f"incident {incident_id}: {problem}")
        try:
            run, _ = start_run(pipeline=pipeline, goal=goal, incident=incident, enqueue=enqueue)
        except PolicyMissing as error:
            raise CommandError(str(error)) from None
        if enqueue:
            self.stdout.write(json.dumps({"stored_run": run.pk, "status": run.status}))
            return
        result = run_now(run.pk)
        self.stdout.write(
            json.dumps({"stored_run": run.pk, **result.to_dict()}, indent=2, ensure_ascii=False, default=str)
        )

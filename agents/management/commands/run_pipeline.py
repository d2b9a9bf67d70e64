"""python manage.py run_pipeline {reflection|self_critique|routing} --goal TEXT [--context FILE]

Runs one pipeline in-process and prints its result as JSON. Exit 0 for a success and for a recorded
stop; a usage error (unknown pipeline, unreadable context) exits non-zero with a message.
"""

import json

from django.core.management.base import BaseCommand, CommandError

from agents.llm.client import client_from_env
from agents.pipelines import PIPELINE_NAMES, run_pipeline
from agents.policy import default_policy


def read_context(path: str) -> dict:
    try:
        with open(path, encoding="utf-8") as handle:
            context = json.load(handle)
    except OSError as error:
        raise CommandError(f"cannot read context file {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise CommandError(f"context file {path} is not UTF-8 text") from None
    except (ValueError, RecursionError) as error:
        raise CommandError(f"context file {path} is not valid JSON: {error}") from None
    if not isinstance(context, dict):
        raise CommandError(f"context file {path} must hold a JSON object, not {type(context).__name__}")
    return context


class Command(BaseCommand):
    help = "Run one gated pipeline and print its result as JSON."

    def add_arguments(self, parser):
        parser.add_argument("pipeline", choices=PIPELINE_NAMES)
        parser.add_argument("--goal", required=True, help="What the run should achieve (for routing: the ticket).")
        parser.add_argument("--context", help="JSON file with the incident context (optional for routing).")

    def handle(self, *args, pipeline, goal, context, **options):
        if not goal.strip():
            raise CommandError("--goal must not be blank")
        if context is None and pipeline != "routing":
            raise CommandError(f"--context is required for the {pipeline} pipeline")
        context_data = read_context(context) if context else None
        policy = default_policy(pipeline)
        try:
            llm = client_from_env(policy.model)
        except ValueError as error:
            raise CommandError(str(error)) from None
        result = run_pipeline(pipeline, goal=goal, context=context_data, policy=policy, llm=llm)
        self.stdout.write(json.dumps(result.to_dict(), indent=2, ensure_ascii=False, default=str))

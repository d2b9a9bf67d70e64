"""``manage.py export_decisions --format chat [--since D] [--until D] [--pipeline P] [--incident I]
[--decision A] [--user NAME] [--output FILE]``: decisions as a JSON Lines dataset (docs/datasets.md).
Each export is recorded in the ledger, under ``--user`` or as the command line."""

from datetime import date

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.management.base import BaseCommand, CommandError

from reviewer.desk.datasets import EXPORTS, ExportInvalid, Filters, export


def day(value: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise CommandError(f"“{value[:40]}” is not a date (YYYY-MM-DD).") from None


class Command(BaseCommand):
    help = "Export decisions as a JSON Lines dataset (chat, preference, evals or guard)."

    def add_arguments(self, parser):
        parser.add_argument("--format", required=True, choices=EXPORTS)
        parser.add_argument("--since", type=day, help="Decided on or after this day (YYYY-MM-DD, UTC).")
        parser.add_argument("--until", type=day, help="Decided on or before this day.")
        parser.add_argument("--pipeline", default="")
        parser.add_argument("--incident", default="", help="An incident's id, e.g. inc_pay_2041.")
        parser.add_argument("--decision", default="", help="approve, edit_approve or reject.")
        parser.add_argument("--user", default="", help="Who exports (recorded in the ledger; needs the right).")
        parser.add_argument("--output", default="", help="A file to write; standard output without it.")

    def handle(self, **options):
        user = None
        if options["user"]:
            user = get_user_model().objects.filter(username=options["user"], is_active=True).first()
            if user is None:
                raise CommandError(f"No active user “{options['user']}”.")
        try:
            filters = Filters(since=options["since"], until=options["until"], pipeline=options["pipeline"],
                              incident=options["incident"], decision=options["decision"])
            body = export(user, options["format"], filters, door="command")
        except (ExportInvalid, PermissionDenied) as error:
            raise CommandError(str(error)) from None
        if options["output"]:
            with open(options["output"], "w", encoding="utf-8") as file:
                file.write(body)
        else:
            self.stdout.write(body, ending="")

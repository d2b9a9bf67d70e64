"""python manage.py preview_policy KIND [KEY] --set FIELD=VALUE ... [--last N] [--since DATE] [--until DATE] [--json]

The policy lab from a shell: what a change of a policy (KEY: its pipeline or id), a route (its name),
a claim family (its family name or id), a region (its token) or an issue type (its name) would have
done to the stored runs and the decided texts, without saving it. No KEY: a new row of that kind.
Prints the report (or its summary as JSON); values the row refuses exit non-zero with the reason.
"""

import json

from django.core.management.base import BaseCommand, CommandError

from agents.forms import LabWindowForm
from agents.lab import KINDS, LabInputError, preview, proposed_row

SHOWN = 50


class Command(BaseCommand):
    help = "Preview what a policy change would have done to the stored runs, without saving it."

    def add_arguments(self, parser):
        parser.add_argument("kind", choices=list(KINDS))
        parser.add_argument("key", nargs="?", default="", help="Which row (see above); none: a new one.")
        parser.add_argument("--set", dest="changes", action="append", default=[], metavar="FIELD=VALUE",
                            help="A field's proposed value (JSON for lists); repeat for more fields.")
        parser.add_argument("--last", help="Replay the newest N stored runs (default 1000).")
        parser.add_argument("--since", help="Only runs created from this date (YYYY-MM-DD).")
        parser.add_argument("--until", help="Only runs created before this date (YYYY-MM-DD).")
        parser.add_argument("--json", dest="as_json", action="store_true", help="Print the summary as JSON.")

    def handle(self, *args, kind, key, changes, last, since, until, as_json, **options):
        values = {}
        for change in changes:
            name, sep, value = change.partition("=")
            if not sep or not name.strip():
                raise CommandError(f"--set takes FIELD=VALUE, got {change!r}")
            values[name.strip()] = value
        window = LabWindowForm({"lab-last": last or "", "lab-since": since or "", "lab-until": until or ""})
        if not window.is_valid():
            raise CommandError("; ".join(f"--{name if name != '__all__' else 'since/--until'}: {' '.join(errors)}"
                                         for name, errors in window.errors.items()))
        try:
            row = proposed_row(kind, key, values)
        except LabInputError as error:
            raise CommandError(str(error)) from None
        report = preview(row, **window.window())
        if as_json:
            self.stdout.write(_json(report.summary()))
            return
        self._print(report)

    def _print(self, report) -> None:
        out = self.stdout.write
        out(f"Preview of the change to {report.change}: {report.window} of {', '.join(report.pipelines)}.")
        for problem in report.problems:
            out(f"  ! {problem}")
        out(report.headline())
        out("")
        for name, _, count in report.verdicts:
            out(f"  {name:<16}{count:>7}")
        if report.changes:
            out("\nBy stop reason:")
            for change, count in report.changes:
                out(f"  {count:>7}  {change}")
        if report.text_flips:
            out("\nDecided texts judged otherwise (against the decision first):")
            for flip in report.text_flips[:SHOWN]:
                mark = "!" if flip.contradicts else " "
                out(f"  {mark} {flip.decided.label}: {flip.sentence}")
        if report.flips:
            out("\nRuns that would end otherwise:")
            for flip in report.flips[:SHOWN]:
                after = flip.replayed.after.stop_reason
                out(f"  run {flip.run_id} ({flip.pipeline}): {flip.replayed.before.stop_reason} -> {after}")
        if report.diverged:
            out("\nRuns that diverged (a model answer the run never recorded):")
            for flip in report.diverged[:SHOWN]:
                out(f"  run {flip.run_id} ({flip.pipeline}): {flip.replayed.note}")
        for why, count in report.unreplayable:
            out(f"\nNot replayable: {count} ({why})")


def _json(value) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)

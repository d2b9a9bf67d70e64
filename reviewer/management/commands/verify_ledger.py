"""``manage.py verify_ledger``: recompute the ledger's hash chain (docs/ledger.md). Exits 0 with
the number of entries and the head hash when it holds; otherwise non-zero, naming the first bad
entry. The result is stored, like the scheduled verification's, for the dashboard."""

from django.core.management.base import BaseCommand, CommandError

from reviewer.ledger.chain import verify_and_record


class Command(BaseCommand):
    help = "Verify the ledger's hash chain; exit non-zero naming the first bad entry."

    def handle(self, **options):
        result = verify_and_record()
        if not result.ok:
            raise CommandError(f"The ledger is broken at entry {result.broken_seq}: {result.message}")
        self.stdout.write(f"The ledger holds: {result.count} entries, head hash {result.head_hash or '(none)'}")

"""``manage.py seed_decisions [--count N] [--seed S]``: a seeded history of runs and leads' decisions
for the learning loop (reviewer/learning/seed.py, docs/learning-loop.md)."""

from django.core.management.base import BaseCommand

from agents.models import Incident
from agents.store import load_demo_data
from reviewer.demo.seed import load_incidents
from reviewer.learning.seed import INCIDENTS
from reviewer.learning.seed import seed as seed_history


class Command(BaseCommand):
    help = "Write a deterministic history of real runs and support leads' decisions (for the learning loop)."

    def add_arguments(self, parser):
        parser.add_argument("--count", type=int, default=240, help="Runs to make (most are escalated and decided).")
        parser.add_argument("--seed", type=int, default=33, help="The random generator's seed.")

    def handle(self, *args, count: int, seed: int, **options):
        load_demo_data()
        if Incident.objects.filter(incident_id__in=INCIDENTS).count() != len(INCIDENTS):
            load_incidents()
        made = seed_history(count, seed_value=seed)
        self.stdout.write(f"{made['runs']} runs, {made['escalations']} escalations decided, "
                          f"{made['decisions']} decisions in {made['seconds']} s.")

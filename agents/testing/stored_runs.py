"""Many stored runs quickly, for the tests and the benchmarks of the policy lab: copies of runs a
pipeline really made, with their model calls and trace steps, written with bulk inserts. Not used by
the product (tests/test_architecture.py keeps it that way)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from agents.models import ModelCall, Run, TraceStep

BATCH = 500


@transaction.atomic
def copy_runs(runs: Sequence[Run], total: int) -> list[int]:
    """``total`` new runs, copies of ``runs`` in turn, one second apart up to now; returns their ids."""
    sources = list(Run.objects.filter(pk__in=[run.pk for run in runs]).order_by("pk"))
    calls = {run.pk: list(ModelCall.objects.filter(run=run).order_by("id")) for run in sources}
    steps = {run.pk: list(TraceStep.objects.filter(run=run).order_by("index")) for run in sources}
    now = timezone.now()
    made = Run.objects.bulk_create(
        [_copy(sources[number % len(sources)], idempotency_key="", retry_of_id=None,
               created_at=now - timedelta(seconds=total - number)) for number in range(total)],
        batch_size=BATCH)
    pairs = [(run.pk, sources[number % len(sources)].pk) for number, run in enumerate(made)]
    ModelCall.objects.bulk_create([_copy(call, run_id=pk) for pk, source in pairs for call in calls[source]],
                                  batch_size=BATCH)
    TraceStep.objects.bulk_create([_copy(step, run_id=pk) for pk, source in pairs for step in steps[source]],
                                  batch_size=BATCH)
    return [run.pk for run in made]


def _copy(row, **changes):
    """A new, unsaved row with ``row``'s column values and ``changes``."""
    model = type(row)
    values = {f.attname: getattr(row, f.attname) for f in model._meta.concrete_fields if not f.primary_key}
    return model(**{**values, **changes})

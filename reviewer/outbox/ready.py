"""What waits for a person's Publish click: the texts ops may publish now (docs/desk.md, 'Ready to publish').

A text is ready to publish when :func:`reviewer.outbox.publishing.publishable` would let it out and
nobody published it yet: the text a lead approved on an escalation (approve, or edit then approve),
or the answer of a text pipeline's run that passed every gate and was not published automatically.
Two limits keep the queue about the incidents of now, never the whole history:

- only texts drafted in the last :data:`READY_WINDOW` (the run page still offers Publish for older ones):
  the count is on every page ops read, so it reads one day of runs, not the history;
- a gate-passed text is overtaken once its incident publishes another update after it passed: nobody
  asked for it, and customers already read something newer. An approved text stays (a lead asked for
  it), with ``newer_version`` saying which update overtook it, so ops decide whether it still goes out.
"""

from __future__ import annotations

from datetime import timedelta

from django.db.models import Exists, F, Max, OuterRef, Q, QuerySet, Subquery, Window
from django.db.models.functions import Coalesce
from django.utils import timezone

from agents.core.policy import TEXT_PIPELINES
from agents.models import Run
from reviewer.models import Escalation, PublishedUpdate

READY_WINDOW = timedelta(hours=24)


def ready_to_publish(runs: QuerySet[Run] | None = None) -> QuerySet[Run]:
    """The runs of ``runs`` (every run by default) whose text is ready to publish, annotated with
    ``ready_at`` (when the lead approved it, or the run passed) and ``newer_version`` (the newest
    update of the incident published after that, or None)."""
    runs = Run.objects.all() if runs is None else runs
    approved = Q(escalation__status=Escalation.Status.APPROVED, escalation__final_text__gt="")
    passed = Q(status=Run.Status.OK, escalation__isnull=True, answer__gt="")
    newer = (PublishedUpdate.objects.filter(incident=OuterRef("incident"), published_at__gt=OuterRef("ready_at"))
             .order_by("-version").values("version")[:1])
    return (runs.filter(approved | passed, incident__isnull=False, pipeline__in=TEXT_PIPELINES,
                        created_at__gte=timezone.now() - READY_WINDOW)
            .exclude(Exists(PublishedUpdate.objects.filter(source_run=OuterRef("pk"))))
            .annotate(ready_at=Coalesce("escalation__decided_at", "finished_at", "created_at"))
            .annotate(newer_version=Subquery(newer))
            .filter(Q(escalation__isnull=False) | Q(newer_version__isnull=True)))


def publish_queue(runs: QuerySet[Run] | None = None) -> QuerySet[Run]:
    """:func:`ready_to_publish` as ops read it: the incident with the most recent ready text first, its
    texts newest first, each with its incident, the approving lead and the approval (for the
    findings the lead overrode) in two queries however many rows."""
    return (ready_to_publish(runs)
            # Partitioned by the incident's name, not its key: partitioning by the key lets SQLite walk
            # the run_incident_newest index over every run ever made instead of one day of them.
            .annotate(incident_ready_at=Window(Max("ready_at"), partition_by=F("incident__incident_id")))
            .select_related("incident", "escalation", "escalation__decided_by")
            .defer("context", "policy", "details", "guard", "escalation__guard")
            .prefetch_related("escalation__decisions")
            .order_by("-incident_ready_at", "incident__incident_id", "-ready_at", "-pk"))

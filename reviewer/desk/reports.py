"""Post-incident reports (docs/publishing.md, 'Post-incident reports'): ops ask the model to draft one
for a resolved incident. The draft is a run of the reflection pipeline like any update, on the
incident's facts, so the guard's checks (promises of money, reassurance about data, a cause the
incident does not state) stop it for a person as they stop any text. A report that passes every gate
still waits in the inbox for a person's approval (``reviewer.desk.decisions.open_escalation``); once
approved, ops publish it, and it becomes the incident's ``postmortem`` stage
(``reviewer.outbox.publishing``)."""

from __future__ import annotations

from django.db import transaction

from agents import tasks
from agents.models import Incident, Run
from reviewer.models import POSTMORTEM, PostIncidentReport, PublishedUpdate
from reviewer.outbox.publishing import RESOLVED, last_published

REPORT_PIPELINE = "reflection"
# The run's goal: what the draft stage is asked to write. The goal licenses no cause: only the incident's
# facts do (agents/core/guard/grounding.py).
REPORT_GOAL = ("Write the post-incident report for customers of this resolved incident: what happened, "
               "who was affected and how, the timeline, the cause and what is changing, each only as the "
               "incident's facts state it, in short plain paragraphs.")


class ReportRefused(Exception):
    """No report can be drafted now; the message is for the person who asked."""


def resolved_in_public(last: PublishedUpdate | None) -> bool:
    """Whether customers were told the incident is resolved: ``last``, its last published update, says so."""
    return last is not None and last.state in (RESOLVED, POSTMORTEM)


def draft_report(incident: Incident, user, *, idempotency_key: str = "") -> Run:
    """Start the run that drafts ``incident``'s post-incident report (enqueued once it commits)."""
    if not resolved_in_public(last_published(incident)):
        raise ReportRefused("A post-incident report is drafted once the incident's resolution is published.")
    with transaction.atomic():
        run, created = tasks.start_run(pipeline=REPORT_PIPELINE, goal=REPORT_GOAL, incident=incident, user=user,
                                       idempotency_key=idempotency_key)
        if created:
            PostIncidentReport.objects.create(run=run, requested_by=user)
    return run


def report_runs(incident: Incident):
    """The runs that drafted the incident's reports, newest first, with what became of each."""
    return (Run.objects.filter(report__isnull=False, incident=incident)
            .select_related("escalation", "escalation__decided_by")
            .prefetch_related("published_updates").order_by("-created_at", "-id"))

"""Decided escalations as the policy lab reads them (agents.lab.register_decided_texts): what a lead
approved (the text as approved, edits included) and what a lead rejected (the text the gate stopped).
Read only; registered by the app's ready(), since the runner never imports the desk."""

from __future__ import annotations

from collections.abc import Sequence

from django.urls import reverse

from agents.lab import DecidedText
from reviewer.models import Escalation


def decided_texts(pipelines: Sequence[str], limit: int) -> list[DecidedText]:
    """The newest ``limit`` decided escalations of runs of ``pipelines``."""
    rows = (Escalation.objects.filter(status__in=(Escalation.Status.APPROVED, Escalation.Status.REJECTED),
                                      run__pipeline__in=pipelines)
            .select_related("run", "decided_by").order_by("-decided_at", "-id")[:limit])
    return [
        DecidedText(
            decision=row.status,
            text=row.final_text if row.status == Escalation.Status.APPROVED else row.candidate,
            context=row.run.context or {},
            pipeline=row.run.pipeline,
            run_id=row.run_id,
            label=f"escalation {row.pk}",
            url=reverse("escalation", args=[row.pk]),
            decided_by=row.decided_by.get_username() if row.decided_by else "",
            decided_at=row.decided_at,
        )
        for row in rows
    ]

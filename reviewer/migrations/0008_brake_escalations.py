"""Runs that the emergency brake stopped used to open no escalation and were listed as failed with
a Retry that fails the same way. They are escalations now
(docs/contract.md, 'Escalations and decisions'): open one for each, with the draft from its trace
and the reviewer's reason, as a run stopped today would get."""

from django.db import migrations

BRAKE_STOPS = ("review_decision_denied_execution:revise", "critique_decision_denied_execution:revise")
BRAKE_REASON = ("Stopped by the emergency brake: the reviewer asked for a revision and auto-revision is off, "
                "so a person decides the draft.")


def open_brake_escalations(apps, schema_editor):
    Run = apps.get_model("agents", "Run")
    TraceStep = apps.get_model("agents", "TraceStep")
    Review = apps.get_model("agents", "Review")
    Escalation = apps.get_model("reviewer", "Escalation")
    for run in Run.objects.filter(status="stopped", stop_reason__in=BRAKE_STOPS, escalation__isnull=True):
        step = TraceStep.objects.filter(run=run, phase="draft").order_by("id").first()
        draft = step.output if step is not None and isinstance(step.output, str) else ""
        if not (draft or run.candidate):
            continue  # nothing for a person to decide: it stays a failed run
        review = Review.objects.filter(run=run).first()
        reason = run.escalation_reason or (review.reason if review is not None else "") or BRAKE_REASON
        Escalation.objects.create(run=run, stop_reason=run.stop_reason, reason=reason, draft=draft,
                                  candidate=run.candidate or draft, opened_at=run.finished_at or run.created_at)


class Migration(migrations.Migration):

    dependencies = [
        ("reviewer", "0007_publishing"),
        ("agents", "0009_incident_versions"),
    ]

    operations = [migrations.RunPython(open_brake_escalations, migrations.RunPython.noop)]

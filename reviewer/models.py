"""What people decide about runs: escalations and the append-only decisions (SPEC §7).

An escalation is opened for the stops a person must decide (``reviewer.escalations`` listens for
finished runs); it is decided exactly once, by a conditional update, and decisions are never edited.
The runs themselves, their trace and the incidents they ran on belong to the agents app.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from agents.core.stops import explain
from agents.models import Run


class EscalationQuerySet(models.QuerySet):
    def pending(self):
        return self.filter(status=Escalation.Status.PENDING)

    def decided(self):
        return self.exclude(status=Escalation.Status.PENDING)

    def for_list(self):
        """What a list row needs: the run and incident without the run's large JSON columns."""
        return (self.select_related("run", "run__incident", "claimed_by", "decided_by")
                .defer("run__context", "run__policy", "run__details", "run__guard"))


class Escalation(models.Model):
    """A stop a person must decide (SPEC §7). Decided exactly once, by a conditional update."""

    class Status(models.TextChoices):
        PENDING = "pending"
        APPROVED = "approved"
        REJECTED = "rejected"

    run = models.OneToOneField(Run, on_delete=models.PROTECT, related_name="escalation")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    stop_reason = models.CharField(max_length=200)
    reason = models.TextField(blank=True)  # the reviewer's reason, whole
    draft = models.TextField(blank=True)
    candidate = models.TextField(blank=True)  # the blocked text (the draft, for a policy escalation)
    guard = models.JSONField(null=True, blank=True)
    opened_at = models.DateTimeField(default=timezone.now)
    claimed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="claimed_escalations")
    claimed_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="decided_escalations")
    decided_at = models.DateTimeField(null=True, blank=True)
    final_text = models.TextField(blank=True)

    objects = EscalationQuerySet.as_manager()

    class Meta:
        ordering = ["opened_at", "id"]
        indexes = [
            models.Index(fields=["status", "opened_at"], name="escalation_pending_by_age"),
            models.Index(fields=["status", "claimed_by", "opened_at"], name="escalation_claimed_by_age"),
            models.Index(fields=["status", "stop_reason", "opened_at"], name="escalation_reason_by_age"),
            models.Index(fields=["-decided_at"], name="escalation_decided_newest"),
        ]
        permissions = [("decide_escalation", "Can decide escalations")]

    def __str__(self) -> str:
        return f"Escalation {self.pk} ({self.stop_reason}, {self.status})"

    @property
    def explanation(self) -> str:
        return explain(self.stop_reason)

    @property
    def summary(self) -> str:
        """One line for a list: the reviewer's reason, else the first guard message, else the explanation."""
        violations = (self.guard or {}).get("violations") or [{}]
        return self.reason or violations[0].get("message") or self.explanation



class Decision(models.Model):
    """An append-only record of what a person decided. Never edited; a correction links to the original."""

    class Action(models.TextChoices):
        APPROVE = "approve"
        EDIT_APPROVE = "edit_approve", "edit then approve"
        REJECT = "reject"

    escalation = models.ForeignKey(Escalation, on_delete=models.PROTECT, related_name="decisions")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="decisions")
    at = models.DateTimeField(default=timezone.now)
    action = models.CharField(max_length=20, choices=Action.choices)
    final_text = models.TextField(blank=True)
    guard_results = models.JSONField(default=dict, blank=True)
    note = models.TextField(blank=True)  # the rejection reason or the justification for overriding the guard
    corrects = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="corrections")

    class Meta:
        ordering = ["at", "id"]

    def __str__(self) -> str:
        return f"{self.get_action_display()} by {self.actor} on escalation {self.escalation_id}"


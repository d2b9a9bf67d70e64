"""Approvals by more than one person: the rules that ask for them and each person's approval
of one version of an escalation's text (``reviewer.desk.approvals``; docs/operations.md)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from agents.core.policy import PIPELINE_CHOICES


class ApprovalRule(models.Model):
    """How many people must approve an escalation's text before it counts as approved, and from which
    group: for escalations of a pipeline, of incidents of a severity, and/or with a guard finding.
    Blank means any. When several rules fit, the strictest (most approvals) applies; an escalation
    keeps what applied when it opened (``reviewer.desk.approvals.approval_fields``)."""

    name = models.CharField(max_length=100, help_text="e.g. “P1 payments need two leads”.")
    pipeline = models.CharField(max_length=20, blank=True, choices=PIPELINE_CHOICES, help_text="Blank: any pipeline.")
    severity = models.CharField(max_length=8, blank=True, help_text="The incident's severity, e.g. P1; blank: any.")
    stop_reason = models.CharField(
        max_length=200, blank=True,
        help_text="A stop reason, or its start ending in “:” (e.g. “patch_violation:” for every guard block); "
                  "blank: any.")
    overrides_guard = models.BooleanField(
        default=False, help_text="Only escalations whose text the guard found violations in: approving it "
                                 "overrides the guard.")
    required_approvals = models.PositiveSmallIntegerField(
        default=2, help_text="Distinct approvals of the current text, from members of the group.")
    group = models.ForeignKey("auth.Group", null=True, blank=True, on_delete=models.PROTECT, related_name="+",
                              help_text="Whose approvals count (they also need the support lead role); "
                                        "blank: support leads.")

    class Meta:
        ordering = ["-required_approvals", "name"]

    def __str__(self) -> str:
        return f"{self.name}: {self.required_approvals} approvals from {self.group or 'Support leads'}"

    def clean(self):
        from django.core.exceptions import ValidationError

        from agents.core.inputs import control_character

        self.severity = self.severity.strip().upper()
        self.stop_reason = self.stop_reason.strip()
        for field in ("name", "stop_reason"):
            if found := control_character(getattr(self, field)):
                raise ValidationError({field: f"Contains a control character (U+{ord(found):04X}); remove it."})
        if self.required_approvals is not None and not 1 <= self.required_approvals <= 10:
            raise ValidationError({"required_approvals": "Between 1 and 10 approvals."})


class Approval(models.Model):
    """One person's approval of one version of an escalation's text under a quorum. Counted while it
    is on the current version; an edit, a requested revision or a request for changes supersedes it
    (kept, with ``superseded_at``). A person approves a version at most once (the constraint)."""

    escalation = models.ForeignKey("Escalation", on_delete=models.PROTECT, related_name="approvals")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    text_version = models.PositiveIntegerField()
    text_hash = models.CharField(max_length=12)
    at = models.DateTimeField(default=timezone.now)
    superseded_at = models.DateTimeField(null=True, blank=True)
    superseded_because = models.CharField(max_length=100, blank=True)

    class Meta:
        ordering = ["at", "id"]
        constraints = [models.UniqueConstraint(fields=["escalation", "user", "text_version"],
                                               name="approval_once_per_person_and_text")]

    def __str__(self) -> str:
        return f"Approval by {self.user} of escalation {self.escalation_id} (text v{self.text_version})"

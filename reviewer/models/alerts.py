"""Deadlines, notifications and holding statements (docs/contract.md, 'Deadlines and
notifications'): the rules, the messages about escalations, the statements ops may publish when a
deadline passes, and the breaches (``reviewer.alerts``)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from agents.core.policy import PIPELINE_CHOICES
from agents.models import Incident, IncidentVersion
from reviewer.models.desk import Escalation


class DeadlineRule(models.Model):
    """How long an escalation may wait for a decision, by the incident's severity and the pipeline.

    Blank means any. The most specific rule wins: severity and pipeline, then severity alone, then
    pipeline alone, then the catch-all (:func:`reviewer.alerts.deadlines.rule_for`)."""

    severity = models.CharField(max_length=8, blank=True, help_text="The incident's severity, e.g. P1; blank: any.")
    pipeline = models.CharField(max_length=20, blank=True, choices=PIPELINE_CHOICES,
                                help_text="Blank: any pipeline.")
    minutes = models.PositiveIntegerField(help_text="Minutes from opening to the deadline, e.g. 10 for P1.")
    reminder_minutes = models.PositiveIntegerField(
        default=5, help_text="Minutes before the deadline that the reminder goes out (0: no reminder).")

    class Meta:
        ordering = ["severity", "pipeline"]
        constraints = [models.UniqueConstraint(fields=["severity", "pipeline"], name="deadline_rule_once")]

    def __str__(self) -> str:
        return f"{self.severity or 'any severity'}, {self.pipeline or 'any pipeline'}: {self.minutes} min"

    def clean(self):
        from django.core.exceptions import ValidationError

        self.severity = self.severity.strip().upper()
        if self.minutes is not None and self.minutes < 1:
            raise ValidationError({"minutes": "A deadline needs at least one minute."})
        if self.minutes is not None and self.reminder_minutes is not None and self.reminder_minutes >= self.minutes:
            raise ValidationError({"reminder_minutes": "The reminder must go out after the escalation opens: "
                                                       "make it shorter than the deadline."})


class NotificationChannel(models.Model):
    """Where people are told about escalations: one of the destinations the operator declared
    (``OUTBOUND_DESTINATIONS``), for a group and the events it wants."""

    class Group(models.TextChoices):
        LEADS = "leads", "support leads"
        SECOND = "second", "second group (breaches)"
        OPS = "ops", "ops staff (ready to publish)"
        ADMINS = "admins", "policy admins (approval rules)"

    class Event(models.TextChoices):
        OPENED = "opened", "escalation opened"
        REMINDER = "reminder", "deadline near"
        BREACH = "breach", "deadline breached"
        APPROVED = "approved", "text approved, ready to publish"
        UNMEETABLE = "unmeetable", "approval rule can no longer be met"

    name = models.CharField(max_length=100, unique=True)
    destination = models.CharField(max_length=100, help_text="A destination the operator declared.")
    group = models.CharField(max_length=10, choices=Group.choices, default=Group.LEADS)
    events = models.JSONField(default=list, help_text="opened, reminder, breach, approved, unmeetable")
    active = models.BooleanField(default=True, help_text="Off: the channel is kept, but no notification goes to it.")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.get_group_display()})"


class Notification(models.Model):
    """One message about one escalation event to one channel: sent by a Celery task with retries;
    at most once per (escalation, event, channel); a failure is recorded, never raised."""

    class Status(models.TextChoices):
        PENDING = "pending"
        SENT = "sent"
        FAILED = "failed"

    escalation = models.ForeignKey(Escalation, on_delete=models.CASCADE, related_name="notifications")
    channel = models.ForeignKey(NotificationChannel, on_delete=models.CASCADE, related_name="notifications")
    event = models.CharField(max_length=10, choices=NotificationChannel.Event.choices)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [models.UniqueConstraint(fields=["escalation", "event", "channel"], name="notification_once")]
        indexes = [models.Index(fields=["event", "status"], name="notification_event_status")]  # /metrics

    def __str__(self) -> str:
        return f"{self.event} of escalation {self.escalation_id} to {self.channel_id} ({self.status})"


class HoldingStatement(models.Model):
    """A statement for an incident that ops may publish with one click when a deadline is breached.

    Written or approved by an admin; approval runs the patch guard against the incident's facts of
    that moment and records the version it passed on (``reviewer.alerts.deadlines.approve_holding_statement``)."""

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="holding_statements")
    text = models.TextField()
    written_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    approved_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                    related_name="+")
    approved_at = models.DateTimeField(null=True, blank=True)
    approved_version = models.ForeignKey(IncidentVersion, null=True, blank=True, on_delete=models.SET_NULL,
                                         related_name="+")
    guard = models.JSONField(default=dict, blank=True)  # the guard's result at approval
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-approved_at", "-created_at", "-id"]

    def __str__(self) -> str:
        return f"Holding statement {self.pk} for {self.incident_id}"


class DeadlineBreach(models.Model):
    """A deadline that passed while the escalation still waited: recorded once, counted on the
    dashboard. It decides nothing; ``published`` is set when ops published the holding statement."""

    escalation = models.OneToOneField(Escalation, on_delete=models.CASCADE, related_name="breach")
    deadline_at = models.DateTimeField()
    at = models.DateTimeField(default=timezone.now, db_index=True)
    holding_statement = models.ForeignKey(HoldingStatement, null=True, blank=True, on_delete=models.SET_NULL,
                                          related_name="+")
    published_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+")
    published_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        return f"Deadline breach of escalation {self.escalation_id}"

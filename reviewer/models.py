"""Incidents, runs and what people decide about them.

A run row is created when someone asks for a run (status ``queued``); the worker's observer writes
its trace steps and model calls while it is in flight; the result lands on the row at the end. An
escalation is opened for the stops a person must decide (SPEC §7); decisions are append-only.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

PIPELINES = [("reflection", "Reflection"), ("self_critique", "Self-critique"), ("routing", "Routing")]


class Incident(models.Model):
    """An incident and the facts a text pipeline may use (the context of SPEC §3.3)."""

    incident_id = models.SlugField(max_length=64, unique=True, help_text="e.g. inc_pay_2041")
    title = models.CharField(max_length=200)
    report_date = models.DateField(default=timezone.localdate)
    region = models.CharField(max_length=32, blank=True)
    severity = models.CharField(max_length=8, blank=True, help_text="P0-P5")
    status = models.CharField(max_length=200, blank=True, help_text="e.g. degraded, mitigated")
    affected_checkout_pct = models.FloatField(null=True, blank=True)
    failed_payment_rate = models.FloatField(null=True, blank=True, help_text="A ratio: 0.034 is 3.4%")
    chargeback_alerts = models.PositiveIntegerField(null=True, blank=True)
    eta_minutes = models.PositiveIntegerField(null=True, blank=True)
    policy_hints = models.JSONField(default=dict, blank=True)
    approved_actions = models.JSONField(default=list, blank=True)
    key_messages = models.JSONField(default=list, blank=True, help_text="Sentences ops wants in the update")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-report_date", "incident_id"]

    def __str__(self) -> str:
        return f"{self.incident_id}: {self.title}"


    def context(self) -> dict:
        """The run context, in the shape the pipelines read; unset facts are left out."""
        facts = {
            "incident_id": self.incident_id,
            "severity": self.severity,
            "status": self.status,
            "affected_checkout_pct": self.affected_checkout_pct,
            "failed_payment_rate": self.failed_payment_rate,
            "chargeback_alerts": self.chargeback_alerts,
            "eta_minutes": self.eta_minutes,
        }
        context = {
            "report_date": self.report_date.isoformat(),
            "region": self.region,
            "incident": {k: v for k, v in facts.items() if v not in (None, "")},
            "policy_hints": self.policy_hints or {},
            "approved_actions": self.approved_actions or [],
        }
        if self.key_messages:
            context["key_messages"] = self.key_messages
        return context


class Run(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        OK = "ok"
        STOPPED = "stopped"
        INTERRUPTED = "interrupted"

    IN_FLIGHT = (Status.QUEUED, Status.RUNNING)

    pipeline = models.CharField(max_length=20, choices=PIPELINES)
    goal = models.TextField()
    incident = models.ForeignKey(Incident, null=True, blank=True, on_delete=models.PROTECT, related_name="runs")
    context = models.JSONField(default=dict, blank=True)  # the snapshot the run used
    policy = models.JSONField(default=dict)  # the policy snapshot the run ran under
    model_label = models.CharField(max_length=200, blank=True)
    endpoint = models.CharField(max_length=300, blank=True)

    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED)
    stop_reason = models.CharField(max_length=200, blank=True)
    phase = models.CharField(max_length=20, blank=True)
    outcome = models.CharField(max_length=40, blank=True)
    answer = models.TextField(blank=True)
    selected_route = models.CharField(max_length=100, blank=True)
    escalation_reason = models.TextField(blank=True)
    candidate = models.TextField(blank=True)  # the text a gate blocked
    guard = models.JSONField(null=True, blank=True)
    details = models.JSONField(default=dict, blank=True)

    triggered_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="runs")
    idempotency_key = models.CharField(max_length=200, blank=True)
    retry_of = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="retries")

    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    worker = models.CharField(max_length=200, blank=True)
    deliveries = models.PositiveIntegerField(default=0)
    duration_ms = models.FloatField(null=True, blank=True)

    model_calls = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=0)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["incident", "-created_at"], name="run_incident_newest"),
            models.Index(fields=["stop_reason", "-created_at"], name="run_stop_reason_newest"),
            models.Index(fields=["status", "heartbeat_at"], name="run_status_heartbeat"),
            models.Index(fields=["-created_at"], name="run_newest"),
            # The dashboard's counts by status and stop reason over a time window, index-only.
            models.Index(fields=["created_at", "status", "stop_reason"], name="run_window_counts"),
        ]
        permissions = [("start_run", "Can start pipeline runs")]
        constraints = [
            models.UniqueConstraint(fields=["triggered_by", "idempotency_key"], condition=~models.Q(idempotency_key=""),
                                    name="run_idempotency_key_per_user"),
        ]

    def __str__(self) -> str:
        return f"Run {self.pk} ({self.pipeline}, {self.status})"


    @property
    def in_flight(self) -> bool:
        return self.status in self.IN_FLIGHT


class TraceStep(models.Model):
    """One completed step, written by the observer while the run is in flight."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="steps")
    index = models.PositiveIntegerField()
    phase = models.CharField(max_length=20)
    status = models.CharField(max_length=12)  # ok, stopped, retry
    stop_reason = models.CharField(max_length=200, blank=True)
    decision = models.CharField(max_length=20, blank=True)
    duration_ms = models.FloatField(default=0)
    measurements = models.JSONField(default=dict, blank=True)
    output = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["run", "index"]
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="trace_step_once")]


class ModelCall(models.Model):
    """One request to the model endpoint (each transport retry is its own row)."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="calls")
    stage = models.CharField(max_length=20)
    attempt = models.PositiveIntegerField(default=1)
    try_number = models.PositiveIntegerField(default=1)
    delivery = models.PositiveIntegerField(default=1)  # which delivery of the run's task made it
    model = models.CharField(max_length=200)
    latency_ms = models.FloatField(default=0)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    outcome = models.CharField(max_length=200, default="ok")
    raw = models.TextField(blank=True)  # kept whole for audit
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["run", "id"]


class Review(models.Model):
    """The reviewer model's verdict (reflection review or self-critique), as the gateway accepted it."""

    class Kind(models.TextChoices):
        REVIEW = "review"
        CRITIQUE = "critique"

    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="review")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    decision = models.CharField(max_length=20)
    severity = models.CharField(max_length=10, blank=True)
    issues = models.JSONField(default=list, blank=True)  # issues or risks: [{type, note}]
    instructions = models.JSONField(default=list, blank=True)  # fix plan or required changes
    reason = models.TextField(blank=True)
    quality = models.CharField(max_length=20, blank=True)
    completeness = models.CharField(max_length=20, blank=True)


class AuditDiff(models.Model):
    run = models.OneToOneField(Run, on_delete=models.CASCADE, related_name="audit")
    before_text = models.TextField()
    after_text = models.TextField()
    changed = models.BooleanField()
    before_hash = models.CharField(max_length=12)
    after_hash = models.CharField(max_length=12)
    before_chars = models.PositiveIntegerField()
    after_chars = models.PositiveIntegerField()
    delta = models.IntegerField()
    length_increase_pct = models.FloatField()
    risks_count = models.PositiveIntegerField(default=0)
    required_changes_count = models.PositiveIntegerField(default=0)
    diff_unit = models.CharField(max_length=10)
    unified_diff = models.TextField(blank=True)
    diff_excerpt = models.JSONField(default=list, blank=True)


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

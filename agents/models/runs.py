"""Runs and their records: the steps the observer writes while a run is in flight, each request to
the model, the reviewer model's verdict and the audit of a revision."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ObjectDoesNotExist
from django.db import models
from django.db.models.functions import Coalesce
from django.utils import timezone

from agents.core.policy import PIPELINE_CHOICES
from agents.core.stops import escalating_reasons, opens_escalation
from agents.models.incidents import Incident


def since(window: str | None, now=None):
    """The earliest ``created_at`` of a time window (``today``, ``24h``, ``7d``); None for any time."""
    now = now or timezone.now()
    if window == "today":
        return timezone.localtime(now).replace(hour=0, minute=0, second=0, microsecond=0)
    if window == "24h":
        return now - timedelta(hours=24)
    if window == "7d":
        return now - timedelta(days=7)
    return None


# The run list's pseudo-status for "queued or running".
IN_FLIGHT_FILTER = "in_flight"


class RunQuerySet(models.QuerySet):
    def since(self, window: str | None):
        cutoff = since(window)
        return self if cutoff is None else self.filter(created_at__gte=cutoff)

    def filtered(self, *, stop_reason: str = "", status: str = "", pipeline: str = "", since: str | None = None):
        """The run list's filters; ``status`` may also be ``in_flight`` (queued or running)."""
        runs = self.since(since)
        if stop_reason:
            runs = runs.filter(stop_reason=stop_reason)
        if status == IN_FLIGHT_FILTER:
            runs = runs.filter(status__in=Run.IN_FLIGHT)
        elif status:
            runs = runs.filter(status=status)
        if pipeline:
            runs = runs.filter(pipeline=pipeline)
        return runs

    def retry_counts(self, pks: list[int]) -> dict[int, int]:
        """How many retries each of these runs has, in one query (not a join over every listed run)."""
        rows = self.filter(retry_of_id__in=pks).order_by().values("retry_of_id").annotate(n=models.Count("id"))
        return {row["retry_of_id"]: row["n"] for row in rows}

    def failed(self):
        """The runs :attr:`Run.failed` accepts, as one filter (``opens_escalation``'s rule as SQL, read by
        the ``run_status_reason`` index; no pass over the stored reasons first)."""
        exact, prefixes = escalating_reasons()
        escalating = models.Q(stop_reason__in=exact)
        for prefix in prefixes:
            escalating |= models.Q(stop_reason__startswith=prefix)
        return self.filter((models.Q(status=Run.Status.STOPPED) & ~escalating)
                           | models.Q(status=Run.Status.INTERRUPTED))


class Run(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        OK = "ok"
        STOPPED = "stopped"
        INTERRUPTED = "interrupted"

    IN_FLIGHT = (Status.QUEUED, Status.RUNNING)

    pipeline = models.CharField(max_length=20, choices=PIPELINE_CHOICES)
    goal = models.TextField()
    incident = models.ForeignKey(Incident, null=True, blank=True, on_delete=models.PROTECT, related_name="runs")
    incident_version = models.ForeignKey("IncidentVersion", null=True, blank=True, on_delete=models.PROTECT,
                                         related_name="runs")  # the version of the facts the run ran on
    context = models.JSONField(default=dict, blank=True)  # the snapshot the run used
    policy = models.JSONField(default=dict)  # the policy snapshot the run ran under
    model_label = models.CharField(max_length=200, blank=True)
    endpoint = models.CharField(max_length=300, blank=True)

    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED)
    stop_reason = models.CharField(max_length=200, blank=True)
    phase = models.CharField(max_length=20, blank=True)
    # While in flight: the stage whose model call is waiting for an answer, and that call's number in
    # the run ("revising (model call 3)…" on the run page); cleared when a step ends.
    working_on = models.CharField(max_length=20, blank=True)
    working_call = models.PositiveIntegerField(null=True, blank=True)
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
    # With tracing on (docs/operations.md, Tracing), W3C traceparents: the span that started the run
    # (the web request; the worker's run span is its child, whenever and wherever it runs), and the
    # run's own span (a lead's decision on the run is recorded under it). "" with tracing off.
    trace_parent = models.CharField(max_length=55, blank=True)
    trace_span = models.CharField(max_length=55, blank=True)

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

    objects = RunQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["incident", "-created_at"], name="run_incident_newest"),
            models.Index(fields=["stop_reason", "-created_at"], name="run_stop_reason_newest"),
            models.Index(fields=["status", "heartbeat_at"], name="run_status_heartbeat"),
            models.Index(fields=["-created_at"], name="run_newest"),
            # The dashboard's counts by status and stop reason over a time window, index-only.
            models.Index(fields=["created_at", "status", "stop_reason"], name="run_window_counts"),
            # failed runs: their count, and the page's ids sorted without reading the wide rows
            models.Index(fields=["status", "stop_reason", "created_at"], name="run_failed_newest"),
            # /metrics: runs, durations and tokens by pipeline and stop reason, read from this index alone
            # (reviewer/operations/metrics.py), not from the wide rows.
            models.Index(fields=["pipeline", "status", "stop_reason", "duration_ms", "prompt_tokens",
                                 "completion_tokens"], name="run_metrics"),
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

    @property
    def failed(self) -> bool:
        """A failed run is retried, not decided: interrupted, or stopped by a reason that opens no escalation."""
        if self.status == Run.Status.INTERRUPTED:
            return True
        return self.status == Run.Status.STOPPED and not opens_escalation(self.stop_reason)

    def show_progress(self, steps, calls, usage: dict | None = None) -> None:
        """While the run is in flight, its phase and usage as its stored steps and model calls say.

        The observer writes only those rows while a run is in flight (one INSERT per step or call,
        no UPDATE of the run); ``record_result`` writes the final phase and totals on the run.
        ``usage`` (``call_usage()``) counts every call when ``calls`` are only the newest ones.
        """
        if not self.in_flight:
            return
        if steps:
            self.phase = steps[-1].phase
        if usage is None:
            usage = {"model_calls": len(calls), "prompt_tokens": sum(c.prompt_tokens for c in calls),
                     "completion_tokens": sum(c.completion_tokens for c in calls)}
        self.model_calls = usage["model_calls"]
        self.prompt_tokens = usage["prompt_tokens"]
        self.completion_tokens = usage["completion_tokens"]

    def call_usage(self) -> dict:
        """The number of its model calls and their tokens, counted in the database (one query)."""
        return self.calls.aggregate(model_calls=models.Count("id"),
                                    prompt_tokens=Coalesce(models.Sum("prompt_tokens"), 0),
                                    completion_tokens=Coalesce(models.Sum("completion_tokens"), 0))

    def related(self, name: str):
        """A reverse one-to-one (``review``, ``audit``, ``escalation``) or None when there is none."""
        try:
            return getattr(self, name)
        except ObjectDoesNotExist:
            return None


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
        ordering = ["run_id", "index"]  # run_id, not run: no join to order by the run's own ordering
        constraints = [models.UniqueConstraint(fields=["run", "index"], name="trace_step_once")]

    def __str__(self) -> str:
        return f"Run {self.run_id} step {self.index} ({self.phase}, {self.status})"



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
    note = models.TextField(blank=True)  # what the server did unasked (e.g. answered without the tool)
    # The request's messages as sent ([{"role": "system", "content": ...}, {"role": "user", ...}]),
    # keys redacted like every stored text; empty for calls recorded before requests were kept.
    request = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["run_id", "id"]
        # /metrics (reviewer/operations/metrics.py): the latency histogram by outcome read from an index alone, in
        # order; the calls of the breaker's cool-down found by time.
        indexes = [models.Index(fields=["outcome", "latency_ms"], name="model_call_latency"),
                   models.Index(fields=["created_at"], name="model_call_created")]

    def __str__(self) -> str:
        return f"Run {self.run_id} {self.stage} call (attempt {self.attempt}, try {self.try_number})"



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

    def __str__(self) -> str:
        return f"{self.get_kind_display()} of run {self.run_id}: {self.decision}"



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

    def __str__(self) -> str:
        return f"Audit of run {self.run_id} ({self.before_hash} -> {self.after_hash})"

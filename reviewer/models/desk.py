"""The desk's records: escalations (the stops a person must decide), the append-only decisions
on them and a lead's requests for changes (docs/contract.md, 'Escalations and decisions').

An escalation is opened for the stops a person must decide (``reviewer.desk.decisions.open_escalation``
listens for finished runs); it is decided exactly once, by a conditional update, and decisions are
never edited. The runs themselves, their trace and the incidents they ran on belong to the agents app.
"""

from __future__ import annotations

import json

from django.conf import settings
from django.db import models
from django.db.models.fields.json import KeyTextTransform, KeyTransform
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.functional import cached_property

from agents.core.stops import explain, stopped_by_brake
from agents.core.text import normalize
from agents.models import IncidentVersion, Run, changes_text, fact_changes
from reviewer.models.approvals import Approval


class SecondsBetween(models.Func):
    """Seconds from ``start`` to ``end``, to the millisecond, in the database's own arithmetic: Django's
    difference of two datetimes calls a Python function for each row on SQLite (13 s for the review
    analytics at 100,000 decisions); SQLite's julianday() and PostgreSQL's EXTRACT(EPOCH) do not."""

    output_field = models.FloatField()
    arity = 2

    def as_sql(self, compiler, connection, **extra_context):
        start, end = (compiler.compile(expression) for expression in self.source_expressions)
        sql = f"ROUND(EXTRACT(EPOCH FROM ({end[0]} - {start[0]}))::numeric, 3)::double precision"
        return sql, (*end[1], *start[1])

    def as_sqlite(self, compiler, connection, **extra_context):
        start, end = (compiler.compile(expression) for expression in self.source_expressions)
        return f"ROUND((julianday({end[0]}) - julianday({start[0]})) * 86400.0, 3)", (*end[1], *start[1])


# How a decided escalation ended, for the review analytics (EscalationQuerySet.with_outcome).
REVIEW_OUTCOMES = ("as_is", "edited", "changes_requested", "rejected")
# The decisions by which a person wrote the text to approve.
PERSON_WROTE = ("edit_approve", "edit")


class EscalationQuerySet(models.QuerySet):
    def pending(self):
        return self.filter(status=Escalation.Status.PENDING)

    def decided(self):
        return self.exclude(status=Escalation.Status.PENDING)

    def awake(self, now=None):
        """Not snoozed, or snoozed until a time that has come: a snooze ends by itself."""
        return self.filter(models.Q(snoozed_until__isnull=True) | models.Q(snoozed_until__lte=now or timezone.now()))

    def snoozed(self, now=None):
        """Snoozed ("Not now") until a time still to come."""
        return self.filter(snoozed_until__gt=now or timezone.now())

    def filtered(self, *, pipeline: str = "", stop_reason: str = "", taken_by=None):
        """The inbox's filters."""
        rows = self
        if pipeline:
            rows = rows.filter(run__pipeline=pipeline)
        if stop_reason:
            rows = rows.filter(stop_reason=stop_reason)
        if taken_by is not None:
            rows = rows.filter(taken_by=taken_by)
        return rows

    def by_deadline(self):
        """The inbox's order: least time left first; escalations without a deadline after, oldest first."""
        return self.order_by(models.F("deadline_at").asc(nulls_last=True), "opened_at", "id")

    def for_list(self):
        """What a list row needs: the run and incident without the run's large JSON columns, the
        incident's newest version (to say when its facts changed since the run) and the approvals
        counted so far on the current text."""
        return (self.select_related("run", "run__incident", "run__incident_version", "taken_by", "decided_by")
                .defer("run__context", "run__policy", "run__details", "run__guard")
                .with_latest_facts().with_approvals())

    def with_approvals(self, viewer=None):
        """The approvals counted on each current text; with ``viewer``, whether they gave one of them."""
        current = Approval.objects.filter(escalation=models.OuterRef("pk"), superseded_at__isnull=True,
                                          text_version=models.OuterRef("text_version"))
        counted = current.order_by().values("escalation").annotate(n=models.Count("pk")).values("n")
        rows = self.annotate(current_approvals=models.Subquery(counted[:1]))
        if viewer is not None:
            rows = rows.annotate(approved_by_viewer=models.Exists(current.filter(user=viewer)))
        return rows

    # -- the review analytics (reviewer.desk.analytics, /metrics; docs/analytics.md)

    def with_outcome(self):
        """``review_outcome`` of each decided escalation, one of :data:`REVIEW_OUTCOMES`: ``rejected``; else
        ``edited`` when a person wrote a version of the text (edit then approve, or an edit under a
        quorum); else ``changes_requested`` when a lead asked the model for a revision; else ``as_is``."""
        acted = Decision.objects.filter(escalation=models.OuterRef("pk"))
        return self.annotate(review_outcome=models.Case(
            models.When(status=Escalation.Status.REJECTED, then=models.Value("rejected")),
            models.When(models.Exists(acted.filter(action__in=PERSON_WROTE)), then=models.Value("edited")),
            models.When(models.Exists(acted.filter(action=Decision.Action.REQUEST_CHANGES)),
                        then=models.Value("changes_requested")),
            default=models.Value("as_is")))

    def with_decision_time(self):
        """``decision_seconds``: from the escalation's opening to its final decision, to the millisecond
        (None while pending), and ``severity``: the incident's severity as the run saw it ("" for a run
        on no incident)."""
        return self.annotate(
            decision_seconds=SecondsBetween("opened_at", "decided_at"),
            severity=Coalesce(KeyTextTransform("severity", KeyTransform("incident", "run__context")), models.Value(""),
                              output_field=models.CharField()))

    def with_agreement(self):
        """Whether the approvers of each escalation agreed: ``changed_after_approval`` when an approval
        was set aside by a later change of the text (an edit, a request for changes, a revision), and
        ``rejected_after_approval`` when it was rejected while an approval stood on its text."""
        given = Approval.objects.filter(escalation=models.OuterRef("pk"))
        rejected = models.Q(status=Escalation.Status.REJECTED) & models.Q(
            models.Exists(given.filter(superseded_at__isnull=True)))
        return self.annotate(
            changed_after_approval=models.Exists(given.filter(superseded_at__isnull=False)),
            rejected_after_approval=models.ExpressionWrapper(rejected, output_field=models.BooleanField()))

    def with_latest_facts(self):
        newest = IncidentVersion.objects.filter(incident=models.OuterRef("run__incident")).order_by("-number")
        return self.annotate(latest_version_number=models.Subquery(newest.values("number")[:1]),
                             latest_version_snapshot=models.Subquery(newest.values("snapshot")[:1]))


class Escalation(models.Model):
    """A stop a person must decide. Decided exactly once, by a conditional update."""

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
    taken_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="taken_escalations")
    taken_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="decided_escalations")
    decided_at = models.DateTimeField(null=True, blank=True)
    final_text = models.TextField(blank=True)
    # The deadline (reviewer.alerts.deadlines): set when it opens, from the DeadlineRule that fits; the sweep
    # takes each event once by a conditional update of its field.
    deadline_at = models.DateTimeField(null=True, blank=True)
    remind_at = models.DateTimeField(null=True, blank=True)
    notified_at = models.DateTimeField(null=True, blank=True)
    reminded_at = models.DateTimeField(null=True, blank=True)
    breached_at = models.DateTimeField(null=True, blank=True)
    # How many people must approve (reviewer.desk.approvals): fixed when it opens, from the strictest
    # ApprovalRule that fits, so editing a rule later never changes what a pending escalation needs.
    required_approvals = models.PositiveSmallIntegerField(default=1)
    approval_group = models.ForeignKey("auth.Group", null=True, blank=True, on_delete=models.PROTECT,
                                       related_name="+", help_text="Whose approvals count; none: support leads.")
    approval_rule = models.ForeignKey("ApprovalRule", null=True, blank=True, on_delete=models.SET_NULL,
                                      related_name="escalations")
    approval_rule_text = models.CharField(max_length=300, blank=True)  # the rule as it read when it applied
    # The version of the text under review: raised by an edit, a requested revision and a request for
    # changes; approvals count on the current version only. text_by: who wrote that version (None: the model).
    text_version = models.PositiveIntegerField(default=1)
    text_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                related_name="+")
    # "Not now" (reviewer.desk.snoozing): out of the inbox until this time, undecided; the Snooze rows keep
    # who and when. Nothing clears it when the time comes: the inbox compares it with the clock.
    snoozed_until = models.DateTimeField(null=True, blank=True)

    objects = EscalationQuerySet.as_manager()

    class Meta:
        ordering = ["opened_at", "id"]
        indexes = [
            models.Index(fields=["status", "opened_at"], name="escalation_pending_by_age"),
            models.Index(fields=["status", "taken_by", "opened_at"], name="escalation_taken_by_age"),
            models.Index(fields=["status", "stop_reason", "opened_at"], name="escalation_reason_by_age"),
            models.Index(fields=["-decided_at"], name="escalation_decided_newest"),
            # The inbox's order (by_deadline) read from the index, so a page reads its rows in order
            # instead of sorting every pending escalation (and the deadline sweep's range, as before).
            models.Index(fields=["status", "deadline_at", "opened_at"], name="escalation_inbox_order"),
        ]
        permissions = [("decide_escalation", "Can decide escalations")]

    def __str__(self) -> str:
        return f"Escalation {self.pk} ({self.stop_reason}, {self.status})"

    @property
    def explanation(self) -> str:
        return explain(self.stop_reason)

    @property
    def stopped_by_brake(self) -> bool:
        """Opened because the emergency brake (auto-revision off) denied the revision the reviewer asked for."""
        return stopped_by_brake(self.stop_reason)

    @cached_property
    def facts_changes(self) -> list[dict]:
        """What changed in the incident's facts since the run drafted this text ([] if nothing did,
        or the run recorded no version)."""
        ran_on = self.run.incident_version if self.run.incident_version_id else None
        if ran_on is None:
            return []
        if hasattr(self, "latest_version_number"):
            number, snapshot = self.latest_version_number, self.latest_version_snapshot
            if isinstance(snapshot, str):  # a JSON column read through a subquery on SQLite
                snapshot = json.loads(snapshot)
        else:
            latest = ran_on.incident.latest_version()
            number, snapshot = latest.number, latest.snapshot
        if number is None or number == ran_on.number:
            return []
        return fact_changes(ran_on.snapshot, snapshot)

    @property
    def facts_changed_text(self) -> str:
        return changes_text(self.facts_changes)

    @property
    def outcome(self) -> str:
        """How it ended, in one word: pending, approved, edited (approved with a changed text) or rejected."""
        if self.status == self.Status.APPROVED and normalize(self.final_text) != normalize(self.candidate):
            return "edited"
        return self.status

    @cached_property
    def approval(self) -> Decision | None:
        """The decision that approved the text (approve, or edit then approve); None until there is one."""
        if self.status != self.Status.APPROVED:
            return None
        # Read from all(): a list that prefetched the decisions (the publish queue) asks no query per row.
        approvals = [d for d in self.decisions.all()
                     if d.action in (Decision.Action.APPROVE, Decision.Action.EDIT_APPROVE)]
        return max(approvals, key=lambda d: (d.at, d.pk), default=None)

    @property
    def overridden(self) -> list[dict]:
        """The guard's findings the approving lead overrode: each ``check``, ``message`` and ``found``
        of the approved text's check, and a grounding finding's ``sentence``, ``words`` and ``reading``
        ([] when it passed, or nothing is approved)."""
        decision = self.approval
        if decision is None:
            return []
        return [{"check": v.get("check", ""), "message": v.get("message", ""), "found": v.get("found") or "",
                 **{key: v[key] for key in ("sentence", "words", "reading") if key in v}}
                for v in (decision.guard_results or {}).get("violations") or [] if isinstance(v, dict)]

    @property
    def under_quorum(self) -> bool:
        """More than one person must approve the text."""
        return self.required_approvals > 1

    @cached_property
    def approvals_so_far(self) -> int:
        """Approvals counted on the current text (an annotation of the inbox's list, else one query)."""
        if hasattr(self, "current_approvals"):
            return self.current_approvals or 0
        return self.approvals.filter(text_version=self.text_version, superseded_at__isnull=True).count()

    @property
    def is_snoozed(self) -> bool:
        return (self.status == self.Status.PENDING and self.snoozed_until is not None
                and self.snoozed_until > timezone.now())

    @property
    def summary(self) -> str:
        """One line for a list: the reviewer's reason, else the first guard message, else the explanation."""
        violations = (self.guard or {}).get("violations") or [{}]
        return self.reason or violations[0].get("message") or self.explanation



class Decision(models.Model):
    """An append-only record of what a person decided. Never edited. A decided escalation is final: what
    corrects a published text is the incident's next update, not another decision."""

    class Action(models.TextChoices):
        APPROVE = "approve"
        EDIT_APPROVE = "edit_approve", "edit then approve"
        REJECT = "reject"
        # Not a final decision: the lead's instructions (the note) go back to the model for one
        # revision (a ChangeRequest linked to this record); the escalation stays pending.
        REQUEST_CHANGES = "request_changes", "request changes"
        # Not a final decision either: under a quorum an edit replaces the text to approve; the
        # editor's own approval does not count (reviewer.desk.approvals).
        EDIT = "edit", "edit (for others to approve)"

    escalation = models.ForeignKey(Escalation, on_delete=models.PROTECT, related_name="decisions")
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="decisions")
    at = models.DateTimeField(default=timezone.now)
    action = models.CharField(max_length=20, choices=Action.choices)
    final_text = models.TextField(blank=True)
    guard_results = models.JSONField(default=dict, blank=True)
    note = models.TextField(blank=True)  # the rejection reason or the justification for overriding the guard
    # What an approval was checked under: the hash of the approved text (agents.core.text.text_hash),
    # the incident's version of the facts when it was decided, and the run's policy snapshot.
    text_hash = models.CharField(max_length=12, blank=True)
    incident_version = models.ForeignKey(IncidentVersion, null=True, blank=True, on_delete=models.PROTECT,
                                         related_name="decisions")
    policy = models.JSONField(default=dict, blank=True)
    # An approval covers the set: the sha256 of the approved text and of each translation, by language
    # ("en" the source; reviewer.outbox.translations). Publishing refuses a set that differs.
    translation_hashes = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["at", "id"]
        permissions = [("export_decisions", "Can export decisions as datasets")]
        indexes = [models.Index(fields=["action"], name="decision_action")]  # /metrics counts from it alone

    def __str__(self) -> str:
        return f"{self.get_action_display()} by {self.actor} on escalation {self.escalation_id}"


class Snooze(models.Model):
    """A lead's "Not now" on a pending escalation: out of the inbox until ``until``, undecided. Kept as
    history; ``ended_at`` is set when a lead brings it back early ("Back now")."""

    escalation = models.ForeignKey(Escalation, on_delete=models.PROTECT, related_name="snoozes")
    by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField(default=timezone.now)
    until = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)
    ended_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                 related_name="+")

    class Meta:
        ordering = ["at", "id"]

    def __str__(self) -> str:
        return f"Snooze of escalation {self.escalation_id} until {self.until:%Y-%m-%d %H:%M} by {self.by}"


class ChangeRequest(models.Model):
    """A lead's request for changes: written instructions for one model revision of the
    escalated text, checked by the patch guard, coming back to the same escalation. Recorded with
    the Decision ("request_changes") that asked for it; the result (the revision, the guard's
    results, the model calls and the trace) is written once by the worker."""

    class Status(models.TextChoices):
        QUEUED = "queued"
        RUNNING = "running"
        DONE = "done", "revised"  # a revision came back (ok or blocked by the guard)
        FAILED = "failed"  # no revision: the model failed; the escalation is unchanged

    IN_FLIGHT = (Status.QUEUED, Status.RUNNING)

    escalation = models.ForeignKey(Escalation, on_delete=models.PROTECT, related_name="change_requests")
    decision = models.OneToOneField(Decision, on_delete=models.PROTECT, related_name="change_request")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    requested_at = models.DateTimeField(default=timezone.now)
    instructions = models.TextField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    text_before = models.TextField(blank=True)  # the candidate the instructions apply to
    revision = models.TextField(blank=True)  # what the model wrote (kept when the guard blocked it)
    ok = models.BooleanField(default=False)  # the revision passed the guard and became the candidate
    stop_reason = models.CharField(max_length=200, blank=True)
    guard = models.JSONField(null=True, blank=True)
    policy = models.JSONField(default=dict, blank=True)  # which policy the check used (decisions.policy_now)
    trace = models.JSONField(default=list, blank=True)
    calls = models.JSONField(default=list, blank=True)  # each model request: stage, model, latency, tokens
    details = models.JSONField(default=dict, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["requested_at", "id"]
        constraints = [
            # One request in flight per escalation, whatever the race.
            models.UniqueConstraint(fields=["escalation"], condition=models.Q(status__in=["queued", "running"]),
                                    name="one_change_request_in_flight"),
        ]

    def __str__(self) -> str:
        return f"Change request {self.pk} on escalation {self.escalation_id} ({self.status})"

    @property
    def in_flight(self) -> bool:
        return self.status in self.IN_FLIGHT

    @property
    def explanation(self) -> str:
        return explain(self.stop_reason) if self.stop_reason else ""

    @property
    def violations(self) -> list:
        return (self.guard or {}).get("violations") or []

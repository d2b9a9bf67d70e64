"""What people decide about runs: escalations and the append-only decisions
(docs/contract.md, 'Escalations and decisions').

An escalation is opened for the stops a person must decide (``reviewer.escalations`` listens for
finished runs); it is decided exactly once, by a conditional update, and decisions are never edited.
The runs themselves, their trace and the incidents they ran on belong to the agents app.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import uuid
from datetime import UTC, timedelta

import pgtrigger
from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone
from django.utils.functional import cached_property

from agents.core.policy import PIPELINE_CHOICES
from agents.core.stops import explain, stopped_by_brake
from agents.core.text import normalize
from agents.models import Incident, IncidentVersion, Run, changes_text, fact_changes
from agents.models.incidents import STATES
from reviewer.roles import ROLE_PERMISSIONS


class EscalationQuerySet(models.QuerySet):
    def pending(self):
        return self.filter(status=Escalation.Status.PENDING)

    def decided(self):
        return self.exclude(status=Escalation.Status.PENDING)

    def filtered(self, *, pipeline: str = "", stop_reason: str = "", claimed_by=None):
        """The inbox's filters."""
        rows = self
        if pipeline:
            rows = rows.filter(run__pipeline=pipeline)
        if stop_reason:
            rows = rows.filter(stop_reason=stop_reason)
        if claimed_by is not None:
            rows = rows.filter(claimed_by=claimed_by)
        return rows

    def by_deadline(self):
        """The inbox's order: least time left first; escalations without a deadline after, oldest first."""
        return self.order_by(models.F("deadline_at").asc(nulls_last=True), "opened_at", "id")

    def for_list(self):
        """What a list row needs: the run and incident without the run's large JSON columns, the
        incident's newest version (to say when its facts changed since the run) and the approvals
        counted so far on the current text."""
        return (self.select_related("run", "run__incident", "run__incident_version", "claimed_by", "decided_by")
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
    claimed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="claimed_escalations")
    claimed_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="decided_escalations")
    decided_at = models.DateTimeField(null=True, blank=True)
    final_text = models.TextField(blank=True)
    # The deadline (reviewer.alerts.deadlines): set when it opens, from the DeadlineRule that fits; the sweep
    # claims each event once by a conditional update of its field.
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

    objects = EscalationQuerySet.as_manager()

    class Meta:
        ordering = ["opened_at", "id"]
        indexes = [
            models.Index(fields=["status", "opened_at"], name="escalation_pending_by_age"),
            models.Index(fields=["status", "claimed_by", "opened_at"], name="escalation_claimed_by_age"),
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
        of the approved text's check, and a grounding finding's ``sentence`` and ``words`` ([] when it
        passed, or nothing is approved)."""
        decision = self.approval
        if decision is None:
            return []
        return [{"check": v.get("check", ""), "message": v.get("message", ""), "found": v.get("found") or "",
                 **{key: v[key] for key in ("sentence", "words") if key in v}}
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
    corrects = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="corrections")

    class Meta:
        ordering = ["at", "id"]
        permissions = [("export_decisions", "Can export decisions as datasets")]
        indexes = [models.Index(fields=["action"], name="decision_action")]  # /metrics counts from it alone

    def __str__(self) -> str:
        return f"{self.get_action_display()} by {self.actor} on escalation {self.escalation_id}"


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

    escalation = models.ForeignKey(Escalation, on_delete=models.PROTECT, related_name="approvals")
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


class ApiToken(models.Model):
    """A per-user token for the JSON API. Only its SHA-256 is stored: the token itself is
    shown once, when admin creates it. A request with it acts as its user, with the user's role."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, help_text="What uses it, e.g. “alerting webhook”.")
    prefix = models.CharField(max_length=12, editable=False)  # to recognise it in lists, never enough to use it
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)
    expires_at = models.DateTimeField(editable=False, help_text="API_TOKEN_DAYS after it was made.")

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name}, {self.user})"

    @staticmethod
    def digest(token: str) -> str:
        return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()

    @classmethod
    def issue(cls, user, name: str) -> tuple[ApiToken, str]:
        """A new token for ``user``: the row, and the token text (returned only this once)."""
        token = "gr_" + secrets.token_urlsafe(32)
        now = timezone.now()
        row = cls.objects.create(user=user, name=name, prefix=token[:10], key_hash=cls.digest(token), created_at=now,
                                 expires_at=now + timedelta(days=settings.API_TOKEN_DAYS))
        return row, token

    @classmethod
    def live(cls, token: str) -> ApiToken | None:
        """The token's row if it is not revoked and its user is active (expired or not), else None."""
        row = (cls.objects.select_related("user").filter(key_hash=cls.digest(token), revoked_at__isnull=True)
               .first())
        return row if row is not None and row.user.is_active else None

    @property
    def expired(self) -> bool:
        return self.expires_at <= timezone.now()

    @property
    def expires_text(self) -> str:
        return f"{timezone.localtime(self.expires_at, UTC):%Y-%m-%d %H:%M} UTC"

    @classmethod
    def user_for(cls, token: str):
        """The active user a live, unexpired token belongs to, or None."""
        row = cls.live(token)
        if row is None or row.expired:
            return None
        row.mark_used()
        return row.user

    def mark_used(self) -> None:
        ApiToken.objects.filter(pk=self.pk).update(last_used_at=timezone.now())

    @classmethod
    def revoke(cls, user, prefix: str) -> ApiToken | None:
        """Revoke ``user``'s live token that starts with ``prefix``; None when they have no such token."""
        row = cls.objects.filter(user=user, prefix=prefix, revoked_at__isnull=True).first()
        if row is not None:
            cls.objects.filter(pk=row.pk).update(revoked_at=timezone.now())
        return row


class ApiIdempotencyKey(models.Model):
    """An ``Idempotency-Key`` a user sent to start a run (IETF httpapi idempotency-key draft): the
    fingerprint of the request it came with, and the run once the request made one. A row without a
    run is a request still being processed."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=200)
    fingerprint = models.CharField(max_length=64)
    run = models.ForeignKey(Run, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="api_idempotency_key_once")]

    def __str__(self) -> str:
        return f"Idempotency-Key {self.key!r} of {self.user_id}"


# -- publishing (docs/contract.md, 'Publishing and the outbox') -----------------------------------


def status_page_name() -> str:
    """The name customers know the status page by (“Acme status”), in every email's subject."""
    return f"{settings.STATUS_PAGE_NAME} status"


def absolute_url(view_name: str, *args) -> str:
    """A page's address for a message that leaves the site (an email, a webhook), from ``SITE_URL``."""
    return settings.SITE_URL.rstrip("/") + reverse(view_name, args=args)


class DeliveryChannel(models.Model):
    """Where a published update goes. Holds a destination's NAME, never a URL or a secret: those come
    from the operator's allowlist in the environment (``reviewer.destinations``)."""

    class Kind(models.TextChoices):
        STATUS = "status", "public status page"
        WEBHOOK = "webhook", "generic webhook (signed)"
        SLACK = "slack", "Slack incoming webhook"
        EMAIL = "email", "email"
        SUBSCRIBERS = "subscribers", "status page subscribers (email)"

    NEEDS_DESTINATION = (Kind.WEBHOOK, Kind.SLACK)
    # A customer's inbox and a Slack channel cannot drop a message sent twice: these are sent at most once
    # (a send that may have gone out is held for a person); the webhook and the status page drop a
    # repeated Idempotency-Key, so they are sent at least once (docs/publishing.md, 'Delivery guarantees').
    AT_MOST_ONCE = (Kind.EMAIL, Kind.SUBSCRIBERS, Kind.SLACK)

    name = models.CharField(max_length=100, unique=True, help_text="e.g. “Status page”, “#ops-updates”.")
    kind = models.CharField(max_length=12, choices=Kind.choices)
    destination = models.CharField(
        max_length=50, blank=True,
        help_text="Webhook and Slack: one of the destinations the operator declared in OUTBOUND_DESTINATIONS "
                  "(their URLs and secrets stay in the environment).")
    recipients = models.TextField(
        blank=True, help_text="Email: one address per line (the mail server is the operator's EMAIL_HOST).")
    enabled = models.BooleanField(default=True, help_text="Published updates go to every enabled channel.")

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.get_kind_display()})"

    @property
    def recipient_list(self) -> list[str]:
        return [line.strip() for line in self.recipients.splitlines() if line.strip()]

    def clean(self):
        from django.core.exceptions import ValidationError
        from django.core.validators import validate_email

        from reviewer.destinations import names

        errors = {}
        if self.kind in self.NEEDS_DESTINATION:
            if not self.destination:
                errors["destination"] = "Choose one of the destinations declared in OUTBOUND_DESTINATIONS."
            elif self.destination not in names():
                errors["destination"] = (f"“{self.destination}” is not declared in OUTBOUND_DESTINATIONS "
                                         f"(declared: {', '.join(names()) or 'none'}).")
        elif self.destination:
            errors["destination"] = "Only webhook and Slack channels have a destination."
        if self.kind == self.Kind.EMAIL:
            if not self.recipient_list:
                errors["recipients"] = "An email channel needs at least one recipient."
            for address in self.recipient_list:
                try:
                    validate_email(address)
                except ValidationError:
                    errors["recipients"] = f"“{address[:100]}” is not an email address."
        elif self.recipients.strip():
            errors["recipients"] = "Only email channels have recipients."
        if self.kind == self.Kind.SUBSCRIBERS:
            other = DeliveryChannel.objects.filter(kind=self.kind).exclude(pk=self.pk).first()
            if other is not None:  # each subscriber gets an update once, from one channel
                errors["kind"] = f"“{other.name}” already sends to the status page's subscribers; one channel does."
        if errors:
            raise ValidationError(errors)


class ComponentStatus(models.TextChoices):
    """A component's status, named as status pages name them, from best to worst."""

    OPERATIONAL = "operational", "Operational"
    DEGRADED = "degraded_performance", "Degraded performance"
    PARTIAL = "partial_outage", "Partial outage"
    MAJOR = "major_outage", "Major outage"


class Impact(models.TextChoices):
    """An incident update's impact, as status pages name it, from least to most."""

    NONE = "none", "None"
    MINOR = "minor", "Minor"
    MAJOR = "major", "Major"
    CRITICAL = "critical", "Critical"


# The impact an update has when the person publishing it does not say: its worst component's.
IMPACT_OF_STATUS = {ComponentStatus.OPERATIONAL: Impact.NONE, ComponentStatus.DEGRADED: Impact.MINOR,
                    ComponentStatus.PARTIAL: Impact.MAJOR, ComponentStatus.MAJOR: Impact.CRITICAL}


# The public title of an incident's first update when nobody gave one (an automatic publication):
# words of the product's, never the incident's internal title.
DEFAULT_TITLE = "Service disruption"


def worst_status(statuses) -> str:
    """The worst of ``statuses`` (operational for none)."""
    order = list(ComponentStatus.values)
    return max(statuses, key=order.index, default=ComponentStatus.OPERATIONAL)


class StatusComponent(models.Model):
    """A part of the service customers know by name (“Checkout”, “Sign-in”, “API”). Its status on the
    status page is not stored here: it is what the latest published update of each unresolved
    incident says of it, the worst of them, and operational otherwise."""

    name = models.CharField(max_length=100, unique=True)
    description = models.CharField(max_length=200, blank=True, help_text="One line customers read under the name.")
    position = models.PositiveSmallIntegerField(default=0, help_text="Lower comes first on the status page.")

    class Meta:
        ordering = ["position", "name"]

    def __str__(self) -> str:
        return self.name


class PublishedUpdateQuerySet(models.QuerySet):
    def public(self):
        """The updates the public status page shows: those its status channel delivered."""
        delivered = Delivery.objects.filter(update=models.OuterRef("pk"), channel__kind=DeliveryChannel.Kind.STATUS,
                                            status=Delivery.Status.DELIVERED)
        return self.filter(models.Exists(delivered))

    def for_timeline(self):
        """Newest first, with who published, every delivery's channel (and subscriber) and the components, in
        three queries."""
        deliveries = (Delivery.objects.select_related("channel", "subscriber", "marked_sent_by")
                      .order_by("channel__name", "subscriber__email"))
        return (self.select_related("incident", "published_by", "source_run", "acknowledged_by")
                .order_by("-published_at", "-version")
                .prefetch_related(models.Prefetch("deliveries", queryset=deliveries),
                                  models.Prefetch("component_statuses",
                                                  queryset=UpdateComponent.objects.select_related("component"))))


class PublishedUpdate(models.Model):
    """One update of an incident as customers see it: version N of the incident's public text.
    Written by ``reviewer.outbox.publishing.publish`` together with its outbox rows; never edited."""

    incident = models.ForeignKey("agents.Incident", on_delete=models.PROTECT, related_name="published_updates")
    version = models.PositiveIntegerField()
    text = models.TextField()
    text_hash = models.CharField(max_length=12)
    source_run = models.ForeignKey(Run, null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="published_updates")
    escalation = models.ForeignKey(Escalation, null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="published_updates")
    incident_version = models.ForeignKey(IncidentVersion, null=True, blank=True, on_delete=models.PROTECT,
                                         related_name="published_updates")
    approved_by = models.CharField(max_length=150, blank=True)  # who approved the text ("" for gate-passed)
    published_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                     related_name="published_updates")  # None: the policy's auto_publish
    policy_snapshot_id = models.CharField(max_length=12, blank=True)  # text_hash of the run's policy snapshot
    reason = models.CharField(max_length=200, blank=True)
    published_at = models.DateTimeField(default=timezone.now)
    # What the status page shows with the text, approved with it by the person who published it and
    # checked by the guard; never the incident's internal title or state ("" on updates from before).
    public_title = models.CharField(max_length=200, blank=True)
    state = models.CharField(max_length=16, choices=STATES, blank=True)
    impact = models.CharField(max_length=10, choices=Impact.choices, default=Impact.NONE)
    # The chain of trust: the guard's findings a lead overrode when approving the text, the lead's
    # justification, and who acknowledged them when publishing (kept with the update for good).
    overridden = models.JSONField(default=list, blank=True)
    justification = models.TextField(blank=True)
    acknowledged_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                        related_name="+")

    objects = PublishedUpdateQuerySet.as_manager()

    class Meta:
        ordering = ["incident", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["incident", "version"], name="published_update_version_once"),
            models.UniqueConstraint(fields=["source_run"], condition=models.Q(source_run__isnull=False),
                                    name="published_update_run_once"),
        ]
        permissions = [("publish_update", "Can publish updates")]

    def __str__(self) -> str:
        return f"{self.incident_id} update v{self.version}"

    @property
    def delivered_channels(self) -> list[str]:
        return list(dict.fromkeys(d.channel.name for d in self.deliveries.all()
                                  if d.status == Delivery.Status.DELIVERED))

    @property
    def delivery_rows(self) -> list[Delivery]:
        """The deliveries the desk lists one by one: each channel's, and of a subscribers channel (a row
        per address) only those that failed or are held, for a person to act on."""
        return [d for d in self.deliveries.all() if d.subscriber_id is None or d.status in Delivery.NEEDS_A_PERSON]

    @property
    def subscriber_counts(self) -> list[tuple[str, list[tuple[str, int]]]]:
        """Each subscribers channel with how many of its addresses' deliveries are in each state:
        ``[("Subscribers", [("delivered", 120), ("failed", 2)])]``."""
        counts: dict[str, dict[str, int]] = {}
        for delivery in self.deliveries.all():
            if delivery.subscriber_id is not None:
                states = counts.setdefault(delivery.channel.name, {})
                states[delivery.status] = states.get(delivery.status, 0) + 1
        return [(name, sorted(states.items())) for name, states in counts.items()]

    @property
    def components(self) -> list[UpdateComponent]:
        return list(self.component_statuses.all())

    def payload(self) -> dict:
        """The generic webhook's JSON body: what customers read (the public fields) and what the
        operator's own systems need to match it to the incident (its id, never its internal title)."""
        return {"incident": self.incident.incident_id, "version": self.version, "text": self.text,
                "public_title": self.public_title, "state": self.state, "impact": self.impact,
                "components": [{"id": row.component_id, "name": row.component.name, "status": row.status}
                               for row in self.components],
                "text_hash": self.text_hash, "approved_by": self.approved_by,
                "published_by": self.published_by.get_username() if self.published_by_id else "auto_publish",
                "policy_snapshot_id": self.policy_snapshot_id,
                "facts_version": self.incident_version.number if self.incident_version_id else None,
                "published_at": self.published_at.isoformat()}


class UpdateComponent(models.Model):
    """A component an update affects and the status it gives it, published with the update."""

    update = models.ForeignKey(PublishedUpdate, on_delete=models.PROTECT, related_name="component_statuses")
    component = models.ForeignKey(StatusComponent, on_delete=models.PROTECT, related_name="update_statuses")
    status = models.CharField(max_length=24, choices=ComponentStatus.choices)

    class Meta:
        ordering = ["component__position", "component__name"]
        constraints = [models.UniqueConstraint(fields=["update", "component"], name="update_component_once")]

    def __str__(self) -> str:
        return f"{self.component.name}: {self.get_status_display()}"


class SubscriberQuerySet(models.QuerySet):
    def active(self):
        return self.filter(confirmed_at__isnull=False, unsubscribed_at__isnull=True)

    def for_update(self, update: PublishedUpdate):
        """The active subscribers an update goes to: those who chose no component (every update) and
        those who chose one of the components it names."""
        named = UpdateComponent.objects.filter(update=update).values("component")
        return self.active().filter(models.Q(components__isnull=True) | models.Q(components__in=named)).distinct()
class StatusSnapshotQuerySet(models.QuerySet):
    def outdate(self, *, rebuild: bool = True) -> None:
        """What the status page shows may have changed (a status delivery delivered, a component
        edited): every stored representation is out of date, so the next request rebuilds it unless
        the rebuild task (enqueued after the commit, with ``rebuild``) has done so first."""
        from reviewer.celery import enqueue_on_commit

        self.update(generation=models.F("generation") + 1)
        if rebuild:
            # A broker that is down must not undo a delivery: the next request rebuilds instead.
            enqueue_on_commit("reviewer.tasks.rebuild_status_page", robust=True)


class StatusSnapshot(models.Model):
    """One representation of the public status page (the page, a history page, an incident's page,
    the feed, the JSON summary) stored as it is served: every web process serves the same bytes
    with the same ETag without rendering them (``reviewer.status.snapshots`` builds them). It is
    fresh while ``built_generation`` has caught up with ``generation``, which :meth:`outdate` bumps."""

    name = models.CharField(max_length=100, unique=True)  # "page", "history:2", "incident:<id>", "summary.json", ...
    body = models.TextField()
    content_type = models.CharField(max_length=100)
    etag = models.CharField(max_length=80)  # a quoted hash of the body
    changed_at = models.DateTimeField()  # when the body last changed: the Last-Modified header
    generation = models.PositiveIntegerField(default=1)
    built_generation = models.PositiveIntegerField(default=0)

    objects = StatusSnapshotQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"Status page snapshot {self.name}"

    @property
    def fresh(self) -> bool:
        return self.built_generation >= self.generation


def status_page_changed(sender, **kwargs) -> None:
    """A component was added, edited or removed (the page lists them), or a deploy migrated (its
    templates may have changed); connected in ReviewerConfig.ready. After a migration the next
    request rebuilds: no task is sent while a deploy may not have its workers yet."""
    StatusSnapshot.objects.outdate(rebuild=sender is StatusComponent)


class ConfirmationMail(models.Model):
    """A confirmation email the subscribe form sent: who it went to (the mailbox, its domain) and which
    client asked. The form's limits count these within SUBSCRIBE_LIMIT_WINDOW_MINUTES; older rows are
    deleted as it goes (reviewer.status.subscriptions)."""

    sent_at = models.DateTimeField(db_index=True)
    mailbox = models.CharField(max_length=254, db_index=True)  # the address as its mailbox reads it
    domain = models.CharField(max_length=254, db_index=True)
    client = models.CharField(max_length=45, blank=True, db_index=True)  # the client's IP address

    class Meta:
        ordering = ["sent_at", "id"]

    def __str__(self) -> str:
        return f"Confirmation to {self.mailbox} at {self.sent_at:%Y-%m-%d %H:%M}"


class Subscriber(models.Model):
    """A customer who asked for the status page's updates by email: to every update, or to those
    affecting the chosen components. Confirmed by a link sent to the address (double opt-in);
    unsubscribed by the link in every email. Kept after unsubscribing, so no update reaches them."""

    email = models.EmailField(unique=True)
    components = models.ManyToManyField(StatusComponent, blank=True, related_name="subscribers",
                                        help_text="None chosen: every update.")
    key = models.UUIDField(unique=True, default=uuid.uuid4, editable=False)  # in the subscriber's links
    created_at = models.DateTimeField(default=timezone.now)
    confirmed_at = models.DateTimeField(null=True, blank=True)
    unsubscribed_at = models.DateTimeField(null=True, blank=True)
    # When the last confirmation email went out: the form sends the same address no more than one
    # every few minutes, so nobody can flood someone else's inbox with it.
    confirmation_sent_at = models.DateTimeField(null=True, blank=True)

    objects = SubscriberQuerySet.as_manager()

    class Meta:
        ordering = ["email"]

    def __str__(self) -> str:
        return self.email

    @property
    def active(self) -> bool:
        return self.confirmed_at is not None and self.unsubscribed_at is None

    @property
    def confirm_url(self) -> str:
        return absolute_url("status_confirm", self.key)

    @property
    def unsubscribe_url(self) -> str:
        return absolute_url("status_unsubscribe", self.key)

    def confirm(self) -> bool:
        """Confirm the address (its owner clicked the emailed link); False if it was confirmed already, or
        unsubscribed since it asked. A conditional update, so two clicks at once confirm once."""
        return bool(Subscriber.objects.filter(pk=self.pk, confirmed_at__isnull=True, unsubscribed_at__isnull=True)
                    .update(confirmed_at=timezone.now()))

    def unsubscribe(self) -> bool:
        """Stop every update to the address; False if it was unsubscribed already (idempotent)."""
        return bool(Subscriber.objects.filter(pk=self.pk, unsubscribed_at__isnull=True).update(
            unsubscribed_at=timezone.now()))


class DeliveryQuerySet(models.QuerySet):
    def due(self, now):
        return self.filter(status=Delivery.Status.PENDING, next_attempt_at__lte=now)


class Delivery(models.Model):
    """The outbox: one row per published update and channel, written in the publishing transaction,
    delivered by ``reviewer.outbox.tasks.deliver``: at least once to a webhook and the status page (its
    ``key`` is the Idempotency-Key), at most once to email, subscribers and Slack (``SENDING``, ``HELD``)."""

    class Status(models.TextChoices):
        PENDING = "pending"
        # An attempt on a channel that cannot drop duplicates is under way: recorded before the send starts.
        SENDING = "sending"
        DELIVERED = "delivered"
        FAILED = "failed"  # dead-lettered after DELIVERY_MAX_ATTEMPTS; a person can retry it
        SKIPPED = "skipped"  # never sent: its subscriber unsubscribed before it went out (last_error says so)
        # Held for a person: its send may have gone out (a timeout, a dropped connection, an outcome never
        # recorded), and sending it again could reach an inbox or a Slack channel twice.
        HELD = "held", "Held: may have been sent — check before sending again"

    key = models.UUIDField(unique=True, default=uuid.uuid4, editable=False)
    update = models.ForeignKey(PublishedUpdate, on_delete=models.PROTECT, related_name="deliveries")
    channel = models.ForeignKey(DeliveryChannel, on_delete=models.PROTECT, related_name="deliveries")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    next_attempt_at = models.DateTimeField(default=timezone.now)  # due; during an attempt, when it is presumed lost
    created_at = models.DateTimeField(default=timezone.now)
    delivered_at = models.DateTimeField(null=True, blank=True)
    retried_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    # Who marked a held delivery as sent (it had gone out), so it is not sent again.
    marked_sent_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                       related_name="+")
    # A subscribers channel has one row per subscriber, so each address gets the update once.
    subscriber = models.ForeignKey(Subscriber, null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="deliveries")

    objects = DeliveryQuerySet.as_manager()

    NEEDS_A_PERSON = (Status.FAILED, Status.HELD)

    class Meta:
        ordering = ["update", "channel__name"]
        verbose_name_plural = "deliveries"
        constraints = [
            models.UniqueConstraint(fields=["update", "channel"], condition=models.Q(subscriber__isnull=True),
                                    name="delivery_once_per_channel"),
            models.UniqueConstraint(fields=["update", "subscriber"], condition=models.Q(subscriber__isnull=False),
                                    name="delivery_once_per_subscriber"),
        ]
        indexes = [models.Index(fields=["status", "next_attempt_at"], name="delivery_due"),
                   # /metrics: the outbox by channel and state, counted from the index alone
                   models.Index(fields=["channel", "status"], name="delivery_channel_status")]

    def __str__(self) -> str:
        return f"Delivery {self.key} of {self.update} to {self.channel.name} ({self.status})"


# -- deadlines, notifications and holding statements (docs/contract.md, 'Deadlines and notifications') ---


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

    class Event(models.TextChoices):
        OPENED = "opened", "escalation opened"
        REMINDER = "reminder", "deadline near"
        BREACH = "breach", "deadline breached"
        APPROVED = "approved", "text approved, ready to publish"

    name = models.CharField(max_length=100, unique=True)
    destination = models.CharField(max_length=100, help_text="A destination the operator declared.")
    group = models.CharField(max_length=10, choices=Group.choices, default=Group.LEADS)
    events = models.JSONField(default=list, help_text="opened, reminder, breach, approved")
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


# -- the ledger (docs/ledger.md) ---------------------------------------------------------------------


class LedgerEntry(models.Model):
    """One event the product records for good, chained to the one before it: a decision, a
    publication, a policy change, a deadline breach or a dataset export. Written only by
    ``reviewer.ledger.chain.append``, inside the transaction of what it records; never edited. On
    PostgreSQL the database itself refuses UPDATE and DELETE of these rows (pruning aside).

    ``content`` is the canonical JSON of the whole entry (its seq, kind, subject, time and data),
    stored as text so that its bytes are the bytes hashed; ``hash`` is the SHA-256 of
    ``prev_hash`` and ``content``, so changing, removing, inserting or reordering a row breaks
    the chain from there on."""

    class Kind(models.TextChoices):
        DECISION = "decision"
        PUBLICATION = "publication"
        POLICY_CHANGE = "policy_change", "policy change"
        BREACH = "breach", "deadline breach"
        EXPORT = "export", "dataset export"
        APPROVAL = "approval", "approval (of a quorum)"
        APPROVALS_RESET = "approvals_reset", "approvals reset"

    seq = models.PositiveBigIntegerField(unique=True)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    subject = models.CharField(max_length=100)  # what it is about: "decision:12", "publication:3"
    created_at = models.DateTimeField()
    content = models.TextField()
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64, unique=True)

    class Meta:
        ordering = ["seq"]
        verbose_name_plural = "ledger entries"
        indexes = [models.Index(fields=["created_at"], name="ledger_entry_created")]
        triggers = [
            # The rows of the ledger are never changed nor removed, whoever holds the database's
            # password; pruning alone lifts this, inside its own transaction (pgtrigger.ignore).
            pgtrigger.Protect(name="ledger_entry_append_only", operation=pgtrigger.Update | pgtrigger.Delete),
        ]

    def __str__(self) -> str:
        return f"Ledger entry {self.seq} ({self.kind} {self.subject})"


class LedgerHead(models.Model):
    """The ledger's one head row: the last entry's seq and hash, and the checkpoint left by pruning
    (the seq and hash of the last entry pruned, which the first kept entry chains to). Every append
    updates it first, so appends take turns on its row lock and the chain never forks."""

    seq = models.PositiveBigIntegerField(default=0)
    hash = models.CharField(max_length=64, blank=True)
    checkpoint_seq = models.PositiveBigIntegerField(default=0)
    checkpoint_hash = models.CharField(max_length=64, blank=True)
    pruned_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"Ledger head at {self.seq}"


class LedgerVerification(models.Model):
    """The result of one verification of the ledger (the scheduled task's or a command's)."""

    at = models.DateTimeField(default=timezone.now)
    ok = models.BooleanField()
    count = models.PositiveBigIntegerField(default=0)
    head_hash = models.CharField(max_length=64, blank=True)
    broken_seq = models.PositiveBigIntegerField(null=True, blank=True)  # the first bad entry
    message = models.TextField(blank=True)

    class Meta:
        ordering = ["-at", "-id"]
        get_latest_by = "at"

    def __str__(self) -> str:
        return f"Ledger {'verified' if self.ok else 'broken'} at {self.at:%Y-%m-%d %H:%M}"


# -- single sign-on (reviewer/sso.py; docs/operations.md, "Single sign-on") --------------------------


class SsoGroupMapping(models.Model):
    """An identity-provider group whose members hold one of the product's roles: applied at every
    single sign-on login, when the role is added to those the provider lists in the group, and taken
    from those it no longer lists."""

    idp_group = models.CharField(
        "identity-provider group", max_length=200,
        help_text="The group exactly as the provider's groups claim lists it (case counts): a name such as "
                  "support-leads, a path such as /support/leads, or an ID such as Entra's object IDs.")
    role = models.ForeignKey("auth.Group", on_delete=models.PROTECT, related_name="+",
                             limit_choices_to={"name__in": list(ROLE_PERMISSIONS)})

    class Meta:
        ordering = ["idp_group", "role__name"]
        verbose_name = "single sign-on group mapping"
        constraints = [models.UniqueConstraint(fields=["idp_group", "role"], name="sso_group_mapping_once")]

    def __str__(self) -> str:
        return f"{self.idp_group} → {self.role.name}" if self.role_id else self.idp_group

    def clean(self):
        from django.core.exceptions import ValidationError

        from agents.core.inputs import control_character

        errors = {}
        if self.idp_group != self.idp_group.strip():
            errors["idp_group"] = ("The group has spaces at its start or end; the provider's claim would have to "
                                   "carry them too. Remove them.")
        elif found := control_character(self.idp_group):
            errors["idp_group"] = f"The group has a control character (U+{ord(found):04X}); remove it."
        if self.role_id and self.role.name not in ROLE_PERMISSIONS:
            errors["role"] = f"Choose one of the roles: {', '.join(ROLE_PERMISSIONS)}."
        if errors:
            raise ValidationError(errors)


class SsoIdentity(models.Model):
    """The account a person of the identity provider signs in to: found by the provider's subject
    (``sub``, which never changes), never by an email address another account could carry."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_identity")
    subject = models.CharField(max_length=255, unique=True)
    groups = models.JSONField(default=list, help_text="The groups the provider listed at the last sign-in.")
    created_at = models.DateTimeField(default=timezone.now)
    last_login_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "single sign-on identity"
        verbose_name_plural = "single sign-on identities"

    def __str__(self) -> str:
        return f"{self.subject} ({self.user})"


class SsoRoleGrant(models.Model):
    """A role single sign-on gave a user, through the provider's groups ``via``. Single sign-on takes
    away only the roles it gave: a role a user holds without such a row was given in the admin."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_role_grants")
    role = models.ForeignKey("auth.Group", on_delete=models.CASCADE, related_name="+")
    via = models.JSONField(default=list, help_text="The provider's groups that gave the role at the last sign-in.")
    granted_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "role"], name="sso_role_grant_once")]

    def __str__(self) -> str:
        return f"{self.role.name} for {self.user} (single sign-on)"

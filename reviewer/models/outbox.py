"""Publishing and the outbox (docs/contract.md, 'Publishing and the outbox'; docs/publishing.md):
where published updates go (delivery channels), the published updates themselves and their
outbox rows, one per channel (and per subscriber)."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

from agents.models import IncidentVersion, Run
from agents.models.incidents import STATES
from reviewer.models.desk import Escalation
from reviewer.models.status import Impact, Subscriber, UpdateComponent

# The stage after resolution: a published post-incident report (Statuspage's "postmortem"). An update
# declares it; the incident's own state stays resolved (docs/status-page.md, 'Post-incident report').
POSTMORTEM = "postmortem"
UPDATE_STATES = [*STATES, (POSTMORTEM, "Post-incident report")]


class DeliveryChannel(models.Model):
    """Where a published update goes. Holds a destination's NAME, never a URL or a secret: those come
    from the operator's allowlist in the environment (``reviewer.outbox.destinations``)."""

    class Kind(models.TextChoices):
        STATUS = "status", "public status page"
        WEBHOOK = "webhook", "generic webhook (signed)"
        SLACK = "slack", "Slack incoming webhook"
        EMAIL = "email", "email"
        SUBSCRIBERS = "subscribers", "status page subscribers (email, webhook, Slack)"

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

    @classmethod
    def at_most_once(cls, kind: str, subscriber_kind: str | None = None) -> bool:
        """Whether a delivery on a channel of ``kind`` (to a subscriber of ``subscriber_kind``) is sent at
        most once: a webhook subscriber drops duplicates by the Idempotency-Key, so it gets at least once."""
        return kind in cls.AT_MOST_ONCE and subscriber_kind != "webhook"

    @property
    def recipient_list(self) -> list[str]:
        return [line.strip() for line in self.recipients.splitlines() if line.strip()]

    def clean(self):
        from django.core.exceptions import ValidationError
        from django.core.validators import validate_email

        from reviewer.outbox.destinations import names, recipient_problem

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
            problems = []
            for address in self.recipient_list:
                try:
                    validate_email(address)
                except ValidationError:
                    problems.append(f"“{address[:100]}” is not an email address.")
                else:
                    if problem := recipient_problem(address):
                        problems.append(problem)
            if problems:
                errors["recipients"] = problems
        elif self.recipients.strip():
            errors["recipients"] = "Only email channels have recipients."
        if self.kind == self.Kind.SUBSCRIBERS:
            other = DeliveryChannel.objects.filter(kind=self.kind).exclude(pk=self.pk).first()
            if other is not None:  # each subscriber gets an update once, from one channel
                errors["kind"] = f"“{other.name}” already sends to the status page's subscribers; one channel does."
        if errors:
            raise ValidationError(errors)


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
    state = models.CharField(max_length=16, choices=UPDATE_STATES, blank=True)
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
    # The last attempt's evidence: what the receiver or mail server said (or that no answer came), when
    # (ISO 8601), and the attempt: {"said", "at", "attempt"} (reviewer.outbox.answers.evidence).
    evidence = models.JSONField(default=dict, blank=True)

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

    @property
    def evidence_at(self):
        """When the last attempt's evidence was seen, or None."""
        from django.utils.dateparse import parse_datetime

        return parse_datetime(self.evidence.get("at") or "") if self.evidence else None


class PostIncidentReport(models.Model):
    """A run that drafts an incident's post-incident report (docs/publishing.md, 'Post-incident
    reports'): its text is gated like any update's, always waits for a person's approval, and is
    published as the incident's ``postmortem`` stage."""

    run = models.OneToOneField(Run, on_delete=models.PROTECT, related_name="report")
    requested_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"Post-incident report draft (run {self.run_id})"

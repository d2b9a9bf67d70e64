"""The public status page's records (docs/status-page.md, docs/subscriptions.md): the components
customers know and the status each update gives them, the stored representations of the page, and
the customers who subscribed (by email, webhook or Slack) with the confirmations sent to them."""

from __future__ import annotations

import secrets
import uuid
from urllib.parse import urlsplit

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone


def status_page_name() -> str:
    """The name customers know the status page by (“Acme status”), in every email's subject."""
    return f"{settings.STATUS_PAGE_NAME} status"


def absolute_url(view_name: str, *args) -> str:
    """A page's address for a message that leaves the site (an email, a webhook), from ``SITE_URL``."""
    return settings.SITE_URL.rstrip("/") + reverse(view_name, args=args)


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


# Statuspage's fifth component status: a component in a scheduled maintenance in progress
# (reviewer.status.public). Nobody sets it on an update; it ranks above operational only.
UNDER_MAINTENANCE = "under_maintenance"


def worst_status(statuses) -> str:
    """The worst of ``statuses`` (operational for none); under maintenance is worse than operational only."""
    order = [ComponentStatus.OPERATIONAL, UNDER_MAINTENANCE, *ComponentStatus.values[1:]]
    return max(statuses, key=order.index, default=ComponentStatus.OPERATIONAL)


def status_label(status: str) -> str:
    """A component status in words, under maintenance included."""
    return "Under maintenance" if status == UNDER_MAINTENANCE else ComponentStatus(status).label


class StatusComponentGroup(models.Model):
    """A heading that folds several components on the status page (“Payments”: Checkout, Refunds); it
    shows the worst status of its components. Editing one rebuilds the page, like a component."""

    name = models.CharField(max_length=100, unique=True)
    position = models.PositiveSmallIntegerField(default=0, help_text="Lower comes first on the status page.")

    class Meta:
        ordering = ["position", "name"]

    def __str__(self) -> str:
        return self.name


class StatusAudience(models.Model):
    """A named group of customers (“Partner banks”) who see components the public page does not: its
    own page, reached by a signed link or by signing in (docs/status-page.md, 'Audiences and the
    internal page'). Rotating the link (``key_version``) makes every link handed out before it fail."""

    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=50, unique=True, help_text="Its page's address is /status/a/ followed by this.")
    users = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="status_audiences",
                                   help_text="People who read its page when signed in.")
    groups = models.ManyToManyField("auth.Group", blank=True, related_name="status_audiences",
                                    help_text="Groups whose members read its page when signed in.")
    key_version = models.PositiveIntegerField(default=1, editable=False)  # in the signed link; rotating bumps it

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class StatusComponentQuerySet(models.QuerySet):
    def public(self):
        """The components on the public page: those of no audience."""
        return self.filter(audience__isnull=True)


class StatusComponent(models.Model):
    """A part of the service customers know by name (“Checkout”, “Sign-in”, “API”). Its status on the
    status page is not stored here: it is what the latest published update of each unresolved
    incident says of it, the worst of them, and operational otherwise."""

    name = models.CharField(max_length=100, unique=True)
    description = models.CharField(max_length=200, blank=True, help_text="One line customers read under the name.")
    position = models.PositiveSmallIntegerField(default=0, help_text="Lower comes first on the status page.")
    group = models.ForeignKey(StatusComponentGroup, on_delete=models.SET_NULL, null=True, blank=True,
                              related_name="components", help_text="The group it is folded under, if any.")
    audience = models.ForeignKey(StatusAudience, on_delete=models.PROTECT, null=True, blank=True,
                                 related_name="components",
                                 help_text="Only this audience sees it; empty: everyone (the public page).")

    objects = StatusComponentQuerySet.as_manager()

    class Meta:
        ordering = ["position", "name"]

    def __str__(self) -> str:
        return self.name

    @property
    def public(self) -> bool:
        """On the public page (of no audience)."""
        return self.audience_id is None


class ComponentStatusChange(models.Model):
    """From ``at`` on, the component had ``status`` on the public page, until its next change: the
    history the page's 90-day bars are drawn from (``reviewer.status.history`` records these when a
    status delivery is delivered, when a component is added, and at each rebuild of the page)."""

    component = models.ForeignKey(StatusComponent, on_delete=models.CASCADE, related_name="status_changes")
    status = models.CharField(max_length=24, choices=ComponentStatus.choices)
    at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["component", "at", "pk"]

    def __str__(self) -> str:
        return f"{self.component.name}: {self.get_status_display()} from {self.at:%Y-%m-%d %H:%M}"


class UpdateComponent(models.Model):
    """A component an update affects and the status it gives it, published with the update."""

    update = models.ForeignKey("PublishedUpdate", on_delete=models.PROTECT, related_name="component_statuses")
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

    def ask(self, email: str, components: list[int], client: str, *, kind: str = "email", url: str = "") -> None:
        """Hand the subscribe form's request to a worker (``reviewer.status.tasks``), by the task's name:
        the form does this, and only this, whatever the address, so its time tells nothing about it."""
        from reviewer.celery import app

        app.tasks["reviewer.tasks.subscribe_to_status"].delay(email, components, client, kind, url)

    def for_update(self, update):
        """The active subscribers a PublishedUpdate goes to: those who chose no component (every update)
        and those who chose one of the public components it names; nobody for an update that names
        private components only (an audience's, never on the public page), nor for one that names none
        in an incident that named private components only."""
        named = UpdateComponent.objects.filter(update=update, component__audience__isnull=True).values("component")
        rows = UpdateComponent.objects.filter(update=update)
        if not rows.exists():  # it names none: its incident's updates say whether it is public
            rows = UpdateComponent.objects.filter(update__incident_id=update.incident_id)
        if rows.exists() and not rows.filter(component__audience__isnull=True).exists():
            return self.none()  # private components only: not on the public page, so no email either
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
    StatusSnapshot.objects.outdate(rebuild=sender in (StatusComponent, StatusComponentGroup))


class ConfirmationMail(models.Model):
    """A confirmation the subscribe form sent (an email, or a Slack subscription's first message): who
    it went to (the mailbox, its domain; the URL's host) and which client asked. The form's limits count
    these within SUBSCRIBE_LIMIT_WINDOW_MINUTES; older rows are deleted as it goes
    (reviewer.status.subscriptions)."""

    sent_at = models.DateTimeField(db_index=True)
    mailbox = models.CharField(max_length=254, db_index=True)  # the address as its mailbox reads it
    domain = models.CharField(max_length=254, db_index=True)
    client = models.CharField(max_length=45, blank=True, db_index=True)  # the client's IP address
    # A webhook or Slack subscription's URL, by its host (a Slack workspace: hooks.slack.com/T0123)
    host = models.CharField(max_length=300, blank=True, db_index=True)

    class Meta:
        ordering = ["sent_at", "id"]

    def __str__(self) -> str:
        return f"Confirmation to {self.mailbox} at {self.sent_at:%Y-%m-%d %H:%M}"


class Subscriber(models.Model):
    """A customer who asked for the status page's updates: to every update, or to those affecting the
    chosen components; by email, to a webhook of theirs (confirmed by a link emailed to ``email``), or
    to a Slack channel's incoming webhook (confirmed by a link in a first message posted there).
    Unsubscribed by the link in every message. Kept after unsubscribing, so no update reaches them."""

    class Kind(models.TextChoices):
        EMAIL = "email", "Email"
        WEBHOOK = "webhook", "Webhook"
        SLACK = "slack", "Slack"

    kind = models.CharField(max_length=8, choices=Kind.choices, default=Kind.EMAIL)
    # Where the confirmation link goes: the address updates go to, or a webhook owner's; none for Slack.
    email = models.EmailField(blank=True)
    # A webhook's or Slack's URL (reviewer/models/subscriber_urls.py checked it); a credential: never shown whole.
    url = models.URLField(max_length=2000, blank=True)
    # A webhook's signing key, made when it is confirmed and shown once on the confirmation page.
    secret = models.CharField(max_length=64, blank=True)
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
        ordering = ["email", "url"]
        constraints = [
            models.UniqueConstraint(fields=["email"], condition=models.Q(kind="email"), name="subscriber_email_once"),
            models.UniqueConstraint(fields=["url"], condition=~models.Q(kind="email"), name="subscriber_url_once"),
        ]

    def __str__(self) -> str:
        if self.kind == self.Kind.EMAIL:
            return self.email
        return f"{self.get_kind_display()} to {self.host}" + (f" ({self.email})" if self.email else "")

    @property
    def host(self) -> str:
        """What a page may show of a webhook's or Slack's URL: its host."""
        return urlsplit(self.url).hostname or ""

    @property
    def described(self) -> str:
        """Where the updates go, in words for the subscriber's pages: an address, a webhook, a Slack channel."""
        if self.kind == self.Kind.WEBHOOK:
            return f"the webhook at {self.host}"
        if self.kind == self.Kind.SLACK:
            return "your Slack channel"
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
        unsubscribed since it asked. A conditional update, so two clicks at once confirm once. A webhook
        gets a new signing secret here, which only the winning click sees."""
        secret = secrets.token_hex(32) if self.kind == self.Kind.WEBHOOK else ""
        confirmed = bool(Subscriber.objects.filter(pk=self.pk, confirmed_at__isnull=True,
                                                   unsubscribed_at__isnull=True)
                         .update(confirmed_at=timezone.now(), secret=secret))
        if confirmed:
            self.secret = secret
        return confirmed

    def unsubscribe(self) -> bool:
        """Stop every update to the address; False if it was unsubscribed already (idempotent)."""
        return bool(Subscriber.objects.filter(pk=self.pk, unsubscribed_at__isnull=True).update(
            unsubscribed_at=timezone.now()))


# -- scheduled maintenance (docs/status-page.md, 'Scheduled maintenance') ---------------------------


class MaintenanceStatus(models.TextChoices):
    """A maintenance window's state, named as Statuspage names it."""

    SCHEDULED = "scheduled", "Scheduled"
    IN_PROGRESS = "in_progress", "In progress"
    COMPLETED = "completed", "Completed"
    CANCELLED = "cancelled", "Cancelled"


class Maintenance(models.Model):
    """A window ops planned: the components it touches, when it starts and ends, what customers read.
    Published as scheduled; ``reviewer.outbox.maintenance.advance`` moves it to in progress and to
    completed at its times (telling subscribers only when ``notify_moves``); an update extends or
    cancels it. Its components show "under maintenance" while it is in progress."""

    title = models.CharField(max_length=200)
    components = models.ManyToManyField(StatusComponent, related_name="maintenances")
    starts_at = models.DateTimeField(db_index=True)
    ends_at = models.DateTimeField(db_index=True)
    status = models.CharField(max_length=12, choices=MaintenanceStatus.choices, default=MaintenanceStatus.SCHEDULED)
    notify_moves = models.BooleanField(default=False, help_text="Tell subscribers when it starts and ends by itself.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True,
                                   related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)  # completed or cancelled
    reminded_at = models.DateTimeField(null=True, blank=True)  # the subscribers' reminder went out

    class Meta:
        ordering = ["starts_at", "id"]
        constraints = [models.CheckConstraint(condition=models.Q(ends_at__gt=models.F("starts_at")),
                                              name="maintenance_ends_after_start")]

    def __str__(self) -> str:
        return f"{self.title} ({self.get_status_display()})"


class MaintenanceUpdate(models.Model):
    """One step of a window as customers read it (Statuspage's ``incident_updates``): the text it was
    scheduled with, each automatic move, an extension or a cancellation. Never edited."""

    maintenance = models.ForeignKey(Maintenance, on_delete=models.CASCADE, related_name="updates")
    status = models.CharField(max_length=12, choices=MaintenanceStatus.choices)
    text = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)
    automatic = models.BooleanField(default=False)  # a move at its time, not written by a person
    notified = models.BooleanField(default=False)  # subscribers were emailed this step

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.maintenance.title}: {self.get_status_display()}"


class MaintenanceNotice(models.Model):
    """An email about a window sent to one subscriber: at most one per step and kind, so a re-run of
    the sweep sends nothing twice."""

    class Kind(models.TextChoices):
        UPDATE = "update", "Update"
        REMINDER = "reminder", "Reminder"

    maintenance = models.ForeignKey(Maintenance, on_delete=models.CASCADE, related_name="notices")
    update = models.ForeignKey(MaintenanceUpdate, on_delete=models.CASCADE, null=True, related_name="notices")
    subscriber = models.ForeignKey(Subscriber, on_delete=models.CASCADE, related_name="maintenance_notices")
    kind = models.CharField(max_length=10, choices=Kind.choices)
    sent_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["sent_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["update", "subscriber"], condition=models.Q(kind="update"),
                                    name="maintenance_update_notice_once"),
            models.UniqueConstraint(fields=["maintenance", "subscriber"], condition=models.Q(kind="reminder"),
                                    name="maintenance_reminder_once"),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} to {self.subscriber} about {self.maintenance.title}"

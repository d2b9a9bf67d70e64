"""Deadlines in the admin: the rules, notification channels and holding statements an admin keeps;
notifications and breaches as read-only records."""

from django.contrib import admin, messages

from agents.admin.base import ReadOnlyMixin
from reviewer.desk.forms import HoldingStatementForm, NotificationChannelForm
from reviewer.models import DeadlineBreach, DeadlineRule, HoldingStatement, Notification, NotificationChannel


@admin.register(DeadlineRule)
class DeadlineRuleAdmin(admin.ModelAdmin):
    """How long escalations may wait, by severity and pipeline (blank: any); the most specific wins."""

    list_display = ["severity", "pipeline", "minutes", "reminder_minutes"]
    list_editable = ["minutes", "reminder_minutes"]
    list_display_links = ["severity"]


@admin.register(NotificationChannel)
class NotificationChannelAdmin(admin.ModelAdmin):
    form = NotificationChannelForm
    list_display = ["name", "destination", "group", "events", "active"]
    list_filter = ["group", "active"]


@admin.register(Notification)
class NotificationAdmin(ReadOnlyMixin, admin.ModelAdmin):
    """What was sent to whom: written by the notification task, never by hand."""

    list_display = ["id", "escalation", "event", "channel", "status", "attempts", "last_error", "created_at", "sent_at"]
    list_filter = ["status", "event", "channel"]
    list_select_related = ["escalation", "channel"]


@admin.register(HoldingStatement)
class HoldingStatementAdmin(admin.ModelAdmin):
    """Holding statements: an admin writes one and ticks "approve"; the patch guard checks it against
    the incident's current facts then, and again when a breach offers it to ops."""

    form = HoldingStatementForm
    list_display = ["id", "incident", "short_text", "approved_by", "approved_at", "approved_version"]
    list_select_related = ["incident", "approved_by", "approved_version"]
    readonly_fields = ["written_by", "approved_by", "approved_at", "approved_version", "guard"]

    @admin.display(description="text")
    def short_text(self, obj):
        return obj.text[:80]

    def save_model(self, request, obj, form, change):
        from reviewer.alerts.deadlines import HoldingStatementRefused, approve_holding_statement

        if not change:
            obj.written_by = request.user
        if change and {"text", "incident"} & set(form.changed_data):
            # A changed text is a new text: its approval does not carry over.
            obj.approved_by = obj.approved_at = obj.approved_version = None
            obj.guard = {}
        if form.cleaned_data.get("approve"):
            try:
                approve_holding_statement(obj, request.user)
            except HoldingStatementRefused as refused:  # the facts changed since the form was checked
                messages.error(request, str(refused))
        super().save_model(request, obj, form, change)


@admin.register(DeadlineBreach)
class DeadlineBreachAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["id", "escalation", "deadline_at", "at", "holding_statement", "published_by", "published_at"]
    list_select_related = ["escalation", "published_by"]

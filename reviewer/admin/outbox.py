"""The outbox in the admin: delivery channels an admin keeps (a destination chosen by name among
those the operator declared) and the published updates with their deliveries, read-only."""

from django import forms
from django.contrib import admin

from agents.admin.base import ReadOnlyMixin
from reviewer.models import Delivery, DeliveryChannel, PublishedUpdate
from reviewer.outbox.destinations import names as destination_names


class DeliveryChannelForm(forms.ModelForm):
    class Meta:
        model = DeliveryChannel
        fields = ["name", "kind", "destination", "recipients", "enabled"]

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Only the names the operator declared in OUTBOUND_DESTINATIONS, read when the form is built.
        declared = destination_names()
        current = self.instance.destination
        choices = [("", "— none (status page, email, subscribers) —"), *((name, name) for name in declared)]
        if current and current not in declared:
            choices.append((current, f"{current} (no longer declared)"))
        self.fields["destination"] = forms.ChoiceField(
            choices=choices, required=False, help_text=DeliveryChannel._meta.get_field("destination").help_text)


@admin.register(DeliveryChannel)
class DeliveryChannelAdmin(admin.ModelAdmin):
    form = DeliveryChannelForm
    list_display = ["name", "kind", "destination", "enabled"]
    list_filter = ["kind", "enabled"]


class DeliveryInline(ReadOnlyMixin, admin.TabularInline):
    model = Delivery
    fields = ["channel", "subscriber", "status", "attempts", "last_error", "next_attempt_at", "delivered_at", "key"]
    readonly_fields = fields
    extra = 0


@admin.register(PublishedUpdate)
class PublishedUpdateAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["incident", "version", "published_at", "published_by", "approved_by"]
    list_filter = ["incident"]
    readonly_fields = ["incident", "version", "text", "text_hash", "source_run", "escalation", "incident_version",
                       "approved_by", "published_by", "policy_snapshot_id", "reason", "published_at"]
    inlines = [DeliveryInline]

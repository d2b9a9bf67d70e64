"""The status page in the admin: its components, their groups, its email subscribers and the updates'
translations (read only)."""

from django.contrib import admin, messages
from django.utils import timezone

from reviewer.models import StatusComponent, StatusComponentGroup, Subscriber, UpdateTranslation


class SubscriberState(admin.SimpleListFilter):
    title = "state"
    parameter_name = "state"
    STATES = {"unconfirmed": {"confirmed_at__isnull": True, "unsubscribed_at__isnull": True},
              "subscribed": {"confirmed_at__isnull": False, "unsubscribed_at__isnull": True},
              "unsubscribed": {"unsubscribed_at__isnull": False}}

    def lookups(self, request, model_admin):
        return [("unconfirmed", "Waiting for confirmation"), ("subscribed", "Subscribed"),
                ("unsubscribed", "Unsubscribed")]

    def queryset(self, request, queryset):
        return queryset.filter(**self.STATES[self.value()]) if self.value() in self.STATES else queryset


@admin.register(Subscriber)
class SubscriberAdmin(admin.ModelAdmin):
    """The status page's subscribers. They subscribe and confirm on the status page themselves (double
    opt-in), so nobody adds or confirms an address here; an admin may narrow its components or
    unsubscribe it (on its owner's request)."""

    list_display = ["email", "created_at", "confirmed_at", "unsubscribed_at"]
    list_filter = [SubscriberState]
    search_fields = ["email"]
    fields = ["email", "components", "created_at", "confirmation_sent_at", "confirmed_at", "unsubscribed_at"]
    readonly_fields = ["email", "created_at", "confirmation_sent_at", "confirmed_at", "unsubscribed_at"]
    filter_horizontal = ["components"]
    actions = ["unsubscribe"]

    def has_add_permission(self, request):
        return False

    @admin.action(description="Unsubscribe the selected addresses")
    def unsubscribe(self, request, queryset):
        count = queryset.filter(unsubscribed_at__isnull=True).update(unsubscribed_at=timezone.now())
        messages.success(request, f"{count} address{'es' if count != 1 else ''} unsubscribed.")


@admin.register(StatusComponent)
class StatusComponentAdmin(admin.ModelAdmin):
    """The parts of the service the public status page lists; saving or deleting one rebuilds the page
    (``reviewer.models.status_page_changed``). A component an update named cannot be deleted."""

    list_display = ["name", "group", "position", "description"]
    list_editable = ["group", "position"]
    list_filter = ["group"]
    search_fields = ["name", "description"]


@admin.register(StatusComponentGroup)
class StatusComponentGroupAdmin(admin.ModelAdmin):
    """A heading that folds components on the status page (each component's own form picks its group);
    deleting one leaves its components ungrouped."""

    list_display = ["name", "position"]
    list_editable = ["position"]
    search_fields = ["name"]


@admin.register(UpdateTranslation)
class UpdateTranslationAdmin(admin.ModelAdmin):
    """Translations are written and checked at the desk and approved with their text by their hashes
    (docs/translations.md): here they are only read, since an edit here would change what was approved."""

    list_display = ["escalation", "language", "title", "written_by", "drafted_by_model", "update", "checked_at"]
    list_filter = ["language"]
    readonly_fields = [f.name for f in UpdateTranslation._meta.fields]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

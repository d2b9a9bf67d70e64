"""The status page in the admin: its components, their groups, its audiences, its subscribers (email, webhook,
Slack) and the updates' translations (read only)."""

from django.contrib import admin, messages
from django.utils import timezone
from django.utils.html import format_html

from agents.admin.base import ReadOnlyMixin
from reviewer.models import StatusAudience, StatusComponent, StatusComponentGroup, Subscriber, UpdateTranslation
from reviewer.status.audiences import link, rotate


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

    # A webhook's or Slack's URL shows by its host only (a Slack URL is itself a credential), and a
    # webhook's signing secret never shows.
    list_display = ["__str__", "kind", "email", "url_host", "created_at", "confirmed_at", "unsubscribed_at"]
    list_filter = [SubscriberState, "kind"]
    search_fields = ["email"]
    fields = ["kind", "email", "url_host", "components", "created_at", "confirmation_sent_at", "confirmed_at",
              "unsubscribed_at"]
    readonly_fields = ["kind", "email", "url_host", "created_at", "confirmation_sent_at", "confirmed_at",
                       "unsubscribed_at"]
    filter_horizontal = ["components"]
    actions = ["unsubscribe"]

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if db_field.name == "components":  # the public ones: an audience's never reach subscribers
            kwargs["queryset"] = StatusComponent.objects.public()
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def has_add_permission(self, request):
        return False

    @admin.display(description="URL host")
    def url_host(self, subscriber):
        return subscriber.host or "—"

    @admin.action(description="Unsubscribe the selected addresses")
    def unsubscribe(self, request, queryset):
        count = queryset.filter(unsubscribed_at__isnull=True).update(unsubscribed_at=timezone.now())
        messages.success(request, f"{count} address{'es' if count != 1 else ''} unsubscribed.")


@admin.register(StatusComponent)
class StatusComponentAdmin(admin.ModelAdmin):
    """The parts of the service the public status page lists; saving or deleting one rebuilds the page
    (``reviewer.models.status_page_changed``). A component an update named cannot be deleted."""

    list_display = ["name", "group", "audience", "position", "description"]
    list_editable = ["group", "position"]
    list_filter = ["group", "audience"]
    search_fields = ["name", "description"]


@admin.register(StatusComponentGroup)
class StatusComponentGroupAdmin(admin.ModelAdmin):
    """A heading that folds components on the status page (each component's own form picks its group);
    deleting one leaves its components ungrouped."""

    list_display = ["name", "position"]
    list_editable = ["position"]
    search_fields = ["name"]


@admin.register(StatusAudience)
class StatusAudienceAdmin(admin.ModelAdmin):
    """A group of customers with a page of its own (its components are those whose audience it is). Its
    signed link is shown to copy; rotating it makes every link handed out before answer 404."""

    list_display = ["name", "slug"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    readonly_fields = ["signed_link", "components"]
    actions = ["rotate_links"]

    @admin.display(description="Signed link")
    def signed_link(self, audience):
        if audience.pk is None:
            return "Shown once the audience is saved."
        return format_html('<input type="text" readonly value="{}" size="70" aria-label="Signed link of {}"> '
                           "<span class=\"help\">Select it and copy it: anyone holding it reads the page. "
                           "To stop every link handed out, rotate it (an action of the audiences' list).</span>",
                           link(audience), audience.name)

    @admin.display(description="Its components")
    def components(self, audience):
        names = ", ".join(c.name for c in audience.components.all())
        return names or "None yet: choose this audience on a component."

    @admin.action(description="Rotate the signed link (links handed out before stop working)")
    def rotate_links(self, request, queryset):
        for audience in queryset:
            rotate(audience)
        messages.success(request, f"New links for {', '.join(a.name for a in queryset)}: copy them from each page.")


@admin.register(UpdateTranslation)
class UpdateTranslationAdmin(ReadOnlyMixin, admin.ModelAdmin):
    """Translations are written and checked at the desk and approved with their text by their hashes
    (docs/translations.md): here they are only read, since an edit here would change what was approved."""

    list_display = ["escalation", "language", "title", "written_by", "drafted_by_model", "update", "checked_at"]
    list_filter = ["language"]
    readonly_fields = [f.name for f in UpdateTranslation._meta.fields]

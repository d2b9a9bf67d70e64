"""The review app's admin: escalations and decisions, published updates and their deliveries,
deadline breaches and notifications as read-only records (they are written by the pipelines and by
people's decisions, never edited by hand); API tokens, delivery and notification channels, deadline
rules, approval rules and holding statements as settings an admin keeps. Incidents and runs are in the agents app's
admin (agents/admin/)."""

from django import forms
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.cache import add_never_cache_headers
from django.utils.html import format_html_join

from agents.admin.base import ReadOnlyMixin
from reviewer.desk import datasets
from reviewer.desk.forms import HoldingStatementForm, NotificationChannelForm
from reviewer.destinations import names as destination_names
from reviewer.models import (
    ApiToken,
    Approval,
    ApprovalRule,
    DeadlineBreach,
    DeadlineRule,
    Decision,
    Delivery,
    DeliveryChannel,
    Escalation,
    HoldingStatement,
    LedgerEntry,
    Notification,
    NotificationChannel,
    PublishedUpdate,
    SsoGroupMapping,
    SsoIdentity,
    StatusComponent,
    Subscriber,
)
from reviewer.sso import role_sources

# The admin is part of the product: its name and colours (templates/admin/base_site.html), not Django's.
admin.site.site_header = "Gated review admin"
admin.site.site_title = "Gated review admin"
admin.site.index_title = "Policies, incidents and run records"


class DecisionInline(ReadOnlyMixin, admin.TabularInline):
    model = Decision
    fields = ["at", "actor", "action", "note", "final_text"]
    readonly_fields = fields
    extra = 0


class ApprovalInline(ReadOnlyMixin, admin.TabularInline):
    model = Approval
    fields = ["at", "user", "text_version", "text_hash", "superseded_at", "superseded_because"]
    readonly_fields = fields
    extra = 0


@admin.register(Escalation)
class EscalationAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["id", "run", "stop_reason", "status", "required_approvals", "opened_at", "claimed_by",
                    "decided_by"]
    list_filter = ["status", "stop_reason"]
    list_select_related = ["run", "claimed_by", "decided_by"]
    inlines = [DecisionInline, ApprovalInline]


@admin.register(ApprovalRule)
class ApprovalRuleAdmin(admin.ModelAdmin):
    """How many approvals escalations need, and from whom (docs/operations.md, 'Approvals by more than one
    person'). The strictest rule that fits applies; an escalation keeps what applied when it opened."""

    list_display = ["name", "pipeline", "severity", "stop_reason", "overrides_guard", "required_approvals", "group"]
    list_editable = ["required_approvals"]
    list_select_related = ["group"]


def export_action(dataset: str):
    def export(modeladmin, request, queryset):
        try:
            body = datasets.export(request.user, dataset, rows=queryset, door="admin")
        except PermissionDenied as error:
            modeladmin.message_user(request, str(error), messages.ERROR)
            return None
        response = HttpResponse(body, content_type="application/jsonl; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="decisions-{dataset}.jsonl"'
        return response

    export.__name__ = f"export_{dataset}"
    export.short_description = f"Export the selected decisions as {dataset} JSONL (recorded in the ledger)"
    return export


@admin.register(Decision)
class DecisionAdmin(ReadOnlyMixin, admin.ModelAdmin):
    """Every decision, read-only; the actions export the selected ones as datasets (docs/datasets.md)."""

    list_display = ["id", "at", "actor", "action", "escalation"]
    list_filter = ["action", "escalation__run__pipeline"]
    date_hierarchy = "at"
    list_select_related = ["actor", "escalation"]
    search_fields = ["escalation__run__incident__incident_id"]
    actions = [export_action(name) for name in datasets.FORMATS]


@admin.register(LedgerEntry)
class LedgerEntryAdmin(ReadOnlyMixin, admin.ModelAdmin):
    """The ledger, read-only (docs/ledger.md); ``manage.py verify_ledger`` checks its chain."""

    list_display = ["seq", "kind", "subject", "created_at", "hash"]
    list_filter = ["kind"]
    search_fields = ["subject"]
    fields = ["seq", "kind", "subject", "created_at", "content", "prev_hash", "hash"]
    readonly_fields = fields


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """API tokens: created here, revoked with the list action (by their owner: a policy admin's list
    holds only their own tokens); each expires API_TOKEN_DAYS after it is made. A token acts with its user's role, so a
    policy admin makes tokens for themselves only and a superuser for anyone (``manage.py api_token``
    too). The token is shown once, on the page that answers the save, with ``Cache-Control:
    no-store``: never in a message (the messages cookie) or a log, and only its hash is stored."""

    list_display = ["prefix", "name", "user", "created_at", "expires_at", "last_used_at", "revoked_at"]
    list_filter = ["revoked_at"]
    list_select_related = ["user"]
    fields = ["user", "name"]
    readonly_fields = []
    actions = ["revoke"]

    def get_queryset(self, request):
        rows = super().get_queryset(request)
        return rows if request.user.is_superuser else rows.filter(user=request.user)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "user" and not request.user.is_superuser:
            kwargs["queryset"] = get_user_model().objects.filter(pk=request.user.pk)
            kwargs["initial"] = request.user.pk
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def has_change_permission(self, request, obj=None):
        return obj is None and super().has_change_permission(request, obj)  # the list, for revoking

    def has_delete_permission(self, request, obj=None):
        return False  # revoke instead: the row says who had which token and when

    def get_readonly_fields(self, request, obj=None):
        return ["user", "name", "prefix", "created_at", "expires_at", "last_used_at", "revoked_at"] if obj else []

    def save_model(self, request, obj, form, change):
        if change:
            return
        row, token = ApiToken.issue(obj.user, obj.name)
        obj.pk, obj.prefix, obj.key_hash, obj.created_at = row.pk, row.prefix, row.key_hash, row.created_at
        obj.expires_at = row.expires_at
        obj._state.adding = False
        obj.issued_token = token  # for response_add only: this object lives for this request

    def response_add(self, request, obj, post_url_continue=None):
        response = TemplateResponse(request, "admin/reviewer/apitoken/issued.html", {
            **self.admin_site.each_context(request), "opts": self.opts, "row": obj, "token": obj.issued_token,
            "title": "API token created"})
        add_never_cache_headers(response)  # Cache-Control: no-store: the page is not kept anywhere
        return response

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset):
        count = queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())
        messages.success(request, f"{count} token{'s' if count != 1 else ''} revoked.")


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

    list_display = ["name", "position", "description"]
    list_editable = ["position"]
    search_fields = ["name", "description"]


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


@admin.register(SsoGroupMapping)
class SsoGroupMappingAdmin(admin.ModelAdmin):
    """Which identity-provider groups give which roles at single sign-on (reviewer/sso.py). No role has
    permissions here: mapping a group to a role is giving roles, a superuser's business."""

    list_display = ["idp_group", "role"]
    list_filter = ["role"]
    search_fields = ["idp_group"]


class SsoIdentityInline(ReadOnlyMixin, admin.StackedInline):
    model = SsoIdentity
    fields = ["subject", "groups", "created_at", "last_login_at"]
    readonly_fields = fields
    extra = 0


admin.site.unregister(get_user_model())


@admin.register(get_user_model())
class ProductUserAdmin(UserAdmin):
    """Django's user admin, with where each of the user's roles came from: single sign-on (which takes
    away only the roles it gave) or the admin, and the identity the user signs in with."""

    inlines = [SsoIdentityInline]
    readonly_fields = ["roles_and_sources"]
    # right after the groups (Permissions), before the dates
    fieldsets = [*UserAdmin.fieldsets[:3], ("Where the roles came from", {"fields": ["roles_and_sources"]}),
                 *UserAdmin.fieldsets[3:]]

    @admin.display(description="roles")
    def roles_and_sources(self, obj):
        sources = role_sources(obj) if obj.pk else []
        if not sources:
            return "No role: the user sees no page of the product."
        return format_html_join("", "<p><b>{}</b>: {}</p>", sources)

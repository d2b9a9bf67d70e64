"""API tokens in the admin: made here (shown once), revoked with the list action (docs/api.md)."""

from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.template.response import TemplateResponse
from django.utils import timezone
from django.utils.cache import add_never_cache_headers

from reviewer.models import ApiToken


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

"""Accounts in the admin: single sign-on's group mappings, and Django's user admin with where each of a
user's roles came from."""

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.utils.html import format_html_join

from agents.admin.base import ReadOnlyMixin
from reviewer.accounts.sso import role_sources
from reviewer.models import SsoGroupMapping, SsoIdentity


@admin.register(SsoGroupMapping)
class SsoGroupMappingAdmin(admin.ModelAdmin):
    """Which identity-provider groups give which roles at single sign-on (reviewer/accounts/sso.py). No role has
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

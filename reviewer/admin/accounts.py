"""Accounts in the admin: single sign-on's group mappings, and Django's user admin with where each of a
user's roles came from. Policy admins add users and give them roles here (docs/security.md, "Who
manages users"), within the roles: never superuser, never a single permission, never their own roles."""

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.models import Group, Permission
from django.db.models import Q
from django.utils.html import format_html_join

from agents.admin.base import ReadOnlyMixin
from reviewer.accounts.sso import role_sources
from reviewer.models import SsoGroupMapping, SsoIdentity
from reviewer.roles import role_permission_ids


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
    # When a user joined and last signed in are facts, not settings.
    readonly_fields = ["roles_and_sources", "last_login", "date_joined"]
    # The roles as one labelled list (a few groups), not the two-list chooser: usable on a phone and by
    # a screen reader (the chooser's search icons carry ARIA that axe-core refuses).
    filter_horizontal = ()
    # right after the groups (Permissions), before the dates
    fieldsets = [*UserAdmin.fieldsets[:3], ("Where the roles came from", {"fields": ["roles_and_sources"]}),
                 *UserAdmin.fieldsets[3:]]

    # What a user who is not a superuser may set: no is_superuser, no single permissions.
    WITHIN_ROLES = ("is_active", "is_staff", "groups")

    def get_fieldsets(self, request, obj=None):
        fieldsets = super().get_fieldsets(request, obj)
        if request.user.is_superuser or obj is None:  # the add form: a username and a password
            return fieldsets
        return [(name, {**options, "fields": [f for f in options["fields"] if f in self.WITHIN_ROLES]})
                if name == "Permissions" else (name, options) for name, options in fieldsets]

    def get_readonly_fields(self, request, obj=None):
        readonly = list(super().get_readonly_fields(request, obj))
        if not request.user.is_superuser and obj is not None and obj.pk == request.user.pk:
            readonly += self.WITHIN_ROLES  # a policy admin never gives themselves a role or takes their own away
        return readonly

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if db_field.name == "groups" and not request.user.is_superuser:
            kwargs["queryset"] = grantable_groups()
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def has_change_permission(self, request, obj=None):
        """Not a superuser: only users whose every permission comes with a role (no superuser, no
        one with more than the roles give; a new password would make their powers the admin's)."""
        if not super().has_change_permission(request, obj):
            return False
        return request.user.is_superuser or obj is None or within_roles(obj)

    @admin.display(description="roles")
    def roles_and_sources(self, obj):
        sources = role_sources(obj) if obj.pk else []
        if not sources:
            return "No role: the user sees no page of the product."
        return format_html_join("", "<p><b>{}</b>: {}</p>", sources)


def grantable_groups():
    """The groups whose every permission is a role's: the roles, and permission-less groups such as
    an approval rule's "Payments leads"."""
    beyond = Permission.objects.exclude(id__in=role_permission_ids())
    return Group.objects.exclude(permissions__in=beyond).order_by("name")


def within_roles(user) -> bool:
    """The user is no superuser and has no permission beyond what the roles give."""
    if user.is_superuser:
        return False
    roles = role_permission_ids()
    held = Permission.objects.filter(Q(user=user) | Q(group__user=user)).values_list("id", flat=True)
    return set(held) <= roles

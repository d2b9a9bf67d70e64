"""Single sign-on's records (``reviewer.accounts.sso``; docs/operations.md, "Single sign-on"): which
identity-provider groups give which roles, the account each provider subject signs in to, and the
roles single sign-on gave."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from reviewer.roles import ROLE_PERMISSIONS


class SsoGroupMapping(models.Model):
    """An identity-provider group whose members hold one of the product's roles: applied at every
    single sign-on login, when the role is added to those the provider lists in the group, and taken
    from those it no longer lists."""

    idp_group = models.CharField(
        "identity-provider group", max_length=200,
        help_text="The group exactly as the provider's groups claim lists it (case counts): a name such as "
                  "support-leads, a path such as /support/leads, or an ID such as Entra's object IDs.")
    role = models.ForeignKey("auth.Group", on_delete=models.PROTECT, related_name="+",
                             limit_choices_to={"name__in": list(ROLE_PERMISSIONS)})

    class Meta:
        ordering = ["idp_group", "role__name"]
        verbose_name = "single sign-on group mapping"
        constraints = [models.UniqueConstraint(fields=["idp_group", "role"], name="sso_group_mapping_once")]

    def __str__(self) -> str:
        return f"{self.idp_group} → {self.role.name}" if self.role_id else self.idp_group

    def clean(self):
        from django.core.exceptions import ValidationError

        from agents.core.inputs import control_character

        errors = {}
        if self.idp_group != self.idp_group.strip():
            errors["idp_group"] = ("The group has spaces at its start or end; the provider's claim would have to "
                                   "carry them too. Remove them.")
        elif found := control_character(self.idp_group):
            errors["idp_group"] = f"The group has a control character (U+{ord(found):04X}); remove it."
        if self.role_id and self.role.name not in ROLE_PERMISSIONS:
            errors["role"] = f"Choose one of the roles: {', '.join(ROLE_PERMISSIONS)}."
        if errors:
            raise ValidationError(errors)


class SsoIdentity(models.Model):
    """The account a person of the identity provider signs in to: found by the provider's subject
    (``sub``, which never changes), never by an email address another account could carry."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_identity")
    subject = models.CharField(max_length=255, unique=True)
    groups = models.JSONField(default=list, help_text="The groups the provider listed at the last sign-in.")
    created_at = models.DateTimeField(default=timezone.now)
    last_login_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "single sign-on identity"
        verbose_name_plural = "single sign-on identities"

    def __str__(self) -> str:
        return f"{self.subject} ({self.user})"


class SsoRoleGrant(models.Model):
    """A role single sign-on gave a user, through the provider's groups ``via``. Single sign-on takes
    away only the roles it gave: a role a user holds without such a row was given in the admin."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_role_grants")
    role = models.ForeignKey("auth.Group", on_delete=models.CASCADE, related_name="+")
    via = models.JSONField(default=list, help_text="The provider's groups that gave the role at the last sign-in.")
    granted_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "role"], name="sso_role_grant_once")]

    def __str__(self) -> str:
        return f"{self.role.name} for {self.user} (single sign-on)"

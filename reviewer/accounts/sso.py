"""Single sign-on through an OpenID Connect provider (mozilla-django-oidc), and the roles it gives.

At every sign-in the provider's groups claim decides the SSO-given roles (``SsoGroupMapping``): a
role mapped from a group the person is in is added, and a role single sign-on gave earlier
(``SsoRoleGrant``) that no listed group maps to any more is taken away. Roles given by hand in the
admin are never touched. A person the product does not know yet gets an account only when at least
one of their groups is mapped; one it knows signs in whatever their groups, and with no role left
sees the product's "no role" pages.

The library checks state and nonce, sends a PKCE challenge and verifies the ID token's signature;
here the ID token's issuer, audience and authorized party are checked too, the callback address is the one built
from SITE_URL (what the provider has registered), and a person is found by the provider's subject.
No token, code or secret is logged or stored.
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import jwt
import requests
from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ImproperlyConfigured, SuspiciousOperation, ValidationError
from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone
from mozilla_django_oidc.auth import OIDCAuthenticationBackend

from reviewer.models import SsoGroupMapping, SsoIdentity, SsoRoleGrant
from reviewer.roles import POLICY_ADMIN

logger = logging.getLogger("reviewer.sso")  # the name log filters know, kept when the module moved
ENDPOINTS = ("OIDC_OP_ISSUER", "OIDC_OP_AUTHORIZATION_ENDPOINT", "OIDC_OP_TOKEN_ENDPOINT", "OIDC_OP_USER_ENDPOINT",
             "OIDC_OP_JWKS_ENDPOINT")
NO_MAPPED_GROUP = ("Your account at {provider} is in no group that gives a role here, so no account was made "
                   "for you. Ask an admin to map one of your groups to a role.")
INACTIVE = "Your account here is turned off. Ask an admin to turn it on."
SUBJECT_TOO_LONG = ("{provider} names your account with an identifier longer than this product keeps ({limit} "
                    "characters), so you cannot sign in with it. Tell an admin.")
PROVIDER_FAILED = "{provider} did not complete the sign-in. Try again; if it keeps failing, tell an admin."


def check_settings() -> None:
    """Refuse to start with an endpoint that is no address, or that is plain HTTP off this machine."""
    if not settings.SSO_ENABLED:
        return
    for name in ENDPOINTS:
        url = getattr(settings, name)
        parts = urlsplit(url)
        if parts.scheme not in ("https", "http") or not parts.hostname:
            raise ImproperlyConfigured(f"{name} must be an https:// address, got {url!r}")
        if parts.scheme == "http" and not loopback(parts.hostname):
            raise ImproperlyConfigured(f"{name} must use https (plain http only on this machine), got {url!r}")


def loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def callback_url() -> str:
    """The one address the provider sends people back to: SITE_URL's, whatever Host a request named."""
    return settings.SITE_URL.rstrip("/") + reverse("sso_callback")


def provider_groups(claims: dict) -> list[str]:
    """The groups claim as a list of names: absent is none; anything but a list of strings is refused."""
    groups = claims.get(settings.SSO_GROUPS_CLAIM, [])
    if isinstance(groups, str):
        groups = [groups]
    if not isinstance(groups, list) or not all(isinstance(group, str) for group in groups):
        raise SuspiciousOperation(f"the {settings.SSO_GROUPS_CLAIM!r} claim is not a list of group names")
    return groups


def mapped_roles(groups: list[str]) -> dict[Group, list[str]]:
    """Each role the groups map to, with the groups that map to it."""
    roles: dict[Group, list[str]] = {}
    for mapping in SsoGroupMapping.objects.filter(idp_group__in=groups).select_related("role"):
        roles.setdefault(mapping.role, []).append(mapping.idp_group)
    return roles


@dataclass
class RoleChanges:
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


@transaction.atomic
def apply_roles(user, groups: list[str]) -> RoleChanges:
    """Give ``user`` the roles ``groups`` map to and take away the SSO-given roles they no longer map to.

    A role the user already held by hand stays a hand-given role. A policy admin enters the admin
    site (is_staff) while single sign-on gives them the role, and no longer once it takes it away.
    """
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()  # one sign-in of a person at a time
    mapped = mapped_roles(groups)
    held = set(user.groups.all())
    grants = {grant.role: grant for grant in SsoRoleGrant.objects.filter(user=user).select_related("role")}
    changes = RoleChanges()
    for role, via in mapped.items():
        if role not in held:
            user.groups.add(role)
            changes.added.append(role.name)
        if role not in held or role in grants:  # not one an admin gave first
            SsoRoleGrant.objects.update_or_create(user=user, role=role, defaults={"via": via})
    for role, grant in grants.items():
        if role not in mapped:
            grant.delete()
            if role in held:
                user.groups.remove(role)
                changes.removed.append(role.name)
    if POLICY_ADMIN in changes.added and not user.is_staff:
        user.is_staff = True
        user.save(update_fields=["is_staff"])
    elif POLICY_ADMIN in changes.removed and user.is_staff and not user.is_superuser:
        user.is_staff = False
        user.save(update_fields=["is_staff"])
    return changes


def role_sources(user) -> list[tuple[str, str]]:
    """(role, where it came from) for each role the user holds, for the admin's user page."""
    grants = {grant.role_id: grant for grant in SsoRoleGrant.objects.filter(user=user)}
    sources = []
    for role in user.groups.order_by("name"):
        grant = grants.get(role.id)
        if grant:
            groups = f"group{'s' if len(grant.via) != 1 else ''} {', '.join(grant.via)}"
            sources.append((role.name, f"single sign-on, through the provider's {groups} "
                                       f"(since {grant.granted_at:%Y-%m-%d %H:%M} UTC)"))
        else:
            sources.append((role.name, "given by hand in the admin"))
    return sources


def new_username(claims: dict, subject: str) -> str:
    """The provider's preferred username or email when it is a valid, unused username; else one
    made from the subject."""
    users = get_user_model().objects
    suffix = hashlib.sha256(subject.encode()).hexdigest()[:8]
    for candidate in (claims.get("preferred_username"), claims.get("email")):
        if isinstance(candidate, str) and candidate:
            candidate = candidate[:140]
            try:
                UnicodeUsernameValidator()(candidate)
            except ValidationError:
                continue
            return candidate if not users.filter(username=candidate).exists() else f"{candidate}-{suffix}"
    return f"sso-{suffix}"


def profile(claims: dict) -> dict:
    """The name and email the provider states, as the user row keeps them (cut to its lengths)."""
    text = {key: claims.get(key) if isinstance(claims.get(key), str) else "" for key in
            ("email", "given_name", "family_name", "name")}
    first, last = text["given_name"], text["family_name"]
    if not (first or last) and text["name"]:
        first, _, last = text["name"].partition(" ")
    return {"email": text["email"][:254], "first_name": first[:150], "last_name": last[:150]}


class SsoBackend(OIDCAuthenticationBackend):
    """mozilla-django-oidc's backend, listed whether or not single sign-on is on: it authenticates
    only the callback of a sign-in (with its nonce and PKCE verifier), never a username and password."""

    def __init__(self, *args, **kwargs):
        if settings.SSO_ENABLED:
            super().__init__(*args, **kwargs)
        self.UserModel = get_user_model()

    def authenticate(self, request, **credentials):
        if not settings.SSO_ENABLED or request is None or set(credentials) != {"nonce", "code_verifier"}:
            return None
        provider = settings.SSO_PROVIDER_NAME
        try:
            return super().authenticate(request, **credentials)
        except (requests.RequestException, jwt.PyJWTError, SuspiciousOperation, ValueError, KeyError) as error:
            # The library's messages name the failing step and the provider's answer, never a token.
            logger.warning("single sign-on failed: %s: %s", type(error).__name__, str(error)[:300])
            messages.error(request, PROVIDER_FAILED.format(provider=provider))
            return None

    def get_user(self, user_id):
        return ModelBackend.get_user(self, user_id)  # a turned-off account's session ends (the library's would not)

    def get_token(self, payload):
        payload["redirect_uri"] = callback_url()
        return super().get_token(payload)

    def verify_token(self, token, **kwargs):
        claims = super().verify_token(token, **kwargs)
        audience = claims.get("aud")
        audiences = [audience] if isinstance(audience, str) else audience or []
        if claims.get("iss") != settings.OIDC_OP_ISSUER:
            raise SuspiciousOperation(f"the token's issuer {claims.get('iss')!r} is not OIDC_OP_ISSUER")
        if settings.OIDC_RP_CLIENT_ID not in audiences:
            raise SuspiciousOperation("the token was not issued to this client (aud)")
        # OpenID Connect Core 3.1.3.7: a token for several audiences must name the party it was given to.
        if len(audiences) > 1 and "azp" not in claims:
            raise SuspiciousOperation("the token has several audiences and no authorized party (azp)")
        if "azp" in claims and claims["azp"] != settings.OIDC_RP_CLIENT_ID:
            raise SuspiciousOperation("the token was given to another party than this client (azp)")
        return claims

    def get_or_create_user(self, access_token, id_token, payload):
        userinfo = self.get_userinfo(access_token, id_token, payload)
        subject = payload.get("sub")
        if not isinstance(subject, str) or not subject or userinfo.get("sub") != subject:
            raise SuspiciousOperation("the userinfo answer is about another subject than the ID token")
        limit = SsoIdentity._meta.get_field("subject").max_length
        if len(subject) > limit:  # PostgreSQL would refuse to store it: a clear refusal rather than an error page
            logger.warning("single sign-on refused a subject of %d characters (at most %d are kept)",
                           len(subject), limit)
            messages.error(self.request, SUBJECT_TOO_LONG.format(provider=settings.SSO_PROVIDER_NAME, limit=limit))
            return None
        claims = {**payload, **userinfo}  # some providers put the groups in the ID token only
        groups = provider_groups(claims)
        identity = SsoIdentity.objects.select_related("user").filter(subject=subject).first()
        if identity is None:
            if not mapped_roles(groups):
                logger.warning("single sign-on refused a new person: none of their %d groups is mapped", len(groups))
                messages.error(self.request, NO_MAPPED_GROUP.format(provider=settings.SSO_PROVIDER_NAME))
                return None
            identity = self.create_identity(claims, subject)
        user = identity.user
        if not user.is_active:
            messages.error(self.request, INACTIVE)
            return None
        for name, value in profile(claims).items():
            if value:
                setattr(user, name, value)
        user.save(update_fields=["email", "first_name", "last_name"])
        apply_roles(user, groups)
        SsoIdentity.objects.filter(pk=identity.pk).update(groups=groups, last_login_at=timezone.now())
        return user

    def create_identity(self, claims: dict, subject: str) -> SsoIdentity:
        """A new user and their identity; the one that a simultaneous first sign-in made, if it won."""
        try:
            with transaction.atomic():
                user = self.UserModel.objects.create_user(new_username(claims, subject), **profile(claims))
                return SsoIdentity.objects.create(user=user, subject=subject)
        except IntegrityError:
            return SsoIdentity.objects.select_related("user").get(subject=subject)

"""What the JSON API keeps: per-user tokens (only their hashes) and the Idempotency-Keys a run
was started with (``reviewer.api``; docs/api.md)."""

from __future__ import annotations

import hashlib
import secrets
from datetime import UTC, timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone

from agents.models import Run


class ApiToken(models.Model):
    """A per-user token for the JSON API. Only its SHA-256 is stored: the token itself is
    shown once, when admin creates it. A request with it acts as its user, with the user's role."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, help_text="What uses it, e.g. “alerting webhook”.")
    prefix = models.CharField(max_length=12, editable=False)  # to recognise it in lists, never enough to use it
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    last_used_at = models.DateTimeField(null=True, blank=True, editable=False)
    revoked_at = models.DateTimeField(null=True, blank=True, editable=False)
    expires_at = models.DateTimeField(editable=False, help_text="API_TOKEN_DAYS after it was made.")

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name}, {self.user})"

    @staticmethod
    def digest(token: str) -> str:
        return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()

    @classmethod
    def issue(cls, user, name: str) -> tuple[ApiToken, str]:
        """A new token for ``user``: the row, and the token text (returned only this once)."""
        token = "gr_" + secrets.token_urlsafe(32)
        now = timezone.now()
        row = cls.objects.create(user=user, name=name, prefix=token[:10], key_hash=cls.digest(token), created_at=now,
                                 expires_at=now + timedelta(days=settings.API_TOKEN_DAYS))
        return row, token

    @classmethod
    def live(cls, token: str) -> ApiToken | None:
        """The token's row if it is not revoked and its user is active (expired or not), else None."""
        row = (cls.objects.select_related("user").filter(key_hash=cls.digest(token), revoked_at__isnull=True)
               .first())
        return row if row is not None and row.user.is_active else None

    @property
    def expired(self) -> bool:
        return self.expires_at <= timezone.now()

    @property
    def expires_text(self) -> str:
        return f"{timezone.localtime(self.expires_at, UTC):%Y-%m-%d %H:%M} UTC"

    @classmethod
    def user_for(cls, token: str):
        """The active user a live, unexpired token belongs to, or None."""
        row = cls.live(token)
        if row is None or row.expired:
            return None
        row.mark_used()
        return row.user

    def mark_used(self) -> None:
        ApiToken.objects.filter(pk=self.pk).update(last_used_at=timezone.now())

    @classmethod
    def revoke(cls, user, prefix: str) -> ApiToken | None:
        """Revoke ``user``'s live token that starts with ``prefix``; None when they have no such token."""
        row = cls.objects.filter(user=user, prefix=prefix, revoked_at__isnull=True).first()
        if row is not None:
            cls.objects.filter(pk=row.pk).update(revoked_at=timezone.now())
        return row


class ApiIdempotencyKey(models.Model):
    """An ``Idempotency-Key`` a user sent to start a run (IETF httpapi idempotency-key draft): the
    fingerprint of the request it came with, and the run once the request made one. A row without a
    run is a request still being processed."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=200)
    fingerprint = models.CharField(max_length=64)
    run = models.ForeignKey(Run, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="api_idempotency_key_once")]

    def __str__(self) -> str:
        return f"Idempotency-Key {self.key!r} of {self.user_id}"

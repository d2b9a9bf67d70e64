"""The token a request carries: what it is (its name, prefix, when it expires) and revoking it.

The owner of a token needs no admin access to end it: ``DELETE /api/tokens/current`` with the token
revokes it at once, as a client that was compromised or is being retired would."""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone
from ninja import Router, Schema

from reviewer.api.common import Error
from reviewer.models import ApiToken

router = Router(tags=["tokens"])


class TokenOut(Schema):
    name: str
    prefix: str
    user: str
    created_at: datetime
    expires_at: datetime
    revoked_at: datetime | None


def _out(row: ApiToken) -> dict:
    return {"name": row.name, "prefix": row.prefix, "user": row.user.get_username(), "created_at": row.created_at,
            "expires_at": row.expires_at, "revoked_at": row.revoked_at}


@router.get("/tokens/current", response={200: TokenOut, 401: Error})
def current_token(request):
    """The token this request carries: its name, prefix and user, and when it expires."""
    return _out(request.auth_token)


@router.delete("/tokens/current", response={200: TokenOut, 401: Error})
def revoke_current_token(request):
    """Revoke the token this request carries, at once: every later request with it answers 401."""
    row = request.auth_token
    ApiToken.objects.filter(pk=row.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    row.refresh_from_db()
    return _out(row)

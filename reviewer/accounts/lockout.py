"""The login lockout (django-axes): a username is locked at the address its failures come from, and an
address is locked once failures from it, for any usernames, reach a higher ceiling.

Axes counts failures per parameter set and compares the largest count with one limit, so it cannot
hold two limits itself. ``AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]`` gives the first
rule; this handler adds the ceiling: the failures recorded from the request's address within the
cool-off, all usernames together, against ``AXES_IP_FAILURE_LIMIT``.

A single sign-on callback names no username, and the people behind one address (an office behind
one NAT) share it, so its failures are counted against the browser session that started the sign-in
(``attempted_username``): anyone can fail a sign-in with a made-up code, and that must never lock
out a colleague. A browser that fails ``AXES_FAILURE_LIMIT`` times is locked for the cool-off; past
``SSO_ADDRESS_FAILURE_LIMIT`` failures from one address, each browser there gets one failure before
its lock, so a sign-in that works at its first try still works. Sign-in failures never count towards
the address ceiling of password logins, and a successful sign-in clears its browser's failures.
"""

import hashlib

from axes.attempts import get_cool_off_threshold
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_failure_limit
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Sum
from django.urls import reverse

SSO_ATTEMPT = "single sign-on, browser "  # then a digest of the session key: never the key itself


def attempted_username(request, credentials=None) -> str | None:
    """What a failure is counted against (``AXES_USERNAME_CALLABLE``): the username typed, or, for a
    single sign-on callback (its credentials are the sign-in's nonce and PKCE verifier), the browser."""
    if credentials and "nonce" in credentials:
        return sso_attempt(request)
    if credentials:
        return credentials.get(settings.AXES_USERNAME_FORM_FIELD)
    return getattr(request, "data", request.POST).get(settings.AXES_USERNAME_FORM_FIELD)


def sso_attempt(request) -> str:
    """The browser session that started a sign-in, as the lockout names it."""
    key = request.session.session_key or ""
    return SSO_ATTEMPT + hashlib.sha256(key.encode()).hexdigest()[:32]


def forget_sso_failures(request) -> None:
    """A sign-in succeeded: its browser's failures no longer count (before the session key changes)."""
    AccessAttempt.objects.filter(username=sso_attempt(request), path_info=reverse("sso_callback")).delete()


class LockoutHandler(AxesDatabaseHandler):
    def get_failures(self, request, credentials=None) -> int:
        failures = super().get_failures(request, credentials)  # this username (or browser) at this address
        if credentials and "nonce" in credentials:
            if failures and address_failures(request, sso=True) >= settings.SSO_ADDRESS_FAILURE_LIMIT:
                return max(failures, get_failure_limit(request, credentials))  # one failure is enough now
            return failures
        if address_failures(request, sso=False) >= settings.AXES_IP_FAILURE_LIMIT:
            return max(failures, get_failure_limit(request, credentials))  # the whole address is locked
        return failures


def address_failures(request, *, sso: bool) -> int:
    """The failed single sign-on callbacks (``sso``) or password logins from the request's address
    within the cool-off, for every username or browser."""
    attempts = AccessAttempt.objects.filter(ip_address=request.axes_ip_address)
    callback = reverse("sso_callback")
    attempts = attempts.filter(path_info=callback) if sso else attempts.exclude(path_info=callback)
    if settings.AXES_COOLOFF_TIME is not None:
        attempts = attempts.filter(attempt_time__gte=get_cool_off_threshold(request))
    return attempts.aggregate(total=Sum("failures_since_start"))["total"] or 0

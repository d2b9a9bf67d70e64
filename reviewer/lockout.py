"""The login lockout (django-axes): a username is locked at the address its failures come from, and an
address is locked once failures from it, for any usernames, reach a higher ceiling.

Axes counts failures per parameter set and compares the largest count with one limit, so it cannot
hold two limits itself. ``AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]`` gives the first
rule; this handler adds the ceiling: the failures recorded from the request's address within the
cool-off, all usernames together, against ``AXES_IP_FAILURE_LIMIT``.
"""

from axes.attempts import get_cool_off_threshold
from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_failure_limit
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Sum


class LockoutHandler(AxesDatabaseHandler):
    def get_failures(self, request, credentials=None) -> int:
        failures = super().get_failures(request, credentials)  # this username at this address
        if address_failures(request) >= settings.AXES_IP_FAILURE_LIMIT:
            return max(failures, get_failure_limit(request, credentials))  # the whole address is locked
        return failures


def address_failures(request) -> int:
    """The failed logins from the request's address within the cool-off, for every username."""
    attempts = AccessAttempt.objects.filter(ip_address=request.axes_ip_address)
    if settings.AXES_COOLOFF_TIME is not None:
        attempts = attempts.filter(attempt_time__gte=get_cool_off_threshold(request))
    return attempts.aggregate(total=Sum("failures_since_start"))["total"] or 0

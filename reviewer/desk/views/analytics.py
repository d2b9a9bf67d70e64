"""Review analytics: how people decide escalations over a window of days (reviewer.desk.analytics)."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.shortcuts import render
from django.views.decorators.http import require_GET

from reviewer.desk import analytics


@login_required
@require_GET
def review_analytics(request):
    if not analytics.may_see(request.user):
        raise PermissionDenied(analytics.REFUSED)
    try:
        days = int(request.GET.get("days", analytics.DEFAULT_DAYS))
    except ValueError:
        days = analytics.DEFAULT_DAYS
    if days not in analytics.WINDOWS:
        days = analytics.DEFAULT_DAYS
    people = analytics.may_see_people(request.user)
    return render(request, "analytics/report.html", {
        "figures": analytics.report(days, people=people), "windows": analytics.WINDOWS, "people": people})

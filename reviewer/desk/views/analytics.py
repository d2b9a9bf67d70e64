"""Review analytics: how people decide escalations over a window of days (reviewer.desk.analytics)."""

from django.shortcuts import render
from django.views.decorators.http import require_GET

from reviewer.desk import analytics
from reviewer.permissions import require_any_perm


@require_any_perm(*analytics.VIEW_PERMISSIONS, message=analytics.REFUSED)
@require_GET
def review_analytics(request):
    try:
        days = int(request.GET.get("days", analytics.DEFAULT_DAYS))
    except ValueError:
        days = analytics.DEFAULT_DAYS
    if days not in analytics.WINDOWS:
        days = analytics.DEFAULT_DAYS
    people = analytics.may_see_people(request.user)
    return render(request, "analytics/report.html", {
        "figures": analytics.report(days, people=people), "windows": analytics.WINDOWS, "people": people})

"""The dashboard: what needs a person, what is running, and why runs stopped (SPEC §8).

A fixed number of aggregate queries, whatever the number of runs; the stop-reason chart is an
inline SVG drawn on the server (no JavaScript library), each bar a link to the filtered run list.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.db.models import Count, Q
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET

from agents.stops import explain, opens_escalation
from reviewer.forms import IN_FLIGHT
from reviewer.models import Escalation, Run
from reviewer.permissions import require_perm
from reviewer.views.runs import since_cutoff

CHART_WIDTH = 560
BAR_AREA = 470  # the longest bar; the count is written after it
ROW_HEIGHT = 36


def stop_reason_chart(counts: dict[str, int], since: str) -> dict:
    """Bars for an SVG chart: one row per stop reason, most frequent first, each linking to its runs."""
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    top = max(counts.values(), default=0)
    bars = []
    for i, (reason, count) in enumerate(rows):
        y = i * ROW_HEIGHT
        width = max(2, round(BAR_AREA * count / top))
        bars.append({
            "reason": reason, "count": count, "explanation": explain(reason), "success": reason == "success",
            "label_y": y + 11, "bar_y": y + 15, "width": width, "count_x": width + 6, "count_y": y + 26,
            "url": reverse("runs") + "?" + urlencode({"stop_reason": reason, "since": since}),
        })
    return {"bars": bars, "width": CHART_WIDTH, "height": max(len(bars) * ROW_HEIGHT, 1), "total": sum(counts.values()),
            "since": since}


@require_perm("reviewer.view_run")  # the dashboard counts runs; all three roles have it
@require_GET
def home(request):
    now = timezone.now()
    day, week, today = since_cutoff("24h", now), since_cutoff("7d", now), since_cutoff("today", now)

    pending = Escalation.objects.filter(status=Escalation.Status.PENDING).count()
    in_flight = Run.objects.filter(status__in=Run.IN_FLIGHT).count()
    by_status = dict(Run.objects.filter(created_at__gte=today).order_by().values_list("status")
                     .annotate(n=Count("id")))
    reasons = list(Run.objects.filter(created_at__gte=week).exclude(stop_reason="").order_by()
                   .values("stop_reason").annotate(week=Count("id"), day=Count("id", filter=Q(created_at__gte=day))))
    week_counts = {row["stop_reason"]: row["week"] for row in reasons}
    day_counts = {row["stop_reason"]: row["day"] for row in reasons if row["day"]}

    today_by_status = [
        {"status": status, "label": label, "count": by_status.get(status, 0),
         "url": reverse("runs") + "?" + urlencode({"status": status, "since": "today"})}
        for status, label in Run.Status.choices
    ]
    context = {
        "pending": pending,
        "in_flight": in_flight,
        "in_flight_url": reverse("runs") + "?" + urlencode({"status": IN_FLIGHT}),
        "today_total": sum(by_status.values()),
        "today_by_status": today_by_status,
        "failed_week": sum(n for reason, n in week_counts.items()
                           if reason != "success" and not opens_escalation(reason)),
        "charts": [stop_reason_chart(day_counts, "24h"), stop_reason_chart(week_counts, "7d")],
    }
    return render(request, "home.html", context)

"""The dashboard: what needs a person, what is running, and why runs stopped; and the navigation's
live counts.

A fixed number of aggregate queries, whatever the number of runs; the stop-reason charts are inline
SVG drawn on the server by the ``stop_reason_chart`` tag (no JavaScript library). The counts are a
live fragment (``reviewer.desk.live``).
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.core.exceptions import PermissionDenied
from django.db.models import Count, Q
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST

from agents.core.stops import opens_escalation
from agents.models import Run, since
from reviewer.desk import analytics, live
from reviewer.desk.forms import IN_FLIGHT
from reviewer.ledger.chain import last_verification, verify_and_record
from reviewer.models import Escalation
from reviewer.permissions import require_perm


@require_perm("agents.view_run")  # the dashboard counts runs; all three roles have it
@require_GET
def home(request):
    context = _counts(timezone.now()) | {
        # Admins see whether the ledger held at its last verification (docs/ledger.md), and may verify it now.
        "ledger": last_verification() if request.user.is_staff else None,
        "show_ledger": request.user.is_staff,
        "may_verify_ledger": may_verify_ledger(request.user),
        "may_see_analytics": analytics.may_see(request.user),
    }
    if live.polled(request, "dashboard-counts"):
        return live.fragment(request, "home.html#dashboard-counts", context)
    return render(request, "home.html", context)


def may_verify_ledger(user) -> bool:
    """Who sees the ledger's badge (staff) and may read the ledger: policy admins."""
    return user.is_staff and user.has_perm("reviewer.view_ledgerentry")


@require_perm("reviewer.view_ledgerentry")
@require_POST
def verify_ledger_now(request):
    """The badge's "Verify now": the verification beat runs hourly, here and now; the badge shows it."""
    if not may_verify_ledger(request.user):
        raise PermissionDenied("Only policy admins can verify the ledger.")
    verify_and_record()
    return redirect(reverse("home") + "#dashboard-ledger")


def _counts(now) -> dict:
    """What the dashboard counts: what waits for a person, what runs, how today's runs ended, and why
    runs stopped (the charts)."""
    day, week, today = since("24h", now), since("7d", now), since("today", now)
    # One query for both: what waits now, and the deadline breaches of the week (each recorded once,
    # as a DeadlineBreach and the escalation's breached_at).
    escalations = Escalation.objects.aggregate(pending=Count("id", filter=Q(status=Escalation.Status.PENDING)),
                                               breaches=Count("id", filter=Q(breached_at__gte=week)))
    in_flight = Run.objects.filter(status__in=Run.IN_FLIGHT).count()
    # One conditional count per status, no GROUP BY: SQLite then walks today's range of the
    # run_window_counts index instead of the whole status index (480 ms -> a few ms at 200k runs).
    counts = Run.objects.filter(created_at__gte=today).aggregate(
        **{status: Count("id", filter=Q(status=status)) for status in Run.Status.values})
    by_status = {status: n for status, n in counts.items() if n}
    reasons = list(Run.objects.filter(created_at__gte=week).exclude(stop_reason="").order_by()
                   .values("stop_reason").annotate(week=Count("id"), day=Count("id", filter=Q(created_at__gte=day))))
    week_counts = {row["stop_reason"]: row["week"] for row in reasons}
    day_counts = {row["stop_reason"]: row["day"] for row in reasons if row["day"]}
    return {
        "pending": escalations["pending"],
        "in_flight": in_flight,
        "in_flight_url": reverse("runs") + "?" + urlencode({"status": IN_FLIGHT}),
        "today_total": sum(by_status.values()),
        "today_by_status": [
            {"status": status, "label": label, "count": by_status.get(status, 0),
             "url": reverse("runs") + "?" + urlencode({"status": status, "since": "today"})}
            for status, label in Run.Status.choices
        ],
        "failed_week": sum(n for reason, n in week_counts.items()
                           if reason != "success" and not opens_escalation(reason)),
        "charts": [(day_counts, "24h"), (week_counts, "7d")],
        "breaches_week": escalations["breaches"],
    }


@require_perm("agents.view_run")  # every role sees the navigation's counts it may read
@require_GET
def live_nav(request):
    """The navigation's counts (pending escalations, texts ready to publish, held deliveries), each
    swapped out of band by the poll in base.html, for the page named by ``on``."""
    return live.fragment(request, "live/nav.html", {"nav_path": request.GET.get("on", "")[:200]})

"""The dashboard: counts, the stop-reason chart and its links."""

import re
from collections import Counter
from datetime import timedelta
from html import unescape

import pytest
from django.urls import reverse
from django.utils import timezone

from agents.models import Run
from reviewer.models import Escalation
from tests.factories import make_run


def stat(html: str, element_id: str) -> int:
    return int(re.search(rf'id="{element_id}"[^>]*>(?:<b><a [^>]*>)?(\d+)<', html).group(1))


def bar_links(html: str, since: str) -> dict[str, str]:
    """stop reason -> link of each bar in the chart for ``since``."""
    chart = html.split(f'id="stop-reasons-{since}"', 1)[1].split("</svg>", 1)[0]
    links = re.findall(r'<a href="([^"]+)" class="bar[^"]*">\s*<title>[^<]*</title>\s*<text [^>]*>([^<]+)</text>',
                       chart)
    return {unescape(reason): unescape(url) for url, reason in links}


def bar_count(html: str, since: str, reason: str) -> int:
    chart = html.split(f'id="stop-reasons-{since}"', 1)[1].split("</svg>", 1)[0]
    return int(re.search(rf"<title>{re.escape(reason)}: (\d+) run", chart).group(1))


def test_dashboard_counts_match_the_demo_runs(login, demo_runs):
    html = login("ops").get(reverse("home")).content.decode()
    statuses = Counter(run.status for run in Run.objects.all())

    assert stat(html, "dashboard-pending") == Escalation.objects.filter(status="pending").count() == 2
    assert stat(html, "dashboard-in-flight") == 0
    assert stat(html, "dashboard-failed") == 1  # the routing run whose routes all asked for a reroute
    for status in Run.Status.values:
        assert stat(html, f"today-{status}") == statuses[status]
    assert statuses["ok"] == 5 and statuses["stopped"] == 3


def test_dashboard_counts_runs_in_flight_and_links_to_them(login, demo_runs):
    make_run(goal="g", status="queued")
    make_run(goal="g", status="running")

    html = login("ops").get(reverse("home")).content.decode()

    assert stat(html, "dashboard-in-flight") == 2
    assert 'href="/runs/?status=in_flight"' in html


def test_stop_reason_chart_counts_the_last_24_hours_and_7_days(login, demo_runs):
    demo_reasons = set(Run.objects.values_list("stop_reason", flat=True))
    make_run("routing", goal="g", status="stopped", stop_reason="llm_timeout")
    for days in (3, 30):
        run = make_run("routing", goal="g", status="stopped", stop_reason="llm_timeout")
        Run.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(days=days))

    html = login("ops").get(reverse("home")).content.decode()

    assert bar_count(html, "24h", "llm_timeout") == 1
    assert bar_count(html, "7d", "llm_timeout") == 2
    assert bar_count(html, "24h", "success") == 5
    assert set(bar_links(html, "24h")) == demo_reasons | {"llm_timeout"}
    assert "<svg" in html and "<script" not in html.split("<main")[1]


def test_chart_bars_link_to_the_list_filtered_to_that_stop_reason(login, demo_runs):
    client = login("ops")
    links = bar_links(client.get(reverse("home")).content.decode(), "24h")

    for reason, url in links.items():
        assert url == reverse("runs") + "?" + f"stop_reason={reason.replace(':', '%3A')}&since=24h"
        listed = client.get(url).content.decode()
        shown = {int(pk) for pk in re.findall(r'href="/runs/(\d+)/">Run', listed)}
        assert shown == set(Run.objects.filter(stop_reason=reason).values_list("pk", flat=True)), reason


def test_dashboard_without_runs_says_so(login, db):
    html = login("lead").get(reverse("home")).content.decode()

    assert stat(html, "dashboard-pending") == 0
    assert html.count("No runs ended in this period.") == 2


def test_anonymous_user_is_sent_to_login(client, db):
    response = client.get(reverse("home"))

    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize("runs", [3, 60])
def test_dashboard_query_count_does_not_grow_with_runs(login, db, django_assert_max_num_queries, runs):
    reasons = ["success", "llm_timeout", "policy_escalation", "max_route_attempts", "route_denied:billing_specialist"]
    statuses = ["ok", "stopped", "queued", "running", "interrupted"]
    Run.objects.bulk_create([Run(pipeline="reflection", goal="g", status=statuses[i % 5],
                                 stop_reason=reasons[i % 5] if statuses[i % 5] not in Run.IN_FLIGHT else "")
                             for i in range(runs)])
    client = login("lead")  # a lead also loads the navigation's pending count

    with django_assert_max_num_queries(12):  # 9, the emergency-brake banner, the ready-to-publish and held counts
        assert client.get(reverse("home")).status_code == 200

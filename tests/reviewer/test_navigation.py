"""The navigation every page shares (base.html): a skip link, a labelled main nav with a Runs item,
and the inbox linked only for those who may open it; and counts that read as English."""

import re

import pytest
from django.urls import reverse

from tests.factories import make_escalation

pytestmark = pytest.mark.django_db


def nav_links(html: str) -> list[str]:
    nav = html.split('<nav aria-label="Main"', 1)[1].split("</nav>", 1)[0]
    return [re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", text)).strip()
            for text in re.findall(r"<a [^>]*>(.*?)</a>", nav, re.S)]


@pytest.mark.parametrize(("name", "links"), [
    ("lead", ["Dashboard", "Incidents", "Inbox 0", "Ready to publish 0", "Maintenance", "Runs", "Failed runs",
              "Status page", "Internal status"]),
    ("ops", ["Dashboard", "Incidents", "Ready to publish 0", "Maintenance", "Runs", "Failed runs", "Status page",
             "Internal status"]),
    ("padmin", ["Dashboard", "Incidents", "Runs", "Failed runs", "Status page", "Internal status",
                "Admin"]),  # no publishing
    ("admin", ["Dashboard", "Incidents", "Inbox 0", "Ready to publish 0", "Maintenance", "Runs", "Failed runs",
               "Status page", "Internal status", "Admin"]),  # a superuser may
])
def test_the_nav_has_runs_and_links_the_inbox_only_for_who_may_open_it(client, users, name, links):
    from tests.reviewer.test_access import make_policy_admin

    client.force_login(make_policy_admin("padmin") if name == "padmin" else getattr(users, name))
    html = client.get(reverse("home")).content.decode()

    assert nav_links(html) == links
    may_open = client.get(reverse("inbox")).status_code == 200
    assert ('href="/inbox/"' in html) == may_open  # nor does the dashboard link it for the others
    may_publish = client.get(reverse("ready_to_publish")).status_code == 200
    assert ('href="/publish/"' in html) == may_publish
    assert html.index('class="skip-link" href="#main"') < html.index("<header")
    assert '<main id="main" tabindex="-1">' in html


def test_the_nav_marks_the_page_the_reader_is_on(login):
    html = login("ops").get(reverse("runs")).content.decode()

    assert '<a href="/runs/" aria-current="page">Runs</a>' in html
    assert html.count('aria-current="page"') == 1


def test_every_nav_is_labelled(login, demo_data):
    """Two <nav> on one page (the main one and a pager) each say what they are (axe: landmark-unique)."""
    from tests.factories import make_run

    incident = demo_data["inc_pay_2041"]
    for _ in range(51):
        make_run(incident=incident, status="stopped", stop_reason="llm_timeout")
    client = login("ops")
    for url in (reverse("runs"), reverse("failed_runs"), reverse("incident", args=[incident.incident_id])):
        html = client.get(url).content.decode()
        navs = re.findall(r"<nav\b[^>]*>", html)
        assert len(navs) == 2, url
        assert all("aria-label=" in nav for nav in navs), navs


@pytest.mark.parametrize(("pending", "text"), [(1, "1 pending escalation matches the filters."),
                                                (2, "2 pending escalations match the filters.")])
def test_the_inbox_count_agrees_with_its_number(login, pending, text):
    for _ in range(pending):
        make_escalation(stop_reason="policy_escalation")

    html = login("lead").get(reverse("inbox") + "?stop_reason=policy_escalation").content.decode()

    assert text in re.sub(r"\s+", " ", html)


def test_no_table_header_is_empty(login, demo_data):
    """The failed runs' retry column says what it is (axe: empty-table-header)."""
    from tests.factories import make_run

    make_run(incident=demo_data["inc_pay_2041"], status="stopped", stop_reason="llm_timeout")
    html = login("ops").get(reverse("failed_runs")).content.decode()

    headers = re.findall(r"<th[^>]*>(.*?)</th>", html, re.S)
    assert headers and all(h.strip() for h in headers), headers
    assert 'aria-label="Retry run ' in html

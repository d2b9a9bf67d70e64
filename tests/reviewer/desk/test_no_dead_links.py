"""No dead ends: every link a desk page shows a role answers that role with something other than
403. Each role's pages are crawled (the links of each page, each followed once) on the demo's runs
with a pending, a decided and a breached escalation."""

import re
from datetime import timedelta
from html import unescape
from urllib.parse import urljoin, urlsplit

import pytest
from django.utils import timezone

from agents.models import Run
from reviewer.desk import decisions
from reviewer.models import DeadlineBreach, Escalation

pytestmark = pytest.mark.django_db

HREF = re.compile(r'<a\b[^>]*\bhref="([^"]+)"')


@pytest.fixture
def desk(demo_runs, users):
    pending = Escalation.objects.filter(status="pending").order_by("pk")
    decided, breached = pending[0], pending[1]
    decisions.decide(decided.pk, users.lead, "reject", note="Not for customers.")
    now = timezone.now()
    Escalation.objects.filter(pk=breached.pk).update(deadline_at=now - timedelta(minutes=5), breached_at=now)
    DeadlineBreach.objects.create(escalation=breached, deadline_at=now - timedelta(minutes=5))
    failed = Run.objects.failed().order_by("pk").first()
    return ["/", "/inbox/", "/incidents/", "/incidents/inc_pay_2041/", "/runs/", "/runs/failed/", "/breaches/",
            f"/runs/{failed.pk}/", f"/runs/{decided.run_id}/", f"/escalations/{decided.pk}/",
            f"/escalations/{breached.pk}/", f"/escalations/{Escalation.objects.filter(status='pending').first().pk}/"]


def links(path: str, html: str) -> set[str]:
    """The page's links to this site (no fragments, no other hosts)."""
    found = set()
    for href in HREF.findall(html):
        url = urljoin(path, unescape(href))
        parts = urlsplit(url)
        if parts.netloc or not parts.path.startswith("/"):
            continue
        found.add(parts.path + (f"?{parts.query}" if parts.query else ""))
    return found


@pytest.mark.parametrize("role", ["ops", "lead", "policy_admin"])
def test_every_link_on_every_desk_page_opens_for_the_role_that_sees_it(client, users, desk, role):
    from tests.reviewer.test_access import make_policy_admin

    client.force_login(make_policy_admin() if role == "policy_admin" else getattr(users, role))
    checked, dead = set(), []
    for path in desk:
        response = client.get(path)
        if response.status_code == 403:  # the page itself is not this role's (the inbox for ops): no links
            assert path == "/inbox/" and role != "lead", (role, path)
            continue
        assert response.status_code == 200, (role, path, response.status_code)
        for link in sorted(links(path, response.content.decode()) - checked):
            checked.add(link)
            if client.get(link).status_code == 403:
                dead.append(f"{path} -> {link}")
    assert len(checked) > 20  # the crawl reached the lists, the runs, the incidents and the escalations
    assert dead == [], f"{role} is shown links that answer 403:\n" + "\n".join(dead)

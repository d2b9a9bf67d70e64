"""The review desk's presentation (issue 12): how a decided run reads on every page, for every role
that can see it; times in the viewer's zone; the inbox's live state, bulk reject, grouping and the
claimed-by-someone-else warning."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.template import Context, Template
from django.utils import timezone

from reviewer import decisions
from reviewer.models import Escalation
from tests.factories import make_escalation, make_incident

pytestmark = pytest.mark.django_db


@pytest.fixture
def decided(users):
    """Three escalations on one incident: one approved as it was, one edited, one rejected."""
    incident = make_incident("inc_desk_1", title="Desk incident")
    text = "We are investigating a problem in the EU. Current status: degraded."
    approved, edited, rejected = (make_escalation(incident=incident, text=text) for _ in range(3))
    decisions.decide(approved.pk, users.lead, "approve")
    decisions.decide(edited.pk, users.lead, "edit_approve", text=text + " Next update soon.")
    decisions.decide(rejected.pk, users.lead2, "reject", note="Wrong region entirely.")
    return [Escalation.objects.get(pk=e.pk) for e in (approved, edited, rejected)]


def test_the_outcome_names_an_edit(decided):
    assert [e.outcome for e in decided] == ["approved", "edited", "rejected"]


@pytest.mark.parametrize("role", ["ops", "lead", "admin"])
def test_the_run_page_shows_how_a_decided_run_ended_to_every_role(login, decided, role):
    client = login(role)
    approved, edited, rejected = decided
    page = client.get(f"/runs/{edited.run.pk}/").content.decode()
    assert "How it ended: edited" in page
    assert "Next update soon." in page  # the final text
    assert "Lena" in page and "UTC</time>" in page  # by whom, when
    assert "decides it in the inbox" not in page
    page = client.get(f"/runs/{rejected.run.pk}/").content.decode()
    assert "How it ended: rejected" in page and "Lars" in page and "was not sent" in page


@pytest.mark.parametrize("url", ["/runs/", "/incidents/inc_desk_1/"])
def test_run_lists_show_the_decision_instead_of_stopped(login, decided, url):
    page = login("ops").get(url).content.decode()
    for outcome in ("approved", "edited", "rejected"):
        assert f'status-{outcome}">{outcome}</span>' in page
    assert 'status-stopped">stopped' not in page


def test_run_lists_read_the_decisions_in_a_fixed_number_of_queries(login, decided, django_assert_max_num_queries):
    client = login("ops")
    with django_assert_max_num_queries(12):
        assert client.get("/runs/").status_code == 200


def test_ops_reads_an_escalation_but_gets_no_controls(login, decided, users):
    pending = make_escalation(incident=decided[0].run.incident)
    client = login("ops")
    page = client.get(f"/escalations/{pending.pk}/").content.decode()
    assert "Only support leads can decide escalations." in page
    assert "Approve the candidate" not in page and 'name="action"' not in page
    assert client.post(f"/escalations/{pending.pk}/decide/", {"action": "approve"}).status_code == 403
    page = client.get(f"/escalations/{decided[2].pk}/").content.decode()
    assert "Wrong region entirely." in page
    assert client.get("/inbox/").status_code == 403


# -- times ------------------------------------------------------------------------------------------

def render(source: str, **context) -> str:
    return Template("{% load review %}" + source).render(Context(context))


T = datetime(2026, 11, 23, 13, 5, tzinfo=UTC)


@pytest.mark.parametrize("seconds, text", [
    (0, "just now"), (59, "just now"), (60, "1 min"), (180, "3 min"), (3599, "59 min"), (3600, "1 h"),
    (3900, "1 h 5 min"), (86400 * 3, "3 d"),
])
def test_ages_read_like_a_person_says_them(seconds, text):
    with time_machine.travel(T + timedelta(seconds=seconds), tick=False):
        assert render("{{ t|age }}", t=T) == text


def test_times_are_in_one_labelled_format_in_the_active_zone():
    assert render("{% when t %}", t=T) == '<time datetime="2026-11-23T13:05:00+00:00">2026-11-23 13:05 UTC</time>'
    with timezone.override("Europe/Berlin"):
        assert "2026-11-23 14:05 Europe/Berlin" in render("{% when t %}", t=T)
    assert render("{% when t %}", t=None) == "—"


@pytest.mark.parametrize("cookie, label", [
    ("Asia/Tokyo", "Asia/Tokyo"), ("Not/AZone", "UTC"), ("../../etc/passwd", "UTC"), ("", "UTC"),
])
def test_pages_use_the_zone_the_browser_reported(login, decided, cookie, label):
    client = login("ops")
    client.cookies["tz"] = cookie
    response = client.get(f"/runs/{decided[0].run.pk}/")
    assert response.status_code == 200
    assert f" {label}</time>" in response.content.decode()

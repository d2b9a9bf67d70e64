"""After every desk action the page agrees with the database: the requested revision's polling and
its landing, a decision, a take and a decision from an inbox row (the htmx branches, with
HTTP_HX_REQUEST), and the deadline an escalation page shows."""

from datetime import timedelta
from html import unescape

import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone

from agents.testing.scripted_demo import CAVEAT
from reviewer.desk import decisions
from reviewer.desk.views import inbox as inbox_views
from reviewer.models import ChangeRequest, Escalation
from tests.factories import make_escalation

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
POLL = {**HTMX, "HTTP_HX_TARGET": "change-requests"}
ASK = f'Add "{CAVEAT}" at the end.'


@pytest.fixture
def escalation(demo_runs):
    return Escalation.objects.get(stop_reason="policy_escalation")


@pytest.fixture
def requested(escalation, users, scripted_tools):
    """Changes requested, not yet made; ``requested.land()`` makes them with the scripted model."""
    change = decisions.request_changes(escalation.pk, users.lead, ASK, enqueue=False)
    revised = f"{escalation.candidate} {CAVEAT}"

    def land():
        scripted_tools.answer("submit_revision", {"revised_answer": revised})
        return decisions.make_requested_changes(change.pk, llm=scripted_tools.llm)

    change.land, change.revised = land, revised
    return change


def edit_box(page: str) -> str:
    """The edit box's text (the textarea named "text"), unescaped."""
    start = page.index('<textarea name="text"')
    return unescape(page[page.index(">", start) + 1:page.index("</textarea>", start)])


def test_the_poll_answers_the_section_still_polling_while_the_model_works(escalation, requested, login):
    response = login("lead").get(reverse("escalation", args=[escalation.pk]), **POLL)

    page = response.content.decode()
    assert response.status_code == 200 and page.lstrip().startswith('<section class="card" id="change-requests"')
    assert 'hx-trigger="every 2s"' in page and "The model is revising the text" in page
    assert 'id="escalation-body"' not in page and "HX-Retarget" not in response


def test_when_the_revision_lands_the_poll_swaps_the_whole_body_with_the_new_text(escalation, requested, login):
    client = login("lead")
    requested.land()

    response = client.get(reverse("escalation", args=[escalation.pk]), **POLL)

    page = response.content.decode()
    assert (response["HX-Retarget"], response["HX-Reswap"], response["HX-Reselect"]) == (
        "#escalation-body", "outerHTML", "#escalation-body")
    assert edit_box(page) == requested.revised  # the edit box holds the revision
    assert "The revision passed the guard and is now the candidate" in page
    assert 'hx-trigger="every 2s"' not in page  # the polling ends
    guard = page[page.index('id="guard-panel"'):page.index("</section>", page.index('id="guard-panel"'))]
    assert "The guard on the requested revision" in guard and f"(change #{requested.pk})" in guard
    assert "Request changes</button>" in page  # the form is back


def test_a_revision_landing_while_the_page_is_read_shows_in_flight_never_half_new(escalation, requested, login,
                                                                                  monkeypatch):
    """The revision commits between the page's reads: the page says "still revising" (and polls),
    never "now the candidate" above the old text."""
    read_escalation = inbox_views._escalation

    def revision_lands_first(pk, *args, **kwargs):
        if ChangeRequest.objects.filter(pk=requested.pk, status="queued").exists():
            requested.land()
        return read_escalation(pk, *args, **kwargs)

    monkeypatch.setattr(inbox_views, "_escalation", revision_lands_first)

    page = login("lead").get(reverse("escalation", args=[escalation.pk])).content.decode()

    assert ChangeRequest.objects.get(pk=requested.pk).status == "done"
    assert "now the candidate" not in page
    assert 'hx-trigger="every 2s"' in page and "The model is revising the text" in page


def test_a_decision_on_the_page_swaps_the_history_and_the_published_diff_too(escalation, login):
    text = escalation.candidate + " Next update at noon."
    response = login("lead").post(reverse("escalation_decide", args=[escalation.pk]),
                                  {"action": "edit_approve", "text": text, "note": "Checked.", "from": "panel"},
                                  **HTMX)

    page = response.content.decode()
    assert response.status_code == 200 and 'id="decision-panel"' in page
    history = page[page.index('id="decision-history"'):]
    assert history.startswith('id="decision-history" hx-swap-oob="true"') and "edit then approve" in history
    assert 'id="published-diff-box" hx-swap-oob="true"' in page and "Next update at noon." in page
    assert 'id="esc-status" hx-swap-oob="true"' in page


def test_a_take_swaps_each_forms_decide_anyway_tick(escalation, users, login):
    decisions.take(escalation.pk, users.lead2)  # Lars took it after the lead's page was drawn

    response = login("lead").post(reverse("escalation_take", args=[escalation.pk]), {"from": "panel"}, **HTMX)

    page = response.content.decode()
    assert page.lstrip().startswith('<div id="take-box"') and "Lars" in page
    for slot in inbox_views.OVER_TAKEN_SLOTS:
        tick = page[page.index(f'id="over-taken-{slot}"'):]
        assert tick.startswith(f'id="over-taken-{slot}" class="over-taken-slot" hx-swap-oob="true"')
        assert "took this: decide anyway" in tick[:tick.index("</span>")]


def test_a_take_on_an_escalation_decided_meanwhile_swaps_the_panel_to_say_who_decided(escalation, users, login):
    decisions.decide(escalation.pk, users.lead2, "reject", note="Not ours.")  # after the lead's page was drawn

    response = login("lead").post(reverse("escalation_take", args=[escalation.pk]), {"from": "panel"}, **HTMX)

    page = response.content.decode()
    assert (response["HX-Retarget"], response["HX-Reswap"]) == ("#decision-panel", "outerHTML")
    assert page.lstrip().startswith('<div id="decision-panel"') and "Already decided by <strong>Lars</strong>" in page
    assert 'id="take-box" class="take-box" hx-swap-oob="true"' in page and "Approve the candidate" not in page


def test_a_decision_in_a_row_swaps_decided_recently_too(escalation, login):
    response = login("lead").post(reverse("escalation_decide", args=[escalation.pk]),
                                  {"action": "reject", "note": "Wrong incident.", "from": "row"}, **HTMX)

    page = response.content.decode()
    recent = page[page.index('id="decided-recently"'):]
    assert recent.startswith('id="decided-recently" hx-swap-oob="true"')
    assert f'href="/escalations/{escalation.pk}/">#{escalation.pk}</a>' in recent


# -- the deadline -----------------------------------------------------------------------------------


def test_a_breached_escalation_shows_its_deadline_and_how_long_it_is_overdue(users, login):
    escalation = make_escalation(age_minutes=30, deadline_at=timezone.now() - timedelta(minutes=17),
                                 breached_at=timezone.now() - timedelta(minutes=16))

    page = login("ops").get(reverse("escalation", args=[escalation.pk])).content.decode()

    deadline = page[page.index('id="deadline"'):page.index('id="deadline"') + 600]
    assert "overdue by 17 min" in deadline and "UTC</time>" in deadline


def test_the_deadline_shows_before_it_is_breached_and_after_the_decision(users, login):
    opened = timezone.now()
    escalation = make_escalation(deadline_at=opened + timedelta(minutes=10))
    client = login("lead")

    assert "due in 10 min" in client.get(reverse("escalation", args=[escalation.pk])).content.decode()
    with time_machine.travel(opened + timedelta(minutes=13), tick=False):
        decisions.decide(escalation.pk, users.lead, "reject", note="Too late anyway.")
        page = client.get(reverse("escalation", args=[escalation.pk])).content.decode()
    assert "decided 3 min after the deadline" in page


def test_an_escalation_without_a_deadline_says_so(users, login):
    escalation = make_escalation()
    page = login("lead").get(reverse("escalation", args=[escalation.pk])).content.decode()
    assert "none (no deadline rule fits)" in page


# -- links only for those who may follow them -------------------------------------------------------


@pytest.mark.parametrize(("role", "shown"), [("lead", True), ("ops", False), ("policy_admin", False)])
def test_the_link_back_to_the_inbox_is_only_for_those_who_may_open_it(users, client, role, shown):
    from tests.reviewer.test_access import make_policy_admin

    client.force_login(make_policy_admin() if role == "policy_admin" else getattr(users, role))
    escalation = make_escalation()
    page = client.get(reverse("escalation", args=[escalation.pk])).content.decode()
    assert ("← Escalation inbox" in page) is shown
    assert (client.get(reverse("inbox")).status_code == 200) is shown

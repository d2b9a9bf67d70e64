"""The review desk's presentation: how a decided run reads on every page, for every role that can
see it; times in the viewer's zone; the inbox's live state, bulk reject, grouping and the
taken-by-someone-else warning."""

from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.template import Context, Template
from django.utils import timezone

from agents.core.evidence import context_facts
from agents.models import Run
from reviewer.desk import decisions
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
    assert "Wrong region entirely." in page  # the reason
    assert ">stopped</span>" not in page


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


# -- the inbox: review in place, warnings, bulk reject, groups, live state ---------------------------

HTMX = {"HTTP_HX_REQUEST": "true"}


def test_approve_sits_with_the_whole_text_the_diff_and_the_guard(login):
    long_text = "We are investigating a problem in the EU. " * 8 + "The very last sentence is here."
    escalation = make_escalation(text=long_text, draft="We are investigating.",
                                 guard={"violations": [{"check": "patch_violation:too_large_edit",
                                                        "message": "The revision keeps 12% of the draft."}]})
    html = login("lead").get("/inbox/").content.decode()
    details = html[html.index('<details class="review-in-place"'):html.index("</details>")]
    assert "The very last sentence is here." in details  # the whole text, not an excerpt
    assert "<ins>" in details  # the word diff
    assert "The revision keeps 12% of the draft." in details  # the guard
    assert 'name="action" value="approve"' in details
    start = html.index(f'id="esc-row-{escalation.pk}"')
    row = html[start:html.index("</tr>", start)]
    assert row.count('value="approve"') == 1  # no approve outside the opened row


def test_deciding_an_item_another_lead_took_warns_first(login, users):
    escalation = make_escalation()
    decisions.take(escalation.pk, users.lead2)
    client = login("lead")
    html = client.get("/inbox/").content.decode()
    assert "Lars took this: decide anyway" in html and 'name="over_taken" required' in html

    response = client.post(f"/escalations/{escalation.pk}/decide/", {"action": "approve", "from": "row"}, **HTMX)
    assert response.status_code == 422
    assert "Lars took this escalation" in response.content.decode()
    assert Escalation.objects.get(pk=escalation.pk).status == "pending"

    response = client.post(f"/escalations/{escalation.pk}/decide/",
                           {"action": "approve", "from": "row", "over_taken": "on"}, **HTMX)
    assert response.status_code == 200
    assert Escalation.objects.get(pk=escalation.pk).status == "approved"


def test_taken_by_oneself_needs_no_warning(login, users):
    escalation = make_escalation()
    decisions.take(escalation.pk, users.lead)
    response = login("lead").post(f"/escalations/{escalation.pk}/decide/", {"action": "approve"})
    assert response.status_code == 302
    assert Escalation.objects.get(pk=escalation.pk).status == "approved"


def test_taking_from_the_row_swaps_the_row(login):
    escalation = make_escalation()
    response = login("lead").post(f"/escalations/{escalation.pk}/take/", {"from": "row"}, **HTMX)
    html = response.content.decode()
    assert f'id="esc-row-{escalation.pk}"' in html and "Release" in html and "<html" not in html
    assert Escalation.objects.get(pk=escalation.pk).taken_by.username == "lead"


def test_bulk_reject_rejects_the_selected_items_with_one_reason(login):
    a, b, c = make_escalation(), make_escalation(), make_escalation()
    client = login("lead")
    response = client.post("/inbox/reject/", {"ids": [str(a.pk), f"{b.pk}"], "note": "Duplicate alert."}, follow=True)
    assert "Rejected 2 escalations" in response.content.decode()
    rows = {e.pk: e for e in Escalation.objects.all()}
    assert [rows[a.pk].status, rows[b.pk].status, rows[c.pk].status] == ["rejected", "rejected", "pending"]
    assert {d.note for d in rows[a.pk].decisions.all()} == {"Duplicate alert."}


@pytest.mark.parametrize("data, message", [
    ({"note": "No ids."}, "Select the escalations to reject first."),
    ({"ids": "1", "note": "  "}, "Nothing was rejected: Rejecting needs a reason."),
    ({"ids": "999999", "note": "x"}, "does not exist"),
    ({"ids": "1", "note": "a\x00b"}, "control character"),
])
def test_bulk_reject_says_what_is_wrong_and_changes_nothing(login, data, message):
    escalation = make_escalation()
    data = {k: (str(escalation.pk) if v == "1" else v) for k, v in data.items()}
    response = login("lead").post("/inbox/reject/", data, follow=True)
    assert response.status_code == 200
    assert message in response.content.decode()
    assert Escalation.objects.get(pk=escalation.pk).status == "pending"


def test_bulk_reject_is_for_leads_only(login):
    escalation = make_escalation()
    assert login("ops").post("/inbox/reject/", {"ids": str(escalation.pk), "note": "x"}).status_code == 403
    assert Escalation.objects.get(pk=escalation.pk).status == "pending"


def test_identical_items_are_grouped_with_one_box_for_all(login):
    same = [make_escalation(text="Same text.", age_minutes=10 - i) for i in range(3)]
    other = make_escalation(text="Another text.", age_minutes=20)
    html = login("lead").get("/inbox/").content.decode()
    assert "3 identical escalations" in html
    assert f'value="{same[0].pk},{same[1].pk},{same[2].pk}"' in html
    assert html.index(f"esc-row-{other.pk}") < html.index("3 identical escalations")


def test_the_inbox_polls_and_the_poll_carries_the_badge(login):
    make_escalation()
    client = login("lead")
    html = client.get("/inbox/?pipeline=reflection").content.decode()
    assert 'hx-get="/inbox/?pipeline=reflection" hx-trigger="every 3s"' in html
    assert "js/inbox.js" in html
    poll = client.get("/inbox/?pipeline=reflection", **HTMX).content.decode()
    assert "<html" not in poll and 'id="inbox-list"' in poll
    assert '<span class="badge" id="pending-count" hx-swap-oob="true">1</span>' in poll


def test_the_badge_is_hidden_at_zero(login, users):
    escalation = make_escalation()
    response = login("lead").post(f"/escalations/{escalation.pk}/decide/",
                                  {"action": "reject", "note": "No.", "from": "row"}, **HTMX)
    assert '<span class="badge" id="pending-count" hx-swap-oob="true"\n  hidden>0</span>' in response.content.decode()
    assert 'id="pending-count"\n  hidden>0</span>' in login("lead").get("/").content.decode()


def test_bulk_reject_warns_about_items_another_lead_took(login, users):
    mine, theirs = make_escalation(), make_escalation()
    decisions.take(theirs.pk, users.lead2)
    client = login("lead")
    data = {"ids": f"{mine.pk},{theirs.pk}", "note": "Duplicate."}
    response = client.post("/inbox/reject/", data, follow=True)
    assert f"other leads took #{theirs.pk}" in response.content.decode()
    assert Escalation.objects.filter(status="pending").count() == 2
    client.post("/inbox/reject/", data | {"over_taken": "on"})
    assert Escalation.objects.filter(status="rejected").count() == 2


# -- the escalation page ----------------------------------------------------------------------------

@pytest.fixture
def on_demo_incident(demo_data):
    incident = demo_data["inc_pay_2041"]
    draft = "We see failed payments for 27% of checkouts. We will update you soon."
    candidate = ("We see failed payments for 27% of checkouts in the EU. It is resolved by 18:00. "
                 "We will update you soon.")
    return make_escalation(incident=incident, draft=draft, candidate=candidate, text=candidate)


def test_the_escalation_page_puts_the_decision_and_the_facts_first(login, on_demo_incident):
    html = login("lead").get(f"/escalations/{on_demo_incident.pk}/").content.decode()
    order = [html.index(marker) for marker in ('id="decision-panel"', 'id="facts"', 'class="card the-text"',
                                               "Why the guard blocked it")]
    assert order == sorted(order)
    assert html.index('id="decision-panel"') < html.index('<div class="stats">')


def test_the_text_is_shown_once_with_the_diff_and_every_fact_marked(login, on_demo_incident):
    html = login("ops").get(f"/escalations/{on_demo_incident.pk}/").content.decode()
    text = html[html.index('class="text diff marked-text"'):]
    text = text[:text.index("</pre>")]
    # once, marked: no separate candidate box with the plain text (ops has no edit box either)
    assert html.count('class="text diff marked-text"') == 1 and on_demo_incident.candidate not in html
    assert '<ins>checkouts in the <mark class="fact fact-unsupported" title="Region “EU” is not named' in text
    assert '<span class="fact-flag"> unsupported</span>' in text
    facts = {f.path: f.index for f in context_facts(Run.objects.get(pk=on_demo_incident.run.pk).context)}
    assert f'href="#fact-{facts["incident.affected_checkout_pct"]}"' in text
    assert f'id="fact-{facts["incident.affected_checkout_pct"]}"' in html
    assert 'title="“18:00” is not supported' in text  # a time, not the numbers 18 and 00
    assert "unsupported." in html  # the count above the text


def test_model_text_in_marks_stays_escaped(login, demo_data):
    evil = 'Done <img src=x onerror=alert(1)> for 27% "quoted" & more.'
    escalation = make_escalation(incident=demo_data["inc_pay_2041"], text=evil)
    html = login("lead").get(f"/escalations/{escalation.pk}/").content.decode()
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html


def test_deciding_on_the_page_swaps_status_take_box_and_badge_out_of_band(login, users):
    escalation = make_escalation()
    decisions.take(escalation.pk, users.lead)
    response = login("lead").post(f"/escalations/{escalation.pk}/decide/",
                                  {"action": "reject", "note": "Not needed."}, **HTMX)
    html = response.content.decode()
    assert 'id="decision-panel"' in html
    assert '<span id="esc-status" hx-swap-oob="true"\n    class="status status-rejected">rejected</span>' in html
    assert '<div id="take-box" class="take-box" hx-swap-oob="true">' in html
    take_box = html[html.index('id="take-box"'):]
    assert "Release" not in take_box  # no take controls once decided
    assert 'id="pending-count" hx-swap-oob="true"' in html


def test_an_empty_inbox_poll_still_hides_the_badge(login):
    poll = login("lead").get("/inbox/", **HTMX).content.decode()
    assert "Nothing waits for a decision" in poll
    assert poll.count('id="pending-count"') == 1
    assert '<span class="badge" id="pending-count" hx-swap-oob="true"\n  hidden>0</span>' in poll


def test_a_row_decision_swaps_the_count_of_the_page_the_lead_is_on(login):
    escalation = make_escalation()
    make_escalation(pipeline="self_critique")
    response = login("lead").post(f"/escalations/{escalation.pk}/decide/",
                                  {"action": "approve", "from": "row"},
                                  HTTP_HX_CURRENT_URL="http://testserver/inbox/?pipeline=reflection", **HTMX)
    html = response.content.decode()
    count = '<span id="inbox-count" hx-swap-oob="true"\n    >0 pending escalations\n    match the filters.</span>'
    assert count in html
    assert '<span class="badge" id="pending-count" hx-swap-oob="true">1</span>' in html

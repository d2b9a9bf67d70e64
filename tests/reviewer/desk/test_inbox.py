"""The escalation inbox and the escalation page: reviewer.desk.views.inbox."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import Permission
from django.urls import reverse
from django.utils import timezone

from agents.models import Run
from reviewer.desk import decisions
from reviewer.models import Decision, Escalation
from tests import factories

HTMX = {"HTTP_HX_REQUEST": "true"}
XSS = "<script>alert(1)</script> <img src=x onerror=alert(1)>"


@pytest.fixture
def incident(db):
    return factories.make_incident(severity="P2", eta_minutes=30)


@pytest.fixture
def make_escalation(incident):
    """A pending escalation on a quickly made run on ``incident`` (no pipeline executed)."""

    def make(*, text="We are investigating wallet top-up failures in the EU. Current status: degraded.", **fields):
        return factories.make_escalation(incident=incident, goal="Write the customer update.", text=text, **fields)

    return make


@pytest.fixture
def policy_escalation(demo_runs):
    return Escalation.objects.get(stop_reason="policy_escalation")


def row(escalation) -> str:
    return f'id="esc-row-{escalation.pk}"'


def decide_url(escalation) -> str:
    return reverse("escalation_decide", args=[escalation.pk])


# ---------------------------------------------------------------- the list


def test_the_inbox_lists_pending_escalations_oldest_first(login, make_escalation):
    newest = make_escalation(age_minutes=1)
    oldest = make_escalation(age_minutes=90)
    middle = make_escalation(age_minutes=30)

    html = login("lead").get(reverse("inbox")).content.decode()

    positions = [html.index(row(e)) for e in (oldest, middle, newest)]
    assert positions == sorted(positions)


def test_the_inbox_hides_decided_escalations(login, users, make_escalation):
    pending = make_escalation()
    decided = make_escalation(age_minutes=5)
    decisions.decide(decided.pk, users.lead, "approve")

    html = login("lead").get(reverse("inbox")).content.decode()

    assert row(pending) in html
    assert row(decided) not in html
    assert "Decided recently" in html  # listed apart, not among the pending


def test_the_inbox_shows_age_pipeline_incident_stop_reason_and_its_explanation(login, make_escalation):
    make_escalation(stop_reason="patch_violation:no_new_facts", age_minutes=125, reason="")

    html = login("lead").get(reverse("inbox")).content.decode()

    assert "2 h 5 min ago" in html
    assert "Reflection" in html and "inc_test_1" in html
    assert "patch_violation:no_new_facts" in html
    assert ('<span class="finding-message">The revision added a number, date or time that the incident context '
            'does not support.</span>') in html


def test_the_inbox_filters_by_pipeline(login, make_escalation):
    reflection = make_escalation(pipeline="reflection")
    self_critique = make_escalation(pipeline="self_critique")

    html = login("lead").get(reverse("inbox"), {"pipeline": "self_critique"}).content.decode()

    assert row(self_critique) in html and row(reflection) not in html


def test_the_inbox_filters_by_stop_reason(login, make_escalation):
    escalated = make_escalation(stop_reason="policy_escalation")
    blocked = make_escalation(stop_reason="patch_violation:too_large_edit")

    html = login("lead").get(reverse("inbox"), {"stop_reason": "patch_violation:too_large_edit"}).content.decode()

    assert row(blocked) in html and row(escalated) not in html


def test_the_inbox_filters_to_the_escalations_assigned_to_me(login, users, make_escalation):
    mine = make_escalation(taken_by=users.lead)
    theirs = make_escalation(taken_by=users.lead2)
    nobodys = make_escalation()

    html = login("lead").get(reverse("inbox"), {"mine": "1"}).content.decode()

    assert row(mine) in html
    assert row(theirs) not in html and row(nobodys) not in html


def test_the_filter_form_swaps_only_the_list_with_htmx(login, make_escalation):
    make_escalation()

    response = login("lead").get(reverse("inbox"), {"pipeline": "reflection"}, **HTMX)

    html = response.content.decode()
    assert "<html" not in html and 'id="inbox-list"' in html
    assert "HX-Request" in response["Vary"]


def test_the_inbox_pages_fifty_at_a_time(login, make_escalation):
    made = [make_escalation(age_minutes=100 - i) for i in range(51)]

    client = login("lead")
    first = client.get(reverse("inbox")).content.decode()
    second = client.get(reverse("inbox"), {"page": 2}).content.decode()

    assert row(made[49]) in first and row(made[50]) not in first
    assert row(made[50]) in second


def test_each_page_continues_the_deadline_order_with_its_rows_whole(login, make_escalation):
    """The inbox pages by id (the count and the page's ids from the index, the rows for those ids):
    page 2 starts where page 1 stopped in the deadline order, under a filter too, and its rows
    carry their run and incident."""
    now = timezone.now()
    undated = [make_escalation(age_minutes=200 - i) for i in range(49)]  # oldest first
    dated = [make_escalation(age_minutes=1, deadline_at=now + timedelta(minutes=30 - i)) for i in range(3)]
    make_escalation(stop_reason="patch_violation:no_new_facts", age_minutes=500)  # filtered out below

    client = login("lead")
    pages = [client.get(reverse("inbox"), {"stop_reason": "policy_escalation", "page": n}).content.decode()
             for n in (1, 2)]

    expected = [*reversed(dated), *undated]  # least time left first, then the oldest without a deadline
    order = [[int(pk) for pk in re.findall(r'id="esc-row-(\d+)"', html)] for html in pages]
    assert order == [[e.pk for e in expected[:50]], [e.pk for e in expected[50:]]]
    assert "Page 2 of 2" in pages[1] and "52 pending escalations" in pages[1]
    assert f'href="/incidents/{undated[-1].run.incident.incident_id}/"' in pages[1]


def test_the_inbox_query_count_does_not_grow_with_the_rows(login, users, make_escalation,
                                                            django_assert_max_num_queries):
    client = login("lead")
    counts = []
    for total in (5, 50):
        while Escalation.objects.filter(status="pending").count() < total:
            make_escalation(taken_by=users.lead2)
        # 13: the page, and since "Not now" one COUNT of the snoozed ones (the link to them)
        with django_assert_max_num_queries(13) as captured:
            response = client.get(reverse("inbox"))
        assert response.content.decode().count('class="esc-row"') == total
        counts.append(len(captured))
    assert counts[0] == counts[1]


# ---------------------------------------------------------------- who may see and decide


@pytest.mark.parametrize("name, page, message", [
    ("ops", "inbox", "Only support leads can open the escalation inbox."),
    ("outsider", "inbox", "Only support leads can open the escalation inbox."),
    # ops read an escalation (tests/reviewer/desk/test_desk.py); someone without a role sees nothing
    ("outsider", "escalation", "Your role cannot see runs."),
])
def test_ops_staff_and_outsiders_get_403_with_a_clear_message(login, make_escalation, name, page, message):
    escalation = make_escalation()
    url = reverse("inbox") if page == "inbox" else reverse("escalation", args=[escalation.pk])

    response = login(name).get(url)

    assert response.status_code == 403
    html = response.content.decode()
    assert message in html
    assert decide_url(escalation) not in html


@pytest.mark.parametrize("name", ["ops", "outsider"])
@pytest.mark.parametrize("view", ["escalation_decide", "escalation_check", "escalation_take", "escalation_release"])
def test_ops_staff_and_outsiders_cannot_post_decisions(login, make_escalation, name, view):
    escalation = make_escalation()

    response = login(name).post(reverse(view, args=[escalation.pk]), {"action": "approve", "text": "x"})

    assert response.status_code == 403
    assert "Only support leads can decide escalations." in response.content.decode()
    escalation.refresh_from_db()
    assert escalation.status == "pending" and escalation.taken_by is None


@pytest.mark.parametrize("view", ["inbox", "escalation", "escalation_decide"])
def test_anonymous_visitors_are_sent_to_the_login_page(client, make_escalation, view):
    escalation = make_escalation()
    url = reverse(view) if view == "inbox" else reverse(view, args=[escalation.pk])

    response = client.post(url) if view == "escalation_decide" else client.get(url)

    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_a_reader_without_the_decide_permission_sees_no_decide_buttons(client, make_escalation):
    reader = factories.make_user("reader")
    reader.user_permissions.add(Permission.objects.get(codename="view_escalation"),
                                Permission.objects.get(codename="view_run"))
    escalation = make_escalation()
    client.force_login(reader)

    for url in (reverse("inbox"), reverse("escalation", args=[escalation.pk])):
        response = client.get(url)
        assert response.status_code == 200
        assert decide_url(escalation) not in response.content.decode()


def test_a_lead_sees_the_decide_buttons_on_both_pages(login, make_escalation):
    escalation = make_escalation()
    client = login("lead")

    for url in (reverse("inbox"), reverse("escalation", args=[escalation.pk])):
        assert decide_url(escalation) in client.get(url).content.decode()


def test_deciding_needs_a_post(login, make_escalation):
    escalation = make_escalation()
    assert login("lead").get(decide_url(escalation)).status_code == 405


# ---------------------------------------------------------------- deciding from the list


def test_approving_a_row_with_htmx_swaps_the_row_and_the_pending_count(login, make_escalation):
    escalation = make_escalation()
    make_escalation()  # still pending afterwards

    response = login("lead").post(decide_url(escalation), {"action": "approve", "from": "row"}, **HTMX)

    assert response.status_code == 200
    html = response.content.decode()
    assert "<html" not in html
    assert row(escalation) in html and "Decided by" in html and "Lena" in html
    assert '<span class="badge" id="pending-count" hx-swap-oob="true">1</span>' in html
    assert "HX-Request" in response["Vary"]
    assert Escalation.objects.get(pk=escalation.pk).status == "approved"


def test_approving_a_row_without_htmx_redirects_to_the_inbox(login, make_escalation):
    escalation = make_escalation()

    response = login("lead").post(decide_url(escalation), {"action": "approve", "from": "row"}, follow=True)

    assert response.redirect_chain == [(reverse("inbox"), 302)]
    assert f"Escalation #{escalation.pk} approved." in response.content.decode()


def test_rejecting_a_row_without_a_reason_answers_422_with_the_row_and_the_message(login, make_escalation):
    escalation = make_escalation()

    response = login("lead").post(decide_url(escalation), {"action": "reject", "from": "row", "note": ""}, **HTMX)

    assert response.status_code == 422
    html = response.content.decode()
    assert "<html" not in html and row(escalation) in html
    assert "Rejecting needs a reason." in html
    assert Escalation.objects.get(pk=escalation.pk).status == "pending"


def test_rejecting_a_row_with_a_reason_records_it(login, make_escalation):
    escalation = make_escalation()

    response = login("lead").post(decide_url(escalation), {"action": "reject", "from": "row", "note": "Wrong region"},
                                  **HTMX)

    assert response.status_code == 200
    assert Decision.objects.get(escalation=escalation).note == "Wrong region"


# ---------------------------------------------------------------- the escalation page


def test_the_escalation_page_shows_draft_candidate_review_guard_and_word_diff(login, demo_runs):
    blocked = Escalation.objects.get(stop_reason="patch_violation:length_increase_limit")

    html = login("lead").get(reverse("escalation", args=[blocked.pk])).content.decode()

    assert blocked.draft in html
    assert re.search(r"<ins>[^<]*This estimate may change as we learn more\.</ins>", html)
    # The wallet incident's updates may grow 10% at most on revision; the caveat grows it more.
    assert re.search(r"The revision grew the text by 1\d\.\d%; the limit is 10%\.", html)
    assert "Required changes" in html  # the critique
    assert 'hx-trigger="keyup changed delay:400ms"' in html
    assert 'id="edit-violations"' in html


def test_the_diff_has_a_side_by_side_view_that_works_without_javascript(login, make_escalation):
    escalation = make_escalation(
        text="We see errors. Next update soon.", candidate="We see some errors. Next update soon."
    )
    url = reverse("escalation", args=[escalation.pk])
    client = login("lead")

    inline = client.get(url).content.decode()
    side = client.get(url, {"view": "side"}).content.decode()

    assert "?view=side" in inline and 'class="side-by-side diff"' not in inline
    assert 'class="side-by-side diff"' in side
    assert "<ins>some </ins>" in side


def test_the_escalation_page_shows_who_took_it(login, users, make_escalation):
    escalation = make_escalation(taken_by=users.lead2)

    html = login("lead").get(reverse("escalation", args=[escalation.pk])).content.decode()

    assert "Taken by <strong>Lars</strong>" in html


def test_check_edit_returns_the_violation_for_an_edit_adding_in_99_minutes(login, policy_escalation):
    text = policy_escalation.draft.replace("within 45 minutes", "in 99 minutes")
    url = reverse("escalation_check", args=[policy_escalation.pk])

    response = login("lead").post(url, {"text": text, "note": "typed so far"}, **HTMX)

    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert 'id="edit-violations"' in html
    assert "patch_violation:no_new_facts" in html
    assert "“99” is not supported by the incident context." in html
    # The justification field becomes required, keeping what was typed.
    assert 'id="justification-field" hx-swap-oob="true"' in html
    assert "required" in html and "typed so far" in html


def test_check_edit_without_htmx_renders_the_page_with_the_edit_and_its_violations(login, policy_escalation):
    text = policy_escalation.draft.replace("within 45 minutes", "in 99 minutes")

    response = login("lead").post(reverse("escalation_check", args=[policy_escalation.pk]), {"text": text})

    html = response.content.decode()
    assert "<html" in html
    assert "“99” is not supported by the incident context." in html
    assert "in 99 minutes" in html  # the edit is kept in the textarea


def test_check_edit_says_when_the_edit_is_clean(login, policy_escalation):
    text = policy_escalation.draft + " This estimate may change as we learn more."

    response = login("lead").post(reverse("escalation_check", args=[policy_escalation.pk]), {"text": text}, **HTMX)

    assert "The guard finds nothing wrong with this text." in response.content.decode()


def test_edit_approve_without_justification_answers_422_with_the_panel(login, policy_escalation):
    text = policy_escalation.draft.replace("within 45 minutes", "in 99 minutes")

    response = login("lead").post(decide_url(policy_escalation),
                                  {"action": "edit_approve", "from": "panel", "text": text}, **HTMX)

    assert response.status_code == 422
    html = response.content.decode()
    assert "<html" not in html and 'id="decision-panel"' in html
    assert "Approving despite guard violations needs a written justification." in html
    assert "in 99 minutes" in html and "patch_violation:no_new_facts" in html
    assert not Decision.objects.exists()


def test_edit_approve_without_justification_and_without_htmx_shows_the_page_with_the_error(login, policy_escalation):
    text = policy_escalation.draft.replace("within 45 minutes", "in 99 minutes")

    response = login("lead").post(decide_url(policy_escalation), {"action": "edit_approve", "text": text})

    assert response.status_code == 422
    html = response.content.decode()
    assert "<html" in html and "Approving despite guard violations needs a written justification." in html


def test_edit_approve_with_justification_records_it_and_shows_the_final_text(login, policy_escalation):
    text = policy_escalation.draft.replace("within 45 minutes", "in 99 minutes")

    response = login("lead").post(decide_url(policy_escalation), {
        "action": "edit_approve", "from": "panel", "text": text, "note": "Confirmed by ops."}, **HTMX)

    assert response.status_code == 200
    html = response.content.decode()
    assert "Decided by <strong>Lena</strong>" in html and "after editing" in html
    assert "in 99 minutes" in html and "Confirmed by ops." in html
    assert 'id="pending-count" hx-swap-oob="true"' in html


def test_deciding_on_the_page_without_htmx_redirects_to_it_with_a_message(login, policy_escalation):
    url = reverse("escalation", args=[policy_escalation.pk])

    response = login("lead").post(decide_url(policy_escalation), {"action": "reject", "note": "No."}, follow=True)

    assert response.redirect_chain == [(url, 302)]
    html = response.content.decode()
    assert f"Escalation #{policy_escalation.pk} rejected." in html
    assert 'id="decision-panel"' in html and "Reason:</strong> No." in html
    assert decide_url(policy_escalation) not in html  # no panel once decided


@pytest.mark.parametrize("htmx", [True, False])
def test_a_second_decider_is_told_409_who_decided_first(client, users, policy_escalation, htmx):
    decisions.decide(policy_escalation.pk, users.lead, "approve")
    client.force_login(users.lead2)

    response = client.post(decide_url(policy_escalation), {"action": "reject", "from": "panel", "note": "No"},
                           **(HTMX if htmx else {}))

    assert response.status_code == 409
    html = response.content.decode()
    assert "Already decided by <strong>Lena</strong>" in html
    assert "approved" in html
    assert ("<html" in html) is not htmx
    assert Decision.objects.count() == 1


def test_a_second_decider_from_the_list_gets_the_decided_row(client, users, policy_escalation):
    decisions.decide(policy_escalation.pk, users.lead, "reject", note="No")
    client.force_login(users.lead2)

    response = client.post(decide_url(policy_escalation), {"action": "approve", "from": "row"}, **HTMX)

    assert response.status_code == 409
    html = response.content.decode()
    assert row(policy_escalation) in html and "Already decided by <strong>Lena</strong>" in html


# ---------------------------------------------------------------- taking


def test_take_and_release_without_htmx_redirect_to_the_escalation(login, users, make_escalation):
    escalation = make_escalation()
    client = login("lead")
    page = reverse("escalation", args=[escalation.pk])

    response = client.post(reverse("escalation_take", args=[escalation.pk]))
    assert response.status_code == 302 and response["Location"] == page
    assert Escalation.objects.get(pk=escalation.pk).taken_by == users.lead

    client.post(reverse("escalation_release", args=[escalation.pk]))
    assert Escalation.objects.get(pk=escalation.pk).taken_by is None


def test_take_with_htmx_returns_the_take_box(login, make_escalation):
    escalation = make_escalation()

    response = login("lead").post(reverse("escalation_take", args=[escalation.pk]), **HTMX)

    html = response.content.decode()
    assert "<html" not in html and 'id="take-box"' in html and "Taken by <strong>Lena</strong>" in html
    assert reverse("escalation_release", args=[escalation.pk]) in html


def test_a_lead_cannot_take_what_another_lead_took_and_is_told_so(login, users, make_escalation):
    escalation = make_escalation(taken_by=users.lead2)

    response = login("lead").post(reverse("escalation_take", args=[escalation.pk]), follow=True)

    assert "nobody else holds" in response.content.decode()
    assert Escalation.objects.get(pk=escalation.pk).taken_by == users.lead2


def test_the_former_path_still_takes_an_escalation(login, users, make_escalation):
    escalation = make_escalation()
    former = f"/escalations/{escalation.pk}/" + "claim/"  # the path under its former name, for bookmarks

    response = login("lead").post(former)

    assert response.status_code == 302 and response["Location"] == reverse("escalation", args=[escalation.pk])
    assert Escalation.objects.get(pk=escalation.pk).taken_by == users.lead


# ---------------------------------------------------------------- escaping


def test_model_text_is_escaped_on_the_inbox_and_the_escalation_page(login, make_escalation):
    escalation = make_escalation(text=f"Draft {XSS}", candidate=f"Candidate {XSS}", reason=f"Reason {XSS}")
    Run.objects.filter(pk=escalation.run_id).update(goal=f"Goal {XSS}")
    client = login("lead")

    for url in (reverse("inbox"), reverse("escalation", args=[escalation.pk]),
                reverse("escalation", args=[escalation.pk]) + "?view=side"):
        html = client.get(url).content.decode()
        assert "<script>alert(1)</script>" not in html
        assert "<img src=x" not in html
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_user_text_is_escaped_in_decisions_and_edit_checks(login, users, make_escalation):
    escalation = make_escalation()
    client = login("lead")

    check = client.post(reverse("escalation_check", args=[escalation.pk]),
                        {"text": f"{escalation.draft} {XSS}", "note": XSS}, **HTMX).content.decode()
    decisions.decide(escalation.pk, users.lead, "edit_approve", text=f"{escalation.draft} {XSS}", note=XSS)
    page = client.get(reverse("escalation", args=[escalation.pk])).content.decode()

    for html in (check, page):
        assert "<script>alert(1)</script>" not in html and "<img src=x" not in html

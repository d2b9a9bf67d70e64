"""Incident pages: reading incidents, and ops starting runs from the form."""

import json
import re
import uuid

import pytest
from django.urls import reverse

from agents.models import Run
from agents.policy_rows import load_policy
from tests.factories import make_incident, make_run

PAY = "inc_pay_2041"


def incident_url(incident_id=PAY):
    return reverse("incident", args=[incident_id])


def start_url(incident_id=PAY):
    return reverse("start_run", args=[incident_id])


def token_in(html: str) -> str:
    return re.search(r'name="idempotency_key" value="([0-9a-f-]{36})"', html).group(1)


def test_ops_user_sees_the_run_form_with_a_default_goal_and_a_fresh_token(login, demo_data):
    client = login("ops")

    first = client.get(incident_url()).content.decode()
    second = client.get(incident_url()).content.decode()

    assert 'id="run-form"' in first
    assert f'action="{start_url()}"' in first
    assert "Write the customer update for P1 payment degradation in the US." in first
    assert token_in(first) != token_in(second)


def test_incident_page_shows_the_facts(login, demo_data):
    html = login("ops").get(incident_url()).content.decode()

    assert "P1 payment degradation in the US" in html
    assert "27%" in html and "3.4%" in html and "45 minutes" in html
    assert "monitor payment failures every 15 minutes" in html


def test_incident_page_shows_the_state_and_marks_internal_facts_for_people(login, demo_data):
    from agents.incidents import update_incident

    update_incident("inc_api_4021", upsert_facts=[{"key": "on_call_engineer", "value": "<b>Dana</b> Whitfield",
                                                    "visibility": "internal"}])

    html = login("ops").get(incident_url("inc_api_4021")).content.decode()

    assert "<dt>State</dt><dd>Monitoring</dd>" in html
    assert "<dt>On-call engineer (internal)</dt><dd>&lt;b&gt;Dana&lt;/b&gt; Whitfield</dd>" in html
    assert "<dt>Affected endpoints</dt>" in html  # a public fact, unmarked


def test_starting_a_run_creates_one_queued_run_with_the_incident_context_and_policy(login, demo_data, users):
    client = login("ops")
    token = str(uuid.uuid4())

    response = client.post(start_url(), {"pipeline": "self_critique", "goal": "Write the customer update.",
                                         "idempotency_key": token})

    run = Run.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("run", args=[run.pk])
    assert run.status == Run.Status.QUEUED
    assert run.pipeline == "self_critique"
    assert run.goal == "Write the customer update."
    assert run.incident == demo_data[PAY]
    assert run.context == demo_data[PAY].context()
    assert run.policy == json.loads(json.dumps(load_policy("self_critique").to_dict()))  # as stored: JSON
    assert run.triggered_by == users.ops
    assert run.idempotency_key.startswith(token + ":")


def test_double_click_with_the_same_token_starts_one_run(login, demo_data):
    client = login("ops")
    form = {"pipeline": "reflection", "goal": "Write the customer update.", "idempotency_key": str(uuid.uuid4())}

    first = client.post(start_url(), form)
    second = client.post(start_url(), form)

    assert Run.objects.count() == 1
    assert first["Location"] == second["Location"] == reverse("run", args=[Run.objects.get().pk])


def test_back_edit_start_with_the_same_rendered_form_starts_a_new_run(login, demo_data):
    client = login("ops")
    token = token_in(client.get(incident_url()).content.decode())
    form = {"pipeline": "reflection", "goal": "Write the customer update.", "idempotency_key": token}

    first = client.post(start_url(), form)
    again = client.post(start_url(), form)  # the same submission twice: one run
    edited = client.post(start_url(), {**form, "goal": "Write the customer update, mention the refund."})
    other = client.post(start_url(), {**form, "pipeline": "self_critique"})

    runs = list(Run.objects.order_by("pk"))
    assert [(r.pipeline, r.goal) for r in runs] == [
        ("reflection", "Write the customer update."),
        ("reflection", "Write the customer update, mention the refund."),
        ("self_critique", "Write the customer update."),
    ]
    assert first["Location"] == again["Location"] == reverse("run", args=[runs[0].pk])
    assert edited["Location"] == reverse("run", args=[runs[1].pk])
    assert other["Location"] == reverse("run", args=[runs[2].pk])


def test_a_newly_rendered_form_starts_a_new_run(login, demo_data):
    client = login("ops")
    for _ in range(2):
        token = token_in(client.get(incident_url()).content.decode())
        client.post(start_url(), {"pipeline": "reflection", "goal": "Write it.", "idempotency_key": token})

    assert Run.objects.count() == 2


def test_htmx_start_answers_with_hx_redirect_to_the_run(login, demo_data):
    response = login("ops").post(start_url(), {"pipeline": "reflection", "goal": "Write the update.",
                                               "idempotency_key": str(uuid.uuid4())}, HTTP_HX_REQUEST="true")

    assert response.status_code == 200
    assert response["HX-Redirect"] == reverse("run", args=[Run.objects.get().pk])


def test_routing_run_takes_the_ticket_text_as_its_goal(login, demo_data):
    ticket = "I was charged twice, please refund me. user_id=42"

    login("ops").post(start_url(), {"pipeline": "routing", "ticket": ticket, "goal": "ignored",
                                    "idempotency_key": str(uuid.uuid4())})

    run = Run.objects.get()
    assert (run.pipeline, run.goal) == ("routing", ticket)


def test_choosing_routing_swaps_in_the_ticket_field(login, demo_data):
    response = login("ops").get(incident_url() + "?pipeline=routing", HTTP_HX_REQUEST="true",
                                HTTP_HX_TARGET="run-form")

    html = response.content.decode()
    assert html.lstrip().startswith('<section class="card" id="run-form">')
    assert "Ticket text" in html and '<textarea name="ticket"' in html and '<textarea name="goal"' not in html
    assert response["Vary"] == "HX-Request" or "HX-Request" in response["Vary"]


def test_pipeline_links_work_without_javascript(login, demo_data):
    html = login("ops").get(incident_url() + "?pipeline=routing").content.decode()

    assert 'name="ticket"' in html
    assert "<noscript>" in html and "?pipeline=routing" in html


@pytest.mark.parametrize("name", ["lead", "outsider"])
def test_users_without_start_permission_get_403_and_see_no_form(login, demo_data, name):
    client = login(name)

    response = client.post(start_url(), {"pipeline": "reflection", "goal": "Write it.",
                                         "idempotency_key": str(uuid.uuid4())})
    page = client.get(incident_url())

    assert response.status_code == 403
    assert "Only ops staff can start runs." in response.content.decode()
    assert not Run.objects.exists()
    assert page.status_code == (200 if name == "lead" else 403)  # no role, no incident page
    assert 'id="run-form"' not in page.content.decode()
    assert start_url() not in page.content.decode()


@pytest.mark.parametrize(("data", "message"), [
    ({"pipeline": "reflection", "goal": "   "}, "Enter a goal"),
    ({"pipeline": "reflection", "goal": "x" * 50_000}, "at most 2000 characters"),
    ({"pipeline": "self_critique", "goal": "Write the update.\x00\x1b[2J"}, "control character"),
    ({"pipeline": "routing", "ticket": ""}, "Enter the ticket text"),
    ({"pipeline": "routing", "ticket": "y" * 4001}, "at most 4000 characters"),
    ({"pipeline": "routing", "ticket": "refund\x07 please"}, "control character"),
    ({"pipeline": "poetry", "goal": "Write a poem."}, "Select a valid choice"),
], ids=["blank-goal", "50k-goal", "control-goal", "blank-ticket", "long-ticket", "control-ticket", "bad-pipeline"])
def test_bad_input_shows_a_clear_form_error_and_starts_no_run(login, demo_data, data, message):
    client = login("ops")

    response = client.post(start_url(), {**data, "idempotency_key": str(uuid.uuid4())})
    partial = client.post(start_url(), {**data, "idempotency_key": str(uuid.uuid4())}, HTTP_HX_REQUEST="true")

    assert response.status_code == 400
    assert message in response.content.decode()
    assert 'id="run-form"' in response.content.decode()
    assert partial.status_code == 200  # htmx swaps only 2xx: the form with its errors replaces the old one
    assert message in partial.content.decode()
    assert "HX-Redirect" not in partial
    assert not Run.objects.exists()


def test_anonymous_user_is_sent_to_login(client, demo_data):
    for response in (client.get(reverse("incidents")), client.get(incident_url()),
                     client.post(start_url(), {"pipeline": "reflection", "goal": "Write it."})):
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))
    assert not Run.objects.exists()


def test_incident_list_shows_each_incident_with_its_latest_run(login, demo_runs):
    html = login("lead").get(reverse("incidents")).content.decode()
    latest = Run.objects.filter(incident__incident_id=PAY).order_by("-created_at", "-id").first()

    assert all(incident_id in html for incident_id in ("inc_pay_2041", "inc_api_4021", "inc_wallet_77"))
    assert reverse("run", args=[latest.pk]) in html
    assert latest.stop_reason in html


def test_incident_page_lists_its_runs_newest_first_with_status_and_stop_reason(login, demo_runs):
    html = login("ops").get(incident_url()).content.decode()
    runs = list(Run.objects.filter(incident__incident_id=PAY).order_by("-created_at", "-id"))

    positions = [html.index(f'href="{reverse("run", args=[run.pk])}"') for run in runs]
    assert positions == sorted(positions)
    for run in runs:
        assert run.stop_reason in html
    assert "policy_escalation" in html


def make_runs(incident, count, **fields):
    Run.objects.bulk_create([Run(pipeline="reflection", goal=f"goal {i}", incident=incident, status="stopped",
                                 stop_reason="llm_timeout", **fields) for i in range(count)])


@pytest.mark.parametrize("rows", [5, 50])
def test_incident_page_query_count_does_not_grow_with_its_runs(login, demo_data, users,
                                                                django_assert_max_num_queries, rows):
    make_runs(demo_data[PAY], rows, triggered_by=users.ops)
    client = login("ops")

    with django_assert_max_num_queries(16):  # 7, facts and history, updates and deliveries, the brake banner,
        # the ready-to-publish and held counts, the texts waiting to be published, the components to name
        # and the post-incident reports' drafts
        assert client.get(incident_url()).status_code == 200


@pytest.mark.parametrize("rows", [5, 50])
def test_incident_list_query_count_does_not_grow_with_runs(login, demo_data, django_assert_max_num_queries, rows):
    for incident in demo_data.values():
        make_runs(incident, rows)
    client = login("ops")

    with django_assert_max_num_queries(10):  # 5, the page's count, every incident's facts, the banner, ready and
        # held counts
        assert client.get(reverse("incidents")).status_code == 200


def test_incident_list_shows_fifty_incidents_a_page(login, demo_data):
    for i in range(60 - len(demo_data)):
        make_incident(f"inc_page_{i:02d}")
    client = login("ops")
    first = client.get(reverse("incidents")).content.decode()
    second = client.get(reverse("incidents") + "?page=2").content.decode()
    assert first.count('<tr>') - 1 == 50 and "Page 1 of 2" in first and "?page=2" in first
    assert second.count('<tr>') - 1 == 10 and "Page 2 of 2" in second


def test_runs_list_on_the_incident_page_is_a_live_fragment(login, demo_data):
    client = login("ops")
    make_runs(demo_data[PAY], 1)
    assert 'id="incident-runs" data-live' in client.get(incident_url()).content.decode()

    make_run(goal="g", incident=demo_data[PAY], status="running")
    partial = client.get(incident_url(), HTTP_HX_REQUEST="true", HTTP_HX_TARGET="incident-runs")
    assert partial.content.decode().lstrip().startswith('<div id="incident-runs" data-live hx-get=')
    assert 'hx-trigger="every 3s"' in partial.content.decode() and partial["ETag"]


def run_form_url(incident_id=PAY):
    return reverse("run_form", args=[incident_id])


def test_changing_the_pipeline_keeps_the_typed_goal_and_ticket(login, demo_data):
    client = login("ops")
    typed = "Say that refunds go out on Friday, in two sentences."

    routing = client.post(run_form_url(), {"pipeline": "routing", "goal": typed, "ticket": ""},
                          HTTP_HX_REQUEST="true").content.decode()
    back = client.post(run_form_url(), {"pipeline": "self_critique", "goal": typed, "ticket": "Refund me, please."},
                       HTTP_HX_REQUEST="true").content.decode()

    assert f'<input type="hidden" name="goal" value="{typed}">' in routing  # carried while routing shows
    assert re.search(r'<textarea name="goal"[^>]*>\s*' + re.escape(typed) + r"</textarea>", back)
    assert "Write the customer update for" not in back  # the default does not come back over it
    assert '<input type="hidden" name="ticket" value="Refund me, please.">' in back


def test_a_cleared_goal_stays_cleared_and_an_untouched_one_keeps_its_default(login, demo_data):
    client = login("ops")

    cleared = client.post(run_form_url(), {"pipeline": "reflection", "goal": ""}).content.decode()
    untouched = client.post(run_form_url(), {"pipeline": "reflection"}).content.decode()

    assert re.search(r'<textarea name="goal"[^>]*>\s*</textarea>', cleared)
    assert "Write the customer update for P1 payment degradation in the US." in untouched


@pytest.mark.parametrize("name", ["lead", "outsider"])
def test_the_run_form_swap_needs_the_start_permission(login, demo_data, name):
    assert login(name).post(run_form_url(), {"pipeline": "routing"}).status_code == 403

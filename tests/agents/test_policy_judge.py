"""The second reader on a policy row (docs/guard.md, 'The second reader'): its admin fields, the
snapshot the core reads, and a stored run that it stops for a person."""

from __future__ import annotations

import os

import pytest
from django.core.exceptions import ValidationError

from agents.core.llm.breaker import reset_breakers
from agents.core.policy import ModelSettings
from agents.models import IncidentFact, ModelCall, PipelinePolicy, PolicyChange, TraceStep
from agents.policy_rows import load_policy, policy_snapshot
from agents.tasks import run_now
from agents.testing.scripted_demo import DRAFT
from agents.testing.scripted_server import ScriptedServer, status, tool_call
from reviewer.models import Escalation
from tests.agents.conftest import admin_url, post_change
from tests.drills.conftest import clean_script, start_scripted
from tests.factories import make_user

pytestmark = pytest.mark.django_db

SENTENCE = "About 27% of checkouts are affected."


@pytest.fixture
def model_env(monkeypatch):
    """No model variables but the ones a test sets; no breaker left from another test."""
    for name in [k for k in os.environ if k.startswith(("OPENAI_", "LLM_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("LLM_ENDPOINTS", "local=http://127.0.0.1:8080/v1,reader=http://127.0.0.1:8081/v1")
    reset_breakers()
    yield monkeypatch
    reset_breakers()


@pytest.fixture
def admin_client(client, db):
    client.force_login(make_user("boss", staff=True))
    return client


def reflection_policy() -> PipelinePolicy:
    return PipelinePolicy.objects.get(pipeline="reflection", active=True)


# -- the row and its snapshot ---------------------------------------------------------------------


def test_a_policy_has_no_second_reader_until_an_admin_names_one():
    assert all(row.judge_endpoint == "" and row.judge_model == "" and row.judge_timeout_seconds is None
               for row in PipelinePolicy.objects.all())
    assert load_policy("reflection").judge is None and load_policy("self_critique").judge is None


def test_a_named_reader_reaches_the_snapshot_with_the_policys_output_mode_and_retries():
    PipelinePolicy.objects.filter(pk=reflection_policy().pk).update(
        judge_endpoint="reader", judge_model="judge-model", judge_timeout_seconds=12.5, structured_output="json",
        max_retries=1)
    policy = load_policy("reflection")
    assert policy.judge == ModelSettings(model="judge-model", endpoint="reader", timeout_seconds=12.5,
                                         structured_output="json", max_retries=1)
    assert type(policy).from_dict(policy_snapshot(policy)) == policy


def test_a_reader_without_a_timeout_takes_the_policys():
    PipelinePolicy.objects.filter(pk=reflection_policy().pk).update(
        judge_endpoint="reader", judge_model="judge-model", timeout_seconds=45)
    assert load_policy("reflection").judge.timeout_seconds == 45


@pytest.mark.parametrize(("fields", "field", "message"), [
    ({"judge_endpoint": "reader"}, "judge_model", "Name the model the second reader's endpoint serves."),
    ({"judge_model": "judge-model"}, "judge_endpoint", "Choose the second reader's endpoint, or clear its model"),
    ({"judge_endpoint": "Not A Name", "judge_model": "m"}, "judge_endpoint", "An endpoint name: lower-case"),
    ({"judge_endpoint": "reader", "judge_model": "m", "judge_timeout_seconds": 0.5}, "judge_timeout_seconds",
     "Must be between 1 and 600"),
])
def test_the_row_refuses_a_half_named_or_malformed_reader(fields, field, message):
    row = reflection_policy()
    for name, value in fields.items():
        setattr(row, name, value)
    with pytest.raises(ValidationError) as refused:
        row.full_clean()
    assert any(message in text for text in refused.value.message_dict[field])


def test_a_routing_row_keeps_no_reader():
    row = PipelinePolicy.objects.get(pipeline="routing", active=True)
    row.judge_endpoint, row.judge_model = "reader", "judge-model"
    row.full_clean()
    assert (row.judge_endpoint, row.judge_model) == ("", "")
    assert not hasattr(load_policy("routing"), "judge")


# -- admin --------------------------------------------------------------------------------------


def test_admin_offers_the_declared_endpoints_and_none_for_the_reader(model_env, admin_client):
    page = admin_client.get(admin_url("pipelinepolicy", "change", reflection_policy().pk)).content.decode()
    assert "Second reader" in page
    reader_select = page[page.index('name="judge_endpoint"'):]
    reader_select = reader_select[: reader_select.index("</select>")]
    assert '<option value="" selected>none: no second reader</option>' in reader_select
    assert '<option value="reader">reader</option>' in reader_select
    assert "127.0.0.1:8081" not in page, "admin shows names, not where they point"


def test_admin_saves_a_reader_at_a_declared_endpoint_and_records_the_change(model_env, admin_client):
    response = post_change(admin_client, "pipelinepolicy", reflection_policy(), judge_endpoint="reader",
                           judge_model="judge-model", judge_timeout_seconds="20")
    assert response.status_code == 302, response.content.decode()[:2000]
    assert load_policy("reflection").judge.endpoint == "reader"
    change = PolicyChange.objects.get()
    assert (change.before["judge_endpoint"], change.after["judge_endpoint"]) == ("", "reader")


def test_admin_refuses_a_reader_at_an_endpoint_that_is_not_declared(model_env, admin_client):
    response = post_change(admin_client, "pipelinepolicy", reflection_policy(), judge_endpoint="elsewhere",
                           judge_model="judge-model")
    assert response.status_code == 200
    assert "“elsewhere” is not a declared endpoint (declared: local, reader)" in response.content.decode()
    assert reflection_policy().judge_endpoint == ""


def test_admin_refuses_a_reader_while_the_declaration_cannot_be_read(model_env, admin_client):
    model_env.setenv("LLM_ENDPOINTS", "reader=127.0.0.1:8081")
    response = post_change(admin_client, "pipelinepolicy", reflection_policy(), judge_endpoint="reader",
                           judge_model="judge-model")
    assert response.status_code == 200
    assert "The declared endpoints cannot be read" in response.content.decode()
    assert reflection_policy().judge_endpoint == ""


# -- a stored run ----------------------------------------------------------------------------------


@pytest.fixture
def server():
    with ScriptedServer() as fake:
        yield fake


def with_reader(model_env, server):
    model_env.setenv("LLM_ENDPOINTS", f"main={server.base_url},reader={server.base_url}")
    model_env.setenv("OPENAI_MAX_RETRIES", "0")
    PipelinePolicy.objects.filter(pk=reflection_policy().pk).update(
        endpoint="main", judge_endpoint="reader", judge_model="judge-model", max_retries=0, timeout_seconds=5)


def test_a_stored_run_the_reader_finds_unsupported_goes_to_a_person_with_its_step_and_call(
        model_env, demo_data, server):
    with_reader(model_env, server)
    server.script(tool_call("submit_judgement", {"unsupported": [{"sentence": SENTENCE, "words": "27%"}]}))
    incident = demo_data["inc_pay_2041"]
    IncidentFact.objects.create(incident=incident, position=99, key="failover_host", label="Failover host",
                                value="pay-gw-7 standby", visibility="internal")
    run = start_scripted(server, incident, "judge-1", clean_script())
    assert run.context["internal"] == {"failover_host": "pay-gw-7 standby"}
    assert run.policy["judge"]["model"] == "judge-model"

    run_now(run.pk)

    run.refresh_from_db()
    assert (run.status, run.stop_reason, run.phase) == ("stopped", "invalid_answer:judge_unsupported", "judge")
    escalation = Escalation.objects.get(run=run)
    assert (escalation.stop_reason, escalation.candidate) == ("invalid_answer:judge_unsupported", DRAFT)
    assert [(v["found"], v["sentence"]) for v in escalation.guard["violations"]] == [("27%", SENTENCE)]
    call = ModelCall.objects.get(run=run, stage="judge")
    assert (call.model, call.outcome, call.prompt_tokens, call.completion_tokens) == ("judge-model", "ok", 10, 5)
    assert call.request[1]["content"].startswith("CONTEXT:") and f"TEXT:\n{DRAFT}" in call.request[1]["content"]
    assert "pay-gw-7" not in call.request[1]["content"]  # the internal fact: the reviewer reads it, not the reader
    assert "pay-gw-7" in ModelCall.objects.get(run=run, stage="review").request[1]["content"]
    step = TraceStep.objects.get(run=run, phase="judge")
    assert (step.status, step.stop_reason) == ("stopped", "invalid_answer:judge_unsupported")
    assert (step.measurements["judge_model"], step.measurements["findings"]) == ("judge-model", 1)
    assert run.details["model_settings"]["judge"] == {"model": "judge-model", "endpoint": "reader",
                                                      "timeout_seconds": 5.0}


def test_a_stored_run_whose_reader_fails_goes_to_a_person_as_judge_unavailable(model_env, demo_data, server):
    with_reader(model_env, server)
    server.script(status(500))
    run = start_scripted(server, demo_data["inc_pay_2041"], "judge-2", clean_script())

    run_now(run.pk)

    run.refresh_from_db()
    assert run.stop_reason == "invalid_answer:judge_unavailable"
    assert Escalation.objects.get(run=run).candidate == DRAFT
    assert ModelCall.objects.get(run=run, stage="judge").outcome == "llm_unavailable"
    assert TraceStep.objects.get(run=run, phase="judge").measurements["judge_error"] == "llm_unavailable"


def test_a_stored_run_whose_reader_endpoint_is_no_longer_declared_sends_it_nothing(model_env, demo_data, server):
    with_reader(model_env, server)
    model_env.setenv("LLM_ENDPOINTS", f"main={server.base_url}")
    run = start_scripted(server, demo_data["inc_pay_2041"], "judge-3", clean_script())

    run_now(run.pk)

    run.refresh_from_db()
    assert run.stop_reason == "invalid_answer:judge_unavailable"
    assert len(server.requests) == 2  # the draft and the review; nothing for the reader
    step = TraceStep.objects.get(run=run, phase="judge")
    assert step.measurements["judge_error"] == "llm_misconfigured"
    assert "the endpoint 'reader', which is not declared" in step.measurements["judge_message"]


def test_the_run_page_says_what_a_run_waiting_on_the_reader_is_doing():
    from reviewer.templatetags.review import stage_doing

    assert stage_doing("judge") == "second reading"

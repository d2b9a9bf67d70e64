"""Model endpoints are the operator's: a policy names one, admin cannot type a URL, and a key only
ever travels to the base URL it is declared with.

Two local OpenAI-compatible servers stand in for the hosts: ``declared`` is the endpoint the
operator declared; ``elsewhere`` is any other host (an attacker's, or an internal service).
"""

from __future__ import annotations

import json
import os

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.forms.models import model_to_dict

from agents.core.llm.breaker import reset_breakers
from agents.models import PipelinePolicy, Run
from agents.tasks import run_now
from agents.testing.scripted_server import ScriptedServer
from reviewer.roles import POLICY_ADMIN
from tests.agents.conftest import post_change
from tests.drills.conftest import clean_script, start_scripted

pytestmark = pytest.mark.django_db

KEY = "sk-declared-key-0123456789"
DEFAULT_KEY = "sk-default-key-9876543210"


@pytest.fixture
def declared():
    with ScriptedServer() as server:
        yield server


@pytest.fixture
def elsewhere():
    with ScriptedServer() as server:
        yield server


@pytest.fixture
def model_env(monkeypatch):
    """No model variables but the ones a test sets; no client or breaker left from another test."""
    for name in [k for k in os.environ if k.startswith(("OPENAI_", "LLM_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("OPENAI_MAX_RETRIES", "0")
    monkeypatch.setenv("OPENAI_TIMEOUT_SECONDS", "5")
    reset_breakers()
    yield monkeypatch
    reset_breakers()


@pytest.fixture
def policy_admin(db):
    """A member of "Policy admins": staff, not superuser."""
    user = get_user_model().objects.create_user("policy-admin", password="a-test-password", is_staff=True)
    user.groups.add(Group.objects.get(name=POLICY_ADMIN))
    return user


def reflection_policy() -> PipelinePolicy:
    return PipelinePolicy.objects.get(pipeline="reflection", active=True)


def sent(server: ScriptedServer) -> str:
    """Everything the server received (paths, headers, bodies) as one text to search."""
    return json.dumps([{"path": r.path, "headers": r.headers, "body": dict(r)} for r in server.requests])


def with_snapshot_model(run: Run, **model) -> Run:
    """The run's stored policy snapshot with its model settings changed (as an older snapshot has them)."""
    policy = dict(run.policy)
    policy["model"] = {**policy["model"], **model}
    Run.objects.filter(pk=run.pk).update(policy=policy)
    return run


def test_a_policy_admin_cannot_save_a_url_for_the_model_endpoint(client, policy_admin, elsewhere):
    assert not policy_admin.is_superuser and policy_admin.is_staff
    client.force_login(policy_admin)
    policy = reflection_policy()

    # The field that took a URL is gone: posting it changes nothing.
    response = post_change(client, "pipelinepolicy", policy, base_url=elsewhere.base_url)
    assert response.status_code in (200, 302)
    stored = json.dumps(model_to_dict(reflection_policy()), default=str)
    assert elsewhere.base_url not in stored and "127.0.0.1" not in stored

    # The endpoint is a choice among the declared names; a URL typed there is refused.
    response = post_change(client, "pipelinepolicy", policy, endpoint=elsewhere.base_url)
    assert response.status_code == 200, "a refused form is shown again"
    assert "Select a valid choice" in response.content.decode()
    assert elsewhere.base_url not in json.dumps(model_to_dict(reflection_policy()), default=str)


def test_a_stored_snapshot_with_an_undeclared_base_url_sends_no_request(model_env, demo_data, elsewhere):
    # The production setup of docs/running.md: a key, no base URL. The snapshot of a run (stored before
    # endpoints were named, or written by hand) asks for another host.
    model_env.setenv("OPENAI_API_KEY", DEFAULT_KEY)
    run = start_scripted(elsewhere, demo_data["inc_pay_2041"], "snap-1", clean_script())
    with_snapshot_model(run, base_url=elsewhere.base_url)

    run_now(run.pk)

    run.refresh_from_db()
    assert elsewhere.requests == [], "the key went to a host the operator never declared"
    assert (run.status, run.stop_reason) == ("stopped", "llm_misconfigured")
    assert "no declared endpoint has" in run.details["error"] and DEFAULT_KEY not in run.details["error"]


def test_a_policy_row_naming_an_unknown_endpoint_stops_the_run_before_any_request(
        model_env, demo_data, declared, elsewhere):
    model_env.setenv("LLM_ENDPOINTS", f"main={declared.base_url}|MAIN_KEY")
    model_env.setenv("MAIN_KEY", KEY)
    PipelinePolicy.objects.filter(pk=reflection_policy().pk).update(endpoint="elsewhere")
    run = start_scripted(declared, demo_data["inc_pay_2041"], "row-1", clean_script())
    assert run.policy["model"]["endpoint"] == "elsewhere"

    run_now(run.pk)

    run.refresh_from_db()
    assert (run.status, run.stop_reason, run.phase) == ("stopped", "llm_misconfigured", "setup")
    assert run.details["error"] == (
        "the policy chooses the endpoint 'elsewhere', which is not declared (declared: main); "
        "declare it in LLM_ENDPOINTS or choose another endpoint in admin")
    assert declared.requests == [] and elsewhere.requests == []


def test_a_key_reaches_only_the_host_it_is_declared_with(model_env, demo_data, client, policy_admin,
                                                        declared, elsewhere):
    model_env.setenv("LLM_ENDPOINTS", f"main={declared.base_url}|MAIN_KEY")
    model_env.setenv("MAIN_KEY", KEY)
    model_env.setenv("OPENAI_API_KEY", DEFAULT_KEY)  # declares "default" (OpenAI's URL) with its own key
    client.force_login(policy_admin)
    response = post_change(client, "pipelinepolicy", reflection_policy(), endpoint="main")
    assert response.status_code == 302, response.content.decode()[:2000]
    assert reflection_policy().endpoint == "main"

    chosen = start_scripted(declared, demo_data["inc_pay_2041"], "key-1", clean_script())
    old_declared = with_snapshot_model(  # an old snapshot whose URL is declared: it goes with that key
        start_scripted(declared, demo_data["inc_pay_2041"], "key-2", clean_script()),
        endpoint="default", base_url=declared.base_url + "/")
    old_elsewhere = with_snapshot_model(
        start_scripted(elsewhere, demo_data["inc_pay_2041"], "key-3", clean_script()),
        endpoint="main", base_url=elsewhere.base_url)
    for run in (chosen, old_declared, old_elsewhere):
        run_now(run.pk)

    runs = Run.objects.in_bulk([chosen.pk, old_declared.pk, old_elsewhere.pk])
    assert (runs[chosen.pk].status, runs[old_declared.pk].status) == ("ok", "ok")
    assert runs[old_elsewhere.pk].stop_reason == "llm_misconfigured"
    assert elsewhere.requests == []
    assert len(declared.requests) == 4
    assert {r.headers["authorization"] for r in declared.requests} == {f"Bearer {KEY}"}
    assert DEFAULT_KEY not in sent(declared)
    assert runs[chosen.pk].endpoint.startswith(declared.base_url)


def test_admin_offers_the_declared_names_and_says_when_the_declaration_cannot_be_read(
        model_env, client, policy_admin):
    client.force_login(policy_admin)
    model_env.setenv("LLM_ENDPOINTS", "local=http://127.0.0.1:8080/v1,paid=https://llm.example.com/v1|PAID_KEY")
    page = client.get(f"/admin/agents/pipelinepolicy/{reflection_policy().pk}/change/").content.decode()
    assert '<option value="local">local</option>' in page and '<option value="paid">paid</option>' in page
    assert "llm.example.com" not in page, "admin shows names, not where they point"

    model_env.setenv("LLM_ENDPOINTS", "local=127.0.0.1:8080")
    response = post_change(client, "pipelinepolicy", reflection_policy(), model_name="other-model")
    assert response.status_code == 200
    assert "The declared endpoints cannot be read: LLM_ENDPOINTS: entry 1 (&#x27;local&#x27;): the base URL must" in (
        response.content.decode())
    assert reflection_policy().model_name != "other-model"

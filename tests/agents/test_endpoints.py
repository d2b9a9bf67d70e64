"""Declared model endpoints (agents/core/llm/endpoints.py): the format, its refusals, the choice of one,
the redaction of keys, and the migration that replaced the policy's free base URL."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from agents.core.llm.base import CallRecord
from agents.core.llm.endpoints import (
    Endpoint,
    EndpointError,
    configured_keys,
    declared_endpoints,
    endpoint_names,
    redact,
    resolve_endpoint,
)

LOCAL = "http://127.0.0.1:8080/v1"


def test_endpoints_are_read_with_their_urls_and_the_keys_their_variables_hold():
    environ = {"LLM_ENDPOINTS": f" local = {LOCAL}/ , openai=https://api.openai.com/v1|OPENAI_KEY ,",
               "OPENAI_KEY": "sk-openai-key"}
    assert declared_endpoints(environ) == {
        "local": Endpoint("local", LOCAL),
        "openai": Endpoint("openai", "https://api.openai.com/v1", "OPENAI_KEY", "sk-openai-key"),
    }
    assert "sk-openai-key" not in repr(declared_endpoints(environ))


def test_the_openai_variables_declare_the_default_endpoint():
    assert declared_endpoints({}) == {}
    assert declared_endpoints({"OPENAI_API_KEY": "sk-a"}) == {
        "default": Endpoint("default", "https://api.openai.com/v1", "OPENAI_API_KEY", "sk-a")}
    assert declared_endpoints({"LLM_BACKEND": "openai", "OPENAI_BASE_URL": LOCAL}) == {
        "default": Endpoint("default", LOCAL, "OPENAI_API_KEY", "")}
    environ = {"LLM_ENDPOINTS": f"local={LOCAL}", "OPENAI_API_KEY": "sk-a"}
    assert endpoint_names(environ) == ["default", "local"]


@pytest.mark.parametrize("value, message", [
    ("local", "entry 1 ('local') is not name=base_url or name=base_url|KEY_VARIABLE"),
    (f"Local={LOCAL}", "entry 1 ('Local'): the name must be lower-case letters"),
    (f"a={LOCAL},a={LOCAL}", "entry 2 ('a'): the name 'a' is declared twice"),
    (f"a={LOCAL}|sk-live-123", "never the key itself"),
    ("a=ftp://files.example.com", "must start with http:// or https:// and name a host"),
    ("a=http://", "must start with http:// or https:// and name a host"),
    ("a=https://user:pw@llm.example.com/v1", "must not carry user info, a query or a fragment"),
    ("a=https://llm.example.com/v1?api-key=x", "must not carry user info, a query or a fragment"),
    ("a=http://127.0.0.1:port/v1", "is not a URL"),
])
def test_a_declaration_that_cannot_be_read_is_refused_naming_the_variable(value, message):
    with pytest.raises(EndpointError, match="^LLM_ENDPOINTS: ") as error:
        declared_endpoints({"LLM_ENDPOINTS": value})
    assert message in str(error.value)
    assert "sk-live-123" not in str(error.value)


def test_an_endpoint_declares_what_it_bears_in_its_settings_and_the_default_one_in_its_variable():
    environ = {"LLM_ENDPOINTS": f"local={LOCAL};limit_param=max_tokens;concurrency=1;max_completion_tokens=160;"
                                "min_call_seconds=30"}
    local = declared_endpoints(environ)["local"]
    assert (local.concurrency, local.max_completion_tokens, local.min_call_seconds) == (1, 160, 30)
    default = declared_endpoints({"OPENAI_BASE_URL": LOCAL, "OPENAI_ENDPOINT_OPTIONS": "concurrency=2"})["default"]
    assert (default.concurrency, default.max_completion_tokens, default.min_call_seconds) == (2, None, 0)
    # An admin's limits tighten the declared ones, never loosen them.
    assert local.limited(4, 100).concurrency == 1 and local.limited(4, 100).max_completion_tokens == 100
    assert default.limited(None, 200).max_completion_tokens == 200


@pytest.mark.parametrize("option, message", [
    ("concurrency=0", "concurrency must be a whole number from 1 to 64, got '0'"),
    ("concurrency=two", "concurrency must be a whole number from 1 to 64, got 'two'"),
    ("max_completion_tokens=8", "max_completion_tokens must be a whole number from 16 to 100000, got '8'"),
    ("min_call_seconds=1.5", "min_call_seconds must be a whole number from 1 to 3600, got '1.5'"),
    ("slots=1", "unknown endpoint setting 'slots=1' (known: tool_choice, limit_param, instructions_in_user, "
                "concurrency, max_completion_tokens, min_call_seconds)"),
])
def test_a_limit_that_cannot_be_read_is_refused_naming_the_variable(option, message):
    with pytest.raises(EndpointError, match="^OPENAI_ENDPOINT_OPTIONS: ") as error:
        declared_endpoints({"OPENAI_BASE_URL": LOCAL, "OPENAI_ENDPOINT_OPTIONS": option})
    assert message in str(error.value)


def test_default_cannot_be_declared_twice():
    with pytest.raises(EndpointError, match="declares the 'default' endpoint and OPENAI_BASE_URL is set too"):
        declared_endpoints({"LLM_ENDPOINTS": f"default={LOCAL}", "OPENAI_BASE_URL": LOCAL})
    with pytest.raises(EndpointError, match="^OPENAI_BASE_URL: the base URL must start with http"):
        declared_endpoints({"OPENAI_BASE_URL": "127.0.0.1:8080"})


def test_a_policy_gets_only_a_declared_endpoint():
    environ = {"LLM_ENDPOINTS": f"local={LOCAL},paid=https://llm.example.com/v1|PAID_KEY", "PAID_KEY": "sk-paid"}
    assert resolve_endpoint("paid", environ=environ).api_key == "sk-paid"
    with pytest.raises(EndpointError, match=r"endpoint 'other', which is not declared \(declared: local, paid\)"):
        resolve_endpoint("other", environ=environ)
    with pytest.raises(EndpointError, match=r"endpoint 'default', which is not declared"):
        resolve_endpoint("", environ=environ)
    with pytest.raises(EndpointError, match="takes its key from PAID_KEY, which is not set"):
        resolve_endpoint("paid", environ={**environ, "PAID_KEY": " "})


def test_llm_endpoint_points_every_policy_at_one_endpoint():
    environ = {"LLM_ENDPOINTS": f"local={LOCAL},spare=http://127.0.0.1:8081/v1", "LLM_ENDPOINT": "spare"}
    assert resolve_endpoint("local", environ=environ).name == "spare"
    with pytest.raises(EndpointError, match="LLM_ENDPOINT names the endpoint 'gone', which is not declared"):
        resolve_endpoint("local", environ={**environ, "LLM_ENDPOINT": "gone"})


def test_an_old_snapshot_url_is_used_only_with_the_endpoint_declared_at_that_url():
    environ = {"LLM_ENDPOINTS": f"local={LOCAL}|LOCAL_KEY", "LOCAL_KEY": "sk-local", "OPENAI_API_KEY": "sk-default"}
    assert resolve_endpoint("default", LOCAL + "/", environ) == Endpoint("local", LOCAL, "LOCAL_KEY", "sk-local")
    with pytest.raises(EndpointError) as error:
        resolve_endpoint("default", "https://user:pw@evil.example.com/v1?k=1", environ)
    assert str(error.value) == (
        "the policy snapshot asks for the base URL https://evil.example.com/v1, which no declared endpoint has "
        "(declared: default, local); retry the run to use the current policy")


def test_every_configured_key_is_redacted_at_any_depth():
    environ = {"LLM_ENDPOINTS": "a=http://x.example|A_KEY,broken entry|B_KEY", "A_KEY": "sk-aaaa",
               "B_KEY": "sk-aaaa-longer", "OPENAI_API_KEY": "sk-openai", "C_KEY": "sk-unrelated-var"}
    keys = configured_keys(environ)
    assert keys == ["sk-aaaa-longer", "sk-openai", "sk-aaaa"]  # the longest first; only declared variables
    record = CallRecord(stage="draft", attempt=1, try_number=1, model="m", latency_ms=1.0,
                        raw='{"draft": "sk-aaaa-longer"}', error="sk-openai")
    value = {"out": ["x sk-aaaa y", ("sk-openai",)], "sk-aaaa": 3, "n": 4, "call": record}
    assert redact(value, keys) == {
        "out": ["x [redacted] y", ("[redacted]",)], "[redacted]": 3, "n": 4,
        "call": CallRecord(stage="draft", attempt=1, try_number=1, model="m", latency_ms=1.0,
                           raw='{"draft": "[redacted]"}', error="[redacted]")}
    assert redact("abc", ["abc"]) == "abc", "a key of 1-3 characters would shred every text"


@pytest.mark.django_db(transaction=True)
def test_the_migration_keeps_blank_rows_on_default_and_fails_a_url_closed():
    executor = MigrationExecutor(connection)
    executor.migrate([("agents", "0003_run_records")])
    old = executor.loader.project_state([("agents", "0003_run_records")]).apps
    Policy = old.get_model("agents", "PipelinePolicy")
    Policy.objects.filter(pipeline="routing").update(base_url="http://10.0.0.5:8000/v1")

    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())

    from agents.models import PipelinePolicy, PolicyChange

    assert dict(PipelinePolicy.objects.values_list("pipeline", "endpoint")) == {
        "reflection": "", "self_critique": "", "routing": "legacy"}
    change = PolicyChange.objects.get()
    assert (change.policy.pipeline, change.before["base_url"], change.after["endpoint"]) == (
        "routing", "http://10.0.0.5:8000/v1", "legacy")

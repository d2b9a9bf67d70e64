"""Internal details never reach customers (agents.core.guard.internal; docs/contract.md, 'Fact and claim
checks'): each unsafe text is stopped and its safe twin passes, on five kinds of incident that are not
payments, as a final answer and as a revision, and in the pipelines through the real SDK.
"""

from __future__ import annotations

import pytest

from agents.core.guard import check_final_answer, check_revision, guard_config
from agents.core.guard.internal import find_internal, public_context
from agents.core.pipelines import run_reflection, run_self_critique
from agents.core.policy import ReflectionPolicy, SelfCritiquePolicy
from agents.core.prompts import INTERNAL_TITLE, build_request
from agents.core.stops import STOP_REASONS, opens_escalation
from agents.core.text import canonical_json

RUNBOOK_UPDATE = "publish customer update via status page every 15 minutes"

LOGIN = {
    "report_date": "2026-11-23", "region": "EU",
    "incident": {"incident_id": "inc_login_88", "title": "Sign-in failures for single sign-on users",
                 "severity": "P2", "state": "identified", "status": "degraded", "failed_login_pct": 8},
    "fact_meta": [{"key": "failed_login_pct", "label": "Failed sign-ins", "unit": "%"}],
    "approved_actions": [RUNBOOK_UPDATE],
    "internal": {"on_call_engineer": "Dana Whitfield", "gateway_host": "auth-gateway.eu.internal",
                 "change_ticket": "OPS-512", "runbook": "roll back the SAML certificate on the identity provider"},
}
WEBHOOKS = {
    "report_date": "2026-11-23", "region": "US",
    "incident": {"incident_id": "inc_hooks_12", "title": "Webhook deliveries delayed", "severity": "P3",
                 "state": "investigating", "status": "delayed", "delayed_deliveries": 1200,
                 "retry_note": "Deliveries are retried automatically"},
    "fact_meta": [{"key": "delayed_deliveries", "label": "Delayed deliveries", "unit": "count"},
                  {"key": "retry_note", "label": "Retries", "unit": "text"}],
    "internal": {"queue_host": "webhook-queue-3.svc.cluster.local",
                 "dispatcher_log": "/var/log/webhooks/dispatch.log", "backlog_peak": 5400},
}
EXPORTS = {
    "report_date": "2026-11-23", "region": "EU",
    "incident": {"incident_id": "inc_exports_5", "title": "CSV exports failing", "severity": "P3",
                 "state": "investigating", "status": "failing", "affected_endpoint": "/v2/exports"},
    "fact_meta": [{"key": "affected_endpoint", "label": "Affected endpoint", "unit": "text"}],
    "internal": {"tracking_ticket": "JIRA-1234", "incident_commander": "Priya Raman",
                 "engineering_note": "The export worker is fixed in build 77; rollout pending"},
}
API_LATENCY = {
    "report_date": "2026-11-23", "region": "EU",
    "incident": {"incident_id": "inc_api_4021", "title": "Public API latency", "severity": "P2",
                 "state": "monitoring", "status": "mitigated", "affected_endpoints": "/v2/orders and /v2/payments",
                 "p95_latency_ms": 1800},
    "fact_meta": [{"key": "affected_endpoints", "label": "Affected endpoints", "unit": "text"},
                  {"key": "p95_latency_ms", "label": "p95 latency", "unit": "ms"}],
    "approved_actions": [RUNBOOK_UPDATE],
    "internal": {"database_host": "orders-db.corp", "runbook": "watch API latency dashboards"},
}
MAINTENANCE = {
    "report_date": "2026-11-23", "region": "UK",
    "incident": {"incident_id": "inc_maint_3", "title": "Scheduled database maintenance", "severity": "P4",
                 "state": "monitoring", "status": "in progress"},
    "internal": {"runbook": "drain replicas in zone b then restart the primary with the new parameter group",
                 "escalation_step": "page the DBA on call if replication lag exceeds 30 seconds",
                 "maintenance_owner": "Sam Okafor"},
}

# (context, unsafe text, what it gives away, its safe twin)
CASES = [
    (LOGIN, "Dana Whitfield is looking into the sign-in failures.", "Dana Whitfield",
     "Our engineers are looking into the sign-in failures."),
    (LOGIN, "Whitfield and the team are looking into the sign-in failures.", "Whitfield",
     "Our team is looking into the sign-in failures."),
    (LOGIN, "Requests to auth-gateway.eu.internal are failing for some users.", "auth-gateway.eu.internal",
     "Requests to our sign-in service are failing for some users."),
    (LOGIN, "We are rolling back the SAML certificate on the identity provider.",
     "rolling back the SAML certificate on the identity provider",
     "We are working on a fix for the sign-in failures."),
    (LOGIN, "The change is tracked as OPS-512.", "OPS-512", "The change is being tracked by our team."),
    (WEBHOOKS, "The queue on webhook-queue-3.svc.cluster.local is backed up.", "webhook-queue-3.svc.cluster.local",
     "Our delivery queue is backed up."),
    (WEBHOOKS, "Errors show in /var/log/webhooks/dispatch.log.", "/var/log/webhooks/dispatch.log",
     "Deliveries are retried automatically."),
    (WEBHOOKS, "A bad setting in /etc/nginx/nginx.conf delayed deliveries.", "/etc/nginx/nginx.conf",
     "A setting change delayed deliveries."),
    (EXPORTS, "The failure is tracked in JIRA-1234.", "JIRA-1234",
     "Exports from /v2/exports fail for some accounts."),
    (EXPORTS, "Priya is coordinating the fix.", "Priya", "Our incident team is coordinating the fix."),
    (API_LATENCY, "The slowdown comes from orders-db.corp.", "orders-db.corp",
     "Calls to /v2/orders and /v2/payments are slower than usual."),
    (API_LATENCY, "We watch the API latency dashboards closely.", "API latency dashboards",
     "We are watching API latency closely."),
    (MAINTENANCE, "We drain replicas in zone b before we restart the primary.", "drain replicas in zone b",
     "Maintenance is in progress and may slow some requests."),
    (MAINTENANCE, "Sam Okafor leads the maintenance.", "Sam Okafor", "Our database team leads the maintenance."),
]
IDS = [f"{case[0]['incident']['incident_id']}-{i}" for i, case in enumerate(CASES)]


# Each case is one sentence; an update also says what is happening and what is affected, or the guard
# calls it uninformative. This opening says both and nothing else, so only the sentence under test
# can fail a check.
OPENING = "We are investigating a service problem. "


def final(text, context, policy=None):
    policy = policy or ReflectionPolicy()
    return check_final_answer(OPENING + text, context, policy.guard, max_answer_chars=policy.max_answer_chars)


@pytest.mark.parametrize("context, unsafe, leaked, safe", CASES, ids=IDS)
def test_an_internal_detail_is_stopped_and_its_safe_twin_passes(context, unsafe, leaked, safe):
    found = find_internal(unsafe, context)
    assert [v.check for v in found] == ["internal_detail"]
    assert leaked.lower() in found[0].found.lower() or found[0].found.lower() in leaked.lower()
    assert "customers" in found[0].message and found[0].found in found[0].message

    answer = final(unsafe, context)
    assert not answer.ok
    assert "invalid_answer:internal_detail" in [v["check"] for v in answer.violations]
    assert find_internal(safe, context) == []
    assert final(safe, context).ok, final(safe, context).violations


@pytest.mark.parametrize("context, unsafe, leaked, safe", CASES[:6], ids=IDS[:6])
def test_a_revision_that_leaks_is_patch_violation_internal_detail(context, unsafe, leaked, safe):
    original = "Our engineers are looking into the problem."
    for policy in (ReflectionPolicy(), SelfCritiquePolicy()):
        config = guard_config(policy, context)
        leaking = check_revision(original, f"{original} {unsafe}", context, config)
        assert "patch_violation:internal_detail" in [v["check"] for v in leaking.violations]
        twin = check_revision(original, f"{original} {safe}", context, config)
        assert "patch_violation:internal_detail" not in [v["check"] for v in twin.violations]


def test_a_leak_with_nothing_else_wrong_is_the_stop_reason_and_opens_an_escalation():
    answer = final("Dana Whitfield is looking into the sign-in failures.", LOGIN)
    assert answer.stop_reason == "invalid_answer:internal_detail"
    assert answer.violations[0]["message"] == ("“Dana Whitfield” comes from the internal fact “on call engineer”; "
                                               "customers must not see it.")
    assert opens_escalation("invalid_answer:internal_detail")
    assert opens_escalation("patch_violation:internal_detail")
    assert "internal detail" in STOP_REASONS["invalid_answer:internal_detail"]


def test_the_domain_of_an_internal_address_is_an_internal_host():
    assert [v.found for v in find_internal("Write to oncall@ops.corp for help.", WEBHOOKS)] == ["ops.corp"]
    assert find_internal("Write to support@example.com for help.", WEBHOOKS) == []


def test_a_host_message_reads_as_a_sentence_for_a_support_lead():
    (violation,) = find_internal("Requests to auth-gateway.eu.internal fail.", LOGIN)
    assert violation.message == "“auth-gateway.eu.internal” is an internal host name; customers must not see it."
    # The guard reports the host once, as internal, not also as an undeclared web address.
    found = [(v["check"], v["found"]) for v in final("Requests to auth-gateway.eu.internal fail.", LOGIN).violations]
    assert found == [("invalid_answer:internal_detail", "auth-gateway.eu.internal")]


# ---------------------------------------------------------------- false positives


@pytest.mark.parametrize("text", [
    "Sign-in works again for local accounts and corporate customers.",  # "local", "corp" as words
    "Calls to /v2/orders are slower than usual.",  # a public API path
    "See https://status.example.com/etc/help for the details.",  # a path inside a URL is no file path
    "Timestamps follow ISO-8601 and the API speaks HTTP-2.",  # standards are not tickets
    "This is about incident INC-2041.",  # incident ids are the incident checks' business
    "We will keep you posted, and we will watch closely.",
    "May the update reach everyone; Will and Grant are common words.",
])
def test_ordinary_words_paths_and_ids_are_no_internal_detail(text):
    assert find_internal(text, {**LOGIN, "internal": {**LOGIN["internal"], "owner": "Will Grant"}}) == []


def test_a_path_or_host_a_public_fact_names_is_fine():
    context = {**WEBHOOKS, "incident": {**WEBHOOKS["incident"], "status_host": "status.acme.local"}}
    assert find_internal("Check status.acme.local for news.", context) == []
    assert [v.found for v in find_internal("Check status.acme.local for news.", WEBHOOKS)] == ["status.acme.local"]


def test_without_a_context_nothing_is_checked():
    assert find_internal("Dana Whitfield on auth-gateway.eu.internal", None) == []


# ---------------------------------------------------------------- internal facts support nothing


def test_a_number_only_an_internal_fact_holds_supports_nothing():
    answer = final("The backlog peaked at 5,400 deliveries.", WEBHOOKS)
    assert answer.stop_reason == "invalid_answer:no_new_facts" and answer.violations[0]["found"] == "5,400"
    public = {**WEBHOOKS, "incident": {**WEBHOOKS["incident"], "backlog_peak": 5400}}
    assert final("The backlog peaked at 5,400 deliveries.", public).ok


def test_an_approved_action_is_content_customers_may_be_told_its_numbers_included():
    # Approved actions are what the update is approved to say: stating one, or the rhythm only it
    # holds, is no internal detail and no new fact.
    for text in ("We will publish a customer update via the status page every 15 minutes.",
                 "We will post an update every 15 minutes."):
        assert find_internal(text, LOGIN) == []
        assert final(text, LOGIN).ok, final(text, LOGIN).violations
    # The rhythm the action gives is the one a text may promise.
    answer = final("We will post an update every 30 minutes.", LOGIN)
    assert answer.stop_reason == "invalid_answer:no_new_facts" and answer.violations[0]["found"] == "30"


def test_a_number_only_an_internal_runbook_step_holds_supports_nothing():
    answer = final("We will page our database team if replication lag exceeds 30 seconds.", MAINTENANCE)
    assert answer.stop_reason in ("invalid_answer:internal_detail", "invalid_answer:no_new_facts")
    assert "invalid_answer:no_new_facts" in [v["check"] for v in answer.violations]


def test_a_claim_only_an_internal_fact_makes_licenses_nothing():
    answer = final("The export worker is fixed.", EXPORTS)
    assert answer.stop_reason == "invalid_answer:state_claim"  # a fix in place, on an incident under investigation
    public = {**EXPORTS, "key_messages": ["The export worker is fixed."]}
    assert final("The export worker is fixed.", public).ok


def test_the_public_context_leaves_out_the_internal_facts_and_keeps_the_approved_actions():
    assert public_context(LOGIN) == {key: value for key, value in LOGIN.items() if key != "internal"}
    assert public_context(LOGIN)["approved_actions"] == [RUNBOOK_UPDATE]


# ---------------------------------------------------------------- prompts


@pytest.mark.parametrize("stage", ["draft", "shorten", "revise"])
def test_a_writing_request_has_no_internal_fact_but_the_approved_actions(stage):
    policy = ReflectionPolicy()
    request = build_request(policy, stage, context=LOGIN, sections=[("GOAL", "Write the update.")],
                            inputs={"context": LOGIN})
    for secret in ("Dana Whitfield", "auth-gateway.eu.internal", "OPS-512", "SAML", INTERNAL_TITLE):
        assert secret not in request.user
    assert RUNBOOK_UPDATE in request.user
    assert request.inputs["context"] == public_context(LOGIN)
    assert request.user.startswith("CONTEXT:\n" + canonical_json(public_context(LOGIN)))


@pytest.mark.parametrize("stage", ["review", "critique"])
def test_a_judging_request_may_see_them_after_the_public_context(stage):
    request = build_request(ReflectionPolicy(), stage, context=LOGIN, sections=[("DRAFT", "A draft.")],
                            inputs={"context": LOGIN})
    public, internal, draft = request.user.split("\n\n")
    assert public == "CONTEXT:\n" + canonical_json(public_context(LOGIN))
    assert internal.startswith(INTERNAL_TITLE) and "Dana Whitfield" in internal and "SAML" in internal
    assert RUNBOOK_UPDATE in public and RUNBOOK_UPDATE not in internal
    assert draft == "DRAFT:\nA draft."
    assert request.inputs["context"] == LOGIN


# ---------------------------------------------------------------- the pipelines, through the real SDK

LEAK = "Sign-in fails for 8% of single sign-on users. Dana Whitfield is on it."
TWIN = "Sign-in fails for 8% of single sign-on users. Our engineers are on it."
APPROVE = {"decision": "approve", "issues": [], "fix_plan": [], "reason": "Fine.", "quality": "good",
           "completeness": "complete"}
CRITIQUE_APPROVE = {"decision": "approve", "severity": "low", "risks": [], "required_changes": [], "reason": "Fine."}
CRITIQUE_REVISE = {"decision": "revise", "severity": "medium", "risks": [{"type": "missing_uncertainty",
                                                                          "note": "Who works on it."}],
                   "required_changes": ['ADD "Dana Whitfield is on it."'], "reason": "Name the engineer."}


def test_reflection_escalates_an_approved_draft_that_names_the_engineer(scripted_tools):
    scripted_tools.answer("submit_draft", {"draft": LEAK}).answer("reflect", APPROVE)
    result = run_reflection("Write the update.", LOGIN, scripted_tools.policy(ReflectionPolicy), scripted_tools.llm)
    assert (result.status, result.stop_reason) == ("stopped", "invalid_answer:internal_detail")
    assert result.candidate == LEAK
    draft_request = scripted_tools.fake.requests[0]["messages"][1]["content"]
    review_request = scripted_tools.fake.requests[1]["messages"][1]["content"]
    assert "Dana Whitfield" not in draft_request and RUNBOOK_UPDATE in draft_request
    assert "Dana Whitfield" in review_request


def test_reflection_publishes_the_twin(scripted_tools):
    scripted_tools.answer("submit_draft", {"draft": TWIN}).answer("reflect", APPROVE)
    result = run_reflection("Write the update.", LOGIN, scripted_tools.policy(ReflectionPolicy), scripted_tools.llm)
    assert (result.status, result.stop_reason, result.answer) == ("ok", "success", TWIN)


def test_self_critique_stops_a_revision_that_adds_the_engineer(scripted_tools):
    scripted_tools.answer("submit_draft", {"draft": TWIN}).answer("submit_critique", CRITIQUE_REVISE).answer(
        "submit_revision", {"revised_answer": f"{TWIN} Dana Whitfield is on it."})
    result = run_self_critique("Write the update.", LOGIN, scripted_tools.policy(SelfCritiquePolicy),
                               scripted_tools.llm)
    assert (result.status, result.stop_reason) == ("stopped", "patch_violation:internal_detail")
    revise_request = scripted_tools.fake.requests[2]["messages"][1]["content"]
    assert "on_call_engineer" not in revise_request

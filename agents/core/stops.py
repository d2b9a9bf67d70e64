"""Stop reasons: the public contract (docs/contract.md, 'Stop reasons'), and the one exception that carries them.

A gate that says no raises :class:`Stop`; the pipeline runner catches it once and turns it into a
recorded result. The names below appear in the database, the UI, the API and metrics exactly as
written. Entries ending in ``:<...>`` take a detail suffix (a decision, a type, a target, a check).
"""

from __future__ import annotations

from agents.core.policy import DECISIONS


class Stop(Exception):
    """A gate stopped the run. ``reason`` is a stop reason from :data:`STOP_REASONS`."""

    def __init__(self, reason: str, *, phase: str | None = None, **details):
        super().__init__(reason)
        self.reason = reason
        self.phase = phase
        self.details = details


# One line of plain language per stop reason, shown next to a stopped run.
STOP_REASONS: dict[str, str] = {
    "success": "The run passed every gate.",
    # Budgets and the model layer
    "max_seconds": (
        "The run used up its wall-time budget (before the next model call, while it waited for the model "
        "server to be free, or during a call), or had too little left to start the next call."
    ),
    "max_tokens": "The run used up its token budget, or had too few left for the next call's answer.",
    "max_cost": "The run used up its cost budget.",
    "llm_timeout": "The model did not answer in time, even after retries.",
    "llm_unavailable": "The model server failed (5xx or refused connection), even after retries.",
    "llm_rate_limited": "The model server kept answering 429 (rate limited), even after retries.",
    "llm_circuit_open": "The model endpoint failed repeatedly, so calls are paused for a cool-down.",
    "llm_auth_failed": "The model server refused the credentials (401/403).",
    "llm_bad_request": "The model server rejected the request (4xx other than 401/403/408/409/429).",
    "llm_invalid_json": "The model's answer was not parseable JSON, or carried no structured payload.",
    "llm_invalid_schema": "The model's JSON had the wrong shape (a required text field missing or not a string).",
    "llm_empty": "The model returned an empty answer where text was required.",
    "llm_misconfigured": (
        "The model settings are invalid (e.g. OPENAI_TIMEOUT_SECONDS is not a number) or ask for an endpoint "
        "the operator did not declare; no request was sent. See the run's details."
    ),
    "llm_wrong_tool": "The model called a different tool than the one the stage asked for.",
    "llm_truncated": "The model's answer was cut at the stage's completion-token limit (finish_reason: length).",
    "internal_error:<ExceptionClass>": "An unexpected error inside the pipeline; the traceback is logged.",
    # Draft
    "invalid_draft:empty": "The draft was empty.",
    "invalid_draft:too_long": "The draft was longer than the policy's max_draft_chars.",
    # Reflection review
    "invalid_review:not_object": "The review was not a JSON object.",
    "invalid_review:decision": "The review's decision was missing or blank.",
    "review_decision_not_allowed_policy:<decision>": "The review chose a decision the policy does not allow.",
    "invalid_review:issues": "The review's issues were not a list.",
    "invalid_review:too_many_issues": "The review listed more issues than the budget allows.",
    "invalid_review:issue_item": "An issue in the review was not an object.",
    "invalid_review:issue_type": "An issue in the review had no type.",
    "review_issue_not_allowed_policy:<type>": "An issue in the review has a type the policy does not allow.",
    "invalid_review:issue_note": "An issue in the review had no note.",
    "invalid_review:fix_plan": "The review's fix plan was not a list.",
    "invalid_review:too_many_fix_items": "The fix plan had more items than the budget allows.",
    "invalid_review:fix_item": "A fix plan item was not a non-blank string.",
    "invalid_review:reason": "The review's reason was not a string.",
    "invalid_review:approve_with_high_risk_issue": "The review approved a draft while naming a high-risk issue.",
    "invalid_review:revise_without_issues": "The review asked for a revision without naming an issue.",
    "invalid_review:revise_without_fix_plan": "The review asked for a revision without a fix plan.",
    "invalid_review:high_risk_requires_escalate": "A high-risk issue must be escalated to a person, not revised.",
    "invalid_review:escalate_reason_required": "The review escalated without giving a reason.",
    "review_decision_denied_execution:<decision>": (
        "The decision is allowed by policy but not allowed to execute now (e.g. auto-revision is off)."
    ),
    # Self-critique
    "invalid_critique:not_object": "The critique was not a JSON object.",
    "invalid_critique:decision": "The critique's decision was missing or blank.",
    "critique_decision_not_allowed_policy:<decision>": "The critique chose a decision the policy does not allow.",
    "invalid_critique:severity": "The critique's severity was blank or not low, medium or high.",
    "invalid_critique:risks": "The critique's risks were not a list.",
    "invalid_critique:too_many_risks": "The critique listed more risks than the budget allows.",
    "invalid_critique:risk_item": "A risk in the critique was not an object.",
    "invalid_critique:risk_type": "A risk in the critique had no type.",
    "critique_risk_not_allowed_policy:<type>": "A risk in the critique has a type the policy does not allow.",
    "invalid_critique:risk_note": "A risk in the critique had no note.",
    "invalid_critique:required_changes": "The critique's required changes were not a list.",
    "invalid_critique:too_many_required_changes": "The critique listed more required changes than the budget allows.",
    "invalid_critique:required_change_item": "A required change was not a non-blank string.",
    "invalid_critique:reason": "The critique's reason was not a string.",
    "invalid_critique:approve_with_required_changes": "The critique approved the draft while requiring changes.",
    "invalid_critique:approve_with_high_risk": "The critique approved a high-risk draft.",
    "invalid_critique:revise_without_required_changes": "The critique asked for a revision without required changes.",
    "invalid_critique:required_changes_not_enforceable": (
        "A required change had no single quoted phrase with an ADD/REMOVE marker."
    ),
    "invalid_critique:high_risk_requires_escalate": "A high-risk critique must be escalated to a person, not revised.",
    "invalid_critique:escalate_reason_required": "The critique escalated without giving a reason.",
    "critique_decision_denied_execution:<decision>": (
        "The decision is allowed by policy but not allowed to execute now (e.g. auto-revision is off)."
    ),
    # Escalation
    "policy_escalation": "The reviewer model escalated the draft to a person.",
    # Patch guard
    "invalid_revised:empty": "The revision was empty.",
    "invalid_revised:too_long": "The revision was longer than the policy's max_answer_chars.",
    "invalid_revised:no_changes": "The revision did not change the draft.",
    "patch_violation:too_large_edit": "The revision rewrote too much of the draft (similarity below the minimum).",
    "patch_violation:no_new_facts": (
        "The revision added a number, date or time that the incident context does not support."
    ),
    "patch_violation:new_incident_id": "The revision named an incident id that is not in the context.",
    "patch_violation:new_severity_label": "The revision used a severity label (P0-P5) that is not in the context.",
    "patch_violation:new_region": "The revision named a region that is not in the context.",
    "patch_violation:length_increase_limit": "The revision grew the text by more than the allowed percentage.",
    "patch_violation:restricted_claims": (
        "The revision made a restricted claim (e.g. 'resolved') not supported by the context."
    ),
    "patch_violation:state_claim": (
        "The revision says the incident is over (or still going on) when its state says otherwise, or calls it planned."
    ),
    "patch_violation:scope_claim": "The revision says how many customers are affected in a way the facts contradict.",
    "patch_violation:liability": (
        "The revision promises credits, refunds or waived fees, admits fault, or blames a third party the "
        "facts do not name."
    ),
    "patch_violation:data_safety": (
        "The revision says customers' data is safe (or breached) without a fact that says so."
    ),
    "patch_violation:time_commitment": "The revision commits to a time for the fix (\"within the hour\", \"shortly\").",
    "patch_violation:malformed_text": (
        "The revision is broken text (stray punctuation, an unfinished sentence, a placeholder, a doubled word "
        "or an unclosed bracket)."
    ),
    "patch_violation:uninformative": (
        "The revision tells customers neither what is happening nor what is affected (e.g. a bare date)."
    ),
    "patch_violation:unsupported_statement": (
        "The revision states something (a cause, an action, a consequence) the incident's facts do not support."
    ),
    "patch_violation:fix_plan_not_applied": "The revision did not apply the review's fix plan phrases.",
    "patch_violation:internal_detail": (
        "The revision showed customers an internal detail (an internal fact, a host, a path, "
        "a ticket id or a person's name)."
    ),
    "patch_violation:required_changes_not_applied": (
        "The revision did not apply the critique's required changes, even after retries and the fallback."
    ),
    # Patch guard: links, contacts and markup
    "patch_violation:unknown_contact": (
        "The revision has a web address, email address or phone number the incident does not declare."
    ),
    "patch_violation:markup": "The revision has a mention, link markup, an HTML tag or a Markdown link.",
    # Final answer
    "invalid_answer:empty": "The final answer was empty.",
    "invalid_answer:too_long": "The final answer was longer than the policy's max_answer_chars.",
    "invalid_answer:no_new_facts": (
        "The final answer contains a number, date or time that the incident context does not support."
    ),
    "invalid_answer:new_incident_id": "The final answer names an incident id that is not in the context.",
    "invalid_answer:new_severity_label": "The final answer uses a severity label that is not in the context.",
    "invalid_answer:new_region": "The final answer names a region that is not in the context.",
    "invalid_answer:restricted_claims": "The final answer makes a restricted claim the context does not support.",
    "invalid_answer:state_claim": "The final answer says the incident is over (or still going on) against its state.",
    "invalid_answer:scope_claim": "The final answer says how many customers are affected against the facts.",
    "invalid_answer:liability": "The final answer promises money, admits fault or blames a third party unsupported.",
    "invalid_answer:data_safety": "The final answer says something about customers' data no fact supports.",
    "invalid_answer:time_commitment": "The final answer commits to a time for the fix that nothing supports.",
    # Final answer: statements the incident's facts do not support
    "invalid_answer:unsupported_statement": (
        "The final answer states something (a cause, an action, a consequence) the incident's facts do not support."
    ),
    # Final answer: links, contacts and markup
    "invalid_answer:unknown_contact": (
        "The final answer has a web address, email address or phone number the incident does not declare."
    ),
    "invalid_answer:markup": "The final answer has a mention, link markup, an HTML tag or a Markdown link.",
    "invalid_answer:auto_publish_contact": (
        "The policy publishes automatically and the final answer has a link, contact or mention, so a person "
        "decides first."
    ),
    "invalid_answer:malformed_text": (
        "The final answer is broken text (stray punctuation, an unfinished sentence, a placeholder, a doubled "
        "word or an unclosed bracket)."
    ),
    "invalid_answer:uninformative": (
        "The final answer tells customers neither what is happening nor what is affected (e.g. a bare date)."
    ),
    "invalid_answer:internal_detail": (
        "The final answer shows customers an internal detail (an internal fact, a host, a path, a ticket id or "
        "a person's name)."
    ),
    # Final answer: the second reader (docs/guard.md, 'The second reader')
    "invalid_answer:judge_unsupported": (
        "The policy's second reader found sentences in the final answer that the incident's public facts do "
        "not support."
    ),
    "invalid_answer:judge_unavailable": (
        "The policy's second reader gave no usable answer (a timeout, a failed connection, an HTTP error or an "
        "answer of the wrong shape), so a person reads the text."
    ),
    # Routing
    "invalid_route:not_object": "The route answer was not a JSON object.",
    "invalid_route:non_json": "The route answer was not JSON (the raw text is kept on the run).",
    "invalid_route:bad_kind": "The route answer's kind was not 'route'.",
    "invalid_route:extra_keys": "The route answer had keys other than kind, target and args.",
    "invalid_route:missing_target": "The route answer had no target.",
    "invalid_route:route_not_allowed:<target>": "The model chose a route target the policy does not allow.",
    "invalid_route:bad_args": "The route answer's args were not an object.",
    "invalid_route:missing_ticket": "The route answer's args had no ticket text.",
    "invalid_route:repeat_target_after_reroute": "The model chose the same target again after it asked for a reroute.",
    "max_delegations": "The run used up its delegation budget.",
    "route_denied:<target>": "The route target is switched off for execution in admin.",
    "route_missing:<target>": "No worker is registered for the route target.",
    "loop_detected": "The same target was called twice with the same arguments.",
    "route_bad_args:<target>": "The specialist rejected its arguments.",
    "route_error:<target>": "The specialist failed with an error.",
    "route_bad_observation": "The specialist answered with an unexpected status.",
    # Operations
    "worker_lost": "The worker running this run went silent (killed or crashed); the run can be retried.",
    "invalid_input:goal": "The run's goal was empty or not text.",
    "invalid_input:context": "The run's context was not a JSON object.",
    "max_route_attempts": "Every route attempt asked for a reroute; attempts are used up.",
}

# Stops that open an escalation for a person; every other stop is a failed run
# (docs/contract.md, 'Escalations and decisions').
_ANSWER_CHECK_ESCALATES = {"no_new_facts", "new_incident_id", "new_severity_label", "new_region", "restricted_claims",
                           "state_claim", "scope_claim", "liability", "data_safety", "time_commitment"}
# Links, contacts and markup
_ANSWER_CHECK_ESCALATES |= {"unknown_contact", "markup", "auto_publish_contact"}
_ANSWER_CHECK_ESCALATES |= {"malformed_text", "uninformative"}  # well-formed text that says something
_ANSWER_CHECK_ESCALATES |= {"internal_detail"}
_ANSWER_CHECK_ESCALATES |= {"unsupported_statement"}  # grounding
_ANSWER_CHECK_ESCALATES |= {"judge_unsupported", "judge_unavailable"}  # the second reader


# A revision the reviewer asked for that the execution allowlist denied because auto-revision is off:
# the emergency brake hands the work to a person, keeping these stop reasons.
BRAKE_STOPS = frozenset({"review_decision_denied_execution:revise", "critique_decision_denied_execution:revise"})
BRAKE_REASON = ("Stopped by the emergency brake: the reviewer asked for a revision and auto-revision is off, "
                "so a person decides the draft.")


def stopped_by_brake(reason: str) -> bool:
    return reason in BRAKE_STOPS


def opens_escalation(reason: str) -> bool:
    """True when a person must decide: policy escalations, patch violations, unsupported final answers,
    and revisions the emergency brake (auto-revision off) stopped."""
    if reason == "policy_escalation" or reason.startswith("patch_violation:") or stopped_by_brake(reason):
        return True
    if reason.startswith("invalid_answer:"):
        return reason.split(":", 1)[1] in _ANSWER_CHECK_ESCALATES
    return False


def escalating_reasons() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The rule of :func:`opens_escalation` as data, for a database filter: (exact reasons, prefixes)."""
    exact = ("policy_escalation", *sorted(BRAKE_STOPS),
             *sorted(f"invalid_answer:{check}" for check in _ANSWER_CHECK_ESCALATES))
    return exact, ("patch_violation:",)


def explain(reason: str) -> str:
    """The one-line explanation of a stop reason, matching ``name:<detail>`` entries by prefix."""
    if reason in STOP_REASONS:
        return STOP_REASONS[reason]
    for name, text in STOP_REASONS.items():
        if name.endswith(">") and reason.startswith(name.split("<", 1)[0]):
            return text
    return "Unknown stop reason."


# Stops that a setting caused: the same inputs under the same settings stop the same way, so a retry
# is not offered; what would have to change, and who can change it, is said instead
# (docs/desk.md, 'Which stops offer Retry'). Every other failed run may pass on a retry (a model
# server that was down, an answer the model may give well-formed next time, a lost worker).
# A "<…>" is the stop reason's detail (a decision, a target). Not here: an issue type, a risk type
# or a route target "not allowed by the policy", and a decision not allowed that is none of the known
# decisions: the model may have made the name up, and a retry may well pass.
_DECISION_OFF = ("A policy admin switched the “{detail}” decision off for execution (Pipeline policies, decisions "
                 "allowed in execution); retry after they switch it back on.")
_DECISION_NOT_ALLOWED = ("The policy does not allow the “{detail}” decision (Pipeline policies, decisions allowed by "
                         "policy); retry after a policy admin allows it.")
CONFIGURATION_STOPS: dict[str, str] = {
    # The admin's switches: a decision, an issue type or a route target switched off, or not allowed.
    "review_decision_denied_execution:<decision>": _DECISION_OFF,
    "critique_decision_denied_execution:<decision>": _DECISION_OFF,
    "review_decision_not_allowed_policy:<decision>": _DECISION_NOT_ALLOWED,
    "critique_decision_not_allowed_policy:<decision>": _DECISION_NOT_ALLOWED,
    "route_denied:<target>": (
        "A policy admin switched the route target “{detail}” off for execution (Route targets, allowed in "
        "execution); retry after they switch it back on."),
    # The policy's budgets: the same inputs use about as many tokens, as much money, as many hand-offs.
    "max_tokens": "The run used up the policy's token budget; retry after a policy admin raises it.",
    "max_cost": "The run used up the policy's cost budget; retry after a policy admin raises it.",
    "max_delegations": "The run used up the policy's delegation budget; retry after a policy admin raises it.",
    # The operator's deployment: no setting in the product changes these.
    "route_missing:<target>": (
        "No worker is registered for the route target “{detail}”; retry after an operator deploys one."),
    "llm_misconfigured": (
        "The model settings are invalid or name an endpoint that is not declared; retry after an operator "
        "fixes the model settings (see the run's details)."),
    "llm_auth_failed": (
        "The model server refused the credentials; retry after an operator fixes the API key."),
}


def configuration_stop(reason: str) -> str:
    """What would have to change (and who can change it) before a run that stopped with ``reason``
    could pass on a retry; "" when the stop is not a setting's doing and a retry may pass. The
    emergency brake's stops are a setting's too; they go to a person rather than to Retry."""
    if stopped_by_brake(reason):
        return "An admin turned on the emergency brake (auto-revision is off); retry after it is released."
    for name, text in CONFIGURATION_STOPS.items():
        prefix = name.split("<", 1)[0]
        if reason == name or (name.endswith(">") and reason.startswith(prefix) and reason != prefix):
            detail = reason[len(prefix):]
            if text is _DECISION_NOT_ALLOWED and detail not in DECISIONS:
                return ""  # a decision the model made up, not one an admin disallowed
            return text.format(detail=detail)
    return ""

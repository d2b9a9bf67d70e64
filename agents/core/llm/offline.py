"""The offline model: a deterministic stand-in that implements every stage's contract
with explicit rules and no network, so the demo, the tests and air-gapped installs exercise every
gate end to end. It is not a language model and is labelled as the offline model wherever shown.

Rules, by stage:
- draft: an update in customers' words, by the kind of incident (payments, wallet top-ups, API,
  a regional outage; found in its title or facts) and its state (investigating, identified,
  monitoring, resolved): what is happening and where, the impact from the public facts, what is
  being done, what customers can do meanwhile, when the next update comes and the ETA, plus any
  ``key_messages`` verbatim; never its internal facts (the approved actions are the reviewer's to
  ask for; the drafts leave them out). The ETA is stated plainly, which the review then flags.
- review / critique: escalate legal or compensation topics and anything the fact and claim checks
  reject (restricted claims, unsupported numbers); revise absolute promises (remove the sentence)
  and an ETA stated without uncertainty (add a caveat); otherwise approve.
- revise: apply the instructions' phrase rules with the deterministic editor.
- route: match the ticket's words against the route catalog's descriptions.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from typing import Any

from agents.core.fallback import apply_fallback
from agents.core.guard import claim_evidence, evidence_json
from agents.core.guard.checks import find_violations
from agents.core.guard.incident_claims import incident_state
from agents.core.llm.base import CallRecord, ModelReply, StageRequest
from agents.core.phrases import critique_rules, is_enforceable, reflection_rules
from agents.core.policy import GuardRules
from agents.core.text import normalize
from agents.core.units import fact_meta, ratio_values, show

LABEL = "offline model"
CAVEAT = "This estimate may change as we learn more."
NEXT_UPDATE = "We will share the next update as soon as we know more."
HEDGES = re.compile(r"\b(may|might|expect|estimate|aim|hope|could|likely|approximately)\b", re.IGNORECASE)
ETA = re.compile(r"\bwithin\s+\S+\s+(?:minutes|hours)\b", re.IGNORECASE)
ABSOLUTE = re.compile(
    r"\b(guarantee[sd]?|definitely|certainly|never\s+happen|will\s+not\s+happen\s+again|100\s?%|promise)\b",
    re.IGNORECASE,
)
LEGAL = re.compile(r"\b(compensat\w*|refund\w*|credits?|lawsuit|liab\w*|legal|sla)\b", re.IGNORECASE)
SENTENCE = re.compile(r"[^.!?]+[.!?]?")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in SENTENCE.findall(text) if s.strip()]


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# The kinds of incident the offline model writes for, found by their words in the incident's title
# (else in its facts' labels); the first that matches wins, so a wallet top-up problem that mentions
# payments is still about top-ups. Each kind says what customers experience, what they can do
# meanwhile, and what the engineers are doing in plain words.
KINDS = (
    ("wallet", re.compile(r"\b(?:wallets?|top[- ]?ups?)\b", re.IGNORECASE)),
    ("payments", re.compile(r"\b(?:payments?|checkouts?|card\s+payments?|charges?)\b", re.IGNORECASE)),
    ("outage", re.compile(r"\b(?:outages?|data\s+cent(?:re|er)s?|availability\s+zones?|regional)\b", re.IGNORECASE)),
    ("api", re.compile(r"\b(?:api|latency|endpoints?)\b", re.IGNORECASE)),
)
# What customers experience, per kind.
PROBLEM = {
    "wallet": "failing wallet top-ups",
    "payments": "failing payments at checkout",
    "outage": "an outage in our data centres",
    "api": "slow responses and errors from our public API",
}
# What customers can do meanwhile, per kind; no promise, no time.
ADVICE = {
    "wallet": "If a top-up fails, please try again later.",
    "payments": "If a payment fails, please try again later.",
    "outage": "If a page or a request fails, please try again later.",
    "api": "Requests that fail can be retried.",
}
# What the engineers are doing, per state of the incident, in plain words.
DOING = {
    "investigating": "Our engineers are working to find the cause.",
    "identified": "Our engineers are working on a fix.",
    "monitoring": "We are watching it closely to make sure the fix holds.",
    "resolved": "If you still see a problem, please contact our support team.",
}
# Words of a fact's label that say what happens to what is counted: "Checkouts affected" → "27% of
# checkouts are affected".
AFFECTED_WORDS = {"affected", "failing", "down", "delayed", "unavailable", "impacted", "declined", "stuck"}
ERROR_RATE = re.compile(r"^(?P<what>.*?)\s*error rate$", re.IGNORECASE)
FAILED_RATE = re.compile(r"^failed\s+(?P<what>\w+?)s?\s+rate$", re.IGNORECASE)
NEXT_UPDATE_KEY = "next_update_minutes"


def _kind(incident: Mapping[str, Any], context: Mapping[str, Any]) -> str | None:
    title = incident.get("title") if isinstance(incident.get("title"), str) else ""
    labels = " ".join(label for _, label, _ in fact_meta(context))
    for text in (title, labels):
        for kind, words in KINDS:
            if words.search(text):
                return kind
    return None


def _region_names(region: Any) -> list[str]:
    return [r.strip() for r in region.split(",") if r.strip()] if isinstance(region, str) else []


def _where(region: Any) -> str:
    """" in the EU and UK" for "EU, UK"; "" for none."""
    names = _region_names(region)
    if not names:
        return ""
    return " in the " + (names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}")


def _state(incident: Mapping[str, Any]) -> str:
    """The incident's state as the guard reads it (its state, or the one its status names: "mitigated"
    is monitoring), so the draft never says what the state contradicts."""
    state = incident_state({"incident": incident})
    return state if state in DOING else "investigating"


def _headline(incident: Mapping[str, Any], kind: str | None, state: str, region: Any) -> str:
    """What is happening, in customers' words and where, and how far the incident has come."""
    title = incident.get("title")
    title = normalize(title).rstrip(".") if isinstance(title, str) else ""
    problem = PROBLEM.get(kind or "") or (f"a problem with our service ({title})" if title
                                          else "a problem with our service")
    named = all(re.search(rf"\b{re.escape(name)}\b", title) for name in _region_names(region))
    # A title that names every region says where already: "Database failover in the EU".
    where = "" if not kind and title and named else _where(region)
    the_problem = problem if problem.startswith(("a ", "an ")) else f"the {problem}"
    if state == "identified":
        return f"We have found the cause of {the_problem}{where}."
    if state == "monitoring":
        return f"We have put a fix in place for {the_problem}{where}, and we are monitoring the results."
    if state == "resolved":  # "resolved" itself is a claim a policy that avoids guarantees refuses
        return f"We are no longer seeing {problem}{where}."
    return f"We are investigating {problem}{where}."


def _impact(key: str, label: str, unit: str, value: Any) -> str | None:
    """One public fact as a sentence a customer reads, or None for a fact that does not say who or what
    is affected (a count of internal signals such as alerts)."""
    label = normalize(label)
    words = label.split()
    if not words or value is None or key in ("eta_minutes", NEXT_UPDATE_KEY, "state"):  # the state is said above
        return None
    if isinstance(value, str):
        text = normalize(value).rstrip(".")
        if not text:
            return None
        if words[0].lower() == "affected" and len(words) > 1:
            return f"The affected {' '.join(words[1:]).lower()} are {text}."
        return f"{label}: {text}."
    if not _number(value):
        return None
    shown = show(value, unit)
    if unit in ("%", "ratio", "count") and len(words) > 1 and words[-1].lower() in AFFECTED_WORDS:
        counted = " ".join(words[:-1]).lower()
        share = f"{shown} of {counted}" if unit != "count" else f"{shown} {counted}"
        return f"{share[0].upper()}{share[1:]} {'is' if shown == '1' else 'are'} {words[-1].lower()}."
    if unit == "ratio" and (m := FAILED_RATE.match(label)):
        return f"{shown} of {m.group('what').lower()}s are failing."
    if unit == "ratio" and (m := ERROR_RATE.match(label)):
        return f"{shown} of {m.group('what') + ' ' if m.group('what') else ''}requests return an error."
    if unit == "ms":
        return f"Responses are slower than usual: the {label[0].lower()}{label[1:]} is {shown}."
    return None


def _next_update(incident: Mapping[str, Any], context: Mapping[str, Any]) -> str:
    """When the next update comes: in the minutes a public "next update" fact gives, else as soon as
    there is news, and within the hour at the latest for a P0 or P1 (no time of its own invented)."""
    minutes = incident.get(NEXT_UPDATE_KEY)
    if any(key == NEXT_UPDATE_KEY for key, _, _ in fact_meta(context)) and _number(minutes):
        return f"We will post the next update in {minutes:g} minutes."
    if str(incident.get("severity", "")).upper() in ("P0", "P1"):
        return "We will post the next update within the hour, or sooner if anything changes."
    return NEXT_UPDATE


def draft_from_context(goal: str, context: Mapping[str, Any]) -> str:
    """An update a support lead would recognise: what is happening in customers' words and where,
    the impact from the public facts, what is being done for the incident's state, what customers
    can do meanwhile, when the next update comes, and the ETA; then the incident's key messages,
    verbatim. Only what the incident itself says for customers, whatever the goal asks: its internal
    facts are not in the drafting context, and the approved actions are left to the reviewer."""
    incident = context.get("incident") if isinstance(context.get("incident"), dict) else {}
    kind, state = _kind(incident, context), _state(incident)
    parts = [_headline(incident, kind, state, context.get("region"))]
    if state != "resolved":
        parts += [s for key, label, unit in fact_meta(context) if (s := _impact(key, label, unit, incident.get(key)))]
    parts.append(DOING[state])
    if state in ("investigating", "identified") and kind in ADVICE:
        parts.append(ADVICE[kind])
    if state != "resolved":
        parts.append(_next_update(incident, context))
    eta = incident.get("eta_minutes")
    if _number(eta) and state in ("investigating", "identified"):
        # "should": an estimate, not a firm time promise (avoid_absolute_guarantees); still plain
        # enough that the reviewer asks for the caveat, which then follows it as the last sentence.
        parts.append(f"We should restore full service within {eta:g} minutes.")
    for message in context.get("key_messages") or []:
        if isinstance(message, str) and message.strip():
            text = normalize(message)
            parts.append(text if text[-1] in ".!?" else text + ".")
    return " ".join(parts)


def _rules(inputs: Mapping[str, Any]) -> GuardRules:
    """The policy's guard rules: passed whole by the pipelines, else built from the claim patterns."""
    if isinstance(inputs.get("guard"), GuardRules):
        return inputs["guard"]
    claims = list(inputs.get("restricted_claims") or [])
    return GuardRules(restricted_claims=tuple(claims)) if claims else GuardRules()


def findings(goal: str, draft: str, context: Mapping[str, Any], restricted_claims: list[str] | GuardRules) -> dict:
    """What the offline reviewer sees: escalation reasons, and fixable (type, note, phrase, add?) items.

    The same fact and claim checks as the guard; a restricted claim inside an absolute promise the
    reviewer removes anyway (the whole sentence goes) is fixed, not escalated."""
    escalate: list[str] = []
    fixes: list[tuple[str, str, str, bool]] = []
    # A reason quotes only words of the text the person decides on: a word that is only in the goal
    # ("credits") is named by what it asks, not quoted as if the draft said it.
    in_draft, in_goal = LEGAL.search(draft), LEGAL.search(goal)
    if in_draft:
        escalate.append(f"The draft mentions “{in_draft.group(0)}”: compensation and legal commitments need a "
                        "person.")
    elif in_goal:
        escalate.append("The goal asks for compensation or a legal commitment, which the draft does not make: "
                        "a person decides what customers are promised.")
    legal = in_draft or in_goal
    if isinstance(restricted_claims, GuardRules):
        rules = restricted_claims
    else:
        rules = GuardRules(restricted_claims=tuple(restricted_claims)) if restricted_claims else GuardRules()
    hints = context.get("policy_hints")
    strict = isinstance(hints, dict) and hints.get("avoid_absolute_guarantees") is True
    removed = []
    for sentence in _sentences(draft):
        if ABSOLUTE.search(sentence) and len(sentence) <= 160:
            fixes.append(("overconfidence", f"Absolute promise: {sentence}", sentence, False))
            removed.append(sentence.lower())
    for violation in find_violations(draft, evidence_json(context), rules, strict_claims=strict,
                                     claim_evidence=claim_evidence(context), ratios=ratio_values(context),
                                     context=context):
        if violation.check == "restricted_claims" and any(violation.found.lower() in s for s in removed):
            continue
        escalate.append(f"{violation.check}: {violation.message}")
    if ETA.search(draft) and not HEDGES.search(draft):
        fixes.append(("missing_uncertainty", "The ETA is stated without uncertainty.", CAVEAT, True))
    return {"escalate": escalate, "fixes": fixes, "legal": bool(legal)}


def review(inputs: Mapping[str, Any]) -> dict:
    found = findings(inputs.get("goal", ""), inputs.get("draft", ""), inputs.get("context") or {}, _rules(inputs))
    issue_types = inputs.get("issue_types") or {}
    if found["escalate"]:
        kind = "legal_risk" if found["legal"] else "policy_violation"
        issues = [{"type": kind, "note": note} for note in found["escalate"][:4]] if kind in issue_types else []
        return {"decision": "escalate", "issues": issues, "fix_plan": [], "reason": " ".join(found["escalate"]),
                "quality": "poor", "completeness": "partial"}
    fixes = [f for f in found["fixes"] if f[0] in issue_types][:4]
    if not fixes:
        return {"decision": "approve", "issues": [], "fix_plan": [], "reason": "No issues found by the offline rules.",
                "quality": "good", "completeness": "complete"}
    return {
        "decision": "revise",
        "issues": [{"type": kind, "note": note} for kind, note, _, _ in fixes],
        "fix_plan": [f'Add "{phrase}"' if add else f'Remove "{phrase}"' for _, _, phrase, add in fixes],
        "reason": "Fixable wording issues.",
        "quality": "fair",
        "completeness": "complete",
    }


def critique(inputs: Mapping[str, Any]) -> dict:
    found = findings(inputs.get("goal", ""), inputs.get("draft", ""), inputs.get("context") or {}, _rules(inputs))
    issue_types = inputs.get("issue_types") or {}
    if found["escalate"]:
        kind = "legal_risk" if found["legal"] else "policy_violation"
        risks = [{"type": kind, "note": note} for note in found["escalate"][:5]] if kind in issue_types else []
        return {"decision": "escalate", "severity": "high", "risks": risks, "required_changes": [],
                "reason": " ".join(found["escalate"])}
    fixes = [f for f in found["fixes"] if f[0] in issue_types][:5]
    if not fixes:
        return {"decision": "approve", "severity": "low", "risks": [], "required_changes": [],
                "reason": "No risks found by the offline rules."}
    return {
        "decision": "revise",
        "severity": "medium",
        "risks": [{"type": kind, "note": note} for kind, note, _, _ in fixes],
        "required_changes": [f'ADD "{phrase}"' if add else f'REMOVE "{phrase}"' for _, _, phrase, add in fixes],
        "reason": "Fixable wording risks.",
    }


def revise(inputs: Mapping[str, Any]) -> str:
    instructions = [i for i in inputs.get("instructions") or [] if isinstance(i, str)]
    rules = (
        critique_rules(instructions)
        if instructions and all(map(is_enforceable, instructions))
        else reflection_rules(instructions)
    )
    return apply_fallback(inputs.get("draft", ""), rules.must_include, rules.must_remove)


def shorten(inputs: Mapping[str, Any]) -> str:
    """Drop whole sentences from the end until the draft fits; never rewrites a fact."""
    limit = int(inputs.get("max_chars") or 900)
    kept: list[str] = []
    for sentence in _sentences(inputs.get("draft", "")):
        if len(" ".join(kept + [sentence])) > limit:
            break
        kept.append(sentence)
    return " ".join(kept)


STOPWORDS = {"and", "the", "for", "other", "with", "your", "you", "our", "are", "was", "this", "that", "not"}


def _words(text: str) -> set[str]:
    return {w.rstrip("s") for w in re.findall(r"[a-z]+", text.lower()) if len(w) > 2 and w not in STOPWORDS}


def route(inputs: Mapping[str, Any]) -> dict:
    ticket = str(inputs.get("goal", ""))
    forbidden = set(inputs.get("forbidden") or [])
    catalog = {k: v for k, v in (inputs.get("catalog") or {}).items() if k not in forbidden}
    used = set(inputs.get("used") or [])
    words = _words(ticket)
    # A target not tried yet first (one that asked for a reroute will not change its mind), then the
    # best word overlap, then catalog order (the sort is stable).
    scored = sorted(catalog, key=lambda name: (name in used, -len(words & _words(catalog[name]))))
    target = scored[0] if scored else ""
    return {"kind": "route", "target": target, "args": {"ticket": ticket}}


TOPICS = (  # what the ticket is about, in the customer's words, for the reply's first line
    (re.compile(r"\b(?:wallet|top[- ]?ups?)\b", re.IGNORECASE), "your wallet top-up"),
    (re.compile(r"\b(?:charged|charges?|refunds?|invoices?|billing|billed)\b", re.IGNORECASE), "your payment"),
    (re.compile(r"\b(?:api|errors?|latency|outage|slow)\b", re.IGNORECASE), "the problem you reported"),
    (re.compile(r"\b(?:prices?|pricing|quotes?|plans?|discounts?|upgrade)\b", re.IGNORECASE), "our plans"),
)


def _plan_name(plan: Any) -> str:
    """"team_plus" → "Team Plus": what a customer reads, not a plan id."""
    return " ".join(word.capitalize() for word in str(plan).replace("-", "_").split("_") if word)


def _billing_reply(o: Mapping[str, Any]) -> str:
    if not o.get("found"):
        return ("I could not find an account with the details in your message. Could you reply with the email "
                "address you signed up with, so that I can look again?")
    amount = f"{o.get('refund_amount')} {o.get('currency')}".strip()
    if o.get("refundable"):
        return (f"I checked your account: your last payment of {amount} is within our refund window, so it can "
                "be refunded. Our billing team will confirm the refund to you by email.")
    return ("I checked your account: your last payment is not eligible for a refund under our refund policy. "
            "If you think this is wrong, reply to this message and we will take another look.")


SERVICE_STATES = {"investigating": "our engineers are investigating it",
                  "identified": "our engineers have found the cause and are working on a fix",
                  "mitigated": "a fix is in place, and we are monitoring it",
                  "monitoring": "a fix is in place, and we are monitoring it",
                  "resolved": "it is resolved"}


def _technical_reply(o: Mapping[str, Any]) -> str:
    if not o.get("incident"):
        return ("We are not aware of a wider problem right now. Could you reply with the time it happened and "
                "what you saw, so that our engineers can look into it?")
    service = str(o.get("service") or "our service").replace("-", " ").replace("api", "API")
    minutes = o.get("next_update_minutes")
    when = f" We will post the next update in {minutes} minutes." if _number(minutes) else ""
    state = SERVICE_STATES.get(str(o.get("state")), "our engineers are working on it")
    return f"We are aware of a problem with the {service}: {state}.{when}"


def _sales_reply(o: Mapping[str, Any]) -> str:
    return (f"For what you describe, we recommend our {_plan_name(o.get('recommended_plan'))} plan at "
            f"{o.get('price')} {o.get('currency')} a {o.get('period')}. Reply to this message and we will set it up "
            "with you.")


REPLIES = {"billing_specialist": _billing_reply, "technical_specialist": _technical_reply,
           "sales_specialist": _sales_reply}


def finalize(inputs: Mapping[str, Any]) -> str:
    """The reply a support agent sends: a greeting by name, what the ticket is about, what the
    specialist found in plain words (no plan ids, no internal summaries), and what happens next."""
    observation = inputs.get("observation") or {}
    observation = observation if isinstance(observation, dict) else {}
    ticket = str(inputs.get("goal", ""))
    name = observation.get("customer")
    greeting = f"Hi {name}," if isinstance(name, str) and name.strip() else "Hello,"
    topic = next((words for pattern, words in TOPICS if pattern.search(ticket)), "your message")
    reply = REPLIES.get(str(inputs.get("target", "")))
    body = reply(observation) if reply else "A colleague will look into your request and reply to you."
    return f"{greeting} thank you for contacting us about {topic}. {body}"


class OfflineModel:
    """Implements the LLM protocol; answers are a function of the request's inputs alone."""

    label = LABEL
    endpoint = "offline"

    def complete(self, request: StageRequest) -> ModelReply:
        started = time.perf_counter()
        inputs = request.inputs
        if request.stage == "draft":
            payload: Any = {"draft": draft_from_context(str(inputs.get("goal", "")), inputs.get("context") or {})}
        elif request.stage == "shorten":
            payload = {"draft": shorten(inputs)}
        elif request.stage == "review":
            payload = review(inputs)
        elif request.stage == "critique":
            payload = critique(inputs)
        elif request.stage == "revise":
            payload = {"revised_answer": revise(inputs)}
        elif request.stage == "route":
            payload = route(inputs)
        elif request.stage == "finalize":
            payload = finalize(inputs)
        else:
            raise ValueError(f"the offline model has no rule for stage {request.stage!r}")
        text = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
        # Token counts are estimates (4 characters a token) so that token budgets work offline too.
        prompt_tokens = (len(request.system) + len(request.user)) // 4
        completion_tokens = len(text) // 4
        record = CallRecord(
            stage=request.stage, attempt=request.attempt, try_number=1, model=LABEL,
            latency_ms=round((time.perf_counter() - started) * 1000, 3),
            prompt_tokens=prompt_tokens, completion_tokens=completion_tokens, raw=text,
            messages=({"role": "system", "content": request.system}, {"role": "user", "content": request.user}),
        )
        return ModelReply(text=text, via_tool=request.tool is not None, prompt_tokens=prompt_tokens,
                          completion_tokens=completion_tokens, calls=(record,))

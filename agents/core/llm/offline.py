"""The offline model: a deterministic stand-in that implements every stage's contract
with explicit rules and no network, so the demo, the tests and air-gapped installs exercise every
gate end to end. It is not a language model and is labelled as the offline model wherever shown.

Rules, by stage:
- draft: the incident's title (what it is, in its own words), status, each public fact the incident
  has (by its label, in its unit), the ETA and a line on the next update, plus any ``key_messages``
  the incident carries, verbatim; never its internal facts or its approved actions (runbook steps, not news for
  customers). The ETA is stated plainly, which the review then flags.
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

from agents.core.facts import find_violations
from agents.core.fallback import apply_fallback
from agents.core.guard import claim_evidence, evidence_json
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


def _opening(incident: Mapping[str, Any], region: Any) -> str:
    """What the incident is, in its own words: its title, with the regions unless the title names
    them all. Without a title (a bare context), a service problem in the regions."""
    regions = normalize(region) if isinstance(region, str) else ""
    title = incident.get("title")
    title = normalize(title).rstrip(".") if isinstance(title, str) else ""
    if not title:
        return f"We are investigating a service problem{f' in the {regions}' if regions else ''}."
    named = all(re.search(rf"\b{re.escape(r.strip())}\b", title, re.IGNORECASE)
                for r in regions.split(",") if r.strip())
    return f"We are working on an incident{'' if named else f' in the {regions}'}: {title}."


def draft_from_context(goal: str, context: Mapping[str, Any]) -> str:
    """The incident's title, its status, each public fact it has by its label and unit, the ETA and
    the key messages: only what the incident itself says for customers, whatever the goal asks."""
    incident = context.get("incident") if isinstance(context.get("incident"), dict) else {}
    status = incident.get("status")
    parts = [_opening(incident, context.get("region"))]
    if isinstance(status, str) and status.strip():
        parts.append(f"Current status: {normalize(status)}.")
    for key, label, unit in fact_meta(context):
        value = incident.get(key)
        if key == "eta_minutes" or not normalize(label) or value is None:
            continue
        if _number(value):
            parts.append(f"{normalize(label)}: {show(value, unit)}.")
        elif isinstance(value, str) and value.strip():
            parts.append(f"{normalize(label)}: {normalize(value).rstrip('.')}.")
    eta = incident.get("eta_minutes")
    if _number(eta):
        # "should": an estimate, not a firm time promise (avoid_absolute_guarantees); still plain
        # enough that the reviewer asks for the caveat.
        parts.append(f"We should restore full service within {eta:g} minutes.")
    # Where the runbook's actions were once listed: a plain promise of the next update, no runbook step.
    parts.append(NEXT_UPDATE)
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


def finalize(inputs: Mapping[str, Any]) -> str:
    observation = inputs.get("observation") or {}
    summary = observation.get("summary") if isinstance(observation, dict) else None
    who = str(inputs.get("target", "specialist")).replace("_", " ")
    if isinstance(summary, str) and summary.strip():
        return f"Our {who} looked into your request: {summary.strip()}"
    return f"Our {who} looked into your request and will follow up."


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

"""The fact and claim checks, run in order (docs/contract.md, 'Fact and claim checks').

A text may only state numbers, incident ids, severity labels, regions and restricted claims that the
*allowed text* supports, name only the contacts the incident declares, carry no markup and no internal
detail, and be well-formed text that says something. The patch guard passes the canonical context
JSON plus the original draft; the final-answer check passes the context alone (a draft is not its own
evidence). Each check is one module of this package with one function, ``find(text, support)``.
Plain Python: no Django here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from decimal import Decimal

from agents.core.guard import (
    actions,
    claims,
    contacts,
    grounding,
    identifiers,
    incident_claims,
    internal,
    measures,
    numbers,
    regions,
    wellformed,
)
from agents.core.guard.support import Support, incident_key
from agents.core.guard.violation import CHECKS, Violation
from agents.core.policy import GuardRules
from agents.core.units import fact_meta

# The checks in the order they run: which of two findings of the same check and words is kept
# (_distinct), and the order of one check's findings. What they find is then ordered by CHECKS (the
# stop reasons' order). A check added later appends its (name, find) here and its name to CHECKS.
FINDERS = (
    ("numbers", numbers.find),  # no_new_facts
    ("identifiers", identifiers.find),  # new_incident_id, new_severity_label
    ("regions", regions.find),  # new_region
    ("claims", claims.find),  # restricted_claims and the checks of the claim families
    ("incident_claims", incident_claims.find),  # state, scope, blame, places, days of the week
    ("measures", measures.find),  # a median said as a bound (no_new_facts), a recovery what remains contradicts
    ("actions", actions.find),  # work said done (state_claim); all done, advice, nothing to do (unsupported_statement)
    # Links, contacts and markup: judged against the incident's public facts alone
    ("contacts", contacts.find),  # unknown_contact, markup
    ("internal", internal.find),  # internal_detail
    ("wellformed", wellformed.find),  # malformed_text, uninformative
)


def find_violations(
    text: str, allowed_text: str, rules: GuardRules, *, strict_claims: bool = False,
    claim_evidence: str | None = None, ratios: frozenset[Decimal] | None = None,
    context: Mapping | None = None, licensed_texts: tuple[str, ...] = (), context_key: str | None = None,
) -> list[Violation]:
    """Everything in ``text`` that ``allowed_text`` does not support, ordered by CHECKS.

    ``claim_evidence`` is the text whose claims may license a restricted claim (default: the
    allowed text); the guard passes the context and draft with instructions to the model removed
    (and an allowed text built from them, so an instruction is no evidence for anything).
    ``ratios`` are the values of the context's ratio facts (``agents.core.units.ratio_values``):
    given, only they support a percentage read as a ratio; None (a context without units) lets a
    bare number do. ``context`` is the run context itself, for the checks that read the incident's
    structure (its state, its declared contacts, its internal facts); None skips them.
    ``licensed_texts`` lend words to grounding besides the context: the goal ops wrote, the text a
    revision revises. ``context_key``: the context's ``incident_key``, where the caller has it.
    """
    support = Support(
        allowed_text=allowed_text, rules=rules,
        claim_evidence=allowed_text if claim_evidence is None else claim_evidence,
        ratios=ratios, context=context, strict_claims=strict_claims,
        state=incident_claims.incident_state(context), licensed_texts=licensed_texts,
        context_key=context_key if context_key is not None or context is None else incident_key(context),
    )
    found = _distinct(violation for _name, find in FINDERS for violation in find(text, support))
    # An internal host is reported as what it is, not also as an address customers could be sent to.
    internal_found = {v.found.lower() for v in found if v.check == "internal_detail"}
    found = [v for v in found if not (v.check == "unknown_contact" and v.found.lower() in internal_found)]
    found = [v for v in found if not _quoted(v, context) and not _spared(v, text, context, support.context_key)]
    found.sort(key=lambda v: CHECKS.index(v.check))
    # Grounding reads what the named checks left, so it runs after them all (a policy switches it on).
    return found + grounding.find(text, support, found)


# The claims a person approved: a text may say in their words what the key messages, the approved
# actions and the incident's facts say ("Every delayed job has now run" where a key message says so,
# "other carriers are working normally" where a fact says "Other carriers: working normally").
_APPROVED = ("key_messages", "approved_actions")
_IDENTITY = frozenset({"incident_id", "title", "severity", "state", "status"})
# The incident's state decides a state claim, whatever a message says; one word is no quote.
_QUOTABLE = frozenset({"restricted_claims", "scope_claim", "liability", "data_safety", "time_commitment"})
_QUOTE_WORDS = 2


def _quoted(violation: Violation, context: Mapping | None) -> bool:
    """Whether a claim finding's words are a key message's or an approved action's own words."""
    if violation.check not in _QUOTABLE or not isinstance(context, Mapping) or not violation.found.strip():
        return False
    words = violation.found.lower().split()
    if len(words) < _QUOTE_WORDS or incident_claims.says_unaffected(violation.found):
        return False  # "not affected" says nothing without its subject, which the spared check compared
    quote = re.compile(r"\b" + r"\s+".join(map(re.escape, words)) + r"\b")
    incident = context.get("incident") if isinstance(context.get("incident"), Mapping) else {}
    # The next update's time is a cadence, no time for the fix: "by 10:00 UTC" quoted from it is no quote.
    cadences = {key for key, label, _unit in fact_meta(context) if incident_claims.is_cadence(label, 0, len(label))}
    facts = [value for key, value in incident.items() if key not in _IDENTITY and key not in cadences]
    approved = [text for key in _APPROVED for text in _strings(context.get(key))] + _strings(facts)
    return any(quote.search(text.lower()) for text in approved)


# "Quizzes are working normally" on an incident that says "Assignment submissions and quizzes are not
# affected" is no claim that the incident is over: it says what the incident spared, in other words.
_SPARED_CLAIM = re.compile(r"normal|usual|expected|working|operational|fine|available|unaffected", re.IGNORECASE)
_CLAUSE_START = re.compile(r"[.;:!?,]\s|\b(?:but|while|whereas|although)\s|^", re.IGNORECASE)


def _spared(violation: Violation, text: str, context: Mapping | None, key: str | None) -> bool:
    """Whether a state or recovery claim is about something the incident says was not affected: the
    words before the claim in its clause name a thing one of the incident's statements of no impact
    names."""
    if violation.check not in ("restricted_claims", "state_claim") or not _SPARED_CLAIM.search(violation.found):
        return False
    at = text.lower().find(violation.found.lower())
    if at < 0:
        return False
    start = max(m.end() for m in _CLAUSE_START.finditer(text, 0, at))
    if _RELATIVE.match(text, start) and start > 2:
        # "... stream from the mobile app, which is working normally": the clause before says what.
        start = max(m.end() for m in _CLAUSE_START.finditer(text, 0, start - 2))
    return incident_claims.spared_by_incident(text[start:at], context, key)


_RELATIVE = re.compile(r"\s*(?:which|that|who)\b", re.IGNORECASE)


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)):
        return [s for item in value for s in _strings(item)]
    return []


def _distinct(violations: Iterable[Violation]) -> list[Violation]:
    """The first violation of each check and token (in any case): one entry per distinct token keeps
    the UI readable."""
    seen: set[tuple[str, str]] = set()
    kept = []
    for violation in violations:
        key = (violation.check, violation.found.lower())
        if key not in seen:
            seen.add(key)
            kept.append(violation)
    return kept


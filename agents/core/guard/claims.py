"""restricted_claims and the claim families an admin defines (docs/guard.md): a claim a text makes,
unhedged, that neither its evidence nor the incident's state supports. The checks a family can fail
are its own (state_claim, liability, data_safety, time_commitment, or restricted_claims). Patterns are
admin text: they run on RE2 (agents.core.patterns). Plain Python: no Django here."""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from agents.core.guard.contacts import prose
from agents.core.guard.grounding import FRAME
from agents.core.guard.hedges import clause_before, is_conditional, is_hedged, is_negated
from agents.core.guard.incident_claims import is_cadence, is_forecast, is_past, state_message, state_supports, substance
from agents.core.guard.support import Support
from agents.core.guard.violation import Violation, family_check
from agents.core.patterns import UnsafePattern, compile_pattern, matching, may_match
from agents.core.policy import ClaimFamily


def _unhedged(text: str, pattern: str, hedges: Iterable[str] = (), timed: bool = False):
    """The unhedged matches of one restricted-claim pattern (RE2, case-insensitive), lazily; ``timed``:
    the pattern names a time (:func:`agents.core.guard.hedges.is_conditional`). Raises
    :class:`UnsafePattern` for a pattern RE2 refuses."""
    hedges = tuple(hedges)
    return (m for m in compile_pattern(pattern).finditer(text)
            if not is_hedged(text, m.start(), hedges, m.end(), timed=timed))


def find_claims(text: str, patterns: tuple[str, ...] | list[str]) -> list:
    """Every unhedged match of the restricted-claim patterns, in reading order.

    Patterns are admin text: they run on RE2 (agents.core.patterns), in time linear in the text; one
    that RE2 refuses raises :class:`agents.core.patterns.UnsafePattern`."""
    claims = [m for pattern in patterns for m in _unhedged(text, pattern)]
    return sorted(claims, key=lambda m: m.start())


def makes_claim(text: str, pattern: str) -> bool:
    """Whether ``text`` makes the claim at least once, unhedged (stops at the first)."""
    return next(_unhedged(text, pattern), None) is not None


def _family_unhedged(text: str, pattern: str, family: ClaimFamily):
    if family.hedging == "negation":
        return (m for m in compile_pattern(pattern).finditer(text) if not is_negated(text, m.start()))
    return _unhedged(text, pattern, family.hedges, family.timed)


def family_claims(text: str, family: ClaimFamily, matched: frozenset[str] | None = None) -> list:
    """The unhedged matches of a claim family (its canonical claim and every paraphrase), in reading
    order, a match overlapping an earlier one left out ("have fully recovered" is one claim).
    ``matched``: the patterns known to match ``text`` (:func:`agents.core.patterns.matching`), where
    the caller has them; only they are read again. Raises :class:`UnsafePattern` for a pattern RE2
    refuses."""
    if matched is not None:
        patterns = [p for p in family.patterns if p in matched]
    elif may_match(text, family.patterns):
        patterns = family.patterns
    else:
        return []
    return _disjoint(m for p in patterns for m in _family_unhedged(text, p, family))


def _disjoint(matches: Iterable) -> list:
    """The matches in reading order, each overlapping an earlier (or longer, at the same start) one left out."""
    kept: list = []
    for m in sorted(matches, key=lambda m: (m.start(), -m.end())):
        if not kept or m.start() >= kept[-1].end():
            kept.append(m)
    return kept


def family_estimates(text: str, family: ClaimFamily, matched: frozenset[str] | None = None) -> list:
    """The matches of a family that only an expectation or one of its hedge words softens ("we expect
    it fixed within the hour", "should be done later today"), in reading order: negated,
    conditional and unhedged matches are not among them."""
    patterns = [p for p in family.patterns if matched is None or p in matched]
    return [m for m in _disjoint(m for p in patterns for m in compile_pattern(p).finditer(text))
            if is_hedged(text, m.start(), family.hedges, m.end(), timed=family.timed)
            and _is_estimate(text, m)]


def _is_estimate(text: str, m) -> bool:
    """Whether a hedged time match gives a time all the same: a time in words, softened only by an
    expectation or a hedge word."""
    return (bool(_A_TIME.search(m.group())) and not _DIGIT.search(m.group())
            and not is_conditional(text, m.start(), timed=True))


# What an estimate must name to give a time: a unit or a point in time ("within the hour", "later
# today", "by tonight"); "should clear shortly" or "soon" gives none. A time in digits ("within about
# 45 minutes") is left to the numbers check, which binds it to the fact it measures.
_DIGIT = re.compile(r"\d")
_A_TIME = re.compile(r"\b(?:minutes?|hours?|days?|weeks?|today|tonight|tomorrow|morning|afternoon|evening|noon"
                     r"|midday|midnight|end\s+of)\b", re.IGNORECASE)


# A fact that gives a time for the fix, estimated or not: "ETA: 45 minutes", "eta_minutes",
# "Engineering estimate: around 10:30 UTC", "Expected downtime".
_ESTIMATE_FACT = re.compile(r"(?<![a-z])(?:eta|estimated?|expected|target)(?![a-z])", re.IGNORECASE)


def estimate_supported(evidence: str, family: ClaimFamily) -> bool:
    """Whether the incident gives a time for the fix that an estimate in the text may repeat: a fact
    that is an estimate, or the family's words themselves, estimated or firm, and not about the next
    update."""
    if _ESTIMATE_FACT.search(evidence):
        return True
    found = [m for p in family.patterns for m in compile_pattern(p).finditer(evidence)] \
        if may_match(evidence, family.patterns) else []
    return any(not is_cadence(evidence, m.start(), m.end()) for m in found)


def family_makes_claim(text: str, family: ClaimFamily) -> bool:
    return any(next(_unhedged(text, p, family.hedges), None) is not None for p in family.patterns)


def family_supported_in(evidence: str, family: ClaimFamily) -> bool:
    """Whether the evidence makes the family's claim itself, or says what its ``supported_by``
    patterns name ("Data loss: none"), unhedged."""
    patterns = family.support_patterns
    if not may_match(evidence, patterns):
        return False
    if family.timed:
        # The time of the next update ("Next update: by 10:00 UTC", the fact also read bare) is no time
        # for the fix.
        found = [m for p in patterns for m in _unhedged(evidence, p, family.hedges, True)]
        cadence = {m.group().lower() for m in found if is_cadence(evidence, m.start(), m.end())}
        return any(m.group().lower() not in cadence for m in found)
    # A family read for negation alone (a refund promised "if" or "once" something happens is still
    # promised) is supported the same way: by any statement of it the incident does not negate
    # ("Customers whose order was not ready will have their collection charge refunded").
    return any(next(_family_unhedged(evidence, p, family), None) is not None for p in patterns)


@dataclass(frozen=True)
class TrialMatch:
    found: str  # the words the family matched
    pattern: str  # the canonical pattern or the paraphrase that matched
    hedged: bool  # True: a hedge wraps or negates it, so the guard lets it pass
    # True: only an expectation softens a time for the fix; it passes only where the incident gives one
    estimate: bool = False


def family_trial(text: str, family: ClaimFamily) -> list[TrialMatch]:
    """What a family matches in a sample text, hedged matches included, in reading order (admin's
    "try it on sample text"). Raises :class:`UnsafePattern` for a pattern RE2 refuses."""
    hits = sorted(((m, p) for p in family.patterns for m in compile_pattern(p).finditer(text)),
                  key=lambda hit: (hit[0].start(), -hit[0].end()))
    kept: list[TrialMatch] = []
    last_end = -1
    for m, pattern in hits:
        if m.start() >= last_end:
            hedged = (is_negated(text, m.start()) if family.hedging == "negation"
                      else is_hedged(text, m.start(), family.hedges, m.end(), timed=family.timed))
            kept.append(TrialMatch(m.group(), pattern, hedged, hedged and family.timed
                                   and _is_estimate(text, m)))
            last_end = m.end()
    return kept


def family_problem(family: ClaimFamily) -> str | None:
    """Why a family cannot be checked safely (a pattern RE2 refuses), or None."""
    try:
        return _patterns_problem(family.support_patterns)
    except TypeError:  # unhashable: a snapshot edited by hand may hold anything
        return _patterns_problem.__wrapped__(family.support_patterns)


@functools.lru_cache(maxsize=1024)
def _patterns_problem(patterns: tuple) -> str | None:
    for pattern in patterns:
        try:
            compile_pattern(pattern)
        except UnsafePattern as error:
            return f"The restricted-claim pattern “{pattern}” cannot be checked safely: {error}"
    return None



_FAMILY_WORDS = {
    "credits and refunds": "promises customers money",
    "goodwill gifts": "offers customers a gift",
    "fault and negligence": "admits fault",
    "data reassurance": "reassures customers about their data",
    "data breach": "speaks of a breach of customers' data",
    "time commitments": "commits to when something will be done",
    "planned work": "calls the incident planned work",
}
_CHECK_WORDS = {
    "liability": "promises money or admits blame",
    "data_safety": "speaks about customers' data",
    "time_commitment": "commits to a time",
    "state_claim": "speaks about the incident's state",
}


# Supports the incident's state decides alone when it speaks against the claim: a stale key message
# saying "we are investigating" does not make a resolved incident ongoing.
_STATE_DECIDES = ("ongoing", "investigating", "identified", "in_progress")


def _claim_message(found: str, family: ClaimFamily, strict: bool, state: str | None = None) -> str:
    named = f" of the “{family.name}” family" if family.name else ""
    if strict and family.check == "restricted_claims":
        return f"“{found}” is a restricted claim{named}, and this policy avoids guarantees."
    if family.support in ("resolved", "recovering", "ongoing", "investigating", "identified", "fixed") and (
            state is not None or family.support == "ongoing" or family.check == "state_claim"):
        return state_message(found, family, state)
    if family.check in _CHECK_WORDS:
        does = _FAMILY_WORDS.get(family.name) or f"{_CHECK_WORDS[family.check]} ({family.name or family.pattern})"
        return f"“{found}” {does}, and nothing in the incident's facts says so."
    return f"“{found}” is a restricted claim{named} the incident context does not support."



def find(text: str, support: Support) -> list[Violation]:
    """The claims neither the evidence nor the incident's state supports, in reading order, after the
    families that cannot be checked safely. Where two families match the same words, the one
    earlier in the rules reports them."""
    text, evidence, rules = prose(text, support), support.claim_evidence, support.rules
    strict_claims, state = support.strict_claims, support.state
    # A claim is supported by an unhedged occurrence of its family in the evidence: an original that
    # says "not yet resolved" does not license a revision that says "fixed" (docs/contract.md, 'Fact
    # and claim checks'), or by the incident's state (docs/guard.md). The strict form
    # (avoid_absolute_guarantees) accepts no support for a restricted claim; a strict-only family
    # (firm time promises) applies only there.
    unsafe, claims = [], []
    families = [(family, family_problem(family)) for family in rules.families()
                if strict_claims or not family.strict_only]
    # Which patterns match at all, in one pass over the text for every family (most match nothing).
    matched = matching(text, tuple(dict.fromkeys(p for family, problem in families if not problem
                                                 for p in family.patterns)))
    for family, problem in families:
        if problem:
            unsafe.append(Violation(family_check(family.check),
                                    str(family.pattern), f"{problem}. A person must check the text for it."))
            continue
        if matched is not None and matched.isdisjoint(family.patterns):
            continue
        made = [m for m in family_claims(text, family, matched)
                if not (family.timed and (_not_for_the_fix(text, m) or _said_that_day(text, m, evidence)))
                and not _incidents_own_name(text, m, evidence)
                and not (family.check == "state_claim" and (is_forecast(text, m.end()) or _tried(text, m.start())))]
        # A time for the fix worded as an estimate is still a time: the incident must give one.
        estimates = [m for m in family_estimates(text, family, matched) if not _not_for_the_fix(text, m)] \
            if family.timed else []
        if estimates and not estimate_supported(evidence, family):
            claims += [(m, family, True) for m in estimates]
        if not made:
            continue  # the text does not make the claim: the (long) evidence need not be read for it
        if strict_claims and family.check == "restricted_claims":
            # The strict form takes no text as support, but the incident's state is a fact: a resolved
            # incident is resolved, a monitored one has recovered, whatever the hints ask to avoid.
            supported = state_supports(family.support, state) is True
        else:
            supported = state_supports(family.support, state)
            if supported is None or (supported is False and family.support not in _STATE_DECIDES):
                supported = family_supported_in(evidence, family)
        if not supported:
            claims += [(m, family, False) for m in made]
    kept, spans = [], []  # spans: the kept matches' (start, end), sorted and disjoint
    for m, family, estimate in claims:  # in the rules' order: the first family to match some words reports them
        i = bisect.bisect_left(spans, (m.start(), m.end()))
        if (i and spans[i - 1][1] > m.start()) or (i < len(spans) and spans[i][0] < m.end()):
            continue
        spans.insert(i, (m.start(), m.end()))
        kept.append((m, family, estimate))
    return unsafe + [
        Violation(family_check("time_commitment" if estimate else family.check), m.group(),
                  _estimate_message(m.group()) if estimate
                  else _claim_message(m.group(), family, strict_claims, state), family.name)
        for m, family, estimate in sorted(kept, key=lambda c: c[0].start())
    ]


# "Try submitting your request online again a little later": what customers are asked to try again says
# nothing of the state.
_TRY = re.compile(r"\b(?:try|trying|retry|attempt)\b", re.IGNORECASE)


def _tried(text: str, at: int) -> bool:
    """Whether the claim at ``at`` is in the clause of an instruction to try it again."""
    return _TRY.search(clause_before(text, at)) is not None


def _not_for_the_fix(text: str, m) -> bool:
    """Whether a time is the next update's ("next update within the hour") or when something
    happened ("by 17:47 UTC we were processing normally", "we recalculated them by 11:30 ET"), not a time
    for the fix."""
    clock = any(c.isdigit() for c in m.group())  # the numbers check holds it to the incident's times
    if is_cadence(text, m.start(), m.end()) or is_past(text, m.start(), m.end(), ours=clock):
        return True
    clause = clause_before(text, m.start()) if clock else ""
    return bool(clause) and _INSTRUCTION.match(clause) is not None and not FRAME.match(clause)


# "Please get your booking in by 3pm today", "you'll need to book by 15:00": a time in an instruction is the
# reader's deadline, not a time for the fix (the numbers check holds its value to the incident's); "please note
# that …" frames a statement (grounding's FRAME).
_INSTRUCTION = re.compile(r"\s*(?:please|make\s+sure|you(?:['’]ll|\s+will)?\s+(?:need\s+to|must|have\s+to|should))\b",
                          re.IGNORECASE)


# "We'll send a correction email later today" where the incident says "A correction email will be sent to
# affected customers today": the day the incident gives for the same thing, said of it.
_DAY = re.compile(r"\b(?:today|tonight|tomorrow|this\s+(?:morning|afternoon|evening))\b", re.IGNORECASE)
_SAME_THING = 2  # words of substance the clause and the incident's statement share


def _said_that_day(text: str, m, evidence: str) -> bool:
    """Whether the incident gives the claim's day for what its clause says will happen."""
    if not (day := _DAY.search(m.group())):
        return False
    said = substance(clause_before(text, m.start()))
    day_said = re.compile(rf"\b{re.escape(day.group())}\b", re.IGNORECASE)
    return any(day_said.search(line) and len(said & substance(line)) >= _SAME_THING for line in evidence.splitlines())


# "transfers of guarantees of origin" where the incident's facts name the certificates so: the incident's
# own name for a thing, with the words after it, makes no claim of the family's.
_NAME_GOES_ON = re.compile(r"\s+(?:of|for)\s+[^\W\d_]+", re.IGNORECASE)


def _incidents_own_name(text: str, m, evidence: str) -> bool:
    """Whether the claim's words go on as a name the incident itself uses ("guarantees of origin")."""
    name = _NAME_GOES_ON.match(text, m.end())
    return name is not None and (m.group() + name.group()).lower() in evidence.lower()


def _estimate_message(found: str) -> str:
    return (f"“{found}” estimates when the fix comes, and the incident gives no time for it: an estimate "
            "is still a time customers hold us to.")


# ---------------------------------------------------------------- links, contacts and markup

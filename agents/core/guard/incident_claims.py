"""Claims checked against the incident, not only against the draft (docs/guard.md).

A claim family's match (agents.core.guard.claims) is supported by what its ``support`` names: the evidence
making the same claim, or the incident's state. The checks here read a statement's structure where
a word list cannot: the quantifier of "every EU user" against the share of customers the facts give,
the party a cause names ("due to an outage at Northwind Cloud"), whether a time expression is about
the next update (a cadence) or about the fix, and the places a text names. Plain Python: no Django.
"""

from __future__ import annotations

import bisect
import datetime
import functools
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal

import re2

from agents.core.guard.cadence import CADENCE
from agents.core.guard.contacts import prose
from agents.core.guard.grounding import FUNCTION_WORDS, GREETING, NUMBER_WORDS, POSSESSOR, forms, stem
from agents.core.guard.hedges import clause_before, is_hedged, is_negated
from agents.core.guard.leading import led_by
from agents.core.guard.lemmas import is_inflection, verbs_of
from agents.core.guard.places import DEMONYMS, PLACES
from agents.core.guard.regions import region_in_allowed, region_matches
from agents.core.guard.support import Support, per_incident
from agents.core.guard.violation import Violation
from agents.core.guard.wellformed import sentence_spans
from agents.core.patterns import UnsafePattern, compile_pattern
from agents.core.policy import ClaimFamily
from agents.core.units import TIME_ZONES, fact_meta, number_value, unit_of

# The lifecycle a status page shows, in order.
STATES = ("investigating", "identified", "monitoring", "resolved")
# A scheduled maintenance window's states (reviewer.outbox.maintenance checks its texts with these).
MAINTENANCE_STATES = ("scheduled", "in_progress", "completed")
_STATE_WORDS = {
    "investigating": "is still being investigated",
    "identified": "has its cause identified but is not fixed yet",
    "monitoring": "is being monitored after a fix",
    "resolved": "is resolved",
    "scheduled": "is scheduled and has not started",
    "in_progress": "is in progress",
    "completed": "is completed",
}


# A context without a state field (a plain context file) may still say it in its status:
# "resolved", "monitoring", "degraded, cause identified". Read only when the status negates nothing
# ("not yet", "unconfirmed"; "under way" and "underway" negate nothing).
_STATUS_STATES = (
    ("resolved", re.compile(r"\bresolved\b", re.IGNORECASE)),
    ("monitoring", re.compile(r"\b(?:monitoring|recovered|recovering|mitigated)\b", re.IGNORECASE)),
    ("identified", re.compile(r"\b(?:identified|fixing)\b", re.IGNORECASE)),
    ("investigating", re.compile(r"\binvestigating\b", re.IGNORECASE)),
)
_NEGATED_STATUS = re.compile(r"\b(?:not|no|un(?!der)\w+|yet|partially)\b", re.IGNORECASE)


def incident_state(context: Mapping | None) -> str | None:
    """The incident's lifecycle state from the run context: its ``state``, or where it has none, the
    state its status names ("resolved"); None when neither says one (a bare context)."""
    incident = context.get("incident") if isinstance(context, Mapping) else None
    if not isinstance(incident, Mapping):
        return None
    state = incident.get("state")
    if state in STATES or state in MAINTENANCE_STATES:
        return state
    status = incident.get("status")
    if state is None and isinstance(status, str):
        return _status_state(status)
    return None


def _status_state(status: str) -> str | None:
    """The state a status names, read a clause at a time: a negation speaks of its own clause
    ("investigating, cause not yet known" is investigating). A later stage than investigating is read
    only from a status that negates nothing ("resolved, not yet confirmed" names no state)."""
    named = [next((name for name, pattern in _STATUS_STATES if pattern.search(clause)), None)
             for clause in re.split(r"[,;(]", status) if not _NEGATED_STATUS.search(clause)]
    state = next((name for name in named if name), None)
    if state is not None and state != "investigating" and _NEGATED_STATUS.search(status):
        return None
    return state


def state_supports(support: str, state: str | None) -> bool | None:
    """Whether the incident's state supports a family's claim: True, False, or None when the state
    says nothing either way (then the evidence decides)."""
    if support == "in_progress":  # only a maintenance window's state says; an incident's text is not a window's
        return state == "in_progress" if state in MAINTENANCE_STATES else True
    if state in MAINTENANCE_STATES:  # a window has no cause or fix: only "going on" has a meaning
        return state == "in_progress" if support == "ongoing" else None
    if state is None:
        return True if support in ("ongoing", "investigating", "identified") else None
    if support == "resolved":
        return state == "resolved" or None
    if support == "recovering":
        return state in ("monitoring", "resolved") or None
    if support == "fixed":
        return state in ("monitoring", "resolved")
    if support == "ongoing":
        return state != "resolved"
    if support == "investigating":
        return state == "investigating"
    if support == "identified":
        return state != "investigating"
    return None


def state_message(found: str, family: ClaimFamily, state: str | None) -> str:
    """Why a state claim is not supported, for a support lead."""
    named = f"“{found}” is a claim of the “{family.name}” family" if family.name else f"“{found}” is a claim"
    if family.support == "in_progress" and state is not None:
        return f"{named}: it says the maintenance is going on, but it {_STATE_WORDS[state]}."
    if family.support == "ongoing" and state in MAINTENANCE_STATES:
        return f"{named}: it says something is going on, but the maintenance {_STATE_WORDS[state]}."
    if family.support == "ongoing":
        return f"{named}: it says the problem is still going on, but the incident is resolved."
    if family.support == "identified" and state is not None:
        return f"{named}: it says the cause is identified, but the incident {_STATE_WORDS[state]}."
    if family.support == "investigating" and state is not None:
        return f"{named}: it says the cause is not known yet, but the incident {_STATE_WORDS[state]}."
    if family.support == "fixed" and state is not None:
        return f"{named}: it says a fix is in place, but the incident {_STATE_WORDS[state]}."
    if state is not None and family.support in ("resolved", "recovering"):
        return f"{named}: it says the problem is over, but the incident {_STATE_WORDS[state]}."
    return f"{named} about the incident that its facts do not support."


# ---------------------------------------------------------------- cadence

# A statement about the next update is a promise about communication, not about the fix: "we will
# post the next update within 30 minutes" is a cadence (its number is checked like any number; the
# pattern is agents/core/guard/cadence.py).
SENTENCE_END = re.compile(r"[.!?;\n](?!\d)")


_SENTENCE_REACH = 400  # characters read on each side: a sentence longer than that is cut there


def sentence_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """Where the sentence holding ``text[start:end]`` begins and ends."""
    begin = max(0, start - _SENTENCE_REACH)
    before = [m.end() for m in SENTENCE_END.finditer(text, begin, start)]
    after = SENTENCE_END.search(text, end, end + _SENTENCE_REACH)
    return (before[-1] if before else begin), (after.start() if after else min(len(text), end + _SENTENCE_REACH))


def sentence_around(text: str, start: int, end: int) -> str:
    begin, finish = sentence_bounds(text, start, end)
    return text[begin:finish]


def is_cadence(text: str, start: int, end: int) -> bool:
    """Whether the match at ``start:end`` is in a sentence about the next update."""
    return CADENCE.search(sentence_around(text, start, end)) is not None


# A time in a sentence about the past is when something happened, not a commitment: "by 17:47 UTC we
# were processing at normal capacity", "processing returned to normal by 17:47 UTC" (its time is
# checked as a time). A sentence with a future or a present auxiliary is read as before.
_PAST = re.compile(r"\b(?:was|were|had|did|returned|recovered|resumed|restored|stabili[sz]ed|completed|finished|"
                   r"cleared|ended|stopped|started|began|occurred|happened|peaked|dropped|fell|rose)\b", re.IGNORECASE)
_NOT_PAST = re.compile(r"\b(?:will|shall|is|are|am|be|going\s+to|expect\w*|plan\w*|aim\w*)\b|['’]ll\b",
                       re.IGNORECASE)


# ... or what the company did ("we reverted the change and recalculated the statements by 11:30 ET"), where
# the caller asks: a clock time there is checked against the incident's, "within the hour" would not be.
_WE_DID = re.compile(r"\bwe\s+(?:[a-z]+ly\s+|also\s+|then\s+)?([a-z]+)\b", re.IGNORECASE)


def is_past(text: str, start: int, end: int, ours: bool = False) -> bool:
    """Whether the match at ``start:end`` is in a sentence that tells what happened (``ours``: or what the
    company did)."""
    sentence = sentence_around(text, start, end)
    if _NOT_PAST.search(sentence):
        return False
    return _PAST.search(sentence) is not None or ours and any(
        is_inflection(verb, lemma, "VBD") for verb in (m.group(1).lower() for m in _WE_DID.finditer(sentence))
        for lemma in verbs_of(verb))


# A recovery followed by when it will happen is a forecast, not the state now: "card payments work
# again in ten minutes" (its number and its time commitment are checked as such), "sign-ins should
# start working again once the rollback completes" (what it waits for is read as any other words).
_FORECAST = re.compile(
    r"[\s,]+(?:(?:in|within|by|after|over)\s+(?:the\s+next\s+)?(?:about\s+|around\s+|roughly\s+)?"
    r"(?:\d|an?\s|one|two|three|four|five|six|seven|eight|nine|ten|fifteen|twenty|thirty|forty|fifty|sixty"
    r"|few|couple|half|noon|midday|midnight|tonight|tomorrow|the\s+end)|soon|shortly|later"
    r"|(?:once|when|as\s+soon\s+as|as)\s+(?:the|this|that|our|we|it|these|those)\b(?![^.;!?]*\b(?:was|were|did|had)\b))",
    re.IGNORECASE,
)


def is_forecast(text: str, end: int) -> bool:
    """Whether the claim ending at ``end`` is followed by when it will come true."""
    return _FORECAST.match(text, end) is not None


# ---------------------------------------------------------------- scope

@dataclass(frozen=True)
class Finding:
    check: str
    found: str
    message: str
    start: int
    reading: str = ""  # an unsupported statement a named reading found (Violation.reading)


# Who is affected, and what: the nouns a quantifier over the affected counts.
_WHO_NOUNS = (r"customers?|users?|accounts?|merchants?|members?|tenants?|organi[sz]ations?|teams?|workspaces?|people"
              r"|stores?|shops?|developers?|clients?|subscribers?")
_THING_NOUNS = (r"requests?|api\s+calls?|calls?|sign[-\s]?ins?|logins?|log[-\s]?ins?|exports?|webhooks?|deliveries"
                r"|payments?|checkouts?|transactions?|orders?|jobs?|builds?|deployments?|messages?|emails?"
                r"|sessions?|uploads?|downloads?|reports?|invoices?")
_NOUNS = rf"(?:{_WHO_NOUNS}|{_THING_NOUNS})"
# "All of our venues", "every tutor": all of a thing the nouns above do not name; what is no thing ("all the
# time", "every day") is left out in scope_findings.
_ALL_OF_ANY = compile_pattern(
    r"\b(?:all|every)\s+(?:single\s+)?(?:of\s+)?(?:(?:our|your|the)\s+)?[a-z][a-z-]+(?:\s+[a-z][a-z-]+s)?\b")
# (kind, pattern): every matched span is the claim as written.
_QUANTIFIERS = (
    ("all", compile_pattern(
        r"\b(?:all|every|100\s*%\s+of)\s+(?:single\s+)?(?:of\s+)?(?:(?:our|your|the)\s+)?(?:[a-z-]+\s+){0,2}"
        + _NOUNS + r"\b|\b(?:everyone|everybody)\b|\bthe\s+(?:entire|whole)\s+(?:user|customer)\s+base\b")),
    ("few", compile_pattern(
        r"\b(?:only\s+)?(?:a\s+)?(?:very\s+)?(?:small|tiny|limited|minor|negligible)\s+(?:number|fraction|"
        r"percentage|share|subset|portion|group|minority|proportion)\b|\b(?:a\s+)?(?:small\s+)?handful\s+of\b"
        r"|\b(?:very\s+|a\s+)?few\s+(?:of\s+(?:our|your|the)\s+)?(?:[a-z-]+\s+)?" + _NOUNS + r"\b"
        r"|\ba\s+minority\s+of\b|\bonly\s+(?:some|a\s+few)\b|\bisolated\s+(?:cases|reports|incidents)\b"
        r"|\b(?:minimal|negligible)\s+impact\b")),
    ("all", _ALL_OF_ANY),
    ("most", compile_pattern(
        r"\b(?:most|the\s+(?:vast\s+)?majority)\s+(?:of\s+)?(?:(?:our|your|the)\s+)?(?:[a-z-]+\s+){0,2}"
        + _NOUNS + r"\b|\b(?:nearly|almost|virtually|practically)\s+(?:all|every(?:one)?)\b|\bwidespread\b")),
)
# ... nor is grammar (FUNCTION_WORDS): "all of the", "all within the centre".
_NO_THING = frozenset("time times day days week weeks again others right set good well fine clear back "
                      "kinds sorts types ways minute minutes hour hours month months year years morning mornings "
                      "evening evenings night nights".split())


def _a_thing(found: str) -> bool:
    """Whether the last word a quantifier took is a thing it counts ("all of our venues"), not grammar or
    time ("all the time", "every day")."""
    last = found.split()[-1].lower()
    return last not in _NO_THING and last not in FUNCTION_WORDS


# A quantifier is about who is affected only in a sentence about impact: "all payments are stable" is
# a stability claim (its own family), "all customers are affected" a scope claim.
_IMPACT = re.compile(
    r"\b(?:affect\w*|impact\w*|experienc\w*|seeing|see|unable|cannot|can[’']t|fail\w*|errors?|down|degraded"
    r"|delay\w*|slow\w*|issues?|problems?|disrupt\w*|outage|timeouts?|timing\s+out|interrupt\w*"
    r"|missing|incomplete|lost|stuck|skipp\w*)\b",
    re.IGNORECASE,
)
# "All affected customers", "all the delayed confirmation emails", "every failed payment": the quantifier
# counts the hit, not the customers.
_OF_AFFECTED = re.compile(r"\b(?:affected|impacted|delayed|failed|missed|missing|stuck|queued|pending|declined)\b",
                          re.IGNORECASE)
# "Hi everyone," greets, "thanks to everyone who let us know" thanks and "sorry to everyone who has run into this
# error" apologises; none counts the affected.
# The words of an apology or a thank-you.
_COURTESY = r"thanks|thank\s+you|sorry|apologies|apologi[sz]e"
_THANKED = re.compile(rf"\b(?:{_COURTESY}|grateful)\s+(?:again\s+)?to\s+$", re.IGNORECASE)
_GREETED = re.compile(rf"(?:^|[.!?:]\s+)(?:{GREETING}|thanks|thank\s+you|(?:good\s+)?(?:morning|evening|afternoon))"
                      r"(?:\s+there)?,?\s*$", re.IGNORECASE)
_QUANTIFIER_SAYS = {"all": "everyone is affected", "few": "only a few are affected", "most": "most are affected"}
# The share of the affected is the complement of a share that succeeds.
_GOOD_SHARE = re.compile(r"success|availability|uptime|healthy|succeed", re.IGNORECASE)
_SCOPE_SHARE = re.compile(r"affect|impact|fail|error|share|fraction|percent|pct|users|customers|checkouts|"
                          r"requests|sign|login|timeout|drop|lost|delay", re.IGNORECASE)


def affected_shares(context: Mapping | None) -> list[tuple[Decimal, str]]:
    """(percent of customers or requests affected, the fact's label) for each public fact with a
    percentage or ratio unit that measures who is affected."""
    if not isinstance(context, Mapping) or not isinstance(context.get("incident"), Mapping):
        return []
    incident = context["incident"]
    shares = []
    for key, label, unit in fact_meta(context):
        value, unit = number_value(incident.get(key)), unit_of(key, unit)
        if unit not in ("%", "ratio") or value is None:
            continue
        name = f"{key} {label}"
        if not (_SCOPE_SHARE.search(name) or _GOOD_SHARE.search(name)):
            continue
        percent = value * (100 if unit == "ratio" else 1)
        if _GOOD_SHARE.search(name):
            percent = 100 - percent
        shares.append((percent, label))
    return shares


# "Everyone whose match was interrupted", "all customers who saw an error": a relative clause of impact
# after the quantifier picks out the affected, as "affected" does.
# Its impact within its first four words: in "all users who use the EU workspaces see failures" the
# impact is the sentence's, said of all users.
_RELATIVE = re.compile(r"\s+(?:[\w’'-]+\s+){0,2}?(?:who|whose|that|which)((?:\s+[\w’'-]+){1,4})", re.IGNORECASE)


def _of_the_hit(text: str, end: int) -> bool:
    if _AFFECTED_AFTER.match(text, end):
        return True  # "for everyone affected"
    relative = _RELATIVE.match(text, end)
    return relative is not None and _IMPACT.search(relative.group(1)) is not None


_AFFECTED_AFTER = re.compile(r"\s+(?:affected|impacted|involved)\b", re.IGNORECASE)  # "everyone involved"


def _quantifier_supported(kind: str, shares: list[tuple[Decimal, str]], found: str) -> bool | None:
    if not shares:
        return None
    if kind == "all":
        return any(p >= Decimal("99.5") for p, _ in shares)
    if kind == "few":
        return all(p <= 10 for p, _ in shares)
    if found.lower().startswith(("nearly", "almost", "virtually", "practically")):
        return any(p >= 90 for p, _ in shares)
    return any(p > 50 for p, _ in shares)


# Who a quantifier counts, and what a share counts: "only a small number of accounts" is about accounts,
# and 5% of requests timing out does not say how many accounts see the timeouts.
# (The people a count may name are more than those a quantifier over the affected is read for.)
_WHO = re.compile(rf"\b(?:{_WHO_NOUNS}|patients?|students?|learners?|riders?|drivers?|passengers?|guests?|residents?"
                  r"|households?|shoppers?|buyers?|sellers?|owners?|families|parents?|readers?|listeners?|viewers?"
                  r"|players?|attendees?|recipients?|applicants?|borrowers?|travell?ers?)\b", re.IGNORECASE)
_COUNTED = re.compile(r"\s+(?:of\s+)?(?:(?:our|your|the|all)\s+)?(?:[a-z-]+\s+)?([a-z-]+)", re.IGNORECASE)
_EVENTS = re.compile(rf"\b(?:{_THING_NOUNS}|attempts?|queries|searches|page\s+loads?|timeouts?|errors?)\b",
                     re.IGNORECASE)


def counts_people(words: str) -> bool:
    """Whether ``words`` name people or accounts ("customers", "members", "accounts")."""
    return _WHO.search(words) is not None


def counts_things(words: str) -> bool:
    """Whether ``words`` name things that happen or are handled ("deliveries", "requests", "orders")."""
    return _EVENTS.search(words) is not None


def says_few(words: str) -> bool:
    """Whether ``words`` say that only a few are affected, as the scope check's quantifiers read them."""
    return any(kind == "few" and pattern.search(words) is not None for kind, pattern in _QUANTIFIERS)


def _measuring(kind: str, shares: list[tuple[Decimal, str]], text: str, m) -> list[tuple[Decimal, str]]:
    return shares_counting(shares, text, m.start(), m.end()) if kind == "few" else shares


def shares_counting(shares: list[tuple[Decimal, str]], text: str, start: int, end: int) -> list[tuple[Decimal, str]]:
    """The shares that may bound the claim at ``start:end`` that only a few are affected: where it
    counts people or accounts ("only a small number of accounts"), not the shares of requests or other
    events, which do not say how many see them."""
    counted = _COUNTED.match(text, end)
    if not shares or not _WHO.search(f"{text[start:end]} {counted.group(0) if counted else ''}"):
        return shares
    return [(p, label) for p, label in shares if not _EVENTS.search(label) or _WHO.search(label)]


def _shown(percent: Decimal) -> str:
    return f"{percent.normalize():f}%"


# "One out of every five", "one in every ten": "every" before a number says a share, not everyone.
_SHARE_OF_EVERY = re.compile(r"\b(?:of|in)\s+$", re.IGNORECASE)


# "15% of uploads failed, all of them files larger than 50 MB": "all of them" counts what the sentence has
# just counted, not everyone.
_ANAPHORA = re.compile(r"(?:all|every|each)\s+(?:single\s+)?of\s+(?:them|these|those)\b", re.IGNORECASE)
# "We've cleared the stuck queue, and every request is processed": "all" or "every" opening a clause of its
# own is about what that clause says, not about the impact the clause before it names. ("..., and a few
# sessions in progress may stop early" still reads the whole sentence: "only a few" is said of the impact.)
_OPENS_CLAUSE = re.compile(r"(?:;|,?\s+(?:and|but|while|whereas|so))\s+$", re.IGNORECASE)


def _quantified_clause(text: str, start: int, end: int, kind: str) -> str:
    """The sentence around a quantifier, from "all" or "every" on where it opens a clause of its own."""
    begin, finish = sentence_bounds(text, start, end)
    if kind == "all" and _OPENS_CLAUSE.search(text, begin, start):
        begin = start
    return text[begin:finish]


def scope_findings(text: str, context: Mapping | None, evidence: str, hedged) -> list[Finding]:
    """Quantifiers over customers that the incident's shares contradict, or that nothing supports.
    ``hedged(text, start, end)`` is the guard's hedge rule (a negated "not all users" passes)."""
    shares = None  # read at the first quantifier about impact: most texts have none
    findings = []
    named = set()
    for kind, pattern in _QUANTIFIERS:
        for m in pattern.finditer(text):
            found = m.group()
            if m.start() in named or pattern is _ALL_OF_ANY and not _a_thing(found):
                continue
            named.add(m.start())
            if _OF_AFFECTED.search(found) or hedged(text, m.start(), m.end()) or _of_the_hit(text, m.end()):
                continue  # "all affected customers" quantifies the affected, not the customers
            if _SHARE_OF_EVERY.search(text, max(0, m.start() - 8), m.start()) and \
                    found.split()[1].lower() in NUMBER_WORDS:
                continue  # the numbers check reads the share
            if re.search(r"\bat\s+$", text[max(0, m.start() - 4) : m.start()], re.IGNORECASE) and \
                    not re.match(r"all\s+(?:of\s+)?(?:our|your|the)\s", found, re.IGNORECASE):
                continue  # "not loading at all for users" quantifies nothing ("at all of our venues" does)
            if _GREETED.search(text, 0, m.start()) and re.match(r"\s*(?:[,!]|[-–—]\s)", text[m.end():]) or \
                    _THANKED.search(text, 0, m.start()):
                continue
            if _ANAPHORA.match(found) or not _IMPACT.search(_quantified_clause(text, m.start(), m.end(), kind)):
                continue
            shares = affected_shares(context) if shares is None else shares
            measured = _measuring(kind, shares, text, m)
            verdict = _quantifier_supported(kind, measured, found)
            if verdict is None:
                # "regenerate every affected export" quantifies the affected, and draws no edge either.
                verdict = any(not hedged(evidence, e.start(), e.end()) and not _OF_AFFECTED.search(e.group())
                              for e in pattern.finditer(evidence))
            if verdict:
                continue
            if measured:
                facts = ", ".join(f"{_shown(p)} ({label})" for p, label in shares)
                message = f"“{found}” says {_QUANTIFIER_SAYS[kind]}, but the incident's facts say {facts}."
            elif shares:
                facts = ", ".join(f"{_shown(p)} ({label})" for p, label in shares)
                message = (f"“{found}” says {_QUANTIFIER_SAYS[kind]}, and the incident's facts count requests or "
                           f"other events, not who sees them: {facts}.")
            else:
                message = (f"“{found}” says {_QUANTIFIER_SAYS[kind]}, and the incident's facts give no share "
                           "of customers affected.")
            findings.append(Finding("scope_claim", found, message, m.start()))
    return findings


# "The issue only affects patients booking with a new provider": a claim that narrows who or what is
# affected draws the edge of the incident, and only the incident may draw it (a fact, a key message
# or an approved action that says "only", "limited to").
_ONLY = re.compile(
    led_by(
        "abceijlorsw'’",
        r"\b(?:only|just|solely|exclusively)\s+(?:affect(?:s|ed|ing)?|impact(?:s|ed|ing)?|happen(?:s|ed)?|occur(?:s|red)?|"
        r"appl(?:y|ies|ied))\b|\b(?:affect(?:s|ed)?|impact(?:s|ed)?)\s+(?:only|just|solely|exclusively)\b"
        r"|\b(?:limited|confined|restricted)\s+to\b"
        # ... or that plays it down: "this was only a display issue", "it is just a visual glitch".
        r"|(?:\b(?:was|is|were|are|been)|['’]s)\s+(?:only|just|merely|simply|purely)\s+(?:a|an)\b",
    ),
    re.IGNORECASE,
)
_ONLY_SUPPORT = re.compile(r"\b(?:only|solely|exclusively|limited\s+to|confined\s+to|restricted\s+to)\b",
                           re.IGNORECASE)
# ... and a fact that gives the incident's scope ("Scope: Apps in us-east with static egress IPs enabled")
# bounds what it names: "this only affected apps in us-east with static egress IPs enabled"
_SCOPE_FACT = re.compile(r"^\s*(?:scope|affected\s+scope|impact\s+scope)\s*:(.*)$", re.IGNORECASE | re.MULTILINE)


# "Only older devices appear to be affected": the few it names are all there is. Naming what the incident
# says is affected ("only redeeming rewards at checkout is affected") repeats it; a word of its own
# ("older") draws an edge the incident did not.
_ONLY_NAMED = re.compile(r"\bonly\s+((?:[\w'’-]+\s+){1,4}?)(?:are|is|were|was|ha(?:ve|s)\s+been|"
                         r"(?:appear|seem)s?\s+to\s+be)\s+(?:affected|impacted)\b", re.IGNORECASE)


# "Wait times are not refreshing in the mobile app only" where the incident says "on the website, mobile
# app and open data feed": "only" after one of the things an incident's statement lists, in a clause that
# says what fails, drops the others ("this delayed email delivery only", where the incident names nothing
# else, and "call for emergencies only", which says no impact, draw no edge).
_ONLY_AFTER = re.compile(r"\b(?:in|on|for|with|affect(?:s|ed)?|impact(?:s|ed)?|delay(?:s|ed)?)\s+"
                         r"((?:[\w'’-]+\s+){1,4}?)only(?=\s*(?:[.,;:!?)]|$))", re.IGNORECASE)
_SAYS_IMPACT = re.compile(r"\b(?:not|cannot|unable|affect\w*|impact\w*|delay\w*|errors?|tim(?:e|es|ed|ing)\s+out|"
                          r"prevent(?:s|ed|ing)?)\b"
                          r"|n[’']t\b", re.IGNORECASE)


def _says_what_fails(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` says something fails: an impact word or a negation."""
    return _SAYS_IMPACT.search(text, start, end) is not None or _HIT.search(text, start, end) is not None


def only_one_of_findings(text: str, context: Mapping | None, hedged, key: str | None = None) -> list[Finding]:
    """"Only" after one of several things an incident's statement names together."""
    if "only" not in text.lower():
        return []
    findings = []
    for m in _ONLY_AFTER.finditer(text):
        opened = _last_before(_openings(_STATEMENT_OPEN, text), m.start())
        if hedged(text, m.start(), m.end()) or not _says_what_fails(text, opened, m.end()):
            continue
        named = substance(m.group(1))
        for statement in _statements_of(context, key=key) if named else ():
            items = [words for item in _LISTED.split(statement.partition(": ")[2] or statement)
                     if (words := substance(item))]
            if len(items) > 1 and any(named <= item for item in items) and not all(named <= item for item in items):
                findings.append(Finding("scope_claim", m.group(), f"“{m.group()}” narrows what is affected to one "
                                        "of the things the incident names together.", m.start()))
                break
    return findings


def only_findings(text: str, evidence: str, hedged) -> list[Finding]:
    """Claims that only some are affected, where the incident says no such thing."""
    made = [m for m in _ONLY.finditer(text) if not hedged(text, m.start(), m.end())]
    named = [m for m in _ONLY_NAMED.finditer(text) if not hedged(text, m.start(), m.end())]
    if named:
        known = substance(evidence)
        made += [m for m in named if not substance(m.group(1)) <= known
                 and not any(o.start() <= m.start() < o.end() for o in made)]
    if not made or _ONLY_SUPPORT.search(evidence):
        return []
    scopes = [substance(m.group(1)) for m in _SCOPE_FACT.finditer(evidence)]
    return [Finding("scope_claim", m.group(), f"“{m.group()}” narrows who or what is affected, and the incident "
                    "does not say so.", m.start())
            for m in made if not _within_scope(text, m, scopes)]


def _within_scope(text: str, m: re.Match, scopes: list[set[str]]) -> bool:
    """Whether what the "only" clause names is all in one of the incident's scope facts."""
    said = substance(text[m.start() : _CLAUSE_END.search(text, m.end()).start()]) - _ONLY_WORDS
    return bool(said) and any(said <= scope for scope in scopes)


_ONLY_WORDS = frozenset(stem(w) for w in "only affected affects affecting impacted impacts".split())


# "All recordings made during that time are now available" where the incident says "most are already
# available": a claim about every one of a thing, where the incident says the same of only some of it (its
# quantifier's own words, "available", are the claim's, and the thing is named in the same statement).
# "Every delayed transfer" is a claim about the transfers the incident says most of.
_EVERY_ONE = re.compile(led_by("ae", r"\b(?:all|every)\s+(?:of\s+)?(?:(?:the|your|our|their|these|those)\s+)?"
                                     r"(?:(?:affected|delayed|failed|missed|missing|stuck|queued|pending)\s+)?"
                                     r"([a-z][a-z-]+)"), re.IGNORECASE)
_SOME_OF = re.compile(r"\b(?:most|some|many|several|majority|part|few|not\s+all)\b", re.IGNORECASE)
_EVERY = re.compile(r"\b(?:all|every|each)\b", re.IGNORECASE)
_CLAUSE_END = re.compile(r"(?<!\d)[,;:.!?]|[,;:.!?](?!\d)|$")  # "by 18:00 UTC" ends no clause


def _statement_sentences(context: Mapping | None) -> Iterator[str]:
    """Each sentence of the incident's public statements (:func:`_statements`)."""
    return (statement[a:b] for statement in _statements(context) for a, b in sentence_spans(statement))


@per_incident
def _partial_statements(context: Mapping | None) -> tuple[tuple[frozenset[str], frozenset[str]], ...]:
    """(the statement's words, the words its quantifier says of some) for each statement of the incident
    that says something of only some of a thing, and of none of it all."""
    found = []
    for statement in _statement_sentences(context):
        if _EVERY.search(statement):
            continue
        for m in _SOME_OF.finditer(statement):
            said = substance(statement[m.end():m.end() + _CLAUSE_END.search(statement[m.end():]).start()])
            if said:
                found.append((frozenset(substance(statement)), frozenset(said)))
    return tuple(found)


def partial_findings(text: str, context: Mapping | None, hedged, key: str | None = None) -> list[Finding]:
    """Claims about every one of a thing that the incident says of only some of it (``key``: the context's
    incident_key)."""
    if not _EVERY.search(text):
        return []
    statements = None
    findings = []
    for m in _EVERY_ONE.finditer(text):
        noun = m.group(1).lower()
        if (noun in FUNCTION_WORDS or hedged(text, m.start(), m.end())
                or _NEGATION.search(clause_before(text, m.start())) or _of_the_hit(text, m.end())):
            continue  # "not receiving all new orders", "every rider whose receipt was affected"
        statements = _partial_statements(context, key=key) if statements is None else statements
        if not statements:
            return []
        rest = text[m.end():]
        claimed = substance(rest[:_CLAUSE_END.search(rest).start()])
        thing = stem(noun)
        for words, said in statements:
            if thing in words and claimed & (said - {thing}):
                findings.append(Finding("scope_claim", m.group(), f"“{m.group()}” says it of every one, and the "
                                        "incident says it of only some.", m.start()))
                break
    return findings


# "... for a small number of projects" where the incident says "for most projects": a claim that only a few
# are concerned, where one of the incident's statements says most of the same thing are.
_FEW_OF = re.compile(led_by("aov", r"\b(?:a\s+(?:very\s+)?(?:small\s+number|handful|few|minority)|only\s+"
                                   r"(?:a\s+few|some)|very\s+few)\s+(?:of\s+)?(?:(?:the|your|our|their)\s+)?"
                                   r"([a-z][a-z-]+)"), re.IGNORECASE)
_MOST_OF = re.compile(r"\b(?:most|(?:the\s+)?(?:vast\s+)?majority|nearly\s+all|almost\s+all)\b", re.IGNORECASE)


@per_incident
def _most_statements(context: Mapping | None) -> tuple[frozenset[str], ...]:
    """The words of each of the incident's statements that says something of most of a thing."""
    return tuple(frozenset(substance(statement)) for statement in _statement_sentences(context)
                 if _MOST_OF.search(statement))


def few_findings(text: str, context: Mapping | None, hedged, key: str | None = None) -> list[Finding]:
    """Claims that only a few of a thing are concerned, where the incident says most are."""
    findings = []
    for m in _FEW_OF.finditer(text):
        noun = m.group(1).lower()
        if noun in FUNCTION_WORDS or hedged(text, m.start(), m.end()):
            continue
        if any(stem(noun) in words for words in _most_statements(context, key=key)):
            findings.append(Finding("scope_claim", m.group(), f"“{m.group()}” says only a few, and the incident "
                                    "says most.", m.start()))
    return findings


# "Browsing and carts are unaffected": a claim that something was spared draws the edge of the incident.
# It passes where one of the incident's statements of no impact names the same thing ("Storefront
# browsing and carts: working normally"), and is a scope claim otherwise.
# "your recipes and meal plans are fine", "guest codes still work": the same claim in everyday words
_FINE = (r"\b(?:(?:is|are|was|were)\s+(?:all\s+|still\s+|perfectly\s+)?(?:fine|ok|okay)|still\s+works?)"
         r"(?=\s*(?:[.;:,!]|$))")
_UNAFFECTED = re.compile(r"\b(?:unaffected|unimpacted|unchanged|not\s+(?:been\s+)?(?:affected|impacted))\b"
                         # "your conversion rates shouldn't be affected"
                         r"|\bshould(?:n[’']t|\s+not)\s+(?:be|have\s+been)\s+(?:affected|impacted)\b|" + _FINE,
                         re.IGNORECASE)
_SAID_FINE = re.compile(_FINE, re.IGNORECASE)
# ("Please be assured that your order is safe": what is said opens after the "that" of a verb that says it.)
_CLAUSE_OPEN = re.compile(r"[.;:!?,]\s|\b(?:and|but|while|whereas|although)\s|^"
                          r"|\b(?:assured|confirm|confirmed|know|note|aware|glad|pleased|happy)\s+that\s",
                          re.IGNORECASE)


def says_unaffected(words: str) -> bool:
    """Whether ``words`` are only the marker of a claim that something was spared ("not affected")."""
    return _UNAFFECTED.fullmatch(words.strip()) is not None


_SPARED_STATEMENT = re.compile(
    r"\bnot\s+(?:been\s+)?(?:affected|impacted|disrupted)|\bunaffected\b|\bunchanged\b|\bno\s+impact\b|\bnormally\b|"
    r"\bas\s+(?:usual|expected|normal)\b|\bat\s+(?:their\s+)?normal\s+(?:rates?|levels?|speeds?)\b|\bon\s+time\b|\boperational\b|\b(?:is|are|remains?|stays?)\s+(?:still\s+|fully\s+)?"
    r"(?:available|working)\b"
    # "share codes generated before 10:20 GMT remained valid"
    r"|\b(?:remain(?:s|ed)?|stay(?:s|ed)?)\s+(?:valid|available|accessible|intact|usable|in\s+place)\b"
    # "prescriptions can still be created, edited and exported in the web platform"
    r"|\bcan\s+still\s+be\s+[a-z]+ed\b"
    # "streams started from the mobile app work": the verb that ends its clause
    r"|\b(?:still\s+)?works?(?=\s*(?:[,;.]|$|\s+fine\b))",
    re.IGNORECASE,
)
_GENERIC = frozenset("service services system systems customer customers user users other others all every part "
                     "parts rest everything feature features app apps support".split())


def spared_by_incident(subject: str, context: Mapping | None, key: str | None = None) -> bool:
    """Whether ``subject`` names something one of the incident's statements of no impact names (a fact,
    a key message or an approved action that says it is not affected, works normally or as usual): at
    least half of its words are the statement's ("geocoding and routing requests" is "the Geocoding API
    and Routing API"; "check-in through the airline's own app" is not "online check-in for other
    airlines"), each thing it lists."""
    statements = _spared(context, key=key)
    subject = POSSESSOR.sub("your", subject)  # "your child's stored sample" names a stored sample
    # "Webhook notifications and metric-based alerts were unaffected" says it of each thing it lists.
    items = [words for item in _ITEMS.split(subject) if (words := substance(item))]
    return bool(items) and all(any(2 * len(words & s.words) >= len(words) for s in statements) for words in items)


@dataclass(frozen=True)
class _Spared:
    """One of the incident's statements of no impact, as the scope checks read it: all its words, the
    words of what it spares, and the words of each thing it spares ("Appointment booking and patient
    messaging were not affected" spares "appointment booking" and "patient messaging"; "Sign-in is not
    affected; the Singapore gateway is slow" spares sign-in only)."""

    words: frozenset[str]
    named: frozenset[str]
    items: tuple[frozenset[str], ...]


@per_incident
def _spared(context: Mapping | None) -> tuple[_Spared, ...]:
    """The incident's statements of no impact, read once per incident."""
    spared = []
    for statement in _spared_statements(context):
        label, _, value = statement.partition(": ")
        # in a statement of a recovery too, what it spares is what it says was not affected
        said = (_RECOVERY.search(statement) and _UNAFFECTED.search(statement)) or _SPARED_STATEMENT.search(statement)
        named = value if value and _SPARED_STATEMENT.search(label) else _own_clause(statement[: said.start()])
        spared.append(_Spared(frozenset(substance(statement)), frozenset(_named(named)),
                              tuple(frozenset(_named(item)) for item in _ITEMS.split(named))))
    return tuple(spared)


# "Renewals are working again and the deadline is unchanged" spares the deadline: a clause before "and"
# with a verb of its own says something else ("Appointment booking and patient messaging were not
# affected" spares both).
_CLAUSE_JOIN = re.compile(r"\s*(?:;|,?\s+(?:and|but|while|whereas)\b)\s*", re.IGNORECASE)
_AUXILIARY = re.compile(r"\b(?:is|are|was|were|has|have|had|will|would|can|could|should|may|might|must)\b",
                        re.IGNORECASE)


def _own_clause(subject: str) -> str:
    """The end of ``subject`` after the last clause before it with a verb of its own."""
    start = 0
    for m in _CLAUSE_JOIN.finditer(subject):
        if _AUXILIARY.search(subject, start, m.start()):
            start = m.end()
    return subject[start:]


def _statements(context: Mapping | None) -> list[str]:
    """The incident's public statements: each text fact as "Label: value", each key message and each
    approved action."""
    if not isinstance(context, Mapping):
        return []
    incident = context.get("incident") if isinstance(context.get("incident"), Mapping) else {}
    labels = {key: label for key, label, _unit in fact_meta(context)}
    statements = [f"{labels.get(k, k.replace('_', ' '))}: {v}" for k, v in incident.items()
                  if isinstance(v, str) and k != "incident_id"]
    return statements + [t for key in ("key_messages", "approved_actions") for t in context.get(key) or ()
                         if isinstance(t, str)]


def _spared_statements(context: Mapping | None) -> list[str]:
    """The incident's statements of no impact: facts, key messages and approved actions that say something
    is not affected, works normally or as usual. One that says it works again ("Search is working normally
    again", "a fix was applied at 13:40 and uploads are working normally") tells of a recovery, not of
    something spared."""
    return [t for t in _statements(context)
            if _SPARED_STATEMENT.search(t) and (_UNAFFECTED.search(t) or not _RECOVERY.search(t))]


_RECOVERY = re.compile(r"\b(?:again|fix|fixed|restored|recovered|resolved|rolled\s+back)\b", re.IGNORECASE)


def substance(text: str, generic: frozenset[str] = _GENERIC) -> set[str]:
    """The stems of a text's words of substance, apart from ``generic`` ones."""
    return {stem(w) for w in re.findall(r"[^\W\d_]+", text.lower())
            if len(w) > 2 and w not in FUNCTION_WORDS and w not in generic}


_LIST_LINK = re.compile(r"(?:,|\band)\s+$", re.IGNORECASE)
# (A condition is a clause of its own too: "If you would prefer to speak to someone, our telephone service
# is not affected".)
_HAS_VERB = re.compile(r"\b(?:is|are|was|were|be|been|has|have|had|will|would|should|must|shall|can|could|may|might|"
                       r"do|does|did|if|unless|\w+ed|\w+ing)\b|[.;:!?]", re.IGNORECASE)


def unaffected_findings(text: str, context: Mapping | None, key: str | None = None) -> list[Finding]:
    """Claims that something was not affected whose subject the incident does not say was spared."""
    findings = []
    for m in _UNAFFECTED.finditer(text):
        if _SAID_FINE.match(m.group()) and not substance(_own_subject(text, m.start())):
            continue  # "Everything is OK": the whole service said to work, which the state check reads
        start = _subject_start(text, m.start())
        if re.search(r"\b(?:no|not|never)\b[^.;]*$", text[start : m.start()], re.IGNORECASE) or spared_by_incident(
                text[start : m.start()], context, key):
            continue
        findings.append(Finding("scope_claim", m.group(), f"“{m.group()}” says something was spared, and the "
                                "incident does not say so.", m.start()))
    return findings + _works_as_usual_findings(text, context, key)


def _own_subject(text: str, at: int) -> str:
    """The words of the clause that ends at ``at``."""
    return text[_openings(_CLAUSE_OPEN, text[:at])[-1] : at]


def _subject_start(text: str, at: int) -> int:
    """Where the subject of a statement that something was spared, ending at ``at``, begins."""
    openings = _openings(_CLAUSE_OPEN, text[:at])
    start = openings[-1]
    # "push over SSH, which is not affected": the clause before names it; "Data Halls 1, 2 and 4 are not
    # affected": the numbers of a list name nothing on their own
    if len(openings) > 1 and not substance(text[start:at]):
        while len(openings) > 1 and not substance(text[start:at]):
            openings.pop()
            start = openings[-1]
        return start
    # "Webhook notifications and metric-based alerts were unaffected": a clause opened by "and" or a
    # comma whose words before it have no verb of their own lists the subject's first things.
    while len(openings) > 1 and start == openings[-1] and _LIST_LINK.search(text, openings[-2], start) and \
            not _HAS_VERB.search(text[openings[-2] : start]):
        openings.pop()
        start = openings[-1]
    return start


# "In-app messages and emails are arriving on time": a statement that something the incident never
# names works as usual says it was spared, which only the incident may say. Said of what the incident
# names ("writes in the EU are working normally" on a resolved database incident), it is a recovery or
# a part the incident spared, which the state and spared checks read.
_AS_USUAL = re.compile(
    r"\b(?:(?:is|are|was|were|has\s+been|have\s+been|remains?|remained)\s+(?:still\s+)?(?:[^\W\d_]+ing|"
    r"available|being\s+(?:delivered|processed|sent))"
    r"|(?:continues?|continued)\s+to\s+[^\W\d_]+)\s+"
    r"(?:on\s+time|normally|as\s+(?:usual|expected|normal))\b"
    # "conversion rates stayed within the normal range"
    r"|\b(?:stayed|stays?|remained|remains?)\s+(?:within|in|at)\s+(?:the\s+|their\s+)?(?:normal|usual|expected)\s+"
    r"(?:range|levels?|limits?)\b"
    # "trips booked earlier in the day went ahead as planned"
    r"|\b(?:went|go|goes|going|gone)\s+ahead\s+(?:as\s+(?:planned|scheduled|normal|usual)|on\s+time)\b",
    re.IGNORECASE,
)


def _works_as_usual_findings(text: str, context: Mapping | None, key: str | None) -> list[Finding]:
    findings, named = [], None
    for m in _AS_USUAL.finditer(text):
        subject = text[_subject_start(text, m.start()) : m.start()]
        words = substance(subject)
        if not words or _OF_AFFECTED.search(subject) or _NEGATION.search(subject) or _AWAITED.search(subject):
            continue  # "… once we're confident calls are connecting normally" awaits it: no statement
        named = _incident_words(context, key=key) if named is None else named
        # The clause's subject, or all the statement says before ("Browsing storefronts and adding items to
        # the cart are working normally" lists what a fact calls "storefront browsing and carts").
        opening = _last_before(_openings(_STATEMENT_OPEN, text), m.start())
        # Each thing it lists must be the incident's ("On-demand videos and downloads are playing normally"
        # on an incident that names no downloads).
        listed = [items for item in _ITEMS.split(subject) if (items := substance(item))]
        if all(items & named for items in listed) and any(
                2 * len(said & named) >= len(said) for said in (words, substance(text[opening : m.start()]))):
            continue
        findings.append(Finding("scope_claim", m.group(), f"“{subject.strip()} {m.group()}” says something was "
                                "spared, and the incident does not say so.", m.start()))
    return findings


# "Live times are still available on our website", "slots can still be booked in our app": a way around the
# incident names a place that still works, which only the incident may say (a statement of no impact or an
# approved action that names it).
_STILL_THERE = re.compile(
    r"\b(?:(?:is|are)\s+still\s+(?:available|working|possible|open)|can\s+still\s+be\s+[^\W\d_]+)\s+"
    r"(?:in|on|via|through|using|from)\s+(?:the\s+|our\s+|your\s+)?((?:[\w-]+\s+){0,2}?[\w-]+)\b(?=\s*(?:[,;.!?]|$|\s))",
    re.IGNORECASE,
)


def still_there_findings(text: str, context: Mapping | None, key: str | None = None) -> list[Finding]:
    """Ways around the incident through a place none of its statements of no impact or approved actions name."""
    findings, openings = [], None
    for m in _STILL_THERE.finditer(text):
        place = _place_words(m.group(1))
        openings = _openings(_CLAUSE_OPEN, text) if openings is None else openings
        if not place or _NEGATION.search(text, _last_before(openings, m.start()), m.start()):
            continue
        said = _still_there_words(context, key=key)
        if place <= said:
            continue
        findings.append(Finding("unsupported_statement", m.group(), f"“{m.group()}” tells customers a way around "
                                "the incident that none of its statements of what works or approved actions gives.",
                                m.start(), reading="workaround"))
    return findings


@per_incident
def _still_there_words(context: Mapping | None) -> frozenset[str]:
    """The words of the incident's statements of no impact and of its approved actions."""
    actions = [t for t in (context or {}).get("approved_actions") or () if isinstance(t, str)] \
        if isinstance(context, Mapping) else []
    return _place_words(" ".join([*_spared_statements(context), *actions]))


def _place_words(text: str) -> frozenset[str]:
    """The stems of a text's words of substance, "app" and "website" among them."""
    return frozenset(substance(text, generic=frozenset()))


_AWAITED = re.compile(r"\b(?:once|until|when|if|after|before|as\s+soon\s+as|to\s+(?:make\s+sure|ensure))\b",
                      re.IGNORECASE)


@per_incident
def _incident_words(context: Mapping | None) -> frozenset[str]:
    """The words the incident's facts, labels and statements use."""
    return frozenset(substance(" ".join([*_statements(context), *(label for _k, label, _u in fact_meta(context))])))


# "Some confirmation emails may also have been delayed" on an incident that says "Confirmation emails were
# not affected": an impact on what the incident says it spared contradicts the incident. The clause's
# subject must be named whole by one of the incident's statements of no impact.
_HIT = re.compile(led_by("abdfilmsu", r"\b(?:delayed|affected|impacted|disrupted|interrupted|degraded|fail|fails|"
                                      r"failed|failing|unavailable|down|slow|slower|late|missing|lost|broken|stuck|"
                                      r"stopped)\b"), re.IGNORECASE)

_STATEMENT_OPEN = re.compile(r"[.;:!?]\s|^")
_NEGATION = re.compile(r"\b(?:no|not|never|nothing|none|neither|nor)\b|n[’']t\b", re.IGNORECASE)
_LISTED = re.compile(r"[,;/]|\b(?:and|or|nor|including|such\s+as|as\s+well\s+as)\b", re.IGNORECASE)
_OWN_VERB = re.compile(r"\b(?:is|are|was|were|has|have|had|will|can|could)\b|['’](?:s|re|ve|ll)\b", re.IGNORECASE)


# "Memberships remain active for everyone affected by the duplicate charge": "affected" after whom it names
# picks out the people the incident hit, and says nothing is hit.
_WHO_HIT = re.compile(rf"\b(?:everyone|everybody|anyone|anybody|those|{_WHO_NOUNS})\s+$", re.IGNORECASE)
_PARTICIPLES = frozenset(("affected", "impacted"))


def spared_impact_findings(text: str, context: Mapping | None, key: str | None = None) -> list[Finding]:
    """Impact claims about something the incident says was not affected (``key``: the context's
    incident_key, where the caller has it)."""
    findings, spared = [], None
    # Where clauses and statements open, read once: the last opening before an impact word starts its clause.
    clauses, statements = _openings(_CLAUSE_OPEN, text), _openings(_STATEMENT_OPEN, text)
    for m in _HIT.finditer(text):
        subject = text[_last_before(clauses, m.start()) : m.start()]
        if _NEGATION.search(subject) or _WHO_HIT.search(text, 0, m.start()) and m.group().lower() in _PARTICIPLES:
            continue
        spared = _spared(context, key=key) if spared is None else spared  # read at the first impact word
        # "Backups of mailboxes, files and databases are failing" says it of each thing it lists.
        listed = _LISTED.split(text[_last_before(statements, m.start()) : m.start()])
        # A clause with its own verb lists nothing, nor anything before it: "images were saved as normal, and
        # we've reprocessed the affected documents"; "your projects and media weren't affected, and any credits
        # used by failed exports …".
        items = [subject]
        for i, item in enumerate(reversed(listed)):
            if _NEGATION.search(item) or _OWN_VERB.search(item):
                if i:  # the last holds the impact's own verb: "… files and databases are failing"
                    break
                continue
            items.append(item)
        if any(_names_spared_whole(item, spared) for item in items):
            findings.append(Finding("scope_claim", m.group(), f"“{m.group()}” says something the incident says was "
                                    "not affected was affected.", m.start()))
    return findings


# "… returned errors in our EU and US regions" where the incident's region is the EU and its facts say "the
# US region was not affected": a region the incident names only in its statements of no impact is one it
# spared, and a text may name it only to say so too ("US customers were not affected").
# ("Calls and texts are unaffected, as are customers in the UK": "as are" goes on the clause before.)
_REGION_CLAUSE_OPEN = re.compile(r"[.;:!?]\s|,\s(?!as\s)|\b(?:but|while|whereas|although)\s|^", re.IGNORECASE)
_REGION_CLAUSE_END = re.compile(r"[.;:!?]|,(?!\s+as\s)|\b(?:but|while|whereas|although)\b|$", re.IGNORECASE)


def spared_region_findings(text: str, support: Support) -> list[Finding]:
    """A region the incident says it spared, named in a clause that does not say so."""
    spared = _spared_regions(support.context, support.rules.regions, support.rules.region_words,
                             key=support.context_key)
    findings = []
    for token, words in spared:
        for m in region_matches(token, text, words):
            clause = text[_last_before(_openings(_REGION_CLAUSE_OPEN, text), m.start()):
                          _REGION_CLAUSE_END.search(text, m.end()).start()]
            if not _NEGATION.search(clause) and not _SPARED_STATEMENT.search(clause):
                findings.append(Finding("scope_claim", m.group(), f"“{m.group()}” is a region the incident says "
                                        "was not affected.", m.start()))
    return findings


# "… not displaying in customer apps hosted in our EU region" on an incident in NA and EU: a text that names
# some of the incident's regions (by code, token or place: "the US and Canada" names US and CA) where it says
# what fails, and never the others, narrows the incident to them. Where one of the incident's own statements
# names a region apart ("EU region only"), the text may too; a statement that names it with the others ("our
# US and EU gateways") does not set it apart.
def narrowed_region_findings(text: str, support: Support) -> list[Finding]:
    """Some of the incident's regions named where the text says what fails, the others nowhere."""
    listed = tuple(r.lower() for r in _listed_regions(support.context, key=support.context_key))
    if len(listed) < 2:
        return []
    try:
        named = _regions_named(text, listed, support.rules.regions, support.rules.region_words)
        if not named or len(named) == len(listed):
            return []
        apart = _regions_apart(support.context, listed, support.rules.regions, support.rules.region_words,
                               key=support.context_key)
    except UnsafePattern:
        return []
    findings = []
    for code, matches in named.items():
        if code in apart:
            continue
        for m in matches:
            opened = _last_before(_openings(_STATEMENT_OPEN, text), m.start())
            if _says_what_fails(text, opened, _REGION_CLAUSE_END.search(text, m.end()).start()):
                findings.append(Finding("scope_claim", m.group(), f"“{m.group()}” is one of the incident's regions, "
                                        "named as if it were the only one.", m.start()))
                break
    return findings


def _regions_named(text: str, listed: tuple, regions: tuple, region_words: tuple) -> dict[str, list]:
    """The matches in ``text`` of each of the incident's regions it names, by code, words or place."""
    words_of = dict(region_words)
    places = [(m, PLACES[m.group()]) for m in _PLACE.finditer(text)]
    places += [(m, PLACES[_COUNTRY_OF[m.group()]]) for m in _DEMONYM.finditer(text)]
    named: dict[str, list] = {}
    for code in listed:
        found = list(re.finditer(rf"\b{re.escape(code.upper())}\b", text))
        if len(code) > 3:  # a region the incident lists by name ("Devon", "Cornwall"), written any case
            found += [m for m in re.finditer(rf"\b{re.escape(code)}\b", text, re.IGNORECASE)
                      if m.group() != code.upper()]
        if code in regions:
            found += region_matches(code, text, tuple(words_of.get(code, ())))
        found += [m for m, codes in places if code in codes]
        if found:
            named[code] = found
    return named


@per_incident
def _regions_apart(context: Mapping | None, listed: tuple, regions: tuple, region_words: tuple) -> frozenset:
    """The incident's regions one of its own statements names without the others."""
    apart = set()
    for statement in _statements(context):
        named = _regions_named(statement, listed, regions, region_words)
        if len(named) == 1:
            apart.update(named)
    return frozenset(apart)


@per_incident
def _listed_regions(context: Mapping | None) -> tuple[str, ...]:
    """The incident's own regions, as its context lists them ("NA, EU": "NA", "EU")."""
    own = str(context.get("region") or "") if isinstance(context, Mapping) else ""
    return tuple(r.strip() for r in re.split(r"[,;/]|\band\b", own) if r.strip())


@per_incident
def _statements_of(context: Mapping | None) -> tuple[str, ...]:
    """The incident's statements (:func:`_statements`), read once per incident."""
    return tuple(_statements(context))


@per_incident
def _spared_regions(context: Mapping | None, regions: tuple, region_words: tuple) -> tuple:
    """(token, its names in words) of each region the incident names only in its statements of no impact,
    and not among its own regions."""
    own = ", ".join(_listed_regions(context))
    statements, spared, found = _statements(context), set(_spared_statements(context)), []
    words_of = dict(region_words)
    for token in regions:
        if not isinstance(token, str):
            continue  # the region check reports it
        words = tuple(words_of.get(token.lower(), ()))
        try:
            if region_in_allowed(token.lower(), own, words):
                continue
            naming = [s for s in statements if region_in_allowed(token.lower(), s, words)]
        except UnsafePattern:
            continue  # the region check reports it
        if naming and all(s in spared for s in naming):
            found.append((token, words))
    return tuple(found)


def _openings(opening: re.Pattern, text: str) -> list[int]:
    """Where each match of ``opening`` (a clause or statement opening, ``^`` among them) ends, in order."""
    return [m.end() for m in opening.finditer(text)]


def _last_before(openings: list[int], at: int) -> int:
    """The last opening at or before ``at``: the start of the clause or statement ``at`` stands in."""
    return openings[bisect.bisect_right(openings, at) - 1]


def _names_spared_whole(subject: str, spared: tuple[_Spared, ...]) -> bool:
    """Whether ``subject`` names a thing the incident says was spared, whole, and nothing else: one
    thing a statement names has all its words in the subject, and the subject no word the statement
    lacks ("files that were already uploaded were not affected" says nothing of "file uploads")."""
    words = _named(subject)
    return bool(words) and any(words <= s.named and any(item and item <= words for item in s.items)
                               for s in spared)


_ITEMS = re.compile(r"[,;/]|\b(?:and|or|nor)\b", re.IGNORECASE)
# Words that pick a part out of a whole ("files already uploaded" are not "file uploads").
_PICKS = frozenset("already existing new newly previous previously earlier later older newer other pending "
                   "scheduled before after".split())


def _named(text: str) -> set[str]:
    return (substance(text) - _MADE) | {w for w in re.findall(r"[a-z]+", text.lower()) if w in _PICKS}


_MADE = frozenset({"made", "done"})  # "lookups made by police partners" names the lookups by police partners


# "Our engineers did not open any payslip files", "our support team can see which of your items failed":
# what the company's people saw or may see of customers' data is a statement about their data's safety,
# and the incident's to make.
_STAFF_ACCESS = re.compile(
    r"\b(?:we|our\s+(?:[\w-]+\s+){0,2}?(?:team|teams|engineers|staff|employees|agents|people|specialists))"
    r"(?:['’](?:ve|re|ll|d))?\s+(?:[\w’']+\s+){0,3}?(?:access(?:ed)?|view(?:ed)?|open(?:ed)?|read|see|saw|seen|"
    r"went\s+through)\s+(?:[\w’'-]+\s+){0,4}?"
    r"(?:data|files?|documents?|messages?|items?|records?|contents?|conversations?|recordings?|footage|"
    r"vaults?|passwords?|emails?|payslips?|photos?|details|information)\b",
    re.IGNORECASE,
)
_ACCESS_SUPPORT = re.compile(r"\b(?:staff|engineers?|team|employees?|agents?|we)\b[^.;]{0,40}?\b"
                             r"(?:access(?:ed)?|view(?:ed)?|open(?:ed)?|saw|seen|see|read)\b", re.IGNORECASE)


def staff_access_findings(text: str, evidence: str) -> list[Finding]:
    """Statements of what the company's people saw of customers' data that the incident does not make."""
    return _data_statements(text, evidence, _STAFF_ACCESS, _ACCESS_SUPPORT,
                            "says what the company's people saw of customers' data")


def _data_statements(text: str, evidence: str, statement, support, says: str) -> list[Finding]:
    """``data_safety`` findings for each ``statement`` in the text, unless the incident's evidence
    speaks of the same thing (``support``)."""
    made = list(statement.finditer(text))  # the text first: it is short, the evidence long, and most say nothing
    if not made or support.search(evidence):
        return []
    return [Finding("data_safety", m.group(), f"“{m.group()}” {says}, and the incident does not say so.", m.start())
            for m in made]


# "No accounts were accessed by anyone else", "none of your files were shared": that nothing was
# exposed is a statement about customers' data whatever the thing is called, and the incident's to make.
_NOTHING_EXPOSED = re.compile(
    r"\b(?:no|none\s+of\s+(?:the|your|their|our))\s+(?:[\w’'-]+\s+){0,3}?(?:was|were|has\s+been|have\s+been)\s+"
    r"(?:\w+\s+)?(?:accessed|exposed|leaked|compromised|viewed|stolen|read|shared|downloaded|seen|opened|"
    r"visible)\b",
    re.IGNORECASE,
)
_EXPOSURE_SUPPORT = re.compile(r"\b(?:access(?:ed)?|exposed?|exposure|leak(?:ed)?|compromised?|viewed|stolen|shared|"
                               r"visible|breach)\b", re.IGNORECASE)


def exposure_findings(text: str, evidence: str) -> list[Finding]:
    """Assurances that nothing was exposed, where the incident says nothing about exposure."""
    return _data_statements(text, evidence, _NOTHING_EXPOSED, _EXPOSURE_SUPPORT,
                            "assures customers that nothing of theirs was exposed")


# ---------------------------------------------------------------- denials

# "Riders did not see longer pickup times" where the incident says "Riders saw longer pickup times": a
# denial of what the incident affirms contradicts it, whatever its words. What follows the negation (two
# words of substance or more, to the end of its clause) must all stand in one clause of the incident
# that negates, conditions and doubts nothing. A denial of impact ("were not affected") is the spared
# checks' to read, and "no need to …" is advice.
_DENIAL = re.compile(led_by("dhnw", r"\b(?:did\s+not|didn[’']t|was\s+not|were\s+not|wasn[’']t|weren[’']t|"
                                    r"ha(?:s|ve)\s+not\s+been|no|none|nothing|never)\b"), re.IGNORECASE)
_NO_DENIAL = re.compile(r"\s*(?:been\s+)?(?:affected|impacted|need|action)\b", re.IGNORECASE)
_DOUBT = re.compile(r"\b(?:not|never|no|none|nothing|cannot|if|whether|unless)\b|n[’']t\b", re.IGNORECASE)
# A clause ends at a spaced dash too: "It wasn't – your booking still stands" denies no standing booking.
_CLAUSES = re.compile(r"[.;:!?,](?:\s|$)|\s[-–—]\s|\s(?:and|but|while|whereas|although|so|because)\s|$", re.IGNORECASE)
_DENIAL_WORDS = 2
# Words in quotation marks: what a page or a message said ("showed 'no open recalls'"). A quote opens after
# no letter and closes before none, so "weren't" holds none.
_QUOTED = re.compile(r"(?<![\w])['‘\"“][^'’\"”\n]{1,80}?['’\"”](?![\w])")
_CONDITION_BEFORE = re.compile(r"\b(?:if|unless|whether|in\s+case)\b", re.IGNORECASE)


def denial_findings(text: str, context: Mapping | None, key: str | None = None) -> list[Finding]:
    """Denials of what one of the incident's statements affirms (``key``: the context's incident_key)."""
    findings, affirmed = [], None
    quoted = None
    for m in _DENIAL.finditer(text):
        quoted = [q.span() for q in _QUOTED.finditer(text)] if quoted is None else quoted
        if any(a < m.start() < b for a, b in quoted):
            continue  # "the check showed 'no open recalls'": what a page said, not a denial
        end = _CLAUSES.search(text, m.end()).start()
        if _ASKED.match(text, end):
            continue  # "Still no confirmation email?": a question to the reader asserts nothing
        if _NO_DENIAL.match(text, m.end()) or _CONDITION_BEFORE.search(
                text, max((e.end() for e in SENTENCE_END.finditer(text, 0, m.start())), default=0), m.start()):
            continue  # "If an order didn't go through, try it again" denies nothing: a condition
        denied = [frozenset(forms(w)) for w in re.findall(r"[^\W\d_]+", text[m.end() : end].lower())
                  if len(w) > 2 and w not in FUNCTION_WORDS and w not in _GENERIC and w not in _DENIAL_NEUTRAL]
        if len(denied) < _DENIAL_WORDS:
            continue
        affirmed = _affirmed(context, key=key) if affirmed is None else affirmed
        if any(all(forms & words for forms in denied) for words in _incident_denials(context, key=key)):
            continue  # the incident denies it too: "No appointments were cancelled" as a key message says
        past = _PAST_DENIAL.match(m.group()) is not None
        # "… were not updating in the portal" where the incident says "updates delayed in the portal": a
        # denial of a thing's working agrees with a statement that it went wrong
        harmless = _HIT.search(text, m.end(), end) is None
        said = next((clause for clause, words in affirmed if all(forms & words for forms in denied)
                     and not (past and _RECOVERED.search(clause)) and not (harmless and _HIT.search(clause))), None)
        if said is not None:
            findings.append(Finding("unsupported_statement", text[m.start() : end].rstrip(" .;:!?,"),
                                    f"“{text[m.start() : end].rstrip(' .;:!?,')}” denies what the incident says: "
                                    f"“{said}”.", m.start(), reading="denial"))
    return findings


_ASKED = re.compile(r"\s*\?")


# What the incident says is working again ("estimated restoration times are showing again", "new bookings
# are now appearing normally") was not, before: a text saying it did not during the incident ("between
# 17:10 and 19:35 ET the page wasn't showing estimated restoration times") tells the same story.
_PAST_DENIAL = re.compile(r"did|was|were", re.IGNORECASE)
_RECOVERED = re.compile(r"\b(?:again|now|back|restored|resumed|recovered|since|held|queued|backlog|affected)\b",
                        re.IGNORECASE)  # "all affected instructions were transmitted by 21:30" came after
# Words that speak of the incident itself or of impact in general, which its statements need not repeat.
_DENIAL_NEUTRAL = frozenset("affected impacted incident issue problem outage".split())


# A clause that says something was hidden or missing ("a database change that hid available slots") does
# not affirm that it was there.
_PRIVATIVE = re.compile(r"\b(?:hid|hidden|hides?|hiding|missing|lost|removed|deleted|blocked|prevented|without)\b"
                        # ... nor one that says it failed or stopped: "designs failed to open", "syncing stopped"
                        r"|\b(?:fail(?:s|ed|ing)?|unable)\s+to\b|\bstopp(?:ed|ing)\b", re.IGNORECASE)


@per_incident
def _affirmed(context: Mapping | None) -> tuple[tuple[str, frozenset[str]], ...]:
    """Each clause of the incident's public statements (:func:`_statements`; a fact's label is a clause of
    its own) that negates, conditions and doubts nothing, with the forms of its words."""
    clauses = []
    for statement in _statements(context):
        # "Affected: Mobile data for customers roaming in France" says what went wrong: its label goes with
        # each of its clauses, so that "customers have had no mobile data" agrees with it.
        label, colon, _value = statement.partition(": ")
        hit = f"{label}: " if colon and _HIT.search(label) and not _NEGATION.search(label) else ""
        for clause in _CLAUSES.split(statement):
            if clause.strip() and not _DOUBT.search(clause) and not _PRIVATIVE.search(clause) and \
                    not _instruction(clause):
                words = _word_forms(clause)
                told = clause.strip()
                clauses.append((told if not hit or told.startswith(label) else hit + told, words))
    return tuple(clauses)


@per_incident
def _incident_denials(context: Mapping | None) -> tuple[frozenset[str], ...]:
    """The forms of the words of each clause of the incident's statements that denies something ("No
    appointments were cancelled")."""
    return tuple(_word_forms(clause) for statement in _statements(context) for clause in _CLAUSES.split(statement)
                 if _DENIAL.search(clause))


def _word_forms(text: str) -> frozenset[str]:
    """The dictionary forms of each word of ``text``."""
    return frozenset(f for w in re.findall(r"[^\W\d_]+", text.lower()) for f in forms(w))


def _instruction(clause: str) -> bool:
    """Whether the clause tells customers what to do ("Show your return pass at the entrance"): it affirms
    nothing a text could deny."""
    first = re.match(r"\s*([A-Za-z]+)", clause)
    return first is not None and first.group(1).lower() in verbs_of(first.group(1).lower()) and \
        first.group(1).lower() not in FUNCTION_WORDS


# ---------------------------------------------------------------- better than before

# "Builds are now running faster than they were before the incident", "call quality is better than
# ever": a service said to be better than before the incident claims an improvement nobody measured
# (recovery is the most an incident's facts say). The incident may say it: a statement of its that makes
# the same comparison ("faster than before") supports it.
_IMPROVEMENT = re.compile(
    led_by(
        "bflmqs",
        r"\b(better|faster|quicker|smoother|stronger|more\s+(?:reliable|stable|resilient|robust|responsive))\s+"
        r"than\s+(?:[\w’']+\s+){0,3}?(?:before|ever|usual|normal|previously|prior|it\s+was|they\s+were|"
        r"it\s+used\s+to)\b"
        # ... and what is lower than before the incident ("error rates are now lower than they were before the
        # incident"): below what was normal then, not below the incident's peak ("lower than usual" is no claim).
        r"|\b(lower|fewer|less|shorter)\s+than\s+(?:[\w’']+\s+){0,3}?before\s+(?:the|this)\s+"
        r"(?:incident|outage|issue|problem|disruption)\b",
    ),
    re.IGNORECASE,
)


def improvement_findings(text: str, context: Mapping | None, key: str | None = None) -> list[Finding]:
    """Improvements over the time before the incident that no statement of the incident makes."""
    findings = []
    for m in _IMPROVEMENT.finditer(text):
        if is_negated(text, m.start()):
            continue  # "not faster than before"
        said = rf"\b{re.escape((m.group(1) or m.group(2)).split()[-1].lower())}\s+than\b"
        if any(re.search(said, statement.lower()) for statement in _statements(context)):
            continue
        findings.append(Finding("unsupported_statement", m.group(), f"“{m.group()}” says the service is better "
                                "than before the incident; nothing in the incident says so.", m.start(),
                                reading="improvement"))
    return findings


# ---------------------------------------------------------------- blame

# A cause, then (within a few words) who caused it.
_CAUSE = re.compile(
    led_by(
        "abcdforst",
        r"\b(?:caused\s+by|due\s+to|because\s+of|(?:the\s+)?result\s+of|blamed?\s+on|triggered\s+by|"
        r"originat(?:ed|ing)\s+(?:at|with|from)|the\s+fault\s+of|fault\s+lies\s+with|at\s+fault\s+(?:is|was)|"
        r"(?:come|comes|came|coming|stem|stems|stemmed)\s+from)\s+",
    ),
    re.IGNORECASE,
)
_POSSESSIVE = re.compile(
    r"\b([A-Z][A-Za-z0-9&.-]*[A-Za-z0-9])['’]s\s+(?:outage|failure|fault|error|issue|incident|problem|mistake|"
    r"systems?|network|platform|infrastructure|side|end)\b"
)
_PARTY = re.compile(
    r"\b(?:third[-\s]party|upstream|external|cloud|hosting|payment|network|dns|cdn|email|sms|telecom)?\s*"
    r"(?:provider|vendor|partner|supplier|carrier|host|processor|acquirer|bank|isp|data\s*cent(?:er|re))s?\b",
    re.IGNORECASE,
)
_NAME = re.compile(r"\b[A-Z][A-Za-z0-9&-]*(?:\.[A-Za-z]+)?(?:\s+[A-Z][A-Za-z0-9&-]*)*")
# Capitalised words that name no one: sentence openers, our own side, days and months.
_NOT_A_PARTY = {
    "we", "our", "the", "a", "an", "this", "that", "these", "those", "it", "its", "i", "you", "your",
    "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "january", "february",
    "march", "april", "may", "june", "july", "august", "september", "october", "november", "december",
    "utc", "gmt", "api", "dns", "cdn", "sla", "eta", "eu", "us", "uk", "ua",
}
# A time's zone names no one either ("between 05:20 and 06:45 ET"): the zones a time is written with and
# the hour's half.
_ZONE_WORD = re.compile(rf"(?:{TIME_ZONES}|AM|PM)")
_CAUSE_REACH = 60  # characters after the cause phrase in which the party is named


def _party_supported(party: str, evidence: str) -> bool:
    """Whether the evidence names the party, in the singular or the plural ("one of our upstream
    carriers" where the cause says "an upstream carrier")."""
    base = party[:-1] if party.lower().endswith("s") else party
    return re.search(rf"(?<![\w-]){re.escape(base)}(?:e?s)?(?![\w-])", evidence, re.IGNORECASE) is not None


# Where the incident says why it happened: a fact about the cause ("cause", "root cause", "reason",
# "upstream"), or any of its texts that gives a cause in words ("an outage at Northwind Cloud").
_CAUSE_KEY = re.compile(r"cause|reason|root|origin|source|upstream|trigger|why|provider|vendor|partner",
                        re.IGNORECASE)
_CAUSE_WORDS = re.compile(r"\b(?:caused|cause|due\s+to|because|reason|triggered|outage\s+at|failure\s+at|"
                          r"incident\s+at|problem\s+at|issue\s+at|on\s+\w+(?:\s+\w+)?['’]s\s+side)\b", re.IGNORECASE)


@per_incident
def cause_evidence(context: Mapping | None, evidence: str) -> str:
    """What may name a party as the cause: the incident's cause facts and its texts that give a cause.
    A party the incident names only as what is affected ("labels for Royal Mail services") is not
    named as the cause. Without a structured context, all of ``evidence``."""
    incident = context.get("incident") if isinstance(context, Mapping) else None
    if not isinstance(incident, Mapping):
        return evidence
    labels = {key: label for key, label, _unit in fact_meta(context)}
    texts = [str(value) for key, value in incident.items()
             if isinstance(value, str) and (_CAUSE_KEY.search(key) or _CAUSE_KEY.search(labels.get(key, ""))
                                            or _CAUSE_WORDS.search(value))]
    for name in ("key_messages", "approved_actions"):
        texts += [t for t in context.get(name) or () if isinstance(t, str) and _CAUSE_WORDS.search(t)]
    return "\n".join(texts)


_POINTS_BACK = re.compile(r"\s*(?:this|that|it|the\s+(?:incident|issue|outage|problem|disruption))\s*[,;)]",
                          re.IGNORECASE)


def blame_findings(text: str, evidence: str) -> list[Finding]:
    """Causes laid on a named third party (or on "our provider") that the incident's facts do not
    name: blaming someone in public is a statement the company answers for."""
    findings = []
    for m in _CAUSE.finditer(text):
        reach = m.end() + _CAUSE_REACH
        reach += re.match(r"[\w-]*", text[reach:]).end()  # a name cut at the reach is read whole
        window = SENTENCE_END.split(text[m.end() : reach], maxsplit=1)[0]
        if _POINTS_BACK.match(window):
            continue  # "because of this, you can rebook from the Bookings tab": the incident is the cause
        party = None
        for name in _NAME.finditer(window):
            words = [w for w in name.group().split() if w.lower() not in _NOT_A_PARTY and not _ZONE_WORD.fullmatch(w)]
            if re.search(r"\bour\s+(?:\w+\s+)?$", window[: name.start()], re.IGNORECASE):
                break  # "due to a fault in our Auth Service": our own part, no one else's
            if words:
                party = " ".join(words)
                break
        if party is None and (generic := _PARTY.search(window)):
            party = generic.group().strip()
        if party and not _party_supported(party, evidence):
            found = text[m.start() : m.end()] + window[: window.find(party) + len(party)]
            findings.append(Finding("liability", found.strip(),
                                    f"“{found.strip()}” blames {party} for the incident, and the incident's "
                                    "facts do not name them as the cause.", m.start()))
    for m in _POSSESSIVE.finditer(text):
        party = m.group(1)
        if party.lower() not in _NOT_A_PARTY and not _party_supported(party, evidence):
            findings.append(Finding("liability", m.group(), f"“{m.group()}” blames {party}, and the incident's "
                                    "facts do not name them.", m.start()))
    return findings + _person_blamed(text, evidence)


# One of the company's own people ("an engineer", "one of our employees", "human error") in a sentence
# that speaks of a fault ("mistakenly deployed", "without the usual review", "an incorrect change"):
# a person blamed in public, which only the incident's cause may say.
_PERSON = re.compile(
    led_by(
        "ahmos",
        r"\b(?:one\s+of\s+our\s+(?:\w+\s+)?(?:engineers|employees|developers|staff|team\s+members|operators|"
        r"administrators|admins|technicians|contractors|agents)|an?\s+(?:\w+\s+)?(?:engineer|employee|developer|"
        r"team\s+member|staff\s+member|operator|technician|contractor)|a\s+member\s+of\s+(?:our|the)\s+(?:\w+\s+)?"
        r"(?:team|staff)|human\s+error|(?:manual|operator)\s+error|someone\s+(?:on|in)\s+our\s+(?:\w+\s+)?team)\b",
    ),
    re.IGNORECASE,
)
_FAULT = re.compile(
    r"\b(?:mistakes?|mistaken(?:ly)?|accident(?:al(?:ly)?)?|inadvertent(?:ly)?|incorrect(?:ly)?|wrong(?:ly)?|faulty|"
    r"skipp(?:ed|ing)|error|careless(?:ly)?|negligen\w*|misconfigur\w*|caused|responsible|fault|"
    r"without\s+(?:following\s+|going\s+through\s+)?(?:the\s+|a\s+|any\s+|our\s+)?(?:usual\s+|proper\s+|required\s+|"
    r"normal\s+|standard\s+)?(?:review|approval|checks?|testing|tests))\b",
    re.IGNORECASE,
)


def _person_blamed(text: str, evidence: str) -> list[Finding]:
    findings = []
    for m in _PERSON.finditer(text):
        sentence = sentence_around(text, m.start(), m.end())
        # The incident names the person ("an engineer") or the same error ("human error"), not any error.
        person = m.group() if m.group().lower().endswith("error") else m.group().split()[-1]
        if _FAULT.search(_PERSON.sub(" ", sentence)) and not re.search(
                rf"\b{re.escape(person.rstrip('s'))}", evidence, re.IGNORECASE):
            findings.append(Finding("liability", m.group(), f"“{m.group()}” lays the incident on one of our people, "
                                    "and the incident's facts do not say so.", m.start()))
    return findings


# ---------------------------------------------------------------- places and days

# RE2: an alternation of a few hundred names stays one pass over the text (``re`` tries each name at
# every position).
_PLACE = re2.compile(r"\b(?:" + "|".join(sorted((re2.escape(p) for p in PLACES), key=len, reverse=True)) + r")\b")
# "UK and Australian accounts" names the UK and Australia.
_COUNTRY_OF = {demonym: country for country, demonym in DEMONYMS.items()}
_DEMONYM = re.compile(r"\b(?:" + "|".join(_COUNTRY_OF) + r")\b")
_WEEKDAY = re.compile(r"\b(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day\b")


def place_findings(text: str, allowed_text: str, region_allowed) -> list[Finding]:
    """Countries, states and cities the text names that are neither in the allowed text nor in one
    of the incident's regions (``region_allowed(token)``): "Germany and Switzerland" on a US
    incident. Case-sensitive: place names are proper nouns."""
    findings = []
    for m in _PLACE.finditer(text):
        place = m.group()
        if _party_supported(place, allowed_text) or any(region_allowed(t) for t in PLACES[place]):
            continue
        regions = ", ".join(t.upper() for t in PLACES[place])
        findings.append(Finding("new_region", place, f"“{place}” ({regions}) is not a place the incident "
                                "affects.", m.start()))
    return findings


def weekday_findings(text: str, allowed_text: str) -> list[Finding]:
    """A day of the week the incident's facts do not name: "fixed on Friday" is a date. One written with
    its date ("Wednesday, January 13") is that date's own day, when it is (the date is the numbers
    check's to read), and the day the update is written on is today's."""
    return [Finding("no_new_facts", m.group(), f"“{m.group()}” is a day the incident context does not name.",
                    m.start())
            for m in _WEEKDAY.finditer(text)
            if not _party_supported(m.group(), allowed_text) and not _day_of_its_date(text, m, allowed_text)
            and not (_TODAYS_PART.match(text, m.end()) and _the_report_day(m.group(), allowed_text))
            and m.group() not in _days_the_incident_dates(allowed_text)]


# A whole period ("this week", "last month", "at any point in March") bounds what it is said of: where the
# incident gives its own window by the clock or the calendar, "if you exported files this week" widens a
# window of two hours on one day to seven days. The incident must name the period: a week, a weekend, a
# month or a year in its words, or the month without a day ("2 to 5 March" names days, not March; a month
# it does not name at all is grounding's to read). An apology or a thank-you may name the time of writing
# ("sorry for the hassle this weekend"): it bounds nothing.
_PERIOD = re.compile(
    r"\b(?:this|last|(?:the\s+)?(?:past|whole|entire)|all)\s+(week|weekend|month|year)\b"
    r"|\b(?:in|during|throughout|across|over|for|since)\s+(?:(?:all|the\s+whole|the\s+month)\s+of\s+)?"
    r"(January|February|March|April|May|June|July|August|September|October|November|December)\b"
    r"(?!\s+\d{1,2}\b|\s+of\s+\d)",
    re.IGNORECASE)
_FELT_CLAUSE = re.compile(rf"\b(?:{_COURTESY})\b[^.;!?]*$", re.IGNORECASE)


def period_findings(text: str, allowed_text: str) -> list[Finding]:
    """A week, weekend, month or year that bounds a statement ("customers who booked this week"), where
    the incident names no such period."""
    if not _OWN_WINDOW.search(allowed_text):
        return []
    findings = []
    for m in _PERIOD.finditer(text):
        if _FELT_CLAUSE.search(text, 0, m.start()) or _names_period(m.group(1) or m.group(2), allowed_text):
            continue
        findings.append(Finding("no_new_facts", m.group(), f"“{m.group()}” is a period the incident context "
                                "does not name: what it bounds is the incident's to say.", m.start()))
    return findings


# A time of day ("08:00", "9am"), a day and a month ("3 June", "June 3rd") or a day of the week.
_MONTH_WORD = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*"
_OWN_WINDOW = re.compile(rf"\b\d{{1,2}}(?::\d{{2}}|\s*[ap]\.?m\b)"
                         rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH_WORD}\b|\b{_MONTH_WORD}\s+\d{{1,2}}"
                         r"|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b", re.IGNORECASE)


def _names_period(period: str, allowed_text: str) -> bool:
    if period.lower() in ("week", "weekend", "month", "year"):
        return re.search(rf"\b{period}s?\b", allowed_text, re.IGNORECASE) is not None
    if not re.search(rf"\b{period}\b", allowed_text, re.IGNORECASE):
        return True  # grounding reads a month the incident does not name
    # a month named without a day of it
    return re.search(rf"(?<!\d\s)(?<!\d)(?<!\d(?:st|nd|rd|th)\s)\b{period}\b(?!\s+\d{{1,2}}\b)", allowed_text,
                     re.IGNORECASE) is not None


# A group bounded by a whole day ("everyone who replied online on Tuesday", "every permit bought on
# Saturday", "orders placed online on Friday") where the incident bounds it by the clock on that day ("on
# Tuesday between 07:00 and 11:30"): the day widens the incident's window, unless the sentence gives the
# times too. A part of the day ("on Tuesday morning") or a time after it narrows the day again.
_DAY_BOUND_GROUP = re.compile(
    r"\b(?:(?:if\s+you|anyone|everyone|everybody|all|any|every|each)\b[^.;:!?]{0,60}?"
    r"|[^\W\d_]+s\s+)(?:[^\W\d_]+ed|made|sent|bought|paid|placed|booked|done|taken|given|put|got)\s+"
    r"(?:[^\W\d_]+\s+){0,3}?on\s+((?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day)\b"
    r"(?!\s+(?:morning|afternoon|evening|night|lunchtime|between|from|before|after|until|till|at|\d))", re.IGNORECASE)
_CLOCK = re.compile(r"\b\d{1,2}[:.]\d{2}\b|\b\d{1,2}\s*[ap]\.?m\b", re.IGNORECASE)


@functools.lru_cache(maxsize=256)
def _clocked_values(allowed_text: str) -> tuple[str, ...]:
    """The incident's strings that give a time by the clock, read once per incident."""
    return tuple(value for value in allowed_text.split('"') if _CLOCK.search(value))


def day_window_findings(text: str, allowed_text: str) -> list[Finding]:
    """A group a text bounds by a day the incident bounds by the clock, with no time in the sentence."""
    findings = []
    for start, end in sentence_spans(text):
        if _CLOCK.search(text, start, end):
            continue
        for m in _DAY_BOUND_GROUP.finditer(text, start, end):
            day = m.group(1)
            if any(day in value for value in _clocked_values(allowed_text)):
                findings.append(Finding("no_new_facts", f"on {day}", f"“on {day}” takes in the whole day; the "
                                        "incident context gives its window on that day by the clock.", m.start(1)))
    return findings


# A line said to answer at every hour ("call the salon any time, day or night", "book by phone at any
# time") promises its opening hours: only the incident may say a line is open round the clock. The hours
# must be said in the line's clause.
_EVERY_HOUR = (r"(?:at\s+)?any\s*time|day\s+or\s+night|(?:a)?round\s+the\s+clock|at\s+all\s+hours|24/7|"
               r"24\s+hours\s+a\s+day")
_ALWAYS_OPEN = re.compile(rf"\b(?:{_EVERY_HOUR})\b", re.IGNORECASE)
_BY_PHONE = re.compile(r"\b(?:call|calls|calling|ring|phone|phones|telephone|helpline|hotline|line|lines)\b",
                       re.IGNORECASE)
# The incident may say so in more words: "24 hours", "a 24-hour line", "at all times", "day and night".
_OPEN_ALWAYS = re.compile(rf"\b(?:{_EVERY_HOUR}|24\s*(?:hours|-hour)|at\s+all\s+times|day\s+and\s+night)\b",
                          re.IGNORECASE)


# A clause ends at a semicolon, a colon, a dash or a comma that joins another ("…, or download it any time").
_HOURS_CLAUSE = re.compile(r"(?:[^,;:—–]|,(?!\s*(?:or|and|but|so|then)\b))+", re.IGNORECASE)


def always_open_findings(text: str, allowed_text: str) -> list[Finding]:
    """A phone line said to answer at any hour, where the incident gives no such hours."""
    if _OPEN_ALWAYS.search(allowed_text):
        return []
    findings = []
    for start, end in sentence_spans(text):
        # the hours and the line in one clause: "download it any time" after ", or" is not the line's
        for clause in _HOURS_CLAUSE.finditer(text[start:end]):
            left, right = start + clause.start(), start + clause.end()
            if _BY_PHONE.search(text, left, right):
                findings.extend(Finding("no_new_facts", m.group(), f"“{m.group()}” says when a line answers; the "
                                        "incident context gives it no such hours.", m.start())
                                for m in _ALWAYS_OPEN.finditer(text, left, right))
    return findings


# A date the incident gives in the week around its report is a day of the week too: "on Tuesday evening"
# where the window is "18:00 to 18:50 ET on 5 January" and 5 January 2027 is a Tuesday.
_WEEK = 7  # days either side of the report: a weekday names one date only within its week


@functools.lru_cache(maxsize=256)
def _days_the_incident_dates(allowed_text: str) -> frozenset[str]:
    """The weekdays of the dates the incident names within a week of its report date."""
    reported = _report_date(allowed_text)
    if reported is None:
        return frozenset()
    dates = (_nearest(d, reported) for d in _DATE_IN_TEXT.finditer(allowed_text))
    return frozenset(date.strftime("%A") for date in dates if date and abs((date - reported).days) <= _WEEK)


# The day the update is written on, named as a part of today: "your Monday morning", "this Monday evening"
# ("fixed by Monday" on a Monday is a deadline, read as any day).
_TODAYS_PART = re.compile(r"\s+(?:morning|afternoon|evening|night|lunchtime)\b", re.IGNORECASE)


_REPORT_DATE = re.compile(r'"report_date":\s*"(\d{4})-(\d{2})-(\d{2})')


def _report_date(allowed_text: str) -> datetime.date | None:
    m = _REPORT_DATE.search(allowed_text)
    try:
        return datetime.date(*map(int, m.groups())) if m else None
    except ValueError:
        return None


def _the_report_day(weekday: str, allowed_text: str) -> bool:
    """Whether ``weekday`` is the day the update is written on: "sorry for the disruption to your Monday
    morning" in an update of Monday 9 November."""
    reported = _report_date(allowed_text)
    return reported is not None and reported.strftime("%A") == weekday.capitalize()


_MONTH_NAMES = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
# "13 January", "January 13th": a day and a month, either way round.
_DATE = r"(?:(\d{1,2})(?:st|nd|rd|th)?\s+([A-Za-z]{3,9})|([A-Za-z]{3,9})\s+(\d{1,2})(?:st|nd|rd|th)?)\b"
_DATE_AFTER = re.compile(r",?\s+" + _DATE)
_DATE_IN_TEXT = re.compile(r"\b" + _DATE)


def _nearest(m: re.Match, reported: datetime.date) -> datetime.date | None:
    """The date a _DATE match names, in the year that puts it nearest the report ("January 13" in an
    update written on 30 December is next year's); None where it names no date ("February 30")."""
    month_name, day = (m.group(2), m.group(1)) if m.group(1) else (m.group(3), m.group(4))
    if month_name[:3].lower() not in _MONTH_NAMES:
        return None
    month = _MONTH_NAMES.index(month_name[:3].lower()) + 1
    candidates = []
    for year in (reported.year - 1, reported.year, reported.year + 1):
        try:
            candidates.append(datetime.date(year, month, int(day)))
        except ValueError:
            continue
    return min(candidates, key=lambda date: abs((date - reported).days), default=None)


# "Tuesday 1 and Thursday 3 December": the first day of a range takes the month of the second.
_FIRST_OF_RANGE = re.compile(r",?\s+(\d{1,2})(?:st|nd|rd|th)?\s*(?:and|or|to|-|–|until|through)\s*"
                             r"(?:[A-Z][a-z]+day,?\s+)?\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?([A-Za-z]{3,9})\b")


def _day_of_its_date(text: str, weekday: re.Match, allowed_text: str) -> bool:
    reported = _report_date(allowed_text)
    for m in (_DATE_AFTER.match(text, weekday.end()), _FIRST_OF_RANGE.match(text, weekday.end())):
        date = _nearest(m, reported) if m and reported else None
        if date is not None:
            return date.strftime("%A") == weekday.group()
    return False


# ---------------------------------------------------------------- the status an update is labelled with

# A status page labels each update with the incident's state ("Identified - We have found ..."): a
# text that opens with a label says the incident is in that state.
_OPENER = re.compile(r"^\s*(Investigating|Identified|Monitoring|Resolved|Scheduled|In\s+progress|Completed)"
                     r"\s*(?:[-–—:]|\n)", re.IGNORECASE | re.MULTILINE)


def opener_findings(text: str, state: str | None) -> list[Finding]:
    """A state label ("Resolved -", "Identified:") at the start of a line that is not the incident's
    state."""
    if state is None:
        return []
    findings = []
    for m in _OPENER.finditer(text):
        label = "_".join(m.group(1).lower().split())
        if label != state:
            findings.append(Finding("state_claim", m.group(1), f"“{m.group(1)}” labels the update as "
                                    f"{label.replace('_', ' ')}, but the incident {_STATE_WORDS[state]}.",
                                    m.start(1)))
    return findings


# ---------------------------------------------------------------- the check


def find(text: str, support: Support) -> list[Violation]:
    """The structural checks: quantifiers against the incident's shares, blame, places and days of
    the week, in reading order."""
    text, allowed_text, evidence = prose(text, support), support.allowed_text, support.claim_evidence
    words = dict(support.rules.region_words)

    def region_allowed(token: str) -> bool:
        return any(region_in_allowed(t, allowed_text, words.get(t, ())) for t in (token, "global"))

    def hedged(source: str, start: int, end: int) -> bool:
        return is_hedged(source, start, (), end)

    findings = [
        *opener_findings(text, support.state),
        *weekday_findings(text, allowed_text),
        *period_findings(text, allowed_text),
        *always_open_findings(text, allowed_text),
        *day_window_findings(text, allowed_text),
        *place_findings(text, allowed_text, region_allowed),
        *scope_findings(text, support.context, evidence, hedged),
        *only_findings(text, evidence, hedged),
        *only_one_of_findings(text, support.context, hedged, support.context_key),
        *partial_findings(text, support.context, hedged, support.context_key),
        *few_findings(text, support.context, hedged, support.context_key),
        *unaffected_findings(text, support.context, support.context_key),
        *still_there_findings(text, support.context, support.context_key),
        *spared_impact_findings(text, support.context, support.context_key),
        *spared_region_findings(text, support),
        *narrowed_region_findings(text, support),
        *denial_findings(text, support.context, support.context_key),
        *improvement_findings(text, support.context),
        *staff_access_findings(text, evidence),
        *exposure_findings(text, evidence),
        *blame_findings(text, cause_evidence(support.context, evidence, key=support.context_key)),
    ]  # the orchestrator keeps one of each check and words (agents.core.guard.checks)
    return [violation_of(f, text) for f in sorted(findings, key=lambda f: f.start)]


def violation_of(finding: Finding, text: str) -> Violation:
    """The finding as the guard reports it; one reported as an unsupported statement carries its sentence
    and words, as grounding's do, so a lead sees them marked in the sentence."""
    if finding.check != "unsupported_statement":
        return Violation(finding.check, finding.found, finding.message)
    a, b = next(((a, b) for a, b in sentence_spans(text) if a <= finding.start < b), (0, len(text)))
    start = finding.start - a
    return Violation(finding.check, finding.found, finding.message, sentence=text[a:b],
                     words=((start, min(start + len(finding.found), b - a)),), reading=finding.reading)

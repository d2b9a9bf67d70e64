"""Readings of the incident's own measures: a middle value (a median, an average) said as a bound,
and a recovery that the incident's measure of what remains contradicts. Each reads a fact's key and
label for what it measures, in both context shapes (the plain one has keys only). Plain Python: no
Django here."""

from __future__ import annotations

import re
from collections.abc import Mapping
from decimal import Decimal

from agents.core.guard.hedges import is_hedged
from agents.core.guard.incident_claims import Finding, is_forecast, sentence_around
from agents.core.guard.leading import led_by
from agents.core.guard.support import Support, per_incident
from agents.core.guard.violation import Violation
from agents.core.units import fact_meta, number_value, unit_of

# ---------------------------------------------------------------- a middle value given as a bound

# "All of them were applied within 38 minutes" where 38 minutes is the median delay: a median, an
# average or a typical value says where the middle lies, not how far the worst case went. Said as a
# bound ("within", "up to", "at most", "no more than", "the longest") it is a wrong number even though
# its digits are the incident's.
_MIDDLE = re.compile(r"median|average|\bavg\b|mean|typical|\bp50\b", re.IGNORECASE)
_BOUND = re.compile(r"\b(?:within|in\s+(?:under|less\s+than)|up\s+to|at\s+(?:most|the\s+(?:most|latest))|"
                    r"no\s+(?:more|longer)\s+than|(?:a\s+)?maximum\s+of|longest|max(?:imum)?|never\s+more\s+than)"
                    r"\s+(?:of\s+|was\s+|is\s+)?(?:about\s+|around\s+|roughly\s+)?$", re.IGNORECASE)


@per_incident
def middle_values(context: Mapping | None) -> frozenset[Decimal]:
    """The values of the incident's facts that measure a middle (a median, an average, a typical value),
    apart from any value another fact holds too."""
    incident = context.get("incident") if isinstance(context, Mapping) else None
    if not isinstance(incident, Mapping):
        return frozenset()
    labels = {key: label for key, label, _unit in fact_meta(context)}
    middle, other = set(), set()
    for key, value in incident.items():
        number = number_value(value)
        if number is not None:
            (middle if _MIDDLE.search(f"{key} {labels.get(key, '')}") else other).add(number)
    return frozenset(middle - other)


_FIGURE = re.compile(r"\b\d+(?:\.\d+)?\b")


def bound_findings(text: str, context: Mapping | None, key: str | None = None) -> list[Finding]:
    """Middle values said as bounds (see :data:`_BOUND`)."""
    middle = middle_values(context, key=key)
    if not middle:
        return []
    findings = []
    for m in _FIGURE.finditer(text):
        bound = _BOUND.search(text, max(0, m.start() - 40), m.start()) if Decimal(m.group()) in middle else None
        if bound is not None:
            found = text[bound.start() : m.end()].strip()
            findings.append(Finding("no_new_facts", found, f"“{found}” gives the incident's median or average as a "
                                    "bound: the middle value says nothing of the longest or largest.", bound.start()))
    return findings


# ---------------------------------------------------------------- recovery against what remains

# "Wait times are back to normal" on an incident whose facts say the wait is 35 minutes now against a
# usual 15: a recovery the incident's own measure of what remains contradicts. A fact measures what
# remains when its key or label says it is the current value ("current_delay_minutes", "Median wait
# now") of an impairment (a delay, a wait, a lag, errors, a queue); it contradicts a recovery while it
# is above zero and above the usual value the incident records beside it ("usual_wait_minutes").
_RECOVERED = re.compile(
    led_by(
        "abcfinuw",
        r"\b(?:back\s+to\s+(?:normal|usual)|(?:normal|usual)\s+again|in\s+real[-\s]time|(?:fully|completely)\s+"
        r"(?:recovered|restored|caught\s+up|cleared)|(?:fully\s+|now\s+)?behind\s+us|no\s+longer\s+(?:delayed|"
        r"lagging|queued|slow|behind)|(?:all|fully)\s+caught\s+up|without\s+(?:any\s+)?delays?)\b",
    ),
    re.IGNORECASE,
)
_CURRENT = re.compile(r"\b(?:current|currently|now|still|remaining)\b", re.IGNORECASE)
_USUAL = re.compile(r"\b(?:usual|usually|normal|normally|baseline|typical|typically)\b", re.IGNORECASE)
_IMPAIRED = re.compile(r"delay|wait|lag|behind|latency|error|fail|queue|backlog|timeout|slow", re.IGNORECASE)


@per_incident
def remaining_impairments(context: Mapping | None) -> tuple[str, ...]:
    """The labels of the incident's facts that say an impairment remains (see :data:`_RECOVERED`)."""
    incident = context.get("incident") if isinstance(context, Mapping) else None
    if not isinstance(incident, Mapping):
        return ()
    labels = {key: label for key, label, _unit in fact_meta(context)}
    named = {key: f"{key.replace('_', ' ')} {labels.get(key, '')}" for key in incident}
    numbers = {key: number_value(value) for key, value in incident.items()}
    # A usual value is paired with the current one by their other words ("usual wait" and "current wait").
    usual = {tuple(_USUAL.sub("", name).lower().split()): numbers[key] for key, name in named.items()
             if _USUAL.search(name) and numbers[key] is not None}
    found = []
    for key, name in named.items():
        value = numbers[key]
        if value is None or value <= 0 or _USUAL.search(name) or not (_CURRENT.search(name) and _IMPAIRED.search(name)):
            continue
        baseline = usual.get(tuple(_CURRENT.sub("", name).lower().split()))
        if baseline is None or value > baseline:
            found.append(labels.get(key) or key.replace("_", " "))
    return tuple(found)


# "All 2,260 skipped jobs have since been re-run successfully" where 68 re-runs failed: a success said of
# all that a count or a share of failures in the incident's facts contradicts.
_ALL_SUCCEEDED = re.compile(
    r"\b(?:all|every)\b[^.;:!?]{0,80}?\b(?:successfully|without\s+(?:any\s+)?(?:errors?|failures?|issues?|problems?))\b",
    re.IGNORECASE,
)
_FAILED = re.compile(r"fail|unsuccessful|error", re.IGNORECASE)
_SUCCEEDED_SHARE = re.compile(r"success|succeeded|completed", re.IGNORECASE)


@per_incident
def failures_recorded(context: Mapping | None) -> tuple[str, ...]:
    """The labels of the incident's facts that count failures (above zero) or give a success share below
    100%."""
    incident = context.get("incident") if isinstance(context, Mapping) else None
    if not isinstance(incident, Mapping):
        return ()
    found = []
    for key, label, unit in fact_meta(context):
        value, name = number_value(incident.get(key)), f"{key.replace('_', ' ')} {label}"
        if value is None or _USUAL.search(name):
            continue
        share = unit_of(key, unit) == "%"
        if (_FAILED.search(name) and value > 0) or (_SUCCEEDED_SHARE.search(name) and share and value < 100):
            found.append(label or key.replace("_", " "))
    return tuple(found)


def success_findings(text: str, context: Mapping | None, key: str | None = None) -> list[Finding]:
    """Success said of all, where the incident's facts record failures."""
    findings = []
    for m in _ALL_SUCCEEDED.finditer(text):
        if is_hedged(text, m.start(), (), m.end()) or is_forecast(text, m.end()):
            continue
        failures = failures_recorded(context, key=key)
        if failures:
            findings.append(Finding("state_claim", m.group(), f"“{m.group()}” says all succeeded, and the incident "
                                    f"records failures ({failures[0]}).", m.start()))
    return findings


def recovery_findings(text: str, context: Mapping | None, key: str | None = None) -> list[Finding]:
    """Recovery claims the incident's measure of what remains contradicts: hedged, forecast and
    conditional recoveries are no claim."""
    findings, remaining = [], None
    for m in _RECOVERED.finditer(text):
        sentence = sentence_around(text, m.start(), m.end())
        if is_hedged(text, m.start(), (), m.end()) or is_forecast(text, m.end()) or _CONDITIONAL.search(sentence):
            continue
        remaining = remaining_impairments(context, key=key) if remaining is None else remaining
        if remaining:
            findings.append(Finding("state_claim", m.group(), f"“{m.group()}” says the impact is over, and the "
                                    f"incident records what remains ({remaining[0]}).", m.start()))
    return findings


_CONDITIONAL = re.compile(r"\b(?:once|until|when|if|as\s+soon\s+as)\b", re.IGNORECASE)


def find(text: str, support: Support) -> list[Violation]:
    """The measures' findings, in reading order."""
    findings = [*bound_findings(text, support.context, support.context_key),
                *recovery_findings(text, support.context, support.context_key),
                *success_findings(text, support.context, support.context_key)]
    return [Violation(f.check, f.found, f.message) for f in sorted(findings, key=lambda f: f.start)]

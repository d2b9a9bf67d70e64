"""Which words of a text state a fact, and the context fact that supports each.

The escalation page shows a lead every number, date, time, id, severity label, region and
restricted claim of the text, each linked to the incident fact that supports it or marked
unsupported. Support is decided by the guard itself (:func:`agents.core.guard.patch.answer_violations`,
as the final answer is checked: the context alone, instructions to the model removed); this
module only finds where each fact is in the text and which single context value backs it.
Plain Python: no Django here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from agents.core.guard import evidence_json
from agents.core.guard.claims import family_claims, family_makes_claim, family_problem
from agents.core.guard.identifiers import INCIDENT_ID, SEVERITY
from agents.core.guard.internal import INTERNAL_KEYS
from agents.core.guard.numbers import (
    _ID,
    _allowed_numbers,
    _moment_supported,
    _number_supported,
    _spans,
    extract_numbers,
    find_moments,
    shares_said,
)
from agents.core.guard.patch import answer_violations
from agents.core.guard.regions import _region_pattern, _region_word_pattern, region_in_allowed
from agents.core.guard.violation import family_check
from agents.core.patterns import UnsafePattern
from agents.core.policy import GuardRules
from agents.core.units import show

# Context entries that describe facts rather than state them.
_NOT_FACTS = {"fact_meta"}
# What people call the context's own entries (an incident fact goes by its label); the incident page
# names them so too (``agents.models.Incident.facts``).
LABELS = {"incident.incident_id": "Incident", "incident.title": "Title", "incident.severity": "Severity",
          "incident.state": "State", "incident.status": "Status", "region": "Regions", "report_date": "Report date"}
# The context's lists and hints, each listed under its heading, an entry of a list labelled by its place.
GROUPS = {"approved_actions": ("Approved actions", "Approved action"), "key_messages": ("Key messages", "Key message"),
          "components": ("Affected components", "Component"), "policy_hints": ("Policy hints", "")}


@dataclass(frozen=True)
class Fact:
    """One value of the run's context: ``path`` such as ``incident.eta_minutes``, a label for people."""

    index: int
    path: str
    label: str
    value: str
    unit: str = ""  # as the incident's fact says it ("%", "minutes"); "" for plain text and counts
    shown: str = ""  # the value as people read it, in its unit (``agents.core.units.show``): 0.034 ratio → 3.4%
    group: str = ""  # the heading it is listed under ("Approved actions"), "" for a fact of the incident

    @property
    def item(self) -> bool:
        """An entry of a list (an approved action, a key message): its text alone says it."""
        return self.path.endswith("]")


def shown_value(value, unit: str = "") -> str:
    """A context value for people: yes/no, a number in its fact's unit (0.034 ratio → 3.4%), else as written."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    return show(value, unit or "text")


def _label(path: str, labels: Mapping[str, str]) -> tuple[str, str]:
    """(label, group) of the value at ``path``: a fact's label, a list entry's place, a hint's name."""
    if label := labels.get(path) or LABELS.get(path):
        return label, ""
    top = path.split(".", 1)[0].split("[", 1)[0]
    name = path.rsplit(".", 1)[-1]
    if top == "internal":  # internal facts carry no label in a run's context: their key names them
        return f"{name.replace('_', ' ').capitalize()} (internal)", ""
    if top in GROUPS and path != top:
        heading, entry = GROUPS[top]
        if entry and (place := re.fullmatch(rf"{top}\[(\d+)\]", path)):
            return f"{entry} {int(place[1]) + 1}", heading
        return name.replace("_", " ").capitalize(), heading
    return name.replace("_", " ").capitalize(), ""


@dataclass(frozen=True)
class Mark:
    """A fact stated in the text at ``start:end``: supported (by ``fact``, if one value backs it
    alone) or not, with the guard's message when not."""

    start: int
    end: int
    kind: str  # number, time, id, severity, region, claim
    found: str
    supported: bool
    fact: Fact | None = None
    message: str = ""


def context_facts(context: Mapping) -> list[Fact]:
    """Every value of the context with its path, in reading order, labelled and shown as people read
    it: an incident fact by its label and in its unit, a list entry ("Approved action 2") under its
    heading, never a raw path."""
    labels, units = {}, {}
    for info in context.get("fact_meta") or []:
        if isinstance(info, Mapping) and info.get("key"):
            labels[f"incident.{info['key']}"] = str(info.get("label") or info["key"])
            if info.get("unit") not in (None, "", "text", "count"):
                units[f"incident.{info['key']}"] = str(info["unit"])
    facts: list[Fact] = []

    # The same order whatever the database did to the JSON (PostgreSQL's jsonb reorders keys): the
    # incident first, its identity, then its facts as the incident lists them; anything else by name.
    fact_order = [key.split(".", 1)[1] for key in labels]
    first = {"": ["incident", "region", "components", "report_date", "key_messages", "approved_actions"],
             "incident": ["incident_id", "severity", "status", *fact_order]}

    def ordered(keys, path: str) -> list:
        preferred = [key for key in first.get(path, []) if key in keys]
        return preferred + sorted((key for key in keys if key not in preferred), key=str)

    def walk(value, path: str) -> None:
        if isinstance(value, Mapping):
            for key in ordered(list(value), path):
                if path or key not in _NOT_FACTS:
                    walk(value[key], f"{path}.{key}" if path else str(key))
        elif isinstance(value, (list, tuple)):
            for i, item in enumerate(value):
                walk(item, f"{path}[{i}]")
        elif value not in (None, ""):
            text = ("yes" if value else "no") if isinstance(value, bool) else str(value)
            label, group = _label(path, labels)
            shown = shown_value(value, units.get(path, ""))
            facts.append(Fact(len(facts), path, label, text, units.get(path, ""),
                              shown.capitalize() if path == "incident.state" else shown, group))

    walk(context, "")
    return facts


def _leaf_evidence(context: Mapping, facts: list[Fact]) -> list[tuple[Fact, str]]:
    """Each fact as the guard would read it alone: ``{"eta_minutes": 45}`` keeps the unit in its name."""
    out = []
    for fact in facts:
        value = _value_at(context, fact.path)
        key = fact.path.rsplit(".", 1)[-1].split("[", 1)[0]
        out.append((fact, evidence_json({key: value})))
    return out


def _value_at(context: Mapping, path: str):
    value = context
    for part in path.replace("[", ".[").split("."):
        if part.startswith("["):
            value = value[int(part[1:-1])]
        else:
            value = value[part]
    return value


_CALENDAR = re.compile(r"day|week|month|year|tonight|tomorrow", re.IGNORECASE)


def mark_facts(text: str, context: Mapping, rules: GuardRules, *, strict_claims: bool = False) -> list[Mark]:
    """The facts ``text`` states, in reading order, without overlaps, each supported or not."""
    context = context or {}
    # read as the final answer's check reads it: the incident's state and statements decide too ("resolved"
    # on a resolved incident under the strict claim form)
    violations = answer_violations(text, context, rules, strict_claims=strict_claims)
    unsupported = {(v.check, v.found.lower()): v.message for v in violations}
    # An internal fact backs nothing customers read (agents.core.guard.internal).
    leaves = _leaf_evidence(context, [fact for fact in context_facts(context)
                                      if fact.path.split(".", 1)[0].split("[", 1)[0] not in INTERNAL_KEYS])
    marks: list[Mark] = []

    def add(start: int, end: int, kind: str, check: str, supports) -> None:
        found = text[start:end]
        message = unsupported.get((check, found.lower()))
        if message is not None:
            marks.append(Mark(start, end, kind, found, False, None, message))
            return
        # The narrowest fact that supports it: the region fact "US" rather than a title naming the US.
        backing = [(len(evidence), index) for index, (_, evidence) in enumerate(leaves) if supports(evidence, found)]
        fact = leaves[min(backing)[1]][0] if backing else None
        marks.append(Mark(start, end, kind, found, True, fact))

    moments = find_moments(text)
    for moment in moments:
        add(moment.start, moment.end, "time", "no_new_facts",
            lambda ev, _, m=moment: _moment_supported(m, find_moments(ev)))
    numbers = extract_numbers(text, skip=_spans(text, moments))
    # a share said as two numbers ("one in ten") is one fact, its percentage: one mark for both numbers
    shares = shares_said(text, numbers)
    inside = {n.start for s in shares for n in numbers if s.start <= n.start < s.start + len(s.found)}
    for number in [*shares, *(n for n in numbers if n.start not in inside)]:
        add(number.start, number.start + len(number.found), "number", "no_new_facts",
            lambda ev, _, n=number: _number_supported(n, _allowed_numbers(ev, _spans(ev, find_moments(ev)))))
    for m in _ID.finditer(text):
        if not INCIDENT_ID.fullmatch(m.group()):
            add(m.start(), m.end(), "id", "no_new_facts", lambda ev, found: found.lower() in ev.lower())
    for m in INCIDENT_ID.finditer(text):
        add(m.start(), m.end(), "id", "new_incident_id", lambda ev, found: found.lower() in ev.lower())
    for m in SEVERITY.finditer(text):
        add(m.start(), m.end(), "severity", "new_severity_label",
            lambda ev, found: found.lower() in {s.group().lower() for s in SEVERITY.finditer(ev)})
    words = dict(rules.region_words)
    for token in rules.regions:
        if not isinstance(token, str):
            continue
        try:
            names = words.get(token.lower(), ())
            found = list(_region_pattern(token.lower()).finditer(text))
            for word in names:
                found += _region_word_pattern(word).finditer(text)
        except UnsafePattern:
            continue  # the guard already reports the token itself
        for m in found:
            add(m.start(), m.end(), "region", "new_region",
                lambda ev, _, t=token, n=names: region_in_allowed(t.lower(), ev, n))
    # What the numbers check stops beyond the numbers and times read above: a day ("by Friday"), a period ("this
    # month"), a quantity in words ("twice").
    for v in violations:
        if v.check.endswith("no_new_facts") and v.found:
            for m in re.finditer(rf"(?<!\w){re.escape(v.found)}(?!\w)", text, re.IGNORECASE):
                kind = "time" if _CALENDAR.search(m.group()) else "number"
                marks.append(Mark(m.start(), m.end(), kind, m.group(), False, None, v.message))
    for family in rules.families():
        if (family.strict_only and not strict_claims) or family_problem(family):
            continue
        check = family_check(family.check)  # as the guard reports it
        for m in family_claims(text, family):
            add(m.start(), m.end(), "claim", check,
                lambda ev, _, f=family: not strict_claims and family_makes_claim(ev, f))

    # One mark per span: the earliest, then the longest (a claim wins over a number inside it).
    chosen: list[Mark] = []
    for mark in sorted(marks, key=lambda k: (k.start, -(k.end - k.start))):
        if not chosen or mark.start >= chosen[-1].end:
            chosen.append(mark)
    return chosen

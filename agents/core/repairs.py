"""One-key repairs: rule-made minimal fixes for a guard finding (docs/desk.md, 'One-key repairs').

Each rule reads one finding of the guard (a reported violation: its ``check``, the words it
``found``, a grounding finding's ``sentence`` and ``words``) and the text it was found in, and
proposes the whole text with one small change:

- ``share``: an over-broad quantifier ("all customers") replaced with the fact's own share
  ("40% of customers");
- ``estimate``: a firm time ("within the hour") worded as an estimate ("We estimate that ...");
- ``declared_contact``: a contact the incident does not declare replaced with one it declares;
- ``remove_party``: the named party a cause blames removed ("due to an outage at Northwind");
- ``drop_words``: the unsupported words or the unsupported token removed;
- ``drop_sentence``: the sentence that holds the finding removed.

A rule may propose several texts, best first; none of them is checked here. The desk offers a
rule's first text that the same guard passes (``reviewer.desk.repairs``): the finding gone, and no
new one. Plain Python: no Django here; the guard's checks are only read, never changed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from agents.core.guard.contacts import declared_contacts, find_contacts
from agents.core.guard.incident_claims import affected_shares, says_few, shares_counting
from agents.core.guard.wellformed import sentence_spans
from agents.core.text import strings_in

# The order a finding's fixes are offered in: the most specific first.
RULES = ("share", "estimate", "declared_contact", "remove_party", "drop_words", "drop_sentence")
# The checks whose finding is one token that can simply go ("45 minutes" is not the incident's).
_TOKEN_CHECKS = {"no_new_facts", "new_incident_id", "new_severity_label", "new_region"}
# How many shares or contacts a rule proposes at most.
_MOST = 3


@dataclass(frozen=True)
class Repair:
    rule: str  # one of RULES
    label: str  # what the fix does, for a lead: "Replace “All customers” with “40% of customers”"
    text: str  # the whole text with the fix


def check_name(finding: Mapping) -> str:
    """The check a finding names, without its stop's prefix: ``scope_claim`` of ``invalid_answer:scope_claim``."""
    return str(finding.get("check") or "").rpartition(":")[2]


def candidates(text: str, finding: Mapping, context: Mapping | None) -> list[Repair]:
    """Every fix the rules propose for ``finding`` in ``text``, by rule in the order of RULES and
    each rule's best first; [] when the finding cannot be placed in the text."""
    check = check_name(finding)
    context = context if isinstance(context, Mapping) else {}
    found = str(finding.get("found") or "")
    where = _locate(text, found) if found else None
    proposed: list[Repair] = []
    if where is not None:
        start, end = where
        if check == "scope_claim":
            proposed += share(text, start, end, context)
        elif check == "time_commitment":
            proposed += estimate(text, start, end)
        elif check == "unknown_contact":
            proposed += declared_contact(text, start, end, context)
        elif check == "liability":
            proposed += remove_party(text, start, end)
        elif check in _TOKEN_CHECKS:
            proposed += drop_words(text, [_with_its_link(text, start, end)])
    sentence = _grounded_sentence(text, finding)
    # A named reading's words are a statement ("did not see longer pickup times", "faster than it did
    # before"): without them the sentence is broken, so only the sentence goes.
    if check == "unsupported_statement" and sentence is not None and not finding.get("reading"):
        offset = sentence[0]
        spans = [(offset + a, offset + b) for a, b in _spans(finding, sentence[1] - sentence[0])]
        proposed += drop_words(text, spans)
    if sentence is None and where is not None:
        sentence = _sentence_of(text, *where)
    if sentence is not None:
        proposed += drop_sentence(text, *sentence)
    return [r for r in proposed if r.text.strip() and r.text != text]


# ---------------------------------------------------------------- the rules


_QUANTIFIER = re.compile(
    r"(?:only\s+)?(?:a\s+)?(?:very\s+)?(?:(?:nearly|almost|virtually|practically)\s+(?:all|every(?:one)?)|all|every"
    r"|100\s*%\s+of|most|the\s+(?:vast\s+)?majority|(?:small|tiny|limited|minor|negligible)\s+(?:number|fraction"
    r"|percentage|share|subset|portion|group|minority|proportion)|(?:small\s+)?handful|few|minority)\s*"
    r"(?:single\s+)?(?:of\b\s*)?(?:(?:our|your|the)\s+)?",
    re.IGNORECASE,
)
_EVERY = re.compile(r"\bevery(?:one|body)?\b", re.IGNORECASE)
_SINGULAR_VERB = re.compile(r"(\s+)(is|was|has)\b")
_PLURAL = {"is": "are", "was": "were", "has": "have"}


def _shown(percent: Decimal) -> str:
    return f"{percent.normalize():f}%"


def share(text: str, start: int, end: int, context: Mapping) -> list[Repair]:
    """The quantifier at ``start:end`` replaced with each share of the affected the facts give."""
    found = text[start:end]
    quantifier = _QUANTIFIER.match(found)
    noun = found[quantifier.end():].strip() if quantifier else ""
    if found.lower() in ("everyone", "everybody"):
        noun = "customers"
    after = text[end:]
    ends_with_of = re.search(r"\bof\s*$", found, re.IGNORECASE) is not None  # "a handful of"
    if not noun and not ends_with_of and not re.match(r"\s+of\b", after):
        return []  # "widespread": no one to put a share on
    if noun and _EVERY.search(found) and not noun.lower().endswith("s"):
        noun += "s"  # "every EU user" -> "EU users"
    if _EVERY.search(found):
        after = _SINGULAR_VERB.sub(lambda m: m.group(1) + _PLURAL[m.group(2)], after, count=1)
    repairs = []
    shares = affected_shares(context)
    if says_few(found):  # "only a few accounts": a share of requests does not count them
        shares = shares_counting(shares, text, start, end)
    for percent, label in shares[:_MOST]:
        words = f"{_shown(percent)} of {noun}" if noun else f"{_shown(percent)}{' of' if ends_with_of else ''}"
        repairs.append(Repair("share", f"Replace “{found}” with “{words}” ({label})",
                              text[:start] + words + after))
    return repairs


_WORD = re.compile(r"[A-Za-z]+")


def estimate(text: str, start: int, end: int) -> list[Repair]:
    """The sentence that commits to a time worded as an estimate: "We estimate that ..." before it."""
    span = _sentence_of(text, start, end)
    if span is None:
        return []
    a, b = span
    sentence = text[a:b]
    first = _WORD.match(sentence)
    if first and not _proper(first.group(), text):
        sentence = sentence[0].lower() + sentence[1:]
    fixed = "We estimate that " + sentence
    return [Repair("estimate", f"Word “{text[start:end]}” as an estimate: “We estimate that …”",
                   text[:a] + fixed + text[b:])]


def _proper(word: str, text: str) -> bool:
    """Whether ``word`` keeps its capital after "We estimate that": "I", an acronym, or a name the
    text also writes capitalised after a lower-case word ("... an outage at Northwind")."""
    if word == "I" or word.isupper():
        return True
    return re.search(rf"\b[a-z]+[,]?\s+{re.escape(word)}\b", text) is not None


def declared_contact(text: str, start: int, end: int, context: Mapping) -> list[Repair]:
    """The undeclared contact at ``start:end`` replaced with each declared contact of its kind (a link
    for a link or a domain, an address for an address, a number for a number)."""
    written = next((c for c in find_contacts(text) if c.start == start), None)
    if written is None:
        return []
    kinds = {"url", "domain"} if written.kind in ("url", "domain") else {written.kind}
    repairs, seen = [], set()
    for contact in declared_list(context):
        if contact.kind in kinds and contact.found not in seen and contact.found != written.found:
            seen.add(contact.found)
            repairs.append(Repair("declared_contact", f"Replace “{written.found}” with the declared “{contact.found}”",
                                  text[:start] + contact.found + text[start + len(written.found):]))
    return repairs[:_MOST]


def declared_list(context: Mapping) -> list:
    """The contacts the incident declares, as its public facts write them, in their order."""
    known = declared_contacts(context)
    texts = strings_in(context.get("incident")) + strings_in(context.get("key_messages"))
    return [c for t in texts for c in find_contacts(t) if known.covers(c)]


_NAMED = re.compile(r"^([A-Z][\w&.-]*[\w])['’]s\s+(\w+)")
_DANGLING = re.compile(r"\b(?:is|are|was|were|be|been|being|by|to|of|on|at|with)\s*$", re.IGNORECASE)


def remove_party(text: str, start: int, end: int) -> list[Repair]:
    """The blame at ``start:end`` without the party: a cause phrase ("due to an outage at Northwind")
    removed, or a possessive ("Northwind's outage") made "an outage"."""
    found = text[start:end]
    possessive = _NAMED.match(found)
    if possessive:
        noun = possessive.group(2)
        article = "an" if noun[0].lower() in "aeiou" else "a"
        span = _sentence_of(text, start, end)
        at_start = span is None or span[0] == start
        words = (article.capitalize() if at_start else article) + " " + noun
        return [Repair("remove_party", f"Remove the named party: “{found}” becomes “{words}”",
                       text[:start] + words + text[end:])]
    before = text[:start].rstrip(" ,")
    if _DANGLING.search(before):
        return []  # "was caused by Northwind": without the party the sentence has no end
    return [Repair("remove_party", f"Remove “{found}”", before + text[end:])]


def drop_words(text: str, spans: list[tuple[int, int]]) -> list[Repair]:
    """The words at ``spans`` removed, with the spaces around them tidied."""
    if not spans:
        return []
    fixed, removed = text, []
    for a, b in sorted(spans, reverse=True):
        removed.append(text[a:b])
        rest = fixed[b:].lstrip(" \t")
        first = rest.split(maxsplit=1)[0] if rest.strip() else ""
        if first.islower() and _OPENS_SENTENCE.search(fixed[:a]):
            rest = rest[0].upper() + rest[1:]  # "Frankfurt users see errors." becomes "Users see errors."
        fixed = fixed[:a] + " " * (len(fixed[b:]) > len(rest)) + rest
    fixed = re.sub(r"[ \t]{2,}", " ", fixed)
    fixed = re.sub(r"[ \t]+([.,;:!?])", r"\1", fixed)
    fixed = re.sub(r"(^|\n)[ \t]+", r"\1", fixed)
    words = "”, “".join(w.strip() for w in reversed(removed))
    return [Repair("drop_words", f"Remove “{words}”", fixed)]


# A token goes with the word that links it to the sentence: "replaced the router in Frankfurt." loses "in
# Frankfurt", not "Frankfurt" alone (which would leave "… the router in."); "from Frankfurt and Paris" loses
# "Frankfurt and", so "from Paris" stays.
_LINK_BEFORE = re.compile(r"\b(?:in|at|on|from|to|for|near|across|within|by|via|of|around|throughout)\s+$",
                          re.IGNORECASE)
_JOINED_AFTER = re.compile(r"(?:,\s*|\s+)(?:and|or)\s+|,\s+(?=\w)", re.IGNORECASE)


def _with_its_link(text: str, start: int, end: int) -> tuple[int, int]:
    """The span of a token to remove, widened to the preposition or the conjunction that joins it."""
    if joined := _JOINED_AFTER.match(text, end):
        return start, joined.end()
    if link := _LINK_BEFORE.search(text, max(0, start - 20), start):
        return link.start(), end
    return start, end


_OPENS_SENTENCE = re.compile(r"(?:^|[.!?]\s+|\n)\s*$")


def drop_sentence(text: str, start: int, end: int) -> list[Repair]:
    """The sentence at ``start:end`` removed (with the space after it)."""
    rest = text[end:]
    after = len(rest) - len(rest.lstrip(" \t"))
    fixed = (text[:start] + text[end + after:]).strip()
    sentence = text[start:end]
    shown = sentence if len(sentence) <= 60 else sentence[:57] + "…"
    return [Repair("drop_sentence", f"Remove the sentence “{shown}”", fixed)]


# ---------------------------------------------------------------- where a finding is


def _locate(text: str, found: str) -> tuple[int, int] | None:
    """Where ``found`` is written in ``text``: as written, else ignoring case (None: nowhere)."""
    at = text.find(found)
    if at < 0:
        at = text.lower().find(found.lower())
    return None if at < 0 else (at, at + len(found))


def _sentence_of(text: str, start: int, end: int) -> tuple[int, int] | None:
    return next(((a, b) for a, b in sentence_spans(text) if a <= start and end <= b), None)


def _grounded_sentence(text: str, finding: Mapping) -> tuple[int, int] | None:
    """Where a grounding finding's sentence is in ``text`` (None without one, or not found)."""
    sentence = finding.get("sentence")
    if not isinstance(sentence, str) or not sentence.strip():
        return None
    at = text.find(sentence)
    return None if at < 0 else (at, at + len(sentence))


def _spans(finding: Mapping, length: int) -> list[tuple[int, int]]:
    """A finding's word offsets into its sentence, those that fit and do not overlap."""
    spans = []
    for span in sorted(s for s in finding.get("words") or [] if isinstance(s, (list, tuple))):
        if (isinstance(span, (list, tuple)) and len(span) == 2 and all(isinstance(n, int) for n in span)
                and 0 <= span[0] < span[1] <= length and (not spans or span[0] >= spans[-1][1])):
            spans.append((span[0], span[1]))
    return spans

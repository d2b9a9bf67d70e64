"""Phrase rules: what a revision must say and must not say.

The reflection review's fix plan is free text with quoted phrases; the self-critique's required
changes carry explicit ADD/REMOVE markers. Both become a :class:`PhraseRules`, which the patch
guard checks and the fallback edit applies. A phrase that cannot be enforced is reported with the
reason, never silently dropped. Plain Python: no Django here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

PHRASE_MIN, PHRASE_MAX = 3, 160


@dataclass(frozen=True)
class PhraseRules:
    must_include: tuple[str, ...] = ()
    must_remove: tuple[str, ...] = ()
    unenforceable: tuple[dict, ...] = ()  # each {"instruction": ..., "why": ...}


@dataclass(frozen=True)
class _Quote:
    start: int  # index of the opening quote
    end: int  # index just after the closing quote
    phrase: str


# ---------------------------------------------------------------- quoted phrases

_CLOSERS = {'"': '"', "“": "”", "'": "'", "‘": "’"}
_SINGLE = ("'", "‘")
_APOSTROPHES = ("'", "’")


def _quotes(instruction: str) -> list[_Quote]:
    """The quoted phrases with their positions.

    Double quotes (straight or curly) run to the next closing double quote, so "we're monitoring"
    stays one phrase. A single quote opens only at the start of a word (not in "we're" or
    "customers'") and closes only at a quote that is not followed by a letter, so apostrophes
    inside a single-quoted phrase ('we're monitoring') do not cut it either.
    """
    quotes = []
    i, n = 0, len(instruction)
    while i < n:
        char = instruction[i]
        if char not in _CLOSERS:
            i += 1
            continue
        before = instruction[i - 1] if i else " "
        after = instruction[i + 1] if i + 1 < n else " "
        if char in _SINGLE and (before.isalnum() or after.isspace()):
            i += 1  # an apostrophe or a stray quote, not an opening
            continue
        close = _closing(instruction, i + 1, char)
        if close is None:
            i += 1
            continue
        quotes.append(_Quote(i, close + 1, instruction[i + 1 : close].strip()))
        i = close + 1
    return quotes


def _closing(text: str, start: int, opener: str) -> int | None:
    if opener in _SINGLE:
        candidates = _APOSTROPHES
    else:
        candidates = ('"', "”")  # a curly opening quote closed by a straight one still closes
    for j in range(start, len(text)):
        if text[j] not in candidates:
            continue
        if opener in _SINGLE:
            nxt = text[j + 1] if j + 1 < len(text) else " "
            if nxt.isalpha():
                continue  # "we're", "it’s": an apostrophe inside the phrase
        return j
    return None


def quoted_phrases(instruction: str) -> list[str]:
    """The phrases quoted in an instruction, in order, trimmed."""
    return [q.phrase for q in _quotes(instruction)]


def outside_quotes(instruction: str) -> str:
    """The instruction's own words: every quoted phrase (with its quotes) replaced by a space."""
    parts, last = [], 0
    for q in _quotes(instruction):
        parts.append(instruction[last : q.start])
        last = q.end
    parts.append(instruction[last:])
    return " ".join(parts)


def _length_problem(phrase: str) -> str | None:
    if not PHRASE_MIN <= len(phrase) <= PHRASE_MAX:
        return (
            f"the phrase “{phrase[:40]}{'…' if len(phrase) > 40 else ''}” is {len(phrase)} "
            f"characters; an enforceable phrase has {PHRASE_MIN}-{PHRASE_MAX}"
        )
    if not normalize_phrase(phrase):
        return f"the phrase “{phrase}” has no letters or digits to look for"
    return None


# ---------------------------------------------------------------- presence


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def normalize_phrase(text: str) -> str:
    """Lowercase; every character other than a-z, 0-9, % and space becomes a space; whitespace
    collapsed. One extension: a space before % is dropped, so "27 %" and "27%" are one phrase.

    Lower-casing is ASCII-only on purpose: str.lower() turns a few non-ASCII letters into ASCII
    ones (the Kelvin sign into "k"), which the fallback's regexes could not then find."""
    text = re.sub(r"[^a-z0-9% ]", " ", text.translate(_ASCII_LOWER))
    text = re.sub(r" +%", "%", text)
    return " ".join(text.split())


def phrase_present(phrase: str, text: str) -> bool:
    """Whether ``phrase`` occurs in ``text`` as whole words, on the normalised forms."""
    needle = normalize_phrase(phrase)
    if not needle:
        return False
    return f" {needle} " in f" {normalize_phrase(text)} "


def missing_and_present(rules: PhraseRules, text: str) -> tuple[list[str], list[str]]:
    """(must-include phrases absent from ``text``, must-remove phrases present in it)."""
    missing = [p for p in rules.must_include if not phrase_present(p, text)]
    present = [p for p in rules.must_remove if phrase_present(p, text)]
    return missing, present


def _unique(phrases: Iterable[str]) -> tuple[str, ...]:
    seen, out = set(), []
    for phrase in phrases:
        key = normalize_phrase(phrase)
        if key not in seen:
            seen.add(key)
            out.append(phrase)
    return tuple(out)


# ---------------------------------------------------------------- reflection fix plan


def _forms(*words: str) -> str:
    return r"\b(?:" + "|".join(words) + r")\b"


# Verbs are read in the instruction's own words, never inside quotes, and as whole
# words. "changes"/"updates" are left out on purpose: in an instruction they are almost always
# nouns ("Make the following changes", "status updates"), never the imperative.
_MODIFY = _forms(
    r"replac(?:e|es|ed|ing)", r"modif(?:y|ies|ied|ying)", r"chang(?:e|ed|ing)",
    r"updat(?:e|ed|ing)", r"rewrit(?:e|es|ing|ten)", "rewrote", r"rephras(?:e|es|ed|ing)",
    r"reword(?:s|ed|ing)?", r"swap(?:s|ped|ping)?",
)  # fmt: skip
# A deliberate improvement on the contract's phrase rule (docs/contract.md, 'The patch guard'), whose
# plain reading would turn "Remove 'resolved'" into a must-INCLUDE of "resolved": remove/delete/drop/
# avoid/omit (and "instead of", "rather than") make the phrases they govern must-remove.
_REMOVE = _forms(
    r"remov(?:e|es|ed|ing)", r"delet(?:e|es|ed|ing)", r"drop(?:s|ped|ping)?",
    r"avoid(?:s|ed|ing)?", r"omit(?:s|ted|ting)?", r"instead\s+of", r"rather\s+than",
)  # fmt: skip
_ADD = _forms(
    "add", "adds", "adding", "include", "insert", "append", "keep", "mention", "state", "say",
    "use", "write", "ensure", "retain", "preserve", "end", "start", "begin",
)  # fmt: skip
_VERBS = re.compile(f"(?P<modify>{_MODIFY})|(?P<remove>{_REMOVE})|(?P<add>{_ADD})", re.IGNORECASE)
# "Do not remove 'X'" keeps X; "Don't say 'resolved'" removes it.
_NEGATED = re.compile(r"\b(?:not|never|no)\s+(?:\w+\s+)?$|n['’]t\s+(?:\w+\s+)?$", re.IGNORECASE)
_CLAUSE_BREAK = re.compile(r"[.;:!?,](?!\d)|\b(?:and|then|also)\b", re.IGNORECASE)
_EXAMPLE = re.compile(r"such\s+as|for\s+example|for\s+instance|e\.\s?g\.?|\beg\b", re.IGNORECASE)
# What may stand between A and B in a strict `replace "A" with "B"`.
_REPLACE_LINK = re.compile(
    rf"^(?:(?:must|should|needs?\s+to|to)\s+be\s+)?(?:{_MODIFY}\s+)?(?:with|by|to|into|for)$",
    re.IGNORECASE,
)


# "the updated ETA", "a drop in failures": after a determiner the word is not the instruction.
_DETERMINER = re.compile(
    r"\b(?:the|a|an|this|that|these|those|its|our|your|their|any|some|each|every)\s+$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class _Verb:
    kind: str  # "modify", "remove" or "add"
    start: int
    clause: int


def _blank_quotes(instruction: str, quotes: list[_Quote]) -> str:
    """The instruction with each quoted phrase blanked out, positions unchanged."""
    for q in quotes:
        instruction = instruction[: q.start] + " " * (q.end - q.start) + instruction[q.end :]
    return instruction


def _clause_of(own: str, position: int) -> int:
    return len(_CLAUSE_BREAK.findall(own[:position]))


def _verbs(own: str) -> list[_Verb]:
    """The instruction verbs in ``own`` (the instruction with its quotes blanked out)."""
    verbs = []
    for m in _VERBS.finditer(own):
        if _DETERMINER.search(own[: m.start()]):
            continue
        kind = m.lastgroup
        if _NEGATED.search(own[: m.start()]):
            kind = {"add": "remove", "remove": "add", "modify": "add"}[kind]
        verbs.append(_Verb(kind, m.start(), _clause_of(own, m.start())))
    return verbs


def _governing_verb(verbs: list[_Verb], quote: _Quote, clause: int) -> _Verb | None:
    """The verb a quoted phrase belongs to: the nearest one before it in its clause ("Avoid
    claims by adding 'x'" adds x; "Say 'x' instead of 'y'" removes y), else the nearest before it
    in the instruction ("Add 'x', 'y'"), else the first after it ("'resolved' must be removed")."""
    before = [v for v in verbs if v.start < quote.start]
    in_clause = [v for v in before if v.clause == clause]
    if in_clause:
        return in_clause[-1]
    if before:
        return before[-1]
    after = [v for v in verbs if v.start > quote.start]
    return after[0] if after else None


def _reflection_item(instruction: str) -> tuple[list[str], list[str], list[dict]]:
    quotes = _quotes(instruction)
    if not quotes:
        return [], [], [{"instruction": instruction, "why": "no quoted phrase to check"}]
    own = _blank_quotes(instruction, quotes)
    verbs = _verbs(own)
    is_example = _EXAMPLE.search(own) is not None
    include, remove, skipped = [], [], []
    first_of_verb: dict[int, int] = {}  # modify verb position -> index of its first phrase
    for index, q in enumerate(quotes):
        verb = _governing_verb(verbs, q, _clause_of(own, q.start))
        kind = verb.kind if verb else "add"  # quotes with no verb at all: must-include
        if kind == "modify":
            first = first_of_verb.setdefault(verb.start, index)
            link = " ".join(own[quotes[first].end : q.start].split())
            if first == index:
                kind = "remove"
            elif index == first + 1 and not is_example and _REPLACE_LINK.match(link):
                kind = "add"  # the B of a strict replace "A" with "B"
            else:
                why = f"“{q.phrase}” is example wording in a change instruction, not enforced"
                skipped.append({"instruction": instruction, "why": why})
                continue
        problem = _length_problem(q.phrase)
        if problem:
            skipped.append({"instruction": instruction, "why": problem})
        elif kind == "remove":
            remove.append(q.phrase)
        else:
            include.append(q.phrase)
    return include, remove, skipped


def reflection_rules(fix_plan: list[str]) -> PhraseRules:
    """The phrase rules a reflection fix plan implies: quoted phrases, read by the verb that governs them."""
    include, remove, skipped = [], [], []
    for instruction in fix_plan:
        i, r, s = _reflection_item(instruction)
        include += i
        remove += r
        skipped += s
    return PhraseRules(_unique(include), _unique(remove), tuple(skipped))


# ---------------------------------------------------------------- self-critique

# A leading list marker ("1. ", "- ") is not part of the instruction.
_LIST_MARKER = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_STARTS_ADD = re.compile(r"^\s*ADD(?=[\s:\-])", re.IGNORECASE)
_STARTS_REMOVE = re.compile(r"^\s*REMOVE(?=[\s:\-])", re.IGNORECASE)
_MUST_INCLUDE = re.compile(r"MUST_INCLUDE", re.IGNORECASE)
_MUST_REMOVE = re.compile(r"MUST_REMOVE", re.IGNORECASE)


def _critique_item(change: str) -> tuple[str | None, str | None, str | None]:
    """(kind, phrase, why-not): kind is "include" or "remove" when the change is enforceable."""
    change = _LIST_MARKER.sub("", change, count=1)
    phrases = quoted_phrases(change)
    if len(phrases) != 1:
        return None, None, f"{len(phrases)} quoted phrases; an enforceable change has exactly one"
    problem = _length_problem(phrases[0])
    if problem:
        return None, None, problem
    own = outside_quotes(change)  # markers count only in the instruction's own words
    adds = bool(_STARTS_ADD.match(change) or _MUST_INCLUDE.search(own))
    removes = bool(_STARTS_REMOVE.match(change) or _MUST_REMOVE.search(own))
    if adds == removes:
        if adds:
            return None, None, "both an include and a remove marker; it is not clear which"
        return None, None, "no ADD/REMOVE or MUST_INCLUDE/MUST_REMOVE marker"
    return ("include" if adds else "remove"), phrases[0], None


def is_enforceable(change: str) -> bool:
    """Exactly one quoted phrase of 3-160 characters and one ADD/REMOVE kind of marker."""
    return _critique_item(change)[0] is not None


def critique_rules(required_changes: list[str]) -> PhraseRules:
    include, remove, skipped = [], [], []
    for change in required_changes:
        kind, phrase, why = _critique_item(change)
        if kind == "include":
            include.append(phrase)
        elif kind == "remove":
            remove.append(phrase)
        else:
            skipped.append({"instruction": change, "why": why})
    return PhraseRules(_unique(include), _unique(remove), tuple(skipped))

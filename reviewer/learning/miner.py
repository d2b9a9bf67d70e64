"""The miner: concrete policy-row changes proposed from leads' decisions (docs/learning-loop.md).

Deterministic: the same decisions give the same proposals, in the same order. Four kinds:

- **a hedge for a claim family** (loosening): several distinct leads approved a text unchanged despite
  the same words of one family, and their justifications name the same word standing before the
  claim ("worded as a plan": *plan*): that word becomes one of the family's hedges;
- **a grounding term** (loosening): several distinct leads approved a sentence unchanged despite the
  grounding check's unsupported words: the words (with the words before them that every such sentence
  shares) become a term of the vocabulary;
- **a claim family** (tightening): a phrase leads repeatedly deleted in their edits and no check
  flagged becomes a new family of restricted claims;
- **a term switched off** (tightening): where such a phrase is a term of the vocabulary, the term
  is switched off instead.

Thresholds are settings (``LEARNING_MIN_LEADS``, ``LEARNING_MIN_DECISIONS``). Each proposal is written
as an :class:`~reviewer.models.Amendment` once (its fingerprint) and replayed in the policy lab at once
(``reviewer.learning.amendments.replay``); nothing here changes a policy row.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.conf import settings

from agents.core.guard.grounding import says_company_action
from agents.core.patterns import UnsafePattern, compile_pattern
from agents.models import GroundingTerm, RestrictedClaim, split_words
from reviewer.models import Decision
from reviewer.models.learning import STOPWORDS, Amendment, Label, labels, words_of

GROUNDING = "unsupported_statement"
SENTENCE = re.compile(r"[^.!?]+[.!?]?")
TERM_TEXT = re.compile(r"[a-z][a-z'’-]*(?: [a-z][a-z'’-]*){0,7}")
HEDGE_REACH = 6  # words before the claim whose one may become its hedge
EXAMPLES = 5  # decisions quoted on a card
SENTENCES_READ = 500


@dataclass
class Proposal:
    kind: str
    target: str  # the policy lab's kind of row: "claim" or "term"
    target_key: str  # the row's key ("" for a new row)
    changes: dict
    title: str
    fingerprint: str
    evidence: dict = field(default_factory=dict)


@dataclass
class _Group:
    """The decisions behind one candidate proposal."""

    decisions: list[int] = field(default_factory=list)
    leads: set[int] = field(default_factory=set)
    notes: dict[int, list[str]] = field(default_factory=lambda: defaultdict(list))  # lead -> justifications
    texts: dict[int, str] = field(default_factory=dict)  # decision -> the text the lead approved unchanged

    def add(self, label: Label, text: str = "") -> None:
        self.decisions.append(label.decision)
        self.leads.add(label.actor)
        if label.note:
            self.notes[label.actor].append(label.note)
        if text:
            self.texts[label.decision] = text

    def sentences(self, words: str) -> list[str]:
        """The sentences holding ``words``, of the first ``SENTENCES_READ`` decisions (by id): read only for a
        group that has enough decisions behind it, and a sample is as good as all to find the words."""
        texts = {self.texts[pk] for pk in sorted(self.texts)[:SENTENCES_READ]}
        return sorted({sentence for text in texts if (sentence := sentence_with(text, words))})

    def enough(self) -> bool:
        return len(self.leads) >= settings.LEARNING_MIN_LEADS and len(self.decisions) >= settings.LEARNING_MIN_DECISIONS

    def evidence(self, **more) -> dict:
        notes = sorted({note for lead_notes in self.notes.values() for note in lead_notes})
        return {"decisions": sorted(self.decisions), "leads": len(self.leads), "justifications": notes[:EXAMPLES],
                **more}


def sentence_with(text: str, found: str) -> str:
    """The sentence of ``text`` that holds ``found`` ("" if none does)."""
    lowered = found.lower()
    return next((s.strip() for s in SENTENCE.findall(text) if lowered in s.lower()), "")


def core(phrase: str) -> str:
    """A phrase without the little words at its ends: "this is our highest priority" -> "highest priority"."""
    words = phrase.split()
    while words and words[0] in STOPWORDS:
        words.pop(0)
    while words and words[-1] in STOPWORDS:
        words.pop()
    return " ".join(words)


def mine(decisions=None, *, from_labels: Iterable[Label] | None = None) -> list[Proposal]:
    """Every proposal the decisions (all final decisions by default) support, in a fixed order."""
    read = list(labels(decisions) if from_labels is None else from_labels)
    families = {row.family: row for row in RestrictedClaim.objects.exclude(family="")}
    terms = {row.text: row for row in GroundingTerm.objects.all()}
    return [*hedges(read, families), *grounding_terms(read, terms), *removed_phrases(read, families, terms)]


def hedges(read: list[Label], families: dict[str, RestrictedClaim]) -> list[Proposal]:
    groups: dict[tuple[str, str, str], _Group] = defaultdict(_Group)
    for label in read:
        if label.action != Decision.Action.APPROVE:
            continue
        for (check, family), found in label.fired.items():
            if family in families and families[family].kind == check and (check, family) in label.overridden:
                for words in {f.lower() for f in found if f}:
                    groups[(check, family, words)].add(label, label.candidate)
    proposals = []
    for (check, family, words), group in sorted(groups.items()):
        if not group.enough():
            continue
        sentences = group.sentences(words)
        hedge = _hedge_word(group, sentences, words, families[family])
        if hedge is None:
            continue
        row = families[family]
        hedges_now = ", ".join([*split_words(row.hedges), hedge])
        proposals.append(Proposal(
            Amendment.Kind.HEDGE, "claim", family, {"hedges": hedges_now},
            f"Hedge “{hedge}” for the “{family}” family ({check})", f"hedge:{family}:{hedge}",
            group.evidence(check=check, family=family, words=words, hedge=hedge,
                           sentences=sentences[:EXAMPLES])))
    return proposals


def _hedge_word(group: _Group, sentences: list[str], words: str, row: RestrictedClaim) -> str | None:
    """The word before the claim that most distinct leads' justifications name (at least the threshold's
    leads), or None."""
    known = {w.lower() for w in split_words(row.hedges)}
    windows = [set(words_of(sentence[:sentence.lower().find(words)])[-HEDGE_REACH:]) for sentence in sentences]
    if windows and all(window & known for window in windows):
        return None  # a hedge the family has already stands before the claim in every sentence
    before = {w for window in windows for w in window if w not in STOPWORDS and w not in known and w.isalpha()}
    named = {word: sum(1 for notes in group.notes.values() if any(word in words_of(n) for n in notes))
             for word in sorted(before)}
    best = max(named, key=lambda w: (named[w], -len(w)), default=None)
    return best if best is not None and named[best] >= settings.LEARNING_MIN_LEADS else None


def grounding_terms(read: list[Label], terms: dict[str, GroundingTerm]) -> list[Proposal]:
    groups: dict[str, _Group] = defaultdict(_Group)
    for label in read:
        if label.action != Decision.Action.APPROVE or (GROUNDING, "") not in label.overridden:
            continue
        for words in {f.lower() for f in label.fired.get((GROUNDING, ""), []) if f}:
            groups[words].add(label, label.candidate)
    proposals = []
    for words, group in sorted(groups.items()):
        if not group.enough():
            continue
        sentences = group.sentences(words)
        text = _shared_phrase(words, sentences)
        if not TERM_TEXT.fullmatch(text) or text in terms:
            continue
        # Where leads approved it as what the company does ("we have re-sent ..."), it needs the action flag.
        action = any(says_company_action(s, words) for s in sentences)
        changes = {"text": text, "note": "Mined from sentences leads approved unchanged.", "action": action}
        proposals.append(Proposal(
            Amendment.Kind.TERM, "term", "", changes,
            f"Grounding term “{text}”" + (" (as the company's action)" if action else ""), f"term:{text}",
            group.evidence(check=GROUNDING, words=words, sentences=sentences[:EXAMPLES])))
    return proposals


def _shared_phrase(words: str, sentences: list[str]) -> str:
    """``words`` with the (up to two) words before them that every sentence shares: "around the clock"."""
    befores = [words_of(s[:s.lower().find(words)])[-2:] for s in sentences if words in s.lower()]
    if any(b and b[-1].endswith(("-", "‑")) for b in befores):
        return " ".join(words_of(words))  # the end of a word ("re-keyed"): the term is the word the guard read
    for reach in (2, 1):
        if befores and all(len(b) >= reach and b[-reach:] == befores[0][-reach:] for b in befores):
            return " ".join([*befores[0][-reach:], *words_of(words)])
    return " ".join(words_of(words))


def removed_phrases(read: list[Label], families: dict[str, RestrictedClaim],
                    terms: dict[str, GroundingTerm]) -> list[Proposal]:
    groups: dict[str, _Group] = defaultdict(_Group)
    for label in read:
        for phrase in {core(p) for p in label.removed_unflagged}:
            if phrase:
                groups[phrase].add(label)
    proposals = []
    patterns = _family_patterns(families)
    for phrase, group in sorted(groups.items()):
        if not group.enough() or any(p.search(phrase) for p in patterns):
            continue
        term = next((t for t in sorted(terms, key=len, reverse=True)
                     if " " in t and terms[t].enabled and re.search(rf"\b{re.escape(t)}\b", phrase)), None)
        if term is not None:
            proposals.append(Proposal(
                Amendment.Kind.TERM_OFF, "term", term, {"enabled": False},
                f"Switch off the grounding term “{term}”", f"term_off:{term}", group.evidence(phrase=phrase)))
            continue
        pattern = r"\b" + r"\s+".join(re.escape(w) for w in phrase.split()) + r"\b"
        proposals.append(Proposal(
            Amendment.Kind.FAMILY, "claim", "",
            {"family": phrase[:80], "pattern": pattern, "kind": "restricted_claims", "support": "evidence",
             "note": "Mined from phrases leads removed in their edits."},
            f"New claim family “{phrase[:80]}”", f"family:{phrase[:150]}", group.evidence(phrase=phrase)))
    return proposals


def _family_patterns(families: dict[str, RestrictedClaim]) -> list:
    compiled = []
    for row in families.values():
        for pattern in (row.pattern, *row.as_family().paraphrases):
            try:
                compiled.append(compile_pattern(pattern))
            except UnsafePattern:
                continue
    return compiled

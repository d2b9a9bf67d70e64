"""When a claim is hedged: negated, conditional, an expectation, or wrapped in what cannot be said yet
("too early to call this resolved"). The restricted claims and the scope of a quantifier are read
with the same rule. Plain Python: no Django here."""

from __future__ import annotations

import re
from collections.abc import Iterable

from agents.core.guard.lemmas import verbs_of

# A claim's clause ends at sentence punctuation, a comma/semicolon/colon (not a decimal point),
# or a conjunction that starts a new assertion: "We are not sure of the cause, but payments are
# resolved" asserts "resolved".
_CLAUSE_BREAK = re.compile(
    r"[.!?;:,](?!\d)|\b(?:but|and|so|however|although|though|because)\b", re.IGNORECASE
)
_WORD = re.compile(r"[a-z]+(?:['’][a-z]+)*")
# Words that may sit between a negation and the claim: "has not yet been fully resolved".
_AUX = {
    "am", "is", "are", "was", "were", "be", "been", "being", "has", "have", "had", "it's", "it’s",
    "yet", "fully", "completely", "entirely", "totally", "still", "quite", "now", "all", "every",
}  # fmt: skip
_NEGATIONS = {"not", "never", "no"}
# Anywhere earlier in the clause these make the claim a condition or an expectation, not a
# statement: "until the issue is resolved", "we hope to have it resolved".
SUBORDINATORS = frozenset({
    "until", "till", "once", "when", "whenever", "before", "after", "if", "unless", "whether",
})  # fmt: skip
# ... but a clause of time still says when what it names happens: "keep using the old release until the
# corrected one is published later today" commits to "later today" as "if it is published today" does not.
_CONDITIONS = SUBORDINATORS - {"until", "till", "once", "when", "whenever", "before", "after"}
_MODALS = {
    "may", "might", "could", "hope", "hopes", "hoping", "hopefully", "aim", "aims", "aiming",
    "expect", "expects", "expected", "expecting",
}  # fmt: skip
# ... and a purpose: "we are monitoring to ensure all services are back to normal" states no outcome,
# nor does a condition that "as soon as" opens ("we will let you know as soon as it is back to normal").
# "… while we get the app back to normal" and "we're working hard to get it back to normal" tell of the
# effort, not its outcome ("we got it back to normal" is a claim).
_MODAL_PHRASES = re.compile(r"\bworking\s+(?:to|towards?|on)\b|\bas\s+soon\s+as\b"
                            r"|\b(?:to\s+(?:ensure|make\s+sure|confirm|verify|check)|so\s+that|in\s+order\s+to)\b"
                            r"|\bwhile\s+we(?:['’]re)?\s+(?:get|bring|work)\w*\b|(?<!managed\s)\bto\s+(?:get|bring)\b")
# "will be resolved" is deliberately NOT a hedge: a customer-facing promise of resolution is
# exactly what the restricted-claims check exists to stop.
_HEDGE_WINDOW = 10  # words before the claim that can hedge it


# A hedge that wraps the claim: a verb of saying or knowing that is negated or premature, so the
# claim is what cannot be said yet: "we are not in a position to say that all payments are stable",
# "it is too early to call this resolved", "nobody can confirm yet that it is fixed".
_REPORTING = {
    "say", "saying", "call", "calling", "confirm", "confirming", "confirmed", "declare", "declaring",
    "claim", "state", "promise", "guarantee", "announce", "know", "think", "believe", "consider",
    "sure", "certain", "clear", "ready", "verify", "verified", "conclude",
}  # fmt: skip
_WRAP_NEGATIONS = {"nobody", "unable", "cannot", "unclear", "premature", "none"}
_WRAP_REACH = 6  # words between the negation and the verb it governs: "not in a position to say"


def _is_negation(word: str) -> bool:
    return word in _NEGATIONS or word.endswith("n't") or word.endswith("n’t") or word == "cannot"


_OBJECTS = {"them", "him", "her", "us", "me"}  # "did not confirm them": the verb has its object, no claim under it


def _wrapped(words: list[str]) -> bool:
    for i, word in enumerate(words):
        if word not in _REPORTING or (i + 1 < len(words) and words[i + 1] in _OBJECTS):
            continue
        before = words[max(0, i - _WRAP_REACH) : i]
        if any(_is_negation(w) or w in _WRAP_NEGATIONS for w in before):
            return True
        if any(w == "too" and nxt in ("early", "soon") for w, nxt in zip(before, before[1:], strict=False)):
            return True
    return False


# How far before a claim its clause is read: a window that grows until it holds the clause's start
# or the last _HEDGE_WINDOW words (all that is read), up to _LOOK_BACK characters. Reading the text
# from its start for each match was quadratic: 22 s for 11,000 "resolved" in 100 KB.
_FIRST_LOOK = 200
_LOOK_BACK = 3200


def clause_before(text: str, start: int) -> str:
    """The clause before ``start``, read back to its last break (at most a window of words)."""
    size = _FIRST_LOOK
    while True:
        begin = max(0, start - size)
        head = text[begin:start]
        if begin and not text[begin - 1].isspace():
            # Start at a word boundary: a cut word ("...cannot" -> "not") must not read as a hedge.
            cut = re.search(r"\s", head)
            head = head[cut.start() :] if cut else ""
        breaks = list(_CLAUSE_BREAK.finditer(head))
        clause = head[breaks[-1].end() :] if breaks else head
        if breaks or not begin or size >= _LOOK_BACK or len(_WORD.findall(clause.lower())) > _HEDGE_WINDOW:
            return clause
        size *= 4


_AFTER_CLAUSE = re.compile(r"(?:[^.;!?]|\.(?=\d))*?(?=[.;!?]|\b(?:and|but|so|however|although|though|because)\b|$)",
                           re.IGNORECASE)


def _words_before(text: str, start: int) -> list[str]:
    return _WORD.findall(clause_before(text, start).lower())[-_HEDGE_WINDOW:]


def _negated(words: list[str]) -> bool:
    # A negation hedges only when it governs the claim: nothing but auxiliaries and adverbs in
    # between ("has not yet been resolved"), so "the issue we did not expect is resolved" still
    # asserts it.
    for word in reversed(words):
        if _is_negation(word):
            return True
        if word not in _AUX:
            break
    return False


# Between a negation and a commitment: "we will not be able to offer refunds".
_NOT_ABLE = {"able", "to", "be", "going", "in", "a", "position", "planning", "plan", "intending"}


def is_negated(text: str, start: int) -> bool:
    """Whether a negation governs the claim starting at ``start`` ("we will not be refunding")."""
    for word in reversed(_words_before(text, start)):
        if _is_negation(word):
            return True
        if word not in _AUX and word not in _NOT_ABLE:
            return False
    return False


def _conditional(words: list[str], timed: bool = False) -> bool:
    subordinators = _CONDITIONS if timed else SUBORDINATORS
    return (_negated(words) or _wrapped(words)
            or any(word in subordinators and not _circumstance(words, i) for i, word in enumerate(words))
            or _MODAL_PHRASES.search(" ".join(words)) is not None)


# "when" before a verb's -ing form tells the circumstances of what the clause asserts, not a condition:
# "We're seeing failures when booking online at all of our venues" says all of them fail.
_CIRCUMSTANCE = frozenset({"when", "whenever"})


def _circumstance(words: list[str], i: int) -> bool:
    following = words[i + 1] if i + 1 < len(words) else ""
    return words[i] in _CIRCUMSTANCE and following.endswith("ing") and following != "evening" and \
        bool(verbs_of(following))


def is_conditional(text: str, start: int, *, timed: bool = False) -> bool:
    """Whether the claim starting at ``start`` is negated, a condition or a purpose, or wrapped in
    what cannot be said yet: what :func:`is_hedged` reads but an expectation ("we expect", "should")
    or a family's hedge word. An estimate still gives a time for the fix; "if it is fixed later
    today" gives none. ``timed``: the claim is a time, which a clause of time ("until", "once") does
    not make a condition."""
    return _conditional(_words_before(text, start), timed)


_SENTENCE_CLOSE = re.compile(r"[.!?](?=\s|$)|\n")
_QUESTION_LOOK = 200  # how far a question's mark is looked for: a text without one is not read to its end per claim


def is_hedged(text: str, start: int, hedges: Iterable[str] = (), end: int | None = None, *,
              timed: bool = False) -> bool:
    """Whether the claim starting at ``start`` is negated, conditional, an expectation, or wrapped
    in a hedge ("too early to call this resolved"). ``hedges`` are a family's own hedge words,
    read in the clause before the claim and in the claim itself (up to ``end``); ``timed`` as in
    :func:`is_conditional`."""
    words = _words_before(text, start)
    if _conditional(words, timed) or any(word in _MODALS for word in words):
        return True
    after = start if end is None else end
    if (closing := _SENTENCE_CLOSE.search(text, after, after + _QUESTION_LOOK)) and closing.group() == "?":
        return True  # "Still seeing errors? Sign out and back in": a question to the reader asserts nothing
    if hedges and end is not None:
        # A family's own hedges also count inside the claim ("within about 45 minutes") and after it
        # in the same clause, where a comma does not end it ("Within 45 minutes, we expect ...").
        own = set(hedges)
        rest = _AFTER_CLAUSE.match(text, end, min(len(text), end + _FIRST_LOOK)).group()
        if any(word in own for word in [*words, *_WORD.findall(text[start:end].lower() + " " + rest.lower())]):
            return True
    return False


"""The deterministic fallback edit of the self-critique pipeline.

After the model has failed to apply the required changes three times, this edits its last
candidate directly: every must-remove phrase is deleted, every missing must-include phrase is
appended as its own sentence, and the text is tidied so the result reads as clean prose. The
output still goes through the patch guard. Plain Python: no Django here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agents.core.phrases import normalize_phrase, phrase_present

# Marks where a phrase was deleted until tidying is done; never part of real text.
_CUT = "\x00"


def _phrase_pattern(phrase: str) -> re.Pattern | None:
    """Matches ``phrase`` the way :func:`phrase_present` sees it: its words in order, separated by
    any run of punctuation or space, as whole words, plus its own trailing . ! ? when it has one
    (so deleting "The issue is resolved." takes the full stop with it)."""
    words = normalize_phrase(phrase).split()
    if not words:
        return None
    gap = r"[^a-zA-Z0-9%]+"
    body = gap.join(re.escape(w).replace("%", r"\s*%") for w in words)
    tail = r"(?:\s*[.!?])?" if phrase.rstrip()[-1:] in ".!?" else ""
    # Marks the phrase itself starts with go with it ("/v2/orders" takes its "/"), where written;
    # not quotes or brackets, whose other half the phrase does not hold.
    lead = re.match(r"[^a-zA-Z0-9%\s\"'“”‘’()\[\]{}<>]*", phrase.strip()).group()
    head = rf"(?:{re.escape(lead)})?" if lead else ""
    return re.compile(rf"{head}(?<![a-zA-Z0-9%]){body}(?![a-zA-Z0-9%]){tail}", re.IGNORECASE | re.ASCII)


def _delete(text: str, must_remove: Sequence[str]) -> str:
    patterns = [p for p in map(_phrase_pattern, must_remove) if p is not None]
    # A deletion can bring two halves of a phrase together ("x x y y" minus "x y"): repeat until
    # nothing matches. Each round shortens the text, so this ends.
    changed = True
    while changed:
        changed = False
        for pattern in patterns:
            text, count = pattern.subn(_CUT, text)
            changed = changed or count > 0
    return text


def _drop_emptied_sentences(text: str) -> str:
    """A sentence that was nothing but deleted phrases goes with its full stop: "Line one.
    Resolved. Line two" minus "resolved" is "Line one. Line two", not "Line one.. Line two"."""
    text = re.sub(r"\n[ \t]*\x00[ \t\x00,;:]*[.!?]+[ \t]*(?=\n)", "", text)  # a whole line
    return re.sub(r"(\A|[.!?]|\n)([ \t]*)\x00[\s\x00,;:]*[.!?]+", r"\1\2", text)


def _capitalize_after_cuts(text: str) -> str:
    """A deletion at a sentence start can leave the next word in lower case: capitalise it.
    Only there: a lower-case word the author wrote ("e.g. this") is left alone."""

    def upper(m: re.Match) -> str:
        return m.group(1) + m.group(2) + m.group(3).upper()

    return re.sub(r"(\A\s*|[.!?]\s+|\n\s*)(\x00[\s\x00,;:]*)([a-z])", upper, text)


def tidy(text: str) -> str:
    """Clean up the marks a deletion leaves: no "..", no " ,", no dangling comma at a sentence end,
    no double spaces, no space before punctuation, no empty quotes or brackets."""
    text = text.replace(_CUT, " ").replace("\r\n", "\n").replace("\r", "\n")
    previous = None
    while previous != text:  # one fix can expose another (", ." -> "." next to "."), so repeat
        previous = text
        text = re.sub(r"[^\S\n]+", " ", text)  # spaces and tabs, not line breaks
        text = re.sub(r" *\n *", "\n", text)
        text = re.sub(r"\n{3,}", "\n\n", text)
        text = re.sub(r"\(\s*\)|\[\s*\]|\"\s*\"|“\s*”|‘\s*’", " ", text)
        text = re.sub(r"[ \t]+([.,!?;:])", r"\1", text)  # no space before punctuation
        text = re.sub(r",+(?=[.!?;:,]|\s*$)", "", text)  # no dangling comma
        text = re.sub(r"([.!?;:])[ \t]*,", r"\1", text)  # no comma opening a sentence
        # No colon or semicolon opening a sentence, or doubled: deleting the label of "Affected
        # endpoints: /v2/orders" must not leave "2.1%.: /v2/orders".
        text = re.sub(r"([.!?;:])[ \t]*[;:]+", r"\1", text)
        text = re.sub(r"^[ \t]*[,;:.!?]+[ \t]*", "", text, flags=re.MULTILINE)  # emptied start
        text = re.sub(r"([.!?])(?:[ \t]*[.!?])+", r"\1", text)  # no "..", no ". ."
        text = re.sub(r"([;:])[ \t]*(?=[.!?])", "", text)
        text = text.strip()
    return text


def _as_sentence(phrase: str) -> str:
    """The phrase as its own sentence: original case, a capital first letter, a full stop."""
    sentence = " ".join(phrase.split())
    if sentence[:1].islower():
        sentence = sentence[0].upper() + sentence[1:]
    if sentence[-1:] not in ".!?":
        sentence += "."
    return sentence


def _end_sentence(text: str) -> str:
    """Make sure what comes before an appended sentence ends with terminal punctuation."""
    text = text.rstrip().rstrip(",;:").rstrip()
    if text and not re.search(r"[.!?][\"'”’)\]]*$", text):
        text += "."
    return text


def apply_fallback(text: str, must_include: Sequence[str], must_remove: Sequence[str]) -> str:
    """Delete every must-remove phrase, append every missing must-include phrase, tidy."""
    text = tidy(_capitalize_after_cuts(_drop_emptied_sentences(_delete(text, must_remove))))
    for phrase in must_include:
        if not normalize_phrase(phrase) or phrase_present(phrase, text):
            continue
        text = f"{_end_sentence(text)} {_as_sentence(phrase)}".strip()
        # Tidying touches only spaces and punctuation, so it keeps every phrase as phrase_present
        # sees it; it catches a phrase that brings its own "  " or "..".
        text = tidy(text)
    return text

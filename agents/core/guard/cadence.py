"""What a sentence about the next update looks like ("we will post the next update within 30 minutes",
"we'll update this page tomorrow morning"): a promise about communication, not about the fix. The
claim checks read such a sentence's time as a cadence (``incident_claims.is_cadence``), and grounding
reads its day as the cadence's; the numbers check lets the text give the next update's time where the
incident gives none. Plain Python: no Django here."""

from __future__ import annotations

import re

CADENCE = re.compile(
    r"\b(?:next|further|another|new|more|regular|follow-up|final)\s+(?:status\s+)?updates?\b"
    r"|\bupdates?\s+(?:you|this\s+page|customers|again|every|shortly|soon|as\s+(?:soon|we))\b"
    r"|\bkeep\s+(?:you|customers|everyone)\s+(?:posted|updated|informed)\b"
    r"|\b(?:post|share|send|provide|publish|give)\s+(?:you\s+)?(?:an?\s+|another\s+|the\s+next\s+|further\s+|more\s+)?"
    r"(?:updates?|information|details|news)\b"
    r"|\b(?:will|['’]ll)\s+update\s+(?:(?:you|again|here|this\s+(?:page|incident|post|thread)|(?:our|the)\s+(?:status\s+)?page|customers|"
    r"everyone|members|users|clients|subscribers|merchants|partners)\s+){0,2}"
    r"(?:within|in|every|by|at)\b"
    r"|\b(?:share|say|tell\s+you)\s+more\b"
    # "we'll post more here by 14:00"
    r"|\bpost\s+more(?=\s*(?:[.,;!]|$|(?:here|on\s+this|as|when|once|within|in|by|at|soon|shortly)\b))"
    r"|\blet\s+(?:you|customers|everyone)\s+know\b"
    r"|\bback\s+with\s+(?:more|an\s+update|news)\b"  # "we'll be back with more at 11:00 GMT"
    r"|\b(?:will|['’]ll)\s+(?:post|write|report|check\s+in)\s+(?:here\s+)?again\b"  # "we'll post again by 15:00 GMT"
    r"|\b(?:more|further)\s+(?:details|information|news)\b"
    r"|(?:^|\n)\s*(?:more|updates?)\s+(?:in|within|by|at|soon|shortly|to\s+follow)\b",  # "More in 30 minutes."
    re.IGNORECASE,
)

# Where the clause about the next update ends: "we'll post another update in 30 minutes, once the fix is
# live" says no more of the update after the comma. A time's or a number's own punctuation ("15:00",
# "1.5 hours") ends nothing.
_CLAUSE_END = re.compile(r"(?<!\d)[,;:.!?]|[,;:.!?](?!\d)"
                         r"|\s(?:and|but|while|once|when|after|until|if|as\s+soon\s+as)\s", re.IGNORECASE)


# Every way of speaking of the next update has one of these words: most sentences have none, and this
# costs a tenth of trying the whole pattern on them.
_CADENCE_WORD = re.compile(r"updat|posted|informed|information|details|news|more|know|again", re.IGNORECASE)


def cadence_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` speaks of the next update, each to the end of its clause ("we'll update this page
    tomorrow morning", "next update in 30 minutes")."""
    if not _CADENCE_WORD.search(text):
        return []
    spans = []
    for m in CADENCE.finditer(text):
        end = _CLAUSE_END.search(text, m.end())
        spans.append((m.start(), end.start() if end else len(text)))
    return spans


# Where a clause opens: after a sentence's or a clause's punctuation (not a time's or a number's own),
# or before a conjunction.
_CLAUSE_OPEN = re.compile(r"(?:(?<!\d)[,;:.!?]|[,;:.!?](?!\d))\s*|\s(?:and|but|while)\s", re.IGNORECASE)


def cadence_clauses(text: str) -> list[tuple[int, int]]:
    """Each clause of ``text`` that speaks of the next update, whole: "By 15:00 UTC we'll share another
    update" from its first word, "ordering will be back by 12:00, and we'll update this page then" from
    "and" only."""
    clauses = []
    for start, end in cadence_spans(text):
        opens = [m.end() for m in _CLAUSE_OPEN.finditer(text, 0, start)]
        clauses.append((opens[-1] if opens else 0, end))
    return clauses

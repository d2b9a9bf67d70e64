"""The audit record of a revision (SPEC §3.2 step 5) and the word diff the run page highlights.

Plain Python: no Django here.
"""

from __future__ import annotations

import difflib
import re

from agents.text import normalize, text_hash

EXCERPT_LINES = 6
CHUNK_CHARS = 80

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip().splitlines()]


def _sentences(text: str) -> list[str]:
    normalized = normalize(text)
    return _SENTENCE_END.split(normalized) if normalized else []


def _chunks(text: str) -> list[str]:
    normalized = normalize(text)
    return [normalized[i : i + CHUNK_CHARS] for i in range(0, len(normalized), CHUNK_CHARS)]


def diff_units(before: str, after: str) -> tuple[str, list[str], list[str]]:
    """(unit name, before units, after units): lines when either text has several lines, else
    sentences when either has more than one, else 80-character chunks (§3.2 step 5)."""
    if len(_lines(before)) > 1 or len(_lines(after)) > 1:
        return "lines", _lines(before), _lines(after)
    if len(_sentences(before)) > 1 or len(_sentences(after)) > 1:
        return "sentences", _sentences(before), _sentences(after)
    return "chunks", _chunks(before), _chunks(after)


def audit_record(before: str, after: str, *, risks: int = 0, required_changes: int = 0) -> dict:
    """What changed between the draft and the final text, for the run page and the database.

    Character counts, delta and growth are all measured on the normalised texts, the same form
    the hashes describe, so the numbers in one record always agree with each other.
    """
    before_chars, after_chars = len(normalize(before)), len(normalize(after))
    unit, a, b = diff_units(before, after)
    diff = list(difflib.unified_diff(a, b, fromfile="before", tofile="after", lineterm=""))
    changes = [
        f"{line[0]} {line[1:]}"
        for line in diff
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    return {
        "changed": normalize(before) != normalize(after),
        "before_hash": text_hash(before),
        "after_hash": text_hash(after),
        "before_chars": before_chars,
        "after_chars": after_chars,
        "delta": after_chars - before_chars,
        "length_increase_pct": (
            round((after_chars - before_chars) / before_chars * 100, 2) if before_chars else 0
        ),
        "risks_count": risks,
        "required_changes_count": required_changes,
        "diff_unit": unit,
        "unified_diff": "\n".join(diff),
        "diff_excerpt": changes[:EXCERPT_LINES],
    }


_TOKEN = re.compile(r"\s+|\S+\s*")


def word_diff(before: str, after: str) -> list[tuple[str, str]]:
    """Word-level edit ops for the UI: ("equal" | "insert" | "delete", text).

    Each token is a word with the whitespace after it, so joining the equal and delete parts
    gives ``before`` back exactly, and joining the equal and insert parts gives ``after``.
    """
    a, b = _TOKEN.findall(before), _TOKEN.findall(after)
    ops: list[tuple[str, str]] = []

    def emit(op: str, tokens: list[str]) -> None:
        if not tokens:
            return
        if ops and ops[-1][0] == op:  # merge neighbours of the same kind
            ops[-1] = (op, ops[-1][1] + "".join(tokens))
        else:
            ops.append((op, "".join(tokens)))

    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            emit("equal", a[i1:i2])
        else:
            emit("delete", a[i1:i2])
            emit("insert", b[j1:j2])
    return ops

"""The audit record of a self-critique revision and the word diff the run page highlights.

Plain Python: no Django here.
"""

from __future__ import annotations

import difflib
import re

from agents.core.text import normalize, text_hash

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
    sentences when either has more than one, else 80-character chunks."""
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
        text = "".join(tokens)
        if not text:
            return
        # Neighbours of the same kind merge, except a change of spacing alone, so that a space
        # added after a kept word never joins the words inserted after it.
        if ops and ops[-1][0] == op and (op == "equal" or (text.strip() and ops[-1][1].strip())):
            ops[-1] = (op, ops[-1][1] + text)
        else:
            ops.append((op, text))

    # Words are compared without their trailing whitespace: "guidance." at the end of a text is the
    # same word as "guidance. " before an added sentence, so it never shows as removed and re-added.
    keys_a, keys_b = [t.rstrip() for t in a], [t.rstrip() for t in b]
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, keys_a, keys_b, autojunk=False).get_opcodes():
        if tag != "equal":
            emit("delete", a[i1:i2])
            emit("insert", b[j1:j2])
            continue
        for old, new in zip(a[i1:i2], b[j1:j2], strict=True):
            if old == new:
                emit("equal", [old])
                continue
            word = old.rstrip()  # only the whitespace after the word differs
            emit("equal", [word])
            emit("delete", [old[len(word):]])
            emit("insert", [new[len(word):]])
    return ops

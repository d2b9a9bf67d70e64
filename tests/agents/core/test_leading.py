"""Every pattern written with ``led_by`` names each letter one of its alternatives can start with.

The lookahead only lets the scan skip words faster: a first letter it leaves out would make the
pattern miss that alternative, silently. The pattern is read with Python's own regex parser (a
private module: reading it here keeps the product off it) for the characters its matches can start
with."""

from __future__ import annotations

import importlib
import pkgutil
import re
import re._constants as sre
import re._parser as sre_parse

import pytest

import agents.core.guard
from agents.core.guard.leading import WRITTEN, led_by

# Every module of the guard, so every pattern written with led_by is in WRITTEN.
for _module in pkgutil.iter_modules(agents.core.guard.__path__):
    importlib.import_module(f"agents.core.guard.{_module.name}")

_ZERO_WIDTH = {sre.AT, sre.ASSERT, sre.ASSERT_NOT}
_REPEATS = {sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT}


def first_chars(items) -> tuple[set[str] | None, bool]:
    """The characters a match of the parsed sequence ``items`` can start with (None: any), and
    whether it can match the empty text."""
    found: set[str] = set()
    for op, arg in items:
        chars, empty = _node(op, arg)
        if chars is None:
            return None, False
        found |= chars
        if not empty:
            return found, False
    return found, True


def _node(op, arg) -> tuple[set[str] | None, bool]:
    if op in _ZERO_WIDTH:
        return set(), True
    if op is sre.LITERAL:
        return {chr(arg)}, False
    if op is sre.IN:
        chars: set[str] = set()
        for kind, value in arg:
            if kind is sre.LITERAL:
                chars.add(chr(value))
            elif kind is sre.RANGE:
                chars |= {chr(c) for c in range(value[0], value[1] + 1)}
            else:  # a negated set, a category (\w, \s): any character
                return None, False
        return chars, False
    if op is sre.BRANCH:
        found: set[str] = set()
        empty = False
        for branch in arg[1]:
            chars, can_be_empty = first_chars(branch)
            if chars is None:
                return None, False
            found |= chars
            empty |= can_be_empty
        return found, empty
    if op is sre.SUBPATTERN:
        return first_chars(arg[-1])
    if op is sre.ATOMIC_GROUP:
        return first_chars(arg)
    if op in _REPEATS:
        chars, empty = first_chars(arg[2])
        return chars, empty or arg[0] == 0
    return None, False  # anything else (a back reference, any character): any character


def _letters_missing(letters: str, pattern: str, flags: int = re.IGNORECASE) -> set[str]:
    chars, empty = first_chars(sre_parse.parse(pattern, flags))
    assert chars is not None and not empty, f"{pattern!r} can start anywhere: no lookahead can lead it"
    named = set(letters) | ({c.upper() for c in letters} if flags & re.IGNORECASE else set())
    return {c for c in chars if c not in named and c.lower() not in named}


def test_the_guard_writes_patterns_with_led_by():
    assert len(WRITTEN) >= 10


@pytest.mark.parametrize(("letters", "pattern"), WRITTEN, ids=[p[:40] for _, p in WRITTEN])
def test_each_alternative_starts_with_a_named_letter(letters, pattern):
    assert _letters_missing(letters, pattern) == set()


def test_a_letter_left_out_is_found():
    # "because" starts with a b the lookahead does not name: the scan would skip it.
    assert _letters_missing("cd", r"\b(?:caused\s+by|due\s+to|because)\b") == {"b"}
    assert _letters_missing("abcd", r"\b(?:(?:the\s+)?cause|due|because)\b") == {"t"}


def test_the_lookahead_changes_no_match():
    words = r"\b(?:caused\s+by|due\s+to|because(?:\s+of)?)\s+"
    plain, led = re.compile(words, re.IGNORECASE), re.compile(led_by("bcd", words), re.IGNORECASE)
    text = "Delays were CAUSED BY a backlog, due to a fault, because of load; the cause: none."
    assert [m.span() for m in led.finditer(text)] == [m.span() for m in plain.finditer(text)]
    assert len([m.span() for m in led.finditer(text)]) == 3

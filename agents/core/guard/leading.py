"""Word patterns that say which letters they start with, so a scan skips every other word fast.

Python's regex engine tries a pattern at each position of a text. A case-insensitive alternation of
words behind ``\\b`` ("caused by|due to|because ...") is tried whole at every one of them, and the
checks scan every text with dozens of such patterns: most of the guard's time went there. A
lookahead for the alternatives' first letters, ``(?=[bcd])``, fails at once where no alternative can
start, and changes no match. ``led_by`` writes it; ``tests/agents/core/test_leading.py`` reads
every pattern written with it and fails where an alternative can start with a letter the lookahead
does not name, so a word added later cannot be skipped silently. Plain Python: no Django here.
"""

from __future__ import annotations

# (letters, pattern) of every pattern led_by wrote: what the test reads.
WRITTEN: list[tuple[str, str]] = []


def led_by(letters: str, pattern: str) -> str:
    """``pattern``, tried only where one of ``letters`` (lower case; the pattern's own flags decide
    whether upper case counts too) starts the text that follows."""
    WRITTEN.append((letters, pattern))
    return f"(?=[{letters}])(?:{pattern})"

"""What every door refuses in text a person or a script types (forms, admin, query strings, the
command line): C0 and C1 control characters other than tab, line feed and carriage return, which a
textarea sends. PostgreSQL cannot store a NUL at all; no page should show the others.
Plain Python: no Django here.
"""

from __future__ import annotations

import re

CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def control_character(value: str) -> str | None:
    """The first refused control character in ``value``, or None."""
    found = CONTROL.search(value)
    return found.group() if found else None


# A title is one line of text: it becomes an email's subject, where a line break would end the
# header (the mail library then refuses the whole email). Tabs and line breaks are refused too,
# Unicode's own line and paragraph separators with them.
NOT_ONE_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
LINE_BREAKS = frozenset("\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")


def not_one_line(value: str, what: str) -> str | None:
    """Why ``value`` cannot be the ``what`` (a title: one line, no control character), or None."""
    found = NOT_ONE_LINE.search(value)
    if not found:
        return None
    char = found.group()
    kind = "a line break" if char in LINE_BREAKS else "a tab" if char == "\t" else "a control character"
    return f"The {what} must be one line: it contains {kind} (U+{ord(char):04X}); remove it."


# How much text every door takes: the start-run form, the API and `run_pipeline` alike.
GOAL_MAX_CHARS = 2000
TICKET_MAX_CHARS = 4000  # a routing run's goal is a support ticket
# An incident context as JSON (UTF-8), whichever door it comes through: the incident admin form
# (its facts together) and `run_pipeline --context` (the file). The demo context is about 0.6 KB.
CONTEXT_MAX_BYTES = 64 * 1024

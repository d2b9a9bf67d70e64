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


# How much text every door takes: the start-run form, the API and `run_pipeline` alike.
GOAL_MAX_CHARS = 2000
TICKET_MAX_CHARS = 4000  # a routing run's goal is a support ticket
# An incident context as JSON (UTF-8), whichever door it comes through: the incident admin form
# (its facts together) and `run_pipeline --context` (the file). The demo context is about 0.6 KB.
CONTEXT_MAX_BYTES = 64 * 1024

"""What every door refuses in text a person or a script types (forms, admin, query strings, the
command line): C0 and C1 control characters other than tab, line feed and carriage return, which a
textarea sends. PostgreSQL cannot store a NUL at all; no page should show the others.
Plain Python: no Django here.
"""

from __future__ import annotations

import json
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
# An incident context as JSON (UTF-8), whichever door it comes through: every change to an incident
# (agents.incidents.update_incident: the admin, the API), starting a run on one (the start-run form,
# the API) and `run_pipeline --context` (the file). The demo context is about 0.6 KB.
CONTEXT_MAX_BYTES = 64 * 1024
# The lists ops writes for the model (approved actions, key messages; regions too): every entry is
# sent on every model call, so each list and each entry is bounded, not only the context as a whole.
CONTEXT_LISTS = ("regions", "components", "approved_actions", "key_messages")
LIST_MAX_ITEMS = 30
ITEM_MAX_CHARS = 500


def list_problem(name: str, items) -> str | None:
    """Why the incident's list ``name`` is refused (too many entries, an entry too long), or None."""
    if not isinstance(items, list):
        return None
    if len(items) > LIST_MAX_ITEMS:
        return f"“{name}”: {len(items):,} entries; an incident holds at most {LIST_MAX_ITEMS}."
    for number, item in enumerate(items, start=1):
        if isinstance(item, str) and len(item) > ITEM_MAX_CHARS:
            return f"“{name}”: entry {number} has {len(item):,} characters; an entry holds at most {ITEM_MAX_CHARS}."
    return None


def context_size(context) -> int:
    """The bytes an incident context takes as UTF-8 JSON."""
    return len(json.dumps(context, ensure_ascii=False, default=str).encode("utf-8", "replace"))


def context_size_problem(context) -> str | None:
    """Why an incident context is refused as a whole (over ``CONTEXT_MAX_BYTES`` as UTF-8 JSON), or None."""
    size = context_size(context)
    if size <= CONTEXT_MAX_BYTES:
        return None
    return (f"The incident context would take {size:,} bytes as JSON; an incident context holds at most "
            f"{CONTEXT_MAX_BYTES:,} bytes ({CONTEXT_MAX_BYTES // 1024} KB).")


def context_problem(context) -> str | None:
    """Why an incident context is refused, by its lists' bounds and then its size, or None: what every
    door that writes or starts a run on an incident context checks."""
    for name in CONTEXT_LISTS:
        if problem := list_problem(name, context.get(name)):
            return problem
    return context_size_problem(context)

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

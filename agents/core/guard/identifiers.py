"""new_incident_id and new_severity_label: an incident id or a severity label the evidence does not
name (docs/contract.md, 'Fact and claim checks'). Plain Python: no Django here."""

from __future__ import annotations

import re

from agents.core.guard.contacts import prose
from agents.core.guard.support import Support
from agents.core.guard.violation import Violation

INCIDENT_ID = re.compile(r"\binc_[a-z0-9_]+\b", re.IGNORECASE)
SEVERITY = re.compile(r"\bp[0-5]\b", re.IGNORECASE)


def find(text: str, support: Support) -> list[Violation]:
    """The incident ids, then the severity labels, the allowed text does not name, in reading order."""
    text = prose(text, support)
    return [*_new_incident_ids(text, support.allowed_text), *_new_severity_labels(text, support.allowed_text)]


def _new_incident_ids(text: str, allowed_text: str) -> list[Violation]:
    named = list(INCIDENT_ID.finditer(text))  # the (long) allowed text is read only for a text that names one
    allowed_ids = {m.group().lower() for m in INCIDENT_ID.finditer(allowed_text)} if named else set()
    return [Violation("new_incident_id", m.group(), f"“{m.group()}” is not an incident in the context.")
            for m in named if m.group().lower() not in allowed_ids]


def _new_severity_labels(text: str, allowed_text: str) -> list[Violation]:
    named = list(SEVERITY.finditer(text))
    allowed_labels = {m.group().lower() for m in SEVERITY.finditer(allowed_text)} if named else set()
    return [Violation("new_severity_label", m.group(), f"Severity “{m.group()}” is not the one in the context.")
            for m in named if m.group().lower() not in allowed_labels]


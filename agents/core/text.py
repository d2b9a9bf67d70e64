"""Text helpers shared by every gate, the audit and the UI: one normalisation, one hash."""

import hashlib
import json
from collections.abc import Mapping
from typing import Any


def normalize(text: str) -> str:
    """Trim and collapse every run of whitespace to one space."""
    return " ".join(text.split())


def text_hash(text: str) -> str:
    """First 12 hex characters of SHA-256 of the normalised text. The only hash in the product."""
    return hashlib.sha256(normalize(text).encode("utf-8")).hexdigest()[:12]


def canonical_json(value: Any) -> str:
    """Stable JSON: sorted keys, no insignificant whitespace, unicode kept as is."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def strings_in(value: Any) -> list[str]:
    """Every string inside a JSON-like value (mappings, lists, tuples), in order."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for item in value.values() for s in strings_in(item)]
    if isinstance(value, (list, tuple)):
        return [s for item in value for s in strings_in(item)]
    return []

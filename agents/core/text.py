"""Text helpers shared by every gate, the audit and the UI: one normalisation, one hash."""

import hashlib
import json
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

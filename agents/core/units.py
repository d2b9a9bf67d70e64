"""Units of incident facts: how a fact's value is read, shown and checked.

A fact is stored as text with a unit; the run context carries the typed value (a number for every
unit but ``text``) and, beside the values, each fact's label and unit (``fact_meta``), so the
number rules know which values are ratios. Plain Python: no Django here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

UNITS = {
    "%": "percent (27 is 27%)",
    "ratio": "ratio (0.034 is 3.4%)",
    "minutes": "minutes",
    "count": "count",
    "currency": "currency amount",
    "ms": "milliseconds",
    "text": "free text",
}
NUMERIC_UNITS = frozenset(UNITS) - {"text"}
# The currency codes an amount may be written with ("USD 38.20", "14.20 EUR").
CURRENCY_CODES = ("EUR", "USD", "GBP", "AUD", "CAD", "NZD", "CHF", "JPY", "SGD", "INR")
# The time zones a time is written with ("18:00 UTC", "6 pm CET", "18:00 UTC+1", "18:00Z", "10:00 ET"),
# upper case only: a regular expression's alternatives.
TIME_ZONES = (
    r"(?:UTC|GMT)(?:\s?[+-]\d{1,2}(?::?\d{2})?)?|Z|CES?T|EES?T|WES?T|BST|IST|MSK|[ECMP][SD]?T|AK[SD]T|HST"
    r"|JST|KST|SGT|HKT|AE[SD]T|ACST|AWST|NZ[SD]T"
)
FACT_VALUE_MAX_CHARS = 200


def parse_value(text: str, unit: str) -> int | float | str:
    """The typed value of a fact written as ``text`` in ``unit``; ValueError says what is wrong."""
    if unit not in UNITS:
        raise ValueError(f"“{unit}” is not a unit; use one of: {', '.join(UNITS)}.")
    text = text.strip()
    if not text:
        raise ValueError("A fact needs a value.")
    if len(text) > FACT_VALUE_MAX_CHARS:
        raise ValueError(f"A fact's value holds at most {FACT_VALUE_MAX_CHARS} characters.")
    if unit == "text":
        return text
    try:
        number = Decimal(text.removesuffix("%").strip() if unit == "%" else text)
    except InvalidOperation:
        raise ValueError(f"“{text}” is not a number (the unit {unit} needs one, like 27 or 0.034).") from None
    if not number.is_finite() or abs(number) > Decimal(10) ** 15:
        raise ValueError(f"“{text}” is not a usable number.")
    if unit == "ratio" and not (0 <= number <= 1):
        raise ValueError(f"A ratio lies between 0 and 1 (0.034 is 3.4%); got {text}.")
    if unit in ("count", "minutes", "ms") and number < 0:
        raise ValueError(f"A {unit} value cannot be negative; got {text}.")
    if unit == "count" and number != number.to_integral_value():
        raise ValueError(f"A count is a whole number; got {text}.")
    return int(number) if number == number.to_integral_value() else float(number)


def show(value: Any, unit: str) -> str:
    """A fact's value for people: 0.034 ratio → 3.4%, 27 % → 27%, 45 minutes → 45 minutes."""
    if unit == "text" or isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if unit == "ratio":
        return f"{Decimal(str(value)) * 100:f}".rstrip("0").rstrip(".") + "%"
    if unit == "%":
        return f"{_plain(value)}%"
    if unit in ("minutes", "ms"):
        return f"{_plain(value)} {'minutes' if unit == 'minutes' else 'ms'}"
    return _plain(value)


def _plain(value: int | float) -> str:
    """Every digit, no exponent: 1234567 stays 1234567 (``:g`` wrote 1.23457e+06), 27.0 is 27."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return f"{Decimal(str(value)).normalize():f}"


def number_value(value: Any) -> Decimal | None:
    """A fact's value as a number (an int, a float, a Decimal or a numeral in text), or None: true and
    false are no numbers, and neither is an infinity or NaN."""
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal, str)):
        return None
    try:
        number = Decimal(str(value).strip())
    except ArithmeticError:
        return None
    return number if number.is_finite() else None


def ratio_values(context: Mapping[str, Any]) -> frozenset[Decimal] | None:
    """The values of the context's ratio facts, which support their percentages; None when the
    context does not say its facts' units (a context from before facts had units)."""
    meta = context.get("fact_meta")
    incident = context.get("incident")
    if not isinstance(meta, list) or not isinstance(incident, Mapping):
        return None
    ratios = set()
    for info in meta:
        value = number_value(incident.get(info.get("key"))) if isinstance(info, Mapping) else None
        if value is not None and info.get("unit") == "ratio":
            ratios.add(value)
    return frozenset(ratios)


# A context without units (a context file's plain shape) names a percentage by its key: "affected_checkout_pct".
_PERCENT_KEY = re.compile(r"_(?:pct|percent|percentage)$", re.IGNORECASE)


def unit_of(key: str, unit: str) -> str:
    """A fact's unit as the checks read it: the one the context gives, else "%" for a key that names a
    percentage ("upload_failure_pct": 30 is 30%). :func:`fact_meta` keeps the unit given, so what the
    offline model drafts from a plain context is unchanged."""
    return "%" if not unit and _PERCENT_KEY.search(key) else unit


def fact_meta(context: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(key, label, unit) of each fact of the context, in the incident's order. A context from before
    facts had units names its facts by their keys, with no unit."""
    meta = context.get("fact_meta")
    incident = context.get("incident") if isinstance(context.get("incident"), Mapping) else {}
    if isinstance(meta, list):
        return [(str(m["key"]), str(m.get("label") or m["key"]), str(m.get("unit") or "text"))
                for m in meta if isinstance(m, Mapping) and isinstance(m.get("key"), str)]
    identity = {"incident_id", "title", "severity", "status"}
    return [(key, key.replace("_", " ").capitalize(), "") for key in incident if key not in identity]

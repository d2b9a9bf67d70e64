"""The fact and claim checks (docs/contract.md, 'Fact and claim checks').

A text may only state numbers, incident ids, severity labels, regions and restricted claims that
the *allowed text* supports. The patch guard passes the canonical context JSON plus the original
draft; the final-answer check passes the context alone (a draft is not its own evidence).
Plain Python: no Django here.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal

import re2

from agents.core.claims import (
    blame_findings,
    incident_state,
    is_cadence,
    is_forecast,
    place_findings,
    scope_findings,
    state_message,
    state_supports,
    weekday_findings,
)
from agents.core.contacts import (
    declared,
    find_contacts,
    find_markup,
    markup_message,
    unknown_contact_message,
)
from agents.core.patterns import UnsafePattern, compile_pattern, matching, screen, word_pattern
from agents.core.policy import ClaimFamily, GuardRules
from agents.core.text import strings_in

# The order callers rely on: the first violation's check becomes the stop reason.
CHECKS = (
    "no_new_facts",
    "new_incident_id",
    "new_severity_label",
    "new_region",
    "restricted_claims",
    # Claims checked against the incident (agents.core.claims, docs/guard.md)
    "state_claim",
    "scope_claim",
    "liability",
    "data_safety",
    "time_commitment",
    # Links, contacts and markup (agents.core.contacts)
    "unknown_contact",
    "markup",
    # agents.core.internal: a detail customers must not see. Last: where the number or id it carries
    # is also unsupported (an internal fact supports nothing), that stop comes first, as it always has.
    "internal_detail",
    # Well-formed text that says something (agents.core.wellformed): after the facts, so a text
    # with an unsupported number stops for that number.
    "malformed_text",
    "uninformative",
)


@dataclass(frozen=True)
class Violation:
    check: str  # one of CHECKS
    found: str  # the offending token or phrase, as written in the checked text
    message: str
    family: str = ""  # restricted_claims: the claim family the words belong to


@dataclass(frozen=True)
class Number:
    found: str  # as written: "27%", "3.4 %", "forty-five", "a couple of hours"
    value: Decimal  # Decimal keeps 0.034 * 100 == 3.4 exact, and 45 == 45.0
    percent: bool
    start: int
    # The unit, when the text gives one: "%" (percent), "s" (a duration, ``seconds`` holds it in
    # seconds), "ratio" (a JSON value named *_rate), or None (a bare number).
    unit: str | None = None
    seconds: Decimal | None = None


# ---------------------------------------------------------------- numbers

# `\b` in front keeps digits inside identifiers (inc_2041, P1) out, as the contract's regex does.
# Unlike the contract's trailing `\b`, the `%` is kept ("27%"), one space before it is allowed
# ("3.4 %"), and "percent" counts too. Thousands groups ("1,000") are one number.
_PERCENT = r"(?:\s?%|\s+(?:percent|per\s+cent)\b)"
_DIGITS = re.compile(r"\b(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(" + _PERCENT + r")?", re.IGNORECASE)
_PLAIN_DIGITS = re.compile(r"\b\d+(?:\.\d+)?")

_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}  # fmt: skip
_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50,
    "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
}  # fmt: skip
_SCALES = {"hundred": 100, "thousand": 1000}
_NUMBER_WORDS = {**_UNITS, **_TENS, **_SCALES}

# "one" is a pronoun or determiner far more often than a quantity ("no one", "one of our
# partners"), so a lone "one" counts as a number only before a unit ("one hour", "one percent").
# Inside a compound ("twenty-one", "one hundred") it is always a number. "zero" always counts:
# "zero downtime" is a quantitative promise the context has to support.
_UNIT_AFTER_ONE = re.compile(
    r"[\s-]+(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?"
    r"|percent|per\s+cent)\b|\s?%",
    re.IGNORECASE,
)
_WORD_PERCENT = re.compile(_PERCENT, re.IGNORECASE)


def _kind(word: str) -> str:
    if word in _SCALES:
        return word
    if word in _TENS:
        return "ten"
    return "teen" if _UNITS[word] >= 10 else "unit"


def _can_follow(kinds: list[str], word: str) -> bool:
    """Whether ``word`` continues the number spelled so far (else it starts a new number)."""
    last, nxt = kinds[-1], _kind(word)
    if word == "zero":
        return False
    if nxt == "unit":
        return last in ("ten", "hundred", "thousand")
    if nxt in ("teen", "ten"):
        return last in ("hundred", "thousand")
    if nxt == "hundred":
        # one hundred per thousand-group: "two thousand three hundred", never "one hundred hundred"
        since_thousand = kinds[kinds.index("thousand") + 1 :] if "thousand" in kinds else kinds
        return last in ("unit", "teen") and "hundred" not in since_thousand
    return "thousand" not in kinds  # a second "thousand" starts a new number


def _spelled_value(words: list[str]) -> int:
    total = current = 0
    for word in words:
        if word == "hundred":
            current = (current or 1) * 100
        elif word == "thousand":
            total += (current or 1) * 1000
            current = 0
        else:
            current += _NUMBER_WORDS[word]
    return total + current


def _spelled_numbers(text: str) -> list[Number]:
    tokens = list(re.finditer(r"[A-Za-z]+", text))
    numbers = []
    i = 0
    while i < len(tokens):
        word = tokens[i].group().lower()
        if word not in _NUMBER_WORDS:
            i += 1
            continue
        group, kinds = [tokens[i]], [_kind(word)]
        j = i + 1
        while j < len(tokens):
            gap = text[group[-1].end() : tokens[j].start()]
            nxt = tokens[j].group().lower()
            if re.fullmatch(r"[\s-]+", gap) and nxt in _NUMBER_WORDS and _can_follow(kinds, nxt):
                group.append(tokens[j])
                kinds.append(_kind(nxt))
                j += 1
                continue
            # "one hundred and five"
            if (
                nxt == "and"
                and kinds[-1] in _SCALES
                and j + 1 < len(tokens)
                and tokens[j + 1].group().lower() in _UNITS | _TENS
                and _can_follow(kinds, tokens[j + 1].group().lower())
                and not gap.strip()
                and not text[tokens[j].end() : tokens[j + 1].start()].strip()
            ):
                group.append(tokens[j + 1])
                kinds.append(_kind(tokens[j + 1].group().lower()))
                j += 2
                continue
            break
        words = [t.group().lower() for t in group]
        start, end = group[0].start(), group[-1].end()
        after = text[end:]
        i = j
        if words == ["one"] and not _UNIT_AFTER_ONE.match(after):
            continue
        percent = _WORD_PERCENT.match(after)
        if percent:
            end += percent.end()
        value = Decimal(_spelled_value(words))
        numbers.append(_with_unit(text[start:end], value, start, text[end:], percent=bool(percent)))
    return numbers


# A duration's unit after a number: "45 minutes", "45-minute", "45min", "2h", "300 ms".
_DURATION = re.compile(
    r"(?:[\s-]+|(?=[a-z]))(?:(ms|milliseconds?)|(s|secs?|seconds?)|(m|mins?|minutes?)|(h|hrs?|hours?)"
    r"|(d|days?)|(w|weeks?))\b",
    re.IGNORECASE,
)
_SECONDS = (Decimal("0.001"), Decimal(1), Decimal(60), Decimal(3600), Decimal(86400), Decimal(604800))


def _with_unit(found: str, value: Decimal, start: int, after: str, *, percent: bool = False) -> Number:
    """The number with the unit written right after it (a percent sign was read by the caller)."""
    if percent:
        return Number(found, value, True, start, "%")
    duration = _DURATION.match(after)
    if duration:
        # One-letter units only when written onto the number ("45m"), never after a space ("5 m").
        if not (duration.group(0)[:1].isspace() and len(duration.group(0).strip(" -")) == 1):
            scale = next(_SECONDS[i] for i in range(6) if duration.group(i + 1))
            return Number(found, value, False, start, "s", value * scale)
    return Number(found, value, False, start)


# Quantities written as words that are not number words: "a dozen", "a couple of", "twice", "half".
# A fraction before a unit of time is a duration ("half an hour" = 30 minutes); otherwise a share
# ("half of the checkouts" = 50 %).
_QUANTITY_WORDS = re.compile(
    r"\b(?:(?P<dozen>(?:a\s+|one\s+)?dozen)|(?P<couple>a\s+(?:couple|pair)(?:\s+of)?)"
    r"|(?P<score>a\s+score\s+of)(?!\s+\d)|(?P<twice>twice)|(?P<thrice>thrice)"
    r"|(?P<half>half)|(?P<quarter>(?:a\s+|one\s+)?quarter))\b",
    re.IGNORECASE,
)
_QUANTITY_VALUES = {"dozen": 12, "couple": 2, "score": 20, "twice": 2, "thrice": 3}
_FRACTION_OF_TIME = re.compile(
    r"[\s-]+(?:of\s+)?(?:an?\s+)?(?:(?P<m>minute)|(?P<h>hour)|(?P<d>day))\b", re.IGNORECASE
)
_FRACTIONS = {"half": Decimal("0.5"), "quarter": Decimal("0.25")}


def _quantity_words(text: str) -> list[Number]:
    numbers = []
    for m in _QUANTITY_WORDS.finditer(text):
        kind = m.lastgroup
        if kind in _FRACTIONS:
            of_time = _FRACTION_OF_TIME.match(text, m.end())
            if of_time:
                scale = {"m": 60, "h": 3600, "d": 86400}[of_time.lastgroup]
                seconds = _FRACTIONS[kind] * scale
                numbers.append(Number(m.group() + of_time.group(), seconds / scale, False, m.start(), "s", seconds))
            else:
                numbers.append(Number(m.group(), _FRACTIONS[kind] * 100, True, m.start(), "%"))
            continue
        numbers.append(_with_unit(m.group(), Decimal(_QUANTITY_VALUES[kind]), m.start(), text[m.end():]))
    return numbers


# ---------------------------------------------------------------- dates, times and ids

# A date or a time of day supports only itself, written any way, never a bare number: the 11 of
# "2026-11-22" is a month, not a count of anything. The same holds for the digits of an id.
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = (
    r"(?P<mon>Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sep(?:t|tember)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)
_ISO = re.compile(
    r"\b(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})"
    r"(?:[T ](?P<hh>\d{2}):(?P<mm>\d{2})(?::\d{2}(?:\.\d+)?)?(?P<tz>Z|[+-]\d{2}:?\d{2})?)?\b"
)
_SLASHED = re.compile(r"\b(?P<a>\d{1,2})/(?P<b>\d{1,2})/(?P<y>\d{4})\b")
_DAY_MONTH = re.compile(r"\b(?P<d>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r"\b(?:,?\s+(?P<y>\d{4})\b)?")
_MONTH_DAY = re.compile(r"\b" + _MONTH + r"\.?\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(?P<y>\d{4})\b)?")
# A time zone written after a time ("18:00 UTC", "6 pm CET", "18:00 UTC+1", "18:00Z"): part of the
# time fact. Upper case only (a scoped flag), so "6 pm est." in lower-case prose is no zone.
_ZONES = (
    r"(?:UTC|GMT)(?:\s?[+-]\d{1,2}(?::?\d{2})?)?|Z|CES?T|EES?T|WES?T|BST|IST|MSK|[ECMP][SD]T|AK[SD]T|HST"
    r"|JST|KST|SGT|HKT|AE[SD]T|ACST|AWST|NZ[SD]T"
)
_ZONE = r"\s*(?-i:(?P<tz>" + _ZONES + r"))\b"
_ZONE_OPT = r"(?:" + _ZONE + r")?"
_AMPM = r"\s*(?P<ampm>[ap]\.m\.|[ap]\.?m\b)"  # "pm", "p.m.", never a full stop after "pm"
# A time of day, as one fact: "18:00", "18:00:00", "6:30 pm", "6 pm", "18h00", "18.00 UTC" and
# "6.30 pm" (a dot only with a zone or am/pm: "18.00" alone is a decimal), "1800 UTC" and
# "1800 hours" (four digits only with a zone or "hours"), "6 o'clock", "noon", "midnight". The
# forms are tried in this order, and a later one never re-reads what an earlier one took.
_CLOCK_FORMS = (
    r"\b(?P<hh>\d{1,2}):(?P<mm>\d{2})(?::\d{2})?(?:" + _AMPM + r")?" + _ZONE_OPT,
    r"\b(?P<hh>\d{1,2})h(?P<mm>\d{2})\b" + _ZONE_OPT,
    r"\b(?P<hh>\d{1,2})\.(?P<mm>\d{2})" + _AMPM + _ZONE_OPT,
    r"\b(?P<hh>\d{1,2})\.(?P<mm>\d{2})" + _ZONE,
    r"\b(?P<hh>[01]\d|2[0-3])(?P<mm>[0-5]\d)\s*(?:hours|hrs)\b",
    r"\b(?P<hh>[01]\d|2[0-3])(?P<mm>[0-5]\d)" + _ZONE,
    r"\b(?P<hh>\d{1,2})" + _AMPM + _ZONE_OPT,
    r"\b(?P<oclock>\d{1,2})\s*o['’]\s?clock\b" + _ZONE_OPT,
    r"\b(?P<named>noon|midday|midnight)\b" + _ZONE_OPT,
)
_CLOCKS = [re.compile(form, re.IGNORECASE) for form in _CLOCK_FORMS]
_NAMED_TIMES = {"noon": (12, 0), "midday": (12, 0), "midnight": (0, 0)}
# Letters joined to digits by - _ # or /, or a # before digits: INC-2041, ticket #4821, ref_77.
_ID = re.compile(r"\b[A-Za-z][A-Za-z0-9]*[-_#/][A-Za-z0-9_-]*\d[A-Za-z0-9_-]*|#\d+\b")


@dataclass(frozen=True)
class Moment:
    """A date (year optional) or a time of day, as found in a text."""

    found: str
    start: int
    end: int
    date: tuple[int | None, int, int] | None = None  # (year, month, day)
    time: tuple[int, int] | None = None  # (hour 0-23, minute)
    zone: str | None = None  # "UTC" (also Z, GMT, +00:00), "+01:00", "CET"; None: not written
    either_half: bool = False  # "6 o'clock": 06:00 or 18:00


def _zone(written: str | None) -> str | None:
    """One spelling per zone: Z, GMT, UTC+0 and +00:00 are all "UTC"; offsets as "+HH:MM"."""
    if not written:
        return None
    written = written.replace(" ", "").upper()
    offset = re.fullmatch(r"(?:UTC|GMT)?([+-])(\d{1,2}):?(\d{2})?", written)
    if offset:
        sign, hours, minutes = offset.group(1), int(offset.group(2)), int(offset.group(3) or 0)
        return "UTC" if hours == minutes == 0 else f"{sign}{hours:02d}:{minutes:02d}"
    return "UTC" if written in ("Z", "GMT", "UTC") else written


def _hour(hour: int, ampm: str | None) -> int:
    if not ampm:
        return hour
    pm = ampm.lower().startswith("p")
    return (hour % 12) + (12 if pm else 0)


def find_moments(text: str) -> list[Moment]:
    """Every date and time of day in ``text``; a later pattern never re-reads a span already taken."""
    moments: list[Moment] = []
    taken: list[tuple[int, int]] = []

    def free(m) -> bool:
        return all(m.end() <= a or m.start() >= b for a, b in taken)

    def add(m, **kw) -> None:
        taken.append((m.start(), m.end()))
        moments.append(Moment(m.group(), m.start(), m.end(), **kw))

    for m in _ISO.finditer(text):
        time = (int(m["hh"]), int(m["mm"])) if m["hh"] else None
        add(m, date=(int(m["y"]), int(m["m"]), int(m["d"])), time=time, zone=_zone(m["tz"]))
        if time:  # the date and the time of a timestamp each support themselves
            moments.append(Moment(m.group(), m.start(), m.end(), time=time, zone=_zone(m["tz"])))
    for pattern in (_DAY_MONTH, _MONTH_DAY):
        for m in pattern.finditer(text):
            if free(m):
                year = int(m["y"]) if m["y"] else None
                add(m, date=(year, _MONTHS.index(m["mon"][:3].lower()) + 1, int(m["d"])))
    for m in _SLASHED.finditer(text):
        if free(m):  # day/month or month/day: either reading may match
            add(m, date=(int(m["y"]), int(m["b"]), int(m["a"])))
            moments.append(Moment(m.group(), m.start(), m.end(), date=(int(m["y"]), int(m["a"]), int(m["b"]))))
    for pattern in _CLOCKS:
        for m in pattern.finditer(text):
            if not free(m):
                continue
            groups = m.groupdict()
            zone = _zone(groups.get("tz"))
            if groups.get("named"):
                add(m, time=_NAMED_TIMES[m["named"].lower()], zone=zone)
            elif groups.get("oclock"):
                hour = int(m["oclock"])
                if 1 <= hour <= 12:
                    add(m, time=(hour % 12, 0), zone=zone, either_half=True)
            else:
                hour, minute = _hour(int(m["hh"]), groups.get("ampm")), int(groups.get("mm") or 0)
                if hour <= 24 and minute < 60:
                    add(m, time=(hour % 24, minute), zone=zone)
    return moments


def _spans(text: str, moments: list[Moment]) -> list[tuple[int, int]]:
    """The spans of dates, times and ids, merged and sorted (for :func:`_outside`'s bisection)."""
    spans = sorted([(m.start, m.end) for m in moments] + [(m.start(), m.end()) for m in _ID.finditer(text)])
    merged: list[tuple[int, int]] = []
    for a, b in spans:
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
        else:
            merged.append((a, b))
    return merged


def _outside(start: int, spans: list[tuple[int, int]]) -> bool:
    # Bisection: a text with thousands of dates and numbers stays linear-logarithmic.
    i = bisect.bisect_right(spans, (start, float("inf"))) - 1
    return i < 0 or not (spans[i][0] <= start < spans[i][1])


def _same_time(moment: Moment, other: Moment) -> bool:
    """One time of day: the same clock time, and the same zone where both texts write one ("18:00
    CET" is not "18:00 UTC"; "18:00 UTC" is "6 pm" in a context that names no zone)."""
    if other.time is None or moment.time is None:
        return False
    if moment.zone and other.zone and moment.zone != other.zone:
        return False
    if moment.time == other.time:
        return True
    halves = moment.either_half or other.either_half
    return halves and (moment.time[0] % 12, moment.time[1]) == (other.time[0] % 12, other.time[1])


def _moment_supported(moment: Moment, allowed: list[Moment]) -> bool:
    """A time or date is one fact, supported by the same time or date anywhere in the allowed text,
    never by its digits read as numbers (the 18 and 00 of "18:00")."""
    for other in allowed:
        if moment.time is not None and moment.date is None and _same_time(moment, other):
            return True
        if moment.date is not None and other.date is not None:
            year, month, day = moment.date
            if (month, day) == other.date[1:] and (year is None or other.date[0] in (None, year)):
                return True
    return False


def extract_numbers(text: str, *, skip: list[tuple[int, int]] | None = None) -> list[Number]:
    """Every quantity in ``text``, in digits, number words or quantity words, in reading order.
    Digits inside dates, times of day and ids are not quantities and are left out."""
    spans = _spans(text, find_moments(text)) if skip is None else skip
    numbers = []
    for m in _DIGITS.finditer(text):
        if not _outside(m.start(), spans):
            continue
        digits = m.group(1).replace(",", "") + ("." + m.group(2) if m.group(2) else "")
        numbers.append(_with_unit(m.group(0), Decimal(digits), m.start(), text[m.end():], percent=bool(m.group(3))))
    numbers.extend(n for n in _spelled_numbers(text) if _outside(n.start, spans))
    numbers.extend(n for n in _quantity_words(text) if _outside(n.start, spans))
    return sorted(numbers, key=lambda n: n.start)


# The unit a JSON value carries in its key's name: "eta_minutes":45 is 45 minutes.
_JSON_NUMBER = re.compile(r'"([A-Za-z0-9_]+)":(-?\d+(?:\.\d+)?)(?=[,}\]])')
_KEY_UNITS = (
    (re.compile(r"(?:^|_)(?:pct|percent|percentage)$", re.IGNORECASE), "%", None),
    (re.compile(r"(?:^|_)(?:rate|ratio|share|fraction)$", re.IGNORECASE), "ratio", None),
    (re.compile(r"(?:^|_)(?:ms|millis|milliseconds)$", re.IGNORECASE), "s", Decimal("0.001")),
    (re.compile(r"(?:^|_)(?:s|secs?|seconds)$", re.IGNORECASE), "s", Decimal(1)),
    (re.compile(r"(?:^|_)(?:mins?|minutes)$", re.IGNORECASE), "s", Decimal(60)),
    (re.compile(r"(?:^|_)(?:h|hrs?|hours)$", re.IGNORECASE), "s", Decimal(3600)),
    (re.compile(r"(?:^|_)days?$", re.IGNORECASE), "s", Decimal(86400)),
)


def _allowed_numbers(allowed_text: str, spans: list[tuple[int, int]]) -> list[Number]:
    numbers = extract_numbers(allowed_text, skip=spans)
    keyed = {}
    for m in _JSON_NUMBER.finditer(allowed_text):
        for pattern, unit, scale in _KEY_UNITS:
            if pattern.search(m.group(1)):
                value = Decimal(m.group(2))
                keyed[m.start(2)] = Number(m.group(2), value, unit == "%", m.start(2), unit,
                                           value * scale if scale is not None else None)
                break
    numbers = [keyed.get(n.start, n) for n in numbers]
    # Compact JSON writes lists as "[1,200]": also read each part of a grouped number on its own,
    # so a grouped reading ("1,200" = 1200) never hides the plain ones.
    for grouped in _DIGITS.finditer(allowed_text):
        if "," in grouped.group(1) and _outside(grouped.start(), spans):
            numbers += [Number(m.group(), Decimal(m.group()), False, grouped.start() + m.start())
                        for m in _PLAIN_DIGITS.finditer(grouped.group(0))]
    return numbers


def _number_supported(number: Number, allowed: list[Number], ratios: frozenset[Decimal] | None = None) -> bool:
    """A number is supported by the same quantity in the context: the same value with no unit on
    either side, or in the same unit (durations compared in seconds; 3.4 % is the ratio 0.034). A
    value the context has only in another unit is a new fact: 45 % is not 45 minutes. When the
    context says its facts' units (``ratios`` given), only a ratio fact supports a percentage read
    as a ratio: 500 % is not 5 alerts."""
    for other in allowed:
        if number.unit == "s" and other.unit == "s":
            if number.seconds == other.seconds:
                return True
        elif number.unit == "%":
            if other.unit in ("%", None) and other.value == number.value:
                return True
            ratio = number.value / 100
            if other.value == ratio and (other.unit == "ratio" or (other.unit is None and ratios is None)):
                return True
            if ratios is not None and ratio in ratios:
                return True
        elif number.value == other.value and (number.unit is None or other.unit is None):
            # A bare number is never supported by a ratio's value (3.4 is not 0.034).
            return True
    return False


# ---------------------------------------------------------------- ids, labels, regions

_INCIDENT_ID = re.compile(r"\binc_[a-z0-9_]+\b", re.IGNORECASE)
_SEVERITY = re.compile(r"\bp[0-5]\b", re.IGNORECASE)


def _region_pattern(token: str):
    """Short tokens (us, eu, uk, ua) are ordinary words in lower case ("let us know"), so they
    name a region only in upper case; longer ones (apac, global) match in any case.
    Tokens are admin text, so they are matched with RE2 like every admin pattern."""
    if len(token) <= 2:
        return word_pattern(token.upper(), case_sensitive=True)
    return word_pattern(token, case_sensitive=False)


def _region_word_pattern(word: str):
    """A region's name in words ("Europe", "European", "Asia-Pacific"): in any case, as whole
    words; spaces and hyphens inside it may be written either way. "U.S." is read as written."""
    return compile_pattern(_region_word_source(word))


@functools.lru_cache(maxsize=1024)
def _region_word_source(word: str) -> str:
    parts = [re2.escape(part) for part in re.split(r"[\s-]+", word.strip()) if part]
    body = r"[\s-]+".join(parts)
    start = r"\b" if word[:1].isalnum() else ""
    end = r"\b" if word[-1:].isalnum() else ""
    return f"{start}{body}{end}"


def _regions_screen(rules: GuardRules):
    """One program that finds every region token and name in words of ``rules``: a text it finds
    nothing in names no region. None where a token is unusable (the check reports it)."""
    if not all(isinstance(token, str) for token in rules.regions):
        return None
    region_words = dict(rules.region_words)
    try:
        return screen(tuple(source for token in rules.regions
                            for source in _region_sources(token, region_words.get(token.lower(), ()))))
    except UnsafePattern:
        return None


def _region_sources(token: str, words: tuple[str, ...]) -> tuple[str, ...]:
    """The patterns of a region token and its names in words, as _region_pattern and
    _region_word_pattern read them: a short token in upper case only, the rest in any case."""
    token = token.lower()
    own = rf"(?-i:\b{re2.escape(token.upper())}\b)" if len(token) <= 2 else rf"\b{re2.escape(token)}\b"
    return (own, *(_region_word_source(word) for word in words))


def _region_in_allowed(token: str, allowed_text: str, words: tuple[str, ...] = ()) -> bool:
    # The context is JSON ("region":"us" is as good as "US"), but the original draft in the same
    # allowed text may say "let us know": a short token counts in upper case as a word, or in any
    # case as a whole JSON string value, never as a lower-case word in prose. A region named in
    # words in the context ("European merchants") names it too.
    if _region_pattern(token).search(allowed_text):
        return True
    if f'"{token}"' in allowed_text.lower():
        return True
    return any(_region_word_pattern(word).search(allowed_text) for word in words)


# ---------------------------------------------------------------- restricted claims

# A claim's clause ends at sentence punctuation, a comma/semicolon/colon (not a decimal point),
# or a conjunction that starts a new assertion: "We are not sure of the cause, but payments are
# resolved" asserts "resolved".
_CLAUSE_BREAK = re.compile(
    r"[.!?;:,](?!\d)|\b(?:but|and|so|however|although|though|because)\b", re.IGNORECASE
)
_WORD = re.compile(r"[a-z]+(?:['’][a-z]+)*")
# Words that may sit between a negation and the claim: "has not yet been fully resolved".
_AUX = {
    "am", "is", "are", "was", "were", "be", "been", "being", "has", "have", "had", "it's", "it’s",
    "yet", "fully", "completely", "entirely", "totally", "still", "quite", "now", "all", "every",
}  # fmt: skip
_NEGATIONS = {"not", "never", "no"}
# Anywhere earlier in the clause these make the claim a condition or an expectation, not a
# statement: "until the issue is resolved", "we hope to have it resolved".
_SUBORDINATORS = {
    "until", "till", "once", "when", "whenever", "before", "after", "if", "unless", "whether",
}  # fmt: skip
_MODALS = {
    "may", "might", "could", "hope", "hopes", "hoping", "hopefully", "aim", "aims", "aiming",
    "expect", "expects", "expected", "expecting",
}  # fmt: skip
_MODAL_PHRASES = re.compile(r"\bworking\s+(?:to|towards?|on)\b")
# "will be resolved" is deliberately NOT a hedge: a customer-facing promise of resolution is
# exactly what the restricted-claims check exists to stop.
_HEDGE_WINDOW = 10  # words before the claim that can hedge it


# A hedge that wraps the claim: a verb of saying or knowing that is negated or premature, so the
# claim is what cannot be said yet: "we are not in a position to say that all payments are stable",
# "it is too early to call this resolved", "nobody can confirm yet that it is fixed".
_REPORTING = {
    "say", "saying", "call", "calling", "confirm", "confirming", "confirmed", "declare", "declaring",
    "claim", "state", "promise", "guarantee", "announce", "know", "think", "believe", "consider",
    "sure", "certain", "clear", "ready", "verify", "verified", "conclude",
}  # fmt: skip
_WRAP_NEGATIONS = {"nobody", "unable", "cannot", "unclear", "premature", "none"}
_WRAP_REACH = 6  # words between the negation and the verb it governs: "not in a position to say"


def _is_negation(word: str) -> bool:
    return word in _NEGATIONS or word.endswith("n't") or word.endswith("n’t") or word == "cannot"


def _wrapped(words: list[str]) -> bool:
    for i, word in enumerate(words):
        if word not in _REPORTING:
            continue
        before = words[max(0, i - _WRAP_REACH) : i]
        if any(_is_negation(w) or w in _WRAP_NEGATIONS for w in before):
            return True
        if any(w == "too" and nxt in ("early", "soon") for w, nxt in zip(before, before[1:], strict=False)):
            return True
    return False


# How far before a claim its clause is read: a window that grows until it holds the clause's start
# or the last _HEDGE_WINDOW words (all that is read), up to _LOOK_BACK characters. Reading the text
# from its start for each match was quadratic: 22 s for 11,000 "resolved" in 100 KB.
_FIRST_LOOK = 200
_LOOK_BACK = 3200


def _clause_before(text: str, start: int) -> str:
    size = _FIRST_LOOK
    while True:
        begin = max(0, start - size)
        head = text[begin:start]
        if begin and not text[begin - 1].isspace():
            # Start at a word boundary: a cut word ("...cannot" -> "not") must not read as a hedge.
            cut = re.search(r"\s", head)
            head = head[cut.start() :] if cut else ""
        breaks = list(_CLAUSE_BREAK.finditer(head))
        clause = head[breaks[-1].end() :] if breaks else head
        if breaks or not begin or size >= _LOOK_BACK or len(_WORD.findall(clause.lower())) > _HEDGE_WINDOW:
            return clause
        size *= 4


_AFTER_CLAUSE = re.compile(r"(?:[^.;!?]|\.(?=\d))*?(?=[.;!?]|\b(?:and|but|so|however|although|though|because)\b|$)",
                           re.IGNORECASE)


def _words_before(text: str, start: int) -> list[str]:
    return _WORD.findall(_clause_before(text, start).lower())[-_HEDGE_WINDOW:]


def _negated(words: list[str]) -> bool:
    # A negation hedges only when it governs the claim: nothing but auxiliaries and adverbs in
    # between ("has not yet been resolved"), so "the issue we did not expect is resolved" still
    # asserts it.
    for word in reversed(words):
        if _is_negation(word):
            return True
        if word not in _AUX:
            break
    return False


# Between a negation and a commitment: "we will not be able to offer refunds".
_NOT_ABLE = {"able", "to", "be", "going", "in", "a", "position", "planning", "plan", "intending"}


def is_negated(text: str, start: int) -> bool:
    """Whether a negation governs the claim starting at ``start`` ("we will not be refunding")."""
    for word in reversed(_words_before(text, start)):
        if _is_negation(word):
            return True
        if word not in _AUX and word not in _NOT_ABLE:
            return False
    return False


def is_hedged(text: str, start: int, hedges: Iterable[str] = (), end: int | None = None) -> bool:
    """Whether the claim starting at ``start`` is negated, conditional, an expectation, or wrapped
    in a hedge ("too early to call this resolved"). ``hedges`` are a family's own hedge words,
    read in the clause before the claim and in the claim itself (up to ``end``)."""
    words = _words_before(text, start)
    if _negated(words):
        return True
    if any(word in _SUBORDINATORS or word in _MODALS for word in words):
        return True
    if _wrapped(words):
        return True
    if hedges and end is not None:
        # A family's own hedges also count inside the claim ("within about 45 minutes") and after it
        # in the same clause, where a comma does not end it ("Within 45 minutes, we expect ...").
        own = set(hedges)
        rest = _AFTER_CLAUSE.match(text, end, min(len(text), end + _FIRST_LOOK)).group()
        if any(word in own for word in [*words, *_WORD.findall(text[start:end].lower() + " " + rest.lower())]):
            return True
    return _MODAL_PHRASES.search(" ".join(words)) is not None


def _unhedged(text: str, pattern: str, hedges: Iterable[str] = ()):
    """The unhedged matches of one restricted-claim pattern (RE2, case-insensitive), lazily.
    Raises :class:`UnsafePattern` for a pattern RE2 refuses."""
    hedges = tuple(hedges)
    return (m for m in compile_pattern(pattern).finditer(text) if not is_hedged(text, m.start(), hedges, m.end()))


def find_claims(text: str, patterns: tuple[str, ...] | list[str]) -> list:
    """Every unhedged match of the restricted-claim patterns, in reading order.

    Patterns are admin text: they run on RE2 (agents.core.patterns), in time linear in the text; one
    that RE2 refuses raises :class:`agents.core.patterns.UnsafePattern`."""
    claims = [m for pattern in patterns for m in _unhedged(text, pattern)]
    return sorted(claims, key=lambda m: m.start())


def makes_claim(text: str, pattern: str) -> bool:
    """Whether ``text`` makes the claim at least once, unhedged (stops at the first)."""
    return next(_unhedged(text, pattern), None) is not None


def _family_unhedged(text: str, pattern: str, family: ClaimFamily):
    if family.hedging == "negation":
        return (m for m in compile_pattern(pattern).finditer(text) if not is_negated(text, m.start()))
    return _unhedged(text, pattern, family.hedges)


def family_claims(text: str, family: ClaimFamily) -> list:
    """The unhedged matches of a claim family (its canonical claim and every paraphrase), in reading
    order, a match overlapping an earlier one left out ("have fully recovered" is one claim).
    Raises :class:`UnsafePattern` for a pattern RE2 refuses."""
    if not _may_match(text, family.patterns):
        return []
    matches = sorted((m for p in family.patterns for m in _family_unhedged(text, p, family)),
                     key=lambda m: (m.start(), -m.end()))
    kept: list = []
    for m in matches:
        if not kept or m.start() >= kept[-1].end():
            kept.append(m)
    return kept


def family_makes_claim(text: str, family: ClaimFamily) -> bool:
    return any(next(_unhedged(text, p, family.hedges), None) is not None for p in family.patterns)


def family_supported_in(evidence: str, family: ClaimFamily) -> bool:
    """Whether the evidence makes the family's claim itself, or says what its ``supported_by``
    patterns name ("Data loss: none"), unhedged."""
    patterns = family.support_patterns
    return _may_match(evidence, patterns) and any(
        next(_unhedged(evidence, p, family.hedges), None) is not None for p in patterns)


def _may_match(text: str, patterns: tuple[str, ...]) -> bool:
    """False when none of ``patterns`` matches ``text`` at all, hedged or not: one pass over the text."""
    union = screen(patterns)
    return union is None or union.search(text) is not None


@dataclass(frozen=True)
class TrialMatch:
    found: str  # the words the family matched
    pattern: str  # the canonical pattern or the paraphrase that matched
    hedged: bool  # True: a hedge wraps or negates it, so the guard lets it pass


def family_trial(text: str, family: ClaimFamily) -> list[TrialMatch]:
    """What a family matches in a sample text, hedged matches included, in reading order (admin's
    "try it on sample text"). Raises :class:`UnsafePattern` for a pattern RE2 refuses."""
    hits = sorted(((m, p) for p in family.patterns for m in compile_pattern(p).finditer(text)),
                  key=lambda hit: (hit[0].start(), -hit[0].end()))
    kept: list[TrialMatch] = []
    last_end = -1
    for m, pattern in hits:
        if m.start() >= last_end:
            hedged = (is_negated(text, m.start()) if family.hedging == "negation"
                      else is_hedged(text, m.start(), family.hedges, m.end()))
            kept.append(TrialMatch(m.group(), pattern, hedged))
            last_end = m.end()
    return kept


def family_problem(family: ClaimFamily) -> str | None:
    """Why a family cannot be checked safely (a pattern RE2 refuses), or None."""
    try:
        return _patterns_problem(family.support_patterns)
    except TypeError:  # unhashable: a snapshot edited by hand may hold anything
        return _patterns_problem.__wrapped__(family.support_patterns)


@functools.lru_cache(maxsize=1024)
def _patterns_problem(patterns: tuple) -> str | None:
    for pattern in patterns:
        try:
            compile_pattern(pattern)
        except UnsafePattern as error:
            return f"The restricted-claim pattern “{pattern}” cannot be checked safely: {error}"
    return None


# ---------------------------------------------------------------- the check


# Words aimed at the model rather than at customers: "ignore previous instructions", "say that ...",
# "call it P3", "widen it to all regions", "promise 10 minutes". A clause carrying one is an
# instruction, not a fact: it licenses no restricted claim, and no number, region or severity label.
# The verbs count only where an order starts (the clause's start, or after "and", "then", "to",
# "please", ":"), and the ones that are also ordinary words in incident data ("state of payments",
# "write errors", "call volumes") only with an object ("state that", "call it P3").
# On RE2 although it is ours: the `.*` between two word lists backtracks on incident data (which is
# untrusted), 12 s for a 100 KB clause of "ignore ignore ..." with `re`.
_ORDER = (
    r"(?:^|[,:(]|\b(?:and|then|please|just|instead|to|now|also)\b)\s*"
    r"(?:(?:please|just|also|now|instead|simply)\s+)*"
)
_INSTRUCTION = compile_pattern(
    r"\b(?:ignore|disregard|forget|override)\b.*\b(?:instructions?|rules?|prompts?|guidelines?|polic(?:y|ies))\b"
    r"|\bpretend\b|\b(?:assistant|chatbot|language\s+model)\b"
    r"|\byou\s+(?:must|should|need\s+to|have\s+to|are\s+to)\b"
    + "|" + _ORDER + r"(?:say|tell|announce|respond|reply|promise|guarantee)\b"
    + "|" + _ORDER + r"(?:state|write|claim|confirm)\s+(?:that|it)\b"
    + "|" + _ORDER + r"(?:call|mark|label|treat|describe|widen|extend|classify)\s+(?:it|this|that|them|the\s+\w+)\b"
)
# A decimal point ("3.4%") does not end a clause.
_CLAUSE = re.compile(r"(?:[^.;!?\n]|\.(?=\d))+[.;!?\n]?")


@functools.lru_cache(maxsize=1024)
def without_instructions(text: str) -> str:
    """``text`` with every clause that instructs the model removed (the texts of one incident are
    read again for each text checked against it: remembered)."""
    return " ".join(c.strip() for c in _CLAUSE.findall(text) if c.strip() and not _INSTRUCTION.search(c))


# What a family's words do, for the lead reading the finding; a family an admin adds is named.
_FAMILY_WORDS = {
    "credits and refunds": "promises customers money",
    "fault and negligence": "admits fault",
    "data reassurance": "reassures customers about their data",
    "data breach": "speaks of a breach of customers' data",
    "time commitments": "commits to when the fix comes",
    "planned work": "calls the incident planned work",
}
_CHECK_WORDS = {
    "liability": "promises money or admits blame",
    "data_safety": "speaks about customers' data",
    "time_commitment": "commits to a time",
    "state_claim": "speaks about the incident's state",
}


def _claim_message(found: str, family: ClaimFamily, strict: bool, state: str | None = None) -> str:
    named = f" of the “{family.name}” family" if family.name else ""
    if strict and family.check == "restricted_claims":
        return f"“{found}” is a restricted claim{named}, and this policy avoids guarantees."
    if family.support in ("resolved", "recovering", "ongoing") and (state is not None or family.support == "ongoing"
                                                                      or family.check == "state_claim"):
        return state_message(found, family, state)
    if family.check in _CHECK_WORDS:
        does = _FAMILY_WORDS.get(family.name) or f"{_CHECK_WORDS[family.check]} ({family.name or family.pattern})"
        return f"“{found}” {does}, and nothing in the incident's facts says so."
    return f"“{found}” is a restricted claim{named} the incident context does not support."


def find_violations(
    text: str, allowed_text: str, rules: GuardRules, *, strict_claims: bool = False,
    claim_evidence: str | None = None, ratios: frozenset[Decimal] | None = None,
    context: Mapping | None = None,
) -> list[Violation]:
    """Everything in ``text`` that ``allowed_text`` does not support, ordered by CHECKS.

    ``claim_evidence`` is the text whose claims may license a restricted claim (default: the
    allowed text); the guard passes the context and draft with instructions to the model removed
    (and an allowed text built from them, so an instruction is no evidence for anything).
    ``ratios`` are the values of the context's ratio facts (``agents.core.units.ratio_values``):
    given, only they support a percentage read as a ratio; None (a context without units) lets a
    bare number do. ``context`` is the run context itself, for the checks that read the incident's
    structure (its state, its declared contacts, its internal facts); None skips them.
    """
    evidence = allowed_text if claim_evidence is None else claim_evidence
    # A link, address or phone number is judged whole by the contact check: its digits and words
    # are no quantity, id or claim of their own (a phone number is not "555" unsupported).
    prose = _without_contacts(text) if context is not None else text
    found = _distinct([
        *_new_facts(prose, allowed_text, ratios),
        *_new_incident_ids(prose, allowed_text),
        *_new_severity_labels(prose, allowed_text),
        *_new_regions(prose, allowed_text, rules),
        *_unsupported_claims(prose, evidence, rules, strict_claims, incident_state(context)),
        *_incident_claims(prose, allowed_text, evidence, rules, context),
        # Links, contacts and markup: judged against the incident's public facts alone
        *_undeclared_contacts(text, context),
        *_markup(text),
        *_internal_details(text, context),
        *_wellformed(text, context),
    ])
    # An internal host is reported as what it is, not also as an address customers could be sent to.
    internal = {v.found.lower() for v in found if v.check == "internal_detail"}
    found = [v for v in found if not (v.check == "unknown_contact" and v.found.lower() in internal)]
    return sorted(found, key=lambda v: CHECKS.index(v.check))


def _incident_claims(text: str, allowed_text: str, evidence: str, rules: GuardRules,
                     context: Mapping | None) -> list[Violation]:
    """The structural checks of agents.core.claims: quantifiers against the incident's shares,
    blame, places and days of the week."""
    words = dict(rules.region_words)

    def region_allowed(token: str) -> bool:
        return any(_region_in_allowed(t, allowed_text, words.get(t, ())) for t in (token, "global"))

    def hedged(source: str, start: int, end: int) -> bool:
        return is_hedged(source, start, (), end)

    findings = [
        *weekday_findings(text, allowed_text),
        *place_findings(text, allowed_text, region_allowed),
        *scope_findings(text, context, evidence, hedged),
        *blame_findings(text, evidence),
    ]  # find_violations keeps one of each check and words (_distinct)
    return [Violation(f.check, f.found, f.message) for f in sorted(findings, key=lambda f: f.start)]


def _wellformed(text: str, context: Mapping | None) -> list[Violation]:
    """Broken text is broken whatever the context; whether it tells customers anything is judged
    against the incident (its title, status and facts), so only with a context."""
    # Imported here: agents.core.wellformed builds its violations with this module's Violation.
    from agents.core.wellformed import find_malformed, find_uninformative

    return [*find_malformed(text), *(find_uninformative(text, context) if context is not None else [])]


def _internal_details(text: str, context: Mapping | None) -> list[Violation]:
    # Imported here: agents.core.internal builds on this module's Violation.
    from agents.core.internal import find_internal

    return find_internal(text, context)


def _distinct(violations: Iterable[Violation]) -> list[Violation]:
    """The first violation of each check and token (in any case): one entry per distinct token keeps
    the UI readable."""
    seen: set[tuple[str, str]] = set()
    kept = []
    for violation in violations:
        key = (violation.check, violation.found.lower())
        if key not in seen:
            seen.add(key)
            kept.append(violation)
    return kept


def _new_facts(text: str, allowed_text: str, ratios: frozenset[Decimal] | None) -> list[Violation]:
    """The numbers, dates, times of day and ids the allowed text does not support, in reading order."""
    text_moments = find_moments(text)
    allowed_moments, allowed_numbers = _allowed_facts(allowed_text)
    facts: list[tuple[int, str]] = []
    for number in extract_numbers(text, skip=_spans(text, text_moments)):
        if not _number_supported(number, allowed_numbers, ratios):
            facts.append((number.start, number.found))
    for moment in text_moments:
        if not _moment_supported(moment, allowed_moments):
            facts.append((moment.start, moment.found))
    allowed_lower = allowed_text.lower()
    for m in _ID.finditer(text):
        if m.group().lower() not in allowed_lower and not _INCIDENT_ID.fullmatch(m.group()):
            facts.append((m.start(), m.group()))
    return [Violation("no_new_facts", token, f"“{token}” is not supported by the incident context.")
            for _, token in sorted(facts)]


@functools.lru_cache(maxsize=16)
def _allowed_facts(allowed_text: str) -> tuple[tuple[Moment, ...], tuple[Number, ...]]:
    """The dates, times and numbers of an allowed text. Read once per text: one run checks several
    texts against the same incident, and a replay checks many runs of it."""
    moments = find_moments(allowed_text)
    return tuple(moments), tuple(_allowed_numbers(allowed_text, _spans(allowed_text, moments)))


def _new_incident_ids(text: str, allowed_text: str) -> list[Violation]:
    allowed_ids = {m.group().lower() for m in _INCIDENT_ID.finditer(allowed_text)}
    return [Violation("new_incident_id", m.group(), f"“{m.group()}” is not an incident in the context.")
            for m in _INCIDENT_ID.finditer(text) if m.group().lower() not in allowed_ids]


def _new_severity_labels(text: str, allowed_text: str) -> list[Violation]:
    allowed_labels = {m.group().lower() for m in _SEVERITY.finditer(allowed_text)}
    return [Violation("new_severity_label", m.group(), f"Severity “{m.group()}” is not the one in the context.")
            for m in _SEVERITY.finditer(text) if m.group().lower() not in allowed_labels]


def _new_regions(text: str, allowed_text: str, rules: GuardRules) -> list[Violation]:
    """The regions the text names and the allowed text does not, in reading order, after the tokens
    that cannot be checked safely."""
    # A snapshot may hold a pattern or token RE2 refuses (saved before admin checked, or edited in
    # the database). It is never matched with a backtracking engine, and never skipped: it fails
    # its check, so the text goes to a person with the reason.
    union = _regions_screen(rules)
    if union is not None and union.search(text) is None:
        return []
    region_words = dict(rules.region_words)
    unsafe, regions = [], []
    for token in rules.regions:
        try:
            if not isinstance(token, str):
                raise UnsafePattern(f"a region token must be text, not {type(token).__name__}")
            words = region_words.get(token.lower(), ())
            if not _may_match(text, _region_sources(token, words)):
                continue
            matches = list(_region_pattern(token.lower()).finditer(text))
            for word in words:
                matches += _region_word_pattern(word).finditer(text)
        except UnsafePattern as error:
            unsafe.append(Violation("new_region", str(token),
                                    f"The region token “{token}” cannot be checked safely: {error}."))
            continue
        if matches and not _region_in_allowed(token.lower(), allowed_text, words):
            regions += matches
    return unsafe + [Violation("new_region", m.group(), f"Region “{m.group()}” is not named in the context.")
                     for m in sorted(regions, key=lambda m: m.start())]


def _unsupported_claims(text: str, evidence: str, rules: GuardRules, strict_claims: bool,
                        state: str | None = None) -> list[Violation]:
    """The claims neither the evidence nor the incident's state supports, in reading order, after the
    families that cannot be checked safely. Where two families match the same words, the one
    earlier in the rules reports them."""
    # A claim is supported by an unhedged occurrence of its family in the evidence: an original that
    # says "not yet resolved" does not license a revision that says "fixed" (docs/contract.md, 'Fact
    # and claim checks'), or by the incident's state (docs/guard.md). The strict form
    # (avoid_absolute_guarantees) accepts no support for a restricted claim; a strict-only family
    # (firm time promises) applies only there.
    unsafe, claims = [], []
    families = [(family, family_problem(family)) for family in rules.families()
                if strict_claims or not family.strict_only]
    # Which patterns match at all, in one pass over the text for every family (most match nothing).
    matched = matching(text, tuple(dict.fromkeys(p for family, problem in families if not problem
                                                 for p in family.patterns)))
    for family, problem in families:
        if problem:
            unsafe.append(Violation(family.check if family.check in CHECKS else "restricted_claims",
                                    str(family.pattern), f"{problem}. A person must check the text for it."))
            continue
        if matched is not None and matched.isdisjoint(family.patterns):
            continue
        made = [m for m in family_claims(text, family)
                if not (family.support == "time" and is_cadence(text, m.start(), m.end()))  # the next update
                and not (family.check == "state_claim" and is_forecast(text, m.end()))]
        if not made:
            continue  # the text does not make the claim: the (long) evidence need not be read for it
        if strict_claims and family.check == "restricted_claims":
            supported = False
        else:
            supported = state_supports(family.support, state)
            if supported is None or (supported is False and family.support != "ongoing"):
                supported = family_supported_in(evidence, family)
        if not supported:
            claims += [(m, family) for m in made]
    kept, spans = [], []  # spans: the kept matches' (start, end), sorted and disjoint
    for m, family in claims:  # in the rules' order: the first family to match some words reports them
        i = bisect.bisect_left(spans, (m.start(), m.end()))
        if (i and spans[i - 1][1] > m.start()) or (i < len(spans) and spans[i][0] < m.end()):
            continue
        spans.insert(i, (m.start(), m.end()))
        kept.append((m, family))
    return unsafe + [
        Violation(family.check if family.check in CHECKS else "restricted_claims", m.group(),
                  _claim_message(m.group(), family, strict_claims, state), family.name)
        for m, family in sorted(kept, key=lambda c: c[0].start())
    ]


# ---------------------------------------------------------------- links, contacts and markup


def _masked(text: str, contacts: list) -> str:
    """``text`` with each contact replaced by as many spaces (positions kept)."""
    pieces, pos = [], 0
    for contact in contacts:
        pieces += [text[pos:contact.start], " " * len(contact.found)]
        pos = contact.end
    return "".join(pieces) + text[pos:]


def _without_contacts(text: str) -> str:
    return _masked(text, find_contacts(text))


def _contacts_outside_instructions(text: str) -> list:
    """The contacts of ``text`` that sit in no clause instructing the model. The clauses are read with
    the contacts masked, so the dots of a link do not cut it into clauses."""
    contacts = find_contacts(text)
    if not contacts:
        return []
    masked = _masked(text, contacts)
    kept = []
    for clause in _CLAUSE.finditer(masked):
        if not _INSTRUCTION.search(clause.group()):
            kept += [c for c in contacts if clause.start() <= c.start < clause.end()]
    return kept


def declared_contacts(context: Mapping):
    """The links, email addresses and phone numbers the incident's public facts declare: the values
    under ``incident`` and the ``key_messages``, without the clauses that instruct the model. A
    draft, a goal or the policy hints declare nothing."""
    texts = strings_in(context.get("incident")) + strings_in(context.get("key_messages"))
    return declared(c for text in texts for c in _contacts_outside_instructions(text))


def _undeclared_contacts(text: str, context: Mapping | None) -> list[Violation]:
    """Every link, domain, email address or phone number the incident does not declare, in reading
    order (docs/contract.md, 'Fact and claim checks'). Without a context there is nothing to read."""
    if context is None:
        return []
    known = declared_contacts(context)
    return [Violation("unknown_contact", c.found, unknown_contact_message(c))
            for c in find_contacts(text) if not known.covers(c)]


def _markup(text: str) -> list[Violation]:
    """Every mention, link markup, HTML tag or Markdown link: customer text is plain text."""
    return [Violation("markup", m.found, markup_message(m)) for m in find_markup(text)]

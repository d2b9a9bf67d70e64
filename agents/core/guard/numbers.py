"""no_new_facts: the numbers, dates, times of day and ids a text states that its evidence does not
(docs/contract.md, 'Fact and claim checks'). Plain Python: no Django here."""

from __future__ import annotations

import bisect
import calendar
import functools
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from decimal import Decimal

from agents.core.guard.cadence import CADENCE, cadence_clauses, cadence_spans
from agents.core.guard.contacts import prose
from agents.core.guard.grounding import stem
from agents.core.guard.identifiers import INCIDENT_ID
from agents.core.guard.incident_claims import counts_people, counts_things, is_cadence, sentence_bounds
from agents.core.guard.leading import led_by
from agents.core.guard.support import Support
from agents.core.guard.violation import Violation
from agents.core.units import CURRENCY_CODES, TIME_ZONES, fact_meta, number_value


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
    r"(?:\s+and\s+a\s+half)?[\s-]+(?:seconds?|secs?|minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?"
    r"|percent|per\s+cent)\b|\s?%",
    re.IGNORECASE,
)
# ... or as the first number of a share ("one in five attempts", "one out of every ten"), read with its second.
_SHARE_WORDS = r"(?:out\s+of(?:\s+every)?|in(?:\s+every)?)"  # "in", "in every", "out of", "out of every"
_SHARE_AFTER_ONE = re.compile(r"\s+" + _SHARE_WORDS + r"\s+(?P<next>\d|[A-Za-z]+)", re.IGNORECASE)
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
        if words == ["one"] and not _UNIT_AFTER_ONE.match(after) and not (
                (share := _SHARE_AFTER_ONE.match(after)) and (share["next"].isdigit() or
                                                               share["next"].lower() in _NUMBER_WORDS)):
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
    r"|(d|(?:(?:business|working|calendar)\s+)?days?)|(w|weeks?))\b",
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
    led_by(
        "adfhoqt",
        r"\b(?:(?P<dozen>(?:a\s+|one\s+)?dozen)|(?P<couple>a\s+(?:couple|pair)(?:\s+of)?)"
        r"|(?P<score>a\s+score\s+of)(?!\s+\d)|(?P<twice>twice)|(?P<thrice>thrice)"
        r"|(?P<half>half)|(?P<quarter>(?:a\s+|one\s+)?quarter)"
        # "a third of uploads", "two thirds of them", "three quarters": a share said as a fraction ("a third
        # party", "the third attempt" are no share)
        r"|(?P<fraction>(?:a|one|two|three|four)[\s-]+(?:thirds?|quarters|fifths?|tenths?))"
        r"(?![\s-]+(?:part(?:y|ies)|time|round|attempt|day|week|try|floor|place|line|option|step|stage)\b)"
        # "for about an hour": how long something lasted, one hour ("an hour ago", "every hour" are not)
        r"|(?P<an>(?:(?<=\bfor\s)|(?<=\babout\s)|(?<=\baround\s)|(?<=\bnearly\s)|(?<=\balmost\s)|(?<=\broughly\s)|"
        r"(?<=\blasted\s))an?(?=\s+(?:hour|day|week)\b)"
        # "an hour and a half" (the half is read with it, _and_a_half)
        r"|an?(?=\s+(?:hour|day|week)\s+and\s+a\s+half\b)))\b",
    ),
    re.IGNORECASE,
)
_QUANTITY_VALUES = {"dozen": 12, "couple": 2, "score": 20, "twice": 2, "thrice": 3, "an": 1}
_FRACTION_OF_TIME = re.compile(
    r"[\s-]+(?:of\s+)?(?:an?\s+)?(?:(?P<m>minute)|(?P<h>hour)|(?P<d>day))\b", re.IGNORECASE
)
_FRACTIONS = {"half": Decimal("0.5"), "quarter": Decimal("0.25")}
_NUMERATORS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4}
_DENOMINATORS = {"third": 3, "quarter": 4, "fifth": 5, "tenth": 10}


def _fraction(said: str) -> Decimal:
    """The share a fraction in words names, in percent: "two thirds" is 66.7."""
    numerator, denominator = re.split(r"[\s-]+", said.lower())
    share = Decimal(100 * _NUMERATORS[numerator]) / _DENOMINATORS[denominator.rstrip("s")]
    return share.quantize(Decimal("0.1"))


def _quantity_words(text: str) -> list[Number]:
    numbers = []
    for m in _QUANTITY_WORDS.finditer(text):
        kind = m.lastgroup
        if kind == "fraction":
            numbers.append(Number(m.group(), _fraction(m.group()), True, m.start(), "%"))
            continue
        if kind in _FRACTIONS:
            of_time = _FRACTION_OF_TIME.match(text, m.end())
            if of_time:
                scale = {"m": 60, "h": 3600, "d": 86400}[of_time.lastgroup]
                seconds = _FRACTIONS[kind] * scale
                numbers.append(Number(m.group() + of_time.group(), seconds / scale, False, m.start(), "s", seconds))
            else:
                numbers.append(Number(m.group(), _FRACTIONS[kind] * 100, True, m.start(), "%"))
            continue
        number = _with_unit(m.group(), Decimal(_QUANTITY_VALUES[kind]), m.start(), text[m.end():])
        if kind == "an":  # the lead reads "an hour", not "an"
            number = replace(number, found=text[m.start() : _DURATION.match(text, m.end()).end()])
        numbers.append(number)
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
# ("Thursday 10 and Saturday 12 December": a weekday may name the second day.)
_DAYS_OF_MONTH = re.compile(r"\b(?P<first>\d{1,2})(?:st|nd|rd|th)?\s*(?:and|or|to|-|–|until|through)\s*"
                            r"(?=(?:(?i:mon|tues|wednes|thurs|fri|satur|sun)day,?\s+)?"
                            r"\d{1,2}(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r"\b(?:,?\s+(?P<y>\d{4})\b)?)")
# "Until the end of March" names a day: the month's last ("the start of April": its first). "The end of
# 18 March" is the 18th's.
_MONTH_EDGE = re.compile(r"\b(?P<edge>(?i:end|start|beginning))\s+of\s+" + _MONTH + r"\b(?!\.?\s*\d)")
_MONTH_DAY = re.compile(r"\b" + _MONTH + r"\.?\s+(?P<d>\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(?P<y>\d{4})\b)?")
# ... and the day after it in a range: "between December 28 and 30" (the second day is December's too)
_MONTH_DAYS = re.compile(r"\b" + _MONTH + r"\.?\s+\d{1,2}(?:st|nd|rd|th)?\s*(?:and|or|to|-|–|until|through)\s*"
                         r"(?P<second>\d{1,2})(?:st|nd|rd|th)?\b(?![.:,]\d|\s*(?:[ap]\.?m\b|%|(?:mins?|minutes?|hours?|hrs?|days?|"
                         r"weeks?|months?|seconds?|secs?)\b))", re.IGNORECASE)
# A time zone written after a time (units.TIME_ZONES): part of the time fact. Upper case only (a scoped
# flag), so "6 pm est." in lower-case prose is no zone.
_ZONE = r"\s*(?-i:(?P<tz>" + TIME_ZONES + r"))\b"
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
    """One spelling per zone: Z, GMT, UTC+0 and +00:00 are all "UTC"; offsets as "+HH:MM"; the US zones
    without their season."""
    if not written:
        return None
    written = written.replace(" ", "").upper()
    offset = re.fullmatch(r"(?:UTC|GMT)?([+-])(\d{1,2}):?(\d{2})?", written)
    if offset:
        sign, hours, minutes = offset.group(1), int(offset.group(2)), int(offset.group(3) or 0)
        return "UTC" if hours == minutes == 0 else f"{sign}{hours:02d}:{minutes:02d}"
    if re.fullmatch(r"[ECMP][SD]?T", written):
        return written[0] + "T"  # "EST", "EDT" and "ET" are one zone as customers read it ("10:00 ET")
    return "UTC" if written in ("Z", "GMT", "UTC") else written


def _hour(hour: int, ampm: str | None) -> int:
    if not ampm:
        return hour
    pm = ampm.lower().startswith("p")
    return (hour % 12) + (12 if pm else 0)


def find_moments(text: str) -> list[Moment]:
    """Every date and time of day in ``text``; a later pattern never re-reads a span already taken."""
    moments: list[Moment] = []
    taken: list[tuple[int, int]] = []  # sorted, and never overlapping: bisection keeps a long text linear

    def free_span(start: int, end: int) -> bool:
        i = bisect.bisect_left(taken, (start, start))
        return (i == 0 or taken[i - 1][1] <= start) and (i == len(taken) or taken[i][0] >= end)

    def free(m) -> bool:
        return free_span(m.start(), m.end())

    def add(m, group: int | str = 0, **kw) -> None:
        bisect.insort(taken, (m.start(group), m.end(group)))
        moments.append(Moment(m.group(group), m.start(group), m.end(group), **kw))

    for m in _ISO.finditer(text):
        time = (int(m["hh"]), int(m["mm"])) if m["hh"] else None
        add(m, date=(int(m["y"]), int(m["m"]), int(m["d"])), time=time, zone=_zone(m["tz"]))
        if time:  # the date and the time of a timestamp each support themselves
            moments.append(Moment(m.group(), m.start(), m.end(), time=time, zone=_zone(m["tz"])))
    for m in _DAYS_OF_MONTH.finditer(text):  # "between 20 and 21 January": the first day is January's too
        if free(m) and 1 <= int(m["first"]) <= 31:
            year = int(m["y"]) if m["y"] else None
            add(m, "first", date=(year, _MONTHS.index(m["mon"][:3].lower()) + 1, int(m["first"])))
    for pattern in (_DAY_MONTH, _MONTH_DAY):
        for m in pattern.finditer(text):
            if free(m):
                year = int(m["y"]) if m["y"] else None
                add(m, date=(year, _MONTHS.index(m["mon"][:3].lower()) + 1, int(m["d"])))
    for m in _MONTH_DAYS.finditer(text):
        if free_span(m.start("second"), m.end("second")) and 1 <= int(m["second"]) <= 31:
            add(m, "second", date=(None, _MONTHS.index(m["mon"][:3].lower()) + 1, int(m["second"])))
    for m in _MONTH_EDGE.finditer(text):
        if free(m):
            month = _MONTHS.index(m["mon"][:3].lower()) + 1
            last = calendar.monthrange(2001, month)[1]  # a year with no 29 February: the text names none
            add(m, date=(None, month, last if m["edge"].lower() == "end" else 1))
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
    for m in _BARE_HOUR_IN_RANGE.finditer(text):
        if free_span(m.start("hh"), m.end("hh")) and int(m["hh"]) <= 24:
            add(m, "hh", time=(int(m["hh"]) % 24, 0))
    return _ranges_share_their_half(text, moments)


_RANGE_WORDS = r"\s*(?:-|–|—|to|and|until|till)\s*"  # what links a range's two times
# "Between 8 and 11:30": a range's first hour, said bare, is a time of day as its second one is (08:00).
_BARE_HOUR_IN_RANGE = re.compile(r"\b(?:between|from)\s+(?P<hh>\d{1,2})(?=" + _RANGE_WORDS + r"\d{1,2}[:.h]\d{2}\b)",
                                 re.IGNORECASE)


# "Between 6:30 and 7:50 PM ET": a range's first time takes the half of the day and the zone its second
# one gives, where it gives none itself and the range then runs forward ("11:30 to 12:15 PM" stays 11:30).
_RANGE_LINK = re.compile(_RANGE_WORDS, re.IGNORECASE)
_HALF = re.compile(r"[ap]\.?m\.?", re.IGNORECASE)


def _ranges_share_their_half(text: str, moments: list[Moment]) -> list[Moment]:
    clocks = sorted((m for m in moments if m.time and not m.date), key=lambda m: m.start)
    for first, second in zip(clocks, clocks[1:], strict=False):
        if _HALF.search(first.found) or not _HALF.search(second.found) or \
                not _RANGE_LINK.fullmatch(text[first.end : second.start]):
            continue
        hour = first.time[0] + 12 if second.time[0] >= 12 and first.time[0] < 12 else first.time[0]
        if (hour, first.time[1]) > second.time:
            hour = first.time[0]
        moments[moments.index(first)] = replace(first, time=(hour, first.time[1]), zone=first.zone or second.zone)
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


# "Sent just after midnight" where the incident says 00:01: a time said to be just after (or before) another
# is supported by a time of the incident within a quarter of an hour on that side of it. A round time said
# as an approximation ("since about 7am" where the incident says 07:05) is supported by one either side of
# it, as near as its roundness says: ten minutes for a whole hour, five for a half or a quarter of one.
_JUST = re.compile(r"\b(?:just|shortly|soon|right)\s+(?P<side>after|before)\s+(?:the\s+)?$", re.IGNORECASE)
_JUST_WITHIN = 15  # minutes
_ABOUT = re.compile(r"\b(?:about|around|approximately|roughly)\s+$", re.IGNORECASE)
_ABOUT_WITHIN = {0: 10, 30: 5, 15: 5, 45: 5}  # minutes, by the said time's minute


def _window(text: str, moment: Moment) -> tuple[int, int] | None:
    """The minutes from the said time, later positive, within which an incident's time supports it: 1 to 15
    after it for "just after 9", 1 to 15 before it for "shortly before 9", up to 10 either side of "about 7am";
    None where the text says it exactly."""
    if said := _JUST.search(text, max(0, moment.start - 20), moment.start):
        return (1, _JUST_WITHIN) if said["side"].lower() == "after" else (-_JUST_WITHIN, -1)
    if _ABOUT.search(text, max(0, moment.start - 20), moment.start) and moment.time[1] in _ABOUT_WITHIN:
        return -_ABOUT_WITHIN[moment.time[1]], _ABOUT_WITHIN[moment.time[1]]
    return None


def _said_near(text: str, moment: Moment, allowed: list[Moment]) -> bool:
    """A time of day the text says is near one of the incident's ("just after", "about"), and is."""
    if moment.time is None or moment.date is not None or (window := _window(text, moment)) is None:
        return False
    low, high = window
    at = moment.time[0] * 60 + moment.time[1]
    for other in allowed:
        if other.time is None or other.date is not None or (moment.zone and other.zone and moment.zone != other.zone):
            continue
        apart = (other.time[0] * 60 + other.time[1] - at + 12 * 60) % (24 * 60) - 12 * 60
        if low <= apart <= high:
            return True
    return False


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
    quantities = [n for n in _quantity_words(text) if _outside(n.start, spans)]
    # the "two" of "two thirds" is the fraction's
    fractions = [(n.start, n.start + len(n.found)) for n in quantities if n.unit == "%"]
    numbers.extend(n for n in _spelled_numbers(text) if _outside(n.start, spans) and _outside(n.start, fractions))
    numbers.extend(quantities)
    return _ranges(text, _and_a_half(text, sorted(numbers, key=lambda n: n.start)))


# Money: a currency sign or code before the amount ("€5", "USD 40") or its code or name after it ("14.20 EUR").
_CODES = "|".join(CURRENCY_CODES)
_CURRENCY_BEFORE = re.compile(rf"(?:[€$£¥]|\b(?:{_CODES})\s?)$")
_CURRENCY_AFTER = re.compile(rf"\s?(?:{_CODES}|dollars?|euros?|pounds?)\b",
                             re.IGNORECASE)


def _money(text: str, number: Number) -> Number:
    """The number as an amount of money where the text writes it as one (the currency is not compared:
    a fact's amount has its currency in its label)."""
    if number.unit is not None or number.percent:
        return number
    if _CURRENCY_BEFORE.search(text, max(0, number.start - 4), number.start) or _CURRENCY_AFTER.match(
            text, number.start + len(number.found)):
        return Number(number.found, number.value, False, number.start, "money")
    return number


_RANGE = re.compile(r"\s*(?:to|-|–|—|and|or)\s*")


def _ranges(text: str, numbers: list[Number]) -> list[Number]:
    """A range takes its unit from its end: "5 to 10 business days" is two numbers of days, "2-3
    hours" two durations, "€10 to 15" two amounts; and an amount is money where a currency says so."""
    numbers = [_money(text, n) for n in numbers]
    for i in range(len(numbers) - 2, -1, -1):
        first, last = numbers[i], numbers[i + 1]
        if first.unit is None and not first.percent and last.unit in ("s", "%") and _RANGE.fullmatch(
                text, first.start + len(first.found), last.start):
            scale = last.seconds / last.value if last.unit == "s" and last.value else None
            numbers[i] = Number(first.found, first.value, last.unit == "%", first.start, last.unit,
                                first.value * scale if scale is not None else None)
        elif last.unit is None and first.unit == "money" and _RANGE.fullmatch(
                text, first.start + len(first.found), last.start):
            numbers[i + 1] = Number(last.found, last.value, False, last.start, "money")
    return numbers


_AND_A_HALF = re.compile(r"\s+and\s+a\s+half(?=[\s-]+(?:minutes?|hours?|days?|weeks?)\b)", re.IGNORECASE)
_HALF_AFTER = re.compile(r"\s+and\s+a\s+half\b(?![\s-]+(?:of\b|an?\b|minutes?|hours?|days?|weeks?))", re.IGNORECASE)


def _and_a_half(text: str, numbers: list[Number]) -> list[Number]:
    """A number and a half of a unit of time is one duration: "thirteen and a half hours" is 810 minutes,
    "2 and a half days" 60 hours, "an hour and a half" 90 minutes (the fraction is not a share of its own)."""
    merged, halves = [], set()
    for number in numbers:
        end = number.start + len(number.found)
        m = None if number.unit or number.percent else _AND_A_HALF.match(text, end)
        if m is not None:
            halves.add(m.end() - len("half"))
            merged.append(_with_unit(text[number.start : m.end()], number.value + Decimal("0.5"), number.start,
                                     text[m.end():]))
            continue
        unit = _DURATION.match(text, end) if number.unit == "s" and number.value else None
        m = _HALF_AFTER.match(text, unit.end() if unit else end) if number.unit == "s" and number.value else None
        if m is None:
            merged.append(number)
            continue
        halves.add(m.end() - len("half"))
        seconds = number.seconds + number.seconds / number.value / 2
        merged.append(Number(text[number.start : m.end()], number.value + Decimal("0.5"), False, number.start, "s",
                             seconds))
    return _compound(text, [n for n in merged if n.start not in halves])


_COMPOUND_GAP = re.compile(r",?\s+(?:and\s+)?")


def _compound(text: str, numbers: list[Number]) -> list[Number]:
    """Durations written in parts are one duration: "3 hours and 15 minutes" is 195 minutes, "1 hour 30
    minutes" 90 (the larger unit first)."""
    joined: list[Number] = []
    for number in numbers:
        last = joined[-1] if joined else None
        if last is not None and last.seconds is not None and number.seconds is not None \
                and number.seconds < last.seconds:
            unit = _DURATION.match(text, last.start + len(last.found))
            gap = _COMPOUND_GAP.fullmatch(text, unit.end(), number.start) if unit else None
            if gap and _DURATION.match(text, number.start + len(number.found)):
                seconds = last.seconds + number.seconds
                joined[-1] = Number(text[last.start : number.start + len(number.found)], seconds / 60, False,
                                    last.start, "s", seconds)
                continue
        joined.append(number)
    return joined


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


_EVERY_PERIOD = re.compile(r"\b(?:every|each|per|an?|once\s+an?)\s+(hour|minute|day)\b", re.IGNORECASE)
_PERIOD_SECONDS = {"minute": Decimal(60), "hour": Decimal(3600), "day": Decimal(86400)}

_PERCENTILE_NAME = re.compile(r"(?<![A-Za-z0-9])[pP](\d{2}(?:\.\d+)?)(?![0-9])")


# The units a fact's meta names (agents.core.units), as the numbers check reads them.
_META_UNITS = {"minutes": ("s", Decimal(60)), "ms": ("s", Decimal("0.001")), "%": ("%", None),
               "currency": ("money", None)}


def _meta_units(allowed_text: str) -> dict[str, tuple]:
    """Each fact key's unit from the ``fact_meta`` of an allowed text that is a context's JSON: the
    product says its facts' units, so 340 under "duration" in minutes is a duration of 340 minutes."""
    if '"fact_meta"' not in allowed_text:
        return {}
    try:
        meta = json.loads(allowed_text).get("fact_meta")
    except (ValueError, AttributeError):
        return {}
    units = {}
    for item in meta if isinstance(meta, list) else []:
        if isinstance(item, dict) and isinstance(item.get("key"), str) and item.get("unit") in _META_UNITS:
            unit, scale = _META_UNITS[item["unit"]]
            units[item["key"]] = (None, unit, scale)
    return units


def _allowed_numbers(allowed_text: str, spans: list[tuple[int, int]]) -> list[Number]:
    numbers = extract_numbers(allowed_text, skip=spans)
    keyed, meta = {}, _meta_units(allowed_text)
    for m in _JSON_NUMBER.finditer(allowed_text):
        for pattern, unit, scale in (meta[m.group(1)],) if m.group(1) in meta else _KEY_UNITS:
            if pattern is None or pattern.search(m.group(1)):
                value = Decimal(m.group(2))
                if unit == "ratio" and value > 1:
                    unit = "%"  # a share of 12 is 12 %: no ratio is above 1
                keyed[m.start(2)] = Number(m.group(2), value, unit == "%", m.start(2), unit,
                                           value * scale if scale is not None else None)
                break
    numbers = [keyed.get(n.start, n) for n in numbers]
    # A percentile named as "p95" (a label, or a key such as "page_p95_ms", which reads as an id)
    # supports "the 95th percentile".
    numbers += [Number(m.group(1), Decimal(m.group(1)), False, m.start(1))
                for m in _PERCENTILE_NAME.finditer(allowed_text)]
    # "Every hour" holds a number: one hour ("next update in one hour", "in 1 hour", "in 60 minutes").
    numbers += [Number(m.group(), Decimal(1), False, m.start(), "s", _PERIOD_SECONDS[m.group(1).lower()])
                for m in _EVERY_PERIOD.finditer(allowed_text)]
    # "Twice" is what a double or duplicate charge (or delivery) is: those words support it.
    numbers += [Number(m.group(), Decimal(2), False, m.start())
                for m in re.finditer(r"\b(?:double|duplicat)\w*", allowed_text, re.IGNORECASE)]
    # Compact JSON writes lists as "[1,200]": also read each part of a grouped number on its own,
    # so a grouped reading ("1,200" = 1200) never hides the plain ones. A list opens with "[" (or goes on
    # after ","); in prose, "About 1,200 emails", the number is 1,200 and no 200.
    for grouped in _DIGITS.finditer(allowed_text):
        if "," in grouped.group(1) and _outside(grouped.start(), spans) and \
                allowed_text[grouped.start() - 1 : grouped.start()] in ("[", ","):
            numbers += [Number(m.group(), Decimal(m.group()), False, grouped.start() + m.start())
                        for m in _PLAIN_DIGITS.finditer(grouped.group(0))]
    return numbers


def _number_supported(number: Number, allowed: list[Number], ratios: frozenset[Decimal] | None = None) -> bool:
    """A number is supported by the same quantity in the context: the same value with no unit on
    either side, or in the same unit (durations compared in seconds; 3.4 % is the ratio 0.034). A
    value the context has only in another unit is a new fact: 45 % is not 45 minutes. When the
    context says its facts' units (``ratios`` given), only a ratio fact supports a percentage read
    as a ratio: 500 % is not 5 alerts. A bare number supports a duration said in hours that is that many
    minutes, as it supports the same duration said in minutes: "an hour and a half" for a delay of 90."""
    for other in allowed:
        if number.unit == "s" and other.unit is None and number.seconds == other.value * 60 and \
                number.value != other.value:
            return True
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
        elif number.value == other.value and (number.unit is None and other.unit != "%" or other.unit is None or
                                              number.unit == other.unit):
            # A bare number is never supported by a ratio's value (3.4 is not 0.034), nor by a percentage ("60 of
            # the 310 moves" where 60 % of them are).
            return True
    return False



# A number said as an approximation: "about 40 minutes" for 38, "just under six hours" for 340 minutes.
# The word before it says which side of the fact it may stand on: -1 at or below, +1 at or above.
_APPROXIMATE = re.compile(
    r"(?:\b(?P<either>about|around|approximately|roughly|some|an\s+estimated|close\s+to)"
    # "under 2 minutes" for 1.9, "just under six hours" for 340 minutes: a ceiling the fact is just below
    r"|\b(?P<above>(?:(?:just|a\s+little|a\s+bit|slightly)\s+)?(?:under|below|less\s+than)|nearly|almost|not\s+quite"
    r"|just\s+short\s+of)"
    # "over 8 seconds" for 8,400 ms, "more than four in ten" for 43 %: a floor the fact is just above
    r"|\b(?P<below>(?:(?:just|a\s+little|a\s+bit|slightly)\s+)?(?:over|above|more\s+than)|at\s+least"
    r"|upwards\s+of|in\s+excess\s+of)"
    r"|(?P<tilde>~))\s*$",
    re.IGNORECASE,
)
# What "twice" says, in the incident's words: "a second time", "double charges", "duplicate payments".
_TWICE = re.compile(r"\b(?:twice|second\s+time|two\s+times|doubled?|duplicat\w*)\b", re.IGNORECASE)
_OR_MORE = re.compile(r"(?:\s*(?:[a-z]+|%))?\s+or\s+(?:more|longer|above)\b", re.IGNORECASE)  # "9 seconds or more"
_APPROXIMATE_WITHIN = Decimal("0.1")  # of the fact's value, at most
# A share said as a fraction in words is a rounding of its own, said or not: "half" or "a little under half"
# for 45 %, "a third" for 31 %, within five points of the fact's percentage.
_SAID_AS_FRACTION = re.compile(r"\b(?:half|thirds?|quarters?|fifths?|tenths?)\b", re.IGNORECASE)
_FRACTION_WITHIN = Decimal(5)  # percentage points


def _approximation(text: str, number: Number) -> int | None:
    """How ``number`` is said as an approximation: 0 either side of the fact, 1 for a number the fact
    is just under ("nearly 6 hours"), -1 for one it is just over; None for a number said exactly."""
    m = _APPROXIMATE.search(text, max(0, number.start - 24), number.start)
    if m is None and _OR_MORE.match(text, number.start + len(number.found)):
        return -1
    if m is None:
        return 0 if number.unit == "%" and _SAID_AS_FRACTION.search(number.found) else None
    return 1 if m.group("above") else -1 if m.group("below") else 0


def _step(said: Decimal) -> Decimal:
    """How round ``said`` is: 40 rounds to tens, 35 to fives, 6 to ones, 12.5 to halves."""
    written = said.normalize().as_tuple()
    unit = Decimal(10) ** written.exponent
    return unit * 5 if written.digits[-1] == 5 else unit


def _near(said: Decimal, fact: Decimal, side: int) -> bool:
    """Whether ``said`` is ``fact`` rounded as roundly as ``said`` is written (and within a tenth of
    it), on the side the words say: "about 40" for 38, "nearly 6" for 5.7, never "about 12.5" for 13.5."""
    if fact <= 0 or said <= 0 or abs(said - fact) > fact * _APPROXIMATE_WITHIN:
        return False
    if abs(said - fact) * 2 > _step(said):
        return False
    return side == 0 or (said - fact) * side >= 0


def _approximately_supported(number: Number, side: int, allowed: list[Number]) -> bool:
    """A number said as an approximation is supported by a fact of the same quantity it rounds: a
    duration by a duration (in seconds), a percentage by a percentage, a bare number by a bare number."""
    for other in allowed:
        if number.unit == "s" and other.unit == "s":
            scale = number.seconds / number.value if number.value else None  # the unit it is said in
            if scale and _near(number.value, other.seconds / scale, side):
                return True
        elif number.unit == "%" and other.unit in ("%", None):
            if _near(number.value, other.value, side):
                return True
            if _SAID_AS_FRACTION.search(number.found) and abs(number.value - other.value) <= _FRACTION_WITHIN and \
                    (number.value - other.value) * side >= 0:
                return True
        elif number.unit in (None, "money") and other.unit in (None, number.unit) and _near(number.value, other.value,
                                                                                         side):
            return True
    return False


# ---------------------------------------------------------------- the check


def find(text: str, support: Support) -> list[Violation]:
    """The numbers, dates, times of day and ids the allowed text does not support, in reading order."""
    text, allowed_text, ratios = prose(text, support), support.allowed_text, support.ratios
    text_moments = find_moments(text)
    allowed_moments, allowed_numbers = _allowed_facts(allowed_text)
    cadence = _cadence_facts(support.claim_evidence)
    # Where the incident gives no time for its next update, the text may give one ("next update in 30
    # minutes", "we'll post another update by 15:00 UTC"): a promise about telling, not about the fix.
    own = None  # where the text gives its next update's time: read at the first number that needs it
    facts: list[tuple[int, str, str]] = []  # (where, the words, why)
    numbers = extract_numbers(text, skip=_spans(text, text_moments))
    shares, unsupported_shares = _shares_said(text, numbers, allowed_numbers, ratios)
    for number in numbers:
        if number.start in shares:
            continue
        if _number_supported(number, allowed_numbers, ratios):
            if _only_cadence(number, cadence, _number_supported) and not _in_cadence(text, number.start, number.found):
                facts.append((number.start, number.found, _CADENCE_ONLY))
            elif (top := _range_low_as_most(text, number, allowed_text, allowed_numbers)) is not None:
                facts.append((number.start, number.found, _RANGE_LOW.format(token="{token}", top=top.found)))
            elif (other := _counts_other(text, number, support)) is not None:
                facts.append((number.start, number.found, _COUNTS_OTHER.replace("{label}", other)))
            continue
        if number.unit == "s" and _inside(number.start, own := _own_cadence(text, support, own)) or \
                _status_class(text, number, allowed_text):
            continue
        if _counts_a_list(text, number, support.claim_evidence):
            continue
        if number.found.lower() == "twice" and _TWICE.search(allowed_text):
            continue  # "applied the surge multiplier twice" where the incident says "a second time"
        side = _approximation(text, number)
        if side is None or not _approximately_supported(number, side, allowed_numbers):
            facts.append((number.start, number.found, _UNSUPPORTED))
    for moment in text_moments:
        if _STAMPED.match(text[: moment.start]) and _STAMP_END.match(text, moment.start + len(moment.found)):
            continue  # "Update 09:40 GMT: …": when the update is posted, no time of the incident's
        if not _moment_supported(moment, allowed_moments) and not _said_near(text, moment, allowed_moments):
            if not _inside(moment.start, own := _own_cadence(text, support, own)):
                facts.append((moment.start, moment.found, _UNSUPPORTED))
        elif _only_cadence(moment, cadence, _moment_supported) and not _in_cadence(text, moment.start, moment.found):
            facts.append((moment.start, moment.found, _CADENCE_ONLY))
    allowed_lower = allowed_text.lower()
    for m in _ID.finditer(text):
        if m.group().lower() not in allowed_lower and not INCIDENT_ID.fullmatch(m.group()):
            facts.append((m.start(), m.group(), _UNSUPPORTED))
    return [Violation("no_new_facts", token, why.format(token=token))
            for _, token, why in sorted(_one_per_share(facts, unsupported_shares))]


def _one_per_share(facts: list[tuple[int, str, str]], shares: list[Number]) -> list[tuple[int, str, str]]:
    """The findings with the numbers of each unsupported share ("one in ten") as one finding: the lead reads
    the share, not its two numbers."""
    for share in shares:
        end = share.start + len(share.found)
        inside = [f for f in facts if share.start <= f[0] < end and f[2] == _UNSUPPORTED]
        if inside:
            facts = [f for f in facts if f not in inside]
            facts.append((share.start, share.found, _UNSUPPORTED_SHARE.replace("{share}", _percent(share.value))))
    return facts


def _percent(value: Decimal) -> str:
    """A share for the lead to read: "10%", "33.3%"."""
    return f"{value.quantize(Decimal('0.1')).normalize():f}%"


_UNSUPPORTED = "“{token}” is not supported by the incident context."
_UNSUPPORTED_SHARE = "“{token}” (a share of {share}) is not supported by the incident context."
# "Roughly six in ten uploads", "three out of every five attempts", "1 in 4 sign-ins": two numbers that say
# one share, supported by the incident's percentage of it. Words may stand between the first number and
# "in" only where the second ends its phrase ("six attempts in ten."): "5 stations in 12 cities" counts two
# things.
_SHARE_LINK = re.compile(r"\s+" + _SHARE_WORDS + r"\s+$", re.IGNORECASE)
_SHARE_LINK_AFTER_WORDS = re.compile(r"\s+(?:[^\W\d_][\w-]*\s+){1,2}" + _SHARE_WORDS + r"\s+$", re.IGNORECASE)
_PHRASE_ENDS = re.compile(r"\s*(?:[,.;:!?)]|$)")


def _share_pairs(text: str, numbers: list[Number]) -> Iterator[tuple[Number, Number]]:
    """The pairs of numbers that say one share as "N in M"."""
    for first, second in zip(numbers, numbers[1:], strict=False):
        if first.unit or second.unit or first.percent or second.percent or not 0 < first.value < second.value:
            continue
        gap = text[first.start + len(first.found) : second.start]
        if _SHARE_LINK.fullmatch(gap) or _SHARE_LINK_AFTER_WORDS.fullmatch(gap) and \
                _PHRASE_ENDS.match(text, second.start + len(second.found)):
            yield first, second


def _share(text: str, first: Number, second: Number) -> Number:
    """The share two numbers say, as one number: its words and its percentage."""
    return Number(text[first.start : second.start + len(second.found)], first.value * 100 / second.value, True,
                  first.start, "%")


def shares_said(text: str, numbers: list[Number]) -> list[Number]:
    """Each share ``text`` says as "N in M" ("one in ten", "3 out of every 5"), as one number."""
    return [_share(text, first, second) for first, second in _share_pairs(text, numbers)]


def _shares_said(text: str, numbers: list[Number], allowed: list[Number], ratios) -> tuple[set[int], list[Number]]:
    """Where each number of a share said as "N in M" starts, for the shares the incident supports, and the
    shares it does not support (each as one number: its words and its percentage)."""
    starts: set[int] = set()
    unsupported: list[Number] = []
    for first, second in _share_pairs(text, numbers):
        share = _share(text, first, second)
        side = _approximation(text, first)
        if _number_supported(share, allowed, ratios) or (side is not None and
                                                          _approximately_supported(share, side, allowed)):
            starts |= {first.start, second.start}
        else:
            unsupported.append(share)
    return starts, unsupported


# "More than 5,600 customers cannot download their PODs" where the incident's 5,600 counts "Deliveries without a
# downloadable POD": a count is bound to what it counts. Said of people or accounts, it must be a count of them
# where every fact with its value counts things (deliveries, orders, requests) and no text of the incident says
# it of people.
_COUNTS_OTHER = "“{token}” counts people or accounts here; the incident's {token} counts “{label}”."


def _counts_other(text: str, number: Number, support: Support) -> str | None:
    """The label of the fact ``number`` counts, where the text counts people with it and the fact does not."""
    context = support.context
    if number.unit is not None or number.value < 2 or not isinstance(context, Mapping) or \
            not isinstance(context.get("incident"), Mapping):
        return None
    noun = _COUNTED.match(text, number.start + len(number.found))
    if noun is None or not counts_people(noun.group(1)):
        return None
    incident = context["incident"]
    labels = [label for key, label, _unit in fact_meta(context) if number_value(incident.get(key)) == number.value]
    if not labels or any(counts_people(label) or not counts_things(label) for label in labels):
        return None
    evidence = support.claim_evidence
    for said in extract_numbers(evidence):
        if said.value == number.value and (whom := _COUNTED.match(evidence, said.start + len(said.found))) \
                and counts_people(whom.group(1)):
            return None  # "we emailed the 5,600 customers": the incident counts them too
    return labels[0].replace("{", "{{").replace("}", "}}")


# "at all three sites" where a fact labelled "Sites" lists "Dallas, Memphis and Columbus distribution
# centres": how many things a fact lists is its number, bound to what its label names.
_COUNTED = re.compile(r"\s+(?:of\s+(?:the|our|these|those|its|their)\s+)?(?:(?:more|other|affected)\s+)?"
                      r"([^\W\d_][\w-]*)")
_LIST_SEPARATOR = re.compile(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", re.IGNORECASE)


def _counts_a_list(text: str, number: Number, evidence: str) -> bool:
    """Whether ``number`` counts the things one of the incident's facts lists, named as its label names them."""
    if number.unit is not None or number.value != int(number.value) or not 2 <= number.value <= 12:
        return False
    if not (counted := _COUNTED.match(text, number.start + len(number.found))):
        return False
    thing = stem(counted.group(1).lower())
    for line in evidence.splitlines():
        label, colon, value = line.partition(": ")
        if colon and thing in {stem(word) for word in re.findall(r"[^\W\d_]+", label.lower())} and \
                len(_LIST_SEPARATOR.split(value.strip().rstrip("."))) == number.value:
            return True
    return False
# A post's own time stamp, at its start: "Update 09:40 GMT:", "Update (9:00 AM CT) -", "Posted at 14:05:".
_STAMPED = re.compile(r"\s*\[?(?:update|updated|posted)(?:\s+at)?\s*\(?\s*$", re.IGNORECASE)
_STAMP_END = re.compile(r"(?:\s+[A-Z]{2,5}\b)?\s*\)?\]?\s*(?::|\s[-–—]\s)")  # "9:00 AM CT:"
_RANGE_LOW = ("“{token}” is given as the most, and the incident gives it as the least of a range that goes up to "
              "“{top}”.")
# "delayed by up to 10 minutes" where the incident says "delayed by 10 to 40 minutes", "within 24 hours"
# where it says 1-3 days: the low end of a range given as the most understates it.
_AT_MOST = re.compile(r"\b(?:up\s+to|at\s+most|no\s+more\s+than|a\s+maximum\s+of|as\s+(?:much|long|many)\s+as|"
                      r"within)\s+$", re.IGNORECASE)
_LOW_RANGE_LINK = re.compile(r"\s*(?:to|-|–|and)\s*$", re.IGNORECASE)
_RANGE_ON = re.compile(r"\s*(?:to|-|–|and|or)\s*\d", re.IGNORECASE)


def _measure(number: Number) -> tuple:
    """What a number measures, as one value: a duration in seconds ("24 hours" is "1 day")."""
    return ("s", number.seconds) if number.seconds is not None else (number.value, number.unit)


def _range_low_as_most(text: str, number: Number, allowed_text: str, allowed: tuple[Number, ...]) -> Number | None:
    """The top of the incident's range whose low end the text gives as its most, or None."""
    if not _AT_MOST.search(text, max(0, number.start - 20), number.start) or \
            _RANGE_ON.match(text, number.start + len(number.found)):
        return None  # "within 1-3 business days" gives the range
    same = [i for i, n in enumerate(allowed) if _measure(n) == _measure(number)]
    tops = []
    for i in same:
        after = allowed[i + 1] if i + 1 < len(allowed) else None
        link = allowed_text[allowed[i].start + len(allowed[i].found) : after.start] if after else ""
        if after is None or not _LOW_RANGE_LINK.fullmatch(" " + link + " ") or after.value <= allowed[i].value:
            return None  # the incident gives the number on its own too
        tops.append(after)
    return tops[0] if tops else None
_CADENCE_ONLY = "“{token}” is when the incident's next update is due, and the text says it of something else."


@functools.lru_cache(maxsize=256)
def _allowed_facts(allowed_text: str) -> tuple[tuple[Moment, ...], tuple[Number, ...]]:
    """The dates, times and numbers of an allowed text. Read once per text: one run checks several
    texts against the same incident, and a replay checks many runs of it."""
    moments = find_moments(allowed_text)
    return tuple(moments), tuple(_allowed_numbers(allowed_text, _spans(allowed_text, moments)))


# The time or the interval of the next update is no time of anything else: an incident whose only "30
# minutes" is "Next update: within 30 minutes" does not support "we expect this to be fixed within 30
# minutes", nor one whose only 08:00 UTC is its next update "working again by 08:00 UTC".
@dataclass(frozen=True)
class _Cadence:
    numbers: tuple[Number, ...]  # said in a sentence about the next update
    moments: tuple[Moment, ...]
    other_numbers: tuple[Number, ...]  # said anywhere else
    other_moments: tuple[Moment, ...]


@functools.lru_cache(maxsize=256)
def _cadence_facts(evidence: str) -> _Cadence:
    """The numbers and times of the evidence (a line per text, and per fact "Label: value"), split by
    whether the sentence that says them is about the next update."""
    found: dict[bool, tuple[list, list]] = {True: ([], []), False: ([], [])}
    lines = evidence.splitlines()
    labelled = {line.partition(": ")[2] for line in lines}  # "Next update: Within 30 minutes"
    for line in lines:
        if line in labelled:
            continue  # a fact's value, read with its label
        moments = find_moments(line)
        numbers = extract_numbers(line, skip=_spans(line, moments))
        for fact in (*numbers, *moments):
            found[is_cadence(line, fact.start, fact.start + len(fact.found))][isinstance(fact, Moment)].append(fact)
    return _Cadence(tuple(found[True][0]), tuple(found[True][1]), tuple(found[False][0]), tuple(found[False][1]))


def _only_cadence(fact, cadence: _Cadence, supported) -> bool:
    """Whether the evidence says ``fact`` (a number or a time) only of its next update."""
    said, other = ((cadence.moments, cadence.other_moments) if isinstance(fact, Moment)
                   else (cadence.numbers, cadence.other_numbers))
    return bool(said) and supported(fact, list(said)) and not supported(fact, list(other))


def _own_cadence(text: str, support: Support, known: list[tuple[int, int]] | None) -> list[tuple[int, int]]:
    """Where the text speaks of its next update, where the incident gives no time for one (``known``: the
    answer already read)."""
    if known is not None:
        return known
    return [] if _gives_cadence(support.claim_evidence) else cadence_spans(text)


@functools.lru_cache(maxsize=256)
def _gives_cadence(evidence: str) -> bool:
    """Whether the incident speaks of its next update ("Next update: 15:30 UTC", "post an update every hour",
    "publish customer update via status page every 15 minutes", a key ``next_update``)."""
    return CADENCE.search(evidence) is not None or _NEXT_UPDATE_KEY.search(evidence) is not None


_NEXT_UPDATE_KEY = re.compile(r"\bnext_update|\bupdates?\b[^.\n]{0,40}?\bevery\b", re.IGNORECASE)


def _status_class(text: str, number: Number, allowed_text: str) -> bool:
    """Whether ``number`` opens a class of HTTP statuses ("5xx errors") the incident gives a member or the
    class of ("HTTP 500 or 503 errors")."""
    digit = number.found
    if len(digit) != 1 or text[number.start + 1 : number.start + 3].lower() != "xx":
        return False
    return re.search(rf"(?<![\d.]){digit}(?:\d\d|xx)(?![\d.])", allowed_text, re.IGNORECASE) is not None


def _inside(start: int, spans: list[tuple[int, int]]) -> bool:
    return any(a <= start < b for a, b in spans)


def _in_cadence(text: str, start: int, found: str) -> bool:
    # in the clause that speaks of the next update, not only in its sentence: "ordering will be back by
    # 12:00 GMT, and we'll update this page then" promises the fix at the next update's time
    begin, end = sentence_bounds(text, start, start + len(found))
    sentence, at = text[begin:end], start - begin
    if not CADENCE.search(sentence) or _BY_THEN.match(text, start + len(found)):
        return False  # "next update within 30 minutes, by which point we expect delivery to be back to normal"
    return any(a <= at < b or b <= at and not _OWN_VERB.search(sentence, b, at)
               for a, b in cadence_clauses(sentence))


# What the next update's time is made the time of: "…, by which point we expect it to be back to normal".
_BY_THEN = re.compile(r"[^,;.]{0,20}?,?\s*(?:by\s+which\s+(?:point|time)|at\s+which\s+point|by\s+then)\b",
                      re.IGNORECASE)


# A clause with a verb of its own says something besides the next update ("…, and it will be fixed by 14:00").
_OWN_VERB = re.compile(r"\b(?:will|is|are|be|been|should|expect\w*|back|fixed|resolved|restored|working|running)\b"
                       r"|['’]ll\b", re.IGNORECASE)

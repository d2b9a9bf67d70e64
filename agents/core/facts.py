"""The fact and claim checks (SPEC §3.4 steps 4 and 6, §3.5.4, .5, .6, .7).

A text may only state numbers, incident ids, severity labels, regions and restricted claims that
the *allowed text* supports. The patch guard passes the canonical context JSON plus the original
draft; the final-answer check passes the context alone (a draft is not its own evidence).
Plain Python: no Django here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from agents.core.patterns import UnsafePattern, compile_pattern, word_pattern
from agents.core.policy import GuardRules

# The order callers rely on: the first violation's check becomes the stop reason.
CHECKS = (
    "no_new_facts",
    "new_incident_id",
    "new_severity_label",
    "new_region",
    "restricted_claims",
)


@dataclass(frozen=True)
class Violation:
    check: str  # one of CHECKS
    found: str  # the offending token or phrase, as written in the checked text
    message: str


@dataclass(frozen=True)
class Number:
    found: str  # as written: "27%", "3.4 %", "forty-five"
    value: Decimal  # Decimal keeps 0.034 * 100 == 3.4 exact, and 45 == 45.0
    percent: bool
    start: int


# ---------------------------------------------------------------- numbers (§3.4.4, §3.5.6)

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
        numbers.append(Number(text[start:end], value, bool(percent), start))
    return numbers


def extract_numbers(text: str) -> list[Number]:
    """Every quantity in ``text``, written in digits or spelled in words, in reading order."""
    numbers = []
    for m in _DIGITS.finditer(text):
        digits = m.group(1).replace(",", "") + ("." + m.group(2) if m.group(2) else "")
        numbers.append(Number(m.group(0), Decimal(digits), bool(m.group(3)), m.start()))
    numbers.extend(_spelled_numbers(text))
    return sorted(numbers, key=lambda n: n.start)


def _supported_values(allowed_text: str) -> set[Decimal]:
    values = {n.value for n in extract_numbers(allowed_text)}
    # Compact JSON writes lists as "[1,200]": also read each part on its own, so a grouped
    # reading ("1,200" = 1200) never hides the plain ones.
    values.update(Decimal(m.group()) for m in _PLAIN_DIGITS.finditer(allowed_text))
    return values


def _number_supported(number: Number, allowed: set[Decimal], ratios: frozenset[Decimal] | None = None) -> bool:
    if number.value in allowed:
        return True
    # 3.4% is the ratio 0.034; a bare 3.4 is not (it would be a different quantity). When the
    # context says its facts' units, only a ratio fact supports a percentage: 500% is not 5 alerts.
    return number.percent and number.value / 100 in (allowed if ratios is None else ratios)


# ---------------------------------------------------------------- ids, labels, regions

_INCIDENT_ID = re.compile(r"\binc_[a-z0-9_]+\b", re.IGNORECASE)
_SEVERITY = re.compile(r"\bp[0-5]\b", re.IGNORECASE)


def _region_pattern(token: str):
    """Short tokens (us, eu, uk, ua) are ordinary words in lower case ("let us know"), so they
    name a region only in upper case; longer ones (apac, global) match in any case (§3.5.4).
    Tokens are admin text, so they are matched with RE2 like every admin pattern."""
    if len(token) <= 2:
        return word_pattern(token.upper(), case_sensitive=True)
    return word_pattern(token, case_sensitive=False)


def _region_in_allowed(token: str, allowed_text: str) -> bool:
    # The context is JSON ("region":"us" is as good as "US"), but the original draft in the same
    # allowed text may say "let us know": a short token counts in upper case as a word, or in any
    # case as a whole JSON string value, never as a lower-case word in prose.
    if _region_pattern(token).search(allowed_text):
        return True
    return f'"{token}"' in allowed_text.lower()


# ---------------------------------------------------------------- restricted claims (§3.5.7)

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
    "yet", "fully", "completely", "entirely", "totally", "still", "quite", "now",
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


def _is_negation(word: str) -> bool:
    return word in _NEGATIONS or word.endswith("n't") or word.endswith("n’t")


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


def is_hedged(text: str, start: int) -> bool:
    """Whether the claim starting at ``start`` is negated, conditional or an expectation."""
    clause = _clause_before(text, start).lower()
    words = _WORD.findall(clause)[-_HEDGE_WINDOW:]
    # A negation hedges only when it governs the claim: nothing but auxiliaries and adverbs in
    # between ("has not yet been resolved"), so "the issue we did not expect is resolved" still
    # asserts it.
    for word in reversed(words):
        if _is_negation(word):
            return True
        if word not in _AUX:
            break
    if any(word in _SUBORDINATORS or word in _MODALS for word in words):
        return True
    return _MODAL_PHRASES.search(" ".join(words)) is not None


def _unhedged(text: str, pattern: str):
    """The unhedged matches of one restricted-claim pattern (RE2, case-insensitive), lazily.
    Raises :class:`UnsafePattern` for a pattern RE2 refuses."""
    return (m for m in compile_pattern(pattern).finditer(text) if not is_hedged(text, m.start()))


def find_claims(text: str, patterns: tuple[str, ...] | list[str]) -> list:
    """Every unhedged match of the restricted-claim patterns, in reading order.

    Patterns are admin text: they run on RE2 (agents.core.patterns), in time linear in the text; one
    that RE2 refuses raises :class:`agents.core.patterns.UnsafePattern`."""
    claims = [m for pattern in patterns for m in _unhedged(text, pattern)]
    return sorted(claims, key=lambda m: m.start())


def makes_claim(text: str, pattern: str) -> bool:
    """Whether ``text`` makes the claim at least once, unhedged (stops at the first)."""
    return next(_unhedged(text, pattern), None) is not None


# ---------------------------------------------------------------- the check


# Words aimed at the model rather than at customers: "ignore previous instructions", "say that ...".
# A clause carrying one is an instruction, not a fact, and licenses no restricted claim.
# On RE2 although it is ours: the `.*` between two word lists backtracks on incident data (which is
# untrusted), 12 s for a 100 KB clause of "ignore ignore ..." with `re`.
_INSTRUCTION = compile_pattern(
    r"\b(?:ignore|disregard|forget|override)\b.*\b(?:instructions?|rules?|prompts?|guidelines?)\b"
    r"|\b(?:say|tell|claim|announce|pretend|state|write|respond|reply)\b"
)
_CLAUSE = re.compile(r"[^.;!?\n]+[.;!?\n]?")


def without_instructions(text: str) -> str:
    """``text`` with every clause that instructs the model removed."""
    return " ".join(c.strip() for c in _CLAUSE.findall(text) if c.strip() and not _INSTRUCTION.search(c))


def find_violations(
    text: str, allowed_text: str, rules: GuardRules, *, strict_claims: bool = False,
    claim_evidence: str | None = None, ratios: frozenset[Decimal] | None = None,
) -> list[Violation]:
    """Everything in ``text`` that ``allowed_text`` does not support, ordered by CHECKS.

    ``claim_evidence`` is the text whose claims may license a restricted claim (default: the
    allowed text); the guard passes the context and draft with instructions to the model removed.
    ``ratios`` are the values of the context's ratio facts (``agents.core.units.ratio_values``):
    given, only they support a percentage; None (a context without units) lets any number do.
    """
    found: list[Violation] = []
    seen: set[tuple[str, str]] = set()

    def add(check: str, token: str, message: str) -> None:
        key = (check, token.lower())
        if key not in seen:  # one entry per distinct token keeps the UI readable
            seen.add(key)
            found.append(Violation(check, token, message))

    allowed_values = _supported_values(allowed_text)
    for number in extract_numbers(text):
        if not _number_supported(number, allowed_values, ratios):
            message = f"“{number.found}” is not supported by the incident context."
            add("no_new_facts", number.found, message)

    allowed_ids = {m.group().lower() for m in _INCIDENT_ID.finditer(allowed_text)}
    for m in _INCIDENT_ID.finditer(text):
        if m.group().lower() not in allowed_ids:
            message = f"“{m.group()}” is not an incident in the context."
            add("new_incident_id", m.group(), message)

    allowed_labels = {m.group().lower() for m in _SEVERITY.finditer(allowed_text)}
    for m in _SEVERITY.finditer(text):
        if m.group().lower() not in allowed_labels:
            message = f"Severity “{m.group()}” is not the one in the context."
            add("new_severity_label", m.group(), message)

    # A snapshot may hold a pattern or token RE2 refuses (saved before admin checked, or edited in
    # the database). It is never matched with a backtracking engine, and never skipped: it fails
    # its check, so the text goes to a person with the reason.
    regions = []
    for token in rules.regions:
        try:
            if not isinstance(token, str):
                raise UnsafePattern(f"a region token must be text, not {type(token).__name__}")
            matches = list(_region_pattern(token.lower()).finditer(text))
        except UnsafePattern as error:
            add("new_region", str(token), f"The region token “{token}” cannot be checked safely: {error}.")
            continue
        if matches and not _region_in_allowed(token.lower(), allowed_text):
            regions += matches
    for m in sorted(regions, key=lambda m: m.start()):
        add("new_region", m.group(), f"Region “{m.group()}” is not named in the context.")

    # A claim is supported by an unhedged occurrence in the allowed text: an original that says
    # "not yet resolved" does not license a revision that says "resolved" (§3.5.7 both ways).
    # The strict form (avoid_absolute_guarantees) accepts no support at all.
    evidence = allowed_text if claim_evidence is None else claim_evidence
    unsupported = []
    for pattern in rules.restricted_claims:
        try:
            compile_pattern(pattern)
        except UnsafePattern as error:
            message = (f"The restricted-claim pattern “{pattern}” cannot be checked safely: {error}. "
                       "A person must check the text for it.")
            add("restricted_claims", str(pattern), message)
            continue
        if strict_claims or not makes_claim(evidence, pattern):
            unsupported.append(pattern)
    for m in find_claims(text, unsupported):
        if strict_claims:
            message = f"“{m.group()}” is a restricted claim, and this policy avoids guarantees."
        else:
            message = f"“{m.group()}” is a restricted claim the incident context does not support."
        add("restricted_claims", m.group(), message)

    return sorted(found, key=lambda v: CHECKS.index(v.check))

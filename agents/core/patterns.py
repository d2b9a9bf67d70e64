"""Regular expressions that people type (restricted claims, region tokens), run on RE2.

Python's ``re`` backtracks: ``(a+)+$``, ``(x+x+)+y`` or ``(.*a){25}`` take exponential time on a
text that almost matches, so one pattern saved in admin could freeze a worker or the web process
for minutes. Every pattern derived from admin text is compiled here, with RE2 (google-re2), whose
matching time grows linearly with the text. RE2 refuses what it cannot run in linear time
(lookarounds, backreferences, possessive quantifiers); admin refuses those patterns at save with
:func:`pattern_problem`'s message, and a stored snapshot that still holds one is reported by the
guard as a failed check, never matched with ``re`` and never skipped.

Linear in the text is not yet fast: RE2's cost is the text length times the pattern's program size
in the worst case, so programs larger than :data:`MAX_PROGRAM_SIZE` are refused too.

Differences from ``re`` an admin may notice: ``\\b``, ``\\w``, ``\\d`` and ``\\s`` are ASCII-only;
``\\Z`` is written ``\\z``; ``$`` matches only at the very end; counted repetitions stop at {1000}.
Plain Python: no Django here.
"""

from __future__ import annotations

import functools
import re

import re2

# RE2 program instructions. The default restricted claims compile to 16-46; a 450-character
# alternation of phrases to about 450; `.{0,100}` to about 900. Measured worst case at this size:
# about 0.2 s on a 100 KB text (DFA state blow-up falls back to the NFA); texts the guard sees are
# bounded far lower (max_answer_chars <= 20,000).
MAX_PROGRAM_SIZE = 1000

# What RE2's error says -> what to tell the admin (the constructs a backtracking engine needs).
_HINTS = (
    ("invalid perl operator: (?=", "a lookahead (?=…)"),
    ("invalid perl operator: (?!", "a negative lookahead (?!…)"),
    ("invalid perl operator: (?<=", "a lookbehind (?<=…)"),
    ("invalid perl operator: (?<!", "a negative lookbehind (?<!…)"),
    ("invalid perl operator: (?P", "a backreference (?P=name)"),
    ("invalid perl operator: (?>", "an atomic group (?>…)"),
    ("bad repetition operator: ++", "a possessive quantifier"),
    ("bad repetition operator: *+", "a possessive quantifier"),
    ("bad repetition operator: ?+", "a possessive quantifier"),
    ("invalid escape sequence: \\Z", "\\Z (write \\z for the end of the text)"),
) + tuple((f"invalid escape sequence: \\{d}", f"a backreference (\\{d})") for d in "123456789")


# A `\b` of the pattern (not `\\b`, an escaped backslash and a letter b).
_WORD_BOUNDARY = re.compile(r"(?<!\\)(?:\\\\)*\\b")


def _boundary_by_other_letter(pattern: str) -> bool:
    r"""Whether a `\b` stands right next to a letter outside ASCII (`\bréglé\b`)."""
    for m in _WORD_BOUNDARY.finditer(pattern):
        around = pattern[m.start() - 1 : m.start()] + pattern[m.end() : m.end() + 1]
        if any(c.isalpha() and not c.isascii() for c in around):
            return True
    return False


class UnsafePattern(ValueError):
    """RE2 cannot run the pattern in linear time; ``str()`` says why, for a person."""


def _options(*, case_sensitive: bool) -> re2.Options:
    options = re2.Options()
    options.case_sensitive = case_sensitive
    options.log_errors = False  # the message goes to the admin, not to stderr
    # Only the whole match is read: without capture groups RE2 answers from its DFA alone.
    options.never_capture = True
    return options


def _reason(error: Exception) -> str:
    detail = error.args[0] if error.args else error
    if isinstance(detail, bytes):
        detail = detail.decode("utf-8", "replace")
    detail = str(detail)
    for start, name in _HINTS:
        if detail.startswith(start):
            return f"it uses {name}, which the linear-time engine (RE2) does not support"
    if detail.startswith("invalid repetition size"):
        return f"{detail}: counted repetitions stop at {{1000}} in all"
    return f"the linear-time engine (RE2) refuses it ({detail})"


def compile_pattern(pattern: str, *, case_sensitive: bool = False):
    """The compiled RE2 pattern (case-insensitive by default); raises :class:`UnsafePattern`."""
    if not isinstance(pattern, str):  # a snapshot edited by hand may hold anything
        raise UnsafePattern(f"a pattern must be text, not {type(pattern).__name__}")
    return _compile(pattern, case_sensitive)


# Each RE2 object may grow a DFA cache of a few MB; the default rules alone use ~140 patterns, and
# an LRU smaller than what one check cycles through misses on every pattern (128 did: each check
# compiled them all again).
@functools.lru_cache(maxsize=256)
def _compile(pattern: str, case_sensitive: bool):
    try:
        compiled = re2.compile(pattern, _options(case_sensitive=case_sensitive))
    except re2.error as error:
        raise UnsafePattern(_reason(error)) from None
    except (TypeError, ValueError, UnicodeError) as error:  # e.g. a lone surrogate
        raise UnsafePattern(f"it is not usable text ({error})") from None
    if compiled.programsize > MAX_PROGRAM_SIZE:
        raise UnsafePattern(
            f"it is too complex to check quickly ({compiled.programsize} steps; the limit is "
            f"{MAX_PROGRAM_SIZE}): use smaller counted repetitions such as {{0,30}}"
        )
    return compiled


@functools.lru_cache(maxsize=256)
def screen(patterns: tuple[str, ...]):
    """One case-insensitive RE2 program that matches wherever one of ``patterns`` does, so a text is
    read once for a group of patterns rather than once per pattern: where it finds nothing, none of
    them matches. None for a single pattern, or where RE2 refuses the union; each pattern still
    raises :class:`UnsafePattern` as it would on its own."""
    for pattern in patterns:
        compile_pattern(pattern)
    if len(patterns) < 2:
        return None
    try:  # each pattern compiled alone, so its brackets balance inside the group
        return re2.compile("|".join(f"(?:{pattern})" for pattern in patterns), _options(case_sensitive=False))
    except re2.error:
        return None


def may_match(text: str, patterns: tuple[str, ...]) -> bool:
    """False when none of ``patterns`` matches ``text`` at all, hedged or not: one pass over the text."""
    union = screen(patterns)
    return union is None or union.search(text) is not None


@functools.lru_cache(maxsize=16)
def _pattern_set(patterns: tuple[str, ...]):
    found = re2.Set.SearchSet(_options(case_sensitive=False))
    for pattern in patterns:
        found.Add(pattern)
    found.Compile()
    return found


def matching(text: str, patterns: tuple[str, ...]) -> frozenset[str] | None:
    """Which of ``patterns`` (each accepted by compile_pattern, case-insensitive) match somewhere in
    ``text``, found in one pass for all of them; None when that cannot be told, and each pattern
    must be tried on its own. (An RE2 set that runs out of memory answers "none"; that answer is
    checked with the union of the patterns, which RE2 always runs to the end.)"""
    if len(patterns) < 2:
        return None
    try:
        found = _pattern_set(patterns).Match(text)
    except re2.error:
        return None
    if found:
        return frozenset(patterns[i] for i in found)
    union = screen(patterns)
    return frozenset() if union is not None and union.search(text) is None else None


def pattern_problem(pattern: str) -> str | None:
    """Why admin must refuse ``pattern`` as a case-insensitive claim pattern, or None if it is usable."""
    try:
        compiled = compile_pattern(pattern)
    except UnsafePattern as error:
        return f"This pattern cannot be used: {error}."
    if _boundary_by_other_letter(pattern):
        return ("This pattern would not find the word: \\b is ASCII-only in RE2 and marks no word "
                "boundary next to a letter outside ASCII. Write the word without \\b.")
    if compiled.search("") is not None:
        # A pattern that matches nothing at all would match every text and stop every run.
        return "This pattern matches the empty text, so it would match every answer."
    return None


def word_pattern(token: str, *, case_sensitive: bool):
    """``token`` as a whole word, matched literally (region tokens)."""
    return compile_pattern(rf"\b{re2.escape(token)}\b", case_sensitive=case_sensitive)

"""new_region: a region the text names and the evidence does not (docs/contract.md, 'Fact and claim
checks'). Region tokens and their names in words are admin text: matched with RE2. Plain Python: no
Django here."""

from __future__ import annotations

import functools
import re

import re2

from agents.core.guard.contacts import prose
from agents.core.guard.support import Support
from agents.core.guard.violation import Violation
from agents.core.patterns import UnsafePattern, compile_pattern, may_match, screen, word_pattern
from agents.core.policy import GuardRules


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


def region_matches(token: str, text: str, words: tuple[str, ...] = ()) -> list[re.Match]:
    """Where ``text`` names the region ``token``, by the token or one of its names in ``words``
    (raises UnsafePattern for a token or name RE2 refuses)."""
    matches = list(_region_pattern(token.lower()).finditer(text))
    for word in words:
        matches += _region_word_pattern(word).finditer(text)
    return matches


def region_in_allowed(token: str, allowed_text: str, words: tuple[str, ...] = ()) -> bool:
    # The context is JSON ("region":"us" is as good as "US"), but the original draft in the same
    # allowed text may say "let us know": a short token counts in upper case as a word, or in any
    # case as a whole JSON string value, never as a lower-case word in prose. A region named in
    # words in the context ("European merchants") names it too.
    if _region_pattern(token).search(allowed_text):
        return True
    if f'"{token}"' in allowed_text.lower():
        return True
    return any(_region_word_pattern(word).search(allowed_text) for word in words)




def find(text: str, support: Support) -> list[Violation]:
    """The regions the text names and the allowed text does not, in reading order, after the tokens
    that cannot be checked safely."""
    text, allowed_text, rules = prose(text, support), support.allowed_text, support.rules
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
            if not may_match(text, _region_sources(token, words)):
                continue
            matches = region_matches(token, text, words)
        except UnsafePattern as error:
            unsafe.append(Violation("new_region", str(token),
                                    f"The region token “{token}” cannot be checked safely: {error}."))
            continue
        if matches and not region_in_allowed(token.lower(), allowed_text, words):
            regions += matches
    return unsafe + [Violation("new_region", m.group(), f"Region “{m.group()}” is not named in the context.")
                     for m in sorted(regions, key=lambda m: m.start())]


"""The one grammar for named URLs that the operator declares in the environment.

Model endpoints (``LLM_ENDPOINTS``, agents/core/llm/endpoints.py) and outbound destinations
(``OUTBOUND_DESTINATIONS``, reviewer/outbox/destinations.py) are declared alike, so that nothing an
admin can edit holds a URL or a secret:

    name=url
    name=url|SECRET_VARIABLE

``SECRET_VARIABLE`` is the *name* of the environment variable that holds the key or signing
secret, never the secret itself. :func:`parse` reads the entries and raises the error class of its
:class:`Grammar`, naming the variable and the entry, with the same sentences for both.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

NAME_PATTERN = r"[a-z0-9][a-z0-9_-]{0,49}"
NAME_HELP = "lower-case letters, digits, '-' and '_', at most 50 characters"

_NAME = re.compile(NAME_PATTERN)
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Grammar:
    """How one environment variable declares its named URLs."""

    variable: str  # the environment variable, named in every message
    error: type[ValueError]  # what a declaration that does not parse raises
    url_word: str  # what the URL is called in the grammar: "base_url", "url"
    url_label: str  # and in a sentence: "base URL", "URL"
    secret_word: str  # what the variable after '|' holds: "key", "secret"
    separators: str = ","  # the characters between entries (a regular-expression class's content)
    settings: bool = False  # an entry may end in ";option=value" settings
    query_allowed: bool = False  # the URL may carry a query


@dataclass(frozen=True)
class Entry:
    """One declared entry, checked: its name, URL, secret variable ("" for none) and the text of its
    ``;option=value`` settings ("" for none); ``where`` names it for the caller's own messages."""

    number: int
    name: str
    url: str
    variable: str
    settings: str
    where: str


def parse(text: str, grammar: Grammar) -> list[Entry]:
    """Every entry of ``text`` in order; raises ``grammar.error`` on the first that does not parse."""
    entries: list[Entry] = []
    names: set[str] = set()
    for number, entry in enumerate(re.split(f"[{grammar.separators}]", text.strip()), start=1):
        entry, settings = entry.strip(), ""
        if grammar.settings:
            entry, _, settings = (part.strip() for part in entry.partition(";"))
        if not entry:
            continue
        parsed = _entry(number, entry, settings, grammar)
        if parsed.name in names:
            raise grammar.error(f"{parsed.where}: the name {parsed.name!r} is declared twice")
        names.add(parsed.name)
        entries.append(parsed)
    return entries


def _entry(number: int, entry: str, settings: str, grammar: Grammar) -> Entry:
    name, equals, rest = (part.strip() for part in entry.partition("="))
    url, bar, variable = (part.strip() for part in rest.partition("|"))
    where = f"{grammar.variable}: entry {number} ({name!r})" if name else f"{grammar.variable}: entry {number} (?)"
    word = grammar.url_word
    if not equals or not url:
        raise grammar.error(f"{where} is not name={word} or name={word}|{grammar.secret_word.upper()}_VARIABLE")
    if not _NAME.fullmatch(name):
        raise grammar.error(f"{where}: the name must be {NAME_HELP}")
    if bar and not _VARIABLE.fullmatch(variable):
        raise grammar.error(
            f"{where}: after '|' comes the NAME of the variable that holds the {grammar.secret_word} "
            f"(letters, digits and '_'), never the {grammar.secret_word} itself"
        )
    return Entry(number, name, checked_url(url, where, grammar), variable, settings, where)


def checked_url(url: str, where: str, grammar: Grammar) -> str:
    """``url`` when it is an http(s) URL naming a host with no user info or fragment (nor a query,
    unless the grammar allows one); never echoed in a message, as it may be a credential itself."""
    label = grammar.url_label
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise grammar.error(f"{where}: the {label} is not a URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise grammar.error(f"{where}: the {label} must start with http:// or https:// and name a host")
    if parts.username or parts.password or parts.fragment or (parts.query and not grammar.query_allowed):
        carried = "user info or a fragment" if grammar.query_allowed else "user info, a query or a fragment"
        raise grammar.error(f"{where}: the {label} must not carry {carried} "
                            f"(a {grammar.secret_word} goes in the variable after '|')")
    return url

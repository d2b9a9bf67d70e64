"""Outbound destinations that the operator declares in the environment.

The same lesson as the model endpoints (``agents/core/llm/endpoints.py``): nothing an admin can edit
holds a URL or a secret. Admin chooses a destination by NAME; its URL and its signing secret come
from here together, so a secret is only ever sent to the URL it was declared with.

    OUTBOUND_DESTINATIONS='status-hook=https://hooks.example/x|HOOK_SECRET;slack-ops=https://hooks.slack.com/services/T/B/X'

Entries are separated by ``;`` (or ``,``); each is ``name=url``, optionally ``|SECRET_VARIABLE``:
the *name* of the environment variable that holds the secret (the webhook signing key), never the
secret itself. The grammar and its messages are the endpoints' (``agents/core/declarations.py``):
a declaration that does not parse raises :class:`DestinationError` naming the variable and the entry;
the settings module reads it once so every process fails at startup.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from agents.core import declarations

VARIABLE = "OUTBOUND_DESTINATIONS"
_SEPARATORS = re.compile(r"[;,\n]")


class DestinationError(ValueError):
    """The declared destinations cannot be read, or a channel names one that is not declared."""


# The grammar the model endpoints use too (agents/core/declarations.py): a webhook's URL may carry a
# query, and entries may be separated by ';' as well as ','.
GRAMMAR = declarations.Grammar(VARIABLE, DestinationError, url_word="url", url_label="URL",
                               secret_word="secret", separators=";,\n", query_allowed=True)


@dataclass(frozen=True)
class Destination:
    name: str
    url: str = field(repr=False)  # a Slack webhook URL is itself a credential: never shown on a page
    secret_variable: str = ""  # the variable that holds the signing secret; "" for none
    secret: str = field(default="", repr=False)

    @property
    def host(self) -> str:
        """What a page may say about where it goes: the host only."""
        return urlsplit(self.url).hostname or ""


def declared(environ: Mapping[str, str] = os.environ) -> dict[str, Destination]:
    """Every declared destination by name, with its secret read from its variable.

    Raises :class:`DestinationError` naming the variable when a declaration cannot be read, or when
    a declared secret variable is unset (a webhook would otherwise go out unsigned).
    """
    destinations: dict[str, Destination] = {}
    for entry in declarations.parse(environ.get(VARIABLE) or "", GRAMMAR):
        secret = (environ.get(entry.variable) or "").strip() if entry.variable else ""
        if entry.variable and not secret:
            raise DestinationError(f"{entry.where}: the secret variable {entry.variable} is not set")
        destinations[entry.name] = Destination(entry.name, entry.url, entry.variable, secret)
    return destinations


def names(environ: Mapping[str, str] = os.environ) -> list[str]:
    """The names admin can choose among, sorted; [] when nothing is declared or it does not parse
    (the settings module already refused to start on the latter)."""
    try:
        return sorted(declared(environ))
    except DestinationError:
        return []


def resolve(name: str, environ: Mapping[str, str] = os.environ) -> Destination:
    """The declared destination ``name``; fails closed with a message naming what is declared."""
    destinations = declared(environ)
    if name not in destinations:
        known = ", ".join(sorted(destinations)) or "none"
        raise DestinationError(f"the destination {name!r} is not declared in {VARIABLE} (declared: {known})")
    return destinations[name]


# The addresses an email channel may send to, declared by the operator as the webhooks are: an
# address (ops@example.com) or a whole domain (@example.com), separated as the destinations are.
EMAIL_VARIABLE = "OUTBOUND_EMAIL_RECIPIENTS"
_DOMAIN = re.compile(r"@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}")
_LOCAL_PART = re.compile(r"[a-z0-9!#$%&'*+/=?^_`{|}~.-]{1,64}")


def allowed_recipients(environ: Mapping[str, str] = os.environ) -> tuple[str, ...]:
    """The declared addresses and ``@domains``, lower-cased. Raises :class:`DestinationError` naming
    the variable and the entry when one is neither."""
    allowed = []
    for number, entry in enumerate(_SEPARATORS.split((environ.get(EMAIL_VARIABLE) or "").strip()), start=1):
        entry = entry.strip().lower()
        if not entry:
            continue
        name, at, domain = entry.rpartition("@")
        if not at or not _DOMAIN.fullmatch(f"@{domain}") or (name and not _LOCAL_PART.fullmatch(name)):
            raise DestinationError(f"{EMAIL_VARIABLE}: entry {number} ({entry[:100]}) is not an email address "
                                   "or a domain such as @example.com")
        allowed.append(entry)
    return tuple(allowed)


def recipient_problem(address: str, environ: Mapping[str, str] = os.environ) -> str:
    """Why an email channel may not send to the email address ``address`` ("" when it may): the
    operator did not declare it in ``OUTBOUND_EMAIL_RECIPIENTS``, by itself or by its domain."""
    try:
        allowed = allowed_recipients(environ)
    except DestinationError:
        allowed = ()  # the settings check already refused to start on it
    lowered = address.lower()
    if lowered in allowed or "@" + lowered.rpartition("@")[2] in allowed:
        return ""
    return (f"“{address[:100]}” is not declared in {EMAIL_VARIABLE} (declared: {', '.join(allowed) or 'none'}); "
            "the operator declares the addresses and domains email channels may send to.")


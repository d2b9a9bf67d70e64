"""Links, contacts and markup in a text (docs/contract.md, 'Fact and claim checks').

A customer update may send people somewhere: a web address (with or without ``https://``), a bare
domain, an email address, a phone number. Each is found here, with what identifies it (its host and
path, the address, the digits). So is markup that a channel would act on rather than show: Slack's
``<url|words>`` links and ``<!channel>`` mentions, Discord's ``@everyone`` and ``<@…>``, HTML tags and
Markdown links.

A bare domain is a name whose last label is a real top-level domain: the Public Suffix List that the
``publicsuffixlist`` package ships (read from the package, never fetched), plus the names reserved
for examples and tests (``.example``, ``.test``, …). So "e.g.", "v2.1" and "3.4%" are no domains.

Every pattern runs on RE2: the text is a model's, and these patterns would backtrack on ``re``.
Plain Python: no Django here.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

import re2
from publicsuffixlist import PublicSuffixList

from agents.core.guard.instructions import CLAUSE, INSTRUCTION
from agents.core.guard.support import Support, per_incident
from agents.core.guard.violation import Violation
from agents.core.text import strings_in

# Top-level names that are not in the Public Suffix List but that people use as hosts: reserved
# for examples, tests and local networks. A link to one is still a link.
_RESERVED_TLDS = frozenset({"example", "test", "invalid", "localhost", "local", "internal", "lan", "onion"})


def _compile(pattern: str, *, case_sensitive: bool = False):
    options = re2.Options()
    options.case_sensitive = case_sensitive
    options.log_errors = False
    options.never_capture = True  # the whole match is all we read
    return re2.compile(pattern, options)


_LABEL = r"[\p{L}\p{N}](?:[\p{L}\p{N}_-]*[\p{L}\p{N}])?"
_HOST = rf"(?:{_LABEL}\.)+\p{{L}}[\p{{L}}\p{{N}}-]*"
# What may follow a host in a link: a port, a path, a query, a fragment. It ends at a space or a
# character that delimits a link in markup (< > " ` | and, for Markdown, a closing parenthesis is
# trimmed afterwards when unbalanced).
_TAIL = r"""(?::\d+)?(?:[/?#][^\s<>"`|\\]*)?"""
_URL = _compile(rf"""\b(?:https?|ftp)://[^\s<>"`|\\]+|\bwww\.{_HOST}{_TAIL}""")
_EMAIL = _compile(rf"[\p{{L}}\p{{N}}._%+-]+@{_HOST}")
_DOMAIN = _compile(rf"{_HOST}{_TAIL}")

# Phone numbers: an international number (+ or 00, a country code, groups), or a national one in
# groups of digits separated all the same way, with a parenthesised area code, or one run of
# digits starting with 0. _phone() then reads what the match is: at least 7 and at most 15 digits,
# and not a date, a grouped count ("12 500 000"), a range or part of an id.
_PHONE = _compile(
    r"(?:\+|\b00)[1-9]\d{0,3}(?:[ .-]?(?:\(\d{1,5}\)|\d{1,6})){1,8}"
    r"|\(\d{2,5}\)[ .-]?\d{2,5}(?:[ .-]?\d{2,5}){0,4}"
    r"|\b\d{1,5}(?:-\d{2,5}){1,5}\b"
    r"|\b\d{2,5}(?: \d{2,5}){1,5}\b"
    r"|\b\d{3}\.\d{3}\.\d{4}\b"
    r"|\b0\d{9,10}\b"
)
_DATE_SHAPE = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}")

# Markup a channel would act on.
_MARKUP = (
    ("slack_special", _compile(r"<![A-Za-z^][^<>]*>")),  # <!channel>, <!here>, <!subteam^ID>, <!date^…>
    ("mention", _compile(r"<[@#][!&]?[A-Za-z0-9]+(?:\|[^<>]*)?>")),  # <@U123>, <#C123|ops>, <@&123>
    ("angle_link", _compile(r"<[A-Za-z][A-Za-z0-9+.-]*:[^<>\s|]*(?:\|[^<>]*)?>")),  # <https://x|words>
    ("html", _compile(r"</?[A-Za-z][A-Za-z0-9:-]*(?:\s[^<>]*)?/?>|<!--|<!doctype")),
    ("markdown_link", _compile(r"!?\[[^\[\]\n]*\]\([^()\n]*(?:\([^()\n]*\)[^()\n]*)*\)")),
    ("everyone", _compile(r"@(?:everyone|here|channel)\b")),
)

_MARKUP_WHAT = {
    "slack_special": "a Slack mention that notifies everyone in a channel or group",
    "mention": "a Slack or Discord mention of a person, role or channel",
    "angle_link": "link markup: Slack shows the words and hides where the link goes",
    "html": "an HTML tag: customer updates are plain text, and a tag can hide a link or change what is shown",
    "markdown_link": "a Markdown link: its words can hide where it goes",
    "everyone": "a mention that notifies everyone in a Discord server or Slack channel",
}


@dataclass(frozen=True)
class Contact:
    """A link, domain, email address or phone number, as written and as compared."""

    kind: str  # "url", "domain", "email" or "phone"
    found: str  # as written in the text
    start: int
    host: str = ""  # url and domain: lower case, without "www." or a final dot
    path: str = ""  # url and domain: the path without its final slash ("" for the site)
    query: str = ""  # url: the query and fragment as written ("" for none)
    value: str = ""  # email: the address in lower case; phone: its digits

    @property
    def end(self) -> int:
        return self.start + len(self.found)


@dataclass(frozen=True)
class Markup:
    kind: str  # a key of _MARKUP
    found: str
    start: int

    @property
    def what(self) -> str:
        return _MARKUP_WHAT[self.kind]


@functools.cache
def _suffixes() -> PublicSuffixList:
    # The list the package ships; accept_unknown=False: a name whose last label is in no list
    # ("e.g", "v2.1") has no public suffix.
    return PublicSuffixList(accept_unknown=False)


def is_domain(host: str) -> bool:
    """Whether ``host`` ends in a real top-level domain (or a reserved one) and has a name before it."""
    host = host.lower().rstrip(".")
    labels = host.split(".")
    if len(labels) < 2 or not all(labels):
        return False
    if labels[-1] in _RESERVED_TLDS:
        return True
    try:
        suffix = _suffixes().publicsuffix(host)
    except (ValueError, UnicodeError):
        return False
    return suffix is not None and suffix != host


def _trim(link: str) -> str:
    """A link without the punctuation that ends the sentence around it, or an unbalanced ")"."""
    while link and link[-1] in ".,;:!?'\"]}*_~":
        link = link[:-1]
    while link.endswith(")") and link.count(")") > link.count("("):
        link = link[:-1]
    return link


def _host(host: str) -> str:
    host = host.lower().rstrip(".")
    return host[4:] if host.startswith("www.") else host


def _split_link(link: str, *, scheme: bool) -> tuple[str, str, str]:
    """(host, path, query) of a link; the host is normalised, the path has no final slash."""
    try:
        parts = urlsplit(link if scheme else "//" + link)
        host = parts.hostname or ""
    except ValueError:
        return "", "", ""
    query = ("?" + parts.query if parts.query else "") + ("#" + parts.fragment if parts.fragment else "")
    return _host(host), parts.path.rstrip("/"), query


def _overlaps(start: int, end: int, taken: list[tuple[int, int]]) -> bool:
    return any(start < b and end > a for a, b in taken)


def _phone(text: str, start: int, end: int) -> str | None:
    """The digits of a phone number written at text[start:end], or None when it is something else."""
    written = text[start:end]
    before = text[start - 1] if start else " "  # the text's edges are no part of anything
    after = text[end] if end < len(text) else " "
    if (before.isalnum() or before in "_#/.-:,") and not written.startswith("+"):
        return None  # part of an id (INC-2041-…), a path, a time or a decimal
    if after.isalnum() or after in "_%-/:" or (after in ".," and text[end + 1 : end + 2].isdigit()):
        return None  # a percentage, a unit, a longer number
    digits = re.sub(r"\D", "", written)
    if not 7 <= len(digits) <= 15:
        return None
    if written.startswith(("+", "00", "(")):
        return digits[2:] if written.startswith("00") else digits
    if _DATE_SHAPE.fullmatch(written):
        return None
    groups = re.split(r"[ .-]", written)
    if len(groups) > 1 and not groups[0].startswith("0") and len(groups[0]) <= 3 \
            and all(len(g) == 3 for g in groups[1:]) and " " in written:
        return None  # a count grouped by thousands: "12 500 000"
    if len(groups) == 2 and not groups[0].startswith("0"):
        return None  # a range or two numbers: "1200-1500", "2024 2025"
    return digits


def find_contacts(text: str) -> list[Contact]:
    """Every web address, bare domain, email address and phone number in ``text``, in reading order."""
    contacts: list[Contact] = []
    taken: list[tuple[int, int]] = []

    def add(contact: Contact) -> None:
        contacts.append(contact)
        taken.append((contact.start, contact.end))

    for m in _URL.finditer(text):
        link = _trim(m.group())
        has_scheme = "://" in link
        host, path, query = _split_link(link, scheme=has_scheme)
        if host:
            add(Contact("url", link, m.start(), host, path, query))
    for m in _EMAIL.finditer(text):
        address = _trim(m.group())
        if _overlaps(m.start(), m.start() + len(address), taken):
            continue
        local, _, domain = address.rpartition("@")
        local = local.lstrip(".")
        if local:
            start = m.start() + (len(m.group()) - len(m.group().lstrip(".")))
            add(Contact("email", f"{local}@{domain}", start, _host(domain), value=f"{local}@{domain}".lower()))
    for m in _DOMAIN.finditer(text):
        written = _trim(m.group())
        if _overlaps(m.start(), m.start() + len(written), taken) or (m.start() and text[m.start() - 1] in "@"):
            continue
        host, path, query = _split_link(written, scheme=False)
        if host and is_domain(host):
            add(Contact("domain", written, m.start(), host, path, query))
    for m in _PHONE.finditer(text):
        if _overlaps(m.start(), m.end(), taken):
            continue
        digits = _phone(text, m.start(), m.end())
        if digits:
            add(Contact("phone", m.group(), m.start(), value=digits))
    return sorted(contacts, key=lambda c: c.start)


def find_markup(text: str) -> list[Markup]:
    """Every piece of channel markup in ``text`` (mentions, link markup, HTML, Markdown links), in
    reading order, a piece inside an earlier one left out."""
    found = []
    for kind, pattern in _MARKUP:
        for m in pattern.finditer(text):
            if kind == "everyone" and m.start() and (text[m.start() - 1].isalnum() or text[m.start() - 1] in "._+-"):
                continue  # part of an email address or a name, not a mention
            found.append(Markup(kind, m.group(), m.start()))
    found.sort(key=lambda m: (m.start, -len(m.found)))
    kept: list[Markup] = []
    for item in found:
        if not kept or item.start >= kept[-1].start + len(kept[-1].found):
            kept.append(item)
    return kept


def carries_contact(text: str) -> bool:
    """Whether ``text`` has any link, domain, email address, phone number or markup at all."""
    return bool(find_contacts(text) or find_markup(text))


# ---------------------------------------------------------------- what a context declares


@dataclass(frozen=True)
class Declared:
    """The links, addresses and numbers an incident's public facts give."""

    sites: frozenset[tuple[str, str, str]] = frozenset()  # (host, path, query) of each link or domain
    emails: frozenset[str] = frozenset()
    phones: frozenset[str] = frozenset()

    def covers(self, contact: Contact) -> bool:
        """A link is declared when a declared link has its host exactly (no subdomain, no look-alike)
        and its path is the declared path or below it; a query or fragment must be the declared one's,
        or absent. An email address or a phone number (its digits) must be declared exactly."""
        if contact.kind == "email":
            return contact.value in self.emails
        if contact.kind == "phone":
            return contact.value in self.phones
        for host, path, query in self.sites:
            if host != contact.host:
                continue
            below = contact.path == path or contact.path.startswith(path + "/") or not path
            if below and contact.query in ("", query):
                return True
        return False


def declared(contacts: Iterable[Contact]) -> Declared:
    """What these contacts declare (those of the incident's public facts, outside instructions)."""
    sites, emails, phones = set(), set(), set()
    for contact in contacts:
        if contact.kind == "email":
            emails.add(contact.value)
        elif contact.kind == "phone":
            phones.add(contact.value)
        else:
            sites.add((contact.host, contact.path, contact.query))
    return Declared(frozenset(sites), frozenset(emails), frozenset(phones))


_WHAT = {
    "url": ("a web address", "customers could be sent to the wrong site"),
    "domain": ("a web address", "customers could be sent to the wrong site"),
    "email": ("an email address", "customers could write to the wrong people"),
    "phone": ("a phone number", "customers could call the wrong number"),
}


def unknown_contact_message(contact: Contact) -> str:
    what, risk = _WHAT[contact.kind]
    return f"“{contact.found}” is {what} the incident does not declare; {risk}."


def markup_message(markup: Markup) -> str:
    return f"“{markup.found}” is {markup.what}. Customer updates must be plain text."


# ---------------------------------------------------------------- the check


def _masked(text: str, contacts: list) -> str:
    """``text`` with each contact replaced by as many spaces (positions kept)."""
    pieces, pos = [], 0
    for contact in contacts:
        pieces += [text[pos:contact.start], " " * len(contact.found)]
        pos = contact.end
    return "".join(pieces) + text[pos:]


@functools.lru_cache(maxsize=256)
def _without_contacts(text: str) -> str:
    return _masked(text, find_contacts(text))


def prose(text: str, support: Support) -> str:
    """``text`` as the fact and claim checks read it. A link, address or phone number is judged whole
    by the contact check: its digits and words are no quantity, id or claim of their own (a phone
    number is not "555" unsupported). Without a context, the text as it is. Remembered: each of
    those checks reads the same text."""
    return _without_contacts(text) if support.context is not None else text


def _contacts_outside_instructions(text: str) -> list:
    """The contacts of ``text`` that sit in no clause instructing the model. The clauses are read with
    the contacts masked, so the dots of a link do not cut it into clauses."""
    contacts = find_contacts(text)
    if not contacts:
        return []
    masked = _masked(text, contacts)
    kept = []
    for clause in CLAUSE.finditer(masked):
        if not INSTRUCTION.search(clause.group()):
            kept += [c for c in contacts if clause.start() <= c.start < clause.end()]
    return kept


@per_incident
def declared_contacts(context: Mapping) -> Declared:
    """The links, email addresses and phone numbers the incident's public facts declare: the values
    under ``incident``, the ``key_messages`` and the ``approved_actions`` (what customers may be told:
    "Follow status.example.com for updates"), without the clauses that instruct the model. A draft, a
    goal or the policy hints declare nothing."""
    texts = [*strings_in(context.get("incident")), *strings_in(context.get("key_messages")),
             *strings_in(context.get("approved_actions"))]
    return declared(c for text in texts for c in _contacts_outside_instructions(text))


def find(text: str, support: Support) -> list[Violation]:
    """unknown_contact, then markup: every link, contact or markup the incident does not declare."""
    return [*_undeclared_contacts(text, support.context, support.context_key), *_markup(text)]


def _undeclared_contacts(text: str, context: Mapping | None, key: str | None = None) -> list[Violation]:
    """Every link, domain, email address or phone number the incident does not declare, in reading
    order (docs/contract.md, 'Fact and claim checks'). Without a context there is nothing to read."""
    if context is None:
        return []
    known = declared_contacts(context, key=key)
    return [Violation("unknown_contact", c.found, unknown_contact_message(c))
            for c in find_contacts(text) if not known.covers(c)]


def _markup(text: str) -> list[Violation]:
    """Every mention, link markup, HTML tag or Markdown link: customer text is plain text."""
    return [Violation("markup", m.found, markup_message(m)) for m in find_markup(text)]

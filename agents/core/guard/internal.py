"""Internal details in customer text (docs/contract.md, 'Fact and claim checks').

An incident's internal facts (``context["internal"]``: runbook steps, hosts, paths, people, ticket
ids) are context for people and the reviewer, never words for customers. :func:`find_internal`
finds them in a text: the value of an internal fact or a distinctive phrase of it, and, whatever the
facts say, internal host names, file paths on our systems, internal ticket ids and the names of
people the internal facts give. What the public part of the context says is never an internal
detail: a public fact that names ``/v2/orders`` makes it fine to say.

The approved actions (``context["approved_actions"]``) are the opposite of internal: the next steps
the incident is approved to tell customers ("monitor payment failures every 15 minutes"). They are
public context: a text may state them, their numbers and durations included. Plain Python: no
Django here.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from agents.core.guard.support import Support, per_incident
from agents.core.guard.violation import Violation
from agents.core.text import canonical_json

# The context's entries that customers must never read: the internal facts.
INTERNAL_KEYS = ("internal",)
CHECK = "internal_detail"


def public_context(context: Mapping[str, Any]) -> dict:
    """The context without its internal entries: what a drafting stage sees and what may support a
    fact in customer text."""
    return {key: value for key, value in context.items() if key not in INTERNAL_KEYS}


def _internal_facts(context: Mapping[str, Any]) -> dict[str, Any]:
    internal = context.get("internal")
    return dict(internal) if isinstance(internal, Mapping) else {}


# ---------------------------------------------------------------- words and phrases

# Words that say nothing distinctive on their own: a phrase is matched on the others.
_STOPWORDS = frozenset(
    "a an the to of in on at by for with via and or every each per is are be been we our us it its "
    "this that these those from as into any all".split()
)
_TOKEN = re.compile(r"[^\W_]+")
# A phrase of a long value (a runbook step) this many distinctive words long is enough to give it
# away; a value with fewer distinctive words is matched whole.
PHRASE_WORDS = 4


@functools.lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    """A crude stem, the same on both sides: "publishing" and "publish", "updates" and "update"."""
    for suffix in ("ing", "ed", "es", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def _words(text: str, *, every: bool = False) -> list[tuple[str, int, int]]:
    """The words of ``text``, stemmed and lower-cased, with their spans: the distinctive ones, or
    ``every`` one."""
    return [(_stem(m.group().lower()), m.start(), m.end()) for m in _TOKEN.finditer(text)
            if every or m.group().lower() not in _STOPWORDS]


# A phrase: its words, and whether every word of it counts (a name: "Will Grant" is not "Will and
# Grant") or only the distinctive ones ("watch API latency dashboards" is "watch the API latency
# dashboards").
Phrase = tuple[tuple[str, ...], bool]


@functools.lru_cache(maxsize=1024)
def _phrases(value: str) -> tuple[Phrase, ...]:
    """What gives ``value`` away: the whole value and, for a long one, each run of PHRASE_WORDS of
    its distinctive words. A value of one word only counts when it is distinctive (see below)."""
    if _NAME.fullmatch(value.strip()):
        return ((tuple(word for word, _, _ in _words(value, every=True)), True),)
    words = tuple(word for word, _, _ in _words(value))
    if len(words) > PHRASE_WORDS:
        return ((words, False), *((words[i : i + PHRASE_WORDS], False) for i in range(len(words) - PHRASE_WORDS + 1)))
    if len(words) >= 2 or (len(words) == 1 and _distinctive_word(value.strip())):
        return ((words, False),)
    return ()


def _distinctive_word(value: str) -> bool:
    """A one-word value that cannot be an ordinary word: it holds a digit or a separator
    ("db-7", "kestrel_2"), or it is a capitalised name ("Kestrel"). "active" or "green" is not."""
    return bool(re.fullmatch(r"\S*(?:\d|[-_./:@])\S*|[A-Z][a-z]{3,}", value)) and not re.fullmatch(r"[\d.,]+", value)


class _Text:
    """A text's words, both ways, to find phrases in."""

    def __init__(self, text: str):
        found = [(m.group().lower(), m.start(), m.end()) for m in _TOKEN.finditer(text)]
        self.every = [(_stem(word), start, end) for word, start, end in found]
        self.distinctive = [stemmed for stemmed, (word, _, _) in zip(self.every, found, strict=True)
                            if word not in _STOPWORDS]
        # Where each word starts a phrase: a long text is read once, not once per phrase.
        self.starts: dict[bool, dict[str, list[int]]] = {False: {}, True: {}}
        for every, words in ((False, self.distinctive), (True, self.every)):
            for i, (word, _, _) in enumerate(words):
                self.starts[every].setdefault(word, []).append(i)

    def find(self, phrase: Phrase) -> list[tuple[int, int]]:
        """Where the phrase's words follow each other."""
        wanted, every = phrase
        words, n = (self.every if every else self.distinctive), len(wanted)
        return [(words[i][1], words[i + n - 1][2]) for i in self.starts[every].get(wanted[0], [])
                if tuple(word for word, _, _ in words[i : i + n]) == wanted] if n else []


# ---------------------------------------------------------------- shapes of internal details

# A host name under a private suffix: auth-gateway.eu.internal, db1.svc.cluster.local, build.corp.
# Lower-case suffixes only, and not inside a longer name (auth.local.example.com is public DNS). The
# domain of an address counts too (oncall@ops.corp).
_HOST = re.compile(
    r"(?<![\w.-])(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+(?:internal|local|corp|lan|intranet)"
    r"(?![\w-]|\.[A-Za-z0-9])"
)
# A file path on our systems: /var/log/..., /etc/..., /srv/..., /opt/..., C:\..., ~/... A public API
# path (/v2/orders) is none of these; a path inside a URL (example.com/etc/x) is not a file path.
_PATH = re.compile(
    r"(?<![\w/.:~-])/(?:var|etc|srv|opt|home|root|usr|tmp|mnt)/[\w.@%+=:~-]+(?:/[\w.@%+=:~-]*)*"
    r"|(?<![\w\\])[A-Za-z]:\\[^\s\"'<>|]+"
    r"|(?<![\w/~])~/[\w.@%+=:~-]+(?:/[\w.@%+=:~-]*)*"
)
# A ticket id of an internal tracker: JIRA-1234, OPS-512. An incident id (inc_pay_2041, INC-2041) is
# the incident checks' business (agents.core.guard.identifiers), and standards are not tickets (ISO-8601).
_TICKET = re.compile(r"(?<![\w-])[A-Z][A-Z0-9]{1,9}-\d{1,7}(?![\w-])")
_NOT_TICKETS = frozenset({"INC", "ISO", "SHA", "UTF", "RFC", "TLS", "SSL", "HTTP", "HTTPS", "IPV", "COVID", "PCI",
                          "AES", "CVE", "GDPR", "IEEE", "ECMA", "ANSI", "EN", "IEC", "WCAG", "OWASP", "FIPS"})
# An internal fact about a person: its key or label says so.
_PERSON_KEY = re.compile(
    r"(?:^|[_-])(?:on_?call|engineers?|owners?|assignees?|contacts?|commanders?|responders?|managers?|person|"
    r"people|leads?|staff|authors?|who)(?:[_-]|$)",
    re.IGNORECASE,
)
_NAME = re.compile(r"[A-Z][a-z'’-]+(?:\s+[A-Z][a-z'’-]+){0,2}")
# Capitalised words that are ordinary words at a sentence start: never read as a person's name.
_COMMON = frozenset("Will May Mark Grant Bill Pat Rose June April August Art Hope Joy Faith Sky Page Lead Team On "
                    "Call Ops Support Engineer Owner The We Our".split())


def _strip_end(found: str) -> str:
    return found.rstrip(".,;:!?)]}'\"”’")


# ---------------------------------------------------------------- the check


def find(text: str, support: Support) -> list[Violation]:
    return find_internal(text, support.context, support.context_key)


@per_incident
def _public_reading(context: Mapping[str, Any]) -> tuple[str, _Text]:
    """The incident's public facts as lower-case JSON, and their words, read once: one run checks several
    texts against the same incident, and a replay checks many runs of it (a ``_Text`` is never changed
    once read)."""
    public_text = canonical_json(public_context(context))
    return public_text.lower(), _Text(public_text)


def find_internal(text: str, context: Mapping[str, Any] | None, key: str | None = None) -> list[Violation]:
    """Every internal detail in ``text``, in reading order, one per span (the earliest, then the
    longest), each with a message a support lead understands. ``key``: the context's incident_key,
    where the caller has it."""
    if not context or not text:
        return []
    public_lower, public = _public_reading(context, key=key)
    read: list[_Text] = []  # the text's words, read at the first phrase to look for

    def checked() -> _Text:
        if not read:
            read.append(_Text(text))
        return read[0]

    hits: list[tuple[int, int, str]] = []

    def add(start: int, end: int, message: str) -> None:
        hits.append((start, end, message.replace("{found}", text[start:end], 1)))

    # The shapes first: on the same words, "an internal host name" says more than "an internal fact".
    shapes = ((_HOST, "“{found}” is an internal host name; customers must not see it."),
              (_PATH, "“{found}” is a file path on our systems; customers must not see it."),
              (_TICKET, "“{found}” is an internal ticket id; customers must not see it."))
    for pattern, message in shapes:
        for m in pattern.finditer(text):
            found = _strip_end(m.group())
            if pattern is _TICKET and found.split("-", 1)[0] in _NOT_TICKETS:
                continue
            if found.lower() not in public_lower:
                add(m.start(), m.start() + len(found), message)
    for key, value in _internal_facts(context).items():
        if not isinstance(value, str):
            continue  # numbers: no fact may rest on one that only an internal fact holds (the evidence)
        named = str(key).replace("_", " ")
        for phrase in _phrases(value):
            if not public.find(phrase):
                for start, end in checked().find(phrase):
                    add(start, end, f"“{{found}}” comes from the internal fact “{named}”; customers must not see it.")
        if _PERSON_KEY.search(str(key)):
            for name in _NAME.findall(value):
                for part in name.split():
                    if len(part) < 3 or part in _COMMON or re.search(rf"\b{re.escape(part.lower())}\b", public_lower):
                        continue
                    for m in re.finditer(rf"(?<![\w-]){re.escape(part)}(?![\w-])", text):
                        add(m.start(), m.end(), "“{found}” is the name of a person in the internal facts (“"
                            f"{named}”); customers must not see who works on the incident.")
    kept: list[tuple[int, int, str]] = []
    for start, end, message in sorted(hits, key=lambda hit: (hit[0], -hit[1])):
        if not kept or start >= kept[-1][1]:
            kept.append((start, end, message))
    return [Violation(CHECK, text[start:end], message) for start, end, message in kept]

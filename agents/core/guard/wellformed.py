"""Well-formed text that says something (docs/contract.md, 'Fact and claim checks').

Two checks of every text the guard judges, however it arose (a model, the fallback edit, a lead's
edit): :func:`find_malformed` finds broken text (stray punctuation, an unfinished sentence, a
placeholder, a doubled word, an unclosed quote or bracket), and :func:`find_uninformative` a text
that tells customers nothing (a bare date, a number, a fragment). Both are deliberately plain
readings of English, tuned so that every ordinary update passes. Plain Python: no Django here.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from typing import Any

from agents.core.guard.leading import led_by
from agents.core.guard.lemmas import verbs_of
from agents.core.guard.support import Support, per_incident
from agents.core.guard.violation import Violation

_EXCERPT_MAX = 60  # characters of an excerpt in a message; a long URL is cut


def _excerpt(text: str, start: int, end: int, *, before: int = 0, after: int = 0) -> str:
    """The whitespace-separated words that hold ``text[start:end]``, with ``before`` and ``after``
    more words around them: "2.1%.: /v2/orders" for the ".:" of "rate: 2.1%.: /v2/orders and"."""
    # Never more than _EXCERPT_MAX characters either way: a text of one 100 KB "word" stays linear.
    low, high = max(0, start - _EXCERPT_MAX), min(len(text), end + _EXCERPT_MAX)
    for words in range(before + 1):
        while start > low and text[start - 1].isspace() and words:
            start -= 1
        while start > low and not text[start - 1].isspace():
            start -= 1
    for words in range(after + 1):
        while end < high and text[end].isspace() and words:
            end += 1
        while end < high and not text[end].isspace():
            end += 1
    found = " ".join(text[start:end].split())
    return found if len(found) <= _EXCERPT_MAX else found[: _EXCERPT_MAX - 1].rstrip() + "…"


def _malformed(found: str, message: str) -> Violation:
    """A malformed_text violation; ``message`` holds "{found}" where the excerpt goes."""
    return Violation("malformed_text", found, message.replace("{found}", found))


# ---------------------------------------------------------------- punctuation

# An abbreviation, read in the words before its full stop: its full stop ends no sentence, and a
# comma or a colon may follow it ("e.g., exports", "etc.: more", "the U.S., too").
_ABBREVIATIONS = re.compile(
    r"(?:\b(?:e\.g|i\.e|etc|approx|incl|vs|cf|a\.m|p\.m|no|inc|ltd|co|corp|dept|est|min|max|jr|sr|st)"
    r"|\b(?:[A-Za-z]\.)+[A-Za-z])$",
    re.IGNORECASE,
)
_ABBREVIATION_REACH = 12  # characters before a full stop that can hold an abbreviation


def _abbreviation_before(text: str, stop: int) -> bool:
    """Whether the full stop at ``stop`` ends an abbreviation (a window, so a long text stays linear)."""
    return _ABBREVIATIONS.search(text[max(0, stop - _ABBREVIATION_REACH) : stop]) is not None


# A sentence's end followed by a comma, colon or semicolon: the ".:" a deletion leaves.
_AFTER_END = re.compile(r"[.!?][^\S\n]*[,;:]")
# A comma, colon or semicolon followed by a sentence's end (not a decimal: "rate: .5%").
_BEFORE_END = re.compile(r"[,;:][^\S\n]*[.!?](?!\d)")
# Two commas, colons or semicolons in a row (not "::" of an IPv6 address or code: "a::b").
_DOUBLED_MARKS = re.compile(r"[,;:](?:[^\S\n]*[,;:])+")
# A full stop after a sentence's end: "done..", "ready?." (an ellipsis "..." is writing, not a slip).
_END_RUN = re.compile(r"[.!?](?:[^\S\n]*[.!?])+")
# A space before a full stop or a comma that ends a word: "payments ." (not ".5" or "...").
_SPACE_BEFORE = re.compile(r"(?<=\S)[^\S\n]+[.,](?=\s|$)")


def _stray_punctuation(text: str) -> list[Violation]:
    spans: list[tuple[int, int]] = []
    for m in _AFTER_END.finditer(text):
        if m.group()[0] == "." and _abbreviation_before(text, m.start()):
            continue
        spans.append((m.start(), m.end()))
    for m in _BEFORE_END.finditer(text):
        spans.append((m.start(), m.end()))
    for m in _DOUBLED_MARKS.finditer(text):
        if m.group() == "::" and m.end() < len(text) and not text[m.end()].isspace():
            continue
        spans.append((m.start(), m.end()))
    for m in _END_RUN.finditer(text):
        run = m.group()
        if run == "..." or set(run) <= {"!", "?"}:  # an ellipsis, or "?!" and "!!": emphatic, not broken
            continue
        spans.append((m.start(), m.end()))
    for m in _SPACE_BEFORE.finditer(text):
        if text[m.end() - 1] == "." and text[m.end() :].startswith(".."):
            continue
        spans.append((m.start() - 1, m.end()))
    return [_malformed(_excerpt(text, start, end, after=1), "The text has stray punctuation: “{found}”.")
            for start, end in sorted(spans)]


# ---------------------------------------------------------------- unfinished sentences

# Words that never end an English sentence: articles, conjunctions, possessives, and "to", "of"
# and "with" except where English leaves them at the end (below).
_NEVER_LAST = {
    "a", "an", "the", "and", "or", "nor", "but", "because", "than", "our", "your", "their", "my",
    "its", "if", "including", "via", "per", "whose", "to", "of", "with", "whether", "although", "unless",
    "whereas",
}  # fmt: skip
# "as soon as we are able to.", "the issues we are aware of.", "the partner we work with.": the
# words that commonly leave "to", "of" or "with" at a sentence's end. Prepositions English strands
# freely ("looking into", "waiting for", "depend on", "came from") are never flagged.
_STRANDS = {
    "to": {"able", "unable", "need", "needs", "want", "wants", "going", "plan", "plans", "have", "has", "had",
           "got", "ought", "used", "expect", "hope", "intend", "try", "trying", "like", "wish", "mean",
           "continue", "supposed", "required", "asked", "allowed", "listen", "refer", "respond", "reply",
           "committed", "due", "back", "forward", "how", "what", "where", "when", "whom"},
    "of": {"aware", "unaware", "sure", "certain", "know", "knew", "known", "think", "thought", "heard",
           "informed", "made", "capable", "part", "conscious", "afraid", "proud", "rid", "speak", "spoke"},
    "with": {"deal", "deals", "dealing", "dealt", "work", "works", "working", "worked", "help", "helping",
             "comply", "familiar", "contend", "agree", "cope", "along", "associated", "connected",
             "integrate", "integrated", "put", "up"},
}  # fmt: skip
# A relative clause strands its preposition after any verb: "the card you paid with", "the site we
# moved to", "the round it belongs to". Its subject, two words before the end, says it is one.
_SUBJECTS = {"you", "we", "they", "i", "he", "she", "it"}
_WINDOW = 120  # characters before a sentence's end read for its last words
# A sentence's last three words, read on the reversed sentence: punctuation, then spaces, then the
# last word, then (after spaces on the same line) the word before it and the one before that.
_LAST_WORDS = re.compile(r"[.!?…]*[^\S\n]*([A-Za-z]+)(?:[^\S\n]+([A-Za-z]+)(?:[^\S\n]+([A-Za-z]+))?)?")
# The end of a sentence: terminal punctuation (not a decimal point, not an abbreviation's full
# stop), closing quotes or brackets, then a space or the end; or a line break before a blank line or
# a list item. A single line break inside a sentence is a wrapped line ("the\nsign-in service").
_SENTENCE_END = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s|$)|\n(?=[^\S\n]*(?:\n|(?:[-*•—–]|\d{1,2}[.)])\s))")


# A text is split by several checks of one guard run (the broken-text checks, grounding, the incident
# claims): the last few splits are kept, so one text is split once per run.
@functools.lru_cache(maxsize=8)
def _sentence_ends(text: str) -> tuple[int, ...]:
    """Where each sentence ends (the index after its terminal mark), abbreviations skipped."""
    ends = []
    for m in _SENTENCE_END.finditer(text):
        if m.group() == "\n":
            ends.append(m.start())
            continue
        marks = m.group().rstrip("\"'”’)]")
        if marks == "." and _abbreviation_before(text, m.start()) and m.end() < len(text.rstrip()):
            continue
        ends.append(m.end())
    return tuple(ends)


@functools.lru_cache(maxsize=8)
def sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    """[start, end) of each sentence of ``text``, whitespace trimmed, in reading order (a decimal
    point, "e.g." or "v2.1" does not end one; a blank line or a line break before a list item does)."""
    spans, start = [], 0
    for end in [*_sentence_ends(text), len(text)]:
        a, b = start, end
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if a < b:
            spans.append((a, b))
        start = end
    return tuple(spans)


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, stripped, in reading order (:func:`sentence_spans`)."""
    return [text[a:b] for a, b in sentence_spans(text)]


def _dangles(word: str, before: str, subject: str = "") -> bool:
    lower = word.lower()
    if lower == "a" and word == "A":  # "Plan A.", "grade A."
        return False
    if lower not in _NEVER_LAST:
        return False
    if lower in _STRANDS and subject.lower() in _SUBJECTS:
        return False
    return before.lower() not in _STRANDS.get(lower, ())


def _unfinished(text: str) -> list[Violation]:
    violations: list[Violation] = []
    stripped = text.rstrip()
    # Every sentence: none ends on a word that cannot end one ("payments and.").
    for end in sorted({*_sentence_ends(stripped), len(stripped)}):
        # A window before the end, so a text of many sentences stays linear.
        head = text[max(0, end - _WINDOW) : end].rstrip("\"'”’)] \t\n")
        m = _LAST_WORDS.match(head[::-1])  # read backwards from the end: the match is anchored there
        if m and _dangles(m.group(1)[::-1], (m.group(2) or "")[::-1], (m.group(3) or "")[::-1]):
            last = m.group(1)[::-1]
            offset = max(0, end - _WINDOW)
            found = _excerpt(text, offset + len(head) - m.end(1), offset + len(head), before=2)
            violations.append(_malformed(found, "A sentence stops in the middle, on “" + last + "”: “{found}”."))
    # A text that ends on a comma or a colon was cut. One whose last sentence has no full stop was not:
    # published updates often end without one, and a model's answer cut off is the model client's to
    # stop (the answer hit its token limit).
    if stripped and stripped[-1] in ",:;":
        found = _excerpt(stripped, len(stripped) - 1, len(stripped), before=2)
        violations.append(_malformed(found, "The text ends on “" + stripped[-1] + "”, as if something was cut: "
                                            "“{found}”."))
    return violations


# ---------------------------------------------------------------- placeholders

# Words inside brackets that mark a slot to fill in: "[LINK]", "[insert ETA]", "<customer name>".
_SLOT_WORDS = (
    r"link|url|insert|add|enter|placeholder|tbd|tbc|todo|name|date|time|eta|company|customer|product"
    r"|service|number|region|email|x+"
)
# Status tags a status page writes in brackets: not slots.
_TAGS = {"update", "updated", "investigating", "identified", "monitoring", "resolved", "mitigated",
         "maintenance", "scheduled", "completed", "in progress", "postmortem", "degraded", "outage"}
_PLACEHOLDERS = re.compile(
    r"\[\s*(?P<square>[^\[\]\n]{1,40}?)\s*\](?!\()"
    r"|\{\{[^{}\n]{0,60}\}\}"
    r"|\{\s*[A-Za-z_][\w.\- ]{0,40}\}"
    r"|<\s*(?P<angle>[A-Za-z][^<>\n]{0,40}?)\s*>"
    r"|(?-i:\b(?:TODO|TBD|FIXME|XXX+)\b)"
    r"|\blorem\s+ipsum\b",
    re.IGNORECASE,
)


def _is_slot(m: re.Match) -> bool:
    square, angle = m.group("square"), m.group("angle")
    if square is not None:
        if square.lower() in _TAGS or square.isdigit():
            return False
        letters = re.sub(r"[^A-Za-z]", "", square)
        return (len(letters) >= 2 and square.upper() == square) or bool(
            re.match(rf"(?:your\s+|the\s+)?(?:{_SLOT_WORDS})\b", square, re.IGNORECASE))
    if angle is not None:
        if re.search(r"[=/\"']", angle):  # markup ("<img src=x>", "</b>"), not a slot to fill in
            return False
        return "_" in angle or " " in angle.strip() or bool(re.fullmatch(rf"(?:{_SLOT_WORDS})", angle, re.IGNORECASE))
    return True


def _placeholders(text: str) -> list[Violation]:
    return [_malformed(m.group().strip(), "The text still has a placeholder to fill in: “{found}”.")
            for m in _PLACEHOLDERS.finditer(text) if _is_slot(m)]


# ---------------------------------------------------------------- doubled words

# "the the", "to to": a slip. "had had" ("the fix had had no effect") and "that that" ("the change
# that that release made") are grammatical English, so they pass; every other word written twice in
# a row (in any case, across a space or a line break, not across punctuation) is flagged.
_DOUBLED = re.compile(r"(?<![\w'’/-])([A-Za-z]+(?:['’][A-Za-z]+)?)\s+(\1)(?![\w'’/-])", re.IGNORECASE)
_GRAMMATICAL_REPEATS = {"had", "that"}


def _doubled_words(text: str) -> list[Violation]:
    return [_malformed(_excerpt(text, m.start(), m.end(), before=1), "The text repeats a word: “{found}”.")
            for m in _DOUBLED.finditer(text) if m.group(1).lower() not in _GRAMMATICAL_REPEATS]


# A preposition right before a modal verb: what an edit leaves when it cuts a phrase out of a sentence
# ("We expect recovery in [about 45 minutes, but this] may change."). Lower case only: "in May".
_CUT_CLAUSE = re.compile(r"\b(?i:in|on|at|of|for|with|by|from|into|about|within)\s+"
                         r"(?:may|might|will|would|shall|should|can|could|must)\b")


# "Sign in will be back": a phrasal noun, not a preposition; "users who were signed in could read it": a
# phrasal verb's particle.
_PHRASAL = re.compile(r"(?i:sign|log|check|opt|plug|print|drop|walk|roll)(?i:s|ed|ged|ing|ging)?[\s-]*$")


# An article or a possessive right before a word of grammar: the noun it needs was cut out ("Your [bank
# has been notified] about the failed payments", "replaced the [faulty router] in Frankfurt"). The word
# after in lower case only: "the About page".
_CUT_NOUN = re.compile(led_by("amoty", r"\b(?:the|an|your|our|their|my)\s+(?-i:about|of|to|for|with|by|from|into|"
                                       r"in|on|at|within|during|until|across|through|"
                                       r"and|or|but|is|are|was|were|has|have|had)(?![\w'’-])"),  # no modal: "your will"
                       re.IGNORECASE)


def _cut_clauses(text: str) -> list[Violation]:
    cut = [_malformed(_excerpt(text, m.start(), m.end(), before=1),
                      "A part of the sentence is missing: a preposition runs into a verb in “{found}”.")
           for m in _CUT_CLAUSE.finditer(text) if not _PHRASAL.search(text[max(0, m.start() - 12):m.start()])]
    return cut + [_malformed(_excerpt(text, m.start(), m.end(), before=1), "A part of the sentence is missing: “"
                             + m.group().split()[0] + "” has no noun in “{found}”.")
                  for m in _CUT_NOUN.finditer(text)]


# ---------------------------------------------------------------- quotes and brackets

_PAIRS = {")": "(", "]": "[", "}": "{", "”": "“"}
_OPENERS = set(_PAIRS.values())
_BRACKETS = re.compile(r"[()\[\]{}“”]")
# "1) sign-in 2) exports", "a) ...": a list's numbering, not a closing bracket.
_ENUMERATION = re.compile(r"(?:^|(?<=\s))(?:\d{1,2}|[a-z])\)")


def _unbalanced(text: str) -> list[Violation]:
    """Brackets and double quotes that are opened and never closed, or closed and never opened.
    Single quotes are left alone: ’ and ' are apostrophes as often as quotes ("we’re", "customers'")."""
    enumerations = {m.end() - 1 for m in _ENUMERATION.finditer(text)}
    stack: list[tuple[str, int]] = []
    found: list[tuple[int, str, str]] = []
    for m in _BRACKETS.finditer(text):
        i, char = m.start(), m.group()
        if char in _OPENERS:
            stack.append((char, i))
        elif char in _PAIRS and (i not in enumerations or (stack and stack[-1][0] == _PAIRS[char])):
            # "1) sign-in 2) exports" numbers a list; "update (January 20)" closes its bracket
            if stack and stack[-1][0] == _PAIRS[char]:
                stack.pop()
            else:
                found.append((i, char, "The text closes “{mark}” that was never opened: “{found}”."))
    found += [(i, char, "The text opens “{mark}” and never closes it: “{found}”.") for char, i in stack]
    if text.count('"') % 2:
        i = text.rindex('"')
        found.append((i, '"', "The text has a quotation mark “{mark}” that is never closed: “{found}”."))
    return [_malformed(_excerpt(text, i, i + 1, before=1, after=1), message.replace("{mark}", mark))
            for i, mark, message in sorted(found)]


def find_malformed(text: str) -> list[Violation]:
    """Everything that makes ``text`` broken as prose, in reading order within each kind: stray or
    doubled punctuation, an unfinished sentence, a placeholder, a doubled word, an unbalanced quote
    or bracket."""
    if not text.strip():
        return []
    return [*_stray_punctuation(text), *_unfinished(text), *_placeholders(text), *_doubled_words(text),
            *_cut_clauses(text), *_unbalanced(text)]


# ---------------------------------------------------------------- saying something

# The incident's state: what is happening, or what is being done. Matched as the start of a word
# ("investigat" for investigating, investigation), so every inflection counts.
_STATE_STEMS = (
    "investigat", "aware", "identif", "fix", "monitor", "resolv", "restor", "recover", "mitigat", "degrad",
    "outage", "down", "error", "fail", "delay", "slow", "disrupt", "unavailab", "unable", "interrupt",
    "impact", "affect", "issue", "problem", "incident", "maintenance", "timeout", "timing", "elevat",
    "intermittent", "offline", "working", "work", "deploy", "roll", "stabil", "operational", "patch",
    "reboot", "restart", "upgrad", "migrat", "scheduled", "latenc", "broken", "stuck", "queue", "backlog",
    "retry", "retri", "look", "examin", "diagnos", "cause", "escalat", "engag", "remediat", "workaround",
    "normal", "complet", "healthy", "back", "partial", "unreachab", "reject", "declin", "lost", "miss",
    # ... and the everyday ways of saying it, one way or the other: "payments are humming along",
    # "exports are running smoothly", "sign-in is available again", "a glitch in webhooks".
    "run", "smooth", "avail", "usual", "steady", "function", "humming", "respond", "trouble", "glitch",
    "hiccup", "instab", "unstable", "spike", "congest", "throttl", "limit", "disabl", "paus", "suspend",
    "halt", "block", "flak", "drop", "lag", "increas", "high", "reduc", "sporadic", "expired", "crash",
)
# ... and a courtesy to the customers it affects, or a word of the next update: "We're sorry for the
# inconvenience and thank you for your patience." closes a thread of updates, and the people who label
# published updates pass it (it is no bare date or stray heading).
_COURTESY_STEMS = ("sorry", "apolog", "inconvenien", "hassle", "patien", "bearing", "update")
# What is affected, when the incident names none of its own words: a service, a feature, a channel.
_SERVICE_STEMS = (
    "service", "sign", "signin", "login", "log", "authenticat", "auth", "sso", "password", "payment", "pay",
    "checkout", "api", "webhook", "export", "import", "dashboard", "app", "application", "website", "site",
    "platform", "system", "email", "notification", "order", "search", "upload", "download", "report",
    "billing", "invoice", "integration", "request", "endpoint", "customer", "user", "account", "data",
    "sync", "database", "storage", "page", "mobile", "message", "deliver", "transaction", "card",
    "transfer", "wallet", "subscription", "portal", "console", "feature", "product", "server", "network",
    "connect", "performance", "traffic", "job", "file", "backup", "refund", "charge", "purchase",
    "merchant", "region", "cluster", "datacent", "data centre", "data center", "infrastructure", "dns",
    "cdn", "queue", "call", "chat", "support", "access", "session", "token", "key", "repositor", "build",
    "pipeline", "deploy", "release", "top-up", "top", "booking", "shipment", "stream", "video", "voice",
)
# Words that never name a state or a service on their own.
_STOPWORDS = {
    "the", "and", "for", "with", "from", "this", "that", "are", "was", "were", "has", "have", "our", "your",
    "their", "into", "onto", "over", "under", "some", "all", "any", "its", "not", "but", "per", "via",
    "about", "after", "before", "more", "less", "than", "due", "new", "now", "still", "also",
}  # fmt: skip
_VERBS = {
    "am", "is", "are", "was", "were", "be", "been", "being", "has", "have", "had", "will", "shall", "can",
    "could", "may", "might", "should", "would", "must", "do", "does", "did", "investigate", "affect",
    "fail", "see", "continue", "work", "restore", "monitor", "apply", "deploy", "expect", "know",
    "believe", "remain", "recover", "experience", "cause", "impact", "appear", "occur", "fix", "resolve",
    "return", "update", "post", "share", "provide", "follow", "apologise", "apologize", "thank", "look",
    "identify", "mitigate", "prevent", "retry", "try", "use", "need", "show", "run", "respond", "load",
    "process", "send", "receive", "complete", "take", "make", "get", "happen", "seem", "persist", "stay",
    "keep", "begin", "start", "stop", "roll", "switch", "move", "help", "ask", "access", "reach",
    "contact", "check", "time", "slow", "go", "come", "plan", "aim", "hope", "estimate", "publish",
    "let", "notify", "inform", "recommend", "advise", "avoid", "wait", "queue", "delay", "track",
    "end", "finish", "last", "resume", "improve", "increase", "decrease", "drop", "rise", "fall", "block",
    "require", "include", "reduce", "stabilise", "stabilize", "degrade", "expire", "close", "open",
    "change", "add", "remove", "release", "schedule", "replace", "upgrade", "migrate", "restart", "reboot",
    "scale", "handle", "clear", "lose", "find", "fill", "pause", "spike", "cannot", "join", "connect",
    "save", "write", "read", "pay", "buy", "upload", "download", "sync", "deliver", "arrive",
    *("call", "ring", "phone", "email", "visit", "reply", "tell", "give", "bring", "attend", "book", "print"),
}  # fmt: skip
# A phone call the reader is asked to make ("Call us on …") is an instruction, not a service that is affected.
_INSTRUCTED = frozenset(("call", "ring", "phone"))
_CONTRACTION = re.compile(r"['’](?:re|s|ve|ll|d|m)$|n['’]t$")
_WORDS = re.compile(r"[A-Za-z]+(?:['’][A-Za-z]+)*")
_MIN_SENTENCE_WORDS = 3


@functools.lru_cache(maxsize=8192)  # the same words recur in every text; lemminflect's lookup is the slow part
def _is_verb(word: str) -> bool:
    lower = word.lower()
    if lower in _VERBS or _CONTRACTION.search(lower):
        return True
    if lower.endswith("s") and lower[:-1] in _VERBS or lower.endswith("es") and lower[:-2] in _VERBS:
        return True
    if (len(lower) > 4 and lower.endswith("ing")) or (len(lower) > 3 and lower.endswith("ed")):
        return True
    # An irregular past form ("sent", "went", "broke"): a verb whose dictionary form is another word.
    return not lower.endswith("s") and any(lemma != lower for lemma in verbs_of(lower))


def _is_real_sentence(sentence: str) -> bool:
    words = _WORDS.findall(sentence)
    return len(words) >= _MIN_SENTENCE_WORDS and any(map(_is_verb, words))


def _singular(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def _context_words(*values: Any) -> set[str]:
    """The meaningful lower-case words of context values (text, or lists of text)."""
    words: set[str] = set()
    for value in values:
        items = value if isinstance(value, (list, tuple)) else [value]
        for item in items:
            if isinstance(item, str):
                words |= {_singular(w.lower()) for w in _WORDS.findall(item)
                          if len(w) >= 3 and w.lower() not in _STOPWORDS}
    return words


def _regions(context: Mapping[str, Any], incident: Mapping[str, Any]) -> set[str]:
    tokens = set()
    for value in (context.get("region"), context.get("regions"), incident.get("region"), incident.get("regions")):
        items = value.split(",") if isinstance(value, str) else value if isinstance(value, (list, tuple)) else []
        tokens |= {item.strip() for item in items if isinstance(item, str) and item.strip()}
    return tokens


def _affected_words(context: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    """The incident's own words for what is affected (its title, its facts' labels and text values),
    and its region tokens, as written."""
    incident = context.get("incident") if isinstance(context.get("incident"), Mapping) else {}
    meta = context.get("fact_meta") if isinstance(context.get("fact_meta"), list) else []
    labels = [m.get("label") for m in meta if isinstance(m, Mapping)]
    keys = [m.get("key") for m in meta if isinstance(m, Mapping) and isinstance(m.get("key"), str)]
    if not meta:  # a plain context (a seed-format file) has no fact list: its facts are the incident's values
        keys = [key for key in incident if key not in ("incident_id", "severity", "status", "state")]
        labels = [key.replace("_", " ") for key in keys]
    values = [incident.get(key) for key in keys]
    words = _context_words(incident.get("title"), context.get("title"), labels, values)
    return words, _regions(context, incident)


def _state_words(context: Mapping[str, Any]) -> set[str]:
    incident = context.get("incident") if isinstance(context.get("incident"), Mapping) else {}
    return _context_words(incident.get("status"), incident.get("state"), context.get("status"),
                          context.get("state"))


def _has_stem(words: list[str], stems: tuple[str, ...], own: set[str]) -> bool:
    for word in words:
        lower = word.lower()
        if _singular(lower) in own or lower.startswith(stems):
            return True
    return False


def _names_region(sentence: str, regions: set[str]) -> bool:
    for token in regions:
        flags = 0 if len(token) <= 2 else re.IGNORECASE  # "let us know" is not the US
        if re.search(rf"(?<![\w-]){re.escape(token)}(?![\w-])", sentence, flags):
            return True
    return False


def find_uninformative(text: str, context: Mapping[str, Any] | None, key: str | None = None) -> list[Violation]:
    """A violation when ``text`` tells customers nothing: no real sentence (three words or more,
    with a verb), or none says either the incident's state (what is happening or being done) or what
    is affected (a word of the incident's title, its facts' labels or values, a region, or a service).
    ``key``: the context's incident_key, where the caller has it."""
    if not text.strip():
        return []
    said = sentences(text)
    real = [s for s in said if _is_real_sentence(s)]
    found = _excerpt(text, 0, len(text))
    if not real:
        return [Violation("uninformative", found, f"The text is not a sentence that tells customers anything: "
                                                  f"“{found}”.")]
    own_affected, regions, own_state = _incident_words(context if isinstance(context, Mapping) else {}, key=key)
    # An update in a thread says what is happening or what is affected: "A fix has been implemented and
    # we are monitoring the results." follows the updates that named the service, and "Card payments
    # in the EU." alone is a headline. Only a text that says neither tells customers nothing. Beside a
    # real sentence, a headline, a question or an apology says it too ("Questions about your instalments?
    # Call us on …", "Sorry for the confusion. Give us a ring on …").
    if any(_has_stem(_WORDS.findall(s), _STATE_STEMS + _COURTESY_STEMS, own_state) for s in said):
        return []
    if any(_has_stem(_told(_WORDS.findall(s)), _SERVICE_STEMS, own_affected) or _names_region(s, regions)
           for s in said):
        return []
    return [Violation("uninformative", found, f"The text says neither what is happening or being done "
                      f"(investigating, fixing, monitoring, resolved…) nor what is affected (a service, a feature "
                      f"or a region): “{found}”.")]


def _told(words: list[str]) -> list[str]:
    """A sentence's words without the verb of an instruction that opens it."""
    return words[1:] if words and words[0].lower() in _INSTRUCTED else words


@per_incident
def _incident_words(context: Mapping[str, Any]) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
    """The incident's words for what is affected, its region tokens and its words for its state."""
    affected, regions = _affected_words(context)
    return frozenset(affected), frozenset(regions), frozenset(_state_words(context))


# ---------------------------------------------------------------- the check


def find(text: str, support: Support) -> list[Violation]:
    """Broken text is broken whatever the context; whether it tells customers anything is judged
    against the incident (its title, status and facts), so only with a context."""
    context = support.context
    return [*find_malformed(text),
            *(find_uninformative(text, context, support.context_key) if context is not None else [])]

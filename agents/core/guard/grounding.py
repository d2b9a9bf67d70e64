"""Grounding: every sentence of a customer text states only what the incident supports.

The named checks each know one kind of risk (a number, a region, a promise of money...). Grounding
knows none: it reads each sentence's words and passes the sentence only when every word is licensed,

- by grammar (articles, pronouns, auxiliaries, prepositions: :data:`FUNCTION_WORDS`);
- by the incident: a word of its public context (facts and their labels and keys, title, status,
  state, components, regions and their names, key messages, approved actions) or of the goal ops
  wrote, or, for a revision, of the text it revises;
- by the reviewed vocabulary of ordinary update language (:class:`Vocabulary`: "we apologize for the
  inconvenience", "a fix has been implemented", "the next update"), which is data: policy rows that a
  policy admin edits, seeded from careful real-world updates.

Numbers, times, dates, ids, links and contacts are the named checks' (a sentence's digits are never
read here). A word nothing licenses is the unsupported part: the sentence stops with
``unsupported_statement`` and the lead sees the sentence and those words. A sentence that gives
advice ("please retry", "you can use the app instead") is read more strictly: only the incident and
the vocabulary's advice terms ("contact support", "check the status page") license its words, so an
unapproved workaround stops even when each of its words is ordinary. What the company says it did,
does or will do ("we have re-run your builds", "uploads will be sent automatically") is read the same
way on its verb: the approved actions, the key messages, the facts about what was done and the
vocabulary's action terms ("investigating", "rolling back", "monitoring") license it.

Plain Python: no Django here.
"""

from __future__ import annotations

import datetime
import functools
import itertools
import re
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import snowballstemmer

from agents.core.guard.cadence import cadence_spans
from agents.core.guard.contacts import prose
from agents.core.guard.hedges import SUBORDINATORS, clause_before, is_negated
from agents.core.guard.leading import led_by
from agents.core.guard.lemmas import is_inflection, lemmas_of, parts_of, verbs_of
from agents.core.guard.places import COUNTRIES, DEMONYMS, PLACES
from agents.core.guard.support import Support, per_incident
from agents.core.guard.synonyms import synonyms
from agents.core.guard.violation import Violation
from agents.core.guard.wellformed import sentence_spans
from agents.core.units import CURRENCY_CODES, fact_meta, number_value

CHECK = "unsupported_statement"

# Closed-class words: they carry grammar, not facts. Words that carry an absolute claim on their own
# ("never", "always", "again", "guarantee") are deliberately not here.
FUNCTION_WORDS = frozenset("""
a an the this that these those there here it its they them their theirs we our ours us you your yours i me my
he she his her him who whom whose which what when where why how whether
is are was were be been being am has have had having do does did done doing will would shall should can could
may might must ought
to of in on at by for with from into onto about as than then so and or but nor if unless until while because
although though since once after before during within without between through over under up out off per via
upon toward towards against among across along around beyond throughout
also too very just only still yet already now not no any some all each every both either neither other another
such same more most less least much many few several own
re ve ll s t d m don won can cannot isn aren wasn weren haven hasn hadn didn doesn couldn wouldn shouldn
something anything everything nothing someone anyone everyone nobody even whenever wherever
itself themselves yourself yourselves ourselves himself herself
""".split())

# A sentence that tells customers what to do.
_ADVICE = re.compile(
    # ... at its start, or after a semicolon or "so" ("Posts went out late; use Resend from the menu").
    r"(?:^\s*|(?<=;\s)|(?<=\sso\s))(?:please|try|use|avoid|switch|clear|restart|reinstall|retry|disable|enable|log\s+out|"
    r"sign\s+out|"
    # "Contact and lead edits are ..." names things: no instruction
    # ... nor does a compound ("Check-in for other airlines is working")
    r"refresh|update\s+your|reset|contact|visit|check)\b(?![-‑])(?!\s+(?:and|or)\s)|"
    + led_by(
        "acdefmnoprstuwy",
        r"\b(?:(?:do|does)\s+not|don['’]t|doesn['’]t)\s+need\s+to\b|\bno\s+need\s+to\b"
        # "Some drivers can't start sessions" says what fails: a modal that is negated instructs nobody
        r"|\b(?:customers|users|attendees|employees|students|shoppers|members|admins|administrators|patients|"
        r"riders|drivers|fans|organi[sz]ers|teams|they)\s+(?:should|must|need\s+to|have\s+to|can|may\s+want\s+to)\b"
        # ... not what they should now have or see: an expectation ("attendees should now have them")
        r"(?!['’]t|\s+not\b|(?<=should)\s+(?:now|already|soon|have|be|see|receive|notice|get|find)\b)"
        r"|\b(?:please|we\s+(?:recommend|suggest|advise|encourage)|as\s+a\s+workaround|"
        r"you\s+(?:can|could|should|must|may\s+want\s+to|might\s+want\s+to|will\s+need\s+to|need\s+to|"
        r"are\s+(?:advised|encouraged)\s+to)(?!['’]t|\s+not\b))\b",
    ),
    re.IGNORECASE,
)

# A word: letters, inner apostrophes split off ("we're" reads as "we", "re"). Tokens with a digit are
# numbers, times, dates or ids: the number, time and id checks judge them.
_TOKEN = re.compile(r"[^\W\d_]+|\S*\d\S*")
# Spelled numbers are numbers: the number check reads them.
NUMBER_WORDS = frozenset(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million "
    "half quarter dozen couple first second twice third thirds fifth fifths tenth tenths".split()
)
# The words of dates, times and quantities: the number check judges the date, time or number they
# belong to ("since 23 November", "at 2 pm", "within 40 min"; a weekday is the places check's).
_TIME_WORDS = frozenset(
    "january february march april may june july august september october november december jan feb mar apr "
    "jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday mon tue tues wed "
    "thu thur thurs fri sat sun am pm min mins sec secs ms hr hrs percent pct".split()
) | {code.lower() for code in CURRENCY_CODES}  # the currency of an amount: "USD 38.20"
# A month named without a day ("the same problem we had in March") is a date the number check does not
# read: the incident must name it.
_MONTHS = frozenset("january february march april june july august september october november december".split())
# Context entries that instruct the model or describe the context: no word of theirs licenses anything.
_NOT_EVIDENCE = ("policy_hints", "fact_meta", "internal")


# A Snowball stemmer keeps the word it works on in itself: one per thread, or two runs checked at once
# in a threaded worker corrupt each other's word (an IndexError inside the stemmer).
_per_thread = threading.local()


def _stemmer():
    found = getattr(_per_thread, "stemmer", None)
    if found is None:
        found = _per_thread.stemmer = snowballstemmer.stemmer("english")
    return found


# Longer than any dictionary word: such a "word" (a run of letters in pasted data) is compared as it is,
# not stemmed or looked up, which would cost time that grows with its length for no answer.
_LONGEST_WORD = 45


@functools.lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """The word's stem, lower-cased and with British spellings folded ("apologise" as "apologize")."""
    word = word.lower().replace("’", "'")
    if len(word) > _LONGEST_WORD:
        return word
    word = re.sub(r"is(e|ed|es|ing|ation)$", r"iz\1", word) if len(word) > 5 else word
    return _stemmer().stemWord(word)


@dataclass(frozen=True)
class Term:
    """One entry of the vocabulary: a word or a phrase of ordinary update language. ``advice``: it may
    also stand in a sentence that tells customers what to do. ``action``: it may also stand in what the
    company says it did, does or will do ("we are investigating", "a fix will be deployed"); ``None``:
    a term from before that reading existed."""

    text: str
    advice: bool = False
    action: bool | None = None

    @classmethod
    def of(cls, value) -> Term:
        if isinstance(value, Term):
            return value
        if isinstance(value, Mapping):
            action = value.get("action")
            return cls(str(value.get("text", "")), bool(value.get("advice", False)),
                       None if action is None else bool(action))
        if isinstance(value, (list, tuple)):
            return cls(str(value[0]), bool(value[1]) if len(value) > 1 else False,
                       bool(value[2]) if len(value) > 2 else None)
        return cls(str(value))


# Where a word stands decides which terms may license it (find_unsupported).
PLAIN, ADVICE, ACTION, DONE = "plain", "advice", "action", "done"


@dataclass(frozen=True)
class Vocabulary:
    """The reviewed terms, indexed: single stems by where they may stand, and phrases by their first
    stem. ``commitments``: the terms say which may stand in what the company says it does (a
    vocabulary from before that reading leaves such sentences to the plain reading)."""

    words: frozenset[str]
    advice_words: frozenset[str]
    phrases: Mapping[str, tuple[tuple[tuple[str, ...], frozenset[str]], ...]]
    action_words: frozenset[str] = frozenset()
    commitments: bool = False
    texts: frozenset[str] = frozenset()  # the single-word terms as written, lower case

    @classmethod
    def of(cls, terms: Iterable) -> Vocabulary:
        """The index of ``terms`` (Terms, (text, advice[, action]) tuples or texts), built once per list: a
        policy's rules hold the same tuple for every text they check."""
        global _last_vocabulary
        terms = terms if isinstance(terms, tuple) else tuple(terms)
        last_terms, last_found = _last_vocabulary  # one tuple, replaced whole: a matching pair in any thread
        if last_terms is terms:  # the same policy's terms again: hashing 1,500 of them costs more than the rest
            return last_found
        found = _vocabulary(terms)
        _last_vocabulary = (terms, found)
        return found

    def allows(self, where: str) -> frozenset[str]:
        return {PLAIN: self.words, ADVICE: self.advice_words, ACTION: self.action_words, DONE: frozenset()}[where]


# The terms last indexed, and their index.
_last_vocabulary: tuple = (None, None)


@functools.lru_cache(maxsize=32)
def _vocabulary(terms: tuple) -> Vocabulary:
    words, advice, action, phrases, commitments, texts = set(), set(), set(), {}, False, set()
    for term in map(Term.of, terms):
        stems = tuple(stem(w) for w in _words_only(term.text))
        if not stems:
            continue
        commitments = commitments or term.action is not None
        places = {PLAIN} | ({ADVICE} if term.advice else set()) | ({ACTION} if term.action else set())
        if len(stems) == 1:
            texts.add(term.text.lower())
            # A word's dictionary forms too: "frozen" licenses "freeze", as a text's "froze" is read as "freeze".
            its = set(forms(_words_only(term.text)[0].lower().replace("’", "'")))
            words.update(its)
            if term.advice:
                advice.update(its)
            if term.action:
                action.update(its)
        else:
            phrases.setdefault(stems[0], []).append((stems, frozenset(places)))
    ordered = {first: tuple(sorted(found, key=lambda p: -len(p[0]))) for first, found in phrases.items()}
    return Vocabulary(frozenset(words), frozenset(advice), ordered, frozenset(action), commitments, frozenset(texts))


def _words_only(text: str) -> list[str]:
    return [m.group() for m in _TOKEN.finditer(text) if not _has_digit(m.group())]


@functools.lru_cache(maxsize=65536)
def _has_digit(word: str) -> bool:
    return any(c.isdigit() for c in word)


_NO_VOCABULARY = Vocabulary(frozenset(), frozenset(), {})


@dataclass(frozen=True)
class Unsupported:
    """A sentence with words nothing licenses: ``words`` are [start, end) offsets into the sentence."""

    sentence: str
    start: int  # of the sentence in the checked text
    words: tuple[tuple[int, int], ...]
    # Every one of the words says work done to customers that the incident does not record ("we have
    # notified every affected customer"): no vocabulary term licenses it (the reading "done to customers").
    done: bool = False

    @property
    def found(self) -> str:
        return ", ".join(self.sentence[a:b] for a, b in self.words)


def evidence_stems(context: Mapping | None, *texts: str, cadence: bool = True) -> frozenset[str]:
    """The stems the incident licenses: every word of its public context's values and of its facts'
    keys and labels (``affected_checkout_pct`` licenses "checkouts"), plus the given texts (the goal,
    the text a revision revises). The policy hints instruct the model and the internal facts are not
    for customers: neither licenses a word. ``cadence=False``: without what speaks of the next update
    ("Next update: by 11:00 CET" licenses no "update" as a cause)."""
    parts: list[str] = []
    if isinstance(context, Mapping):
        for key, value in context.items():
            if key in _NOT_EVIDENCE:
                continue
            parts += _strings_and_keys(value)
        meta = context.get("fact_meta")
        if isinstance(meta, list):
            parts += [str(m.get("label", "")) for m in meta if isinstance(m, Mapping)]
        incident = context.get("incident") if isinstance(context.get("incident"), Mapping) else {}
        if any("email" in str(key) for key in incident):
            parts.append("email write")  # a declared address invites customers to write to it
    parts += [t for t in texts if t]
    if not cadence:
        parts = [_without_cadence(part) for part in parts]
    said = "\n".join(parts)
    stems = _stems_of(said)
    stems |= _acronyms(said)
    if holidays := _holiday_words(context, said):
        stems |= _stems_of(holidays)  # "sorry this happened on Boxing Day" on an incident of 26 December
    if _WORKS_AGAIN.search(said):
        stems |= {"back"}  # "online bookings are working again" licenses "booking is back"
    actions = context.get("approved_actions") if isinstance(context, Mapping) else None
    if any(_USE.search(str(action)) for action in actions or ()):
        stems |= {SWITCH_TO}  # advice to use a thing is advice to switch to it ("switch to viewport-only captures")
    return stems


# An acronym stands for the words whose initials it spells: "intermediate CA" where the incident says
# "intermediate certificate authority". Kept apart from words ("^ca"), as only a word in capitals is read so.
ACRONYM = "^"
_ACRONYM_WORDS = range(2, 6)


def _acronyms(said: str) -> frozenset[str]:
    found = set()
    for line in said.splitlines():
        initials = "".join(w[0].lower() for w in _words_only(line))
        for size in _ACRONYM_WORDS:
            found.update(ACRONYM + initials[i : i + size] for i in range(len(initials) - size + 1))
    return frozenset(found)


# A holiday is a day of the year: its name is the incident's where the incident's report date, the day
# before it (last night's outage) or a date its facts give falls on it. Holidays whose date moves (Easter,
# Thanksgiving) are left out: their names stay the incident's to use.
_HOLIDAYS = {
    (1, 1): "New Year's Day holiday holidays", (2, 14): "Valentine's Day", (3, 17): "St Patrick's Day",
    (7, 4): "Independence Day Fourth of July holiday", (10, 31): "Halloween", (11, 5): "Bonfire Night",
    (12, 24): "Christmas Eve holiday holidays festive", (12, 25): "Christmas Day holiday holidays festive",
    (12, 26): "Boxing Day holiday holidays festive", (12, 31): "New Year's Eve holiday holidays festive",
}
_MONTH_NUMBERS = {name: number for number, name in enumerate(
    "january february march april may june july august september october november december".split(), start=1)}
_REPORTED = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_DAY_MONTH = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(" + "|".join(_MONTH_NUMBERS) + r")\b"
                        r"|\b(" + "|".join(_MONTH_NUMBERS) + r")\s+(\d{1,2})(?:st|nd|rd|th)?\b", re.IGNORECASE)


def _holiday_words(context: Mapping | None, said: str) -> str:
    """The names of the holidays the incident's dates fall on."""
    days = set()
    reported = _REPORTED.fullmatch(str(context.get("report_date") or "")) if isinstance(context, Mapping) else None
    if reported:
        try:
            day = datetime.date(*(int(part) for part in reported.groups()))
        except ValueError:
            day = None
        if day is not None:
            days |= {(d.month, d.day) for d in (day, day - datetime.timedelta(days=1))}
    for m in _DAY_MONTH.finditer(said):
        day, month = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        days.add((_MONTH_NUMBERS[month.lower()], int(day)))
    return " ".join(_HOLIDAYS[d] for d in days if d in _HOLIDAYS)


_WORKS_AGAIN = re.compile(r"\b(?:work\w*|available|running|up|online)\s+again\b|\b(?:restored|recovered|resumed)\b",
                          re.IGNORECASE)
_USE = re.compile(r"\buse\b", re.IGNORECASE)
SWITCH_TO = "~use"  # a stem no word has (nor begins with): the incident advises using something
_SWITCH = frozenset("switch switching".split())
_TO_AFTER = re.compile(r"\s+(?:over\s+)?to\b", re.IGNORECASE)


def _without_cadence(text: str) -> str:
    text = text.replace("_", " ")  # a key: "next_update"
    for start, end in reversed(cadence_spans(text)):
        text = text[:start] + " " + text[end:]
    return text


# Facts that say what the team did or does ("Fix: the runtime update was rolled back").
_ACTION_FACT = re.compile(r"fix|mitigat|action|remediat|resolution|workaround|next|plan|step|change|rollback|"
                          r"revert|recover|restor|response", re.IGNORECASE)


# ... and "Re-run on Wednesday at 11:00" says the run is done again: the verb is the word after "re-".
_FIRST_WORD = re.compile(r"\s*(?:re-)?([^\W\d_]+)", re.IGNORECASE)
_DONE_VALUE = re.compile(r"\s*(?:completed|complete|done|finished)\b", re.IGNORECASE)
_WHEN_VALUE = re.compile(r"\s*(?:(?:on\s+|at\s+|by\s+)?(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)"
                         r"(?:day)?\b|\d{1,2}[:.]\d{2}\b|\d{1,2}\s*(?:am|pm)\b|\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|may|"
                         r"jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|\d{4}-\d{2}-\d{2}\b)", re.IGNORECASE)
# A fact that says what will be done ("Refunds will go to the original card") plans it, whatever its key.
_PLANNED = re.compile(r"\bwill\b", re.IGNORECASE)


def action_stems(context: Mapping | None, *texts: str) -> frozenset[str]:
    """The stems that may say what the company does: its approved actions and key messages, the facts
    about what was done (a key or label of a fix, a mitigation, a next step) and the given texts. A
    symptom ("orders fail when placing them") licenses no promise to place orders; a contact
    ("support_email") none to email anyone."""
    parts: list[str] = [t for t in texts if t]
    if isinstance(context, Mapping):
        parts += _strings_and_keys([context.get("approved_actions") or [], context.get("key_messages") or []])
        incident = context.get("incident") if isinstance(context.get("incident"), Mapping) else {}
        labels = {str(m.get("key")): str(m.get("label", "")) for m in context.get("fact_meta") or []
                  if isinstance(m, Mapping)}
        facts = [(k, v) for k, v in incident.items() if isinstance(v, str)]
        parts += [v for k, v in facts
                  if _ACTION_FACT.search(k) or _ACTION_FACT.search(labels.get(k, "")) or _PLANNED.search(v)]
        parts += [verb for _k, v in facts for verb in _stated_actions(v)]
        # "Rerun: Completed on 19 September": the work a fact's key and label name is done; "Customers without a
        # slot: Booked into the first free slot" says its verb is.
        parts += [f"{k.replace('_', ' ')} {labels.get(k, '')}" for k, v in facts if _DONE_VALUE.match(v)]
        parts += [first.group(1) for _k, v in facts if (first := _FIRST_WORD.match(v)) and
                  lemmas_of(first.group(1).lower()) and _verb(first.group(1), "been")]
        # A count's label says what was done to the things it counts ("Charges submitted for reversal: 1100"), and
        # a time's label what was done then ("Emails resent: Thursday 16:20 BST").
        parts += [w for k, label, _unit in fact_meta(context)
                  if (number_value(incident.get(k)) is not None or _WHEN_VALUE.match(str(incident.get(k) or "")))
                  and not _NEGATION.search(label) for w in _words_only(label) if _verb(w.lower(), "been")]
    said = _NEGATED_CLAUSE.sub(" ", "\n".join(parts))
    stems = _stems_of(said)
    facts_said = " ".join(v for _k, v in facts) if isinstance(context, Mapping) else ""
    return stems | {LET_KNOW} if _TOLD_DONE.search(said) or _TOLD_DONE.search(facts_said) else stems


# "We've let festivals with deadlines today know" where the incident says they "have been informed" (told,
# not advice to tell someone: "contact your doctor").
_TOLD_DONE = re.compile(r"\b(?:been|were|was|are|is|we|we['’]ve|we\s+have|we\s+will|we['’]ll)\s+(?:\w+\s+)?"
                        r"(?:informed|notified|told|contacted|alerted|emailed)\b", re.IGNORECASE)
LET_KNOW = "~told"  # a stem no word has (nor begins with): the incident says whom it told
_KNOW_AFTER = re.compile(r"(?:\s+[\w’'-]+){1,5}?\s+know\b", re.IGNORECASE)


def _stated_actions(fact: str) -> list[str]:
    """The verbs a fact itself states as done or to be done, whatever its key ("Outcome: all delayed
    emails have been delivered" licenses "have now been delivered"), and what it says is done to its
    subject ("some users are signed out" licenses "users have been signed out"); a symptom in the
    active voice ("orders fail when placing them") states none."""
    verbs = [fact[start + a : start + b] for start, end in sentence_spans(fact)
             for a, b, _done in _commitment_spans(fact[start:end])]
    verbs += [m.group(1) for m in _PASSIVE.finditer(fact) if _verb(m.group(1), "been")]
    verbs += _STATED_OUTCOME.findall(fact)
    # "The spa team has phoned every guest whose booking clashed": what it has done, in the perfect.
    return verbs + [w for before, w in itertools.pairwise(w.lower() for w in _words_only(fact))
                    if _finite(before, w) or before in _HAVE and w not in _BE | _HAVE and _verb(w, before)]


_PASSIVE = re.compile(r"\b(?:is|are|was|were|being)\s+(?:now\s+|still\s+|also\s+|automatically\s+)?(?:being\s+)?"
                      r"([^\W\d_]+)", re.IGNORECASE)  # "institutions are being sent a list" states "sent"
# Words after which a verb is no statement of the fact's own: an infinitive, a modal, a condition or a
# gerund's lead ("unable to send", "cannot sign in", "fail when placing them"); after a conjunction it
# is ("devices keep working and sync when …").
_NOT_STATED = FUNCTION_WORDS - frozenset("they it we who which that and or but then".split()) | {"cannot", "unable"}


def _finite(before: str, word: str) -> bool:
    """Whether ``word`` is the fact's own verb in the present ("databases stay online", "missed events sync
    automatically"). One in the past ("refunds went to the original card") plans nothing."""
    if before in _NOT_STATED or word in FUNCTION_WORDS:
        return False
    if not lemmas_of(word):
        return True  # a verb no dictionary knows, as the commitments read it ("changes sync once …")
    return any(is_inflection(word, lemma, tag) for lemma in verbs_of(word) for tag in ("VBZ", "VBP"))


# What the incident says was not or will not be done ("missed notifications will not be re-sent")
# licenses no statement that it is: a negation, to the end of its clause, is no action of the company's.
# The clause ends at a conjunction or at the next verb's auxiliary ("Orders are not affected and will
# be delivered as normal", "renewals the registry did not confirm are refunded").
_NEGATED_CLAUSE = re.compile(r"(?:\b(?:not|never|no\s+longer)\b|\b\w+n[’']t\b)[^,;:.\n]*?"
                             r"(?=[,;:.\n]|\s(?:and|but|so|while|or|until|is|are|was|were|will|has|have|had)\s|$)",
                             re.IGNORECASE)


@functools.lru_cache(maxsize=256)
def _stems_of(text: str) -> frozenset[str]:
    """Each word's stem and its dictionary forms' stems: a fact that says the database "ran" out of space
    licenses "running out of space", as the text's "ran" would be read against a fact's "running". A verb
    and its particle also stand for the word they make together: "we failed over to a replica" licenses
    "failover", "sign in" licenses "sign-ins"."""
    words = [w.lower().replace("’", "'") for w in _words_only(text.replace("_", " "))]
    words += [_SHORT_OR_LONG[w] for w in words if w in _SHORT_OR_LONG]
    stems = {s for w in words for s in forms(w)}
    for verb, particle in itertools.pairwise(words):
        if particle in _PARTICLES and (bases := verbs_of(verb)):
            stems.update(stem(base + particle) for base in {verb, *bases})
    return frozenset(stems)


# A key's short words ("avg_duplicate", "max_wait_minutes") say the words they stand for, and each word said in
# full licenses its short form ("the statistics page" licenses "your stats", "maximum" licenses "max").
_SHORT_FORMS = {"avg": "average", "max": "maximum", "min": "minimum", "pct": "percentage", "qty": "quantity",
                "approx": "approximately", "est": "estimated", "stats": "statistics", "info": "information",
                "photo": "photograph", "photos": "photographs", "admin": "administrator", "admins": "administrators",
                "docs": "documentation", "lab": "laboratory", "labs": "laboratories"}
_SHORT_OR_LONG = {**_SHORT_FORMS, **{long: short for short, long in _SHORT_FORMS.items()}}


# The particles of phrasal verbs whose joined form is a word of its own ("failover", "rollback",
# "login", "checkout", "backup"), and their plurals after a hyphen ("sign-ins", "pop-ups").
_PARTICLES = frozenset("over in out up down back off on".split())
_PARTICLE_PLURALS = frozenset(p + "s" for p in _PARTICLES)


def _strings_and_keys(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        return [s for k, v in value.items() for s in (str(k), *_strings_and_keys(v))]
    if isinstance(value, (list, tuple)):
        return [s for item in value for s in _strings_and_keys(item)]
    return []


def find_unsupported(text: str, licensed: frozenset[str], vocabulary: Vocabulary,
                     skip: Iterable[tuple[int, int]] = (), acted: frozenset[str] | None = None,
                     caused: frozenset[str] | None = None, done: frozenset[str] | None = None) -> list[Unsupported]:
    """Each sentence of ``text`` with words that neither grammar, the incident (``licensed``, from
    :func:`evidence_stems`) nor the vocabulary supports. Words inside ``skip`` (spans of ``text`` a
    named check already reported, links and contacts) are not read again. What the company says it
    does is licensed by ``acted`` (:func:`action_stems`; default: ``licensed``), a cause by ``caused``
    (the incident without what it says of the next update; default: ``licensed``)."""
    acted = licensed if acted is None else acted
    caused = licensed if caused is None else caused
    done = acted if done is None else done
    skip = sorted(skip)
    found = []
    seen: dict[tuple[str, str], bool] = {}  # each word's answer where it stands: the text repeats its words
    for start, end in sentence_spans(text):
        sentence = text[start:end]
        tokens = [(m.start(), m.end(), m.group()) for m in _TOKEN.finditer(sentence)]
        places, opening = _places(sentence, tokens, vocabulary)
        supposes = opening and _supposes_reader(sentence)
        cadence = next(iter(cadence_spans(sentence)), (0, 0))
        awaited = _awaited_span(sentence, cadence[1]) if cadence[1] else (0, 0)
        covered = _phrase_cover(tokens, vocabulary, places)
        joined = _joined_to_incident(sentence, tokens, licensed, covered)
        named = _spelled_together(sentence, tokens, licensed)
        pointed = [m.span(1) for pattern in (_WHERE_TO_FIND, _READ_THERE) for m in pattern.finditer(sentence)]
        when = _work_times(sentence, tokens, places, vocabulary) if vocabulary.commitments else set()
        happens = _will_happen(sentence, tokens)
        causes = _cause_spans(sentence)
        others = _other_incident_spans(sentence)
        theirs = _apology_object_spans(sentence) + _empathy_spans(sentence) + \
            [m.span(1) for m in POSSESSOR.finditer(sentence)] + \
            [m.span(1) for m in _SUPPOSED_THING.finditer(sentence) if m.group(1).lower() not in _HARM]
        felt = _felt_spans(sentence, tokens) + _readers_doing_spans(sentence)
        channels = _REACHING.search(sentence) is not None
        runs: list[list[int]] = []
        for i, (a, b, word) in enumerate(tokens):
            lower = word.lower()
            if others and any(c <= a and b <= d for c, d in others):
                ok = _licensed(word, licensed, _NO_VOCABULARY, PLAIN) and lower not in _CAUSE_NEUTRAL
            elif causes and any(mark <= a and b <= c for mark, c, _ in causes):
                ok = True  # the words that say a cause follows: "due to", "caused by"
            elif causes and any(c <= a and b <= d for _, c, d in causes):
                ok = _licensed(word, caused, _NO_VOCABULARY, PLAIN) or lower in _CAUSE_NEUTRAL
            elif theirs and any(c <= a and b <= d for c, d in theirs):
                ok = True  # the customers' own things an apology names: "the disruption to your sales"
            elif felt and any(c <= a and b <= d for c, d in felt) and lower not in _HARM and \
                    not (a and word[0].isupper()):
                ok = True  # what an apology is for, a greeting, a sign-off: "sorry for interrupting your reading"
            elif lower in _PARTICLE_PLURALS and a and sentence[a - 1] in "-‑":
                ok = True  # "sign-ins": the compound's first word is read
            elif lower in _CHANNELS and _DECLARED_NEXT.match(sentence, b):
                ok = True  # a channel that names a declared contact: "or call +44 …", "our support line at …"
            elif pointed and any(c <= a and b <= d for c, d in pointed) and lower not in _HARM:
                ok = True  # what a declared contact holds: "Help articles are at help.chorenest.example"
            elif lower in _GO and _GO_TO_NAMED.match(sentence, b) and i + 2 < len(tokens) and \
                    _licensed(tokens[i + 2][2], licensed, _NO_VOCABULARY, PLAIN):
                ok = True  # "go to Help > Chat with us": where in the product, as the incident names it
            elif i in named:
                ok = True  # "Thanks for choosing Gutter Gurus" where the incident's address is guttergurus.example
            elif i in joined or i in when:
                ok = _licensed(word, licensed, _NO_VOCABULARY, PLAIN)
            elif i in happens and places[i] == PLAIN:
                ok = _licensed(word, licensed, _NO_VOCABULARY, PLAIN)  # "your score won't drop": the incident's to say
            elif lower == "let" and LET_KNOW in acted and _KNOW_AFTER.match(sentence, b):
                ok = True  # "we've let festivals know" where the incident says they were informed
            elif lower in _SWITCH and SWITCH_TO in licensed and _TO_AFTER.match(sentence, b):
                ok = True  # "switch to viewport-only captures" where the incident advises using them
            elif lower in _CALL and "phone" in licensed and _CALL_US.match(sentence, b):
                ok = True  # a declared phone number invites customers to call the company, not anyone else
            elif lower == "drop" and _A_LINE_AT.match(sentence, b):
                ok = True  # "drop the captain a line at <a declared contact>": write to it
            elif channels and lower in _CHANNELS:
                ok = _licensed(word, licensed, _NO_VOCABULARY, PLAIN)  # "or through live chat in your dashboard"
            elif a < opening and supposes and lower not in _HARM and not (a and word[0].isupper()):
                ok = True  # what the reader did, as the advice's condition supposes it: "If you paid the full fare …"
            elif (a < opening or cadence[0] <= a < cadence[1]) and lower in _WHEN:
                ok = True  # when the advice applies ("If an episode is still missing tomorrow, contact us") or
                # when the next update comes ("we'll update this page tomorrow morning")
            elif awaited[0] <= a < awaited[1] and lower in _BACK:
                ok = True  # what the next update waits for: "we'll update this page when the form is back"
            elif lower in _CLOCK_WORDS:
                ok = True  # a time of day ("just after midnight"): the numbers check reads it as 00:00
            elif lower in _MONTHS and not _near_digits(tokens, i):
                ok = stem(word) in licensed
            elif lower == "always" and is_negated(sentence, a):
                ok = True  # "bids aren't always showing straight away" says sometimes, no absolute
            elif lower == "ever" and (is_negated(sentence, a) or _NOTHING_DONE.search(sentence, max(0, a - 20), a)):
                ok = True  # "nothing was ever removed" stresses a denial, which is read as one
            elif lower == "never" and _past_never(sentence, tokens, i):
                ok = True  # what did not happen ("card balances were never changed"): the assurance reading's
            elif i == 0 and lower.endswith("ly") and sentence[b:].startswith(","):
                ok = True  # a sentence adverb that only frames it: "Unfortunately, ...", "Luckily, ..."
            elif covered[i]:
                ok = True
            else:
                read = (word, places[i])
                ok = seen.get(read)
                if ok is None:
                    ok = seen[read] = _licensed(word, done if places[i] == DONE else acted if places[i] == ACTION
                                                else licensed, vocabulary,
                                                places[i]) or (
                        places[i] == ADVICE and _modifier(word) and _licensed(word, licensed, vocabulary, PLAIN))
            if ok or _skipped(start + a, start + b, skip):
                continue
            if runs and _adjacent(tokens, runs[-1][-1], i, covered, sentence):
                runs[-1].append(i)
            else:
                runs.append([i])
        if runs:
            words = tuple((tokens[run[0]][0], tokens[run[-1]][1]) for run in runs)
            found.append(Unsupported(sentence, start, words, all(places[i] == DONE for run in runs for i in run)))
    return found


# Things named in one breath with the incident's own ("eSIM activations and number transfers fail", "skips
# and menu selections weren't saved") are named as the incident's too: a thing joined by "and" or "or" to
# one the incident names must be the incident's, whatever the vocabulary allows elsewhere. A verb and its
# object ("check your spam folder and mark our emails") is no such thing, nor are people ("sorry to the
# fans and organisers who were affected" names whom it addresses).
_DETERMINERS = frozenset("the a an our your their its his her this that these those some any all other "
                         "them it him".split())
_JOINED_WORDS = 3  # the longest name read after "and": "manual statement imports"


def _joined_to_incident(sentence: str, tokens, licensed: frozenset[str], covered: list[bool]) -> set[int]:
    """The tokens of each name joined by "and", "or" or a list's comma to a thing the incident names."""
    joined: set[int] = set()
    for k in range(1, len(tokens)):
        gap = sentence[tokens[k - 1][1] : tokens[k][0]].strip()
        if tokens[k][2].lower() in ("and", "or") and not gap:
            first = k + 1
        elif gap == ",":
            first = k  # a list: "invoices, bank payments and payroll"
        else:
            continue
        left = tokens[k - 1][2].lower()
        if not (_thing(left) and any(f in licensed for f in forms(left))):
            continue
        run, j = [], first
        while j < len(tokens) and len(run) < _JOINED_WORDS and (j == first or not _BREAK.search(
                sentence, tokens[j - 1][1], tokens[j][0])):
            word = tokens[j][2].lower()
            if word in _DETERMINERS and not run:
                j += 1
                continue
            if not _name_word(word) or (run and "VERB" in parts_of(word) and _plural(tokens[run[-1]][2].lower())):
                break  # "number transfers fail": the verb after a plural is what is said of it
            run.append(j)
            j += 1
        if not run or (j < len(tokens) and tokens[j][2].lower() in _DETERMINERS):
            continue  # a verb and its object: "and mark our emails"
        if gap == "," and not (j < len(tokens) and (tokens[j][2].lower() in ("and", "or") or
                                                    sentence[tokens[j - 1][1] : tokens[j][0]].strip() == ",")):
            continue  # a comma that opens a clause, not a list's next item
        head = tokens[run[-1]][2].lower()
        if _thing(head) and not covered[run[-1]] and not _CUSTOMERS.fullmatch(head):
            joined.update(run)
    return joined


_BREAK = re.compile(r"[,;:.!?()]")


def _spelled_together(sentence: str, tokens, licensed: frozenset[str]) -> set[int]:
    """Capitalised words, two or three in a row, that spell one word of the incident's ("Gutter Gurus" where
    its address is help@guttergurus.example, "Bean & Bell" where it is beanbell.example): a name written in
    parts."""
    found: set[int] = set()
    for run in _CAPITALISED_RUN.finditer(sentence):
        words = [(w.start(), w.group()) for w in _NAME_PART.finditer(run.group())]
        for i in range(len(words) - 1):
            for n in (2, 3):
                if i + n <= len(words) and stem("".join(w for _, w in words[i : i + n]).lower()) in licensed:
                    at = {run.start() + a for a, _ in words[i : i + n]}
                    found.update(j for j, (a, _, _) in enumerate(tokens) if a in at)
    return found


_CAPITALISED_RUN = re.compile(r"(?<![\w-])[A-Z][^\W\d_]*(?:(?: &)? [A-Z][^\W\d_]*)+(?![\w-])")
_NAME_PART = re.compile(r"[^\W\d_]+")


def _name_word(word: str) -> bool:
    """A word that may stand in a thing's name: a noun or an adjective, not a participle that opens
    what is said of it ("selections made between ...")."""
    parts = parts_of(word)
    if word in FUNCTION_WORDS or _has_digit(word) or not parts & {"NOUN", "ADJ"}:
        return False
    return "NOUN" in parts or not any(is_inflection(word, v, t) for v in verbs_of(word) for t in ("VBN", "VBD"))


def _plural(word: str) -> bool:
    return word.endswith("s") and "NOUN" in parts_of(word) and not word.endswith("ss")


def _thing(word: str) -> bool:
    """A noun that names a thing: a plural, or a noun that is no verb."""
    parts = parts_of(word)
    return "NOUN" in parts and (word.endswith("s") or "VERB" not in parts) and word not in FUNCTION_WORDS


# "Everyone who turns up will get a lane", "your score won't drop because of it", "you won't miss another
# page", "they will be waiting on your desk when you arrive": what will happen to customers and their things
# is the incident's to say, so the verb of such a statement is read against the incident alone, not the
# vocabulary. What the company says it will do is read as its actions are (_commitment_spans); a condition
# ("if a car won't open") or a reason ("as that won't speed it up") pictures what may happen.
_WILL_HAPPEN = re.compile(r"(?:['’]ll|\s(?:will(?:\s+not)?|won['’]t))\s+"
                          r"(?:(?:still|also|then|all|now|soon|always|automatically|even|never|not|each|both)\s+)*"
                          r"(?P<be>(?:be|have\s+been)\s+)?(?P<verb>[a-z]+)\b", re.IGNORECASE)
# Verbs that say little by themselves ("you'll see", "you'll get", "will follow", "the team will help") or
# that a thing goes on as it was ("will continue as normal", "will remain available"): the words around them
# are read as usual. Not where they say what is done to customers ("you'll be given the pitch you asked for").
_LIGHT = frozenset("be have do get make go come see take give keep let know use bring follow help find "
                   "continue remain stay work carry".split())
# The word before "will" where it names no customers' thing: the company ("we", "our"), what an advice does
# ("it", "this", "which"), or a joined clause whose subject went before ("we'll check and won't …"), or the
# company's posts ("updates will appear at …").
_NOT_HAPPENING = frozenset("we i our it this that which there and or but then so updates".split())
# A clause that pictures what may happen: a condition or time (the hedge rule's words) or a reason.
_SUPPOSED = re.compile(r"\b(?:" + "|".join(sorted(SUBORDINATORS)) + r"|as|because|so\s+that|in\s+case)\b",
                       re.IGNORECASE)


def _will_happen(sentence: str, tokens) -> set[int]:
    """The token of each verb that says what will happen to customers or their things."""
    found: set[int] = set()
    starts: dict[int, int] = {}
    for m in _WILL_HAPPEN.finditer(sentence):
        subject = sentence[: m.start()].split()[-1:] or [""]
        if subject[0].lower().rstrip(",") in _NOT_HAPPENING or _SUPPOSED.search(clause_before(sentence, m.start())):
            continue
        verb = m.group("verb").lower()
        lemmas = verbs_of(verb)
        if not lemmas or (set(lemmas) & _LIGHT and not m.group("be")) or \
                (m.group("be") and not any(is_inflection(verb, v, t) for v in lemmas for t in ("VBN", "VBG"))):
            continue  # "it'll be back", "will be ready": no verb of what is done
        starts = starts or {a: i for i, (a, _, _) in enumerate(tokens)}
        if (i := starts.get(m.start("verb"))) is not None:
            found.add(i)
    return found


# When the company says it will do something to customers' things ("we'll refund the difference today",
# "your badges will be reissued tomorrow"), the day is the incident's to give, as the time of a fix is.
# Its ordinary work ("we will keep working on this today") names the day of its own effort.
_DAYS = frozenset("today tonight tomorrow weekend".split())


def _work_times(sentence: str, tokens, places: list[str], vocabulary: Vocabulary) -> set[int]:
    """The tokens of a day named in the clause of a promise (or of work done to customers) whose verb is
    none of the company's ordinary work."""
    found: set[int] = set()
    for i, place in enumerate(places):
        if place not in (ACTION, DONE) or any(f in vocabulary.action_words for f in forms(tokens[i][2].lower())):
            continue
        for j in range(i + 1, len(tokens)):
            if _BREAK.search(sentence, tokens[j - 1][1], tokens[j][0]) or places[j] in (ACTION, DONE):
                break
            if tokens[j][2].lower() in _DAYS:
                found.add(j)
    return found


# In advice, a word that only modifies the instruction ("you can simply retry", "try again a little
# later", "the badges you deactivated this morning") gives no instruction of its own: an adjective or an
# adverb, a time of day or a length of time ("wait a few minutes"), is read as in plain description. The
# instruction's verb and its object are still the advice vocabulary's or the incident's.
_TIMES = frozenset("morning afternoon evening tonight today noon midday midnight minute minutes hour hours moment "
                   "moments while meantime meanwhile".split())


_CLOCK_WORDS = frozenset("noon midday midnight".split())  # times of day the numbers check reads


# ... and in the condition that opens advice, a time only says when the advice applies: it promises nothing.
_WHEN = _TIMES | frozenset("tomorrow later day days week weeks month months".split())


# The recovery the next update waits for ("we'll update this page when the form is back", "… once
# everything is back up and running") claims nothing of now.
_AWAITED = re.compile(r"\s+(?:(?:here|again|you|everyone|this\s+page)\s+)?(?:when|once|as\s+soon\s+as)\s",
                      re.IGNORECASE)
_BACK = frozenset("back again up running restored fixed resolved live online".split())


def _awaited_span(sentence: str, after: int) -> tuple[int, int]:
    """The clause after a promise of the next update that says what it waits for, or (0, 0)."""
    if not (m := _AWAITED.match(sentence, after)):
        return 0, 0
    end = _CAUSE_END.search(sentence, m.end())
    return m.end(), end.start() if end else len(sentence)


# A condition that opens advice by what the reader did ("If you paid the full fare for a trip during the
# outage, keep your receipt"): it pictures the reader, and what it names is theirs.
# ... or is doing: "If you're buying alcohol or other age-restricted items, please use a staffed till".
_SUPPOSES_READER = re.compile(r"\s*(?:if|when|once)\s+you(?:['’]ve|\s+have|\s+had|(['’]re|\s+are))?\s+"
                              r"(?:already\s+|just\s+)?([a-z]+)\b", re.IGNORECASE)
# ... or on what the reader sees or has: "If your usage dashboard still shows gaps, …", "If you still see an old
# balance, …", "If your unit is elsewhere, …".
_READER_SEES = re.compile(r"\s*(?:if|when)\s+(?:you\s+(?:still\s+)?see|your\s+(?:[\w-]+\s+){1,3}?(?:still\s+)?"
                          r"(?:shows?|says|displays|reads|looks|is|are|was|were))\b", re.IGNORECASE)


def _supposes_reader(sentence: str) -> bool:
    """Whether the sentence opens with a condition on what the reader did, is doing, sees or has ("If you paid
    …", "If you've booked …", "If you're buying …", "If your dashboard still shows gaps …")."""
    if _READER_SEES.match(sentence):
        return True
    m = _SUPPOSES_READER.match(sentence)
    verb = m.group(2).lower() if m else ""
    tags = ("VBG",) if m and m.group(1) else ("VBD", "VBN")
    return bool(verb) and verb not in _NOT_IMPERATIVE and \
        any(is_inflection(verb, lemma, tag) for lemma in verbs_of(verb) for tag in tags)


_CALL = frozenset("call calling ring ringing phone phoning".split())  # "by calling us on ..." too
# How customers may reach the company is the incident's to declare (its contacts, an approved action):
# in a sentence that tells them how to reach it, the channel's word ("or through live chat", "message us
# on WhatsApp") is read with the incident's words alone.
_REACHING = re.compile(
    led_by("acghmrstw", r"\b(?:contact|reach|get\s+in\s+touch|get\s+help|talk\s+to|speak\s+(?:to|with)|"
                        r"write\s+to|message\s+us|call(?:ing)?\s+(?:us|our)|(?:support|help|assistance)\s+is\s+available|"
                        r"available\s+(?:at|on|via|through|by)|can\s+be\s+reached|reply\s+to)\b"), re.IGNORECASE)
# A declared contact is read as blank space (contacts.prose): "call +1-555-0142", "email us at …".
# "… call customer support on …", "… ring the harbour office on …": whom, in up to four words, then the contact.
_DECLARED_NEXT = re.compile(r"(?:\s+(?:us|our\s+\w+))?(?:\s+(?:at|on|via|to|using))?\s{3,}"
                            r"|\s+(?:[\w’'-]+\s+){1,4}?(?:at|on|via)\s{3,}", re.IGNORECASE)
_CHANNELS = frozenset("chat livechat messenger whatsapp twitter facebook instagram linkedin sms texting email e-mail "
                      "emailing phone telephone call calling dm dms forum forums community social line lines hotline "
                      "helpline ring ringing phoning portal reply replying ticket".split())
_CALL_US = re.compile(r"\s+(?:us|our\b|\+?\d)", re.IGNORECASE)
_A_LINE_AT = re.compile(r"\s+(?:[\w’'-]+\s+){1,3}?a\s+line\s+(?:at|on|via|to)\s{3,}", re.IGNORECASE)
# What a declared contact holds, said as where it is: "Help articles are at help.chorenest.example", "our
# status page is available at …" (the contact itself is read as blank space).
_WHERE_TO_FIND = re.compile(r"(?:^|(?<=[.;:!?,]\s))\s*([^.;:!?,]{1,40}?)\s+(?:is|are)\s+(?:also\s+|now\s+)?"
                            r"(?:available\s+)?(?:at|on|via)\s{3,}", re.IGNORECASE)
# ... or as what customers read there: "you can read how to check your statement at https://…".
_READ_THERE = re.compile(r"\b((?:read|find\s+out|learn)\s+(?:more\s+)?(?:about|how|what|why|where|when)\b"
                         r"[^.;:!?,]{1,60}?)\s+(?:at|on|via|in)\s{3,}", re.IGNORECASE)
# ... and a place in the product the incident names, gone to: "go to Help > Chat with us".
_GO = frozenset("go head navigate".split())
_GO_TO_NAMED = re.compile(r"\s+to\s+(?-i:[A-Z])")


def addresses_us(text: str, at: int) -> bool:
    """Whether the words at ``at`` name the company or one of its contacts: "us", "our support line", a
    number, or a contact the checks read (masked in :func:`contacts.prose`)."""
    return _CALL_US.match(text, at) is not None or _DECLARED_NEXT.match(text, at) is not None


def _past_never(sentence: str, tokens, i: int) -> bool:
    """Whether "never" at token ``i`` tells of the past ("were never changed", "never made it to the
    screens"), not of the future ("will never happen again")."""
    before = tokens[i - 1][2].lower() if i else ""
    after = tokens[i + 1][2].lower() if i + 1 < len(tokens) else ""
    if _FUTURE.search(sentence, 0, tokens[i][0]) or after in ("again", "be"):
        return False
    return before in ("was", "were", "had", "has", "have", "did") or (
        bool(after) and after != "been" and any(is_inflection(after, lemma, "VBD") for lemma in verbs_of(after)))


def _modifier(word: str) -> bool:
    lower = word.lower()
    parts = parts_of(lower)
    return lower in _TIMES or (bool(parts) and parts <= {"ADJ", "ADV"})


def _near_digits(tokens, i: int) -> bool:
    """Whether a number stands within two words of token ``i`` ("23 November", "November 2026")."""
    return any(_has_digit(word) for _, _, word in tokens[max(0, i - 2) : i + 3])


def _places(sentence: str, tokens, vocabulary: Vocabulary) -> tuple[list[str], int]:
    """Where each token stands: in advice to customers (after the condition that opens it), in what
    the company says it did, does or will do, or in plain description; and where the condition that
    opens an instruction ends ("If it is still missing tomorrow, contact us"), or 0 where the sentence
    opens with none or gives no instruction after it."""
    places = [PLAIN] * len(tokens)
    condition = _condition_end(sentence)
    imperative = _imperative_after_condition(sentence, condition)
    if not condition and (just := _JUST.match(sentence)):
        imperative = _imperative_after_condition(sentence, just.end())  # "Just bring your car to any store"
    said = _ADVICE.search(sentence)
    advice = said or imperative
    opening = 0
    if condition and ((said and said.start() >= condition) or _ADVICE.search(sentence, condition) or imperative):
        opening = condition
    start = 0
    while advice:
        # From the clause that gives it: "Checks are being processed, and applicants don't need to resubmit"
        # reads only its second clause as advice; an opening condition is no advice either.
        clause = max((m.end() for m in _ADVICE_CLAUSE.finditer(sentence, start, advice.start())), default=start)
        begin = max(condition, clause)
        # ... up to where the company speaks again ("email support and we will look at prioritising it") or
        # a new clause begins ("there's nothing you need to do; your session will continue as normal").
        ours = _OURS.search(sentence, begin)
        semicolon = sentence.find(";", advice.end())
        reason = _REASON.search(sentence, advice.end())  # "..., as this could create duplicates" says why
        result = _RESULT.search(sentence, advice.end())
        finish = min(ours.start() if ours else len(sentence), semicolon if semicolon >= 0 else len(sentence),
                     reason.start() if reason else len(sentence), result.start() if result else len(sentence))
        # "Please note that ..." and "please be aware ..." frame a statement: it is read as one.
        if FRAME.match(sentence, begin):
            finish = begin
        confirmed = _confirmed_spans(sentence, begin)
        places = [ADVICE if begin <= a < finish and not _described(sentence, a, begin) and
                  not any(c <= a < d for c, d in confirmed) else place
                  for (a, _, _), place in zip(tokens, places, strict=True)]
        # The clause after a semicolon may advise again: "...to get your refund; if you'd rather not wait,
        # you can dispute the charge with your bank".
        if semicolon < 0 or finish != semicolon:
            break
        start = semicolon + 1
        advice = _ADVICE.search(sentence, start)
    if vocabulary.commitments:
        for begin, finish, done in _commitment_spans(sentence):
            for i, (a, b, _) in enumerate(tokens):
                if begin <= a and b <= finish and places[i] == PLAIN:
                    places[i] = DONE if done else ACTION
    return places, opening


# What a sentence gives as the cause ("caused by ...", "because ...", "due to ...", "the root cause was
# ..."): only the incident can say why it happened, so the words of a cause are licensed by the incident
# alone, not by the vocabulary of ordinary update language. "The delays were caused by customers sending
# large files" stops even though each of its words is ordinary; "caused by a backlog in the dispatch
# queue" passes where the incident's cause says so. A cause may be given as a time ("errors started after
# our latest release"). Words that only point back at the incident itself
# ("due to this incident", "because of the outage") stay neutral.
_CAUSE_MARK = re.compile(
    led_by(
        "abcdefhiloprst",
        r"\b(?:caused\s+by|due\s+to|because(?:\s+of)?|as\s+a\s+(?:direct\s+)?result\s+of|(?:the\s+)?result\s+of|"
        # A load, or a fault somewhere, named as what brought it on: "overloaded by a spike in sign-ups",
        # "this looks like an issue with our cloud provider".
        r"(?:overloaded|overwhelmed|swamped|flooded|saturated)\s+by|"
        r"(?:looks|appears|seems)\s+(?:like|to\s+be)\s+(?:an?\s+)?(?:issue|problem|fault|outage|bug|failure)\s+"
        r"(?:with|at|in|on)|"
        # "the problem came from last night's update"
        r"(?:issues?|problems?|errors?|faults?|outages?|failures?|delays?|disruptions?)\s+"
        r"(?:came|comes|resulted|results)\s+from|"
        # "the problem is with your connection rather than our servers"
        r"(?:issue|problem|fault)\s+(?:is|was|lies|lay)\s+(?:with|in)|"
        r"triggered\s+by|stemm(?:ed|ing|s)\s+from|"
        # "the announcement was delayed by an unusually large number of submissions" (not "by 20 minutes")
        r"(?:delayed|slowed(?:\s+down)?|held\s+up|disrupted|interrupted)\s+by(?=\s+(?!\d|(?:about|around|up\s+to|roughly|"
        r"approximately|nearly|almost|just|some|several|more|less|over|under|at\s+(?:most|least)|as\s+(?:much|long)|"
        r"between|a\s+(?:few|median|mean|maximum)|an?\s+(?:average|hour|minute|day|week|extra|further|additional)|"
        r"one|two|three|four|five|ten|fifteen|twenty|thirty|half|median|average)\b))|traced\s+(?:(?:this|it|the\s+\w+)\s+)?(?:back\s+)?to|"
        # a guess is a cause too: "which appears to be linked to this week's Android update"
        r"(?:appears?|seems?|looks?)\s+to\s+be\s+(?:linked|related|connected|tied|due)\s+to|originat(?:ed|ing|es)\s+(?:in|from|with|at)|"
        r"brought\s+on\s+by|(?:root\s+)?cause\s+(?:was|is|has\s+been|turned\s+out\s+to\s+be|appears\s+to\s+be)|"
        r"(?:started|began|begun|appeared|occurred|happened)\s+(?:right\s+|shortly\s+|soon\s+|just\s+)?(?:after|following))\s+",
    ),
    re.IGNORECASE,
)
# What customers are told they will get ("you will receive …", "each affected team will also get …",
# "customers will be sent …") is read the same way: a promise to customers is the incident's to make.
_PROMISE_MARK = re.compile(
    led_by(
        "acetuy",
        r"\b(?:you|customers|users|they|(?:each|every|all)(?:\s+\w+){1,2}?|affected\s+\w+)\s+"
        r"(?:will|['’]ll|are\s+going\s+to|shall|can\s+expect\s+to)\s+(?:also\s+|then\s+|soon\s+)?"
        r"(?:receive|get|be\s+(?:given|sent|offered|issued|emailed|credited|provided\s+with))\s+",
    ),
    re.IGNORECASE,
)
# What the company says it did, does or will do ("we have re-run your builds", "our team will email
# every account", "failed uploads will be sent automatically", "your renewals have been turned off"):
# an action on customers' things is the incident's to announce (an approved action, a fact). The verb
# that says what is done is read with the terms that may stand there (Term.action: investigating,
# fixing, monitoring, posting updates, apologizing), not with the whole vocabulary; what it is done to
# is read as usual ("we are investigating reports of slow exports").
STAFF = frozenset("team teams engineer engineers staff specialists experts".split())  # the company's own people
_OUR_STAFF = "(?:" + "|".join(sorted(STAFF, key=len, reverse=True)) + ")"
_COMMITMENT_MARK = re.compile(
    led_by(
        "ghosw'’",
        rf"\b(?:we|our\s+(?:[\w-]+\s+){{0,2}}?{_OUR_STAFF})(?:['’](?:ve|re|ll|d))?\s+"
        r"|(?:\b(?:will|shall|going\s+to)|['’]ll)\s+"
        r"|\b(?:has|have|had)\s+(?:now\s+|also\s+|already\s+|just\s+|since\s+)?been\s+",
    ),
    re.IGNORECASE,
)
# Between the mark and the verb: auxiliaries, negations and adverbs ("we have now also temporarily").
_BEFORE_VERB = re.compile(r"(?:(?:[\w’']+ly|not|never|also|now|then|still|just|already|again|soon|since|even|"
                          r"is|are|was|were|be|been|being|have|has|had|will|would|do|does|did|can|could|cannot|"
                          r"shall|should|may|might|must|to|[a-z]+n[’']t)\s+)*", re.IGNORECASE)
_WORKS = re.compile(r"\s+(?:normally|as\s+(?:usual|normal|expected))\b", re.IGNORECASE)
_HELD_UP = re.compile(r"(?:held|slowed|backed|tied|bogged)\s+(?:up|down)\b", re.IGNORECASE)
_BE = frozenset("is are was were be been being am".split())
_HAVE = frozenset("have has had".split())
_NEGATION = re.compile(r"\b(?:not|never|cannot)\b|n[’']t\b", re.IGNORECASE)
_NOTHING_DONE = re.compile(r"\b(?:no|nothing|none|neither|nor)\b", re.IGNORECASE)
_YOU_BEFORE = re.compile(r"\byou\s*$", re.IGNORECASE)
_UPDATES_BEFORE = re.compile(r"\bupdates\s*$", re.IGNORECASE)


def _commitment_spans(sentence: str) -> list[tuple[int, int, bool]]:
    """The verb of each action or promise of the company's in the sentence (its start, its end, and
    whether it says work done to customers). A negated one ("we cannot guarantee a time", "we have not
    found the cause") promises nothing."""
    spans = []
    for m in _COMMITMENT_MARK.finditer(sentence):
        if _YOU_BEFORE.search(sentence, 0, m.start()):
            continue  # "you'll see your refund listed": customers' doing (a promise to them is _PROMISE_MARK's)
        if _UPDATES_BEFORE.search(sentence, 0, m.start()):
            continue  # "updates will appear at …": where the company posts, no work done
        between = _BEFORE_VERB.match(sentence, m.end())
        if _NEGATION.search(m.group() + between.group()):
            continue
        clause = max((c.end() for c in _ADVICE_CLAUSE.finditer(sentence, 0, m.start())), default=0)
        if _NOTHING_DONE.search(sentence, clause, m.start()):
            continue  # "nothing has been dropped", "no logs were lost": what was not done is no action
        verb = _TOKEN.match(sentence, between.end())
        if verb and verb.group().lower() == "re" and sentence[verb.end():verb.end() + 1] in "-‑":
            verb = _TOKEN.match(sentence, verb.end() + 1)  # "re-run": the verb is "run"
        said = re.sub(r"['’]ve\b", " have", m.group() + between.group())  # "we've added" is "we have added"
        auxiliaries = [w.lower() for w in said.split() if w.lower() in _BE | _HAVE]
        if verb and (_WORKS.match(sentence, verb.end()) or _HELD_UP.match(sentence, verb.start())):
            continue  # "emails have been sent normally since": a service working, no work done; "visits have been
            # held up": a delay
        if verb and auxiliaries[-1:] == ["be"] and verb.group().lower() in _OUTCOMES and _FUTURE.search(said) and \
                _THEIRS.search(sentence, clause, m.start()):
            spans.append((*verb.span(), True))  # "your cake will be ready on the day you chose": a promise
        elif verb and _verb(verb.group(), auxiliaries[-1] if auxiliaries else ""):
            spans.append((*verb.span(), _done_to_customers(sentence, clause, m.start(), verb, auxiliaries)
                          or _promised_on_their_things(said, verb, sentence, sentence[clause : m.start()])))
    return spans


def _done_to_customers(sentence: str, clause: int, mark: int, verb: re.Match, auxiliaries: list[str]) -> bool:
    """Whether the verb says work done to customers: "we have notified every affected customer" (the
    customers after it), "affected accounts have been credited" (before it, in its clause); not what was
    done to the incident itself ("the issue affecting guest ticket requests has been resolved")."""
    if not set(auxiliaries) & _HAVE or verb.group().lower() in _NOT_DONE_TO:
        return False
    if _THE_ISSUE.match(_SUBJECT_SPLIT.split(sentence[clause:mark])[-1]):
        return False
    if verb.group().lower() in _TOLD:  # whoever was told ("your physiotherapist has been notified"), but our own
        told = sentence[clause : verb.start()] if auxiliaries[-1] == "been" else sentence[verb.end() : verb.end() + 40]
        return not _OUR_PEOPLE.match(told.strip())
    if auxiliaries[-1] == "been":  # ... or their things: "your orders", "requests that were not saved"
        return _CUSTOMERS.search(sentence, clause, mark) is not None or \
            _THEIR_OWN.search(sentence, clause, mark) is not None
    after = verb.end()
    return _TO_CUSTOMERS.match(sentence, after) is not None or _GIVEN_TO_CUSTOMERS.match(sentence, after) is not None


_YOUR_THING = r"\byour\s+[^\W\d_]"  # "your orders": the customers' things, as the readings below name them
_THEIR_OWN = re.compile(_YOUR_THING + r"|\b(?:that|which)\s+(?:were|was|had)\s+not\s+[a-z]+ed\b", re.IGNORECASE)
_SUBJECT_SPLIT = re.compile(r"[,;:]|\b(?:and|but)\b", re.IGNORECASE)  # the last clause before the verb has its subject
# The subject names the problem itself, however many words qualify it ("the Year 9 parents' evening booking
# problem on Tuesday evening has been fixed"), not a thing a phrase ties to it ("the refunds for customers
# affected by the problem have been made").
_THE_ISSUE = re.compile(r"\s*(?:the|this|that)\s+(?:(?!(?:for|by|of|to|with|from|in|on|at|after|that|which|who)\s)"
                        r"[\w'’-]+\s+){0,6}?(?:issue|problem|incident|outage|disruption|error|errors|fault|bug|glitch)\b",
                        re.IGNORECASE)


def _promised_on_their_things(said: str, verb: re.Match, sentence: str, before: str = "") -> bool:
    """Whether the verb promises work on customers' own things: "we'll correct your matches", "we will
    restore your settings", "our support team can restore them if you email us", "your order will be held
    for an extra hour", "applications delayed by the outage will be prioritised" (``before``: the clause
    before the promise). What it promises customers in general ("we'll keep you posted") is not, nor what
    its people can look at for them ("we'll check your account")."""
    word = verb.group().lower()
    if word in _NOT_DONE_TO:
        return False
    future = _FUTURE.search(said) is not None
    if future and _ENDS_IN_BE.search(said) and _THEIRS.search(before):
        return True
    if future and word not in _LOOKED_AT | _KEEP_POSTED and _EACH_OF_THEM.match(sentence, verb.end()):
        return True
    return (future or _CAN.search(said) is not None) and word not in _LOOKED_AT and \
        _THEIR_THINGS.match(sentence, verb.end()) is not None



_FUTURE = re.compile(r"\b(?:will|shall|going\s+to)\b|['’]ll\b", re.IGNORECASE)
# What a promise says customers' things will be, where no verb says what is done to them.
_OUTCOMES = frozenset("ready available accessible visible".split())
# ... and a fact or a key message that says what they will be states it ("Your order … will be ready at the time
# shown" licenses "your bake will be ready then").
_STATED_OUTCOME = re.compile(r"\b(?:be|is|are|was|were|been)\s+(?:now\s+|still\s+|already\s+|all\s+)?"
                             rf"({'|'.join(sorted(_OUTCOMES))})\b", re.IGNORECASE)
_CAN = re.compile(r"\bcan\b", re.IGNORECASE)
_ENDS_IN_BE = re.compile(r"\bbe\s*$", re.IGNORECASE)
# ... the customers' things: theirs, or what the incident hit ("applications delayed by the outage")
_THEIRS = re.compile(_YOUR_THING + r"|\b(?:affected|impacted|delayed|failed|missed|stuck)\s+[^\W\d_]"
                     r"|\b[^\W\d_]+\s+(?:delayed|affected|impacted|hit)\s+by\b", re.IGNORECASE)
# ... what its people can or will do for them is service, not work promised ("our phone team can take your
# claim", "we'll check your account")
_LOOKED_AT = frozenset("see check confirm help answer assist look review investigate find take handle".split())
_THEIR_THINGS = re.compile(r"(?:\s+(?:back|up|out|over|off))?\s+(?:(?:all|every|each|any|some)\s+(?:of\s+)?)?your\s+"
                           r"[^\W\d_]|\s+(?:it|them|this|that|these|those)\s+(?:(?:\w+\s+){0,2}for\s+you|on\s+your\s+"
                           r"behalf|if\s+you)\b",
                           re.IGNORECASE)


# The people a company serves and speaks to (each also in the plural): one list for every reading that
# asks whether words name them.
_PEOPLE = ("customer user account subscriber member merchant rider driver owner admin administrator team "
           "organisation organization client shopper reader player patient student recipient learner fan organiser "
           "organizer employee sender developer seller buyer guest partner parent manager").split()
_CUSTOMER = r"(?:you|people|staff|(?:" + "|".join(_PEOPLE) + r")s?)\b"
# Work the company says it has done to its customers ("we have notified every affected customer", "we've
# credited your account") is the incident's to record: its verb is read with the incident's words alone,
# not with the vocabulary's (which lets "we will notify you" pass). What the company saw, heard or said
# to customers is no work done to them.
_BEFORE_CUSTOMERS = r"(?:(?:all|every|each|the|our|your|affected|impacted|of|those|these)\s+){0,3}"
_TO_CUSTOMERS = re.compile(r"\s+" + _BEFORE_CUSTOMERS + _CUSTOMER, re.IGNORECASE)
_CUSTOMERS = re.compile(r"\b" + _CUSTOMER, re.IGNORECASE)
# ... or promised to each of them: "we will phone each affected patient", "we'll email every affected seller"
# (keeping them posted is the update's promise: "we'll keep all customers updated", "we'll let everyone know").
_KEEP_POSTED = frozenset("keep let update notify inform tell".split())
_EACH_OF_THEM = re.compile(r"\s+(?:(?:all|every|each|of|the|our|those)\s+){1,3}(?:affected\s+|impacted\s+)?"
                           + _CUSTOMER, re.IGNORECASE)
# ... or given to them: "we've added a free ride to every affected account", "issued a credit to your account".
_GIVEN_TO_CUSTOMERS = re.compile(r"[^,;:.!?]{1,40}?\sto\s+" + _BEFORE_CUSTOMERS + _CUSTOMER, re.IGNORECASE)
_NOT_DONE_TO = frozenset("seen heard noticed observed received apologised apologized thanked".split())
# That someone has been told is work done, whoever it was ("we will notify you" promises an update), unless
# it is the company's own people ("our on-call team has been alerted").
_TOLD = frozenset("notified informed alerted told contacted emailed messaged warned".split())
_OUR_PEOPLE = re.compile(rf"(?:our|the)\s+(?:[\w-]+\s+){{0,2}}?(?:{_OUR_STAFF}|people|colleagues)\b", re.IGNORECASE)


def says_company_action(sentence: str, words: str) -> bool:
    """Whether ``words`` stand in ``sentence`` where the company says what it did, does or will do ("we
    have <b>re-sent</b> the invoices"): a vocabulary term mined from there needs its ``action`` flag."""
    at = sentence.lower().find(words.lower())
    return at >= 0 and any(a <= at < b for a, b, _done in _commitment_spans(sentence))


@functools.lru_cache(maxsize=16384)
def _verb(word: str, auxiliary: str) -> bool:
    """Whether the word after the mark says what is done: a verb in the form its auxiliary asks for ("have
    been re-sent", "are re-running", "we rolled back"), or a word no dictionary knows ("reprovisioned");
    not an adjective ("we're sorry", "it will be slower", "payments have been slow") and, after "has
    been", not an "-ing" form ("functions have been running normally" describes, it does not act)."""
    word = word.lower()
    if not lemmas_of(word):
        return True
    lemmas = verbs_of(word)
    participle = any(is_inflection(word, lemma, "VBN") for lemma in lemmas)
    if auxiliary == "been" or auxiliary in _HAVE:
        return participle
    if auxiliary in _BE:
        return participle or (bool(lemmas) and word.endswith("ing"))
    return bool(lemmas)


_CAUSE_END = re.compile(r"[,;:.!?()]|\s(?:and|but|so|while|which|when|whenever|if|until|once|after|before)\s",
                        re.IGNORECASE)
# After "… by" (a participle: "triggered by", "caused by"), the sentence's own verb also ends it: "deploys
# triggered by git push were starting late" gives no cause from "were" on; "a change that was rolled out"
# goes on. "Because some couriers had turned off …" gives its cause a verb of its own.
_BY_CAUSE_END = re.compile(
    _CAUSE_END.pattern + r"|(?<!\bthat)(?<!\bwhich)(?<!\bwho)\s(?:is|are|was|were|has|have|had)\s", re.IGNORECASE)
_CAUSE_NEUTRAL = frozenset(
    "becoming became being following "  # grammar inside a cause: "our sync service becoming overloaded following ..."
    "get gets got getting gotten "  # a light verb: "because you didn't get a reminder" is the reminder's cause
    "go goes went gone going come comes came coming "  # ... "because alerts didn't go out", "came in with"
    "incident incidents issue issues outage outages problem problems disruption disruptions degradation "
    "ongoing current earlier above same error errors timeout timeouts failure failures warning warnings "
    # the impact itself, given as the reason for advice: "because home phone services are down, ..."
    "down offline unavailable running technical glitch introduced".split()
)


# Another incident ("the same problem we had in March", "like the previous outage", "as last time"):
# the incident knows nothing of others, so these words are licensed by the incident alone.
_OTHER_INCIDENT = re.compile(
    led_by(
        "ahlopst",
        r"\b(?:the\s+)?(?:same|similar)\s+(?:\w+\s+)?(?:issue|problem|incident|outage|disruption|error|bug)s?\s+"
        r"(?:as|we|that|to|like)\b|\b(?:previous|prior|past|last)\s+(?:\w+\s+)?(?:incident|outage|disruption)s?\b"
        r"|\b(?:as|like)\s+last\s+time\b|\b(?:happened|occurred)\s+before\b",
    ),
    re.IGNORECASE,
)


# What an apology names of the customers' own ("we're sorry for the disruption to your sales", "… this
# caused to your integrations") is their world, not a statement about the incident: up to three words
# after "to your", to the first word of grammar.
# Whom it caused trouble is theirs too: "sorry for the confusion this caused students and families".
_APOLOGY_OBJECT = re.compile(
    r"\b(?:sorry|apologi[sz]e|apologies)\b[^.;:!?]{0,40}?\b(?:disruption|inconvenience|trouble|impact|"
    r"interruption|delay|confusion|frustration|worry|stress)s?(?:"
    r"(?:\s+(?:this|it)\s+(?:has\s+|may\s+have\s+)?(?:caused|is\s+causing))?\s+(?:to|for|with)\s+(?:your|their)\s+"
    r"|\s+(?:this|it)\s+(?:has\s+|may\s+have\s+)?(?:caused|is\s+causing)\s+)"
    r"((?:[\w’'-]+\s+){0,3}[\w’'-]+)",
    re.IGNORECASE,
)


# Whose thing a text names on the reader's side ("your child's stored sample", "your team's dashboards"):
# the reader's own, as the apology's objects are; what is said of the thing is read as ever.
POSSESSOR = re.compile(r"\byour\s+([^\W\d_]+)['’]s\b", re.IGNORECASE)
# ... and the reader's thing a condition supposes ("If your workloads saw failed requests, retry them", "if
# your integration does not retry failed writes"): a supposition states nothing of it. Outside a condition
# ("your treatment won't be affected", "your monthly minutes") it is read as ever: promises about the
# reader's things are where the risks are.
_SUPPOSED_THING = re.compile(r"\b(?:if|when|whether|while|unless)\s+(?:[\w’'-]+\s+){0,3}?your\s+([^\W\d_]+)\b(?!['’])",
                             re.IGNORECASE)


def _apology_object_spans(sentence: str) -> list[tuple[int, int]]:
    """The customers' things an apology names, each to the first word of grammar after it."""
    spans = []
    for m in _APOLOGY_OBJECT.finditer(sentence):
        end = m.start(1)
        for w in re.finditer(r"[\w’'-]+", m.group(1)):
            if w.group().lower() in FUNCTION_WORDS and w.group().lower() not in ("and", "or"):
                break
            end = m.start(1) + w.end()
        spans.append((m.start(1), end))
    return spans


# What the company says it understands of its customers' world ("we know how much families rely on these
# controls", "we know many of you run production workloads", "we understand timing matters for your
# campaigns", "we know it's nerve-racking when a confirmation doesn't show up", "we know you're keen to cast
# on") is theirs too, to the end of its clause. "We know that ..." stays a statement to read.
_EMPATHY = re.compile(
    r"\bwe\s+(?:know|understand|realise|realize|recognise|recognize|appreciate)\s+"
    r"(?:how\s+(?:much|important|frustrating|disruptive|stressful|inconvenient|annoying|upsetting|worrying|"
    r"difficult|hard|critical|vital)\b|(?:that\s+)?(?:so\s+)?(?:many|most|some|a\s+lot|lots)\s+of\s+you\b|"
    r"(?=(?:it['’]s|it\s+is|it\s+can\s+be|(?:[\w’'-]+\s+){1,10}?(?:is|are|can\s+be))\s+(?:so\s+|really\s+|very\s+)?"
    r"(?:frustrating|stressful|worrying|nerve-racking|nerve-wracking|upsetting|annoying|disappointing|inconvenient|"
    r"confusing|disruptive|alarming|a\s+(?:real\s+)?(?:pain|hassle|nuisance|headache))\b)|"
    r"(?=you['’]re\s+(?:keen|eager|excited|looking\s+forward)\b|you\s+can['’]t\s+wait\b)|"
    r"(?=(?:[\w’'-]+\s+){1,4}(?:matters?|is\s+(?:important|critical|vital|busy|hectic|time-sensitive|urgent|precious|"
    r"a\s+big\s+(?:one|day|deal)|an?\s+(?:critical|important|busy|hectic|big|key)\s+(?:day|time|week|month|moment))|"
    r"are\s+(?:important|critical|vital|busy|hectic|time-sensitive|urgent|precious)|"
    r"(?:can\s+)?means?\s+a\s+lot)\b))",
    re.IGNORECASE,
)


# What an apology is for ("sorry for interrupting your reading tonight", "sorry for the late paper", "we
# apologise for the disruption on a busy trading morning"), what a thank-you is for ("thanks for travelling
# with us"), whom a greeting
# addresses ("Hey adventurers,") and what a sign-off wishes ("enjoy your night!", "happy knitting", "see
# you on the slopes") are the customers' world as the writer pictures it, not statements about the
# incident: their words are read to the end of the clause, apart from the words that name a harm, a
# remedy or another party, which an apology can slip in ("sorry for the lost orders", "enjoy a free
# month", "sorry our partner's outage …"), and names.
# What follows in the next clause ("…, and your data was never at risk") is read as ever.
GREETING = r"hi|hey|hello|dear|heads\s+up"  # the words that open a greeting ("Hi everyone,", "Heads up, riders:")
_FELT = re.compile(
    r"\b(?:sorry|apologi[sz]e[sd]?|apologies|apology)\s+(?:for|about)\b"
    # whom it addresses, in the situation it pictures: "sorry to anyone waiting at the gate right now", "to all
    # families waiting to see offers"
    r"|\b(?:sorry|apologi[sz]e|apologies)\s+to\s+(?:anyone|everyone|those\s+of\s+you|all\s+of\s+you|"
    r"(?:all\s+(?:the\s+|our\s+)?|our\s+)(?:[a-z]+\s+)?(?-i:[a-z]+s)|every\s+[a-z]+)\s+(?=\w+ing\b)"
    # ... or whom a relative clause pictures: "sorry to everyone whose quiz night got cut short", "to everyone
    # who had a wasted trip this morning", "thanks to everyone who flagged the mix-up" (a clause that says a
    # system failed them is read as any statement: "sorry to everyone whose shop went offline")
    r"|\b(?:sorry|apologi[sz]e|apologies|thanks|thank\s+you)\s+to\s+(?:anyone|everyone|those|every\s+[a-z]+|"
    r"all\s+(?:the\s+)?[a-z]+)\s+(?=who\b|who['’]s\b|whose\b)"
    # ... or the situation it supposes: "we're sorry if you've tried to make a claim this morning"
    r"|\b(?:sorry|apologi[sz]e|apologies)\s+if\s+(?=you\b)"
    # ... and what advice spares the reader: "start temporary access so you don't fall behind"
    r"|\bso\s+(?:that\s+)?(?=you\s+(?:don['’]t|do\s+not|won['’]t|will\s+not|can|can['’]t|aren['’]t)\b)"
    r"|\bthank(?:s|\s+you)(?:\s+so\s+much)?\s+for\b(?=\s+\w+ing\b)"
    # ... and whom a thank-you addresses: "we thank residents for their patience", "thanks to all our riders for"
    r"|\bthank(?:s\s+to)?\s+(?=(?:all\s+)?(?:of\s+)?(?:our\s+|the\s+)?(?-i:[a-z]+s)\s+for\b)"
    rf"|^\s*(?:(?:{GREETING})\b(?=[^,;:.!?]{{0,30}}(?:[,!]|\s[-–—]\s))|good\s+(?:morning|afternoon|evening)\b)"
    r"|(?:^|[,;:.!?]\s*|\sand\s+)(?:happy\s+\w+ing\b|happy\s+new\s+year\b|enjoy\b|see\s+you\b|"
    r"take\s+care\b|stay\s+(?:safe|warm|dry|cool)\b|safe\s+travels?\b|have\s+a\s+(?:good|great|nice|lovely)\b|good\s+luck\b|"
    r"congratulations\b|(?:we\s+)?can['’]t\s+wait\s+to\b|(?:we\s+)?look\s+forward\s+to\b)",
    re.IGNORECASE,
)
_FELT_END = re.compile(r"[,;:.!?()]|\s[-–—]\s|\s(?:and|but|so|which|while|until|once|because|as|since)\s",
                       re.IGNORECASE)
# ... and whom or what it names after "and", where no clause of its own follows: "the inconvenience caused to
# crews and training departments this morning" (not "… and refunds will follow").
_FELT_AND_MORE = re.compile(
    r"\s(?:and|or)\s+(?:(?!(?:is|are|was|were|be|been|has|have|had|will|can|could|may|might|would|should|not|"
    r"never|we|you|they|it|our)\b)[\w-]+\s+){0,5}(?=(?:(?!(?:is|are|was|were|be|been|has|have|had|will|"
    r"can|could|may|might|would|should|not|never|we|you|they|it|our)\b)[\w-]+)(?:\s*[,;:.!?()]|$|\s(?:and|but)\s))",
    re.IGNORECASE)
_PURPOSE = re.compile(r"so\s", re.IGNORECASE)
# ... and what the reader was doing: "sorry for the hassle this caused while you were getting ready for your trip"
_FELT_WHILE = re.compile(r"\s(?:while|when|as)\s+you\b", re.IGNORECASE)
_SUPPOSED_END = re.compile(r"[,;:.!?()]|\s[-–—]\s")
_FELT_ON = re.compile(r",\s+(?:especially|particularly)\s", re.IGNORECASE)  # "…, especially at the end of a long day"
# A short question that opens advice ("Out on the trail?", "Planning to ski tomorrow?", "Worried about the
# deadline?") pictures the reader's situation; the advice after it is read as ever.
_ASKS_READER = re.compile(r"[^?]*\?\s*$")
_QUESTION_WORDS = 8
_WE = frozenset("we we're we've we'll we’re we’ve we’ll our us".split())
_WHOSE = re.compile(r"who\b|who['’]s\b|whose\b", re.IGNORECASE)
_SYSTEM_HIT = re.compile(r"\b(?:offline|down|fail\w*|unavailable|broken|errors?|outages?|crash\w*|stopped|"
                         r"not\s+working|missing|lost|late|delayed|declined|rejected|charged|deleted)\b", re.IGNORECASE)
# An apology that tells what happened states an impact and is read as any statement: in a clause of its
# own ("sorry that your shops went offline", "sorry to everyone whose order arrived late"), or in a
# denial or a passive ("sorry for the trouble of payments that were declined").
_TELLS = re.compile(r"\b(?:not|never|no)\b|n['’]t\b|\b(?:was|were|been|being|is|are)\s+(?:\w+ly\s+)?\w+(?:ed|en)\b",
                    re.IGNORECASE)
# Harms, remedies and other parties an apology or a sign-off may not bring in unread.
_HARM = frozenset(
    "lost lose loses losing loss losses deleted deletion missing duplicate duplicated duplicates double doubled "
    "twice charged charge charges charging overcharged billed refund refunds refunded refunding credit credits "
    "credited crediting reimburse reimbursed reimbursing reimbursement compensate compensated compensating "
    "compensation cancelled canceled cancellation suspended locked leaked leak exposed breach breached stolen "
    "hacked compromised corrupted corruption damaged damage wrong incorrect data money fee fees penalty "
    "penalties fine fines expired permanently free bonus discount off voucher gift upgrade extra waived "
    # whom it blames: "sorry our integration partner's outage disrupted your orders"
    "partner partners provider providers vendor vendors supplier suppliers carrier carriers contractor "
    "contractors third-party".split()
)


def _felt_spans(sentence: str, tokens) -> list[tuple[int, int]]:
    """What each apology, greeting and sign-off of the sentence covers, to the end of its clause; a short
    question to the reader, whole."""
    if _ASKS_READER.match(sentence) and len(tokens) <= _QUESTION_WORDS and \
            not any(word.lower() in _WE for _, _, word in tokens):
        return [(0, len(sentence))]
    spans = []
    for m in _FELT.finditer(sentence):
        # what an apology supposes goes on past "and": "sorry if you've tried to claim and hit an error"
        end = (_SUPPOSED_END if m.group().lower().endswith("if ") else _FELT_END).search(sentence, m.end())
        if end and end.start() == m.end() and sentence[end.start()] == ",":
            end = _FELT_END.search(sentence, end.end())  # "Good morning, travellers!": whom it greets
        while end and (_FELT_ON.match(sentence, end.start()) or _FELT_WHILE.match(sentence, end.start())):
            end = _FELT_END.search(sentence, end.end())
        if end and (listed := _FELT_AND_MORE.match(sentence, end.start())):
            end = _FELT_END.search(sentence, listed.end())  # "sorry to crews and training departments"
        end = end.start() if end else len(sentence)
        if (_SYSTEM_HIT.search(sentence, m.end(), end) if _WHOSE.match(sentence, m.end()) else
                not _PURPOSE.match(m.group()) and _TELLS.search(sentence, m.end(), end)):
            spans.append(m.span())  # whom it addresses, and no more: "sorry to every family whose stories were …"
        else:  # a purpose tells nothing
            spans.append((m.start(), end))
    if _ADDRESSING.match(sentence) and (named := _VOCATIVE.search(sentence)) and \
            named.group(1).split()[-1].lower() in _ADDRESSEES | {w for w in named.group(1).split() if _people(w)}:
        spans.append(named.span(1))
    return spans


# Whom a thank-you, an apology or a greeting names at its end, after a comma ("Thanks for your patience,
# readers and parents!", "Sorry about this, cat parents."): a few words that end in people, no verb among them.
_ADDRESSING = re.compile(r"\s*(?:(?:and\s+)?thanks|thank\s+you|(?:we['’]re\s+|we\s+are\s+)?(?:so\s+|very\s+|really\s+)?"
                         rf"sorry|apologies|{GREETING}|good\s+(?:morning|afternoon|evening))\b", re.IGNORECASE)
_VOCATIVE_WORD = (r"(?!(?:the|a|an|is|are|was|were|be|been|has|have|had|will|can|may|not|never|we|you|it|they|this|"
                  r"that|our|us|i|he|she|there|here|now|again|today|too)\b)[^\W\d_][\w-]*")
_NAMED_PEOPLE = rf"(?:{_VOCATIVE_WORD}\s+){{0,2}}{_VOCATIVE_WORD}"
_VOCATIVE = re.compile(rf",\s+({_NAMED_PEOPLE}(?:\s+(?:and|&)\s+{_NAMED_PEOPLE})?)(?:\s*[!.]*\s*$|,\s+and\s)",
                       re.IGNORECASE)
_ADDRESSEES = frozenset("everyone everybody all folks team friends".split())


def _people(word: str) -> bool:
    """Whether a word named in address is people: a plural noun, or a plural of doers the dictionary does not
    know ("Thanks for your patience, cachers")."""
    return _plural(word) or (word.lower().endswith("ers") and not parts_of(word))


# ... and the situation it pictures: "we know confirmations matter when trucks are already on the road".
_EMPATHY_WHEN = re.compile(r"\s(?:especially\s+|particularly\s+)?when\s", re.IGNORECASE)
_NO_VERB = r"(?!(?:is|are|was|were|be|been|has|have|had|will|can|may|not|never)\b)[\w’'-]+"
_AND_THEIRS = re.compile(rf"\s+and\s+(?:your|their)\s+(?=(?:{_NO_VERB}\s+){{0,2}}?{_NO_VERB}\s*(?:[,;:.!?]|$))",
                         re.IGNORECASE)


# What the reader did, said to name their things ("anything you add or tick off is still saved", "the tours
# you've already downloaded play offline"), is theirs: its verbs are read as an apology's words are, the
# harms apart ("the orders you lost").
_READERS_DOING = re.compile(
    r"\b(?:(?:anything|everything|whatever|something|what)\s+|(?:the|any|all(?:\s+the)?|an?)\s+(?:[\w’'-]+\s+){1,2}?)"
    r"you(?:['’]ve|['’]d|\s+have|\s+had)?\s+(?:already\s+|just\s+|recently\s+)?"
    r"([a-z]+(?:\s+(?:or|and)\s+[a-z]+)?(?:\s+(?:off|up|out|in|back|down|over))?)\b", re.IGNORECASE)


_AND_OR = frozenset(("and", "or"))


def _readers_doing_spans(sentence: str) -> list[tuple[int, int]]:
    """The verbs of each thing the sentence names by what the reader did with it."""
    spans = []
    for m in _READERS_DOING.finditer(sentence):
        end = m.start(1)
        for w in re.finditer(r"[a-z]+", m.group(1), re.IGNORECASE):
            word = w.group().lower()
            if word in _AND_OR:
                continue
            if word not in _PARTICLES and not verbs_of(word):
                break
            end = m.start(1) + w.end()
        if end > m.start(1):
            spans.append((m.start(1), end))
    return spans


def _empathy_spans(sentence: str) -> list[tuple[int, int]]:
    """What follows each "we know how much ..." to the end of its clause, with the situation it pictures."""
    spans = []
    for start, end in _to_clause_end(_EMPATHY, sentence, after=True):
        # "we know an up-to-date logbook matters, especially before a checkride"; "… mean to you and your
        # loved ones": the people it names after "and" are no new clause
        while (when := _EMPATHY_WHEN.match(sentence, end) or _FELT_ON.match(sentence, end)
               or _AND_THEIRS.match(sentence, end)):
            later = _CAUSE_END.search(sentence, when.end())
            end = later.start() if later else len(sentence)
        spans.append((start, end))
    return spans


def _other_incident_spans(sentence: str) -> list[tuple[int, int]]:
    """Each mention of another incident, to the end of its clause ("the same issue as last week")."""
    return _to_clause_end(_OTHER_INCIDENT, sentence)


def _to_clause_end(pattern: re.Pattern, sentence: str, after: bool = False) -> list[tuple[int, int]]:
    """Each match of ``pattern`` (or what follows it: ``after``) to the end of its clause."""
    spans = []
    for m in pattern.finditer(sentence):
        end = _CAUSE_END.search(sentence, m.end())
        spans.append((m.end() if after else m.start(), end.start() if end else len(sentence)))
    return spans


def _cause_spans(sentence: str) -> list[tuple[int, int, int]]:
    """(where the marker starts, where the cause or the promise starts, where it ends) for each the
    sentence gives."""
    spans = []
    # A time it started at, then the cause: "This started at around 09:40 CET, shortly after this morning's
    # release".
    later = [m for m in (*_SOON_AFTER.finditer(sentence), *_AFTER_THING.finditer(sentence))
             if _STARTED.search(sentence, 0, m.start())]
    later += _AFTER_EVENT.finditer(sentence)
    for m in (*_CAUSE_MARK.finditer(sentence), *_PROMISE_MARK.finditer(sentence), *later):
        end = (_BY_CAUSE_END if m.group().rstrip().lower().endswith(" by") else _CAUSE_END).search(sentence, m.end())
        spans.append((m.start(), m.end(), end.start() if end else len(sentence)))
    for m in _CAUSED_IT.finditer(sentence) if _CAUSED_WORD.search(sentence) else ():
        # the cause is the subject, before its verb: no words mark it, and the verb is grammar here
        spans += [(m.start("cause"), m.start("cause"), m.start("verb")), (m.start("verb"), m.end(), m.end())]
    return spans


# A cause said as the subject of what it brought on ("a traffic spike from one customer caused the
# timeouts", "this morning's release has triggered the errors"): a clause that opens with it, named with
# a determiner, and followed by what it brought on, so "any concern this has caused" gives none.
_CAUSED_IT = re.compile(
    r"(?:^|[,;:]\s*|\b(?:and|but|so|that|when|after)\s+)"
    r"(?P<cause>(?:an?|the|this|that|these|those|our|their|its|one|some)\s+"
    r"(?:(?!(?:is|are|was|were|be|been|being|for)\s)[\w’'-]+\s+){0,6}?)"
    r"(?P<verb>(?:(?:has|have|had|may\s+have|might\s+have)\s+)?(?:caused|triggered|led\s+to|resulted\s+in))"
    r"(?=\s+(?!by\b)[\w’'])",  # what it brought on follows: "the delays were caused by …" is passive
    re.IGNORECASE,
)
# read first: few sentences have one
_CAUSED_WORD = re.compile(r"caused|triggered|led\s+to|resulted\s+in", re.IGNORECASE)
_SOON_AFTER = re.compile(led_by("ijrs", r"\b(?:right|shortly|soon|just|immediately)\s+(?:after|following)\s+"),
                         re.IGNORECASE)
# "… after this morning's app update", "following the latest Android system update": a change made to a
# system, named as what it followed, is a cause (whether or not "started" says so); a time is none.
_EVENT = r"(?:release|deploy|deployment|maintenance|upgrade|migration|rollout|roll-out|patch)s?"
_AFTER_EVENT = re.compile(
    led_by(
        "af",
        r"\b(?:after|following)\s+(?="
        rf"(?:this|last|yesterday|today|tonight)(?:\s+\w+)?['’]s\s+(?:[\w-]+\s+){{0,2}}?(?:{_EVENT}|updates?|changes?)\b|"
        rf"(?:the|our|an?)\s+(?:[\w-]+\s+){{0,2}}?{_EVENT}\b|"
        r"(?:the|our|an?)\s+(?:latest\s+|recent\s+|new\s+)?(?:[\w-]+\s+)?(?:app|system|software|firmware|os|android|"
        r"ios|platform|server|database|config|configuration|code|security|scheduled|planned)\s+(?:update|change)s?\b|"
        # ... and so is a load it followed: "ran out of disk space after an unusually high number of requests"
        r"(?:the|an?)\s+(?:[\w-]+\s+){0,3}?(?:surge|spike|number|volume|influx|rush|burst|flood|wave)\s+(?:of|in)\b|"
        # ... or named by what surged, at the clause's end: "following a sudden traffic spike."
        r"(?:the|an?)\s+(?:[\w-]+\s+){0,3}?(?:surge|spike|influx|rush|burst)s?\s*(?:[.,;:!?)]|$))",
    ),
    re.IGNORECASE,
)
# ... and so is a thing it started after: "this started around 10:00 ET, after a change to how codes sync"
_AFTER_THING = re.compile(led_by("af", r"\b(?:after|following)\s+(?=(?:an?|the|our|this|that|last|yesterday['’]s)\s)"),
                          re.IGNORECASE)
_STARTED = re.compile(r"\b(?:started|began|begun|appeared|occurred|happened|started\s+to)\b", re.IGNORECASE)


def _licensed(word: str, licensed: frozenset[str], vocabulary: Vocabulary, where: str) -> bool:
    if _has_digit(word):
        return True  # a number, time, date or id: the named checks judge it
    lower = word.lower().replace("’", "'")
    if lower in FUNCTION_WORDS or lower in NUMBER_WORDS or lower in _TIME_WORDS or len(lower) == 1:
        return True
    if word.isupper() and len(word) in _ACRONYM_WORDS and ACRONYM + lower in licensed:
        return True  # "CA" where the incident says "certificate authority"
    if len(word) > 2 and word.endswith("s") and word[:-1].isupper() and \
            _licensed(word[:-1], licensed, vocabulary, where):
        return True  # an acronym's plural is the acronym: "smart TVs" where the incident says "smart TV apps"
    allowed = vocabulary.allows(where)
    if _agent_noun(lower) and lower not in vocabulary.texts and lower.removesuffix("s") not in vocabulary.texts:
        allowed = frozenset()  # "provider" stems as "provide" does: a term licenses the doer only by name
    return any(s in licensed or _derived(s, licensed) or s in allowed for s in forms(lower)) or \
        (where != DONE and _synonym_used(lower, licensed))


@functools.lru_cache(maxsize=8192)
def _agent_noun(word: str) -> bool:
    """Whether ``word`` names a doer the stemmer joins to its verb ("provider", "uploaders": "provid",
    "upload"), a noun only."""
    if not word.endswith(("er", "ers", "or", "ors")) or stem(word).endswith(("er", "or")) or \
            word.removesuffix("s") in _PEOPLE:
        return False  # the people a company serves are the vocabulary's to name ("thanks for being a subscriber")
    parts = parts_of(word.removesuffix("s") if word.endswith("rs") else word)
    return parts == {"NOUN"}


def _synonym_used(word: str, licensed: frozenset[str]) -> bool:
    """Whether the incident uses a synonym of the word in the word's most common sense ("phone" where the
    incident says "telephone"), the word taken as it is or as any of its dictionary forms."""
    return any(stem(synonym) in licensed for base in (word, *lemmas_of(word)) for synonym in synonyms(base))


@functools.lru_cache(maxsize=65536)
def forms(word: str) -> tuple[str, ...]:
    """The word's stem, then the stems of its dictionary forms where they differ: irregular forms
    ("caught" is "catch", "sent" is "send", "rebuilt" is "rebuild") that no stemmer joins."""
    stemmed = stem(word)
    if len(word) > _LONGEST_WORD:
        return (stemmed,)
    # "submission" is the noun of "submit", "transmissions" of "transmit": a pair no stemmer joins
    verb = _MISSION.sub("t", word)
    return (stemmed, *sorted({stem(lemma) for lemma in lemmas_of(word)} - {stemmed}),
            *((stem(verb),) if verb != word else ()))


_MISSION = re.compile(r"(?<=\wmi)ssions?$")


_ROOT = 6  # the characters two stems share when one word derives from the other


def _derived(stemmed: str, licensed: frozenset[str]) -> bool:
    """Whether the word is another form of a word the incident uses: the stemmer leaves "subscriber"
    and "subscription" apart ("subscrib", "subscript"); they share their root."""
    return len(stemmed) >= _ROOT and stemmed[:_ROOT] in _roots(licensed)


@functools.lru_cache(maxsize=256)  # one per incident, as per_incident keeps them
def _roots(licensed: frozenset[str]) -> frozenset[str]:
    return frozenset(s[:_ROOT] for s in licensed if len(s) >= _ROOT and s[0] != ACRONYM)


_REASON = re.compile(r",?\s+(?:as|because|since)\s+(?:this|that|doing\s+so|[a-z]+ing)\b", re.IGNORECASE)
_ADVICE_CLAUSE = re.compile(r"[,;:]\s+(?:and\s+|but\s+|so\s+)?|\s(?:and|but|so)\s", re.IGNORECASE)

# The condition that opens an advice sentence says when the advice applies ("If you are locked out,",
# "Until it is fixed,", "In the meantime,"): it is read like any other sentence, and only the instruction after it is
# read strictly.
_CONDITION = re.compile(
    r"^\s*(?:if|when|whenever|until|while|in\s+case|should\s+you|in\s+the\s+meantime|meanwhile|for\s+now|"
    r"until\s+then)\b[^,;:]*[,;:]",
    re.IGNORECASE,
)


# What frames a statement as something to know rather than to do.
FRAME = re.compile(r"\s*(?:please\s+)?(?:note|be\s+(?:aware|advised|assured))\b(?:\s+that\b)?", re.IGNORECASE)
# Inside an instruction, a condition ("until this is fixed", "once the backlog has caught up") or a
# relative clause ("conversations that received a cut-off answer") describes, and is read as a
# description; the instruction's own verb and object stay advice.
_CONFIRMED = re.compile(r"\bconfirm\s+(?:that\s+|whether\s+|if\s+)?(?=(?:it|they|this|that|an?|the|your)\s+"
                        r"(?:[\w’'-]+\s+){0,3}?(?:has|have|is|are|was|were|went|got)\b)", re.IGNORECASE)
_HOW = re.compile(r"\s(?:by|in|on|from|using|via)\s|[,;:.!?]", re.IGNORECASE)
_DESCRIBED = re.compile(r"\b(?:until|once|while|when|whenever|after|before|if|that|which|who|whose)\s", re.IGNORECASE)
_NOT_RELATIVE = frozenset("sure note aware ensure check verify confirm know notice so such".split())


def _confirmed_spans(sentence: str, begin: int) -> list[tuple[int, int]]:
    """What advice opened at ``begin`` asks the reader to confirm ("you can confirm it has arrived by
    checking …"), each up to how: a description of what to look for, not the instruction."""
    spans = []
    for m in _CONFIRMED.finditer(sentence, begin):
        how = _HOW.search(sentence, m.end())
        spans.append((m.end(), how.start() if how else len(sentence)))
    return spans


def _described(sentence: str, at: int, begin: int) -> bool:
    """Whether the word at ``at`` stands in a condition or a relative clause opened after ``begin``, in
    the same clause (up to a comma, a semicolon or a colon)."""
    for m in _DESCRIBED.finditer(sentence, begin, at):
        before = sentence[begin : m.start()].split()
        if m.group().strip().lower() in ("that", "which", "who", "whose") and (
                not before or before[-1].lower().strip(",") in _NOT_RELATIVE):
            continue
        if not re.search(r"[,;:]", sentence[m.end() : at]):
            return True
    return False


_OURS = re.compile(r"[,;]?\s+(?:and|but|so|while)\s+(?:we|our|the\s+(?:[\w-]+\s+){0,2}?(?:team|staff|office|desk))\b",
                   re.IGNORECASE)  # "… and the volunteer team will take care of it"
# ... or says what may follow from it: "close and reopen the app and your restored streak should appear"
# ("… and it will be treated as received on 9 January" is a promise, read with the instruction).
_RESULT = re.compile(
    r"[,;]?\s+(?:and|so)\s+(?:(?:your|the|their|its|this|that|these|those)\s+(?:[\w’'-]+\s+){0,3}?|it\s+|they\s+)"
    r"(?:should|may|might|would|can|could|is|are)\b",
    re.IGNORECASE,
)


_JUST = re.compile(r"\s*(?:just|simply)\s", re.IGNORECASE)


def _imperative_after_condition(sentence: str, end: int):
    """The verb that opens the clause after a condition (ending at ``end``, from :func:`_condition_end`),
    when it is an instruction: "If you are unsure, ask your customers to resend ..." ("If it fails,
    retry" too; "If it fails, errors are logged" not)."""
    verb = _TOKEN.match(sentence, end + len(sentence[end:]) - len(sentence[end:].lstrip())) if end else None
    if verb is None:
        return None
    word = verb.group().lower()
    if word not in verbs_of(word) or word in _NOT_IMPERATIVE or word in FUNCTION_WORDS:
        return None  # ("Just over half of top-ups are failing": no instruction)
    # A noun that is also a verb opens a subject: "form owners can remove it" has its own verb soon after.
    following = [m.group().lower() for m in _TOKEN.finditer(sentence, verb.end())][:3]
    return None if any(w in _NOT_IMPERATIVE for w in following) else verb


_NOT_IMPERATIVE = frozenset("be is are was were have has had do does did will would can could may might must shall "
                            "should we you they it this that there".split())


def _condition_end(sentence: str) -> int:
    m = _CONDITION.match(sentence)
    return m.end() if m else 0


def _phrase_cover(tokens, vocabulary: Vocabulary, places: list[str]) -> list[bool]:
    """Which tokens a vocabulary phrase covers: "back to normal" licenses "back" there and nowhere else.
    A phrase stands only where its term may (``places``: each token's, from :func:`_places`)."""
    stems = [stem(word) if not _has_digit(word) else "" for _, _, word in tokens]
    covered = [False] * len(tokens)
    for i, first in enumerate(stems):
        for phrase, allowed in vocabulary.phrases.get(first, ()):
            n = len(phrase)
            if tuple(stems[i : i + n]) == phrase and all(p in allowed for p in places[i : i + n]):
                covered[i : i + n] = [True] * n
                break
    return covered


def _skipped(start: int, end: int, skip: list[tuple[int, int]]) -> bool:
    return any(a <= start and end <= b for a, b in skip)


def _adjacent(tokens, last: int, i: int, covered: list[bool], sentence: str) -> bool:
    """Two unsupported words read as one run when only grammar stands between them: "third-party
    vendor", "caused by a vendor"."""
    between = sentence[tokens[last][1] : tokens[i][0]]
    if re.search(r"[.,;:!?()]", between):
        return False
    middle = [w.lower() for _, _, w in tokens[last + 1 : i]]
    return all(w in FUNCTION_WORDS for w in middle) and len(middle) <= 2 and not any(covered[last + 1 : i])


def find(text: str, support: Support, earlier: list[Violation]) -> list[Violation]:
    """The check: each sentence with words nothing licenses, when the policy has a vocabulary (its
    grounding switch) and there is a context to read. Links and contacts, and the words a named check
    already reported (``earlier``), are not read again."""
    if support.rules.vocabulary is None or support.context is None:
        return []
    checked = prose(text, support)
    lower = checked.lower()
    skip = [(m.start(), m.end()) for v in earlier if v.found
            for m in re.finditer(re.escape(v.found.lower()), lower)]
    licensed, acted, caused, done = _incident_stems(support.context, support.licensed_texts,
                                                    support.rules.region_words, key=support.context_key)
    return [Violation(CHECK, u.found, unsupported_message(u), sentence=u.sentence, words=u.words,
                      reading=DONE_TO_CUSTOMERS if u.done else "")
            for u in find_unsupported(checked, licensed, Vocabulary.of(support.rules.vocabulary), skip, acted,
                                      caused, done)]


@per_incident
def _incident_stems(context: Mapping, licensed_texts: tuple[str, ...],
                    region_words: tuple) -> tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]:
    """What the incident licenses (with the names of its regions, platforms and places), what may say
    what the company does, and what may say a cause, read once per incident and goal (or draft)."""
    words = evidence_stems(context, *licensed_texts)
    licensed = words | _region_names(words, region_words) | _platform_names(words)
    licensed |= _place_names(str(context.get("region") or ""), licensed)
    # A cause is the incident's to give: not the goal's words ("write the update") nor its next update's.
    caused = evidence_stems(context, cadence=False) | (licensed - words)
    # What the company did to its customers is the incident's record of what was done: an approved action
    # that asks customers to do something ("Try booking online again") licenses no "we've booked you".
    # A key message, the goal and a draft license the verbs they state ("Missed calls have been rebooked"), not
    # every word they use ("Online booking is showing free slots again").
    said = [t for t in (*(context.get("key_messages") or ()), *licensed_texts) if isinstance(t, str)]
    theirs = {**context, "key_messages": [],
              "approved_actions": [a for a in context.get("approved_actions") or ()
                                   if not (isinstance(a, str) and _ASKS_CUSTOMERS.search(a))]}
    done = action_stems(theirs, *(verb for t in said for verb in _stated_actions(t)))
    return licensed, action_stems(context, *licensed_texts), caused, done


_ASKS_CUSTOMERS = re.compile(r"\byou(?:r|rs)?\b", re.IGNORECASE)


def _region_names(licensed: frozenset[str], region_words: tuple) -> frozenset[str]:
    """The names in words of the regions the incident names ("EU" licenses "Europe" and "European"):
    the region check already keeps every other region out."""
    return _stems_of(" ".join(" ".join(words) for token, words in region_words if stem(token) in licensed))


def _place_names(region: str, licensed: frozenset[str] = frozenset()) -> frozenset[str]:
    """The countries, states and cities inside the incident's regions (its ``region`` field: "CA"
    licenses "Canada" and "Canadian"), as the region check reads them; a global incident names no
    place of its own. Where the incident itself names some of them (``licensed``: "our Reno, Nevada
    warehouse" on a US incident), those are its places, and the others stay unnamed."""
    tokens = {t.lower() for t in re.findall(r"[A-Za-z]+", region)} - {"global"}
    places = [place for place, regions in PLACES.items() if tokens.intersection(regions)]
    named = [place for place in places if place not in COUNTRIES and _stems_of(place) <= licensed]
    if named:
        places = [place for place in places if place in named or place in COUNTRIES]
    return _stems_of(" ".join(places + [DEMONYMS[p] for p in places if p in DEMONYMS]))


# The other names of a platform the incident names: an iOS incident is about iPhones and the App Store,
# an Android one about the Play Store. The incident must name the platform: "iPhone users" stays
# unsupported on an incident that names none.
_PLATFORMS = {
    "ios": "iphone iphones ipad ipads apple app store",
    "android": "google play store",
    "macos": "mac macs",
    "windows": "pc pcs",
}


def _platform_names(licensed: frozenset[str]) -> frozenset[str]:
    return _stems_of(" ".join(names for platform, names in _PLATFORMS.items() if stem(platform) in licensed))


DONE_TO_CUSTOMERS = "done to customers"


def unsupported_message(unsupported: Unsupported) -> str:
    """What the lead reads: the words, and that nothing in the incident backs them."""
    if unsupported.done and _FUTURE.search(_SUBJECT_SPLIT.split(unsupported.sentence[: unsupported.words[0][0]])[-1]):
        return (f"The incident does not promise “{unsupported.found}”: the sentence promises customers something "
                "that neither the approved actions nor the facts about what is being done say.")
    if unsupported.done:
        return (f"Nothing the incident records says “{unsupported.found}” was done: the sentence says the company "
                "did something for customers that the approved actions and the facts about what was done do not "
                "say.")
    return (f"Nothing in the incident supports “{unsupported.found}”: the sentence states something the facts, the "
            "key messages and the approved actions do not say.")

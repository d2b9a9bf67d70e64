"""What a text says the company has done and what it tells customers to do, read against what the
incident says of the same work and the same advice: work said to be done that the incident says is
planned or under way, all of something said done where the incident counts only part of it done,
advice the incident advises against, and "no action is needed" where an approved action asks
something of customers. Plain Python: no Django here."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from decimal import Decimal

from agents.core.guard.claims import family_makes_claim, family_problem
from agents.core.guard.contacts import prose
from agents.core.guard.grounding import FUNCTION_WORDS, GREETING, STAFF, addresses_us, forms
from agents.core.guard.hedges import clause_before, is_negated
from agents.core.guard.incident_claims import SENTENCE_END, Finding, violation_of
from agents.core.guard.leading import led_by
from agents.core.guard.lemmas import is_inflection, lemmas_of, verbs_of
from agents.core.guard.support import Support, per_incident
from agents.core.guard.violation import Violation
from agents.core.units import fact_meta, number_value, show, unit_of

# ---------------------------------------------------------------- what is done

# "All delayed messages have been delivered" on an incident that says it will deliver them, "we have
# refunded every rider" while refunds are being prepared: the text says the company's work is done,
# and the incident says it only of the future or of the work under way. What the company did ("we
# have refunded") or what was done ("have been delivered") is a claim that the work is complete; the
# incident supports it when one of its statements says it in a clause about something done (a past
# form, no "being", "will", "in progress"). Work the incident does not mention is grounding's to read.
_NOW = r"(?:(?:now|since|already|all|also|just|fully|successfully|finally|each|both)\s+){0,2}"
_DONE_CLAIM = re.compile(
    # "we have refunded", "we rolled back", "our team has restored"; "..., and have refunded"
    r"\b(?:we|we['’]ve|our\s+(?:[\w-]+\s+)?(?:team|teams|engineers)|and(?=\s+ha(?:ve|s)\b))\s+"
    r"(?:(?:have|has)\s+)?" + _NOW + r"(?:been\s+" + _NOW + r")?([a-z]+)\b"
    # "all delayed messages have been delivered"
    r"|\b(?:have|has)\s+" + _NOW + r"been\s+" + _NOW + r"([a-z]+)\b",
    re.IGNORECASE,
)
_NOT_DONE_YET = re.compile(
    r"\b(?:being|will|shall|to\s+be|under\s*way|in\s+progress|ongoing|pending|preparing|planned|plan|"
    r"scheduled|not|yet|still|remaining|continu\w*|partially|half|some|so\s+far|"
    # work that began ("refunds have started"), not a thing's own start ("rentals started during the incident")
    r"(?:has|have|had|is|are|was|were|been|we|we['’]ve)\s+(?:\w+\s+)?(?:starting|started)|"
    r"once|when|after|until|if|before)\b|['’]ll\b",
    re.IGNORECASE,
)
_DONE_BEFORE = re.compile(r"\bafter\s+(?=[a-z]+ing\b)", re.IGNORECASE)
# ... or the doer: "we added", "staff checked members in manually" (the company's own people)
_AUXILIARY = frozenset("was were been has have had ve s is we they it".split()) | STAFF
_PASSIVE = frozenset("was were been".split())
_RELATIVE = re.compile(r"\s(?:that|which|who)\s", re.IGNORECASE)
_HAS_VERB = re.compile(r"\b(?:is|are|was|were|has|have|had|been|will|shall)\b|['’](?:re|ve|ll)\b", re.IGNORECASE)
_PREDICATE_NOT_DONE = re.compile(
    r"\b(?:is|are|will|shall)\s+(?:still\s+|now\s+|also\s+|all\s+)?(?:being|be|to\s+be|not|under\s*way|"
    r"in\s+progress|pending|scheduled|planned|queued)\b", re.IGNORECASE)
_PARTICLES = frozenset("back out off up down over".split())  # "rolled back", "switched off"
_NOT_A_FACT = re.compile(r"\b(?:may|might|could|would|should|must|will|once|when|after|if|until|before|whether|"
                         r"as\s+soon\s+as|not|never|no|nothing|none|nobody)\b|n['’]t\b|['’]ll\b", re.IGNORECASE)
_CLAUSE = re.compile(r"[.;:!?\n]|,\s|\b(?:and|but|while|whereas)\s", re.IGNORECASE)
# Verbs that say work began or goes on, not that it is complete; and the lifecycle's own verbs, which the
# incident's state decides (the state claims read "has been fixed", "has been resolved").
_UNDER_WAY = frozenset("start begin continue resume try attempt aim work identify find locate pinpoint trace fix "
                       "resolve restore recover mitigate".split())
# What happened to a customer's money is no work the company completes: "your payment has been received"
# where the incident says "payments are being received", "money has been debited for some orders".
_HAPPENED_TO_MONEY = frozenset("receive debit".split())
# A service that works again is no work done: "emails have been sent normally since 04:10 UTC".
_WORKING = re.compile(r"\b(?:normally|as\s+usual|as\s+expected|since|again)\b", re.IGNORECASE)


@functools.lru_cache(maxsize=8192)
def _past_lemmas(word: str, tags: tuple[str, ...] = ("VBN", "VBD")) -> frozenset[str]:
    """The verbs ``word`` is a past form of ("delivered", "sent"), or none; "complete" is done too."""
    lower = word.lower()
    lemmas = {lemma for lemma in verbs_of(lower)
              if lower != lemma and any(is_inflection(lower, lemma, tag) for tag in tags)}
    return frozenset(lemmas | ({"complete"} if lower == "complete" else set()))


@functools.lru_cache(maxsize=256)
def _said_done(evidence: str) -> tuple[frozenset[str], frozenset[str]]:
    """(the words the evidence says in clauses about something done, the words it says only elsewhere),
    as dictionary forms: "Refunds issued" says "refund" is done, "we are refunding" says it is not."""
    done, other = set(), set()
    label: set[str] = set()  # the words of a fact's label, when the clause before ended with its colon
    for clause, end in _clauses(evidence):
        words = re.findall(r"[A-Za-z]+", clause)
        lemmas = {lemma for w in words for lemma in lemmas_of(w.lower())}
        # What was done first is done too: "We restored the portal after replacing a failed server"; what a
        # relative clause says of its noun is not the clause's: "An alert has been added for jobs that do not
        # start on time". A clause whose verb comes after its relative clause says it there: "Paid orders
        # that never reached the kitchen are being refunded".
        told, *rest = _RELATIVE.split(_DONE_BEFORE.sub(" ", clause), 1)
        later = rest and not _HAS_VERB.search(told) and _PREDICATE_NOT_DONE.search(rest[0])
        if any(_says_done(words, i) for i in range(len(words))) and not _NOT_DONE_YET.search(told) and not later:
            done |= lemmas | label  # "Rerun: Completed on 19 September" says the rerun is done
        else:
            other |= lemmas
        label = lemmas if end == ":" else set()
    return frozenset(done), frozenset(other - done)


def _clauses(evidence: str) -> Iterator[tuple[str, str]]:
    """Each clause of the evidence (split as :data:`_CLAUSE` splits) and the mark that ends it."""
    begin = 0
    for m in _CLAUSE.finditer(evidence):
        yield evidence[begin : m.start()], m.group().strip()
        begin = m.end()
    yield evidence[begin:], ""


def _says_done(words: list[str], i: int) -> bool:
    """Whether ``words[i]`` is a past form that says something was done: after "was", "has been"…, at the
    clause's start ("Rolled back the deployment"), or before no noun ("Refunds issued at 10:00"); not
    a past form that describes a noun ("deliver every delayed message"). A participle spelt as its verb
    ("was run", "has been reset") says so after a passive's or a perfect's auxiliary only."""
    before = {w.lower() for w in words[max(0, i - 2) : i]}
    if not _past_lemmas(words[i]):
        lower = words[i].lower()
        return bool(before & _PASSIVE) and lower in verbs_of(lower) and is_inflection(lower, lower, "VBN")
    j = i + 2 if i + 1 < len(words) and words[i + 1].lower() in _PARTICLES else i + 1  # "rolled back the deploy"
    after = words[j].lower() if j < len(words) else None
    return i == 0 or bool(before & _AUXILIARY) or after is None or after in FUNCTION_WORDS or j > i + 1


def completion_findings(text: str, evidence: str) -> list[Finding]:
    """Work the text says is done that the incident says only of the future or of work under way."""
    findings = []
    for m in _DONE_CLAIM.finditer(text):
        word = m.group(1) or m.group(2)
        perfect = m.group(2) or re.search(r"\bha(?:ve|s)\b|['’]ve", m.group(), re.IGNORECASE)
        lemmas = _past_lemmas(word, ("VBN",) if perfect else ("VBD",))
        if not lemmas or lemmas & (_UNDER_WAY | _HAPPENED_TO_MONEY):
            continue
        opens = [c.end() for c in _CLAUSE.finditer(text, 0, m.start())]
        close = _CLAUSE.search(text, m.end())
        clause = text[opens[-1] if opens else 0 : close.start() if close else len(text)]
        if _NOT_A_FACT.search(text[opens[-1] if opens else 0 : m.end()]) or _NOT_DONE_YET.search(clause) \
                or _WORKING.search(text, m.end(), close.start() if close else len(text)) or _goes_on(text, m.start()):
            continue  # "may have been delayed", "once refunds have been issued", "half have been rolled back"
        done, other = _said_done(evidence)
        if lemmas & other and not lemmas & done:
            particle = re.match(r"\s+(?:back|out|off|up|down|over)\b", text[m.end() :], re.IGNORECASE)
            found = m.group() + (particle.group() if particle else "")
            findings.append(Finding("state_claim", found, f"“{found}” says this is done, and the incident says it "
                                    "only of what is planned or still under way.", m.start()))
    return findings


def _goes_on(text: str, at: int) -> bool:
    """Whether the sentence says what has gone on since a time, up to now: "Since 14:05 UTC, some requests
    have been rejected" tells of a symptom, not of work completed."""
    begin = max((m.end() for m in SENTENCE_END.finditer(text, 0, at)), default=0)
    return _SINCE.search(text, begin, at) is not None


_SINCE = re.compile(r"\bsince\b", re.IGNORECASE)


# "Reversals for all of them have already been submitted" where the incident counts 1,100 submitted of
# 1,380 charged twice: a text that says every one was done overstates a count the incident keeps of the
# part done so far. The incident keeps it as two counts: one whose label says the same verb ("Duplicate
# charges already submitted for reversal: 1100"), and a larger one of the same things ("Hotel bookings
# charged twice: 1380") or of everything affected ("affected_bookings: 1380").
_ALL_DONE = re.compile(
    led_by(
        "aewh",
        r"\b(?:all|every|each)\b(?:\s+(?:of\s+)?[\w’'-]+){0,5}?\s+(?:have|has|had|were|was)\s+"
        r"(?:now\s+|already\s+|also\s+|all\s+)?(?:been\s+)?(?:successfully\s+)?([^\W\d_]+)"
        r"|\bwe(?:['’]ve|\s+have)\s+(?:now\s+|already\s+|also\s+)?([^\W\d_]+)\s+(?:all|every|each)\b"
        # "transactions that were held up have all come in"
        r"|\b(?:have|had)\s+all\s+(?:now\s+|been\s+)?([^\W\d_]+)"
        # "every account is fully caught up" (not "each payment is retried three times": what is usual)
        r"|\b(?:all|every|each)\b(?:\s+(?:of\s+)?[\w’'-]+){0,5}?\s+(?:is|are)\s+(?:now\s+)?(?:fully|completely)\s+"
        r"([^\W\d_]+)",
    ),
    re.IGNORECASE,
)


_SHARE_OF_EVERY = re.compile(r"\b(?:out\s+of|in)\s+$", re.IGNORECASE)  # "6 out of every 10 uploads": a share


def all_done_findings(text: str, context: Mapping | None) -> list[Finding]:
    """Claims that all of something was done where the incident counts only part of it done."""
    counts, shares = _counts(context), _shares(context)
    findings = []
    for m in _ALL_DONE.finditer(text) if counts or shares else ():
        verb = next(group for group in m.groups() if group).lower()
        if not verbs_of(verb) or is_negated(text, m.start()) or _SHARE_OF_EVERY.search(text, 0, m.start()):
            continue
        done = set(forms(verb))
        share = next(((label, shown) for label, shown, words in shares if done & words), None)
        if share is not None:
            findings.append(Finding(
                "unsupported_statement", m.group(), f"“{m.group()}” says every one was {verb}, and the "
                f"incident says {share[1]} were (“{share[0]}”).", m.start(), reading="completion"))
            continue
        for label, value, words in counts:
            if not done & words:
                continue
            total = next((t for _label, t, w in counts
                          if t > value and ((words - done) & (w - done) or w & _TOTAL)), None)
            if total is not None:
                findings.append(Finding(
                    "unsupported_statement", m.group(), f"“{m.group()}” says every one was {verb}, and the "
                    f"incident counts {value:,} {verb} of {total:,} (“{label}”).", m.start(), reading="completion"))
                break
    return findings


# "Most of you have already checked the rota", "most groups have re-analysed their data", "most of you won't
# have noticed": what most of something did, or did not do, is a share the incident keeps. It passes where a
# fact or a key message says the same verb; an approved action asks customers to do it and says nothing of
# whether they did. Impact ("most users have been affected") is the scope check's, and what customers told
# the company ("many of you have contacted us") is no claim about the incident.
_MOST_DID = re.compile(
    led_by("mnat", r"\b(?:most|many|nearly\s+all|almost\s+all|the\s+(?:vast\s+)?majority)\s+(?:of\s+)?"
                   r"(?:(?:you|them|our|your|the|their|these|those)\s+)?(?:[^\W\d_]+\s+){0,2}?"
                   r"(?:ha(?:ve|s|d)|(?:will|would|wo)(?:n[’']t|\s+not)(?:\s+have)?|did(?:n[’']t|\s+not))\s+"
                   r"(?:already\s+|probably\s+|likely\s+|now\s+|not\s+)?(?:been\s+)?([^\W\d_][\w-]*)"),
    re.IGNORECASE)
_NOT_DOINGS = frozenset("affect impact experience see encounter hit face contact report reach ask tell write call "
                        "email message let get".split())


# ... and that the readers, or those they serve, saw nothing of it: "your visitors won't have noticed a thing",
# "nobody will notice".
_NONE_NOTICED = re.compile(
    led_by("ymn", r"\b(?:you|your\s+[^\W\d_]+|no\s+one|nobody|none\s+of\s+(?:you|them))\s+"
                  r"(?:(?:will|would|wo|did)(?:n[’']t|\s+not)(?:\s+have)?|(?:will|would)\s+never(?:\s+have)?)\s+"
                  r"((?:notic|spott|realis|realiz)[a-z]*|feel|felt)\b"),
    re.IGNORECASE)


# ... or that nothing befell any of them: "nobody missed out on a study session", "nobody was left trapped".
_NOBODY_DID = re.compile(
    led_by("n", r"\b(?:no\s+one|nobody|none\s+of\s+(?:you|them|(?:your|our|the)\s+[^\W\d_]+))\s+"
                r"(?:(?:was|were|has\s+been|have\s+been|had\s+been|will\s+be|got|has|have|had|ever)\s+)?"
                r"(?:left\s+|actually\s+)?([^\W\d_][\w-]*(?:ed|en|lt|st|ot|ught|ound))\b"),
    re.IGNORECASE)


def most_did_findings(text: str, context: Mapping | None, key: str | None = None) -> list[Finding]:
    """Claims that most of something did or did not do a thing, or that nobody noticed it or came to harm,
    where no fact or key message says it."""
    findings, most = [], list(_MOST_DID.finditer(text))
    noticed = [m for m in [*_NONE_NOTICED.finditer(text), *_NOBODY_DID.finditer(text)]
               if not any(o.start() <= m.start() < o.end() for o in most)]
    noticed = [m for i, m in enumerate(noticed) if not any(o.start() == m.start() for o in noticed[:i])]
    for m in [*most, *noticed]:
        verb = m.group(1).lower()
        # "re-analysed", "rebooked": a verb done again is its verb
        lemmas = set(verbs_of(verb) or verbs_of(verb.rsplit("-", 1)[-1]) or verbs_of(verb.removeprefix("re")))
        if not lemmas or lemmas & _NOT_DOINGS:
            continue
        verbs, counted = _said_of_things(context, key=key)
        if not lemmas & verbs and not set(forms(verb)) & counted:
            findings.append(Finding(
                "unsupported_statement", m.group(), f"“{m.group()}” says what they did, noticed or came to, and "
                "neither a fact nor a key message of the incident says it.", m.start(), reading="completion"))
    return findings


@per_incident
def _said_of_things(context: Mapping | None) -> tuple[frozenset[str], frozenset[str]]:
    """The verbs of the incident's facts (label, key and value) and key messages ("Most residents have
    collected their parcels"), and the forms of the words of its counts' and shares' labels ("Parcels
    collected: 85%"). A noun elsewhere is no doing: "Collection codes: sent again" says nobody collected."""
    if not isinstance(context, Mapping) or not isinstance(context.get("incident"), Mapping):
        return frozenset(), frozenset()
    incident = context["incident"]
    meta = fact_meta(context)
    said = [f"{label} {key.replace('_', ' ')} {incident.get(key)}" for key, label, _unit in meta]
    said += [f"{k.replace('_', ' ')} {v}" for k, v in incident.items() if isinstance(v, str)]
    said += [t for t in context.get("key_messages") or () if isinstance(t, str)]
    counted = [f"{label} {key.replace('_', ' ')}" for key, label, _unit in meta
               if number_value(incident.get(key)) is not None]
    return (frozenset(v for w in re.findall(r"[^\W\d_]+", " ".join(said).lower()) for v in verbs_of(w)),
            frozenset(f for w in re.findall(r"[^\W\d_]+", " ".join(counted).lower()) for f in forms(w)))


@per_incident
def _shares(context: Mapping | None) -> tuple[tuple[str, str, frozenset[str]], ...]:
    """The incident's shares short of the whole ("Offline payments uploaded so far: 97%"): (label, the
    share as people read it, the forms of its label's words but grammar's)."""
    if not isinstance(context, Mapping) or not isinstance(context.get("incident"), Mapping):
        return ()
    incident = context["incident"]
    shares = []
    for key, label, unit in fact_meta(context):
        unit = unit_of(key, unit)
        value = number_value(incident.get(key))
        if value is None or unit not in ("%", "ratio") or not 0 <= value < (100 if unit == "%" else 1):
            continue
        shares.append((label, show(float(value), unit), _label_words(label, key)))
    return tuple(shares)


def _label_words(label: str, key: str) -> frozenset[str]:
    return frozenset(f for w in re.findall(r"[^\W\d_]+", f"{label} {key}".replace("_", " ").lower())
                     if w not in FUNCTION_WORDS and len(w) > 2 for f in forms(w))


# A count of everything affected, whatever its words: "affected_bookings", "Total orders".
_TOTAL = frozenset(f for w in ("affected", "impacted", "total") for f in forms(w))


@per_incident
def _counts(context: Mapping | None) -> tuple[tuple[str, Decimal, frozenset[str]], ...]:
    """The incident's counts: (label, value, the forms of its label's words but grammar's)."""
    if not isinstance(context, Mapping) or not isinstance(context.get("incident"), Mapping):
        return ()
    incident = context["incident"]
    counts = []
    for key, label, unit in fact_meta(context):
        value = number_value(incident.get(key))
        if value is None or unit not in ("count", ""):
            continue
        counts.append((label, value, _label_words(label, key)))
    return tuple(counts)


# "If your domain is still pending, remove it and add it again" on an incident whose key message says
# "there is no need to remove and re-add a domain": advice the incident advises against. The verb of an
# instruction to customers, said by the incident only in clauses it negates, contradicts it.
_TRY = re.compile(r"\b(?:try|trying|consider)\s+([a-z]+ing)\b(?:\s+(?:out|in|off|back|up))?"
                  r"(?:\s+(?:and|or|then)\s+([a-z]+ing)\b)?", re.IGNORECASE)
_ADVICE = (
    re.compile(r"\byou\s+(?:can|could|may|might|should|need\s+to|will\s+need\s+to|have\s+to|must)\s+(?:also\s+)?"
               r"([a-z]+)\b|\bwe\s+(?:recommend|suggest|advise)\s+(?:that\s+you\s+|you\s+)?([a-z]+)\b", re.IGNORECASE),
    # An instruction: a verb that opens a sentence or a clause ("remove it and add it again", "re-push that user").
    # ("To be safe, please resend it": the verb after "please", where a clause opens before it.)
    re.compile(r"(?:^|[.;:!?]\s+|,\s+|\b(?:and|or|then)\s+|\bplease\s+)(?:please\s+)?(?:re-)?([a-z]+)\b",
               re.IGNORECASE),
    # ... or the verb an instruction to try names ("try logging out and reinstalling the app").
    _TRY,
)
_DENIAL = re.compile(r"\b(?:not|no|never|nothing|neither|nor)\b|n['’]t\b", re.IGNORECASE)


def _base_verb(word: str, gerund: bool = False) -> str | None:
    """The verb ``word`` is the base form of, or (``gerund``) the verb a gerund is a form of ("logging")."""
    lower = word.lower()
    if lower in verbs_of(lower):
        return lower
    return next((lemma for lemma in sorted(verbs_of(lower)) if is_inflection(lower, lemma, "VBG")), None) \
        if gerund else None


@functools.lru_cache(maxsize=256)
def _advised_against(evidence: str) -> frozenset[str]:
    """The verbs the evidence says only in clauses it negates ("there is no need to remove")."""
    denied, said = set(), set()
    for clause in _CLAUSE.split(evidence):
        begin, end = _negated(clause, _DENIAL)
        for w in re.finditer(r"[A-Za-z]+", clause):
            (denied if begin < w.start() < end else said).update(verbs_of(w.group().lower()))
    return frozenset(denied - said)


def _negated(clause: str, negations: re.Pattern, before: int | None = None) -> tuple[int, int]:
    """Where the first negation of ``clause`` (up to ``before``) starts, and where what it denies ends:
    the verbs after it ("mark our emails as not spam" still says "mark"), up to a modal that opens the
    next verb ("customers who could not unlock a car can request a refund"). (0, 0) for none."""
    end = len(clause) if before is None else before
    negation = negations.search(clause, 0, end)
    if negation is None:
        return (0, 0)
    modal = _NEXT_MODAL.search(clause, negation.end(), end)
    end = modal.start() if modal else end
    # "ask riders who received a receipt that is not theirs to delete it": an infinitive after the words
    # the negation denies opens what is asked; "no need to remove", "not to resend" deny its verb
    for to in _TO.finditer(clause, negation.end(), end):
        if not set(clause[negation.end() : to.start()].lower().split()) <= _BEFORE_DENIED_TO:
            return (negation.start(), to.start())
    return (negation.start(), end)


_NEXT_MODAL = re.compile(r"\b(?:can|may|might|should|must|will|shall)\b", re.IGNORECASE)
_TO = re.compile(r"\bto\s", re.IGNORECASE)
_BEFORE_DENIED_TO = frozenset("need needs have has want wants ought going required asked expected supposed".split())


def advice_findings(text: str, evidence: str) -> list[Finding]:
    """Instructions to customers whose verb the incident says only in negated clauses."""
    findings, against = [], None
    said = ((m, group, pattern is _TRY) for pattern in _ADVICE for m in pattern.finditer(text)
            for group in range(1, len(m.groups()) + 1) if m.group(group))
    for m, group, gerund in said:
        verb = _base_verb(m.group(group), gerund)
        if verb is None or verb in _LIGHT_VERBS or verb in FUNCTION_WORDS:
            continue  # "…, even for bikes registered as stolen": a word of grammar before a verb's sense
        against = _advised_against(evidence) if against is None else against
        if verb not in against or _denied_here(text, m.start(group)):
            continue  # "you don't need to cancel or contact your bank" says what the incident says
        if _HEADLINE.match(text, m.end(group)) and not text[:m.start(group)].strip(" \t"):
            continue  # "Update - …", "Resolved: …": the post's heading, no instruction
        if _UNABLE.search(text, max(0, m.start(group) - 60), m.start(group)):
            continue  # "customers were unable to modify or cancel reservations": what they could not do
        if not gerund and _past_lemmas(m.group(group), ("VBD",)):
            continue  # "we've checked the files and found no loss": a past tense ("find"), no instruction to "found"
        if verb in _REACH_US and addresses_us(text, m.end(group)):
            continue  # "call 1-800-555-0137" where jobs are "not sent by call": the contacts check reads the channel
        if _GREETS.search(text, 0, m.start(group)):
            continue  # "Heads up, cat parents:": whom a greeting addresses, no instruction
        findings.append(Finding("unsupported_statement", m.group(group), f"“{m.group(group)}” is advice the "
                                "incident advises against.", m.start(group), reading="advised against"))
    return findings


_HEADLINE = re.compile(r"\s*[-–—:]")
_GREETS = re.compile(rf"(?:^|[.!?]\s+)(?:{GREETING})\s*,\s*$", re.IGNORECASE)
_REACH_US = frozenset("call phone ring text email message write contact".split())
_UNABLE = re.compile(r"\b(?:unable|able|failed|trying|tried)\s+to\s+(?:[a-z]+\s+(?:or|and)\s+)?$", re.IGNORECASE)


def _denied_here(text: str, at: int) -> bool:
    """Whether a negation before ``at`` in its clause denies the verb there, as the incident's own
    negations are read."""
    begin = max((m.end() for m in _CLAUSE.finditer(text, 0, at)), default=0)
    start, end = _negated(text[begin:at + 1], _DENIAL)
    return start < at - begin < end


_LIGHT_VERBS = frozenset("be have do get make go come see take give let know keep use will would shall should can "
                         "could may might must need please".split())


# "No action is needed on your side" on an incident whose approved actions ask administrators to review
# what happened: telling customers they need do nothing is the incident's to say, and it says the
# opposite when an approved action asks something of them. A sentence that opens with a condition ("If
# you're already charging, there's nothing you need to do") speaks of those it names only.
_NOTHING_TO_DO = re.compile(
    r"\bno\s+(?:further\s+)?action\s+(?:is\s+|will\s+be\s+)?(?:needed|required|necessary)"
    r"|\b(?:do\s+not|don['’]t)\s+need\s+to\s+do\s+anything|\bnothing\s+(?:(?:you|customers)\s+need\s+to|for\s+you\s+to)\s+do"
    # "you don't need to check or restart anything"
    r"|\b(?:do\s+not|don['’]t)\s+need\s+to\s+[a-z]+(?:\s+(?:or|and)\s+[a-z]+)?\s+anything\b"
    r"|\bthere['’]s\s+nothing\s+(?:you\s+need\s+to\s+)?do",
    re.IGNORECASE,
)
_NOTHING_SAID = re.compile(r"\bno\s+(?:further\s+)?action|\b(?:do\s+not|don['’]t|doesn['’]t|does\s+not)\s+need|"
                           r"\bnothing\s+(?:to\s+do|you\s+need)|\bno\s+need\b", re.IGNORECASE)
_ASKS_CUSTOMERS = re.compile(
    r"^\s*(?:advise|tell|ask|suggest|recommend|remind)\w*\b"
    r"|\b(?:customers?|users?|administrators?|admins?|members?|owners?|shoppers?|applicants?|riders?|drivers?|"
    r"you)\s+(?:(?:who|whose|that)\s+[^,.;]{1,60}?\s+)?(?:can|could|should|may|must|need\s+to|have\s+to)\b"
    # an instruction addressed to the reader: "If your systems need tight time accuracy, check your clients' offset"
    r"|\byour\b",
    re.IGNORECASE,
)
_CONDITION_OPENS = re.compile(r"\s*(?:if|when|unless|in\s+case|for\s+those|once)\b", re.IGNORECASE)


def nothing_to_do_findings(text: str, context: Mapping | None, evidence: str) -> list[Finding]:
    """Telling customers they need do nothing, where the incident's approved actions ask something of
    them and the incident does not say so itself."""
    said = list(_NOTHING_TO_DO.finditer(text))  # the text first: the evidence is long, and most texts say nothing
    if not said or not isinstance(context, Mapping) or _NOTHING_SAID.search(evidence):
        return []
    asking = [a for a in context.get("approved_actions") or () if isinstance(a, str) and _ASKS_CUSTOMERS.search(a)]
    if not asking:
        return []
    findings = []
    for m in said:
        opens = [b.end() for b in SENTENCE_END.finditer(text, 0, m.start())]
        condition = _CONDITION_OPENS.match(text, opens[-1] if opens else 0)
        if not condition or _asked_of_them(text[condition.end() : m.start()], asking):
            findings.append(Finding("unsupported_statement", m.group(), f"“{m.group()}” tells customers they need "
                                    "do nothing, and the incident's approved actions ask something of them.",
                                    m.start(), reading="nothing to do"))
    return findings


# "You won't need to tap Recognize text on anything" where an approved action says "If a document is still not
# searchable, open it and tap Recognize text": what the text says customers need not do is what an approved
# action asks of them (its verb where it asks it, and a word of its object), and no action says it need not be
# done.
_NEED_NOT = re.compile(led_by("dnw", r"\b(?:no\s+need|(?:do\s+not|don['’]t|does\s+not|doesn['’]t|will\s+not|won['’]t)"
                                     r"\s+need|needn['’]t)\s+(?:to\s+)?([a-z]+(?:(?!\s[-–—]\s)[^,.;:!?]){0,40}\b)"),
                       re.IGNORECASE)


def need_not_findings(text: str, context: Mapping | None) -> list[Finding]:
    """Telling customers they need not do what an approved action asks of them."""
    said = list(_NEED_NOT.finditer(text))
    if not said or not isinstance(context, Mapping):
        return []
    actions = [a for a in context.get("approved_actions") or () if isinstance(a, str)]
    findings = []
    for m in said:
        words = re.findall(r"[^\W\d_]+", m.group(1).lower())
        while words and words[0] in _PASSIVE_HELPERS:
            words = words[1:]  # "don't need to be scanned again": the verb is "scan"
        verb = frozenset(verbs_of(words[0])) if words else frozenset()
        rest = [frozenset(forms(w)) for w in words[1:] if len(w) > 2 and w not in FUNCTION_WORDS
                and w not in _NOT_OBJECTS and not w.endswith("ly")]
        if not verb or verb & _LIGHT_VERBS:
            continue  # "no need to do anything" is the other reading's
        how = {a: _asks(a, verb) for a in actions}
        # "there's no need to call" says it of the call an action asks, whatever the object.
        if "denies" not in how.values() and any(
                way == "asks" and (not rest or any(f & _words_of(a) for f in rest)) for a, way in how.items()):
            findings.append(Finding("unsupported_statement", m.group().strip(), f"“{m.group().strip()}” tells "
                                    "customers they need not do what an approved action asks of them.",
                                    m.start(), reading="nothing to do"))
    return findings


_PASSIVE_HELPERS = frozenset("be been get have".split())
_NOT_OBJECTS = frozenset("again anything everything something".split())
# The rest of an action's clause, to a condition it sets: "Call the office if results still do not load" asks a
# call all the same.
_CLAUSE_AFTER = re.compile(r"(?:(?!\b(?:if|when|unless|until|once|because|while)\b)[^,;:.!?])*", re.IGNORECASE)
# Where an action asks its verb of the reader: at a clause's start ("open it and tap Recognize text") or
# after a modal or "to" ("customers should check", "you can cancel"); "wait before visiting" asks no visit.
_ASKED_AT = re.compile(r"(?:^|[,;:]\s*|\b(?:and|or|then|please|can|could|should|may|must|to)\s+)$", re.IGNORECASE)


def _asks(action: str, verb: frozenset[str]) -> str:
    """How ``action`` says ``verb``: "asks" ("open it and tap Recognize text"), "denies" ("Customers who
    already reported an outage do not need to report it again", "Do not rescan kegs") or ""."""
    how = ""
    for w in re.finditer(r"[^\W\d_]+", action):
        if not verb & frozenset(verbs_of(w.group().lower())):
            continue
        after = _CLAUSE_AFTER.match(action, w.end())
        if _DENIAL.search(clause_before(action, w.start())) or _DENIAL.search(after.group()):
            return "denies"  # "replies do not need to be made today" too
        if _ASKED_AT.search(action, 0, w.start()):
            how = "asks"
    return how


def _words_of(text: str) -> frozenset[str]:
    return frozenset(f for w in re.findall(r"[^\W\d_]+", text.lower()) for f in (*forms(w), *verbs_of(w)))


def _asked_of_them(condition: str, asking: list[str]) -> bool:
    """Whether the people a condition names ("If your renewal failed during that time, …") are those an
    approved action asks something of ("Customers whose renewal failed should submit it again"): each of
    its words of substance, two or more, in one action."""
    said = [frozenset(forms(w)) for w in re.findall(r"[^\W\d_]+", condition.lower())
            if len(w) > 2 and w not in FUNCTION_WORDS and w not in _WHEN_WORDS]
    if len(said) < 2:
        return False
    return any(all(f & words for f in said) for words in (
        frozenset(f for w in re.findall(r"[^\W\d_]+", action.lower()) for f in forms(w)) for action in asking))


_WHEN_WORDS = frozenset("time period window today yesterday morning afternoon evening night".split())


# "Your refund will not be delayed", "queued messages won't be lost": what the text says will not happen is
# a guarantee, the incident's to give. The incident must deny the same verb somewhere ("refunds are not
# delayed", "nothing will be lost").
_WILL_NOT = re.compile(led_by("sw", r"\b(?:will\s+not|won['’]t|will\s+never|shall\s+not)\s+(?:be|have\s+been)\s+"
                              r"(?:[a-z]+ly\s+)?([a-z]+)\b"
                              # ... and what it will not do to the reader's things: "a late check-in won't delay
                              # your care"
                              r"|\b(?:will\s+not|won['’]t|will\s+never)\s+(?:[a-z]+ly\s+)?(?!be\b|have\b|need\b)"
                              r"([a-z]+)\s+(?:your\s+[\w-]+|you)\b"), re.IGNORECASE)


@functools.lru_cache(maxsize=256)
def _denied(evidence: str) -> frozenset[str]:
    """The verbs the evidence says in a clause it negates ("nobody was charged" too), whatever it says
    elsewhere."""
    denied = set()
    for clause in _CLAUSE.split(evidence):
        # each negation of the clause: "sites that did not receive the notice will not be assessed"
        for negation in _DENIAL_OR_NOBODY.finditer(clause):
            modal = _NEXT_MODAL.search(clause, negation.end())
            for w in re.finditer(r"[A-Za-z]+", clause[negation.start() : modal.start() if modal else len(clause)]):
                denied.update(verbs_of(w.group().lower()))
    return frozenset(denied)


_DENIAL_OR_NOBODY = re.compile(_DENIAL.pattern + r"|\b(?:nobody|none)\b", re.IGNORECASE)


# ... and so is an assurance that none of something came to harm: "no metrics were dropped", "nothing was
# lost", "none of the orders were charged twice" (not a label quoted: "'No substitutions' had been selected").
_NONE_WAS = re.compile(r"(?<!['‘’\"“])\b(?:no|none\s+of\s+(?:the|your|our)|nothing)\b(?:\s+[\w’'-]+){0,3}?\s+"
                       r"(?:was|were|has\s+been|have\s+been|had\s+been|got)\s+(?:[a-z]+ly\s+)?([a-z]+)\b"
                       # ... or that it never did: "card balances were never changed"
                       r"|\b(?:was|were|has\s+been|have\s+been|had\s+been)\s+never\s+([a-z]+)\b"
                       # ... or with no verb: "every reading will sync, with nothing missing"
                       r"|(?<!['‘’\"“])\b(?:nothing|none|no\s+[a-z-]+)\s+(missing|lost)\b(?=\s*(?:[,;:.!?)]|$))",
                       re.IGNORECASE)


# ... or that none of it did something: "no temperature excursions occurred", "no orders failed during the window".
_NONE_OPENS = re.compile(r"(?<!['‘’\"“])\b(?:no|none\s+of\s+(?:the|your|our)|nothing)\s+"
                         r"(?!longer\b|later\b|need\b|one\b)", re.IGNORECASE)
_NONE_WORDS = 4  # "no temperature excursions occurred": the verb within four words
# Where the words after "no" stop being its subject: an auxiliary (the _NONE_WAS reading's), or a relative
# clause's own subject ("nothing you bought has gone missing": "bought" is not its verb).
_NOT_ITS_VERB = frozenset("is are was were be been being has have had got will would can could may might should "
                          "you we they i".split())
_WORD_OR_MARK = re.compile(r"[^\W\d_][\w’'-]*|[^\w\s]")


def _none_did(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, verb) of each "no X <verb in the past>" of the text."""
    for m in _NONE_OPENS.finditer(text):
        subject = not m.group().lower().startswith("nothing")  # "nothing changed"; "no orders failed"
        for n, word in enumerate(_WORD_OR_MARK.finditer(text, m.end())):
            lower = word.group().lower()
            if n >= _NONE_WORDS or not lower[0].isalpha() or lower in _NOT_ITS_VERB:
                break
            if (n or not subject) and any(is_inflection(lower, verb, "VBD") for verb in verbs_of(lower)):
                yield m.start(), word.end(), lower
                break


def _said_not(text: str) -> Iterator[tuple[int, int, str, str, str]]:
    """(start, end, verb, reading, what it does) of each thing the text says will not or did not happen."""
    for pattern, reading, says in ((_WILL_NOT, "guarantee", "promises"), (_NONE_WAS, "assurance", "assures")):
        for m in pattern.finditer(text):
            yield m.start(), m.end(), next(g for g in m.groups() if g).lower(), reading, says
    for start, end, verb in _none_did(text):
        yield start, end, verb, "assurance", "assures"


_BOUND = re.compile(r"[^.;:!?]*\d")
# What the company observed ("no further errors have been detected"), and what the scope checks read
# ("no other services were affected").
_OBSERVED = frozenset("report observe detect see notice find identify record receive log affect impact".split())


def guarantee_findings(text: str, evidence: str, families: Callable[[], Iterable] = tuple) -> list[Finding]:
    """What the text says will not happen, or that none of something came to harm, where the incident
    denies no such thing. A claim family's words (``families()``: "no data was lost" is the data safety
    family's, which reads its own support, "Data loss: none") are left to that family."""
    findings, denied, named = [], None, None
    for start, end, verb, reading, says in _said_not(text):
        verbs = set(verbs_of(verb))
        if not verbs or verbs & _LIGHT_VERBS or verb in _LIGHT_VERBS:
            continue
        if reading == "assurance" and (_BOUND.match(text, end) or verbs & _OBSERVED):
            continue  # "no webhook was delayed by more than 41 minutes": a bound, which the numbers check reads;
            # "no further issues have been reported": what the company saw, no assurance
        if reading == "guarantee" and _CONDITION_OPENS.match(clause_before(text, start)):
            continue  # "If a kiosk won't check you in, …": a condition, which promises nothing
        said = text[start:end]
        named = [f for f in families() if family_problem(f) is None] if named is None else named
        if any(family_makes_claim(said, family) for family in named):
            continue
        denied = _denied(evidence) if denied is None else denied
        if not verbs & denied:
            findings.append(Finding("unsupported_statement", said, f"“{said}” {says} what the incident does not: "
                                    "none of its facts, key messages or approved actions says so.", start,
                                    reading=reading))
    return findings


# "These sessions will remain connected until the issue is resolved", "your application will keep its
# place in the queue": a promise that something lasts is the incident's to make. It passes where one of
# the incident's clauses says the same lasting ("Vouchers due to expire today will remain valid until 29
# January", "Sessions that were already connected are continuing" does not promise they stay so).
_WILL_LAST = re.compile(r"\b(?:will|['’]ll)\s+(?:still\s+|also\s+)?(remain|stay|keep)\s+([^.;:!?]*)", re.IGNORECASE)
_LAST_END = re.compile(r",|\s(?:and|but|so|until|while|once|when|if|as|because|throughout|during)\s", re.IGNORECASE)
_LASTING = frozenset(f for w in ("remain", "stay", "keep", "kept") for f in forms(w))
_OURS_BEFORE = re.compile(r"\b(?:we|our|us)\b|\bwe['’]", re.IGNORECASE)
_KEEP_DOING = re.compile(r"\s*(?:you|everyone|customers|users|this\s+page|an?\s+(?:close\s+)?eye|[^\W\d_]+ing)\b",
                         re.IGNORECASE)


def lasting_findings(text: str, evidence: str) -> list[Finding]:
    """Promises that something lasts which no clause of the incident makes."""
    findings = []
    for m in _WILL_LAST.finditer(text):
        end = _LAST_END.search(m.group(2))
        said = m.group(2)[: end.start() if end else len(m.group(2))]
        words = {f for w in re.findall(r"[^\W\d_]+", said.lower()) if w not in FUNCTION_WORDS for f in forms(w)}
        begin = max((c.end() for c in _CLAUSE.finditer(text, 0, m.start())), default=0)  # the promise's clause
        if not words or is_negated(text, m.start()) or _OURS_BEFORE.search(text, begin, m.start()) or \
                _KEEP_DOING.match(said):
            continue  # "we'll keep you posted", "we will keep monitoring": the company's own doing
        if any(_LASTING & forms_of and words <= forms_of for forms_of in _clause_forms(evidence)):
            continue
        found = f"{m.group()[: m.start(2) - m.start()]}{said}".strip()
        findings.append(Finding("unsupported_statement", found, f"“{found}” promises what the incident does not: "
                                "none of its facts, key messages or approved actions says it will last.",
                                m.start(), reading="lasting"))
    return findings


# "Reports made during the outage are being inspected first", "we'll work through them oldest first", "all 57
# have now gone to the cutting floor, largest jobs first", "alerts will still be sent straight away, ahead of
# the delayed reports", "Builds for Pro teams are being prioritised": the order in which waiting work is done
# is the incident's to say. It passes where the incident uses the order's own word ("first", "ahead",
# "priority"); "in the order they were made" (first in, first out) changes no order, and "we are treating
# this as a priority" orders nothing.
_ORDER = re.compile(
    r"\b(?:will|['’]ll|going\s+to|are|is|be|being|have|has|had|were|was)\b[^.;:!?]{0,60}?\b("
    r"[\w'’-]+\s+first(?=\s*(?:[.,;:!?)]|$|\s(?:once|when|so|to|and|before|after|while|until|as)\b))"
    r"|ahead\s+of|prioriti[sz](?:e|es|ed|ing)\b|give\s+(?:[\w'’-]+\s+){0,3}?priority"
    r"|(?:front|top)\s+of\s+the\s+(?:queue|line))",
    re.IGNORECASE)
_ORDER_WORD = re.compile(r"first|ahead|priorit|front\s+of|top\s+of", re.IGNORECASE)
_ONLY_CONSIDERED = re.compile(r"\b(?:look\s+at|looking\s+at|consider|considering|see\s+if\s+we\s+can)\s+$",
                              re.IGNORECASE)


def order_findings(text: str, evidence: str) -> list[Finding]:
    """An order of waiting work ("oldest first", "ahead of", "prioritised") that the incident does not give."""
    if not _ORDER_WORD.search(text):
        return []  # most texts give no order: the long pattern is not tried on them
    findings = []
    for m in _ORDER.finditer(text):
        said = m.group(1)
        if _ONLY_CONSIDERED.search(text, max(0, m.start(1) - 24), m.start(1)):
            continue  # "we will look at prioritising it": a request considered, no order given
        if re.search(re.escape(_ORDER_WORD.search(said).group()), evidence, re.IGNORECASE):
            continue
        findings.append(Finding("unsupported_statement", said, f"“{said}” gives an order in which the work "
                                "will be done, and the incident does not: none of its facts, key messages or "
                                "approved actions says so.", m.start(1), reading="order"))
    return findings


@functools.lru_cache(maxsize=256)
def _clause_forms(evidence: str) -> tuple[frozenset[str], ...]:
    """The forms of each sentence's words of the evidence (a semicolon joins what one statement says: "Leave
    queued jobs in the queue; they keep their place")."""
    return tuple(frozenset(f for w in re.findall(r"[^\W\d_]+", clause.lower()) for f in forms(w))
                 for clause in re.split(r"[.!?\n]", evidence) if clause.strip())


def find(text: str, support: Support) -> list[Violation]:
    """Work said to be done, advice and "nothing to do" against the incident, in reading order."""
    text, evidence = prose(text, support), support.claim_evidence
    findings = [
        *completion_findings(text, evidence),
        *all_done_findings(text, support.context),
        *most_did_findings(text, support.context, support.context_key),
        *advice_findings(text, evidence),
        *nothing_to_do_findings(text, support.context, evidence),
        *need_not_findings(text, support.context),
        *guarantee_findings(text, evidence, support.rules.families),
        *lasting_findings(text, evidence),
        *order_findings(text, evidence),
    ]
    return [violation_of(f, text) for f in sorted(findings, key=lambda f: f.start)]

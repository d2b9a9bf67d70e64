"""Clauses that instruct the model rather than inform customers: they support nothing (docs/contract.md,
'Fact and claim checks'). Plain Python: no Django here."""

from __future__ import annotations

import functools
import re

from agents.core.patterns import compile_pattern

# Words aimed at the model rather than at customers: "ignore previous instructions", "say that ...",
# "call it P3", "widen it to all regions", "promise 10 minutes". A clause carrying one is an
# instruction, not a fact: it licenses no restricted claim, and no number, region or severity label.
# The verbs count only where an order starts (the clause's start, or after "and", "then", "to",
# "please", ":"), and the ones that are also ordinary words in incident data ("state of payments",
# "write errors", "call volumes") only with an object ("state that", "call it P3"; "call the hotline" is
# what an approved action tells customers).
# On RE2 although it is ours: the `.*` between two word lists backtracks on incident data (which is
# untrusted), 12 s for a 100 KB clause of "ignore ignore ..." with `re`.
_ORDER = (
    r"(?:^|[,:(]|\b(?:and|then|please|just|instead|to|now|also)\b)\s*"
    r"(?:(?:please|just|also|now|instead|simply)\s+)*"
)
INSTRUCTION = compile_pattern(
    r"\b(?:ignore|disregard|forget|override)\b.*\b(?:instructions?|rules?|prompts?|guidelines?|polic(?:y|ies))\b"
    r"|\bpretend\b|\b(?:assistant|chatbot|language\s+model)\b"
    r"|\byou\s+(?:must|should|need\s+to|have\s+to|are\s+to)\b"
    # ("respond to reopened requests", "reply to the email we sent" is what customers do)
    + "|" + _ORDER + r"(?:say|tell|announce|promise|guarantee)\b"
    + "|" + _ORDER + r"(?:respond|reply)(?:\s+(?:with|that|only|saying|by|as)\b|\s*(?:[:,]|$))"
    + "|" + _ORDER + r"(?:state|write|claim|confirm)\s+(?:that|it)\b"
    + "|" + _ORDER + r"(?:mark|label|treat|describe|widen|extend|classify)\s+(?:it|this|that|them|the\s+\w+)\b"
    # "call it P3", "call the outage minor"; "call the hotline if …" tells customers whom to phone
    + "|" + _ORDER + r"call\s+(?:it|this|that|them|the\s+\w+\s+(?:an?\s+|p\d|sev|minor|major|critical|resolved))\b"
)
# A dot inside a word ends no clause: a decimal point ("3.4%"), "p.m.", "status.example.com".
CLAUSE = re.compile(r"(?:[^.;!?\n]|\.(?=\w))+[.;!?\n]?")


# "Call us if you need to change your appointment date": what customers may need is a condition of
# the advice, not an order to the model.
_CUSTOMERS_NEED = re.compile(r"\b(?:if|when|whenever|unless|whether|in\s+case)\s+you\s+"
                             r"(?:must|should|need\s+to|have\s+to)\b", re.IGNORECASE)


# "Tell us if someone in your home is vulnerable": what customers tell the company, no order to the model
# (read before INSTRUCTION, which is RE2's and so cannot look ahead past its "tell").
_TELL_US = re.compile(r"\btell\s+(?=(?:us|our)\b)", re.IGNORECASE)


# An approved action that says what to tell customers ("tell members who were refused entry that the pass
# will be returned within 7 days") approves what it says: its "tell" is the action, no order to the model.
_TELL_CUSTOMERS = re.compile(r"^\s*(?:please\s+)?(?:tell|remind|inform)\s+(?!(?:it|this|that|them|us)\b)",
                             re.IGNORECASE)


def as_told(action: str) -> str:
    """An approved action without the "tell" that opens it: what customers are to be told."""
    return _TELL_CUSTOMERS.sub("", action, count=1)


@functools.lru_cache(maxsize=1024)
def without_instructions(text: str) -> str:
    """``text`` with every clause that instructs the model removed (the texts of one incident are
    read again for each text checked against it: remembered)."""
    return " ".join(c.strip() for c in CLAUSE.findall(text)
                    if c.strip() and not INSTRUCTION.search(_TELL_US.sub("let ", _CUSTOMERS_NEED.sub(" if ", c))))



"""What a check finds: one violation of the customer-text guard (docs/contract.md, 'Fact and claim
checks'). Plain Python: no Django here."""

from __future__ import annotations

from dataclasses import dataclass

# The checks a violation names, in the order callers rely on: the first violation's check becomes the
# stop reason (agents.core.guard.checks runs them and sorts what they find in this order).
CHECKS = (
    "no_new_facts",
    "new_incident_id",
    "new_severity_label",
    "new_region",
    "restricted_claims",
    # Claims checked against the incident (agents.core.guard.incident_claims, docs/guard.md)
    "state_claim",
    "scope_claim",
    "liability",
    "data_safety",
    "time_commitment",
    # Links, contacts and markup (agents.core.guard.contacts)
    "unknown_contact",
    "markup",
    # agents.core.guard.internal: a detail customers must not see. Last: where the number or id it
    # carries is also unsupported (an internal fact supports nothing), that stop comes first, as it always has.
    "internal_detail",
    # Well-formed text that says something (agents.core.guard.wellformed): after the facts, so a text
    # with an unsupported number stops for that number.
    "malformed_text",
    "uninformative",
    # agents.core.guard.grounding: a sentence that states what nothing in the incident supports. Last: the
    # named checks explain what they find more precisely, and grounding reads only what they left.
    "unsupported_statement",
)


def family_check(check: str) -> str:
    """The check a claim family's finding is reported under: the family's own where the guard has it
    (a family stored with a check from a later version, or none, reports as a restricted claim)."""
    return check if check in CHECKS else "restricted_claims"


@dataclass(frozen=True)
class Violation:
    check: str  # one of CHECKS
    found: str  # the offending token or phrase, as written in the checked text
    message: str
    family: str = ""  # restricted_claims: the claim family the words belong to
    # Where a check can say it: the sentence that holds the finding, and the [start, end) offsets of
    # the words that make it, into that sentence.
    sentence: str = ""
    words: tuple[tuple[int, int], ...] = ()
    # An unsupported statement that one of the guard's named readings found ("advised against", "nothing
    # to do", "denial", "done to customers") rather than grounding's reading of each word: no vocabulary
    # term can lift it, so the learning loop does not propose one (reviewer.learning.miner).
    reading: str = ""

    def reported(self, check: str) -> dict:
        """The guard's form of the violation under its stop reason ``check``. The sentence and its
        words are there only when a check set them, so what is stored keeps its shape."""
        reported = {"check": check, "message": self.message, "found": self.found}
        if self.sentence:
            reported["sentence"] = self.sentence
        if self.words:
            reported["words"] = [list(span) for span in self.words]
        if self.reading:
            reported["reading"] = self.reading
        return reported

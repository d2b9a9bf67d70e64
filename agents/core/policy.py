"""Policies as plain data: the budgets, allowlists and guard rules a run executes under.

The defaults here are the contract's defaults. The Django side stores policies as rows that admins
edit and converts them into these objects; every run keeps ``policy.to_dict()`` as its snapshot.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from agents.core.vocabulary import default_terms

DECISIONS = ("approve", "revise", "escalate")

# type -> high risk?
DEFAULT_ISSUE_TYPES: dict[str, bool] = {
    "overconfidence": False,
    "missing_uncertainty": False,
    "contradiction": False,
    "scope_leak": False,
    "policy_violation": True,
    "legal_risk": True,
}

# The checks a claim family can fail, in the order the guard reports them (agents.core.guard.violation.CHECKS).
CLAIM_CHECKS: dict[str, str] = {
    "restricted_claims": "restricted claim",
    "state_claim": "the incident's state",
    "liability": "money and blame",
    "data_safety": "data safety",
    "time_commitment": "time commitment",
}
# What supports a family's claim, besides the evidence making the same claim (docs/guard.md).
SUPPORTS: dict[str, str] = {
    "evidence": "the incident's facts make the same claim",
    "resolved": "the incident is resolved (or its facts say so)",
    "recovering": "the incident is monitoring or resolved (or its facts say so)",
    "ongoing": "the incident is not resolved",
    "investigating": "the incident is still being investigated (its cause is not identified)",
    "identified": "the incident's cause is identified (identified, monitoring or resolved)",
    "fixed": "a fix is in place: the incident is monitoring or resolved, or its facts say the fix is in",
    "time": "the statement is about the next update; otherwise the facts must make it",
    "in_progress": "a maintenance window is in progress (before it starts, or after it ends, it is not)",
}
HEDGING = {"any": "negations, conditions, expectations and hedge words", "negation": "only a negation"}


@dataclass(frozen=True, kw_only=True)
class ClaimFamily:
    """One restricted claim and the other words it is made in (docs/contract.md, 'Fact and claim checks').

    ``pattern`` is the canonical claim, ``paraphrases`` its other wordings and inflections: each a
    case-insensitive RE2 pattern, matched in linear time (agents.core.patterns). Every match gets the
    same hedge handling; ``hedges`` are extra words that hedge this family only ("about 45 minutes"
    is an estimate, not a promise). A ``strict_only`` family applies only when the context asks to
    avoid absolute guarantees: firm time promises.
    """

    name: str = ""  # shown in the violation; "" for a bare pattern (snapshots from before families)
    pattern: str
    paraphrases: tuple[str, ...] = ()
    hedges: tuple[str, ...] = ()
    strict_only: bool = False
    # The check a match fails (its stop reason is patch_violation:<check> / invalid_answer:<check>).
    check: str = "restricted_claims"
    # What supports the claim (SUPPORTS): the evidence making it too, or the incident's state.
    support: str = "evidence"
    # Patterns whose unhedged match in the evidence also supports the claim ("Data loss: none"
    # supports "no data was lost"); the family's own patterns always do.
    supported_by: tuple[str, ...] = ()
    # "any": a negation, condition, expectation or hedge word lets a match pass; "negation": only a
    # negation does ("if you were charged twice, we will refund you" is still a promise).
    hedging: str = "any"

    @property
    def patterns(self) -> tuple[str, ...]:
        return (self.pattern, *self.paraphrases)

    @property
    def timed(self) -> bool:
        """Whether the family's claim is a time (what a clause of time does not make a condition)."""
        return self.support == "time"

    @property
    def support_patterns(self) -> tuple[str, ...]:
        return (*self.patterns, *self.supported_by)

    @classmethod
    def of(cls, item: Any) -> ClaimFamily:
        """A family from a dataclass, a snapshot's dict, or a bare pattern."""
        if isinstance(item, ClaimFamily):
            return item
        if isinstance(item, dict):
            known = {f.name for f in dataclasses.fields(cls)}
            data = {k: v for k, v in item.items() if k in known}
            for key in ("paraphrases", "hedges", "supported_by"):
                data[key] = tuple(data.get(key) or ())
            return cls(**data)
        return cls(pattern=item)


# A number of minutes or hours, written as people write it: "45", "forty-five", "an", "a couple of".
_QUANTITY = (
    r"(?:\d+(?:[.,]\d+)?|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen"
    r"|(?:twenty|thirty|forty|fifty|sixty|ninety)(?:[\s-](?:one|two|three|four|five|six|seven|eight|nine))?"
    r"|a\s+couple\s+of|a\s+few|half\s+an?|a\s+half|a\s+dozen|a\s+quarter\s+of\s+an?)"
)
_TIME_UNIT = r"(?:minutes?|mins?|hours?|hrs?|days?)"
_ESTIMATE = r"(?:(?:about|around|approximately|roughly|an\s+estimated|some)\s+)?"

# A thing given for nothing: "with free overnight shipping", "a free week of Plus", "a free retake" ("feel
# free", "free of errors" and "a free helpline" give nothing).
# A charge said to be waived by naming its absence: "it will complete with no conversion fee", "at no extra
# cost" (what the incident says of its own charges supports it: the family's supported_by).
NO_CHARGE = r"\b(?:with|at|for)\s+no\s+(?:[\w-]+\s+)?(?:charges?|costs?|fees?)\b"
# "… so this is now closed": the update itself said to be closed.
THIS_CLOSED = r"\b(?:this|it)\s+(?:is|has\s+been)\s+now\s+closed\b"
# "This will be our last update on this issue", "no further updates are planned": the update said to close it.
FINAL_UPDATE = (r"\b(?:this|it)\s+(?:is|will\s+be|['’]s)\s+(?:our|the)\s+(?:last|final)\s+update\b"
                r"|\bno\s+(?:further|more)\s+updates\s+(?:are|will)\b")
# "… and we'll dispatch them the same day", "everyone who calls will be seen the same day": a promise of when.
SAME_DAY = r"\b(?:will|['’]ll)\b[^.;!?\n]{0,60}?\b(?:on\s+)?the\s+same\s+day\b"
# "Fix applied: 11:20 GMT": a fact that records the fix by its key or label says a fix is in place.
FIX_APPLIED = r"\bfix(?:es)?\s+(?:applied|deployed|implemented|released|rolled\s+out)\b"
# "It's sorted now", "all sorted": working again, in everyday words, at the end of its clause ("sorted by
# date" is an order).
SORTED = (r"(?:\b|['’])(?:s|is|are|has\s+been|have\s+been)\s+(?:now\s+)?(?:all\s+)?sorted(?:\s+out)?(?:\s+now)?"
          r"\s*(?:[.,;:!?—–-]|$)|\ball\s+sorted\b")

FREE_THINGS = (r"\bfree\s+(?:[\w-]+\s+){0,2}?(?:shipping|delivery|postage|months?|weeks?|days?|years?|trials?|"
               r"packs?|rides?|swaps?|washes|wash|rentals?|hire|retakes?|replacements?|filters?|refills?|upgrades?|"
               r"subscriptions?|sessions?|class(?:es)?|lessons?|tickets?|nights?|drinks?|meals?|plays?|credits?)\b")

# The defaults: the common ways an incident update over-claims. The first pattern of each family is
# the contract's; the rest are its paraphrases. Installed as rows by migration 0006.
DEFAULT_CLAIM_FAMILIES: tuple[ClaimFamily, ...] = (
    ClaimFamily(name="resolution", support="resolved", pattern=r"\bresolved\b", paraphrases=(
        r"\b(?:outage|issue|problem|incident|disruption)\s+is\s+(?:now\s+)?(?:over|behind\s+us|gone)\b",
        r"\bno\s+longer\s+(?:an?\s+)?(?:issue|problem)\b",
        r"\bmarked\s+(?:as\s+)?resolved\b",
    )),
    # Full recovery is what a resolved incident says; a recovery ("service has recovered", "back to
    # normal") is what monitoring says too: a fix is in and the team watches it hold.
    ClaimFamily(name="recovery", support="resolved", pattern=r"\bfully\s+recovered\b", paraphrases=(
        r"\b(?:fully|completely|entirely|totally)\s+(?:restored|recovered|operational|functional|back)\b",
    )),
    ClaimFamily(name="recovered", support="recovering", pattern=r"\b(?:has|have)\s+(?:now\s+)?recovered\b",
                paraphrases=(
        r"\b(?:service|services|payments|checkouts?|everything|all\s+\w+)\s+(?:is|are|has\s+been|have\s+been)"
        r"\s+(?:now\s+)?restored\b",
        r"\bback\s+to\s+normal\b",
        r"\b(?:operating|running|working)\s+normally\b",
        r"\bnormal\s+(?:service|operations?)\s+(?:has|have)\s+resumed\b",
    )),
    ClaimFamily(name="closure", support="resolved", pattern=r"\bincident\s+closed\b", paraphrases=(
        r"\b(?:incident|issue|case|ticket)\s+(?:is|has\s+been|was)\s+(?:now\s+)?closed\b",
        r"\bclos(?:ed|ing)\s+(?:the|this)\s+(?:incident|issue)\b",
        THIS_CLOSED,
        FINAL_UPDATE,
    )),
    ClaimFamily(name="stability", support="recovering", pattern=r"\ball\s+payments\s+(?:are|is)\s+stable\b",
                paraphrases=(
        r"\b(?:payments|checkouts?|services?|systems?|platform|everything|things)\s+(?:is|are)\s+(?:now\s+)?"
        r"(?:fully\s+|completely\s+)?stable\b",
        r"\bstable\s+again\b",
        r"\bstabili[sz]ed\b",
    )),
    ClaimFamily(name="guarantees", pattern=r"\bguarantee(?:s|d|ing)?\b", paraphrases=(
        r"\bwe\s+promise\b",
        r"\bwe\s+(?:can\s+)?assure\s+you\b",
        r"\bwe\s+(?:are\s+)?commit(?:ted)?\s+to\s+(?:having|restoring|fixing|resolving)\b",
    )),
    ClaimFamily(name="absolute assurances", pattern=r"\bnever\s+happen\s+again\b", paraphrases=(
        r"\b(?:cannot|can[’']t|won[’']t|will\s+not)\s+happen\s+again\b",
        r"\b(?:100|one\s+hundred)\s*(?:%|percent)\s+(?:sure|certain|safe|reliable)\b",
        r"\b(?:completely|totally|perfectly)\s+safe\b",
        r"\bnothing\s+to\s+worry\s+about\b",
        r"\b(?:absolutely|definitely|certainly)\s+(?:will|be|is|are)\b",
        r"\bwith\s+(?:absolute\s+)?certainty\b",
    )),
    ClaimFamily(
        name="time promises",
        pattern=rf"\b(?:within|in\s+under|in\s+less\s+than|in\s+no\s+more\s+than)\s+(?:the\s+next\s+)?"
        rf"{_ESTIMATE}{_QUANTITY}[\s-]*{_TIME_UNIT}\b",
        paraphrases=(
            rf"\b(?:will|shall|going\s+to)\s+(?:\w+\s+){{0,4}}?in\s+{_ESTIMATE}{_QUANTITY}[\s-]*{_TIME_UNIT}\b",
            r"\bby\s+\d{1,2}(?::\d{2}(?:\s*(?:am|pm|utc|gmt|cet)\b)?|\s*(?:am|pm|a\.m\.|p\.m\.|o[’']clock))",
            r"\bby\s+(?:noon|midnight|tonight|tomorrow|(?:the\s+)?end\s+of\s+(?:the\s+)?(?:day|hour))\b",
            r"\bat\s+the\s+(?:very\s+)?latest\b",
            r"\bno\s+later\s+than\b",
        ),
        hedges=("estimate", "estimated", "estimates", "eta", "expect", "expected", "about", "around",
                "approximately", "roughly", "currently", "likely", "probably", "should", "aim", "target",
                "targeting", "hope", "believe", "think", "anticipate", "anticipated", "some", "usually",
                "typically", "normally", "generally"),
        strict_only=True,
        support="time",
    ),
) + (
    # Claims checked against the incident's state, money and blame, data safety and time, on every
    # text (docs/guard.md). The state families read the statement's structure through the hedge
    # rules: "sign-in is working again" is the claim, "once sign-in is working again" is not.
    ClaimFamily(
        name="working again", check="state_claim", support="recovering",
        pattern=r"\b(?:is|are|has\s+been|have\s+been)\s+(?:now\s+)?(?:working|operating|running|functioning|"
        r"available|online|loading|responding|succeeding|processing|flowing|performing)\s+(?:again|normally|"
        r"as\s+(?:expected|usual|normal)|correctly|fine|smoothly)\b",
        paraphrases=(
            r"\b(?:works|work|working|available|online|succeed(?:s|ing)?|loads|loading|responds|responding|flowing|"
            r"processing|possible)\s+again\b",
            # what the service does, done again: "the map is updating again", "orders are coming through again"
            r"\b(?:is|are|has\s+been|have\s+been)\s+(?:now\s+)?(?:updating|syncing|showing|appearing|arriving|"
            r"sending|connecting|refreshing|saving|uploading|downloading|printing|playing|streaming|opening|starting|"
            r"displaying|delivering|reporting|going\s+out|going\s+through|coming\s+through|getting\s+through)\s+again\b",
            r"\bcan\s+(?:now\s+)?(?:sign|log|check|pay|use|access|export|send|receive|connect|complete|reach)\b"
            r"(?:\s+\w+){0,2}\s+again\b",
            r"\b(?:returned|come\s+back|gone\s+back|back|dropped\s+back|fallen\s+back|recovered)\s+to\s+"
            r"(?:normal|baseline|usual|expected|healthy|pre-incident)\b",
            r"\b(?:is|are|has\s+been|have\s+been)\s+(?:now\s+)?(?:back\s+(?:up|online|to\s+normal)|restored|"
            r"resumed|healthy)\b",
            r"\b(?:has|have)\s+(?:now\s+)?(?:resumed|normali[sz]ed)\b",
            r"\b(?:errors?|failures?|timeouts?|delays?|disruption|slowdown)\s+(?:has|have)\s+(?:now\s+)?"
            r"(?:stopped|ceased|subsided|cleared|disappeared)\b",
            r"\b(?:issue|incident|outage|problem|disruption|degradation|slowdown)\s+(?:is|has\s+been)\s+"
            r"(?:now\s+)?(?:over|mitigated|cleared|gone|behind\s+us|addressed)\b",
            r"\bno\s+longer\s+(?:affected|impacted|seeing|experiencing|failing|delayed|degraded|down|slow)\b",
            r"\b(?:all|every)\s+(?:systems?|services?)\s+(?:are\s+|is\s+)?(?:operational|go|green|up)\b",
            r"\beverything\s+is\s+(?:fine|ok|okay|normal|working|back)\b",
            r"\bshould\s+now\s+(?:be\s+)?(?:working|work|succeed(?:ing)?|load(?:ing)?|respond(?:ing)?|available|online|"
            r"operational|running|functioning|flowing|processing)\b",
            r"\bshould\s+be\s+(?:working|succeeding|loading|running|functioning|operating|responding|processing)\s+"
            r"(?:again|normally|now|as\s+(?:expected|usual|normal))\b",
            r"\b(?:is|are)\s+(?:now\s+|already\s+|slowly\s+|gradually\s+)?coming\s+back\b",
            # what the service does, done right now: "all grants now show correctly", "the map now loads normally"
            r"\bnow\s+(?:shows?|display(?:s)?|appears?|loads?|works?|syncs?|updates?|opens?|runs?|renders?|prints?)\s+"
            r"(?:correctly|properly|normally|as\s+(?:expected|usual|normal))\b",
            SORTED,
        ),
    ),
    ClaimFamily(
        name="still ongoing", check="state_claim", support="ongoing",
        pattern=r"\b(?:is|are|remains?)\s+(?:still\s+)?ongoing\b",
        paraphrases=(
            r"\bstill\s+(?:ongoing|seeing|experiencing|affected|impacted|degraded|down|unavailable|failing|"
            r"slow|in\s+progress)\b",
            r"\b(?:we\s+are|we[’']re)\s+(?:still\s+|currently\s+|actively\s+)?(?:investigating|looking\s+into)"
            r"\s+(?:the\s+|this\s+|an?\s+|these\s+)?(?:[\w-]+\s+){0,2}?(?:issue|problem|incident|outage|disruption|errors?|reports?|"
            r"failures?|delays?|degradation|elevated|increased|intermittent|slow)",
            r"\b(?:we\s+are|we[’']re)\s+(?:still\s+|currently\s+|actively\s+)?(?:investigating|looking\s+into\s+"
            r"(?:it|this))\s*(?:[.!;]|$)",
            r"\b(?:we\s+are|we[’']re)\s+(?:still\s+|currently\s+)?working\s+(?:on\s+a\s+fix|to\s+(?:fix|restore))\b",
            r"\bcontinu(?:e|es|ing)\s+to\s+(?:investigate|see|experience|affect|impact|fail)\b",
            r"\bremains?\s+(?:degraded|unavailable|down|impaired|slow|affected|disrupted|intermittent)\b",
            r"\b(?:are|is)\s+currently\s+(?:experiencing|seeing|affected|impacted|degraded|down|unavailable|"
            r"failing)\b",
        ),
    ),
    ClaimFamily(
        name="cause unknown", check="state_claim", support="investigating",
        pattern=r"\b(?:root\s+)?cause(?:\s+of\s+(?:[\w-]+\s+){0,4}?[\w-]+)?\s+(?:is|remains)\s+(?:still\s+|currently\s+)?"
        r"(?:unknown|unclear|not\s+(?:yet\s+)?(?:known|identified|clear|understood))\b",
        paraphrases=(
            r"\b(?:working|trying|continuing|continue|work)\s+to\s+(?:find|identify|determine|understand|pinpoint|"
            r"isolate|establish|locate)\s+(?:the\s+)?(?:root\s+)?(?:cause|source|reason|origin)\b",
            r"\b(?:have|has)\s+not\s+(?:yet\s+)?(?:identified|found|determined|established|pinpointed)\s+(?:the\s+)?"
            r"(?:root\s+)?(?:cause|source|reason)\b",
            r"\b(?:do|does)\s+not\s+(?:yet\s+)?know\s+(?:the\s+(?:root\s+)?cause|what\s+(?:is\s+)?caus|why)\w*",
            r"\b(?:investigating|looking\s+(?:for|into))\s+(?:the\s+)?(?:root\s+)?(?:cause|source)\b",
            r"\b(?:unknown|unidentified|undetermined)\s+(?:root\s+)?cause\b",
        ),
    ),
    ClaimFamily(
        name="cause identified", check="state_claim", support="identified",
        pattern=r"\b(?:have|has|we[’']ve)\s+(?:now\s+)?(?:identified|found|determined|pinpointed|isolated)\s+(?:the\s+)?"
        r"(?:root\s+|likely\s+|probable\s+)?(?:cause|source|reason)\b",
        paraphrases=(
            r"\b(?:root\s+)?cause\s+(?:has\s+been|was|is\s+now)\s+(?:identified|found|determined|pinpointed)\b",
            r"\bidentified\s+(?:the\s+|a\s+)?(?:root\s+)?cause\b",
        ),
    ),
    # Where the incident is in its lifecycle, as a status page's stages say it: a fix being rolled
    # out is the identified stage, a fix in place and its results watched the monitoring stage, and
    # a resolved incident is not waiting to be closed.
    ClaimFamily(
        name="fix under way", check="state_claim", support="identified",
        pattern=r"\b(?:a|the)\s+fix\s+is\s+(?:now\s+|currently\s+)?(?:being\s+(?:deployed|rolled\s+out|implemented|"
        r"applied|released|prepared|tested)|rolling\s+out)\b",
        paraphrases=(
            r"\b(?:a|the)\s+fix\s+is\s+already\s+(?:being\s+(?:deployed|rolled\s+out|implemented|applied|released|"
            r"prepared|tested)|rolling\s+out|on\s+(?:its|the)\s+way|in\s+progress)\b",
            r"\b(?:we\s+are|we[’']re)\s+(?:now\s+|currently\s+)?(?:deploying|rolling\s+out|implementing|applying|"
            r"releasing)\s+(?:a|the)\s+fix\b",
            r"\b(?:have|has|we[’']ve)\s+(?:now\s+)?(?:identified|found|determined|pinpointed|worked\s+out)\s+why\b",
        ),
    ),
    ClaimFamily(
        name="fix in place", check="state_claim", support="fixed",
        pattern=r"\b(?:a|the)\s+fix\s+(?:has\s+(?:now\s+)?been|was|is\s+now)\s+(?:fully\s+)?(?:implemented|deployed|"
        r"applied|rolled\s+out|released|put\s+in\s+place)\b",
        paraphrases=(
            r"\b(?:a|the)\s+fix\s+is\s+(?:now\s+)?in\s+place\b",
            r"\b(?:have|has|we[’']ve)\s+(?:now\s+)?(?:implemented|deployed|applied|rolled\s+out|released)\s+(?:a|the)\s+fix\b",
            r"\bmonitoring\s+(?:the\s+)?(?:results|fix|recovery)\b",
            r"\b(?:fixed|solved|remedied|rectified)\b",
            FIX_APPLIED,
        ),
    ),
    ClaimFamily(
        name="not yet closed", check="state_claim", support="ongoing",
        pattern=r"\bbefore\s+(?:we\s+)?(?:closing|close|resolving|resolve|marking|mark)\s+(?:this|the)\s+"
        r"(?:incident|issue)\b",
    ),
    ClaimFamily(
        name="why unknown", check="state_claim", support="investigating",
        pattern=r"\b(?:still\s+)?(?:looking\s+into|investigating|trying\s+to\s+understand|working\s+to\s+understand)\s+"
        r"why\b",
    ),
    ClaimFamily(
        name="planned work", check="state_claim",
        pattern=r"\b(?:planned|scheduled)\s+(?:outage|maintenance|downtime|work|upgrade|migration)\b",
        paraphrases=(r"\b(?:routine|regular)\s+maintenance\b", r"\bmaintenance\s+window\b"),
        supported_by=(r"\bmaintenance\b", r"\bplanned\b", r"\bscheduled\b"),
    ),
    ClaimFamily(
        name="maintenance in progress", check="state_claim", support="in_progress",
        pattern=r"\b(?:maintenance|work|upgrade|migration)\s+(?:is|are)\s+(?:now\s+|currently\s+)?"
        r"(?:in\s+progress|under\s*way|ongoing)\b",
        paraphrases=(r"\b(?:under|undergoing)\s+(?:scheduled\s+|planned\s+)?maintenance\b",
                     r"\b(?:we\s+are|we[’']re)\s+(?:now\s+|currently\s+)?(?:performing|carrying\s+out|doing)\s+"
                     r"(?:the\s+)?(?:scheduled\s+|planned\s+)?maintenance\b"),
    ),
    ClaimFamily(
        name="credits and refunds", check="liability", hedging="negation",
        pattern=r"\b(?:receive|issue|issuing|offer|offering|apply|applying|provide|providing|get|owed|"
        r"eligible\s+for)\s+(?:an?\s+|a\s+full\s+|full\s+|your\s+)?(?:service\s+|account\s+)?"
        r"(?:credits?|refunds?|reimbursements?|compensation)\b",
        paraphrases=(
            r"\b(?:will|we[’']ll|shall)\s+(?:be\s+)?(?:credit|refund|reimburs|compensat)\w*",
            r"\b(?:full|automatic|partial)\s+refunds?\b",
            r"\brefund(?:ed)?\s+(?:you|in\s+full|automatically|all|any|every)\b",
            r"\bmoney[-\s]back\b",
            r"\bservice\s+credits?\b",
            r"\bcompensat(?:e|ed|ion)\b",
            r"\bwaiv(?:e|ed|ing)\s+(?:the\s+|any\s+|all\s+|your\s+)?(?:\w+\s+)?(?:fees?|charges?|costs?|"
            r"penalt(?:y|ies))\b",
            r"\b(?:will\s+be|are\s+being|have\s+been|has\s+been)\s+waived\b",
            r"\bfree\s+of\s+charge\b",
            r"\b(?:won[’']t|will\s+not)\s+be\s+(?:charged|billed)\b",
            NO_CHARGE,
        ),
        # What the incident says of the money in its own words: "will have their collection charge
        # refunded", "refunds go back to the original payment method", "the fee is waived", "skip this
        # month's box with no charge", "riders are not charged for failed unlocks", "no late fee will be charged".
        supported_by=(r"\brefund(?:s|ed)?\b", r"\bwaived\b",
                      r"\b(?:with|at|for)\s+no\s+(?:extra\s+|additional\s+)?(?:charge|cost|fee)\b",
                      r"\bnot\s+(?:be\s+)?(?:charged|billed)\b",
                      r"\bno\s+(?:[\w-]+\s+){0,2}(?:fees?|charges?|penalt(?:y|ies)|costs?)\s+(?:will\s+be|is|are|was|were|"
                      r"has\s+been|have\s+been)\s+(?:charged|applied|billed|taken|added)\b"),
    ),
    ClaimFamily(
        # A gift is no refund: "your next delivery fee is on us" where the incident refunds only what went
        # wrong is a promise of its own.
        name="goodwill gifts", check="liability", hedging="negation",
        pattern=r"\b(?:is|are|['’]s)\s+on\s+(?:us|the\s+house)\b",
        paraphrases=(
            r"\bcomplimentary\b",
            r"\bas\s+a\s+(?:small\s+)?(?:thank[\s-]you|goodwill\s+gesture|gesture\s+of\s+goodwill)\b",
            r"\bgoodwill\s+(?:credit|gesture|voucher)\b",
            FREE_THINGS,
        ),
    ),
    ClaimFamily(
        name="fault and negligence", check="liability", hedging="negation",
        pattern=r"\bnegligen(?:t|ce)\b",
        paraphrases=(
            r"\b(?:our|my)\s+(?:own\s+)?fault\b",
            r"\bwe\s+(?:are|were)\s+(?:entirely\s+|fully\s+|solely\s+)?(?:at\s+fault|to\s+blame|liable)\b",
            r"\b(?:take|accept|bear)\s+(?:full\s+|complete\s+)?(?:responsibility|liability|the\s+blame)\b",
            r"\bliab(?:le|ility)\b",
            r"\bour\s+(?:mistake|blunder)\b",
            r"\bwe\s+(?:made\s+a\s+mistake|messed\s+up|dropped\s+the\s+ball|screwed\s+up)\b",
            r"\b(?:breach|violation)\s+of\s+(?:our\s+|the\s+|your\s+)?(?:contract|sla|agreement|terms)\b",
        ),
    ),
    ClaimFamily(
        name="data reassurance", check="data_safety",
        pattern=r"\b(?:your|customer|customers[’']?|user|users[’']?|account|personal|payment|card)\s+"
        r"(?:data|information|details|records)\s+(?:is|are|was|were|remains?|has\s+been|have\s+been|stays?)\s+"
        r"(?:completely\s+|fully\s+|entirely\s+|always\s+|still\s+)?(?:safe|secure|intact|protected|"
        r"unaffected|untouched|not\s+affected)\b",
        paraphrases=(
            # whoever's data it is: "no customer data was lost", "no patient data has been affected"
            r"\b(?:no|none\s+of\s+(?:your|the))\s+(?:[\w-]+\s+)?(?:data|information|details|records)\s+"
            r"(?:was|were|has\s+been|have\s+been|is|are)\s+"
            r"(?:lost|accessed|exposed|leaked|compromised|affected|deleted|corrupted|at\s+risk|stolen|viewed)\b",
            r"\bno\s+(?:data\s+loss|loss\s+of\s+data)\b",
            r"\b(?:data|information)\s+(?:is|was|remains?)\s+(?:safe|secure|intact|protected)\b",
            r"\bnot\s+a\s+security\s+(?:incident|issue|breach|problem)\b",
            r"\bno\s+(?:evidence|sign|indication)\s+of\s+(?:unauthori[sz]ed\s+access|data\s+(?:loss|access|exposure)|"
            r"(?:a\s+)?(?:breach|compromise))\b",
        ),
        supported_by=(r"\bdata\s+(?:loss|exposure|impact|access|safety|breach)\W+(?:none|no|not\s+affected|"
                      r"unaffected|false|0)\b",),
    ),
    ClaimFamily(
        name="data breach", check="data_safety",
        pattern=r"\b(?:data|security)\s+breach(?:es)?\b",
        paraphrases=(
            r"\b(?:hacked|hackers?|cyber[-\s]?attacks?|ransomware|malicious\s+(?:actors?|access|activity))\b",
            r"\b(?:data|accounts?|credentials|passwords?)\s+(?:was|were|has\s+been|have\s+been|may\s+have\s+been)"
            r"\s+(?:compromised|stolen|leaked|exposed)\b",
            r"\bunauthori[sz]ed\s+access\b",
        ),
        supported_by=(r"\b(?:breach|compromised|attack|unauthori[sz]ed|security\s+incident)\b",),
    ),
    ClaimFamily(
        name="time commitments", check="time_commitment", support="time",
        pattern=r"\bwithin\s+(?:the\s+)?(?:next\s+)?(?:hour|day|minutes|hours|days|moments)\b",
        paraphrases=(
            r"\bwithin\s+(?:a\s+|the\s+next\s+)?(?:few|couple\s+of)\s+(?:minutes|hours|days)\b",
            r"\bin\s+(?:a\s+|the\s+next\s+)?(?:few|couple\s+of)\s+(?:minutes|hours)\b",
            r"\b(?:very\s+)?shortly\b",
            r"\b(?:any\s+(?:minute|moment)(?:\s+now)?|momentarily|imminently|in\s+no\s+time)\b",
            r"\b(?:by|before)\s+(?:the\s+)?end\s+of\s+(?:the\s+)?(?:day|today|business)\b",
            r"\blater\s+(?:today|tonight|this\s+(?:morning|afternoon|evening))\b",
            r"\bby\s+(?:tonight|tomorrow|this\s+(?:afternoon|evening))\b",
            r"\b(?:will|we[’']ll)\s+be\s+(?:fixed|resolved|restored|back|done|complete|completed|available|deployed)"
            r"\s+(?:soon|quickly)\b",
            # "version 8.3.1 with the fix will be available on Google Play tonight"
            r"\b(?:will|['’]ll)\s+be\s+(?:fixed|resolved|restored|back|done|complete|completed|available|deployed|live|"
            r"released|out|working)\b[^.;!?\n]{0,60}?\b(?:today|tonight|tomorrow|this\s+(?:morning|afternoon|evening))\b",
            SAME_DAY,
        ),
        hedges=("estimate", "estimated", "estimates", "eta", "expect", "expected", "about", "around",
                "approximately", "roughly", "likely", "probably", "should", "aim", "target", "targeting",
                "hope", "believe", "think", "anticipate", "anticipated", "usually", "typically", "normally",
                "generally"),
    ),
)

# The canonical patterns, the families' keys in GuardRules.restricted_claims.
DEFAULT_VOCABULARY: tuple[tuple[str, bool, bool], ...] = default_terms()
DEFAULT_RESTRICTED_CLAIMS: tuple[str, ...] = tuple(f.pattern for f in DEFAULT_CLAIM_FAMILIES)

DEFAULT_REGIONS: tuple[str, ...] = ("us", "eu", "uk", "ua", "apac", "global", "emea", "latam")

# Region words: a region named in words or as an adjective is a mention of its token.
DEFAULT_REGION_WORDS: dict[str, tuple[str, ...]] = {
    "us": ("United States", "U.S.", "USA", "American"),
    "eu": ("Europe", "European", "EU-wide"),
    "uk": ("United Kingdom", "Britain", "British"),
    "ua": ("Ukraine", "Ukrainian"),
    "apac": ("Asia-Pacific", "Asia Pacific", "Asia", "Asian"),
    "global": ("worldwide", "globally", "all regions", "every region"),
    "emea": ("Middle East", "Africa", "African"),
    "latam": ("Latin America", "Latin American", "South America", "South American"),
}


@dataclass(frozen=True, kw_only=True)
class GuardRules:
    """The admin-editable lists the patch guard and the final-answer checks read.

    ``restricted_claims`` names the claims in force by their canonical pattern; ``claim_families``
    says what else each one matches (a pattern without a family matches only itself, as in snapshots
    from before families). ``region_words`` maps a region token to its names in words.
    """

    restricted_claims: tuple[str, ...] = DEFAULT_RESTRICTED_CLAIMS
    regions: tuple[str, ...] = DEFAULT_REGIONS
    claim_families: tuple[ClaimFamily, ...] = DEFAULT_CLAIM_FAMILIES
    region_words: tuple[tuple[str, tuple[str, ...]], ...] = tuple(DEFAULT_REGION_WORDS.items())
    # The reviewed vocabulary of ordinary update language, as (text, advice, action) tuples
    # (agents.core.guard.grounding); None: no grounding check (switched off, or a snapshot from before
    # it existed).
    vocabulary: tuple[tuple[str, bool, bool] | tuple[str, bool], ...] | None = DEFAULT_VOCABULARY

    def __post_init__(self):
        # A snapshot read back from JSON holds lists and dicts: make them the frozen forms.
        object.__setattr__(self, "claim_families", tuple(ClaimFamily.of(f) for f in self.claim_families))
        words = self.region_words.items() if isinstance(self.region_words, dict) else self.region_words
        object.__setattr__(self, "region_words", tuple((str(t), tuple(w)) for t, w in words))
        if self.vocabulary is not None:
            # (text, advice, action); a snapshot from before the action flag holds (text, advice) pairs.
            object.__setattr__(self, "vocabulary", tuple((str(t[0]), *(bool(f) for f in t[1:3]))
                                                        for t in self.vocabulary))

    def families(self) -> list[ClaimFamily]:
        """The families in force, in the order of ``restricted_claims``."""
        by_pattern = {f.pattern: f for f in self.claim_families}
        return [by_pattern.get(p) if isinstance(p, str) and p in by_pattern else ClaimFamily(pattern=p)
                for p in self.restricted_claims]

    @classmethod
    def from_snapshot(cls, data: dict[str, Any]) -> GuardRules:
        """Rules from a run's snapshot. One stored before families and region words had none: it
        keeps matching exactly what it matched then."""
        values = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()
                  if k in {f.name for f in dataclasses.fields(cls)}}
        values.setdefault("claim_families", ())
        values.setdefault("region_words", ())
        values.setdefault("vocabulary", None)
        return cls(**values)


@dataclass(frozen=True, kw_only=True)
class ModelSettings:
    """Which OpenAI-compatible endpoint a policy's stages talk to, by the name the operator
    declared it with (``agents/core/llm/endpoints.py``). No URL and no API key is ever here."""

    model: str = "gpt-4.1-mini"
    endpoint: str = "default"
    # Only in run snapshots stored before endpoints were named: the URL such a run asks for is
    # used only when an endpoint is declared with exactly that URL (else llm_misconfigured).
    base_url: str | None = None
    structured_output: str = "tools"  # "tools" (function calling) or "json" (json_object mode)
    timeout_seconds: float = 60.0
    max_retries: int = 2
    temperature: float = 0.0
    # The most tokens one answer may have. A text stage's limit is derived from its character
    # budget (see agents/core/prompts.py), never above this.
    max_completion_tokens: int = 1024
    # USD per 1,000 tokens; 0 means calls cost nothing against the run's cost budget.
    input_cost_per_1k: float = 0.0
    output_cost_per_1k: float = 0.0


@dataclass(frozen=True, kw_only=True)
class Policy:
    """What every pipeline shares: wall time, token and cost budgets, prompts, the model."""

    max_seconds: float
    max_tokens: int | None = None  # None: no token budget
    max_cost: float | None = None  # USD; None: no cost budget
    prompts: dict[str, str] = field(default_factory=dict)  # stage -> system prompt override
    model: ModelSettings = field(default_factory=ModelSettings)

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        for key, value in data.items():
            if isinstance(value, (set, frozenset)):
                data[key] = sorted(value)
        data["pipeline"] = self.pipeline
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]):
        """Build a policy from a snapshot or a database row's fields; unknown keys are ignored."""
        names = {f.name: f for f in dataclasses.fields(cls)}
        kwargs: dict[str, Any] = {}
        for key, value in data.items():
            if key not in names:
                continue
            if key in ("model", "judge") and isinstance(value, dict):
                value = ModelSettings(**value)
            elif key == "guard" and isinstance(value, dict):
                value = GuardRules.from_snapshot(value)
            elif key == "routes" and isinstance(value, dict):
                value = {name: RouteTarget(**spec) for name, spec in value.items()}
            elif key in ("decisions_policy", "decisions_execution"):
                value = frozenset(value)
            kwargs[key] = value
        return cls(**kwargs)


@dataclass(frozen=True, kw_only=True)
class TextPolicy(Policy):
    """Shared by the two text pipelines (reflection, self-critique)."""

    max_draft_chars: int = 900
    max_answer_chars: int = 900
    min_patch_similarity: float = 0.45
    decisions_policy: frozenset[str] = frozenset(DECISIONS)
    decisions_execution: frozenset[str] = frozenset(DECISIONS)
    auto_revision: bool = True  # the emergency brake: off removes "revise" from execution
    # Publishes a gate-passed run with no person involved: its final answer then carries no link,
    # contact or mention at all (agents.core.guard.check_final_answer).
    auto_publish: bool = False
    issue_types: dict[str, bool] = field(default_factory=lambda: dict(DEFAULT_ISSUE_TYPES))
    guard: GuardRules = field(default_factory=GuardRules)
    # The second reader (docs/guard.md, 'The second reader'): a model at a declared endpoint that reads
    # the final answer against the public facts after the final-answer checks. None: no second reader.
    judge: ModelSettings | None = None

    @property
    def execution_allowlist(self) -> frozenset[str]:
        if self.auto_revision:
            return self.decisions_execution
        return self.decisions_execution - {"revise"}

    @property
    def high_risk_types(self) -> frozenset[str]:
        return frozenset(name for name, high in self.issue_types.items() if high)


@dataclass(frozen=True, kw_only=True)
class ReflectionPolicy(TextPolicy):
    pipeline = "reflection"

    max_seconds: float = 30
    max_review_issues: int = 4
    max_fix_items: int = 4


@dataclass(frozen=True, kw_only=True)
class SelfCritiquePolicy(TextPolicy):
    pipeline = "self_critique"

    max_seconds: float = 120
    max_answer_chars: int = 980
    min_patch_similarity: float = 0.4
    max_risks: int = 5
    max_required_changes: int = 5
    max_length_increase_pct: float = 20
    max_revise_attempts: int = 3


@dataclass(frozen=True, kw_only=True)
class RouteTarget:
    description: str
    worker: str  # name in the worker registry
    allowed_policy: bool = True
    allowed_execution: bool = True


DEFAULT_ROUTES: dict[str, RouteTarget] = {
    "billing_specialist": RouteTarget(
        description="Refunds, charges, invoices and other billing questions for a named customer.",
        worker="billing_specialist",
    ),
    "technical_specialist": RouteTarget(
        description="Errors, bugs, incidents, API problems and latency.",
        worker="technical_specialist",
    ),
    "sales_specialist": RouteTarget(
        description="Prices, pricing, quotes, plans and discounts.",
        worker="sales_specialist",
    ),
}


@dataclass(frozen=True, kw_only=True)
class RoutingPolicy(Policy):
    pipeline = "routing"

    max_seconds: float = 60
    max_route_attempts: int = 3
    max_delegations: int = 3
    routes: dict[str, RouteTarget] = field(default_factory=lambda: dict(DEFAULT_ROUTES))


# The pipelines, defined once: name -> policy class, in the order pages list them.
POLICY_CLASSES: dict[str, type[Policy]] = {
    "reflection": ReflectionPolicy,
    "self_critique": SelfCritiquePolicy,
    "routing": RoutingPolicy,
}
PIPELINE_NAMES = tuple(POLICY_CLASSES)
TEXT_PIPELINES = tuple(name for name, cls in POLICY_CLASSES.items() if issubclass(cls, TextPolicy))
# (name, label) pairs for forms and filters: "self_critique" -> "Self-critique".
PIPELINE_CHOICES = [(name, name.replace("_", "-").capitalize()) for name in POLICY_CLASSES]


def default_policy(pipeline: str) -> Policy:
    return POLICY_CLASSES[pipeline]()

"""What leads' decisions teach the guard (docs/learning-loop.md): the labels each final decision
gives the guard's checks, the scorecard aggregated from them, and the amendments the miner proposes.

Every final decision is a label. An approval despite a finding says the finding was wrong there; an
edit that removes the words a check flagged says it was right; a rejection says the text was unsafe;
an edit that removes words no check flagged says the guard missed them. :func:`labels` reads the
decisions once (one query, one pass) and :func:`scorecard` counts them per check and claim family,
per policy version. The scorecard lives with the models because ``/metrics`` (operations) and the
datasets export (desk) read it, and both sit below the learning concern that proposes amendments.
"""

from __future__ import annotations

import bisect
import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

from django.conf import settings
from django.db import connections, models
from django.utils import timezone

from agents.core.patterns import UnsafePattern, compile_pattern
from agents.models import IncidentVersion, PolicyChange, RestrictedClaim
from reviewer.models.desk import Decision

FINAL_ACTIONS = (Decision.Action.APPROVE, Decision.Action.EDIT_APPROVE, Decision.Action.REJECT)
# The policy rows whose change can change what the guard finds: a new policy version for the scorecard.
GUARD_MODELS = ("agents.restrictedclaim", "agents.groundingterm", "agents.regiontoken", "agents.pipelinepolicy")
WORD = re.compile(r"[a-z][a-z'’-]*")
# Words too common to be a phrase's content (a removed "the" teaches nothing).
STOPWORDS = frozenset("""a an the and or but of to in on at for by with from as is are was were be been being it its
this that these those we our us you your they their them i he she his her has have had do does did will would
can could should may might not no so if than then there here also just very all any some more most""".split())


def check_name(check: str) -> str:
    """The check of a stored finding, without its stop's prefix: "invalid_answer:liability" -> "liability"."""
    return check.split(":", 1)[1] if ":" in check else check


def words_of(text: str) -> list[str]:
    return WORD.findall((text or "").lower())


def phrase_of(text: str) -> str:
    """A removed span as a phrase: its words, lower case, without the punctuation around them."""
    return " ".join(words_of(text))


class Families:
    """Which claim family a stored finding belongs to. A finding keeps its check and its words, not its
    family; the family is the first row (in the guard's order) of that check whose patterns match the
    words. Answers are remembered: a history repeats the same few findings."""

    def __init__(self):
        self.rows = []
        for row in RestrictedClaim.objects.order_by("id"):
            try:
                patterns = [compile_pattern(p) for p in (row.pattern, *row.as_family().paraphrases)]
            except UnsafePattern:
                continue
            self.rows.append((row.kind, row.family or row.pattern, patterns))
        self.known: dict[tuple[str, str], str] = {}

    def of(self, check: str, found: str) -> str:
        key = (check, found.lower())
        if key not in self.known:
            self.known[key] = next((name for kind, name, patterns in self.rows
                                    if kind == check and any(p.search(found) for p in patterns)), "")
        return self.known[key]


class PolicyVersions:
    """The policy version a run's guard ran under: the number of the newest guard-related change in the
    policy history before the run started (0: before any recorded change)."""

    def __init__(self):
        changes = PolicyChange.objects.filter(model_label__in=GUARD_MODELS).order_by("at", "id").values_list("at", "id")
        self.times = [at for at, _ in changes]
        self.ids = [pk for _, pk in changes]

    def at(self, moment) -> int:
        if not self.times:
            return 0  # no change recorded: every run ran under the policy as installed
        index = bisect.bisect_right(self.times, _moment(moment))
        return self.ids[index - 1] if index else 0


@dataclass(slots=True)
class Label:
    """What one final decision says about the guard."""

    decision: int
    escalation: int
    action: str
    actor: int
    at: datetime  # as the database returned it (text on SQLite) unless a correction needed it compared
    pipeline: str
    version: int
    note: str
    candidate: str
    final_text: str
    # (check, family) -> the words each finding of it flagged in the text the lead decided
    fired: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    overridden: set[tuple[str, str]] = field(default_factory=set)  # approved despite it, justified
    removed_flagged: set[tuple[str, str]] = field(default_factory=set)  # the lead's edit removed its words
    removed_unflagged: list[str] = field(default_factory=list)  # phrases the edit removed that no check flagged
    contradicted: bool = False  # approved, and a later correcting update contradicted it


def _findings(guard) -> list[dict]:
    return [v for v in (guard or {}).get("violations") or [] if isinstance(v, dict) and v.get("check")]


SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def removed_phrases(before: str, after: str) -> list[str]:
    """What an edit deleted or rewrote, a phrase per sentence of ``before`` that ``after`` no longer holds:
    its words from the first to the last that ``after`` lacks (a sentence deleted whole: all of them).
    Sentence by sentence, so two sentences deleted together are two phrases, one flagged and one perhaps
    not; and with set operations only, so a history of many edits reads fast."""
    kept = set(words_of(after))
    phrases = []
    for sentence in SENTENCE_END.split(before):
        if not sentence.strip() or sentence in after:
            continue
        words = words_of(sentence)
        gone = [i for i, word in enumerate(words) if word not in kept]
        if gone:
            phrases.append(" ".join(words[gone[0]:gone[-1] + 1]))
    return phrases


def _json(value):
    """A JSON column as read without Django's converters: text on SQLite, decoded already on PostgreSQL."""
    return json.loads(value) if isinstance(value, str) else value


def _moment(value) -> datetime:
    """A datetime as read without Django's converters: ISO text (UTC) on SQLite, aware on PostgreSQL."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _corrections(incident_versions: Iterable[int]) -> dict[int, list[tuple[int, datetime, list[str]]]]:
    """Per incident version id: the later versions of its incident, each with the values it corrected
    (the shown values a changed fact had before), in order."""
    ids = [pk for pk in set(incident_versions) if pk]
    if not ids:
        return {}
    incidents = IncidentVersion.objects.filter(pk__in=ids).values_list("incident_id", flat=True).distinct()
    by_incident: dict[int, list[tuple[int, int, datetime, list]]] = defaultdict(list)
    for pk, incident, number, at, changes in (IncidentVersion.objects.filter(incident__in=list(incidents))
                                              .order_by("incident", "number")
                                              .values_list("pk", "incident_id", "number", "created_at", "changes")):
        values = [str(c["before"]) for c in changes or [] if isinstance(c, dict) and c.get("before")
                  and any(ch.isdigit() for ch in str(c["before"]))]
        by_incident[incident].append((pk, number, at, values))
    later: dict[int, list[tuple[int, datetime, list[str]]]] = {}
    for versions in by_incident.values():
        for i, (pk, _number, _at, _values) in enumerate(versions):
            if pk in ids:
                later[pk] = [(number, at, values) for _pk, number, at, values in versions[i + 1:] if values]
    return later


LABEL_FIELDS = ("pk", "escalation_id", "action", "actor_id", "at", "note", "final_text", "guard_results",
                "incident_version_id", "escalation__candidate", "escalation__guard", "escalation__run__pipeline",
                "escalation__run__created_at")


def labels(decisions: models.QuerySet | None = None) -> Iterator[Label]:
    """Each final decision of ``decisions`` (all by default) as a :class:`Label`, in one query and one pass."""
    query = (Decision.objects.all() if decisions is None else decisions).filter(action__in=FINAL_ACTIONS)
    # Read as the database returns the rows, without a converter per column and row (JSON and datetimes
    # are decoded below, once each): a history of 100,000 decisions is read in seconds.
    # In no order: every figure is a count, and the miner sorts what it proposes (a sort of every row
    # with its texts cost as much as the rest of the read).
    sql, params = query.order_by().values_list(*LABEL_FIELDS).query.sql_with_params()
    with connections[query.db].cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    families, versions = Families(), PolicyVersions()
    later = _corrections(row[8] for row in rows if row[2] != Decision.Action.REJECT)
    for (pk, escalation, action, actor, at, note, final_text, guard_results, incident_version, candidate,
         guard, pipeline, run_created) in rows:
        label = Label(pk, escalation, action, actor, at, pipeline, versions.at(run_created), note, candidate,
                      final_text)
        for finding in _findings(_json(guard)):
            check = check_name(finding["check"])
            found = finding.get("found") or ""
            label.fired.setdefault((check, finding.get("reading") or families.of(check, found)), []).append(found)
        if action != Decision.Action.REJECT:
            for finding in _findings(_json(guard_results)):
                check = check_name(finding["check"])
                label.overridden.add((check, finding.get("reading") or families.of(check, finding.get("found") or "")))
        if action == Decision.Action.EDIT_APPROVE:
            text = final_text.lower()
            label.removed_flagged = {key for key, found in label.fired.items()
                                     if all(f.lower() not in text for f in found if f)}
            flagged = {word for found in label.fired.values() for f in found for word in words_of(f)} - STOPWORDS
            label.removed_unflagged = [phrase for phrase in removed_phrases(candidate, final_text)
                                       if not flagged & set(phrase.split()) and set(phrase.split()) - STOPWORDS]
        if action != Decision.Action.REJECT and incident_version in later:
            text = final_text.lower()
            at = label.at = _moment(at)
            label.contradicted = any(at_version > at and any(value.lower() in text for value in values)
                                     for _number, at_version, values in later[incident_version])
        yield label


# ---------------------------------------------------------------- the scorecard


@dataclass
class CheckFigures:
    """One check (and claim family) over the window: decisions where it fired, and what the lead did."""

    check: str
    family: str
    version: int | None = None  # None: every policy version together
    fired: int = 0
    overridden: int = 0
    edit_removed: int = 0
    rejected: int = 0

    def share(self, count: int) -> str:
        return f"{count / self.fired:.0%}" if self.fired else "–"

    @property
    def overridden_share(self) -> str:
        return self.share(self.overridden)

    @property
    def edit_removed_share(self) -> str:
        return self.share(self.edit_removed)

    @property
    def rejected_share(self) -> str:
        return self.share(self.rejected)

    def as_dict(self) -> dict:
        return {"check": self.check, "family": self.family, "policy_version": self.version, "fired": self.fired,
                "overridden": self.overridden, "edit_removed": self.edit_removed, "rejected": self.rejected}


@dataclass
class Scorecard:
    decisions: int = 0
    checks: list[CheckFigures] = field(default_factory=list)  # every version together
    by_version: list[CheckFigures] = field(default_factory=list)
    missed_edits: int = 0  # edits that removed a phrase no check flagged
    missed_phrases: list[tuple[str, int]] = field(default_factory=list)  # (phrase, decisions), most first
    contradicted: int = 0  # approved texts a later correcting update contradicted
    contradicted_decisions: list[int] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"decisions": self.decisions, "checks": [c.as_dict() for c in self.checks],
                "by_version": [c.as_dict() for c in self.by_version],
                "misses": {"edits_removing_unflagged": self.missed_edits,
                           "phrases": [{"phrase": p, "decisions": n} for p, n in self.missed_phrases],
                           "contradicted_by_correction": self.contradicted}}


MISSED_PHRASES_SHOWN = 20


def scorecard(decisions: models.QuerySet | None = None, *, from_labels: Iterable[Label] | None = None) -> Scorecard:
    """The scorecard of ``decisions`` (every final decision by default), or of labels already read."""
    card = Scorecard()
    totals: dict[tuple, CheckFigures] = {}
    phrases: Counter = Counter()
    for label in labels(decisions) if from_labels is None else from_labels:
        card.decisions += 1
        for check, family in label.fired:
            for key in ((check, family, None), (check, family, label.version)):
                figures = totals.get(key) or totals.setdefault(key, CheckFigures(*key))
                figures.fired += 1
                figures.overridden += (check, family) in label.overridden
                figures.edit_removed += (check, family) in label.removed_flagged
                figures.rejected += label.action == Decision.Action.REJECT
        if label.removed_unflagged:
            card.missed_edits += 1
            phrases.update(set(label.removed_unflagged))
        if label.contradicted:
            card.contradicted += 1
            card.contradicted_decisions.append(label.decision)
    order = sorted(totals.values(), key=lambda f: (-f.fired, f.check, f.family, f.version or 0))
    card.checks = [f for f in order if f.version is None]
    card.by_version = sorted((f for f in order if f.version is not None),
                             key=lambda f: (-(f.version or 0), -f.fired, f.check, f.family))
    card.missed_phrases = phrases.most_common(MISSED_PHRASES_SHOWN)
    return card


# ---------------------------------------------------------------- amendments


class Amendment(models.Model):
    """A policy-row change the miner proposed from people's decisions (``reviewer.learning.miner``),
    replayed in the policy lab before anyone sees it. Never applied by itself: an admin accepts it
    (a loosening with the approval rule's quorum) or dismisses it, with a reason."""

    class Kind(models.TextChoices):
        HEDGE = "hedge", "hedge for a claim family (loosening)"
        TERM = "term", "grounding vocabulary term (loosening)"
        FAMILY = "family", "new claim family (tightening)"
        TERM_OFF = "term_off", "grounding term switched off (tightening)"

    class Status(models.TextChoices):
        PROPOSED = "proposed"
        ACCEPTED = "accepted"
        DISMISSED = "dismissed"

    LOOSENING = (Kind.HEDGE, Kind.TERM)

    kind = models.CharField(max_length=10, choices=Kind.choices)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PROPOSED)
    # What it proposes, in the policy lab's terms (agents.lab.proposed_row): a kind of row, the row's key
    # (blank: a new row) and the values it would change.
    target = models.CharField(max_length=10)  # "claim" or "term"
    target_key = models.CharField(max_length=200, blank=True)
    changes = models.JSONField(default=dict)
    title = models.CharField(max_length=300)
    # The same proposal is made once: a dismissed one is not proposed again.
    fingerprint = models.CharField(max_length=200, unique=True)
    # Why: the decisions behind it, the distinct leads, the words, the justifications (for the card).
    evidence = models.JSONField(default=dict)
    # The policy lab's replay, made when it was proposed: runs that would flip, decided texts it would
    # agree with and contradict (contradictions first), the agreement gain.
    replay = models.JSONField(default=dict)
    proposed_at = models.DateTimeField(default=timezone.now)
    # What a loosening needs, fixed when it is proposed (as an escalation keeps its rule): the strictest
    # approval rule on overriding the guard that fits the check (reviewer.learning.amendments.loosening_rule).
    required_approvals = models.PositiveSmallIntegerField(default=1)
    approval_group = models.ForeignKey("auth.Group", null=True, blank=True, on_delete=models.PROTECT, related_name="+",
                                       help_text="Whose approvals count besides the permission; none: policy admins.")
    approval_rule_text = models.CharField(max_length=300, blank=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT,
                                   related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)
    reason = models.TextField(blank=True)
    policy_change = models.ForeignKey(PolicyChange, null=True, blank=True, on_delete=models.PROTECT, related_name="+")

    class Meta:
        ordering = ["-proposed_at", "-id"]

    def __str__(self) -> str:
        return self.title

    @property
    def loosening(self) -> bool:
        return self.kind in self.LOOSENING

    @property
    def approvals_so_far(self) -> int:
        return self.approvals.count()


class AmendmentApproval(models.Model):
    """One admin's approval of a loosening amendment under an approval rule's quorum."""

    amendment = models.ForeignKey(Amendment, on_delete=models.PROTECT, related_name="approvals")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    at = models.DateTimeField(default=timezone.now)
    reason = models.TextField(blank=True)

    class Meta:
        ordering = ["at", "id"]
        constraints = [models.UniqueConstraint(fields=["amendment", "user"], name="amendment_approval_once")]

    def __str__(self) -> str:
        return f"Approval by {self.user} of amendment {self.amendment_id}"

"""The guard's scorecard equals what the decision rows say, counted here another way: each figure per
check and claim family, and the misses (docs/learning-loop.md)."""

import json
import re
from collections import Counter

from agents.models import IncidentVersion, PolicyChange, RestrictedClaim
from reviewer.desk import datasets
from reviewer.models import Decision
from reviewer.models.learning import scorecard

FINAL = ("approve", "edit_approve", "reject")


def family_of(check: str, found: str, reading: str = "") -> str:
    """The claim family of a finding, read with Python's own regular expressions over the rows in order
    (an unsupported statement a named reading found is counted under the reading's name)."""
    if reading:
        return reading
    for row in RestrictedClaim.objects.filter(kind=check).order_by("id"):
        patterns = [row.pattern, *[p.strip() for p in row.paraphrases.splitlines() if p.strip()]]
        if any(re.search(p, found, re.IGNORECASE) for p in patterns):
            return row.family
    return ""


def counted_from_the_rows() -> tuple[Counter, int, int]:
    """(check, family, outcome) -> decisions; edits that removed a sentence no check flagged; approved
    texts quoting the p95 latency the correction changed."""
    counts: Counter = Counter()
    missed = contradicted = 0
    versions = IncidentVersion.objects.filter(incident__incident_id="inc_api_4021").order_by("-number")
    corrected_at = versions[0].created_at
    for decision in Decision.objects.filter(action__in=FINAL).select_related("escalation"):
        escalation = decision.escalation
        fired: dict[tuple[str, str], list[str]] = {}
        for v in (escalation.guard or {}).get("violations") or []:
            check = v["check"].split(":", 1)[-1]
            fired.setdefault((check, family_of(check, v["found"], v.get("reading", ""))), []).append(v["found"])
        overridden = {(v["check"].split(":", 1)[-1],
                       family_of(v["check"].split(":", 1)[-1], v["found"], v.get("reading", "")))
                      for v in escalation.overridden}
        for key, found in fired.items():
            counts[(*key, "fired")] += 1
            counts[(*key, "overridden")] += key in overridden
            counts[(*key, "rejected")] += decision.action == "reject"
            counts[(*key, "edit_removed")] += (decision.action == "edit_approve"
                                              and not any(f.lower() in decision.final_text.lower() for f in found))
        if decision.action == "edit_approve":
            flagged = {w.lower() for found in fired.values() for f in found for w in re.findall(r"[A-Za-z]{4,}", f)}
            kept = set(re.split(r"(?<=[.!?])\s+", decision.final_text))
            gone = [s for s in re.split(r"(?<=[.!?])\s+", escalation.candidate) if s not in kept]
            missed += any(not flagged & {w.lower() for w in re.findall(r"[A-Za-z]{4,}", s)} for s in gone)
        if decision.action != "reject" and decision.at < corrected_at and "1800 ms" in decision.final_text:
            contradicted += 1
    return counts, missed, contradicted


def test_the_scorecard_of_a_seeded_history_equals_the_counts_of_its_decision_rows(seeded):
    made = seeded(90)
    assert made["escalations"] >= 60

    card = scorecard()
    counts, missed, contradicted = counted_from_the_rows()

    assert card.decisions == Decision.objects.filter(action__in=FINAL).count()
    figures = Counter({(f.check, f.family, outcome): getattr(f, outcome) for f in card.checks
                       for outcome in ("fired", "overridden", "edit_removed", "rejected")})
    assert +figures == +counts
    assert card.missed_edits == missed > 0
    assert card.contradicted == contradicted > 0
    # The history has each kind of label the scorecard counts.
    time = next(f for f in card.checks if f.family == "time commitments")
    assert time.overridden and time.rejected and time.edit_removed
    assert "this is our highest priority" in dict(card.missed_phrases)


def test_each_policy_version_counts_only_the_runs_made_under_it(seeded):
    seeded(30)
    before = scorecard()
    assert {f.version for f in before.by_version} == {0}
    RestrictedClaim.objects.filter(family="guarantees").update(note="read again")
    change = PolicyChange.record(None, RestrictedClaim.objects.get(family="guarantees"), PolicyChange.CHANGED)
    seeded(20)
    after = scorecard()
    fired = {version: sum(f.fired for f in after.by_version if f.version == version) for version in (0, change.pk)}
    assert fired[0] == sum(f.fired for f in before.checks)
    assert fired[change.pk] == sum(f.fired for f in after.checks) - fired[0] > 0


def test_the_datasets_export_has_the_scorecard_as_lines(seeded, users):
    seeded(30)
    body = datasets.export(users.lead, "scorecard")
    lines = [json.loads(line) for line in body.splitlines()]
    card = scorecard()
    assert [line for line in lines if line["section"] == "check"] == [
        {"section": "check", **f.as_dict()} for f in card.checks]
    assert lines[-1] == {"section": "misses", "decisions": card.decisions,
                         "edits_removing_unflagged": card.missed_edits,
                         "contradicted_by_correction": card.contradicted}

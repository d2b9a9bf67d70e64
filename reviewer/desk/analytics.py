"""Review analytics: how people decide the escalations of a window of days (docs/analytics.md).

Time to decision (median and 90th percentile) per pipeline and severity; how escalations ended
(accepted as is, edited, changes requested, rejected) per pipeline and per check; each reviewer's
throughput and override rate; and whether approvers agreed on escalations that needed more than one
approval. The desk's page and the JSON API both read :func:`report`.

Every figure is an aggregate query (GROUP BY, conditional counts, window functions for the
percentiles), a fixed number of queries whatever the number of decisions: Python only turns counts
into rates. The per-person figures are for those who may read every decision (``view_decision``:
policy admins, and a leads' manager given that permission), never for the other leads.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection
from django.db.models import Count, F, Q, Window
from django.db.models.functions import RowNumber
from django.utils import timezone

from agents.core.policy import PIPELINE_CHOICES
from reviewer.models import REVIEW_OUTCOMES, Approval, Decision, Escalation

WINDOWS = (7, 30, 90)  # days
DEFAULT_DAYS = 30
# Who sees the page: support leads (the inbox) and those who read every decision (policy admins).
VIEW_PERMISSIONS = ("reviewer.view_escalation", "reviewer.view_decision")
# Who sees the figures of each person: those who may read every decision with its author anyway.
PEOPLE_PERMISSION = "reviewer.view_decision"
REFUSED = "Only support leads and policy admins can see the review analytics."
PIPELINE_LABELS = dict(PIPELINE_CHOICES)
PERCENTILES = {"median": 50, "p90": 90}
FINAL = (Decision.Action.APPROVE, Decision.Action.EDIT_APPROVE, Decision.Action.REJECT)
APPROVING = (Decision.Action.APPROVE, Decision.Action.EDIT_APPROVE)


def may_see(user) -> bool:
    return any(user.has_perm(perm) for perm in VIEW_PERMISSIONS)


def may_see_people(user) -> bool:
    return user.has_perm(PEOPLE_PERMISSION)


@dataclass(frozen=True)
class Span:
    days: int
    since: datetime
    until: datetime


def span_of(days: int, now: datetime | None = None) -> Span:
    until = now or timezone.now()
    return Span(days, until - timedelta(days=days), until)


def decided_in(span: Span):
    """The escalations whose final decision falls in the window."""
    return Escalation.objects.decided().filter(decided_at__gte=span.since, decided_at__lte=span.until).order_by()


def report(days: int = DEFAULT_DAYS, *, people: bool, now: datetime | None = None) -> dict:
    """Every figure of the window; ``people``: with each reviewer's figures (None without)."""
    span = span_of(days, now)
    decided = decided_in(span)
    by_pipeline = outcomes(decided, "run__pipeline")
    return {
        "days": span.days, "since": span.since, "until": span.until,
        "decided": sum(row["decided"] for row in by_pipeline),
        "time_to_decision": decision_times(decided, ("run__pipeline", "severity")),
        "time_to_decision_overall": (decision_times(decided, ()) or [None])[0],
        "outcomes_by_pipeline": by_pipeline,
        "outcomes_by_check": outcomes_by_check(decided),
        "quorum": agreement(decided),
        "reviewers": reviewers(span) if people else None,
    }


# -- time to decision ------------------------------------------------------------------------------


def decision_times(decided, groups: tuple[str, ...]) -> list[dict]:
    """Per group: how many were decided, and the median and 90th percentile of the time from opening
    to decision, each by the nearest rank (the smallest time that at least that share of decisions
    took no longer than). One query: each decision ranked within its group by a window function, and
    only the ranked rows the percentiles pick read back."""
    # Only the columns ranked: the window's subquery then carries no text or JSON of the rows.
    timed = decided.with_decision_time().values(*groups, "decision_seconds")
    partition = [F(group) for group in groups] or None
    ranked = timed.annotate(
        rank=Window(RowNumber(), partition_by=partition, order_by=[F("decision_seconds").asc(), F("pk").asc()]),
        size=Window(Count("pk"), partition_by=partition))
    # The nearest rank of percentile p among n: ceil(n * p / 100), in integers.
    picked = Q()
    for p in PERCENTILES.values():
        picked |= Q(rank=(F("size") * p + 99) / 100)
    rows: dict[tuple, dict] = {}
    for row in ranked.filter(picked):
        key = tuple(row[group] for group in groups)
        found = rows.setdefault(key, {**{_name(g): v for g, v in zip(groups, key, strict=True)},
                                      "decided": row["size"]})
        for name, p in PERCENTILES.items():
            if row["rank"] == (row["size"] * p + 99) // 100:
                found[f"{name}_seconds"] = row["decision_seconds"]
    return [_labelled(rows[key]) for key in sorted(rows)]


def _name(group: str) -> str:
    return {"run__pipeline": "pipeline"}.get(group, group)


def _labelled(row: dict) -> dict:
    """A pipeline's row also names it as the pages do ("Self-critique")."""
    if "pipeline" in row:
        return {**row, "pipeline_label": PIPELINE_LABELS.get(row["pipeline"], row["pipeline"])}
    return row


# -- outcomes --------------------------------------------------------------------------------------


def with_rates(row: dict) -> dict:
    total = sum(row.get(outcome, 0) for outcome in REVIEW_OUTCOMES)
    return {**dict.fromkeys(REVIEW_OUTCOMES, 0), **row, "decided": total,
            "rates": {outcome: (row.get(outcome, 0) / total if total else 0.0) for outcome in REVIEW_OUTCOMES}}


def outcomes(decided, group: str) -> list[dict]:
    """How the escalations of each ``group`` ended (one GROUP BY): counts and rates of each outcome."""
    rows: dict[str, dict] = {}
    for row in decided.with_outcome().values(group, "review_outcome").annotate(n=Count("pk")):
        rows.setdefault(row[group], {_name(group): row[group]})[row["review_outcome"]] = row["n"]
    return [_labelled(with_rates(rows[key])) for key in sorted(rows)]


# An escalation's checks: the distinct codes of the findings its run was stopped with (its guard's
# violations), or, when it carried none, its stop reason. Databases spell "each element of a JSON
# array" differently: SQLite's json_each, PostgreSQL's jsonb_array_elements.
_FINDINGS = {
    "sqlite": ("LEFT JOIN json_each(CASE json_type(d.findings, '$.violations') WHEN 'array' "
               "THEN json_extract(d.findings, '$.violations') ELSE '[]' END) AS v ON 1 = 1",
               "CASE v.type WHEN 'object' THEN json_extract(v.value, '$.check') END"),
    "postgresql": ("LEFT JOIN LATERAL jsonb_array_elements(CASE jsonb_typeof(d.findings -> 'violations') "
                   "WHEN 'array' THEN d.findings -> 'violations' ELSE '[]'::jsonb END) AS v(finding) ON true",
                   "CASE jsonb_typeof(v.finding) WHEN 'object' THEN v.finding ->> 'check' END"),
}


def outcomes_by_check(decided) -> list[dict]:
    """How the escalations that carried each check ended (one query): an escalation with findings of
    several checks counts once under each."""
    inner = decided.with_outcome().values(
        eid=F("pk"), outcome=F("review_outcome"), stopped_for=F("stop_reason"), findings=F("run__guard"))
    sql, params = inner.query.sql_with_params()
    join, check = _FINDINGS[connection.vendor]
    query = (f"SELECT code, outcome, COUNT(DISTINCT eid) FROM (SELECT d.eid, d.outcome, "
             f"COALESCE({check}, d.stopped_for) AS code FROM ({sql}) d {join}) found GROUP BY code, outcome")
    rows: dict[str, dict] = {}
    with connection.cursor() as cursor:
        cursor.execute(query, params)
        for code, outcome, n in cursor.fetchall():
            rows.setdefault(code, {"check": code})[outcome] = n
    return [with_rates(rows[key]) for key in sorted(rows)]


# -- quorum items ----------------------------------------------------------------------------------


def agreement(decided) -> dict:
    """Escalations that needed more than one approval (one query): ``agreed`` when no approval was set
    aside, neither by a later change of the text (an edit, a request for changes) nor by a rejection
    of the text it approved."""
    row = decided.filter(required_approvals__gt=1).with_agreement().aggregate(
        n=Count("pk"), changed=Count("pk", filter=Q(changed_after_approval=True)),
        rejected=Count("pk", filter=Q(rejected_after_approval=True)),
        agreed=Count("pk", filter=Q(changed_after_approval=False, rejected_after_approval=False)))
    return {"decided": row["n"], "agreed": row["agreed"], "changed_after_approval": row["changed"],
            "rejected_after_approval": row["rejected"],
            "agreement_rate": row["agreed"] / row["n"] if row["n"] else None}


# -- reviewers -------------------------------------------------------------------------------------


def reviewers(span: Span) -> list[dict]:
    """Each person's decisions in the window (one GROUP BY) and the approvals they gave towards a quorum
    (one more): throughput, and how often an approval of theirs overrode the guard's findings."""
    overriding = Q(action__in=APPROVING, guard_results__violations__0__isnull=False)
    rows = {row["actor"]: row for row in Decision.objects.filter(at__gte=span.since, at__lte=span.until).order_by()
            .values("actor", "actor__username", "actor__first_name", "actor__last_name").annotate(
                decided=Count("pk", filter=Q(action__in=FINAL)),
                approved=Count("pk", filter=Q(action=Decision.Action.APPROVE)),
                edited=Count("pk", filter=Q(action__in=(Decision.Action.EDIT_APPROVE, Decision.Action.EDIT))),
                rejected=Count("pk", filter=Q(action=Decision.Action.REJECT)),
                changes_requested=Count("pk", filter=Q(action=Decision.Action.REQUEST_CHANGES)),
                approvals=Count("pk", filter=Q(action__in=APPROVING)),
                overrides=Count("pk", filter=overriding))}
    quorum = dict(Approval.objects.filter(at__gte=span.since, at__lte=span.until).order_by()
                  .values_list("user").annotate(n=Count("pk")))
    people = []
    for actor, row in rows.items():
        name = " ".join(part for part in (row["actor__first_name"], row["actor__last_name"]) if part)
        people.append({
            "username": row["actor__username"], "name": name or row["actor__username"],
            **{key: row[key] for key in ("decided", "approved", "edited", "rejected", "changes_requested",
                                         "overrides")},
            "per_day": row["decided"] / span.days, "quorum_approvals": quorum.get(actor, 0),
            "override_rate": row["overrides"] / row["approvals"] if row["approvals"] else None})
    return sorted(people, key=lambda person: (-person["decided"], person["username"]))

"""Review analytics: ``GET /api/analytics`` answers the figures of the desk's analytics page
(``reviewer.desk.analytics``; docs/analytics.md), each person's only to those who may read every decision."""

from __future__ import annotations

from datetime import datetime

from django.core.exceptions import PermissionDenied
from ninja import Field, Query, Router, Schema

from reviewer.api.common import Error
from reviewer.desk import analytics

router = Router(tags=["analytics"])


class TimeToDecisionOut(Schema):
    decided: int
    median_seconds: float = Field(description="From the escalation's opening to its final decision, nearest rank.")
    p90_seconds: float = Field(description="The time 9 in 10 decisions took no longer than, nearest rank.")


class GroupTimeOut(TimeToDecisionOut):
    pipeline: str
    severity: str = Field(description="The incident's severity as the run saw it; empty for a run on no incident.")


class OutcomeRatesOut(Schema):
    as_is: float
    edited: float
    changes_requested: float
    rejected: float


class OutcomesOut(Schema):
    decided: int
    as_is: int = Field(description="Approved as the model wrote it.")
    edited: int = Field(description="Approved after a person wrote the text (edit then approve, or an edit "
                                    "under a quorum).")
    changes_requested: int = Field(description="Approved after the model revised it on a lead's instructions.")
    rejected: int
    rates: OutcomeRatesOut = Field(description="Each outcome's share of decided, 0 to 1.")


class PipelineOutcomesOut(OutcomesOut):
    pipeline: str


class CheckOutcomesOut(OutcomesOut):
    check: str = Field(description="A check whose findings the escalation carried when it opened; without "
                                   "findings, its stop reason.")


class QuorumOut(Schema):
    decided: int = Field(description="Decided escalations that needed more than one approval.")
    agreed: int = Field(description="Of them, those where no approval was set aside.")
    changed_after_approval: int = Field(description="The text changed (an edit, a request for changes) after an "
                                                    "approval.")
    rejected_after_approval: int = Field(description="Rejected although someone approved the text.")
    agreement_rate: float | None = Field(description="agreed / decided; null when none was decided.")


class ReviewerOut(Schema):
    username: str
    name: str
    decided: int = Field(description="Final decisions: approvals, edits then approvals, rejections.")
    per_day: float
    approved: int
    edited: int
    rejected: int
    changes_requested: int
    quorum_approvals: int = Field(description="Approvals given towards a quorum.")
    overrides: int = Field(description="Approvals of a text the guard had findings in.")
    override_rate: float | None = Field(description="overrides / approvals (approve, edit then approve); null "
                                                    "without approvals.")


class AnalyticsOut(Schema):
    days: int
    since: datetime
    until: datetime
    decided: int = Field(description="Escalations whose final decision falls in the window.")
    time_to_decision: list[GroupTimeOut]
    time_to_decision_overall: TimeToDecisionOut | None
    outcomes_by_pipeline: list[PipelineOutcomesOut]
    outcomes_by_check: list[CheckOutcomesOut]
    quorum: QuorumOut
    reviewers: list[ReviewerOut] | None = Field(description=(
        "Each person's figures, only for a user who may read every decision (policy admins); null otherwise."))


@router.get("/analytics", response={200: AnalyticsOut, 401: Error, 403: Error, 422: Error},
            summary="Review analytics over the last days")
def review_analytics(request, days: int = Query(analytics.DEFAULT_DAYS, ge=1, le=366)):
    """How escalations decided in the last ``days`` were decided: time to decision, how they ended per
    pipeline and per check, agreement on quorum items, and (for policy admins) each reviewer's figures."""
    if not analytics.may_see(request.user):
        raise PermissionDenied(analytics.REFUSED)
    return analytics.report(days, people=analytics.may_see_people(request.user))

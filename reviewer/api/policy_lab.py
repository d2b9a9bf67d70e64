"""The policy lab: preview what a proposed policy change would have done to the stored runs and the
decided texts, without saving it (agents.lab, as the admin's "Preview impact" does)."""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

from django.conf import settings
from django.urls import reverse
from ninja import Field, Router, Schema

from agents.forms import LabWindowForm
from agents.lab import (
    DEFAULT_RUNS,
    KINDS,
    MAX_RUNS,
    LabInputError,
    PreviewBusy,
    PreviewOverBudget,
    one_preview_per_person,
    preview,
    proposed_row,
)
from reviewer.api.common import ApiError, Error, check_strings

router = Router(tags=["policy lab"])
SHOWN = 200  # flipped and diverged runs listed; the counts cover them all
MAX_CHANGES = 50


class PreviewIn(Schema):
    kind: Literal[tuple(KINDS)]  # type: ignore[valid-type]
    key: str | None = Field(None, max_length=200, description="Which row: a pipeline or a policy id for a policy; "
                            "a route's name, a claim family's name or id, a region token, an issue type's name. "
                            "None: a new row.")
    changes: dict[str, Any] = Field(default_factory=dict, description="Field name -> proposed value.")
    last: int = Field(DEFAULT_RUNS, ge=1, le=MAX_RUNS, description="Replay the newest this many stored runs.")
    since: date | None = Field(None, description="Only runs created from this day.")
    until: date | None = Field(None, description="Only runs created before this day.")


class RunChange(Schema):
    run_id: int
    pipeline: str
    verdict: str
    before: str  # the stop reason it ended with ("success" when it passed)
    after: str | None  # the stop reason it would end with; None for a diverged run
    note: str
    url: str


class TextChange(Schema):
    label: str
    decision: str
    passes_proposed: bool
    contradicts: bool
    url: str


class PreviewOut(Schema):
    change: str
    pipelines: list[str]
    window: str
    runs: int
    counts: dict[str, int]
    by_stop_reason: dict[str, int]
    headline: str
    seconds: float
    decided_texts: int
    problems: list[str]
    flipped: list[RunChange]
    diverged: list[RunChange]
    decided_flips: list[TextChange]


def _run_change(flip) -> dict:
    replayed = flip.replayed
    return {"run_id": flip.run_id, "pipeline": flip.pipeline, "verdict": replayed.verdict,
            "before": replayed.before.stop_reason, "after": replayed.after.stop_reason if replayed.after else None,
            "note": replayed.note, "url": reverse("run", args=[flip.run_id])}


@router.post("/policy-lab/preview", response={200: PreviewOut, 400: Error, 401: Error, 403: Error, 422: Error,
                                                  429: Error})
def preview_change(request, body: PreviewIn):
    """Replay the stored runs under a proposed change of one policy row (nothing is saved, called or
    sent); for those allowed to change that kind of row."""
    model = KINDS[body.kind]
    action = "change" if body.key else "add"
    if not request.user.has_perm(f"{model._meta.app_label}.{action}_{model._meta.model_name}"):
        raise ApiError(403, f"Only policy admins can preview changes of {model._meta.verbose_name_plural}.")
    if len(body.changes) > MAX_CHANGES:
        raise ApiError(422, f"At most {MAX_CHANGES} changes at once.")
    check_strings(body.key, "key")
    check_strings(body.changes, "changes")
    window = LabWindowForm({"lab-last": body.last, "lab-since": body.since or "", "lab-until": body.until or ""})
    if not window.is_valid():
        raise ApiError(422, "The runs to replay are not valid; see detail.",
                       detail={name: [str(m) for m in errors] for name, errors in window.errors.items()})
    try:
        row = proposed_row(body.kind, body.key, body.changes)
    except LabInputError as error:
        raise ApiError(422, f"The change cannot be previewed: {error}") from None
    try:
        with one_preview_per_person(request.user.pk):
            report = preview(row, **window.window(), cpu_seconds=settings.POLICY_LAB_CPU_SECONDS)
    except PreviewBusy as busy:
        raise ApiError(429, str(busy)) from None
    except PreviewOverBudget as over:
        raise ApiError(422, str(over)) from None
    return {**report.summary(), "problems": report.problems,
            "flipped": [_run_change(f) for f in report.flips[:SHOWN]],
            "diverged": [_run_change(f) for f in report.diverged[:SHOWN]],
            "decided_flips": [{"label": f.decided.label, "decision": f.decided.decision,
                               "passes_proposed": f.passes_proposed, "contradicts": f.contradicts,
                               "url": f.decided.url} for f in report.text_flips[:SHOWN]]}

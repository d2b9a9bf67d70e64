"""Decisions as datasets: ``GET /api/datasets/{format}`` answers JSON Lines, with the filters of
``manage.py export_decisions`` (docs/datasets.md). Each export is recorded in the ledger."""

from __future__ import annotations

from datetime import date
from typing import Literal

from django.http import HttpResponse
from ninja import Query, Router, Schema

from reviewer.api.common import ApiError, Error, need
from reviewer.desk import datasets

router = Router(tags=["datasets"])


class DatasetFilters(Schema):
    since: date | None = None
    until: date | None = None
    pipeline: str = ""
    incident: str = ""
    decision: str = ""


JSONL = {"description": "One JSON object a line (docs/datasets.md).",
         "content": {"application/jsonl": {"schema": {"type": "string"}}}}


@router.get("/datasets/{dataset}", response={200: None, 401: Error, 403: Error, 422: Error},
            summary="Export decisions as a JSON Lines dataset", openapi_extra={"responses": {200: JSONL}})
def export_dataset(request, dataset: Literal["chat", "preference", "evals", "guard", "scorecard"],
                   filters: Query[DatasetFilters]):
    """One JSON object per line (``application/jsonl``): chat fine-tuning, preference pairs, eval
    samples or guard regression cases; or the guard's scorecard of those decisions (counts). Internal
    facts and API keys are never in it."""
    need(request, datasets.EXPORT_PERMISSION)
    try:
        wanted = datasets.Filters(**filters.dict())
    except datasets.ExportInvalid as error:
        raise ApiError(422, str(error)) from None
    body = datasets.export(request.user, dataset, wanted, door="api")
    return HttpResponse(body, content_type="application/jsonl; charset=utf-8")

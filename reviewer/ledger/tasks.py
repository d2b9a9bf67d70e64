"""Celery beat tasks of the ledger: its hourly verification (the dashboard shows the last result)
and its daily pruning past LEDGER_RETENTION_DAYS."""

from __future__ import annotations

from celery import shared_task

from reviewer.ledger import chain


@shared_task(name="reviewer.tasks.verify_ledger", ignore_result=True)
def verify_ledger() -> bool:
    return chain.verify_and_record().ok


@shared_task(name="reviewer.tasks.prune_ledger", ignore_result=True)
def prune_ledger() -> int:
    return chain.prune()

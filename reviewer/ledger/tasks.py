"""Celery beat tasks of the ledger: its hourly verification (the dashboard shows the last result)
and its daily pruning past LEDGER_RETENTION_DAYS."""

from __future__ import annotations

import logging

from celery import shared_task

from reviewer.ledger import chain

log = logging.getLogger("agents.ledger")


@shared_task(name="reviewer.tasks.verify_ledger", ignore_result=True)
def verify_ledger() -> bool:
    result = chain.verify_and_record()
    if not result.ok:
        log.error("the ledger is broken: %s", result.message)
    return result.ok


@shared_task(name="reviewer.tasks.prune_ledger", ignore_result=True)
def prune_ledger() -> int:
    return chain.prune()

"""Celery tasks of the review desk: the revision a lead's requested changes ask for."""

from celery import shared_task
from django.db import close_old_connections

from reviewer.desk import decisions


@shared_task(name="reviewer.tasks.execute_change_request", acks_late=True, reject_on_worker_lost=True,
             ignore_result=True)
def execute_change_request(change_pk: int) -> str:
    close_old_connections()
    try:
        change = decisions.make_requested_changes(change_pk)
        return change.status if change else "skipped"
    finally:
        close_old_connections()

"""The status page's task: rebuild its stored representations after a publication or a component's
change (enqueued by name: ``StatusSnapshot.objects.outdate``). Idempotent: a second run stores
nothing new."""

from celery import shared_task

from reviewer.status.snapshots import rebuild


@shared_task(name="reviewer.tasks.rebuild_status_page", ignore_result=True)
def rebuild_status_page() -> int:
    return len(rebuild())

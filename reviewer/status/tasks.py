"""The status page's tasks: rebuild its stored representations after a publication or a component's
change (enqueued by name: ``StatusSnapshot.objects.outdate``; idempotent: a second run stores nothing
new), and handle what the subscribe form was asked (enqueued by name by the form, whatever the
address, so that its answer cannot tell a new address from a known one)."""

from celery import shared_task

from reviewer.status.snapshots import rebuild
from reviewer.status.subscriptions import subscribe


@shared_task(name="reviewer.tasks.rebuild_status_page", ignore_result=True)
def rebuild_status_page() -> int:
    return len(rebuild())


@shared_task(name="reviewer.tasks.subscribe_to_status", bind=True, ignore_result=True, max_retries=5)
def subscribe_to_status(self, email: str, components: list[int], client: str = "", kind: str = "email",
                        url: str = "") -> None:
    """The subscribe form's request; a mail server (or Slack) that fails is tried again (``subscribe``
    undid its count, so the retry sends at once)."""
    try:
        subscribe(email, components, client=client, kind=kind, url=url)
    except Exception as error:
        raise self.retry(exc=error, countdown=60 * 2 ** self.request.retries) from None

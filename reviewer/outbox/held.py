"""Held deliveries: sends to email, subscribers or Slack that may have gone out (a timeout, a dropped
connection, an outcome never recorded), each waiting for a person to check and decide: send again
or mark as sent (``reviewer.outbox.publishing``). Listed with their evidence on the held page
(docs/operations.md, 'Held deliveries'); ops' channels are told when one is held
(``reviewer.alerts.notifications.held_message``).

A held row's ``next_attempt_at`` is when it was held: a held row is never due, and the conditional
update that holds it sets it.
"""

from __future__ import annotations

from django.db.models import QuerySet

from reviewer.models import Delivery


def held_deliveries() -> QuerySet[Delivery]:
    """Every held delivery, the longest held first, with what the page and the notice show."""
    return (Delivery.objects.filter(status=Delivery.Status.HELD)
            .select_related("channel", "subscriber", "update", "update__incident", "update__published_by",
                            "update__source_run")
            .order_by("next_attempt_at", "pk"))

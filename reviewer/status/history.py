"""Each component's status over time, and the 90 daily bars the status page draws from it
(docs/status-page.md, 'Uptime history').

A component's status on the page is derived from the published updates (``reviewer.status.public``);
it changes when a status delivery is delivered. :func:`record_statuses` writes a
``ComponentStatusChange`` for every component whose status on the page differs from the last one
recorded: the outbox calls it when a status delivery is delivered, and every rebuild of the page
calls it again (nothing new is written when nothing changed). A component added starts operational.

The bars are drawn when the page is built and stored with it, never per request. Days are UTC days.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta

from django.db.models import Max, OuterRef, Subquery
from django.utils import timezone
from django.utils.formats import date_format, number_format
from django.utils.translation import gettext, ngettext

from reviewer.models import (
    ComponentStatus,
    ComponentStatusChange,
    Delivery,
    DeliveryChannel,
    StatusComponent,
    status_label,
    worst_status,
)

DAYS = 90
# How much of a second in each status counts as down: a major outage fully, a partial outage for
# 30 %, degraded performance, maintenance and operational not at all (the weights Statuspage uses).
DOWN_WEIGHT = {ComponentStatus.MAJOR.value: 1.0, ComponentStatus.PARTIAL.value: 0.3}


def changed_at() -> datetime:
    """When the page's statuses last changed: the latest delivery to the status page (now if none)."""
    latest = Delivery.objects.filter(channel__kind=DeliveryChannel.Kind.STATUS, status=Delivery.Status.DELIVERED,
                                     ).aggregate(at=Max("delivered_at"))["at"]
    return latest or timezone.now()


def record_statuses(page=None, at: datetime | None = None) -> list[ComponentStatusChange]:
    """Record each component whose status (on ``page``, else on staff's page of every component, read
    now) differs from the last one recorded for it, as changed at ``at`` (by default when the status
    page last received a delivery, which is what changed it); returns the rows written."""
    from reviewer.status.public import EVERYONE, status_page

    page = status_page(EVERYONE) if page is None else page
    at = changed_at() if at is None else at
    last = ComponentStatusChange.objects.filter(component=OuterRef("pk")).order_by("-at", "-pk").values("status")[:1]
    recorded = dict(StatusComponent.objects.annotate(last=Subquery(last)).values_list("pk", "last"))
    return ComponentStatusChange.objects.bulk_create(
        ComponentStatusChange(component=view.component, status=view.status, at=at)
        for view in page.components if view.component.pk in recorded and recorded[view.component.pk] != view.status)


def component_added(sender, instance, created, raw=False, **kwargs) -> None:
    """A new component is operational from the moment it is added (connected in ReviewerConfig.ready)."""
    if created and not raw:
        ComponentStatusChange.objects.create(component=instance, status=ComponentStatus.OPERATIONAL,
                                             at=timezone.now())


@dataclass
class Day:
    """One bar: a UTC day of one component."""

    date: object  # a datetime.date
    status: str | None = None  # the worst status of the day; None: no record (before the component was added)
    up: float | None = None  # percent, rounded down to two decimals
    incidents: list[str] = field(default_factory=list)  # the public titles of the incidents that named it

    @property
    def label(self) -> str:
        """What the bar says to a screen reader and in its tooltip: "12 Nov: 99.20 % up, 1 incident: …"."""
        # In the language being rendered (reviewer.status.languages): English unless one is active.
        day = date_format(self.date, "j M")
        if self.status is None:
            return gettext("%(day)s: no data") % {"day": day}
        text = gettext("%(day)s: %(up)s up") % {"day": day, "up": percent(self.up)}
        if not self.incidents:
            return gettext("%(text)s, no incidents") % {"text": text}
        count = len(self.incidents)
        return ngettext("%(text)s, %(count)d incident: ", "%(text)s, %(count)d incidents: ", count) % {
            "text": text, "count": count} + "; ".join(self.incidents)

    @property
    def status_label(self) -> str:
        return gettext(status_label(self.status)) if self.status else gettext("No data")


@dataclass
class Bars:
    days: list[Day]
    up: float | None  # percent over the days with data, rounded down to two decimals

    @property
    def up_label(self) -> str:
        return gettext("no data") if self.up is None else gettext("%(up)s uptime") % {"up": percent(self.up)}


def percent(value: float) -> str:
    """"99.95 %", with the decimal separator of the language being rendered ("99,95 %" in French)."""
    return f"{number_format(value, 2)} %"


def floor2(value: float) -> float:
    """Rounded down to two decimals: a day with any downtime never reads as 100 %."""
    return math.floor(value * 100 + 1e-9) / 100


def _intervals(changes: list[ComponentStatusChange], start: datetime, end: datetime):
    """(from, to, status) of each stretch of [start, end) the changes cover, in order."""
    for index, change in enumerate(changes):
        until = changes[index + 1].at if index + 1 < len(changes) else end
        low, high = max(change.at, start), min(until, end)
        if high > low or start <= change.at <= end:  # a change at the very moment of ``now`` counts too
            yield low, high, change.status


def bars(changes: list[ComponentStatusChange], incidents: list[tuple[datetime, datetime, str]],
         now: datetime, days: int = DAYS) -> Bars:
    """The ``days`` daily bars ending with ``now``'s UTC day, from a component's ``changes`` (oldest
    first) and the incidents that named it ((start, end, title), end ``now`` while unresolved). Today
    counts up to ``now``."""
    now = now.astimezone(UTC)
    today = now.date()
    result, down_total, seen_total = [], 0.0, 0.0
    for offset in range(days - 1, -1, -1):
        date = today - timedelta(days=offset)
        start = datetime.combine(date, time.min, tzinfo=UTC)
        end = min(start + timedelta(days=1), now)
        day = Day(date=date)
        stretches = list(_intervals(changes, start, end)) if end > start else []
        if stretches:
            seen = sum((high - low).total_seconds() for low, high, _ in stretches)
            down = sum((high - low).total_seconds() * DOWN_WEIGHT.get(status, 0.0) for low, high, status in stretches)
            day.status = worst_status(status for _, _, status in stretches)
            day.up = floor2(100 * (1 - down / seen)) if seen else 100.0
            seen_total, down_total = seen_total + seen, down_total + down
        day.incidents = [title for begun, ended, title in incidents if begun < start + timedelta(days=1)
                         and ended >= start]
        result.append(day)
    up = floor2(100 * (1 - down_total / seen_total)) if seen_total else None
    if up is None and any(day.status for day in result):
        up = 100.0  # recorded at the very moment of ``now`` (a component just added): no time down yet
    return Bars(days=result, up=up)


def component_bars(page, now: datetime | None = None) -> dict[int, Bars]:
    """Every component's bars (by its pk), from two queries of the recorded changes. Today counts up
    to the last full hour, or to the latest change if later: a page built twice within the hour with
    no change in between is the same page (the same ETag); beat rebuilds it every hour."""
    now = timezone.now() if now is None else now
    shown = [view.component.pk for view in page.components]  # a private component's change moves no public page
    latest = ComponentStatusChange.objects.filter(at__lte=now, component__in=shown).aggregate(at=Max("at"))["at"]
    now = max(now.replace(minute=0, second=0, microsecond=0), latest or now.min.replace(tzinfo=UTC))
    since = now.astimezone(UTC) - timedelta(days=DAYS + 1)
    # The status each component had as the window opens (its last change before), then the changes in it.
    before = ComponentStatusChange.objects.filter(component=OuterRef("pk"), at__lt=since).order_by("-at", "-pk")
    changes: dict[int, list[ComponentStatusChange]] = {
        pk: [ComponentStatusChange(component_id=pk, status=status, at=since)]
        for pk, status in StatusComponent.objects.annotate(
            opening=Subquery(before.values("status")[:1])).filter(opening__isnull=False).values_list("pk", "opening")}
    for row in ComponentStatusChange.objects.filter(at__gte=since).order_by("at", "pk"):
        changes.setdefault(row.component_id, []).append(row)
    named: dict[int, list[tuple[datetime, datetime, str]]] = {}
    for incident in page.incidents:
        hit = {row.component_id for update in incident.updates for row in update.component_statuses.all()
               if row.status != ComponentStatus.OPERATIONAL}
        span = (incident.started_at, incident.resolved_at or now, incident.title)
        for pk in hit:
            named.setdefault(pk, []).append(span)
    return {view.component.pk: bars(changes.get(view.component.pk, []), named.get(view.component.pk, []), now)
            for view in page.components}

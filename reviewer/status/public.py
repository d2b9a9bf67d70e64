"""What customers see, read from the published updates only (docs/status-page.md).

Every word and status here comes from an update that the status page channel delivered: its public
title, state, impact, components and text. The incident row is read for nothing but its id (the
address of its public page): never its internal title, state or facts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Exists, F, OuterRef, Prefetch, Q, Value

from reviewer.models import (
    DEFAULT_TITLE,
    IMPACT_OF_STATUS,
    POSTMORTEM,
    UNDER_MAINTENANCE,
    ComponentStatus,
    Impact,
    Maintenance,
    MaintenanceStatus,
    MaintenanceUpdate,
    PublishedUpdate,
    StatusAudience,
    StatusComponent,
    UpdateComponent,
    status_label,
    worst_status,
)

RESOLVED = "resolved"
# An update published before updates carried a state reads as ongoing: an incident nobody resolved in
# public stays on the page until someone publishes its resolution.
UNSTATED = "investigating"
STATE_LABELS = {"investigating": "Investigating", "identified": "Identified", "monitoring": "Monitoring",
                RESOLVED: "Resolved", POSTMORTEM: "Post-incident report"}
# The overall banner, by how bad it is (Statuspage's indicator: none, minor, major, critical).
BANNERS = {Impact.NONE: "All systems operational", Impact.MINOR: "Degraded performance",
           Impact.MAJOR: "Partial outage", Impact.CRITICAL: "Major outage"}
RECENTLY_RESOLVED = 5
# Scheduled maintenance (docs/status-page.md): a component in a window in progress is "under
# maintenance" (Statuspage's status) unless an incident says worse; the banner and indicator too.
MAINTENANCE_INDICATOR = "maintenance"
MAINTENANCE_BANNER = "Under maintenance"
# How long a finished window stays in scheduled-maintenances.json.
MAINTENANCE_KEPT = 50


@dataclass
class PublicIncident:
    """An incident as its published updates tell it; ``updates`` newest first. ``reports`` are its
    published post-incident reports, newest first: the first one published, then each correction."""

    incident_id: str
    updates: list[PublishedUpdate]
    reports: list[PublishedUpdate] = field(default_factory=list)

    @property
    def report(self) -> PublishedUpdate | None:
        """The post-incident report customers read: the newest version (None before one is published)."""
        return self.reports[0] if self.reports else None

    @property
    def report_published_at(self) -> datetime | None:
        return self.reports[-1].published_at if self.reports else None

    @property
    def latest(self) -> PublishedUpdate:
        return self.updates[0]

    @property
    def title(self) -> str:
        return self.latest.public_title or DEFAULT_TITLE

    @property
    def state(self) -> str:
        """Its stage in public: the latest update's state, or ``postmortem`` once a report is published."""
        return POSTMORTEM if self.reports and self.resolved else (self.latest.state or UNSTATED)

    @property
    def state_label(self) -> str:
        return STATE_LABELS[self.state]

    @property
    def impact(self) -> str:
        return self.latest.impact

    @property
    def impact_label(self) -> str:
        return Impact(self.impact).label

    @property
    def resolved(self) -> bool:
        return self.latest.state == RESOLVED

    @property
    def started_at(self) -> datetime:
        return self.updates[-1].published_at

    @property
    def updated_at(self) -> datetime:
        return max([self.latest.published_at, *(report.published_at for report in self.reports[:1])])

    def first_at(self, state: str) -> datetime | None:
        """When the incident first reached ``state`` in public (None if it never did)."""
        return next((u.published_at for u in reversed(self.updates) if (u.state or UNSTATED) == state), None)

    @property
    def resolved_at(self) -> datetime | None:
        return self.latest.published_at if self.resolved else None


@dataclass
class ComponentView:
    component: StatusComponent
    status: str = ComponentStatus.OPERATIONAL
    updated_at: datetime | None = None  # when a public update last named it
    bars: object = None  # its 90 daily bars (reviewer.status.history.Bars), on the page only

    @property
    def status_label(self) -> str:
        return status_label(self.status)


@dataclass
class GroupView:
    """A component group on the page: its components, folded under it; it shows their worst status."""

    group: object  # a StatusComponentGroup
    members: list[ComponentView]

    @property
    def status(self) -> str:
        return worst_status(view.status for view in self.members)

    @property
    def status_label(self) -> str:
        return status_label(self.status)


@dataclass
class StatusPage:
    """Everything the page, the feed and the summary show, from one read of the published updates."""

    incidents: list[PublicIncident]  # newest update first
    components: list[ComponentView]
    updates: list[PublishedUpdate] = field(default_factory=list)  # every public update, newest first
    maintenances: list[Maintenance] = field(default_factory=list)  # the newest windows, by start
    audience: StatusAudience | None = None  # whose page it is (None: the public page)

    @property
    def upcoming_maintenances(self) -> list[Maintenance]:
        return [m for m in self.maintenances if m.status == MaintenanceStatus.SCHEDULED]

    @property
    def active_maintenances(self) -> list[Maintenance]:
        return [m for m in self.maintenances if m.status == MaintenanceStatus.IN_PROGRESS]

    @property
    def unresolved(self) -> list[PublicIncident]:
        return [incident for incident in self.incidents if not incident.resolved]

    @property
    def resolved(self) -> list[PublicIncident]:
        return sorted((i for i in self.incidents if i.resolved), key=lambda i: i.resolved_at, reverse=True)

    @property
    def recently_resolved(self) -> list[PublicIncident]:
        return self.resolved[:RECENTLY_RESOLVED]

    @property
    def indicator(self) -> str:
        """The impact (:meth:`impact`), or "maintenance" when nothing is wrong but a window is in
        progress, as Statuspage's indicator says it."""
        impact = self.impact
        return MAINTENANCE_INDICATOR if impact == Impact.NONE and self.active_maintenances else impact

    @property
    def impact(self) -> str:
        """How bad it is overall: the worst component's status as an impact, or the worst impact an
        unresolved incident declares (an incident may name no component), as Statuspage reckons it."""
        impacts = [IMPACT_OF_STATUS[worst_status(c.status for c in self.components if c.status != UNDER_MAINTENANCE)]]
        impacts += [incident.impact for incident in self.unresolved]
        return max(impacts, key=list(Impact.values).index)

    @property
    def unnamed(self) -> list[PublicIncident]:
        """Unresolved incidents whose latest update marks no component as affected: the components'
        "Operational" is not the whole story while they last, and the page says so."""
        return [incident for incident in self.unresolved
                if all(row.status == ComponentStatus.OPERATIONAL for row in incident.latest.component_statuses.all())]

    @property
    def banner(self) -> str:
        return MAINTENANCE_BANNER if self.indicator == MAINTENANCE_INDICATOR else BANNERS[self.indicator]

    @property
    def updated_at(self) -> datetime | None:
        times = [self.updates[0].published_at] if self.updates else []
        times += [u.created_at for m in self.maintenances for u in m.updates.all()[:1]]
        return max(times, default=None)

    @property
    def sections(self) -> list[ComponentView | GroupView]:
        """The components as the page lists them: each group where its position puts it, its members
        folded under it in their order; a group with no component is not shown."""
        groups: dict[int, GroupView] = {}
        sections: list[tuple[tuple, ComponentView | GroupView]] = []
        for view in self.components:
            group = view.component.group
            if group is None:
                sections.append(((view.component.position, view.component.name), view))
            elif group.pk not in groups:
                groups[group.pk] = GroupView(group, [view])
                sections.append(((group.position, group.name), groups[group.pk]))
            else:
                groups[group.pk].members.append(view)
        return [section for _, section in sorted(sections, key=lambda pair: pair[0])]

    def incident(self, incident_id: str) -> PublicIncident | None:
        return next((i for i in self.incidents if i.incident_id == incident_id), None)


# Whom a page is for (docs/status-page.md, 'Audiences and the internal page'): None is the public
# page (public components only), an audience's page adds its own components, EVERYONE is staff's.
EVERYONE = "everyone"


def _shown(audience) -> Q:
    """The components a page for ``audience`` shows, as a filter on StatusComponent."""
    if audience == EVERYONE:
        return Q()
    public = Q(audience__isnull=True)
    return public if audience is None else public | Q(audience=audience)


def public_updates(audience=None):
    """Every update the status page shows, newest first, with the components the page for ``audience``
    shows (two queries); the incident's id comes as ``public_incident_id``, and nothing else of the
    incident row; ``names_hidden`` says whether it names a component that page does not show."""
    shown = StatusComponent.objects.filter(_shown(audience))
    rows = UpdateComponent.objects.select_related("component")
    hidden = Value(False)
    if audience != EVERYONE:
        rows = rows.filter(component__in=shown)
        hidden = Exists(UpdateComponent.objects.filter(update=OuterRef("pk")).exclude(component__in=shown))
    return (PublishedUpdate.objects.public()
            .annotate(public_incident_id=F("incident__incident_id"), names_hidden=hidden)
            .defer("overridden", "justification", "reason", "policy_snapshot_id", "approved_by")
            .order_by("-published_at", "-version")
            .prefetch_related(Prefetch("component_statuses", queryset=rows)))


def _incidents_shown(updates: list[PublishedUpdate]) -> dict[str, list[PublishedUpdate]]:
    """The updates a page shows, by incident (newest first, so each incident's list is too, and incidents
    come by their newest). An update that names only components the page does not show is left out; so
    is an incident all of whose named components are such (a private incident is not there at all)."""
    by_incident: dict[str, list[PublishedUpdate]] = {}
    for update in updates:
        by_incident.setdefault(update.public_incident_id, []).append(update)
    shown = {}
    for incident_id, rows in by_incident.items():
        kept = [u for u in rows if not (u.names_hidden and not u.component_statuses.all())]
        if len(kept) == len(rows) or any(u.component_statuses.all() for u in kept):
            shown[incident_id] = kept
    return shown


def status_page(audience=None) -> StatusPage:
    """The whole picture for ``audience`` (None: the public page; EVERYONE: every component): the same
    few queries whatever the number of incidents. A component the page does not show is never named on it."""
    by_incident = _incidents_shown(list(public_updates(audience)))
    incidents = []
    for incident_id, rows in by_incident.items():
        lifecycle = [u for u in rows if u.state != POSTMORTEM]  # a report is not an update of the lifecycle
        if lifecycle:
            incidents.append(PublicIncident(incident_id, lifecycle, [u for u in rows if u.state == POSTMORTEM]))
    updates = sorted((u for rows in by_incident.values() for u in rows),
                     key=lambda u: (u.published_at, u.version), reverse=True)
    components = {c.pk: ComponentView(c) for c in StatusComponent.objects.filter(_shown(audience))
                  .select_related("group", "audience")}
    for incident in incidents:
        for update in incident.updates:
            for row in update.component_statuses.all():
                view = components.get(row.component_id)
                if view is not None and view.updated_at is None:
                    view.updated_at = update.published_at
        if not incident.resolved:  # the latest update of each unresolved incident says; the worst wins
            for row in incident.latest.component_statuses.all():
                view = components[row.component_id]
                view.status = worst_status([view.status, row.status])
    maintenances = public_maintenances(audience)
    for maintenance in maintenances:
        if maintenance.status == MaintenanceStatus.IN_PROGRESS:
            for component in maintenance.components.all():
                view = components.get(component.pk)
                if view is not None and view.status == ComponentStatus.OPERATIONAL:
                    view.status = UNDER_MAINTENANCE
    return StatusPage(incidents=incidents, components=list(components.values()), updates=updates,
                      maintenances=maintenances, audience=audience if isinstance(audience, StatusAudience) else None)


def public_maintenances(audience=None) -> list[Maintenance]:
    """Every upcoming and active window, and the newest finished ones, by start (three queries), with
    the components the page for ``audience`` shows; a window that touches none of them is left out."""
    updates = MaintenanceUpdate.objects.order_by("-created_at", "-id")
    shown = StatusComponent.objects.filter(_shown(audience))
    rows = (Maintenance.objects.filter(components__in=shown).distinct()
            .prefetch_related(Prefetch("components", queryset=shown), Prefetch("updates", queryset=updates))
            .order_by("-starts_at", "-id"))
    open_ = (MaintenanceStatus.SCHEDULED, MaintenanceStatus.IN_PROGRESS)
    finished = list(rows.exclude(status__in=open_)[:MAINTENANCE_KEPT])
    return sorted([*rows.filter(status__in=open_), *finished], key=lambda m: (m.starts_at, m.pk), reverse=True)


def previous_statuses(incident: PublicIncident, update: PublishedUpdate) -> dict[int, str]:
    """Each component's status in the incident's update before ``update`` (Statuspage's ``old_status``)."""
    index = incident.updates.index(update)
    before = incident.updates[index + 1] if index + 1 < len(incident.updates) else None
    return {row.component_id: row.status for row in before.component_statuses.all()} if before else {}

"""The status page's stored representations: built from the published updates, kept in
``StatusSnapshot`` rows, served as stored (docs/status-page.md, 'Caching').

A representation is built when it is missing or out of date: by the rebuild task, which the outbox
enqueues when a status delivery is delivered and which a component's change enqueues, or else by
the first request that finds it so. Several web processes serve the same row, so they all send the
same bytes and the same ETag. A build of an unchanged picture stores nothing new: the ETag and
Last-Modified stay, and clients' conditional requests keep getting 304.
"""

from __future__ import annotations

import hashlib
import json
from contextlib import nullcontext
from datetime import UTC, datetime

from django.conf import settings
from django.core.paginator import Paginator
from django.core.serializers.json import DjangoJSONEncoder
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import feedgenerator, timezone, translation
from django.utils.dateparse import parse_datetime
from django.utils.html import escape, linebreaks

from reviewer.models import StatusAudience, StatusSnapshot
from reviewer.status import languages
from reviewer.status.audiences import audience_links, split
from reviewer.status.history import component_bars, record_statuses
from reviewer.status.public import (
    STATE_LABELS,
    UNSTATED,
    GroupView,
    PublicIncident,
    StatusPage,
    previous_statuses,
    public_updates,
    status_page,
)

HTML = "text/html; charset=utf-8"
JSON = "application/json"
HISTORY_PER_PAGE = 20
# What the rebuild task builds every time; others (history pages, incident pages) when one is asked for.
MAIN = ("page", "feed.atom", "feed.rss", "summary.json", "status.json", "components.json", "incidents.json",
        "incidents/unresolved.json", "history:1")
# How many incidents incidents.json lists, the latest first (as many as Statuspage's).
INCIDENTS_LISTED = 50
# Scheduled maintenance's JSON (built every time too): its name -> which windows it lists.
MAINTENANCE_JSON = {"scheduled-maintenances.json": "all", "scheduled-maintenances/upcoming.json": "upcoming",
                    "scheduled-maintenances/active.json": "active"}
MAIN += tuple(MAINTENANCE_JSON)
# The time an empty feed says it was updated: a fixed instant, so an empty feed's bytes never change.
NOTHING_YET = datetime(2000, 1, 1, tzinfo=UTC)


def absolute(path: str) -> str:
    return settings.SITE_URL.rstrip("/") + path


def page_id() -> str:
    """A stable id of this status page for the summary (Statuspage's ``page.id``): from SITE_URL."""
    return hashlib.sha256(settings.SITE_URL.encode()).hexdigest()[:12]


def iso(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z") if value else None


# -- the representations --------------------------------------------------------------------------


def _html(template: str, page: StatusPage, **context) -> tuple[str, str]:
    context = {"page": page, "name": settings.STATUS_PAGE_NAME, "languages": languages.names(),
               "language": _language(), **context}
    return render_to_string(f"status/{template}", context), HTML


def _with_bars(page: StatusPage) -> StatusPage:
    """The page with each component's 90-day bars, drawn now and stored with the page."""
    drawn = component_bars(page)
    for view in page.components:
        view.bars = drawn[view.component.pk]
    return page


def _history(page: StatusPage, number: int) -> tuple[str, str] | None:
    paginator = Paginator(page.incidents, HISTORY_PER_PAGE, allow_empty_first_page=True)
    if not 1 <= number <= paginator.num_pages:
        return None
    return _html("history.html", page, history=paginator.page(number))


def _incident(page: StatusPage, incident_id: str) -> tuple[str, str] | None:
    incident = page.incident(incident_id)
    return None if incident is None else _html("incident.html", page, incident=incident)


def incident_url(incident: PublicIncident) -> str:
    return absolute(reverse("status_incident", args=[incident.incident_id]))


class _Fixed:
    """A feed whose ``updated`` is its newest entry's time, or a fixed instant when it has none."""

    def latest_post_date(self):
        return super().latest_post_date() if self.items else NOTHING_YET


class AtomFeed(_Fixed, feedgenerator.Atom1Feed):
    def add_item_elements(self, handler, item):
        super().add_item_elements(handler, item)
        # The update's text as plain text: a reader shows it as written, never as markup.
        handler.addQuickElement("content", item["text"], {"type": "text"})


class RssFeed(_Fixed, feedgenerator.Rss201rev2Feed):
    pass


def _language() -> str:
    """The language being rendered: English unless a translation.override says otherwise."""
    active = translation.get_language() or languages.SOURCE
    return active if active in languages.languages() else languages.SOURCE


def _feed(page: StatusPage, kind: type[feedgenerator.SyndicationFeed]) -> tuple[str, str]:
    name, language = settings.STATUS_PAGE_NAME, _language()
    if language == languages.SOURCE:
        link, feed_url = absolute(reverse("status")), absolute(reverse("status_feed" if kind is AtomFeed
                                                                       else "status_feed_rss"))
    else:
        link = absolute(reverse("status")) + f"?lang={language}"
        feed_url = absolute(reverse("status_feed_language" if kind is AtomFeed else "status_feed_rss_language",
                                    args=[language]))
    feed = kind(title=translation.gettext("%(name)s status") % {"name": name}, link=link,
                description=translation.gettext("Incident updates of %(name)s, newest first.") % {"name": name},
                feed_url=feed_url, language=language, feed_guid=feed_url if language != languages.SOURCE
                else absolute(reverse("status_feed")))
    incidents = {incident.incident_id: incident for incident in page.incidents}
    for update in page.updates[:settings.STATUS_FEED_ENTRIES]:
        incident = incidents[update.public_incident_id]
        url = f"{incident_url(incident)}#update-{update.pk}"
        title = update.public_title or incident.title
        url += f"?lang={language}" if language != languages.SOURCE else ""
        label = translation.gettext(STATE_LABELS[update.state or UNSTATED])
        if update in incident.reports[:-1]:  # a correction of the report published before
            label += f" ({translation.gettext('updated')})"
        feed.add_item(title=f"{title}: {label}", link=url, unique_id=url,
                      unique_id_is_permalink=True, pubdate=update.published_at, updateddate=update.published_at,
                      description=linebreaks(escape(update.text)), text=update.text)
    return feed.writeString("utf-8"), kind.content_type


def _component(view) -> dict:
    component = view.component
    return {"id": str(component.pk), "name": component.name, "status": view.status,
            "position": component.position, "description": component.description or None,
            "created_at": None, "updated_at": iso(view.updated_at), "showcase": True, "only_show_if_degraded": False,
            "group": False, "group_id": _group_id(component.group_id), "page_id": page_id()}


def _group_id(pk: int | None) -> str | None:
    return None if pk is None else f"group-{pk}"


def _components_json(page: StatusPage) -> list[dict]:
    """Every component and, as Statuspage lists them, each group as a component of its own (``group``
    true, its members' ids in ``components``, its members' worst status)."""
    found = []
    for section in page.sections:
        if isinstance(section, GroupView):
            members = [_component(view) for view in section.members]
            found.append({"id": _group_id(section.group.pk), "name": section.group.name, "status": section.status,
                          "position": section.group.position, "description": None, "created_at": None,
                          "updated_at": max((m["updated_at"] for m in members if m["updated_at"]), default=None),
                          "showcase": False, "only_show_if_degraded": False, "group": True, "group_id": None,
                          "page_id": page_id(), "components": [m["id"] for m in members]})
            found += members
        else:
            found.append(_component(section))
    return found


def _incident_json(page: StatusPage, incident: PublicIncident) -> dict:
    updates = []
    for update in incident.updates:
        before = previous_statuses(incident, update)
        updates.append({
            "id": str(update.pk), "incident_id": incident.incident_id, "status": update.state or UNSTATED,
            "body": update.text, "created_at": iso(update.published_at), "updated_at": iso(update.published_at),
            "display_at": iso(update.published_at),
            "affected_components": [{"code": str(row.component_id), "name": row.component.name,
                                     "old_status": before.get(row.component_id, "operational"),
                                     "new_status": row.status} for row in update.component_statuses.all()],
        })
    named = {row.component_id: row for row in incident.latest.component_statuses.all()}
    return {
        "id": incident.incident_id, "name": incident.title, "status": incident.state, "impact": incident.impact,
        "created_at": iso(incident.started_at), "updated_at": iso(incident.updated_at),
        "started_at": iso(incident.started_at), "monitoring_at": iso(incident.first_at("monitoring")),
        "resolved_at": iso(incident.resolved_at), "shortlink": incident_url(incident), "page_id": page_id(),
        # Statuspage's post-incident report fields: the newest version's text, when the first version was
        # published and when the text last changed (null before a report is published).
        "postmortem_body": incident.report.text if incident.report else None,
        "postmortem_published_at": iso(incident.report_published_at),
        "postmortem_body_last_updated_at": iso(incident.report.published_at if incident.report else None),
        "incident_updates": updates,
        "components": [_component(view) for view in page.components if view.component.pk in named],
    }


def _page_json(page: StatusPage) -> dict:
    return {"id": page_id(), "name": settings.STATUS_PAGE_NAME, "url": absolute(reverse("status")),
            "time_zone": "Etc/UTC", "updated_at": iso(page.updated_at)}


def _json(data: dict) -> tuple[str, str]:
    return json.dumps(data, cls=DjangoJSONEncoder, ensure_ascii=False, indent=2) + "\n", JSON


def _summary(page: StatusPage) -> tuple[str, str]:
    return _json({"page": _page_json(page), "components": _components_json(page),
                  "incidents": [_incident_json(page, incident) for incident in page.unresolved],
                  "scheduled_maintenances": [_maintenance_json(page, m) for m in
                                             [*page.active_maintenances, *page.upcoming_maintenances]],
                  "status": {"indicator": page.indicator, "description": page.banner}})


def _maintenance_json(page: StatusPage, maintenance) -> dict:
    """A window in Statuspage's ``scheduled_maintenances`` shape (docs/status-page.md)."""
    names = {c.pk for c in maintenance.components.all()}
    updates = list(maintenance.updates.all())  # newest first
    return {
        "id": f"m{maintenance.pk}", "name": maintenance.title, "status": maintenance.status, "impact": "maintenance",
        "created_at": iso(maintenance.created_at), "updated_at": iso(updates[0].created_at if updates else None),
        "monitoring_at": None, "started_at": iso(maintenance.started_at),
        "resolved_at": iso(maintenance.finished_at), "shortlink": absolute(reverse("status")),
        "scheduled_for": iso(maintenance.starts_at), "scheduled_until": iso(maintenance.ends_at),
        "page_id": page_id(),
        "incident_updates": [{"id": f"mu{update.pk}", "incident_id": f"m{maintenance.pk}", "status": update.status,
                              "body": update.text, "created_at": iso(update.created_at),
                              "updated_at": iso(update.created_at), "display_at": iso(update.created_at),
                              "affected_components": [{"code": str(c.pk), "name": c.name}
                                                      for c in maintenance.components.all()]}
                             for update in updates],
        "components": [_component(view) for view in page.components if view.component.pk in names],
    }


def _maintenances(page: StatusPage, which: str) -> tuple[str, str]:
    chosen = {"all": page.maintenances, "upcoming": page.upcoming_maintenances,
              "active": page.active_maintenances}[which]
    return _json({"page": _page_json(page),
                  "scheduled_maintenances": [_maintenance_json(page, m) for m in chosen]})


def _status(page: StatusPage) -> tuple[str, str]:
    return _json({"page": _page_json(page), "status": {"indicator": page.indicator, "description": page.banner}})


# The JSON API's lists (Statuspage's components.json, incidents.json, incidents/unresolved.json): the
# same objects as in summary.json, each list beside the page it belongs to.


def _components(page: StatusPage) -> tuple[str, str]:
    return _json({"page": _page_json(page), "components": _components_json(page)})


def _incidents(page: StatusPage, incidents: list[PublicIncident]) -> tuple[str, str]:
    return _json({"page": _page_json(page), "incidents": [_incident_json(page, incident) for incident in incidents]})


LISTS = {"components.json": _components,
         "incidents.json": lambda page: _incidents(page, page.incidents[:INCIDENTS_LISTED]),
         "incidents/unresolved.json": lambda page: _incidents(page, page.unresolved)}


def render(name: str, page: StatusPage) -> tuple[str, str] | None:
    """The body and content type of the representation ``name``, or None when there is no such thing
    (a history page past the last, an incident with no public update, a language the page does not
    have). ``page@fr`` is the page in French (reviewer.status.languages)."""
    base, language = languages.split(name)
    if language == languages.SOURCE:
        return _render(name, page)
    if language not in languages.languages() or not languages.localised(base):
        return None
    with translation.override(language):
        return _render(base, languages.translated(page, language))


def _render(name: str, page: StatusPage) -> tuple[str, str] | None:
    if name == "page":
        return _html("index.html", _with_bars(page))
    if name == "feed.atom":
        return _feed(page, AtomFeed)
    if name == "feed.rss":
        return _feed(page, RssFeed)
    if name == "summary.json":
        return _summary(page)
    if name == "status.json":
        return _status(page)
    if name in LISTS:
        return LISTS[name](page)
    if name in MAINTENANCE_JSON:
        return _maintenances(page, MAINTENANCE_JSON[name])
    kind, _, key = name.partition(":")
    if kind == "history" and key.isdigit():
        return _history(page, int(key))
    if kind == "incident" and key:
        return _incident(page, key)
    return None


# -- storing and serving --------------------------------------------------------------------------


def etag_of(body: str) -> str:
    return '"' + hashlib.sha256(body.encode()).hexdigest()[:32] + '"'


def _may_exist(name: str) -> bool:
    """Whether ``name`` can be built, asked with one small query before reading every update: an
    address someone made up (an incident or a history page that is not there) costs no more."""
    kind, _, key = languages.split(name)[0].partition(":")
    if kind == "incident":
        return public_updates().filter(public_incident_id=key).exists()
    if kind == "history" and key.isdigit() and int(key) > 1:
        incidents = public_updates().order_by().values("incident").distinct().count()
        return (int(key) - 1) * HISTORY_PER_PAGE < incidents
    return True


def build(name: str, page: StatusPage | None = None) -> StatusSnapshot | None:
    """Build ``name`` and store it, unless a build for a newer generation got there first; returns
    the row as stored (None for a representation that does not exist). An audience's name
    (``aud:<slug>:<name>``, reviewer.status.audiences) is built from that audience's page."""
    slug, own_name = split(name)
    audience = None if slug is None else StatusAudience.objects.filter(slug=slug).first()
    if slug is not None and audience is None:
        return None
    row = StatusSnapshot.objects.filter(name=name).first()
    if row is None and page is None and not _may_exist(own_name):
        return None
    generation = row.generation if row is not None else 1
    if page is None:
        record_statuses()  # a delivery that changed a status is recorded before the page shows it
        page = status_page(audience)
    # Times in UTC, whatever zone the request that happens to build it was in.
    with timezone.override(UTC), (audience_links(audience) if audience else nullcontext()):
        rendered = render(own_name, page)
    if rendered is None:
        return None
    body, content_type = rendered
    etag, now = etag_of(body), timezone.now()
    if row is None:
        try:
            with transaction.atomic():
                return StatusSnapshot.objects.create(name=name, body=body, content_type=content_type, etag=etag,
                                                     changed_at=now, generation=1, built_generation=1)
        except IntegrityError:  # another process stored it a moment ago
            row = StatusSnapshot.objects.get(name=name)
    changes = {"built_generation": generation}
    if row.etag != etag:
        changes |= {"body": body, "content_type": content_type, "etag": etag, "changed_at": now}
    # Never over a build for a newer generation (a later publication that a slower build missed).
    StatusSnapshot.objects.filter(pk=row.pk, built_generation__lte=generation).update(**changes)
    return StatusSnapshot.objects.filter(pk=row.pk).first()


# Served on every request: one plain statement, without the ORM's query compilation (a third of the
# time a stored page took to serve).
_FIELDS = ("id", "body", "content_type", "etag", "changed_at", "generation", "built_generation")
_SERVED = "SELECT {} FROM {} WHERE name = %s".format(", ".join(_FIELDS), StatusSnapshot._meta.db_table)


def _moment(value) -> datetime:
    """A stored time as an aware datetime: SQLite hands back text in UTC, PostgreSQL a datetime."""
    value = parse_datetime(value) if isinstance(value, str) else value
    return value if timezone.is_aware(value) else value.replace(tzinfo=UTC)


def current(name: str) -> StatusSnapshot | None:
    """The stored ``name`` if it is fresh (one query), else built now."""
    with connection.cursor() as cursor:
        cursor.execute(_SERVED, [name])
        found = cursor.fetchone()
    if found is not None:
        row = StatusSnapshot(name=name, **dict(zip(_FIELDS, found, strict=True)))
        if row.fresh:
            row.changed_at = _moment(row.changed_at)
            return row
    return build(name)


def rebuild() -> list[str]:
    """Rebuild the main representations and every stored one that is out of date, from one read of
    the updates; returns their names. The rebuild task runs this after each publication."""
    record_statuses()  # each component's history (reviewer.status.history), before the page draws it
    page = status_page()
    localised = [languages.snapshot_name(name, language) for language in languages.languages()[1:]
                 for name in MAIN if languages.localised(name)]
    stale = StatusSnapshot.objects.exclude(name__in=[*MAIN, *localised]).filter(
        built_generation__lt=F("generation")).values_list("name", flat=True)
    names = [*MAIN, *localised, *stale]
    for name in names:
        # An audience's page is built from its own picture (read here, at most once per build of a name).
        if build(name, page if split(name)[0] is None else None) is None:  # no longer exists (not public)
            StatusSnapshot.objects.filter(name=name).delete()
    return names


"""The status page under incident traffic (docs/status-page.md, 'Caching'): each representation is
stored and served as stored, with its ETag and Last-Modified; conditional requests get 304, HEAD
gets the headers alone; a publication rebuilds it (a new ETag), an unchanged rebuild keeps it."""

from __future__ import annotations

import pytest
import time_machine
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils.http import http_date

from reviewer.models import StatusSnapshot
from reviewer.status import snapshots, views
from reviewer.status.tasks import rebuild_status_page
from tests.factories import make_incident
from tests.reviewer.status.conftest import TEXT

CACHED = ["/status/", "/status/history/", "/status/feed/", "/status/feed/rss/", "/status/api/v2/summary.json",
          "/status/api/v2/status.json"]


@pytest.mark.parametrize("path", CACHED)
def test_head_answers_the_headers_of_get_without_a_body(client, components, path):
    got, head = client.get(path), client.head(path)
    assert head.status_code == 200 and head.content == b""
    for header in ("ETag", "Last-Modified", "Content-Type", "Content-Length", "Cache-Control"):
        assert head[header] == got[header], header
    assert int(head["Content-Length"]) == len(got.content)
    assert got["Cache-Control"] == "public, max-age=10"


@pytest.mark.parametrize("path", CACHED)
def test_a_client_with_the_current_etag_or_date_gets_304(client, components, path):
    first = client.get(path)
    for method in (client.get, client.head):
        by_etag = method(path, HTTP_IF_NONE_MATCH=first["ETag"])
        assert by_etag.status_code == 304 and by_etag.content == b""
        assert by_etag["ETag"] == first["ETag"] and "public" in by_etag["Cache-Control"]
        assert method(path, HTTP_IF_MODIFIED_SINCE=first["Last-Modified"]).status_code == 304
    assert client.get(path, HTTP_IF_NONE_MATCH='"something-else"').status_code == 200
    earlier = http_date(StatusSnapshot.objects.get(etag=first["ETag"]).changed_at.timestamp() - 60)
    assert client.get(path, HTTP_IF_MODIFIED_SINCE=earlier).status_code == 200


def test_a_publication_changes_the_etag_and_an_unchanged_rebuild_keeps_it(client, components, publish_update,
                                                                         incident):
    before = {path: client.get(path) for path in CACHED}
    publish_update(incident, title="Card payments failing", components={"Checkout": "partial_outage"})
    after = {path: client.get(path) for path in CACHED if path != "/status/api/v2/status.json"}
    for path, response in after.items():
        assert response["ETag"] != before[path]["ETag"], path
        assert client.get(path, HTTP_IF_NONE_MATCH=before[path]["ETag"]).status_code == 200, path
    assert TEXT in after["/status/"].content.decode()

    StatusSnapshot.objects.outdate()
    for path, response in after.items():  # built again from the same updates: the same bytes and validators
        again = client.get(path)
        assert (again.content, again["ETag"], again["Last-Modified"]) == (
            response.content, response["ETag"], response["Last-Modified"]), path


def test_delivering_to_the_status_page_enqueues_the_rebuild_by_name(components, incident, publish_update,
                                                                    monkeypatch, django_capture_on_commit_callbacks):
    sent = []
    monkeypatch.setattr(rebuild_status_page, "delay", lambda: sent.append("rebuild"))
    snapshots.build("page")
    with django_capture_on_commit_callbacks(execute=True):
        publish_update(incident, title="Card payments failing")
    assert sent == ["rebuild"]
    assert not StatusSnapshot.objects.get(name="page").fresh


def test_the_rebuild_task_stores_every_representation_so_requests_only_read(client, components, publish_update,
                                                                            incident):
    publish_update(incident, title="Card payments failing")
    client.get(f"/status/incidents/{incident.incident_id}/")  # stored too, then rebuilt with the others
    StatusSnapshot.objects.outdate(rebuild=False)
    # The main ones, the page, feeds and first history page in each other language, and the incident page.
    assert rebuild_status_page() == len(snapshots.MAIN) + 4 * (len(settings.STATUS_LANGUAGES) - 1) + 1
    assert all(row.fresh for row in StatusSnapshot.objects.all())
    for path in [*CACHED, f"/status/incidents/{incident.incident_id}/"]:
        with CaptureQueriesContext(connection) as queries:
            assert client.get(path).status_code == 200
        assert len(queries) == 1, (path, [q["sql"] for q in queries])


def test_a_slower_build_never_overwrites_a_newer_one(components, publish_update, incident):
    snapshots.build("page")
    stale_picture = snapshots.status_page()  # read before the publication ...
    publish_update(incident, title="Card payments failing")
    snapshots.build("page")  # ... the publication's own rebuild stores the new page ...
    fresh = StatusSnapshot.objects.get(name="page")
    # ... and the slow build, which read the generation before the publication, stores last:
    StatusSnapshot.objects.filter(pk=fresh.pk).update(generation=fresh.generation - 1)
    snapshots.build("page", stale_picture)
    assert StatusSnapshot.objects.get(name="page").body == fresh.body
    assert "Card payments failing" in fresh.body


def grow(n: int, publish_update):
    for number in range(n):
        incident = make_incident(f"inc_grow_{StatusSnapshot.objects.count()}_{number}_{n}")
        publish_update(incident, title="Card payments failing", components={"Checkout": "partial_outage"})
        publish_update(incident, state="identified", components={"API": "degraded_performance"})


@pytest.mark.parametrize("path", [*CACHED, "/status/incidents/inc_pay_1/"])
def test_building_a_page_runs_as_many_queries_on_ten_times_the_incidents(client, components, publish_update,
                                                                        incident, path):
    publish_update(incident, title="Card payments failing")

    def queries_to_build() -> int:
        StatusSnapshot.objects.outdate(rebuild=False)
        with CaptureQueriesContext(connection) as queries:
            assert client.get(path).status_code == 200
        return len(queries)

    assert client.get(path).status_code == 200  # stored once: each build below updates the stored row
    grow(1, publish_update)
    small = queries_to_build()
    grow(10, publish_update)
    assert queries_to_build() <= small


@pytest.mark.parametrize("path", [*CACHED, "/status/incidents/inc_pay_1/"])
def test_the_early_answers_keep_the_security_headers_of_every_page(client, components, publish_update, incident,
                                                                    path):
    publish_update(incident, title="Card payments failing")
    page = client.get("/accounts/login/")  # through the whole stack
    response = client.get(path)
    for header in ("Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options", "Referrer-Policy"):
        assert response[header] == page[header], header


def test_a_host_not_allowed_gets_400_on_the_early_answers_too(client, components):
    assert client.get("/status/", HTTP_HOST="status.evil.example").status_code == 400
    assert client.get("/status/").status_code == 200


@pytest.mark.parametrize("path", ["/status/incidents/made_up/", "/status/history/?page=7"])
def test_an_address_that_is_not_there_costs_small_queries_not_a_read_of_every_update(client, components,
                                                                                      publish_update, incident,
                                                                                      path):
    publish_update(incident, title="Card payments failing")
    with CaptureQueriesContext(connection) as queries:
        assert client.get(path).status_code == 404
    sql = [q["sql"] for q in queries]
    # The early answer asks, then the whole stack asks again to render its 404 page: two EXISTS or
    # COUNT queries, and never the read of every update with its components.
    assert len([q for q in sql if "reviewer_publishedupdate" in q]) <= 2, sql
    assert not [q for q in sql if "reviewer_updatecomponent" in q or "reviewer_statuscomponent" in q], sql
    assert not StatusSnapshot.objects.filter(name__in=["incident:made_up", "history:7"]).exists()


def test_each_process_reuses_what_it_read_for_a_second_then_reads_the_publication(
        client, components, publish_update, incident, settings, monkeypatch):
    settings.STATUS_PAGE_REUSE_SECONDS = 1
    monkeypatch.setattr(views, "_recent", {})
    with time_machine.travel("2026-11-27 12:00:00", tick=False) as clock:
        first = client.get("/status/")
        with CaptureQueriesContext(connection) as read:
            again = client.get("/status/")
        assert len(read) == 0 and again["ETag"] == first["ETag"]  # from this process's memory

        publish_update(incident, title="Card payments failing", components={"Checkout": "partial_outage"})
        clock.shift(0.5)
        assert client.get("/status/")["ETag"] == first["ETag"]  # within the second: what it read
        clock.shift(0.6)
        fresh = client.get("/status/")
        assert fresh["ETag"] != first["ETag"] and "Card payments failing" in fresh.content.decode()

        client.get("/status/incidents/inc_made_up/")  # a page that does not exist is never kept
        assert set(views._recent) == {"page"}


def test_with_reuse_off_every_request_reads_the_stored_page(client, components, settings):
    settings.STATUS_PAGE_REUSE_SECONDS = 0
    client.get("/status/")
    with CaptureQueriesContext(connection) as read:
        client.get("/status/")
    assert len(read) == 1


def test_every_address_that_serves_a_stored_representation_is_answered_early():
    """A public address served from the store (views.stored, history, incident) skips the session and
    login layers; the audiences' and staff's pages, which read who is asking, never do."""
    from reviewer.status import urls
    from reviewer.status.middleware import STATUS_URLS

    stored = {p.name for p in urls.urlpatterns if p.callback in (views.stored, views.history, views.incident)}
    assert stored == STATUS_URLS
    private = {p.name for p in urls.urlpatterns if p.name.startswith(("status_audience", "status_internal"))}
    assert private and not private & STATUS_URLS

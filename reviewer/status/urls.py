"""The public status page's addresses, under ``/status/`` (docs/status-page.md): the stored
representations, history, incident pages, feeds, the JSON summary, and the email subscriptions; and
the pages that are not public: an audience's (its own copy of each public address, under its signed
link) and staff's internal page (reviewer.status.private)."""

from django.urls import path

from reviewer.status import private, subscriptions, views

urlpatterns = [
    path("subscribe/", subscriptions.subscribe_page, name="status_subscribe"),
    path("subscribe/confirm/<uuid:key>/", subscriptions.confirm_page, name="status_confirm"),
    path("unsubscribe/<uuid:key>/", subscriptions.unsubscribe_page, name="status_unsubscribe"),
    path("", views.stored, {"name": "page"}, name="status"),
    path("history/", views.history, name="status_history"),
    path("incidents/<slug:incident_id>/", views.incident, name="status_incident"),
    path("feed/", views.stored, {"name": "feed.atom"}, name="status_feed"),
    path("feed/rss/", views.stored, {"name": "feed.rss"}, name="status_feed_rss"),
    # a feed in one language (reviewer.status.languages), whatever the reader's cookie or header says
    path("feed/<slug:language>/", views.stored, {"name": "feed.atom"}, name="status_feed_language"),
    path("feed/rss/<slug:language>/", views.stored, {"name": "feed.rss"}, name="status_feed_rss_language"),
    path("api/v2/summary.json", views.stored, {"name": "summary.json"}, name="status_summary"),
    path("api/v2/status.json", views.stored, {"name": "status.json"}, name="status_json"),
    path("api/v2/components.json", views.stored, {"name": "components.json"}, name="status_components"),
    path("api/v2/incidents.json", views.stored, {"name": "incidents.json"}, name="status_incidents"),
    path("api/v2/incidents/unresolved.json", views.stored, {"name": "incidents/unresolved.json"},
         name="status_unresolved"),
    # scheduled maintenance (reviewer.outbox.maintenance)
    path("api/v2/scheduled-maintenances.json", views.stored, {"name": "scheduled-maintenances.json"},
         name="status_maintenances"),
    path("api/v2/scheduled-maintenances/upcoming.json", views.stored,
         {"name": "scheduled-maintenances/upcoming.json"}, name="status_maintenances_upcoming"),
    path("api/v2/scheduled-maintenances/active.json", views.stored,
         {"name": "scheduled-maintenances/active.json"}, name="status_maintenances_active"),
    # not public (reviewer.status.private): an audience's pages, staff's internal page
    path("a/<slug:slug>/", private.audience_page, name="status_audience"),
    path("a/<slug:slug>/<str:token>/", private.audience_signed, name="status_audience_signed"),
    path("a/<slug:slug>/<str:token>/<path:rest>", private.audience_signed, name="status_audience_part"),
    path("internal/", private.internal_page, name="status_internal"),
]

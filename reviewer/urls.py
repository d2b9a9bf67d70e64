from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import path

from reviewer import metrics
from reviewer.api import api
from reviewer.desk.views import accounts, breaches, home, inbox, incidents, publishing, runs
from reviewer.status import subscriptions
from reviewer.status import views as status

urlpatterns = [
    path("", home.home, name="home"),
    path("accounts/login/", accounts.login, name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("incidents/", incidents.incident_list, name="incidents"),
    path("incidents/<slug:incident_id>/", incidents.incident_detail, name="incident"),
    path("incidents/<slug:incident_id>/runs/", incidents.start_run, name="start_run"),
    path("incidents/<slug:incident_id>/run-form/", incidents.run_form, name="run_form"),
    path("incidents/<slug:incident_id>/edit/", incidents.edit_incident, name="edit_incident"),
    path("runs/", runs.run_list, name="runs"),
    path("runs/failed/", runs.failed_runs, name="failed_runs"),
    path("runs/<int:pk>/", runs.run_detail, name="run"),
    path("runs/<int:pk>/trace/", runs.run_trace, name="run_trace"),
    path("runs/<int:pk>/retry/", runs.retry, name="run_retry"),
    path("publish/", publishing.ready_to_publish, name="ready_to_publish"),
    path("runs/<int:pk>/publish/", publishing.publish_confirm, name="publish_confirm"),
    path("runs/<int:pk>/publish/confirm/", publishing.publish_run, name="publish_run"),
    path("deliveries/<int:pk>/retry/", publishing.retry_delivery, name="delivery_retry"),
    path("deliveries/<int:pk>/send-again/", publishing.send_delivery_again, name="delivery_send_again"),
    path("deliveries/<int:pk>/mark-sent/", publishing.mark_delivery_sent, name="delivery_mark_sent"),
    path("status/subscribe/", subscriptions.subscribe_page, name="status_subscribe"),
    path("status/subscribe/confirm/<uuid:key>/", subscriptions.confirm_page, name="status_confirm"),
    path("status/unsubscribe/<uuid:key>/", subscriptions.unsubscribe_page, name="status_unsubscribe"),
    path("status/", status.stored, {"name": "page"}, name="status"),
    path("status/history/", status.history, name="status_history"),
    path("status/incidents/<slug:incident_id>/", status.incident, name="status_incident"),
    path("status/feed/", status.stored, {"name": "feed.atom"}, name="status_feed"),
    path("status/feed/rss/", status.stored, {"name": "feed.rss"}, name="status_feed_rss"),
    path("status/api/v2/summary.json", status.stored, {"name": "summary.json"}, name="status_summary"),
    path("status/api/v2/status.json", status.stored, {"name": "status.json"}, name="status_json"),
    path("inbox/", inbox.inbox, name="inbox"),
    path("inbox/reject/", inbox.bulk_reject, name="inbox_bulk_reject"),
    path("escalations/<int:pk>/", inbox.escalation_detail, name="escalation"),
    path("escalations/<int:pk>/check/", inbox.check_edit, name="escalation_check"),
    path("escalations/<int:pk>/decide/", inbox.decide, name="escalation_decide"),
    path("escalations/<int:pk>/request-changes/", inbox.request_changes, name="escalation_request_changes"),
    path("escalations/<int:pk>/claim/", inbox.claim, name="escalation_claim"),
    path("escalations/<int:pk>/release/", inbox.release, name="escalation_release"),
    path("breaches/", breaches.breach_list, name="breaches"),
    path("breaches/<int:pk>/publish/", breaches.publish_holding_statement, name="breach_publish"),
    path("sso/start/", accounts.sso_start, name="sso_start"),
    path("sso/callback/", accounts.sso_callback, name="sso_callback"),
    path("admin/login/", accounts.admin_login),  # before the admin's own: refused while passwords are off
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    # For monitoring (docs/operations.md, "Metrics"); /healthz and /readyz: reviewer.middleware.ProbeMiddleware.
    path("metrics", metrics.metrics, name="metrics"),
]

# Failures answer with the product's pages (or JSON under /api/): reviewer/errors.py.
handler400 = "reviewer.errors.bad_request"
handler500 = "reviewer.errors.server_error"

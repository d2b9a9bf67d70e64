"""The desk's pages: home, incidents, runs, publishing and deliveries, the inbox and its escalations,
breaches, the review analytics."""

from django.urls import path

from reviewer.desk.views import analytics, breaches, home, inbox, incidents, maintenance, publishing, runs, translations

urlpatterns = [
    path("", home.home, name="home"),
    path("incidents/", incidents.incident_list, name="incidents"),
    path("incidents/<slug:incident_id>/", incidents.incident_detail, name="incident"),
    path("incidents/<slug:incident_id>/runs/", incidents.start_run, name="start_run"),
    path("incidents/<slug:incident_id>/run-form/", incidents.run_form, name="run_form"),
    path("incidents/<slug:incident_id>/edit/", incidents.edit_incident, name="edit_incident"),
    path("incidents/<slug:incident_id>/report/", incidents.draft_report, name="draft_report"),
    path("runs/", runs.run_list, name="runs"),
    path("runs/failed/", runs.failed_runs, name="failed_runs"),
    path("runs/<int:pk>/", runs.run_detail, name="run"),
    path("runs/<int:pk>/trace/", runs.run_trace, name="run_trace"),
    path("runs/<int:pk>/retry/", runs.retry, name="run_retry"),
    path("publish/", publishing.ready_to_publish, name="ready_to_publish"),
    path("runs/<int:pk>/publish/", publishing.publish_confirm, name="publish_confirm"),
    path("runs/<int:pk>/publish/confirm/", publishing.publish_run, name="publish_run"),
    path("deliveries/held/", publishing.held_deliveries_page, name="held_deliveries"),
    path("live/nav/", home.live_nav, name="live_nav"),
    path("ledger/verify/", home.verify_ledger_now, name="verify_ledger"),
    path("deliveries/<int:pk>/retry/", publishing.retry_delivery, name="delivery_retry"),
    path("deliveries/<int:pk>/send-again/", publishing.send_delivery_again, name="delivery_send_again"),
    path("deliveries/<int:pk>/mark-sent/", publishing.mark_delivery_sent, name="delivery_mark_sent"),
    path("inbox/", inbox.inbox, name="inbox"),
    path("inbox/reject/", inbox.bulk_reject, name="inbox_bulk_reject"),
    path("escalations/<int:pk>/", inbox.escalation_detail, name="escalation"),
    path("escalations/<int:pk>/check/", inbox.check_edit, name="escalation_check"),
    path("escalations/<int:pk>/decide/", inbox.decide, name="escalation_decide"),
    path("escalations/<int:pk>/request-changes/", inbox.request_changes, name="escalation_request_changes"),
    path("escalations/<int:pk>/take/", inbox.take, name="escalation_take"),
    path("escalations/<int:pk>/translations/<slug:language>/", translations.save_translation,
         name="escalation_translation"),
    # The path before "take" was the word (bookmarks, scripts): the same view.
    path("escalations/<int:pk>/claim/", inbox.take, name="escalation_take_old_path"),
    path("escalations/<int:pk>/release/", inbox.release, name="escalation_release"),
    path("escalations/<int:pk>/snooze/", inbox.snooze, name="escalation_snooze"),
    path("escalations/<int:pk>/wake/", inbox.wake, name="escalation_wake"),
    path("breaches/", breaches.breach_list, name="breaches"),
    path("breaches/<int:pk>/publish/", breaches.publish_holding_statement, name="breach_publish"),
    path("analytics/", analytics.review_analytics, name="analytics"),
    path("maintenance/", maintenance.maintenance_list, name="maintenance"),
    path("maintenance/<int:pk>/update/", maintenance.maintenance_update, name="maintenance_update"),
]

"""For monitoring (docs/operations.md, "Metrics"); /healthz and /readyz are answered before the URLs,
by reviewer.middleware.ProbeMiddleware."""

from django.urls import path

from reviewer.operations import metrics

urlpatterns = [
    path("metrics", metrics.metrics, name="metrics"),
]

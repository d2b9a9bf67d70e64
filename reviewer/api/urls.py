"""The JSON API under ``/api/`` (docs/api.md): its resources, its OpenAPI document and its docs."""

from django.urls import path

from reviewer.api import api

urlpatterns = [
    path("", api.urls),
]

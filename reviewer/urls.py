"""The site's URLs: each concern's own (its ``urls.py``), and the admin's."""

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("", include("reviewer.desk.urls")),
    path("status/", include("reviewer.status.urls")),
    path("", include("reviewer.accounts.urls")),  # before the admin's: its admin/login/ comes first
    path("admin/", admin.site.urls),
    path("api/", include("reviewer.api.urls")),
    path("", include("reviewer.operations.urls")),
]

# Failures answer with the product's pages (or JSON under /api/): reviewer/operations/errors.py.
handler400 = "reviewer.operations.errors.bad_request"
handler500 = "reviewer.operations.errors.server_error"

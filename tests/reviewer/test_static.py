"""Pages load their CSS and htmx from the app itself (WhiteNoise), with DEBUG off as in the demo."""

import pytest
from django.core.management import call_command
from django.test import Client


@pytest.fixture
def collected(settings, tmp_path):
    settings.STATIC_ROOT = tmp_path / "static"
    call_command("collectstatic", interactive=False, verbosity=0)
    return settings.STATIC_ROOT


@pytest.mark.parametrize("path, content_type", [
    ("/static/css/app.css", "text/css"),
    ("/static/django_htmx/htmx-2.min.js", "text/javascript"),
])
def test_static_assets_are_served_without_debug(collected, settings, path, content_type):
    settings.DEBUG = False
    response = Client().get(path)  # a new client builds the middleware after collectstatic
    assert response.status_code == 200
    assert response["Content-Type"].startswith(content_type)


def test_pages_reference_htmx_from_static_never_a_cdn(login):
    page = login("ops").get("/").content.decode()
    assert (
        "/static/django_htmx/htmx-2.min.js" in page
        and "://" not in page.split("htmx-2.min.js")[0].rsplit("<script", 1)[-1]
    )

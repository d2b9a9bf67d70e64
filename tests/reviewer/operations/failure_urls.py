"""A test URLconf: the product's URLs and error handlers, and views that fail the two ways a server
fails (a bug, and a database that does not answer). Tests select it with ``settings.ROOT_URLCONF``."""

from django.db import OperationalError
from django.urls import path

from reviewer.urls import handler400, handler500  # noqa: F401  (Django reads them from the root URLconf)
from reviewer.urls import urlpatterns as product_urls


def broken(request):
    raise RuntimeError("a bug in a view")


def database_away(request):
    raise OperationalError("couldn't get a connection after 4.00 sec")


urlpatterns = [
    path("test-failures/bug/", broken),
    path("test-failures/database/", database_away),
    *product_urls,
]

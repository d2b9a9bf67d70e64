"""Audiences: status pages for a named group of customers (docs/status-page.md, 'Audiences and the
internal page').

An audience's page shows the public components and its own, with the incidents and maintenance that
name them; it is reached by a signed link (``/status/a/<slug>/<token>/``) or by signing in. The token
signs the audience's id and ``key_version`` with the site's secret key (``django.core.signing``):
rotating bumps the version, so every link handed out before answers 404. Its stored representations
are named ``aud:<slug>:<name>`` (``reviewer.status.snapshots``) and are outdated with the public ones.

Its pages link to each other under the signed prefix: they are rendered with a URL configuration in
which the public page's names (``status``, ``status_incident``, the feeds, the JSON) point under it, so
the public templates serve both; subscribing is not offered there (its name is missing).
"""

from __future__ import annotations

from contextlib import contextmanager
from functools import lru_cache

from django.core import signing
from django.db.models import F
from django.urls import URLPattern, URLResolver, get_resolver, get_urlconf, include, path, reverse, set_urlconf
from django.utils.crypto import constant_time_compare

from reviewer.models import StatusAudience, StatusSnapshot, absolute_url

PREFIX = "aud:"
# Those who see every audience's page and the internal page: whoever may see the incidents.
STAFF_PERMISSION = "agents.view_incident"
# The public addresses an audience's page does not have: subscribing is for the public page only.
NOT_SHOWN = {"status_subscribe", "status_confirm", "status_unsubscribe"}


def token(audience: StatusAudience) -> str:
    """The secret part of the audience's link: a signature of its id and key version."""
    signer = signing.Signer(salt=f"reviewer.status.audience:{audience.pk}")
    return signer.signature(str(audience.key_version))


def token_is_valid(audience: StatusAudience, given: str) -> bool:
    return constant_time_compare(token(audience), given)


def link(audience: StatusAudience) -> str:
    """The address to hand to the audience's readers."""
    return absolute_url("status_audience_signed", audience.slug, token(audience))


def may_read(user, audience: StatusAudience) -> bool:
    """A signed-in reader of the audience: one of its people, a member of one of its groups, or staff."""
    if not user.is_authenticated:
        return False
    if user.has_perm(STAFF_PERMISSION) or audience.users.filter(pk=user.pk).exists():
        return True
    return audience.groups.filter(pk__in=user.groups.values("pk")).exists()


def snapshot_name(audience: StatusAudience, name: str) -> str:
    return f"{PREFIX}{audience.slug}:{name}"


def split(name: str) -> tuple[str | None, str]:
    """(the audience's slug or None, the representation's own name) of a stored name."""
    if not name.startswith(PREFIX):
        return None, name
    slug, _, rest = name.removeprefix(PREFIX).partition(":")
    return slug, rest


def rotate(audience: StatusAudience) -> None:
    """A new link: every link handed out before answers 404, and its stored pages (which carry the
    link in their addresses) are built again."""
    StatusAudience.objects.filter(pk=audience.pk).update(key_version=F("key_version") + 1)
    audience.refresh_from_db(fields=["key_version"])
    StatusSnapshot.objects.filter(name__startswith=snapshot_name(audience, "")).outdate(rebuild=False)


class _Links:
    """A URL configuration with the public page's names under an audience's signed prefix."""

    def __init__(self, prefix: str):
        status = next(p for p in get_resolver().url_patterns if isinstance(p, URLResolver)
                      and getattr(p.urlconf_name, "__name__", "") == "reviewer.status.urls")
        public = [p for p in status.url_patterns if isinstance(p, URLPattern) and p.name
                  and p.name not in NOT_SHOWN and not p.name.startswith(("status_audience", "status_internal"))]
        self.urlpatterns = [path(prefix, include(public))]


@lru_cache(maxsize=256)
def _links(prefix: str) -> _Links:
    return _Links(prefix)  # one per prefix, so Django's resolver cache keeps one each


@contextmanager
def audience_links(audience: StatusAudience):
    """While rendering an audience's page, ``reverse`` and ``{% url %}`` give its own addresses."""
    prefix = reverse("status_audience_signed", args=[audience.slug, token(audience)]).lstrip("/")
    before = get_urlconf()
    set_urlconf(_links(prefix))
    try:
        yield
    finally:
        set_urlconf(before)

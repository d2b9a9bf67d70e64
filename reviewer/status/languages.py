"""The status page in several languages (docs/status-page.md, 'Languages').

Each language's page, history, incident pages and feeds are stored representations of their own
(``page@fr``; English keeps its names), built with the page's chrome in that language (Django's
gettext catalogues in ``locale/``) and each update's approved translation where it has one; an update
without one shows its English text, marked ``lang="en"``. The JSON API stays English, as
Statuspage's clients expect. The reader's language: ``?lang=`` (then kept in a cookie), else the
cookie, else the first of ``Accept-Language`` the page has, else English.
"""

from __future__ import annotations

import copy
from dataclasses import replace

from django.conf import settings
from django.utils.translation import gettext_noop
from django.utils.translation.trans_real import parse_accept_lang_header

from reviewer.models import UpdateTranslation
from reviewer.status.public import StatusPage

SOURCE = "en"
COOKIE = "status_lang"
# The representations that exist in every language; the others (JSON) only in English.
LOCALISED = ("page", "feed.atom", "feed.rss", "history", "incident")


def languages() -> list[str]:
    return list(settings.STATUS_LANGUAGES)


def names() -> list[tuple[str, str]]:
    """(code, name in its own language) of each of the page's languages, for the switcher."""
    own = dict(settings.LANGUAGES)
    return [(code, own.get(code, code)) for code in languages()]


def snapshot_name(base: str, language: str) -> str:
    return base if language == SOURCE else f"{base}@{language}"


def split(name: str) -> tuple[str, str]:
    """``page@fr`` -> (``page``, ``fr``); ``page`` -> (``page``, ``en``)."""
    base, _, language = name.partition("@")
    return base, language or SOURCE


def localised(base: str) -> bool:
    return base.partition(":")[0] in LOCALISED


def chosen(request) -> tuple[str, str]:
    """The reader's language and where it came from: "url", "cookie", "header" or "default"."""
    available = languages()
    asked = request.GET.get("lang", "")
    if asked in available:
        return asked, "url"
    kept = request.COOKIES.get(COOKIE, "")
    if kept in available:
        return kept, "cookie"
    for code, _ in parse_accept_lang_header(request.headers.get("Accept-Language", "")[:200]):
        code = code.split("-")[0].lower()
        if code in available:
            return code, "header"
    return SOURCE, "default"


def _english(update):
    shown = copy.copy(update)
    shown.text_lang = SOURCE
    return shown


def translated(page: StatusPage, language: str) -> StatusPage:
    """The page with each update's approved translation into ``language`` (one query), copies only: the
    same ``page`` is rendered in every language. An update left in English says so (``text_lang``)."""
    rows = {t.update_id: t for t in UpdateTranslation.objects.filter(
        update__in=[u.pk for u in page.updates], language=language).only("update_id", "text", "title")}
    updates = {}
    for update in page.updates:
        shown = copy.copy(update)
        translation = rows.get(update.pk)
        if translation is not None:
            shown.text = translation.text
            shown.public_title = translation.title or update.public_title
        else:
            shown.text_lang = SOURCE
        updates[update.pk] = shown
    # A post-incident report is shown as written (English), marked so.
    incidents = [replace(i, updates=[updates[u.pk] for u in i.updates],
                         reports=[updates.get(u.pk) or _english(u) for u in i.reports]) for i in page.incidents]
    return replace(page, incidents=incidents, updates=[updates[u.pk] for u in page.updates])


# The status words the page shows from Python values (reviewer.status.public, reviewer.models.status):
# marked here so makemessages puts them in the catalogues; templates translate them as variables.
STATUS_WORDS = (
    gettext_noop("Operational"), gettext_noop("Degraded performance"), gettext_noop("Partial outage"),
    gettext_noop("Major outage"), gettext_noop("Under maintenance"), gettext_noop("All systems operational"),
    gettext_noop("Investigating"), gettext_noop("Identified"), gettext_noop("Monitoring"), gettext_noop("Resolved"),
    gettext_noop("None"), gettext_noop("Minor"), gettext_noop("Major"), gettext_noop("Critical"),
    gettext_noop("Scheduled"), gettext_noop("In progress"), gettext_noop("Completed"), gettext_noop("Cancelled"),
)

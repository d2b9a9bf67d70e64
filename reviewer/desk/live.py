"""The desk's live fragments: parts of a page that refresh themselves while people keep it open
(docs/desk.md, 'Live pages').

One mechanism for all of them: the fragment polls its own URL with htmx (``hx-trigger="every 3s"``,
``data-live``), and the view answers with :func:`fragment`: the rendered fragment with an ETag of its
bytes, or ``304 Not Modified`` without a body when the poller already shows those bytes
(``static/js/live.js`` sends the last ETag as ``If-None-Match``; htmx swaps nothing on a 304). An
unchanged fragment costs its queries and a render on the server, but no bytes on the wire and no
swap in the browser (an open row, a focused field stay as they are).
"""

from __future__ import annotations

import hashlib
import re

from django.shortcuts import render
from django.utils.cache import get_conditional_response, patch_vary_headers
from django.utils.http import quote_etag

POLL_SECONDS = 3  # every live fragment's period: a change shows within this plus one request
# Each render masks the CSRF token afresh; every masked token of the session is valid, so the
# fragment a poller shows is unchanged whichever one it carries.
_CSRF_INPUT = re.compile(rb'(name="csrfmiddlewaretoken" value=")[^"]*(")')


def etag_of(body: bytes) -> str:
    """A quoted hash of the fragment's bytes, the CSRF tokens' masks left out."""
    return quote_etag(hashlib.blake2b(_CSRF_INPUT.sub(rb"\1\2", body), digest_size=12).hexdigest())


def fragment(request, template: str, context: dict, *, status: int = 200):
    """``template`` rendered for a poller: 200 with its ETag, or 304 when ``If-None-Match`` names it.
    Never stored by a cache in between (a person's fragment) nor by the browser (live.js keeps the ETag)."""
    response = render(request, template, context, status=status)
    etag = etag_of(response.content)
    response["ETag"] = etag
    response["Cache-Control"] = "no-store"
    patch_vary_headers(response, ("HX-Request",))
    if status != 200:
        return response
    return get_conditional_response(request, etag=etag, response=response)


def polled(request, target: str) -> bool:
    """Whether this request is htmx asking for the fragment whose id is ``target`` (a poll, or a
    pager link inside it), rather than for the page."""
    return bool(request.htmx and not request.htmx.history_restore_request and request.htmx.target == target)

"""Fault drill: fifty leads decide one escalation at the same instant, over real HTTP.

Each thread is a browser of its own: it logs in through the login form (session and CSRF cookies),
opens the escalation page, then waits at a barrier with its keep-alive connection open. Released
together, they POST approve or reject to the decide URL. Exactly one decision may be stored, exactly
one response may say it won, and every other response must say "already decided" and name the
winner. Complements tests/reviewer/desk/test_decide_concurrency.py, which races ``decisions.decide``
in-process: this one goes through the middleware, the CSRF check, the view and the live server.

Needs PostgreSQL: SQLite serialises writers with a database lock, so it cannot show the race.
"""

from __future__ import annotations

import re
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest
from django.db import connection
from django.urls import reverse

from reviewer.models import Decision, Escalation
from tests.factories import PASSWORD, make_escalation, make_incident

try:  # the openai SDK's HTTP client; some builds ship it under its new name
    import httpx
except ImportError:  # pragma: no cover - depends on the installed openai SDK
    import httpx2 as httpx

THREADS = 50
TIMEOUT = 60.0  # generous: the drill asserts outcomes, never times

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

DRAFT = "We are investigating a problem in the EU. Current status: degraded."


@pytest.fixture
def escalation(db):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: the test command's second pass runs it (DATABASE_URL=postgres://...)")
    return make_escalation(incident=make_incident("inc_http_race", title="HTTP race"), text=DRAFT)


@dataclass
class Press:
    """What one thread sent and what it got back."""

    index: int
    username: str
    action: str
    htmx: bool
    status: int = 0
    body: str = ""
    location: str = ""


def logged_in_browser(base_url: str, username: str, page: str) -> httpx.Client:
    """An HTTP client with a logged-in session, as a browser gets one: through the login form."""
    # httpx closes a connection idle for 5 s by default; logging fifty leads in takes longer than that on a
    # busy machine, and the burst would then open new connections into the live server's short listen queue.
    browser = httpx.Client(base_url=base_url, timeout=TIMEOUT, follow_redirects=False,
                           limits=httpx.Limits(keepalive_expiry=TIMEOUT * 4))
    login = reverse("login")
    browser.get(login).raise_for_status()
    answer = browser.post(login, data={"username": username, "password": PASSWORD,
                                       "csrfmiddlewaretoken": browser.cookies["csrftoken"], "next": page})
    assert answer.status_code == 302, f"login as {username} failed: {answer.status_code}"
    assert "sessionid" in browser.cookies
    browser.get(page).raise_for_status()  # the page the lead decides from; keeps the connection warm
    return browser


def form_for(press: Press, csrf: str) -> tuple[dict, dict]:
    data = {"action": press.action, "csrfmiddlewaretoken": csrf, "from": "panel"}
    if press.action == "reject":
        data["note"] = f"Lead {press.index} rejects: the update overstates what we know."
    headers = {"HX-Request": "true", "X-CSRFToken": csrf} if press.htmx else {}
    return data, headers


def test_fifty_leads_deciding_one_escalation_over_http_store_exactly_one_decision(escalation, users, live_server):
    leads = {"lead": users.lead, "lead2": users.lead2}
    names = {"lead": "Lena", "lead2": "Lars"}
    page = reverse("escalation", args=[escalation.pk])
    decide_url = reverse("escalation_decide", args=[escalation.pk])
    presses = [
        Press(index=i, username="lead" if i % 2 else "lead2",
              action="approve" if (i // 2) % 2 else "reject", htmx=i % 5 == 0)
        for i in range(THREADS)
    ]
    with ThreadPoolExecutor(max_workers=10) as pool:  # logging in fifty browsers one by one is slow
        browsers = list(pool.map(lambda press: logged_in_browser(live_server.url, press.username, page), presses))

    barrier = threading.Barrier(THREADS)
    errors: list[tuple[int, BaseException]] = []
    lock = threading.Lock()

    def press_button(press: Press, browser: httpx.Client) -> None:
        try:
            data, headers = form_for(press, browser.cookies["csrftoken"])
            barrier.wait(timeout=TIMEOUT)
            response = browser.post(decide_url, data=data, headers=headers)
            press.status, press.body = response.status_code, response.text
            press.location = response.headers.get("location", "")
        except BaseException as error:
            with lock:
                errors.append((press.index, error))

    threads = [threading.Thread(target=press_button, args=(p, b), name=f"lead-{p.index}")
               for p, b in zip(presses, browsers, strict=True)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=TIMEOUT * 2)
    finally:
        for browser in browsers:
            browser.close()

    assert not any(thread.is_alive() for thread in threads), "a request never came back"
    assert errors == []

    # Exactly one decision is stored, and the escalation says what it says.
    decision = Decision.objects.select_related("actor").get(escalation=escalation)
    stored = Escalation.objects.get(pk=escalation.pk)
    assert stored.decided_by_id == decision.actor_id and stored.decided_at == decision.at
    if decision.action == "approve":
        assert (stored.status, stored.final_text, decision.final_text) == ("approved", DRAFT, DRAFT)
    else:
        assert decision.action == "reject"
        assert (stored.status, stored.final_text) == ("rejected", "")
        assert decision.note.endswith("the update overstates what we know.")

    # Exactly one response says it won, and it is the one whose decision was stored.
    won = [p for p in presses if p.status in (200, 302)]
    lost = [p for p in presses if p.status == 409]
    assert len(won) == 1, sorted((p.index, p.status) for p in presses)
    assert len(lost) == THREADS - 1, sorted({p.status for p in presses})
    winner = won[0]
    assert (leads[winner.username].pk, winner.action) == (decision.actor_id, decision.action)
    if winner.htmx:
        assert winner.status == 200 and "Decided by" in winner.body
    else:
        assert winner.status == 302 and winner.location == page

    # Every other lead is told that it was already decided, by whom and how; nothing overwritten.
    status_word = "approved" if decision.action == "approve" else "rejected"
    told = re.compile(rf"Already decided by <strong>{names[winner.username]}</strong>.*?{status_word}", re.S)
    for press in lost:
        assert told.search(press.body), f"thread {press.index} was not told who won"
    assert Decision.objects.filter(escalation=escalation).count() == 1
    assert Escalation.objects.filter(pk=escalation.pk, status=status_word).exists()

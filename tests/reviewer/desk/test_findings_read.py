"""Findings and stop reasons read as sentences a lead understands, each with its code in small type
after it, on the inbox, the escalation page and the run page. The sentences are the stop-reason
catalogue's (``agents.core.stops``): one place says what a code means."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.urls import reverse

from agents.core.stops import STOP_REASONS
from reviewer.models import Decision
from tests.factories import make_escalation, make_incident

pytestmark = pytest.mark.django_db

CODE = "patch_violation:no_new_facts"
SENTENCE = STOP_REASONS[CODE]


@pytest.fixture
def escalation(db, users):
    incident = make_incident(eta_minutes=30)
    escalation = make_escalation(incident=incident, stop_reason=CODE,
                                 guard={"violations": [{"check": CODE, "found": "99"}]})
    # an earlier edit the guard found fault with, recorded with its check alone
    Decision.objects.create(escalation=escalation, actor=users.lead2, action="edit",
                            final_text="Fixed in 99 minutes.", guard_results={"violations": [{"check": CODE}]},
                            note="The 99 was checked.")
    return escalation


def findings(page: str) -> list[tuple[str, str]]:
    """Each finding or stop reason on the page as (sentence, code): the sentence, then the code in small type."""
    text = lambda html: " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())  # noqa: E731
    return [(text(message), text(code)) for message, code in re.findall(
        r'<span class="finding-message">(.*?)</span>.*?<span class="finding-check"><code>(.*?)</code>', page, re.S)]


def bare_codes(page: str) -> list[str]:
    """Codes shown alone: in a <code> that no finding-check holds."""
    return [m.start() for m in re.finditer(rf"<code[^>]*>{re.escape(CODE)}</code>", page)
            if not page[:m.start()].endswith('<span class="finding-check">')]


def test_the_inbox_row_says_its_stop_reason_and_its_finding_in_sentences(escalation, login):
    page = login("lead").get(reverse("inbox")).content.decode()

    assert (SENTENCE, CODE) in findings(page)  # the row's stop reason, and its guard finding without a message
    assert findings(page).count((SENTENCE, CODE)) >= 2
    assert bare_codes(page) == []


def test_the_escalation_page_says_the_stop_reason_and_every_finding_in_sentences(escalation, login):
    page = login("lead").get(reverse("escalation", args=[escalation.pk])).content.decode()

    history = page[page.index("Decision history"):]
    assert (SENTENCE, CODE) in findings(history)  # the earlier edit's finding, not a bare code
    assert findings(page).count((SENTENCE, CODE)) >= 3  # the stop reason, the guard, the history
    assert bare_codes(page) == []


def test_the_run_page_says_why_the_run_stopped_in_a_sentence(escalation, login):
    page = login("lead").get(reverse("run", args=[escalation.run.pk])).content.decode()

    header = page[page.index('id="run-header"'):page.index("</section>", page.index('id="run-header"'))]
    assert findings(header) == [(SENTENCE, CODE)]
    assert bare_codes(page) == []


def test_the_incident_pages_runs_say_why_each_run_stopped_in_a_sentence(escalation, login):
    page = login("ops").get(reverse("incident", args=[escalation.run.incident.incident_id])).content.decode()

    assert (SENTENCE, CODE) in findings(page)
    assert bare_codes(page) == []

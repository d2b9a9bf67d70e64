"""An incident's facts read the same on every page that lists them: the incident page, the escalation
page and the run page each show a fact by its label and in its unit (0.034 as a ratio is 3.4%), and
the approved actions and key messages under their headings, never a raw key path."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.urls import reverse

from tests.factories import make_escalation, make_incident

pytestmark = pytest.mark.django_db


@pytest.fixture
def incident(db):
    incident = make_incident(severity="P1", failed_payment_rate="0.034", eta_minutes=45, affected_checkout_pct=27,
                             approved_actions=["monitor payment failures every 15 minutes"],
                             key_messages=["Payments already made are safe."],
                             policy_hints={"avoid_absolute_guarantees": True})
    incident.record_version()
    return incident


def panel(page: str, start: str) -> dict[str, list[str]]:
    """The facts panel that opens at ``start``: {"dl": ["label: value", ...], heading: [item, ...]}."""
    section = page[page.index(start):]
    section = section[:section.index("</section>") if "</section>" in section else None]
    section = section[:section.index("</details>")] if start.startswith("<details") else section
    text = lambda html: " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())  # noqa: E731
    found = {"dl": [f"{text(dt)}: {text(dd)}" for dt, dd in
                    re.findall(r"<dt[^>]*>(.*?)</dt>\s*<dd[^>]*>(.*?)</dd>", section, re.S)]}
    for heading, items in re.findall(r"<h3>(.*?)</h3>\s*<ul[^>]*>(.*?)</ul>", section, re.S):
        found[text(heading)] = [text(item) for item in re.findall(r"<li[^>]*>(.*?)</li>", items, re.S)]
    return found


def test_the_escalation_page_shows_each_fact_in_its_unit_and_the_lists_under_headings(incident, login):
    escalation = make_escalation(incident=incident)

    page = login("lead").get(reverse("escalation", args=[escalation.pk])).content.decode()

    facts = panel(page, '<section class="card incident-facts" id="facts">')
    assert "Failed payment rate: 3.4%" in facts["dl"] and "ETA: 45 minutes" in facts["dl"]
    assert "Checkouts affected: 27%" in facts["dl"] and "State: Investigating" in facts["dl"]
    assert facts["Approved actions"] == ["monitor payment failures every 15 minutes"]
    assert facts["Key messages"] == ["Payments already made are safe."]
    assert facts["Policy hints"] == ["Avoid absolute guarantees: yes"]
    shown = " ".join(" ".join(items) for items in facts.values())
    assert "0.034" not in shown and "ratio" not in shown and "[0]" not in shown and "avoid_absolute" not in shown
    assert 'id="fact-0"' in page  # a marked word of the text still links to its fact


def test_the_incident_escalation_and_run_pages_list_the_same_facts_the_same_way(incident, login):
    escalation = make_escalation(incident=incident)
    client = login("lead")

    on_incident = panel(client.get(reverse("incident", args=[incident.incident_id])).content.decode(),
                        '<section class="card" id="facts">')
    on_escalation = panel(client.get(reverse("escalation", args=[escalation.pk])).content.decode(),
                          '<section class="card incident-facts" id="facts">')
    on_run = panel(client.get(reverse("run", args=[escalation.run.pk])).content.decode(),
                   '<details class="card run-facts" id="run-facts">')

    for name in ("Failed payment rate: 3.4%", "ETA: 45 minutes", "Severity: P1", "Regions: EU",
                 "State: Investigating", "Status: degraded"):
        assert name in on_incident["dl"] and name in on_escalation["dl"] and name in on_run["dl"], name
    for heading in ("Approved actions", "Key messages", "Policy hints"):
        assert on_incident[heading] == on_escalation[heading] == on_run[heading], heading

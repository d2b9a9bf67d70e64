"""What the guard reads from a context alone is read once per incident (agents.core.guard.support.per_incident),
and its answers still follow the context's content: an incident edited in place, between two checks of the
same text, is read again.
"""

from __future__ import annotations

import copy

from agents.core.guard import check_final_answer, guard_config
from agents.core.guard import support as support_module
from agents.core.guard.support import incident_key, per_incident
from agents.core.policy import SelfCritiquePolicy

CONTEXT = {
    "report_date": "2026-11-23", "region": "EU",
    "incident": {"incident_id": "inc_mail_12", "title": "Delayed email notifications", "severity": "P3",
                 "state": "investigating", "status": "degraded", "delayed_email_pct": 12},
    "fact_meta": [{"key": "delayed_email_pct", "label": "Delayed notification emails", "unit": "%"}],
    "key_messages": ["We are investigating delayed email notifications in the EU."],
    "internal": {"queue_host": "mq-3.eu.internal"},
}
TEXT = ("We are investigating delayed email notifications in the EU. "
        "If you need help, write to help@mail.example.com.")


def checks_of(text: str, context: dict) -> list[str]:
    policy = SelfCritiquePolicy()
    config = guard_config(policy, context)
    result = check_final_answer(text, context, config.rules, max_answer_chars=config.max_answer_chars,
                                strict_claims=config.strict_claims)
    return [v["check"].split(":")[-1] for v in result.violations]


def test_an_incident_edited_in_place_is_read_again_by_the_next_check():
    context = copy.deepcopy(CONTEXT)
    assert "unknown_contact" in checks_of(TEXT, context)

    context["key_messages"].append("Customers who need help can write to help@mail.example.com.")
    assert checks_of(TEXT, context) == []

    context["key_messages"].pop()
    assert "unknown_contact" in checks_of(TEXT, context)


def test_an_internal_fact_made_public_in_place_stops_being_internal():
    context = copy.deepcopy(CONTEXT)
    text = "We are investigating delayed email notifications in the EU, queued on mq-3.eu.internal."
    assert "internal_detail" in checks_of(text, context)

    context["internal"] = {}
    context["incident"]["queue"] = "mq-3.eu.internal"
    context["fact_meta"].append({"key": "queue", "label": "Queue", "unit": ""})
    assert "internal_detail" not in checks_of(text, context)


def test_a_reading_is_made_once_per_content_and_again_for_new_content(monkeypatch):
    monkeypatch.setattr(support_module, "_INCIDENTS", 2)
    reads: list[str] = []

    @per_incident
    def title(context):
        reads.append(context["incident"]["title"])
        return context["incident"]["title"].upper()

    first, same = copy.deepcopy(CONTEXT), copy.deepcopy(CONTEXT)
    assert title(first) == title(same) == "DELAYED EMAIL NOTIFICATIONS"
    assert reads == ["Delayed email notifications"]  # equal content, other dict: read once

    same["incident"]["title"] = "Delayed SMS notifications"
    assert title(same) == "DELAYED SMS NOTIFICATIONS"
    assert title(first, key=incident_key(first)) == "DELAYED EMAIL NOTIFICATIONS"
    assert len(reads) == 2

    third = copy.deepcopy(CONTEXT)
    third["incident"]["title"] = "Delayed push notifications"
    title(third)  # a third incident: only the two used last are kept, and the SMS one was used before
    title(first)
    title(same)
    assert reads == ["Delayed email notifications", "Delayed SMS notifications", "Delayed push notifications",
                     "Delayed SMS notifications"]


def test_a_context_that_is_no_json_is_read_every_time():
    reads = []

    @per_incident
    def count(context):
        reads.append(1)
        return len(context["tags"])

    context = {"tags": {"a", "b"}}  # a set: no JSON value
    assert incident_key(context) is None
    assert count(context) == count(context) == 2
    assert len(reads) == 2

""""Not now": a lead snoozes an escalation until a time without deciding it; the inbox leaves it out (a filter
shows it), it comes back by itself when the time comes, and its history says who snoozed it until when."""

import json
from datetime import UTC, datetime, timedelta

import pytest
import time_machine
from django.urls import reverse
from django.utils.html import strip_tags

from reviewer.desk import decisions, snoozing
from reviewer.ledger import chain
from reviewer.models import Escalation, LedgerEntry, Snooze
from tests import factories

NOW = datetime(2026, 11, 24, 14, 0, tzinfo=UTC)


@pytest.fixture
def clock():
    with time_machine.travel(NOW, tick=False) as traveller:
        yield traveller


@pytest.fixture
def escalation(users, clock):
    return factories.make_escalation(incident=factories.make_incident())


def inbox(client, query: str = "") -> str:
    return client.get(reverse("inbox") + query).content.decode()


def read(html: str) -> str:
    """The page's text as a person reads it: no tags, one space between words."""
    return " ".join(strip_tags(html).split())


def test_not_now_leaves_the_inbox_until_the_time_and_comes_back_by_itself(login, escalation, clock):
    client = login("lead")
    response = client.post(reverse("escalation_snooze", args=[escalation.pk]), {"until": "60"})
    assert response.status_code == 302

    escalation.refresh_from_db()
    assert escalation.status == "pending" and escalation.snoozed_until == NOW + timedelta(hours=1)
    assert f'id="esc-row-{escalation.pk}"' not in inbox(client)
    assert "1 snoozed" in inbox(client)
    snoozed = inbox(client, "?snoozed=1")
    assert f'id="esc-row-{escalation.pk}"' in snoozed and "Not now: snoozed until 2026-11-24 15:00" in read(snoozed)
    assert "1 snoozed escalation." in read(snoozed)
    assert client.get(reverse("home")).context["pending_escalations"] == 0  # the nav badge: nothing waits now

    clock.move_to(NOW + timedelta(hours=1, seconds=1))  # nothing runs: the time has come
    assert f'id="esc-row-{escalation.pk}"' in inbox(client)
    assert "snoozed" not in inbox(client).split('id="inbox-count"')[1][:300]


def test_the_snooze_is_recorded_in_the_escalations_history(login, escalation, users):
    client = login("lead")
    client.post(reverse("escalation_snooze", args=[escalation.pk]), {"until": "tomorrow"})

    snooze = Snooze.objects.get()
    assert (snooze.by, snooze.at, snooze.until) == (users.lead, NOW, datetime(2026, 11, 25, 9, 0, tzinfo=UTC))
    html = client.get(reverse("escalation", args=[escalation.pk])).content.decode()
    assert "snoozed by Lena until 2026-11-25 09:00 UTC" in read(html)
    assert "Lena snoozed it at 2026-11-24 14:00 UTC until 2026-11-25 09:00 UTC" in read(html)
    assert not escalation.decisions.exists()  # not a decision


def test_back_now_returns_it_early_and_says_who(login, escalation, users):
    client = login("lead2")
    snoozing.snooze(escalation.pk, users.lead, NOW + timedelta(hours=4))

    client.post(reverse("escalation_wake", args=[escalation.pk]))

    escalation.refresh_from_db()
    assert escalation.snoozed_until is None
    assert Snooze.objects.get().ended_by == users.lead2
    assert f'id="esc-row-{escalation.pk}"' in inbox(client)


def test_a_snoozed_escalation_can_still_be_decided(escalation, users):
    snoozing.snooze(escalation.pk, users.lead, NOW + timedelta(hours=1))

    outcome = decisions.decide(escalation.pk, users.lead2, "reject", note="Wrong incident.")

    assert outcome.won and Escalation.objects.get().status == "rejected"
    assert not Escalation.objects.get().is_snoozed


@pytest.mark.parametrize(("until", "message"), [
    (NOW - timedelta(minutes=1), "a time still to come"),
    (NOW + timedelta(days=8), "at most 7 days"),
])
def test_a_snooze_must_end_within_a_week_from_now(escalation, users, until, message):
    with pytest.raises(decisions.DecisionInvalid, match=message):
        snoozing.snooze(escalation.pk, users.lead, until)


def test_only_leads_snooze_and_a_decided_escalation_cannot_be(login, escalation, users):
    assert login("ops").post(reverse("escalation_snooze", args=[escalation.pk]), {"until": "60"}).status_code == 403
    decisions.decide(escalation.pk, users.lead, "reject", note="No.")
    response = login("lead").post(reverse("escalation_snooze", args=[escalation.pk]), {"until": "60"})
    assert response.status_code == 422 and "already decided" in response.content.decode()
    assert not Snooze.objects.exists()


# ---------------------------------------------------------------- through the API


def test_the_api_snoozes_and_brings_back_and_shows_until_when(api, escalation):
    lead = api("lead")
    until = (NOW + timedelta(hours=2)).isoformat()

    snoozed = lead.post(f"/escalations/{escalation.pk}/snooze", {"until": until})

    assert snoozed.status_code == 200 and snoozed.json()["snoozed_until"] == "2026-11-24T16:00:00Z"
    assert Snooze.objects.get().by.username == "lead"
    back = lead.post(f"/escalations/{escalation.pk}/snooze", {"until": None})
    assert back.status_code == 200 and back.json()["snoozed_until"] is None
    assert Snooze.objects.get().ended_by.username == "lead"


def test_the_api_refuses_a_snooze_it_cannot_record(api, escalation):
    lead = api("lead")
    past = lead.post(f"/escalations/{escalation.pk}/snooze", {"until": (NOW - timedelta(hours=1)).isoformat()})
    assert past.status_code == 422 and "a time still to come" in past.json()["message"]
    assert api("ops").post(f"/escalations/{escalation.pk}/snooze", {"until": None}).status_code == 403
    assert lead.post("/escalations/999999/snooze", {"until": None}).status_code == 404


def test_a_snooze_and_its_early_end_are_in_the_ledger(escalation, users):
    snooze = snoozing.snooze(escalation.pk, users.lead, NOW + timedelta(hours=2))
    snoozing.wake(escalation.pk, users.lead2)

    entries = [json.loads(e.content) for e in LedgerEntry.objects.filter(kind="snooze").order_by("seq")]
    assert [e["subject"] for e in entries] == [f"snooze:{snooze.pk}"] * 2
    started, ended = (e["data"] for e in entries)
    assert (started["escalation"], started["by"]) == (escalation.pk, "lead")
    assert started["until"] == "2026-11-24T16:00:00.000000+00:00"
    assert "ended_by" not in started and ended["ended_by"] == "lead2"
    assert chain.verify().ok

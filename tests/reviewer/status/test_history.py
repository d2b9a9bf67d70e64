"""Each component's history (reviewer/status/history.py): its status is recorded when a status
delivery changes it, and the page's 90 daily bars (worst status, uptime, incidents) match a known
history, built on a controlled clock."""

from __future__ import annotations

import math
import re
from datetime import UTC, date, datetime, timedelta
from html import unescape

import pytest

from reviewer.models import ComponentStatusChange, StatusComponent, StatusComponentGroup
from reviewer.status.history import bars
from reviewer.status.snapshots import rebuild
from tests.factories import make_incident
from tests.reviewer.status.conftest import RESOLVED_TEXT

ADDED = datetime(2026, 1, 15, 10, 0, tzinfo=UTC)
NOW = datetime(2026, 3, 31, 12, 0, tzinfo=UTC)  # the 90 days: 1 Jan to 31 Mar
DAY = 86400


def at(month, day, hour):
    return datetime(2026, month, day, hour, 0, tzinfo=UTC)


def floor2(value: float) -> float:
    return math.floor(value * 100 + 1e-9) / 100


def bars_on(page: str, name: str) -> list[tuple[str, str]]:
    """A component's bars as the page writes them: (the bar's status class, its accessible name)."""
    bars = re.search(rf'<ol class="bars" aria-label="{re.escape(name)}, last 90 days: [^"]*">(.*?)</ol>', page, re.S)[1]
    return [(status, unescape(label)) for status, label in re.findall(
        r'<button type="button" class="bar bar-([a-z_]+)"\s*><span class="visually-hidden">([^<]*)</span>', bars)]


def expected(changes: dict[date, tuple[str, str]]) -> list[tuple[str, str]]:
    """The 90 bars of a component added at ADDED: no data before, operational with no incident after,
    except the days in ``changes``."""
    days = [date(2026, 1, 1) + timedelta(days=n) for n in range(90)]
    assert days[-1] == NOW.date()
    rows = []
    for day in days:
        name = f"{day.day} {day:%b}"
        if day in changes:
            rows.append(changes[day])
        elif day < ADDED.date():
            rows.append(("none", f"{name}: no data"))
        else:
            rows.append(("operational", f"{name}: 100.00 % up, no incidents"))
    return rows


@pytest.fixture
def history(db, publish_update, time_machine):
    """Checkout, API and Sign-in added on 15 Jan 10:00; on 10 Mar a Checkout outage (major 06:00-12:00,
    partial 12:00-18:00, resolved 18:00); from 30 Mar 22:00 API degraded and Sign-in in partial outage,
    Sign-in in major outage from 31 Mar 03:00, unresolved at NOW. Each publication is delivered and the
    page rebuilt, as the delivery's rebuild task does; at NOW beat's hourly rebuild runs."""
    time_machine.move_to(ADDED, tick=False)
    for position, name in enumerate(["Checkout", "API", "Sign-in"], 1):
        StatusComponent.objects.create(name=name, position=position)

    def publish(when, incident, **fields):
        time_machine.move_to(when, tick=False)
        publish_update(incident, **fields)
        rebuild()

    payments, login = make_incident("inc_pay_1"), make_incident("inc_login_2")
    publish(at(3, 10, 6), payments, title="Card payments failing", components={"Checkout": "major_outage"})
    publish(at(3, 10, 12), payments, state="monitoring", components={"Checkout": "partial_outage"})
    publish(at(3, 10, 18), payments, text=RESOLVED_TEXT, state="resolved")
    publish(at(3, 30, 22), login, title="Slow sign-in",
            components={"API": "degraded_performance", "Sign-in": "partial_outage"})
    publish(at(3, 31, 3), login, state="identified",
            components={"API": "degraded_performance", "Sign-in": "major_outage"})
    time_machine.move_to(NOW, tick=False)
    rebuild()  # beat's hourly rebuild: today's bar counts up to NOW


def test_each_change_of_a_components_status_is_recorded_when_it_is_delivered(history):
    recorded = [(row.component.name, row.status, row.at) for row in ComponentStatusChange.objects.all()]
    assert recorded == [
        ("Checkout", "operational", ADDED), ("Checkout", "major_outage", at(3, 10, 6)),
        ("Checkout", "partial_outage", at(3, 10, 12)), ("Checkout", "operational", at(3, 10, 18)),
        ("API", "operational", ADDED), ("API", "degraded_performance", at(3, 30, 22)),
        ("Sign-in", "operational", ADDED), ("Sign-in", "partial_outage", at(3, 30, 22)),
        ("Sign-in", "major_outage", at(3, 31, 3)),
    ]
    rebuild()  # nothing changed: nothing new is recorded
    assert ComponentStatusChange.objects.count() == 9


def test_the_90_daily_bars_match_the_recorded_history(client, history):
    page = client.get("/status/").content.decode()
    seen = (NOW - ADDED).total_seconds()

    # 10 Mar: 6 h of major outage count fully, 6 h of partial outage for 30 %.
    checkout_down = 6 * 3600 + 0.3 * 6 * 3600
    assert bars_on(page, "Checkout") == expected({
        date(2026, 3, 10): ("major_outage", f"10 Mar: {floor2(100 * (1 - checkout_down / DAY)):.2f} % up, "
                                            "1 incident: Card payments failing"),
    })
    assert "10 Mar: 67.50 % up" in page
    assert f"Checkout, last 90 days: {floor2(100 * (1 - checkout_down / seen)):.2f} % uptime" in page

    # Degraded performance is up time; today counts up to now (12:00).
    assert bars_on(page, "API") == expected({
        date(2026, 3, 30): ("degraded_performance", "30 Mar: 100.00 % up, 1 incident: Slow sign-in"),
        date(2026, 3, 31): ("degraded_performance", "31 Mar: 100.00 % up, 1 incident: Slow sign-in"),
    })
    assert "API, last 90 days: 100.00 % uptime" in page

    # 30 Mar: 2 h partial; 31 Mar: 3 h partial, then 9 h major, out of the 12 h so far.
    today_down = 0.3 * 3 * 3600 + 9 * 3600
    assert bars_on(page, "Sign-in") == expected({
        date(2026, 3, 30): ("partial_outage", "30 Mar: 97.50 % up, 1 incident: Slow sign-in"),
        date(2026, 3, 31): ("major_outage", f"31 Mar: {floor2(100 * (1 - today_down / (12 * 3600))):.2f} % up, "
                                            "1 incident: Slow sign-in"),
    })
    assert "31 Mar: 17.50 % up" in page
    total_down = 0.3 * 2 * 3600 + today_down
    assert f"Sign-in, last 90 days: {floor2(100 * (1 - total_down / seen)):.2f} % uptime" in page


def test_the_bars_are_stored_with_the_page_and_today_grows_by_the_hour(client, history, time_machine):
    first = client.get("/status/")
    time_machine.move_to(NOW + timedelta(minutes=40), tick=False)
    rebuild()  # within the hour and nothing changed: the same page, the same ETag
    assert client.get("/status/")["ETag"] == first["ETag"]

    time_machine.move_to(NOW + timedelta(hours=1, minutes=5), tick=False)
    rebuild()  # beat's hourly rebuild: today now counts 13 h
    page = client.get("/status/").content.decode()
    down = 0.3 * 3 * 3600 + 10 * 3600
    assert f"31 Mar: {floor2(100 * (1 - down / (13 * 3600))):.2f} % up" in page


def test_a_group_folds_its_components_and_shows_the_worst_of_their_statuses(client, history):
    access = StatusComponentGroup.objects.create(name="Access", position=0)
    StatusComponent.objects.filter(name__in=["API", "Sign-in"]).update(group=access)
    rebuild()
    page = client.get("/status/").content.decode()
    group = re.search(r'<li class="component component-group">\s*<details>(.*?)</details>', page, re.S)[1]
    assert re.search(r'<span class="component-name">Access\s*<span class="small muted"\s*>2 components</span>\s*</span>'
                     r'\s*<span class="component-status component-major_outage"\s*>Major outage</span>', group)
    assert re.findall(r'<span class="component-name">(\w[\w-]*)', group) == ["Access", "API", "Sign-in"]
    # The group comes first (position 0), Checkout after it, outside it.
    assert page.index("Access") < page.index('<span class="component-name">Checkout')
    assert "Checkout" not in group


def test_a_held_status_delivery_marked_sent_shows_and_is_recorded(client, db, users, publish_update, time_machine):
    """A person marks a held delivery to the status page as sent: the page shows its statuses at the
    next request and the history dates the change when it was marked."""
    from reviewer.models import Delivery
    from reviewer.outbox.publishing import mark_held_delivery_sent

    time_machine.move_to(ADDED, tick=False)
    checkout = StatusComponent.objects.create(name="Checkout")
    client.get("/status/")  # the page as built before the update
    update = publish_update(make_incident("inc_pay_1"), deliver=False, title="Card payments failing",
                            components={"Checkout": "major_outage"})
    delivery = update.deliveries.get(channel__kind="status")
    Delivery.objects.filter(pk=delivery.pk).update(status=Delivery.Status.HELD)
    time_machine.move_to(at(1, 15, 11), tick=False)
    assert mark_held_delivery_sent(Delivery.objects.get(pk=delivery.pk), users.ops)

    page = client.get("/status/").content.decode()
    assert 'component-major_outage">Major outage' in page
    assert [(row.status, row.at) for row in checkout.status_changes.all()] == [
        ("operational", ADDED), ("major_outage", at(1, 15, 11))]


def test_a_component_added_this_very_moment_reads_as_up_not_as_without_data():
    component = StatusComponent(name="New")
    change = ComponentStatusChange(component=component, status="operational", at=NOW)
    drawn = bars([change], [], NOW)
    assert drawn.days[-1].status == "operational" and drawn.up == 100.0 and drawn.up_label == "100.00 % uptime"
    assert bars([], [], NOW).up_label == "no data"

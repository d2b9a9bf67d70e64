"""Fixtures of the status page's tests: components, and updates published the way ops publish them
and delivered by the outbox's own attempt (the status page shows what its channel delivered)."""

from __future__ import annotations

import pytest

from agents.models import Run
from reviewer.models import DeliveryChannel, StatusComponent
from reviewer.outbox import tasks
from reviewer.outbox.publishing import CONFIRM_REPEAT, PublicFields, publish
from tests.factories import make_incident, make_run

TEXT = "We are investigating a problem in the EU. Current status: degraded."
RESOLVED_TEXT = "Payments work again in the EU."
INTERNAL_TITLE = "P1 payment degradation in the EU"


@pytest.fixture
def subscriber_channels(monkeypatch, settings):
    """The status page and the subscribers channel; deliveries are attempted by hand, not by a broker."""
    monkeypatch.setattr(tasks.deliver, "delay", lambda pk: None)
    settings.SITE_URL = "https://status.example.com"
    DeliveryChannel.objects.all().delete()
    DeliveryChannel.objects.create(name="Status page", kind="status")
    DeliveryChannel.objects.create(name="Subscribers", kind="subscribers")


@pytest.fixture
def components(db):
    """Checkout, API and Sign-in, in that order on the page."""
    return {name: StatusComponent.objects.create(name=name, position=position, description=f"The {name} service")
            for position, name in enumerate(["Checkout", "API", "Sign-in"], 1)}


@pytest.fixture
def publish_update(users, monkeypatch):
    """``publish_update(incident, text, deliver=True, title=..., state=..., components={"Checkout": status})``:
    ops publish ``text`` (a run that passed every gate) with those public fields, and the outbox
    delivers it to the status page (``deliver=False`` leaves it in the outbox). These tests publish one
    text again on purpose, so a repeat is confirmed (``confirmed=frozenset()`` to leave it unconfirmed)."""
    monkeypatch.setattr(tasks.deliver, "delay", lambda pk: None)
    DeliveryChannel.objects.get_or_create(kind=DeliveryChannel.Kind.STATUS, defaults={"name": "Public status page"})

    def make(incident, text=TEXT, *, deliver=True, components=None, **fields):
        if components is not None:
            fields["components"] = {StatusComponent.objects.get(name=name).pk: status
                                    for name, status in components.items()}
        fields.setdefault("confirmed", frozenset({CONFIRM_REPEAT}))
        run = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=text)
        update = publish(incident, text, actor=users.ops, source_run=run, fields=PublicFields(**fields))
        if deliver:
            for delivery in update.deliveries.all():
                assert tasks.attempt(delivery.pk) == "delivered"
        return update

    return make


@pytest.fixture
def incident(db):
    return make_incident("inc_pay_1", title=INTERNAL_TITLE)

"""The status page's subscribers in admin: listed, searched and filtered; nobody adds or confirms an
address by hand (double opt-in), and an admin can unsubscribe one."""

from __future__ import annotations

import pytest
from django.urls import reverse

from reviewer.models import Subscriber
from tests.factories import make_subscriber

LIST = "admin:reviewer_subscriber_changelist"


@pytest.fixture
def admin_client(client, users):
    users.admin.is_superuser = False  # a policy admin by role, not a superuser
    users.admin.save()
    client.force_login(users.admin)
    return client


def test_subscribers_are_searched_by_email_and_filtered_by_state(admin_client):
    make_subscriber("ada@example.com")
    make_subscriber("bob@example.com", confirmed=False)
    make_subscriber("cy@example.com").unsubscribe()
    page = admin_client.get(reverse(LIST), {"q": "ada"}).content.decode()
    assert "ada@example.com" in page and "bob@example.com" not in page
    for state, shown in [("unconfirmed", "bob"), ("subscribed", "ada"), ("unsubscribed", "cy")]:
        page = admin_client.get(reverse(LIST), {"state": state}).content.decode()
        assert [name for name in ("ada", "bob", "cy") if f"{name}@example.com" in page] == [shown]


def test_nobody_adds_or_confirms_an_address_by_hand(admin_client):
    subscriber = make_subscriber("bob@example.com", confirmed=False)
    assert admin_client.get(reverse("admin:reviewer_subscriber_add")).status_code == 403
    change = reverse("admin:reviewer_subscriber_change", args=[subscriber.pk])
    page = admin_client.get(change).content.decode()
    assert 'name="confirmed_at' not in page and 'name="email"' not in page
    admin_client.post(change, {"email": "eve@example.com", "confirmed_at_0": "2026-01-01", "confirmed_at_1": "10:00",
                               "components": []})
    subscriber.refresh_from_db()
    assert (subscriber.email, subscriber.confirmed_at) == ("bob@example.com", None)


def test_an_admin_unsubscribes_the_selected_addresses(admin_client):
    subscriber = make_subscriber("ada@example.com")
    admin_client.post(reverse(LIST), {"action": "unsubscribe", "_selected_action": [subscriber.pk]})
    assert not Subscriber.objects.get().active

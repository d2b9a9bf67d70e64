"""Delivery channels in admin: a destination is chosen among the names the operator declared."""

from __future__ import annotations

import pytest
from django.urls import reverse

from reviewer.models import DeliveryChannel
from reviewer.outbox.destinations import DestinationError, allowed_recipients
from tests.factories import make_user

ADD = "admin:reviewer_deliverychannel_add"


@pytest.fixture
def policy_admin(users):
    from reviewer.roles import POLICY_ADMIN

    user = make_user("policy-admin", group=POLICY_ADMIN)
    user.is_staff = True
    user.save()
    return user


def test_admin_offers_only_declared_destinations_and_never_a_url(client, policy_admin, monkeypatch):
    monkeypatch.setenv("OUTBOUND_DESTINATIONS", "ops-hook=https://hooks.example/secret-path|HOOK_SECRET")
    monkeypatch.setenv("HOOK_SECRET", "whsec-admin-never-sees")
    client.force_login(policy_admin)
    page = client.get(reverse(ADD)).content.decode()
    assert '<option value="ops-hook">ops-hook</option>' in page
    assert "secret-path" not in page and "whsec-admin-never-sees" not in page

    response = client.post(reverse(ADD), {"name": "Hook", "kind": "webhook", "destination": "https://evil.example",
                                          "recipients": "", "enabled": "on"})
    assert response.status_code == 200 and not DeliveryChannel.objects.filter(name="Hook").exists()
    assert "Select a valid choice" in response.content.decode()
    client.post(reverse(ADD), {"name": "Hook", "kind": "webhook", "destination": "ops-hook", "recipients": "",
                               "enabled": "on"})
    assert DeliveryChannel.objects.get(name="Hook").destination == "ops-hook"


@pytest.mark.parametrize(("fields", "message"), [
    ({"kind": "webhook", "destination": ""}, "Choose one of the destinations"),
    ({"kind": "email", "recipients": ""}, "needs at least one recipient"),
    ({"kind": "email", "recipients": "not-an-address"}, "is not an email address"),
    ({"kind": "status", "recipients": "a@example.com"}, "Only email channels have recipients"),
])
def test_a_channel_that_cannot_deliver_is_refused_with_a_message(client, policy_admin, fields, message):
    client.force_login(policy_admin)
    response = client.post(reverse(ADD), {"name": "X", "destination": "", "recipients": "", "enabled": "on",
                                          **fields})
    assert response.status_code == 200 and message in response.content.decode()
    assert not DeliveryChannel.objects.filter(name="X").exists()


def test_an_email_channel_sends_only_to_the_addresses_and_domains_the_operator_declared(client, policy_admin,
                                                                                         monkeypatch):
    monkeypatch.setenv("OUTBOUND_EMAIL_RECIPIENTS", "@example.com; partner-ops@partner.example")
    client.force_login(policy_admin)

    def add(name, recipients):
        return client.post(reverse(ADD), {"name": name, "kind": "email", "destination": "", "enabled": "on",
                                          "recipients": recipients})

    refused = add("Leak", "ops@example.com\nme@attacker.example\nother@partner.example")
    page = refused.content.decode()
    assert refused.status_code == 200 and "“me@attacker.example” is not declared in OUTBOUND_EMAIL_RECIPIENTS" in page
    assert "“other@partner.example” is not declared" in page and "“ops@example.com” is not" not in page
    assert add("Ops mail", "Ops@Example.com\npartner-ops@partner.example").status_code == 302
    assert sorted(DeliveryChannel.objects.filter(kind="email").values_list("name", flat=True)) == ["Ops mail"]
    monkeypatch.delenv("OUTBOUND_EMAIL_RECIPIENTS")
    assert "(declared: none)" in add("Any", "ops@example.com").content.decode()  # nothing declared: nothing allowed


@pytest.mark.parametrize("declared", ["example.com", "@", "not an address", "@exa mple.com"])
def test_a_malformed_declaration_of_email_recipients_is_refused_naming_the_entry(declared):
    with pytest.raises(DestinationError, match=r"OUTBOUND_EMAIL_RECIPIENTS: entry 2 "):
        allowed_recipients({"OUTBOUND_EMAIL_RECIPIENTS": f"@ok.example;{declared}"})


def test_the_status_page_is_the_default_channel(db):
    assert DeliveryChannel.objects.get().kind == "status"


def test_auto_publish_is_in_the_policy_admin_with_its_help(client, policy_admin):
    from agents.models import PipelinePolicy

    client.force_login(policy_admin)
    policy = PipelinePolicy.objects.get(pipeline="reflection", active=True)
    page = client.get(reverse("admin:agents_pipelinepolicy_change", args=[policy.pk])).content.decode()
    assert 'name="auto_publish"' in page and "Off by default" in page


def test_the_default_status_page_is_installed_only_where_no_channel_exists(db):
    from reviewer.outbox.publishing import install_default_channel

    DeliveryChannel.objects.all().delete()
    DeliveryChannel.objects.create(name="Only email", kind="email", recipients="a@example.com")
    install_default_channel()
    assert list(DeliveryChannel.objects.values_list("name", flat=True)) == ["Only email"]
    DeliveryChannel.objects.all().delete()
    install_default_channel()
    assert DeliveryChannel.objects.get().name == "Public status page"


def test_a_subscribers_channel_is_made_with_no_destination_and_only_once(client, policy_admin):
    client.force_login(policy_admin)
    fields = {"kind": "subscribers", "destination": "", "recipients": "", "enabled": "on"}
    assert client.post(reverse(ADD), {"name": "Subscribers", **fields}).status_code == 302
    response = client.post(reverse(ADD), {"name": "More subscribers", **fields})
    assert response.status_code == 200
    assert "“Subscribers” already sends to the status page&#x27;s subscribers" in response.content.decode()
    assert list(DeliveryChannel.objects.filter(kind="subscribers").values_list("name", flat=True)) == ["Subscribers"]

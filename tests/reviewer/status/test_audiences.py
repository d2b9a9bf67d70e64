"""Audiences and the internal page (docs/status-page.md, 'Audiences and the internal page'): a
private component, its incidents and its maintenance never reach a public representation (every one
of them, enumerated from the URL configuration and the stored names) nor a subscriber; the audience
reads them through its signed link or by signing in, until the link is rotated; staff read everything
on the internal page."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
import time_machine
from django.core import mail
from django.db.models import F
from django.urls import URLPattern, URLResolver, get_resolver, reverse
from django.utils import timezone

from reviewer.models import (
    Delivery,
    DeliveryChannel,
    PublishedUpdate,
    StatusAudience,
    StatusComponent,
    StatusSnapshot,
    Subscriber,
)
from reviewer.outbox.channels import subscriber_body
from reviewer.outbox.maintenance import schedule
from reviewer.status import audiences, snapshots
from tests.factories import make_escalation, make_incident, make_user

PRIVATE_NAME = "Vault ledger"
PRIVATE_TITLE = "Ledger exports running late"
PRIVATE_TEXT = "Exports to partner banks run about twenty minutes late."
PRIVATE_INTERNAL = "P2 vault ledger replication lag"
WINDOW_TITLE = "Ledger reindex"
WINDOW_TEXT = "We will reindex the ledger store. Exports may be slow for a few minutes."
# What no public representation and no subscriber's email may ever contain.
SECRETS = [PRIVATE_NAME, PRIVATE_TITLE, PRIVATE_TEXT, "inc_vault", WINDOW_TITLE, WINDOW_TEXT, "Partner banks"]
BOTH_TITLE = "Slow settlement reports"
BOTH_TEXT = "Settlement reports take longer to appear. Current status: degraded."
# Not public representations: the audience's own addresses and staff's internal page.
NOT_PUBLIC = {"status_audience", "status_audience_signed", "status_audience_part", "status_internal"}


@pytest.fixture
def world(components, publish_update, users, settings):
    """A public incident, a private one (two updates, the second naming no component), one naming a
    public and a private component, and a maintenance window on the private component only; two
    subscribers (every update, Checkout only) get their emails."""
    settings.SITE_URL = "https://status.example.com"
    DeliveryChannel.objects.create(name="Subscribers", kind=DeliveryChannel.Kind.SUBSCRIBERS)
    every = Subscriber.objects.create(email="every@example.com", confirmed_at=timezone.now())
    checkout = Subscriber.objects.create(email="checkout@example.com", confirmed_at=timezone.now())
    checkout.components.set([components["Checkout"]])
    partners = StatusAudience.objects.create(name="Partner banks", slug="partners")
    vault = StatusComponent.objects.create(name=PRIVATE_NAME, position=9, audience=partners)

    public = make_incident("inc_public", title="P1 card outage")
    publish_update(public, title="Card payments failing", components={"Checkout": "partial_outage"})
    private = make_incident("inc_vault", title=PRIVATE_INTERNAL)
    publish_update(private, PRIVATE_TEXT, title=PRIVATE_TITLE, components={PRIVATE_NAME: "major_outage"})
    publish_update(private, PRIVATE_TEXT + " We are on it.", title=PRIVATE_TITLE, state="identified", components={})
    both = make_incident("inc_both", title="P2 settlement lag")
    publish_update(both, BOTH_TEXT, title=BOTH_TITLE, components={"Checkout": "degraded_performance",
                                                                  PRIVATE_NAME: "partial_outage"})
    now = timezone.now()
    schedule(title=WINDOW_TITLE, text=WINDOW_TEXT, components=[vault], starts_at=now + timedelta(hours=1),
             ends_at=now + timedelta(hours=2), actor=users.ops)
    return {"audience": partners, "subscribers": (every, checkout), "incidents": (public, private, both)}


def public_addresses(world) -> list[str]:
    """Every address of the status page's URL configuration but the audiences' and the internal page,
    with each incident, two history pages and a subscriber's links."""
    key = world["subscribers"][0].key
    values = {"incident_id": [i.incident_id for i in world["incidents"]], "key": [key], "language": ["fr", "de"]}
    resolver = next(p for p in get_resolver().url_patterns
                    if isinstance(p, URLResolver) and getattr(p.urlconf_name, "__name__", "") == "reviewer.status.urls")
    found = []
    for pattern in resolver.url_patterns:
        assert isinstance(pattern, URLPattern) and pattern.name, pattern
        if pattern.name in NOT_PUBLIC:
            continue
        (param, *more) = list(pattern.pattern.converters) or [None]
        assert not more, pattern
        for value in values[param] if param else [None]:
            found.append(reverse(pattern.name, args=[value] if param else []))
    # The page, its history and incident pages in the other languages are stored representations too.
    translated = [f"{address}?lang={code}" for code in ("fr", "de") for address in
                  [reverse("status"), reverse("status_history"),
                   *(reverse("status_incident", args=[i.incident_id]) for i in world["incidents"])]]
    return found + [reverse("status_history") + "?page=2"] + translated


def etag(client, address: str) -> str:
    client.cookies.pop("status_lang", None)  # a ?lang= kept in the cookie would change the next page's language
    return client.get(address).get("ETag")


def assert_secret_free(text: str, where: str) -> None:
    for secret in SECRETS:
        assert secret not in text, (where, secret)


def test_no_public_representation_names_a_private_component_or_its_incidents(client, world):
    addresses = public_addresses(world)
    assert len(addresses) >= len(snapshots.MAIN)
    for address in addresses:
        response = client.get(address)
        assert response.status_code in (200, 404), address
        assert_secret_free(response.content.decode(), address)
    # Every stored representation (each of MAIN was served above) of the public page.
    stored = dict(StatusSnapshot.objects.exclude(name__startswith=audiences.PREFIX).values_list("name", "body"))
    assert set(snapshots.MAIN) <= set(stored)
    for name, body in stored.items():
        assert_secret_free(body, name)
    assert client.get("/status/incidents/inc_vault/").status_code == 404  # not there at all

    # The incident naming both shows the public component only; the private one is left out of the page.
    summary = client.get("/status/api/v2/summary.json").json()
    both = next(i for i in summary["incidents"] if i["id"] == "inc_both")
    assert [c["name"] for c in both["incident_updates"][0]["affected_components"]] == ["Checkout"]
    assert [c["name"] for c in summary["components"]] == ["Checkout", "API", "Sign-in"]
    # Checkout's partial outage, not the private component's major outage.
    assert summary["scheduled_maintenances"] == [] and summary["status"]["description"] == "Partial outage"
    assert PRIVATE_NAME not in client.get(reverse("status_subscribe")).content.decode()  # not a choice


def test_a_private_publication_changes_no_byte_of_the_public_representations(client, world, publish_update):
    """Not even a time: the public page's stored bytes (and ETags) are those of a page without audiences."""
    with time_machine.travel(timezone.now(), tick=False):
        addresses = public_addresses(world)
        before = {address: etag(client, address) for address in addresses}
        publish_update(world["incidents"][1], "Exports are back on time.", title=PRIVATE_TITLE, state="resolved",
                       components={PRIVATE_NAME: "operational"})
        assert StatusSnapshot.objects.filter(built_generation__lt=F("generation")).exists()  # outdated, rebuilt
        assert {address: etag(client, address) for address in addresses} == before


def test_subscribers_are_never_told_of_a_private_component(world):
    every, checkout = world["subscribers"]
    for message in mail.outbox:
        assert_secret_free(" ".join([message.subject, message.body]), message.to)
    subjects = sorted((message.to[0], message.subject) for message in mail.outbox)
    assert subjects == [  # the private incident and the window on its component reach nobody
        ("checkout@example.com", "Our service status: Card payments failing — Investigating"),
        ("checkout@example.com", f"Our service status: {BOTH_TITLE} — Investigating"),
        ("every@example.com", "Our service status: Card payments failing — Investigating"),
        ("every@example.com", f"Our service status: {BOTH_TITLE} — Investigating")]
    both = next(m for m in mail.outbox if BOTH_TITLE in m.subject and m.to == [every.email])
    assert "- Checkout: Degraded performance\n\n" in both.body
    # A webhook's body and a Slack subscription's message name the public component only too.
    update = PublishedUpdate.objects.get(public_title=BOTH_TITLE)
    webhook = Subscriber(kind=Subscriber.Kind.WEBHOOK, url="https://hooks.example.com/status")
    assert subscriber_body(update, webhook)["components"] == [{"name": "Checkout", "status": "degraded_performance"}]
    slack = subscriber_body(update, Subscriber(kind=Subscriber.Kind.SLACK, url="https://hooks.slack.com/services/T1"))
    assert "Checkout: Degraded performance" in json.dumps(slack)
    assert_secret_free(json.dumps(slack), "slack")


def test_the_audience_reads_its_page_by_its_signed_link_until_it_is_rotated(client, world, publish_update):
    audience = world["audience"]
    link = audiences.link(audience).removeprefix("https://status.example.com")
    page = client.get(link)
    assert page.status_code == 200
    html = page.content.decode()
    for shown in (PRIVATE_NAME, PRIVATE_TITLE, PRIVATE_TEXT, WINDOW_TITLE, BOTH_TITLE, "Card payments failing"):
        assert shown in html, shown
    assert '<meta name="robots" content="noindex, nofollow">' in html and "This page is for" in html
    assert page["X-Robots-Tag"] == "noindex, nofollow" and "private" in page["Cache-Control"]
    assert "public" not in page["Cache-Control"] and "Access-Control-Allow-Origin" not in page
    assert f'href="{link}feed/"' in html and "Subscribe to updates" not in html  # its own links, no form
    assert StatusSnapshot.objects.filter(name="aud:partners:page").exists()

    summary = client.get(link + "api/v2/summary.json").json()
    assert PRIVATE_NAME in [c["name"] for c in summary["components"]]
    assert [m["name"] for m in summary["scheduled_maintenances"]] == [WINDOW_TITLE]
    assert summary["page"]["url"] == "https://status.example.com" + link
    feed = client.get(link + "feed/")
    assert feed.status_code == 200 and PRIVATE_TEXT in feed.content.decode()
    incident = client.get(link + "incidents/inc_vault/")
    assert incident.status_code == 200 and PRIVATE_TITLE in incident.content.decode()

    # Outdated with the public page: a new private update shows in its stored feed at the next request.
    publish_update(world["incidents"][1], "Exports are back on time.", title=PRIVATE_TITLE, state="resolved",
                   components={PRIVATE_NAME: "operational"})
    assert "Exports are back on time." in client.get(link + "feed/").content.decode()

    audiences.rotate(audience)
    for address in (link, link + "feed/", link + "api/v2/summary.json"):
        assert client.get(address).status_code == 404, address
    fresh = audiences.link(audience).removeprefix("https://status.example.com")
    assert fresh != link and client.get(fresh).status_code == 200
    assert link not in client.get(fresh).content.decode()
    assert client.get("/status/a/nobody/" + fresh.split("/")[-2] + "/").status_code == 404


def test_signed_in_readers_of_the_audience_and_staff_read_it_and_nobody_else(client, world, users):
    audience = world["audience"]
    address = reverse("status_audience", args=[audience.slug])
    assert client.get(address).status_code == 404  # never says that the audience exists
    customer = make_user("banker")
    audience.users.add(customer)
    for user, status in ((users.outsider, 404), (customer, 200), (users.lead, 200)):
        client.force_login(user)
        response = client.get(address)
        assert response.status_code == status, user
    assert PRIVATE_TITLE in response.content.decode() and "private" in response["Cache-Control"]


def test_the_internal_page_shows_everything_to_staff_and_sends_others_to_log_in(client, world, users):
    address = reverse("status_internal")
    response = client.get(address)
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))

    make_escalation(incident=world["incidents"][1], stop_reason="policy_escalation")
    held = Delivery.objects.filter(subscriber__email="every@example.com").first()
    Delivery.objects.filter(pk=held.pk).update(status=Delivery.Status.HELD)
    client.force_login(users.lead)
    response = client.get(address)
    assert response.status_code == 200
    html = " ".join(response.content.decode().split())
    for shown in (PRIVATE_INTERNAL, PRIVATE_TITLE, "P2 settlement lag", BOTH_TITLE, f"{PRIVATE_NAME}</td>",
                  "Partner banks only", WINDOW_TITLE, "Everyone", "Subscribers to every@example.com:",
                  f"{PRIVATE_INTERNAL}: <code>policy_escalation</code>", 'href="/status/a/partners/"'):
        assert shown in html, shown
    assert "no-store" in response["Cache-Control"] and "private" in response["Cache-Control"]
    assert response["X-Robots-Tag"] == "noindex, nofollow"
    assert 'href="/status/internal/" aria-current="page"' in html


def test_a_policy_admin_copies_the_signed_link_in_the_admin_and_rotates_it(client, world, users):
    audience = world["audience"]
    users.admin.is_superuser = False  # a policy admin by role
    users.admin.save()
    client.force_login(users.admin)
    change = client.get(reverse("admin:reviewer_statusaudience_change", args=[audience.pk])).content.decode()
    old = audiences.link(audience)
    assert f'value="{old}"' in change and PRIVATE_NAME in change  # the link to copy, and its components
    assert audiences.token(audience) not in change.replace(old, "")  # the token only as part of the link

    response = client.post(reverse("admin:reviewer_statusaudience_changelist"),
                           {"action": "rotate_links", "_selected_action": [audience.pk]})
    assert response.status_code == 302
    audience.refresh_from_db()
    assert audience.key_version == 2 and audiences.link(audience) != old
    client.logout()
    assert client.get(old.removeprefix("https://status.example.com")).status_code == 404

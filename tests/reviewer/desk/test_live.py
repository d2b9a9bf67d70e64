"""The live fragments (reviewer/desk/live.py): each answers its poll with an ETag, 304 without a body
while nothing changed and 200 with the new fragment once something did; only people who may read the
page get its fragment; model and people's text is escaped in every one."""

from __future__ import annotations

import pytest
from django.urls import reverse

from agents.models import Run
from reviewer.desk.decisions import decide
from reviewer.desk.live import etag_of
from reviewer.models import Decision, Delivery, DeliveryChannel
from reviewer.outbox import tasks
from reviewer.outbox.publishing import publish
from tests.factories import make_escalation, make_incident, make_run
from tests.reviewer.test_access import make_policy_admin

XSS = "<script>alert(1)</script>"
TEXT = "Card payments fail in the EU. We are working on a fix."
INCIDENT = "inc_live"


def poll(client, url: str, target: str, etag: str = ""):
    headers = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": target}
    if etag:
        headers["HTTP_IF_NONE_MATCH"] = etag
    return client.get(url, **headers)


@pytest.fixture(autouse=True)
def no_broker(monkeypatch):
    monkeypatch.setattr(tasks.deliver, "delay", lambda pk: None)


@pytest.fixture
def incident(db):
    return make_incident(INCIDENT, title=f"Payments {XSS}", severity="P1")


def held_delivery(incident, ops, *, error: str = "mail: TimeoutError (it may have been sent)") -> Delivery:
    DeliveryChannel.objects.all().delete()
    DeliveryChannel.objects.create(name=f"Mail {XSS}", kind="email", recipients="customers@example.com")
    run = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=TEXT)
    delivery = publish(incident, TEXT, actor=ops, source_run=run).deliveries.get()
    Delivery.objects.filter(pk=delivery.pk).update(status=Delivery.Status.HELD, attempts=2, last_error=error)
    return delivery


def approve(incident, lead):
    escalation = make_escalation(incident=incident, text=TEXT)
    decide(escalation.pk, lead, Decision.Action.APPROVE)
    return escalation


# Each live fragment: (its page, the id it polls as, who reads it, a change that shows in it).
FRAGMENTS = {
    "dashboard": ("/", "dashboard-counts", "ops", lambda users, incident: make_escalation(incident=incident)),
    "ready": ("/publish/", "ready-list", "ops", lambda users, incident: approve(incident, users.lead)),
    "runs": (f"/incidents/{INCIDENT}/", "incident-runs", "ops",
             lambda users, incident: make_run(incident=incident, goal="another run")),
    "updates": (f"/incidents/{INCIDENT}/", "updates", "ops",
                lambda users, incident: Delivery.objects.update(status=Delivery.Status.DELIVERED)),
    "held": ("/deliveries/held/", "held-list", "ops",
             lambda users, incident: Delivery.objects.update(status=Delivery.Status.DELIVERED)),
    "inbox": ("/inbox/", "inbox-list", "lead", lambda users, incident: make_escalation(incident=incident)),
    "nav": ("/live/nav/?on=/publish/", "nav-live", "ops", lambda users, incident: approve(incident, users.lead)),
}


@pytest.mark.parametrize("name", FRAGMENTS)
def test_an_unchanged_fragment_answers_304_and_a_changed_one_200_with_a_new_etag(name, incident, users, login):
    url, target, who, change = FRAGMENTS[name]
    held_delivery(incident, users.ops)
    client = login(who)

    first = poll(client, url, target)
    assert first.status_code == 200 and first["ETag"].startswith('"')
    assert "<html" not in first.content.decode() and first["Cache-Control"] == "no-store"
    assert "HX-Request" in first["Vary"]

    same = poll(client, url, target, first["ETag"])
    assert same.status_code == 304 and same.content == b"" and same["ETag"] == first["ETag"]

    change(users, incident)
    changed = poll(client, url, target, first["ETag"])
    assert changed.status_code == 200 and changed["ETag"] != first["ETag"]
    assert poll(client, url, target, changed["ETag"]).status_code == 304


def test_the_etag_leaves_out_the_mask_of_the_csrf_token_but_nothing_else():
    one = b'<form><input type="hidden" name="csrfmiddlewaretoken" value="aaa"><b>1</b></form>'
    other = b'<form><input type="hidden" name="csrfmiddlewaretoken" value="bbb"><b>1</b></form>'
    assert etag_of(one) == etag_of(other)
    assert etag_of(one) != etag_of(one.replace(b"<b>1</b>", b"<b>2</b>"))


def test_the_held_list_with_its_forms_is_304_on_the_next_poll(incident, users, login):
    held_delivery(incident, users.ops)
    client = login("ops")
    first = poll(client, "/deliveries/held/", "held-list")
    assert 'name="csrfmiddlewaretoken"' in first.content.decode()  # the decisions are plain forms
    assert poll(client, "/deliveries/held/", "held-list", first["ETag"]).status_code == 304


def test_a_stale_or_foreign_etag_gets_the_fragment(incident, users, login):
    client = login("ops")
    response = poll(client, "/", "dashboard-counts", '"not-this-one"')
    assert response.status_code == 200 and 'id="dashboard-counts"' in response.content.decode()


@pytest.mark.parametrize(("who", "url", "target", "status"), [
    ("outsider", "/publish/", "ready-list", 403),
    ("outsider", "/deliveries/held/", "held-list", 403),
    ("outsider", "/live/nav/", "nav-live", 403),
    ("outsider", "/", "dashboard-counts", 403),
    ("ops", "/inbox/", "inbox-list", 403),  # the inbox is the leads'
    ("padmin", "/deliveries/held/", "held-list", 403),  # policy admins do not publish
    ("padmin", "/publish/", "ready-list", 403),
])
def test_a_fragment_is_refused_to_who_may_not_read_its_page(who, url, target, status, incident, users, client):
    client.force_login(make_policy_admin("padmin") if who == "padmin" else getattr(users, who))
    assert poll(client, url, target).status_code == status


@pytest.mark.parametrize(("url", "target"), [("/live/nav/", "nav-live"), ("/deliveries/held/", "held-list"),
                                             (f"/incidents/{INCIDENT}/", "updates")])
def test_an_anonymous_poll_is_sent_to_the_login(url, target, incident, client):
    response = poll(client, url, target)
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


def test_the_nav_poll_swaps_each_count_the_reader_may_see_out_of_band(incident, users, login):
    held_delivery(incident, users.ops)
    approve(incident, users.lead)
    ops = poll(login("ops"), "/live/nav/?on=/", "nav-live").content.decode()
    assert 'id="ready-count" hx-swap-oob="true">1</span>' in ops.replace("\n  ", " ")
    assert 'id="nav-held" hx-swap-oob="true"' in ops and ">1</span>" in ops
    assert 'id="pending-count"' not in ops  # ops do not open the inbox

    client = login("lead")
    client.force_login(make_policy_admin("padmin"))
    padmin = poll(client, "/live/nav/?on=/", "nav-live").content.decode()
    assert "ready-count" not in padmin and "nav-held" not in padmin  # policy admins do not publish


def test_the_held_link_is_a_placeholder_while_nothing_is_held(incident, users, login):
    html = login("ops").get("/").content.decode()
    assert '<span id="nav-held" hidden></span>' in html and 'href="/deliveries/held/"' in html  # the dashboard's
    assert 'id="dashboard-held">0</a>' in html


def test_the_held_page_shows_each_held_row_with_its_evidence_escaped(incident, users, login):
    delivery = held_delivery(incident, users.ops, error=f"smtp said {XSS} (it may have been sent)")
    html = login("ops").get(reverse("held_deliveries")).content.decode()
    assert XSS not in html
    assert "smtp said &lt;script&gt;alert(1)&lt;/script&gt; (it may have been sent)" in html
    assert "Mail &lt;script&gt;" in html and "Payments &lt;script&gt;" in html
    assert '<dd class="held-attempt">2</dd>' in html and "update v1 of" in html  # a row held before evidence
    assert reverse("delivery_mark_sent", args=[delivery.pk]) in html
    assert reverse("delivery_send_again", args=[delivery.pk]) in html
    assert 'aria-current="page">Held deliveries' in html


def test_deciding_from_the_held_page_returns_to_it_and_records_who_decided(incident, users, login):
    delivery = held_delivery(incident, users.ops)
    client = login("ops")
    response = client.post(reverse("delivery_mark_sent", args=[delivery.pk]), {"back": "held"})
    assert response.status_code == 302 and response["Location"] == reverse("held_deliveries")
    delivery.refresh_from_db()
    assert (delivery.status, delivery.marked_sent_by) == ("delivered", users.ops)
    html = client.get(reverse("held_deliveries")).content.decode()
    assert "No delivery is held." in html and "marked as sent by\n      ops" in html


def test_the_incident_updates_fragment_escapes_the_receivers_answer(incident, users, login):
    held_delivery(incident, users.ops, error=f"said {XSS}")
    html = poll(login("lead"), f"/incidents/{INCIDENT}/", "updates").content.decode()
    assert html.lstrip().startswith('<section class="card" id="updates" data-live')
    assert XSS not in html and "said &lt;script&gt;" in html


def test_the_dashboard_poll_keeps_the_ledger_line_for_admins(incident, users, login):
    html = poll(login("admin"), "/", "dashboard-counts").content.decode()
    assert 'id="dashboard-ledger"' in html

"""The publishing pages: Publish with its confirmation (the diff against the last published update),
the update timeline and delivery states on the incident and run pages, a person's retry, the
escalation page's diff, and the public status page."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from agents.models import Run
from reviewer.desk.decisions import decide
from reviewer.models import Decision, Delivery, DeliveryChannel, Escalation, PublishedUpdate, StatusComponent
from reviewer.outbox import tasks
from reviewer.outbox.publishing import PublicFields, publish
from reviewer.roles import POLICY_ADMIN
from tests.factories import make_escalation, make_incident, make_run, make_subscriber, make_user

FIRST = "We are investigating a problem in the EU. Current status: degraded."
SECOND = "We fixed the problem in the EU. Current status: resolved."
# What the confirmation's form sends with the text: the public title and the state.
FORM = {"title": "Problems in the EU", "state": "identified"}


@pytest.fixture(autouse=True)
def no_broker(monkeypatch):
    monkeypatch.setattr(tasks.deliver, "delay", lambda pk: None)


@pytest.fixture
def incident(db):
    return make_incident()


def passed(incident, text):
    return make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=text)


def test_ops_publishes_a_gate_passed_run_after_a_confirmation_that_shows_what_customers_newly_learn(
        login, users, incident):
    publish(incident, FIRST, actor=users.lead, source_run=passed(incident, FIRST))
    run = passed(incident, SECOND)
    client = login("ops")
    page = client.get(reverse("run", args=[run.pk])).content.decode()
    assert reverse("publish_confirm", args=[run.pk]) in page

    confirm = client.get(reverse("publish_confirm", args=[run.pk])).content.decode()
    assert "What customers will newly learn" in confirm and "Against update v1" in confirm
    assert "<del>are investigating a </del>" in confirm and "<ins>fixed the </ins>" in confirm
    assert "Publish update v2" in confirm

    response = client.post(reverse("publish_run", args=[run.pk]), FORM | {"state": "resolved"})
    assert response.status_code == 302 and response["Location"].endswith("#updates")
    update = PublishedUpdate.objects.get(source_run=run)
    assert (update.version, update.published_by) == (2, users.ops)
    assert client.post(reverse("publish_run", args=[run.pk]), FORM).status_code == 302  # a second click
    assert PublishedUpdate.objects.count() == 2

    tasks.attempt(update.deliveries.get().pk)
    page = client.get(reverse("incident", args=[incident.incident_id])).content.decode()
    timeline = page.split('id="updates"')[1].split("</section>")[0]
    assert timeline.index("Update v2") < timeline.index("Update v1")  # newest first
    assert "published by ops" in timeline and "approved by the gates" in timeline
    assert "delivered</span> Public status page" in timeline and "pending</span> Public status page" in timeline
    assert reverse("publish_confirm", args=[run.pk]) not in client.get(reverse("run", args=[run.pk])).content.decode()


@pytest.mark.parametrize("status", ["pending", "rejected"])
def test_a_pending_or_rejected_escalation_offers_no_publish_and_refuses_one(login, incident, status):
    escalation = make_escalation(incident=incident, status=status, final_text=FIRST)
    client = login("lead")
    run = escalation.run
    assert reverse("publish_confirm", args=[run.pk]) not in client.get(reverse("run", args=[run.pk])).content.decode()
    assert client.get(reverse("publish_confirm", args=[run.pk])).status_code == 409
    response = client.post(reverse("publish_run", args=[run.pk]), FORM, follow=True)
    assert not PublishedUpdate.objects.exists()
    assert "cannot be published" in response.content.decode()


def test_an_approved_escalation_is_published_with_its_approver(login, users, incident):
    escalation = make_escalation(incident=incident, status=Escalation.Status.APPROVED, final_text=FIRST,
                                 decided_by=users.lead)
    client = login("ops")
    assert "Approved by lead" in client.get(reverse("publish_confirm", args=[escalation.run.pk])).content.decode()
    client.post(reverse("publish_run", args=[escalation.run.pk]), FORM)
    page = client.get(reverse("incident", args=[incident.incident_id])).content.decode()
    assert "approved by lead" in page


def test_policy_admins_and_people_without_a_role_cannot_publish(client, users, incident):
    run = passed(incident, FIRST)
    for user in (make_user("policy-admin", group=POLICY_ADMIN), users.outsider):
        client.force_login(user)
        assert client.get(reverse("publish_confirm", args=[run.pk])).status_code == 403
        assert client.post(reverse("publish_run", args=[run.pk]), FORM).status_code == 403
    assert not PublishedUpdate.objects.exists()


def test_publishing_needs_the_csrf_token(users, incident):
    run = passed(incident, FIRST)
    client = Client(enforce_csrf_checks=True)
    client.force_login(users.ops)
    assert client.post(reverse("publish_run", args=[run.pk]), FORM).status_code == 403
    assert not PublishedUpdate.objects.exists()


def test_a_failed_delivery_shows_its_error_and_a_person_retries_it(login, users, incident, settings):
    settings.DELIVERY_MAX_ATTEMPTS = 1
    DeliveryChannel.objects.create(name="Hook", kind="webhook", destination="gone")
    run = passed(incident, FIRST)
    update = publish(incident, FIRST, actor=users.ops, source_run=run)
    delivery = update.deliveries.get(channel__name="Hook")
    assert tasks.attempt(delivery.pk) == "failed"
    client = login("lead")
    for url in (reverse("run", args=[run.pk]), reverse("incident", args=[incident.incident_id])):
        page = client.get(url).content.decode()
        assert "failed</span> Hook" in page and "1 attempt" in page
        assert "&#x27;gone&#x27; is not declared in OUTBOUND_DESTINATIONS" in page
        assert reverse("delivery_retry", args=[delivery.pk]) in page
    client.post(reverse("delivery_retry", args=[delivery.pk]))
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.retried_by) == ("pending", 0, users.lead)


def test_the_escalation_page_shows_the_diff_against_the_last_published_update(login, users, incident):
    escalation = make_escalation(incident=incident, text=SECOND)
    client = login("lead")
    page = client.get(reverse("escalation", args=[escalation.pk])).content.decode()
    assert "Nothing is published for this incident yet" in page
    publish(incident, FIRST, actor=users.ops, source_run=passed(incident, FIRST))
    page = client.get(reverse("escalation", args=[escalation.pk])).content.decode()
    diff = page.split('id="published-diff"')[1].split("</section>")[0]
    assert "against update v1" in diff and "<ins>fixed the </ins>" in diff and "<del>are investigating a </del>" in diff


def test_the_status_page_is_public_escaped_newest_first_and_shows_only_delivered_updates(client, users, incident):
    hostile = "<script>alert(1)</script> We are on it & fixing."
    first = publish(incident, FIRST, actor=users.ops, source_run=passed(incident, FIRST))
    second = publish(incident, hostile, actor=users.ops, reason="holding statement")
    third = publish(incident, SECOND, actor=users.ops, source_run=passed(incident, SECOND),
                    fields=PublicFields(state="resolved"))  # "We fixed the problem": the state it says
    for update in (first, second):
        tasks.attempt(update.deliveries.get().pk)
    response = client.get(reverse("status"))  # nobody logged in
    assert response.status_code == 200
    page = response.content.decode()
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt; We are on it &amp; fixing." in page
    assert page.index(f'id="update-{second.pk}"') < page.index(f'id="update-{first.pk}"')  # newest first
    assert third.text not in page  # not delivered to the status page yet
    assert Delivery.objects.filter(update=third, status="pending").exists()


@pytest.mark.parametrize("updates", [2, 20])
def test_the_incident_page_query_count_does_not_grow_with_its_updates(login, users, incident, updates,
                                                                      django_assert_max_num_queries):
    for number in range(updates):
        publish(incident, f"{FIRST} {number}", actor=users.ops, reason="holding statement")
    client = login("ops")
    # 17 whatever the number of updates: the timeline prefetches deliveries and components once each
    # (and the navigation's ready-to-publish and held counts, the texts waiting to be published, the
    # components the editor offers and the post-incident reports' drafts).
    with django_assert_max_num_queries(17):
        assert client.get(reverse("incident", args=[incident.incident_id])).status_code == 200


FLAGGED = FIRST + " We will restore service by 18:00 UTC."


def test_overridden_findings_stay_visible_from_the_decision_to_the_published_update(login, users, incident):
    escalation = make_escalation(incident=incident, pipeline="self_critique", text=FIRST)
    outcome = decide(escalation.pk, users.lead, Decision.Action.EDIT_APPROVE, text=FLAGGED,
                     note="The fix is deployed.")
    flagged = outcome.decision.guard_results["violations"]
    assert flagged
    decided = login("lead").get(reverse("escalation", args=[escalation.pk])).content.decode()
    assert f"The lead overrode {len(flagged)} guard findings" in decided
    assert "<ins>We will restore service by 18:00 UTC.</ins>" in decided  # the edit against the candidate

    client = login("ops")
    url = reverse("publish_run", args=[escalation.run.pk])
    confirm = client.get(reverse("publish_confirm", args=[escalation.run.pk])).content.decode()
    assert f"The lead overrode {len(flagged)} guard findings" in confirm and "The fix is deployed." in confirm
    assert 'name="acknowledge"' in confirm and "18:00 UTC" in confirm
    refused = client.post(url, FORM)
    assert refused.status_code == 422 and "Acknowledge the overridden findings" in refused.content.decode()
    assert not PublishedUpdate.objects.exists()

    assert client.post(url, FORM | {"acknowledge": "on"}).status_code == 302
    update = PublishedUpdate.objects.get()
    assert (update.acknowledged_by, update.justification) == (users.ops, "The fix is deployed.")
    assert len(update.overridden) == len(flagged)


def test_the_guard_refuses_a_risky_public_title_on_the_page_and_keeps_what_was_typed(login, incident):
    run = passed(incident, FIRST)
    title = "All customers will be refunded in full today"
    response = login("ops").post(reverse("publish_run", args=[run.pk]), FORM | {"title": title})
    page = response.content.decode()
    assert response.status_code == 409 and "The title: " in page and "refunded" in page
    assert f'value="{title}"' in page
    assert not PublishedUpdate.objects.exists()


def test_a_public_title_with_a_line_break_is_refused_on_the_page_at_the_field(login, incident):
    run = passed(incident, FIRST)
    response = login("ops").post(reverse("publish_run", args=[run.pk]),
                                 FORM | {"title": "Problems\r\nBcc: everyone@example.com"})
    assert response.context["form"].errors["title"] == [
        "The public title must be one line: it contains a line break (U+000D); remove it."]
    assert not PublishedUpdate.objects.exists()


def test_the_state_and_components_are_chosen_on_the_page(login, incident):
    checkout = StatusComponent.objects.create(name="Checkout")
    run = passed(incident, FIRST)
    client = login("ops")
    confirm = client.get(reverse("publish_confirm", args=[run.pk])).content.decode()
    assert f'name="component_{checkout.pk}"' in confirm and 'value="identified"' in confirm
    client.post(reverse("publish_run", args=[run.pk]), FORM | {f"component_{checkout.pk}": "major_outage"})
    update = PublishedUpdate.objects.get()
    assert (update.public_title, update.state, update.impact) == ("Problems in the EU", "identified", "critical")
    assert [(c.component.name, c.status) for c in update.components] == [("Checkout", "major_outage")]


def test_the_timeline_keeps_the_public_fields_and_the_overrides_record(login, users, incident):
    escalation = make_escalation(incident=incident, pipeline="self_critique", text=FIRST)
    decide(escalation.pk, users.lead, Decision.Action.EDIT_APPROVE, text=FLAGGED, note="The fix is deployed.")
    login("ops").post(reverse("publish_run", args=[escalation.run.pk]), FORM | {"acknowledge": "on"})
    page = login("lead").get(reverse("incident", args=[incident.incident_id])).content.decode()
    timeline = page.split('id="updates"')[1].split("</section>")[0]
    assert "<strong>Problems in the EU</strong> · Identified" in timeline
    assert "the lead overrode (“The fix is deployed.”), acknowledged by ops" in " ".join(timeline.split())
    assert "<q>18:00 UTC</q>" in timeline


def test_publishing_counts_a_subscribers_channel_once_however_many_addresses_it_reaches(login, incident):
    DeliveryChannel.objects.create(name="Subscribers", kind="subscribers")
    make_subscriber("ada@example.com")
    make_subscriber("bob@example.com")
    run = passed(incident, FIRST)
    response = login("ops").post(reverse("publish_run", args=[run.pk]), FORM, follow=True)
    assert "Published as update v1; delivering to 2 channels." in response.content.decode()
    assert PublishedUpdate.objects.get().deliveries.count() == 3  # the status page and one per address


def test_the_timeline_counts_a_subscribers_channels_deliveries_and_lists_the_failed_ones(login, users, incident):
    DeliveryChannel.objects.create(name="Subscribers", kind="subscribers")
    for name in ("ada", "bob", "cy"):
        make_subscriber(f"{name}@example.com")
    update = publish(incident, FIRST, actor=users.ops, source_run=passed(incident, FIRST))
    rows = {d.subscriber.email if d.subscriber else d.channel.name: d for d in update.deliveries.all()}
    tasks.attempt(rows["ada@example.com"].pk)
    Delivery.objects.filter(pk=rows["bob@example.com"].pk).update(status="failed", last_error="email: refused")
    page = login("ops").get(reverse("incident", args=[incident.incident_id])).content.decode()
    timeline = page.split('id="updates"')[1].split("</section>")[0]
    assert "pending</span> Public status page" in timeline
    assert ('Subscribers:\n    <span class="status status-delivered">1 delivered</span>\n'
            '    <span class="status status-failed">1 failed</span>\n'
            '    <span class="status status-pending">1 pending</span>') in timeline
    assert "bob@example.com" in timeline and "email: refused" in timeline  # the failed one, with its retry
    assert "ada@example.com" not in timeline and "cy@example.com" not in timeline
    assert reverse("delivery_retry", args=[rows["bob@example.com"].pk]) in timeline

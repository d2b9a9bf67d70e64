"""Publishing (reviewer/outbox/publishing.py): only a person's click on an approved or gate-passed text, or
the policy's auto_publish for a gate-passed run; one transaction writes the update and its outbox."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied

from agents.models import PipelinePolicy, Run
from agents.tasks import run_now, start_run
from reviewer.models import Delivery, DeliveryChannel, Escalation, PublishedUpdate
from reviewer.outbox import tasks
from reviewer.outbox.publishing import AlreadyPublished, PublishRefused, publish
from reviewer.roles import POLICY_ADMIN
from tests.factories import make_escalation, make_incident, make_run, make_user

TEXT = "We are investigating a problem in the EU. Current status: degraded."


@pytest.fixture
def incident(db):
    return make_incident()


@pytest.fixture
def passed_run(incident):
    return make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=TEXT)


@pytest.fixture
def email_channel(db):
    DeliveryChannel.objects.create(name="Disabled", kind="email", recipients="off@example.com", enabled=False)
    return DeliveryChannel.objects.create(name="Ops mail", kind="email", recipients="ops@example.com")


def test_publishing_a_gate_passed_run_writes_the_update_and_one_outbox_row_per_enabled_channel(
        users, incident, passed_run, email_channel, django_capture_on_commit_callbacks, monkeypatch):
    enqueued = []
    monkeypatch.setattr(tasks.deliver, "delay", enqueued.append)
    with django_capture_on_commit_callbacks(execute=True):
        update = publish(incident, TEXT, actor=users.ops, source_run=passed_run)
        assert enqueued == []  # nothing is enqueued before the transaction commits
    assert (update.version, update.text, update.published_by, update.approved_by) == (1, TEXT, users.ops, "")
    assert len(update.policy_snapshot_id) == 12 and len(update.text_hash) == 12
    channels = sorted(d.channel.name for d in update.deliveries.all())
    assert channels == ["Ops mail", "Public status page"]  # the status page is the migration's default
    assert {d.status for d in update.deliveries.all()} == {"pending"}
    assert sorted(enqueued) == sorted(d.pk for d in update.deliveries.all())  # each once, after the commit


def test_the_update_and_its_outbox_rows_commit_together_or_not_at_all(users, incident, passed_run, monkeypatch):
    def broken(**fields):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(Delivery.objects, "create", broken)
    with pytest.raises(RuntimeError):
        publish(incident, TEXT, actor=users.ops, source_run=passed_run)
    assert not PublishedUpdate.objects.exists()


def test_versions_count_up_per_incident_and_a_run_is_published_once(users, incident, passed_run):
    publish(incident, TEXT, actor=users.ops, source_run=passed_run)
    with pytest.raises(AlreadyPublished, match="already published as update v1"):
        publish(incident, TEXT, actor=users.lead, source_run=passed_run)
    other = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=TEXT + " More soon.")
    assert publish(incident, other.answer, actor=users.lead, source_run=other).version == 2


@pytest.mark.parametrize("status", [Escalation.Status.PENDING, Escalation.Status.REJECTED])
def test_a_pending_or_rejected_escalations_text_cannot_be_published(users, incident, status):
    escalation = make_escalation(incident=incident, status=status, final_text=TEXT)
    with pytest.raises(PublishRefused, match="decision|rejected"):
        publish(incident, TEXT, actor=users.ops, escalation=escalation)
    with pytest.raises(PublishRefused):
        publish(incident, TEXT, actor=users.ops, source_run=escalation.run)
    assert not PublishedUpdate.objects.exists()


def test_an_approved_escalation_publishes_the_text_the_lead_approved(users, incident):
    escalation = make_escalation(incident=incident, status=Escalation.Status.APPROVED, final_text=TEXT,
                                 decided_by=users.lead)
    update = publish(incident, TEXT, actor=users.ops, escalation=escalation)
    assert (update.approved_by, update.escalation, update.source_run) == ("lead", escalation, escalation.run)
    with pytest.raises(AlreadyPublished):
        publish(incident, TEXT, actor=users.ops, source_run=escalation.run)


def test_only_the_text_as_approved_can_be_published(users, incident, passed_run):
    with pytest.raises(PublishRefused, match="as approved"):
        publish(incident, TEXT + " Refunds for everyone.", actor=users.ops, source_run=passed_run)


def test_a_stopped_run_without_escalation_cannot_be_published(users, incident):
    run = make_run(incident=incident, snapshot=True, status=Run.Status.STOPPED, stop_reason="llm_timeout",
                   answer=TEXT)
    with pytest.raises(PublishRefused, match="passed every gate"):
        publish(incident, TEXT, actor=users.ops, source_run=run)


def test_only_ops_and_leads_can_publish(users, incident, passed_run):
    policy_admin = make_user("policy-admin", group=POLICY_ADMIN)
    for who in (policy_admin, users.outsider):
        with pytest.raises(PermissionDenied):
            publish(incident, TEXT, actor=who, source_run=passed_run)


def test_a_text_no_run_produced_needs_a_reason(users, incident):
    with pytest.raises(PublishRefused, match="needs a reason"):
        publish(incident, "Holding statement.", actor=users.ops)
    update = publish(incident, "We are looking into it.", actor=users.ops, reason="holding statement")
    assert (update.source_run, update.reason) == (None, "holding statement")
    with pytest.raises(PublishRefused, match="Automatic publishing needs a run"):
        publish(incident, "We are looking into it.", actor=None, reason="holding statement")


def test_auto_publish_is_off_by_default_and_publishes_only_gate_passed_runs_when_on(demo_data):
    assert PipelinePolicy._meta.get_field("auto_publish").default is False
    incident = demo_data["inc_pay_2041"]
    run, _ = start_run(pipeline="reflection", goal="Update", incident=incident, enqueue=False)
    run_now(run.pk)
    assert Run.objects.get(pk=run.pk).status == Run.Status.OK
    assert not PublishedUpdate.objects.exists()  # off: a gate-passed run waits for a click

    PipelinePolicy.objects.filter(pipeline="reflection", active=True).update(auto_publish=True)
    run, _ = start_run(pipeline="reflection", goal="Update", incident=incident, enqueue=False)
    run_now(run.pk)
    run.refresh_from_db()
    update = PublishedUpdate.objects.get()
    assert (update.source_run, update.published_by, update.reason, update.text) == (run, None, "auto_publish",
                                                                                    run.answer)
    escalated, _ = start_run(pipeline="reflection", goal="Offer every customer a refund for the outage",
                             incident=incident, enqueue=False)
    run_now(escalated.pk)
    assert Escalation.objects.filter(run=escalated).exists()
    assert PublishedUpdate.objects.count() == 1  # an escalated run is never published automatically


# ---------------------------------------------------------------- auto-publish and links, contacts, mentions

STATUS_LINK = "Follow along at https://status.acme.example/inc_pay_2041."


def test_auto_publish_sends_a_text_with_a_declared_link_to_a_person_instead(demo_data):
    incident = demo_data["inc_pay_2041"]
    incident.key_messages = [STATUS_LINK]  # the offline model puts key messages in its draft
    incident.save()
    run, _ = start_run(pipeline="reflection", goal="Update", incident=incident, enqueue=False)
    run_now(run.pk)
    run.refresh_from_db()
    assert (run.status, STATUS_LINK in run.answer) == (Run.Status.OK, True)  # the link is the incident's own
    assert not PublishedUpdate.objects.exists()  # auto-publish off: it waits for a click anyway

    PipelinePolicy.objects.filter(pipeline="reflection", active=True).update(auto_publish=True)
    run, _ = start_run(pipeline="reflection", goal="Update", incident=incident, enqueue=False)
    run_now(run.pk)
    run.refresh_from_db()
    assert run.stop_reason == "invalid_answer:auto_publish_contact"
    escalation = Escalation.objects.get(run=run)
    assert escalation.status == Escalation.Status.PENDING
    assert not PublishedUpdate.objects.exists()


def test_auto_publish_waits_for_a_click_when_the_run_was_checked_under_a_policy_without_it(demo_data):
    incident = demo_data["inc_pay_2041"]
    run, _ = start_run(pipeline="reflection", goal="Update", incident=incident, enqueue=False)
    assert run.policy["auto_publish"] is False
    PipelinePolicy.objects.filter(pipeline="reflection", active=True).update(auto_publish=True)  # switched on meanwhile
    run_now(run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.OK and not PublishedUpdate.objects.exists()


@pytest.mark.parametrize("text", ["Follow along at status.acme.example.", "Questions? help@acme.example",
                                  "We are on it <!here>", "Call +44 20 7946 0958."])
def test_automatic_publishing_refuses_any_link_contact_or_mention(incident, text):
    run = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=text)
    with pytest.raises(PublishRefused, match="published only by a person"):
        publish(incident, text, actor=None, source_run=run)
    assert not PublishedUpdate.objects.exists()


def test_a_person_may_publish_a_declared_link(users, incident):
    text = "Follow along at status.acme.example."
    run = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=text)
    assert publish(incident, text, actor=users.ops, source_run=run).text == text

"""What an update carries to the status page besides its text (reviewer/outbox/publishing.py): the
public title, the state, the impact and the components, approved by the person who publishes and
checked by the guard; and the chain of trust: findings a lead overrode are acknowledged and kept."""

from __future__ import annotations

import pytest

from agents.models import Run
from reviewer.desk.decisions import decide
from reviewer.models import Decision, StatusComponent
from reviewer.outbox.publishing import CONFIRM_REPEAT, DEFAULT_TITLE, PublicFields, PublishRefused, publish
from tests.factories import make_escalation, make_incident, make_run

TEXT = "We are investigating a problem in the EU. Current status: degraded."
FLAGGED = ("We are investigating a problem in the EU. Current status: degraded. "
           "We will restore service by 18:00 UTC.")


@pytest.fixture
def incident(db):
    return make_incident(title="P1 payment degradation in the EU")


@pytest.fixture
def checkout(db):
    return StatusComponent.objects.create(name="Checkout", position=1)


def passed(incident, text=TEXT):
    return make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=text)


def test_the_person_publishing_sets_title_state_and_components_and_the_impact_follows_the_worst(
        users, incident, checkout):
    api = StatusComponent.objects.create(name="API", position=2)
    update = publish(incident, TEXT, actor=users.ops, source_run=passed(incident), fields=PublicFields(
        title="Card payments failing in the EU", state="identified",
        components={checkout.pk: "partial_outage", api.pk: "degraded_performance"}))
    assert (update.public_title, update.state, update.impact) == ("Card payments failing in the EU", "identified",
                                                                  "major")
    assert {(c.component.name, c.status) for c in update.components} == {
        ("Checkout", "partial_outage"), ("API", "degraded_performance")}


def test_the_internal_title_is_never_the_public_one(users, incident):
    update = publish(incident, TEXT, actor=users.ops, source_run=passed(incident))
    assert update.public_title == DEFAULT_TITLE
    assert "P1" not in update.public_title


def test_an_update_carries_the_last_ones_title_and_components_and_resolving_makes_them_operational(
        users, incident, checkout):
    publish(incident, TEXT, actor=users.ops, source_run=passed(incident), fields=PublicFields(
        title="Card payments failing", state="identified", components={checkout.pk: "major_outage"}))
    second = publish(incident, TEXT, actor=users.ops, source_run=passed(incident), fields=PublicFields(
        state="monitoring", confirmed=frozenset({CONFIRM_REPEAT})))
    assert (second.public_title, second.impact) == ("Card payments failing", "critical")
    assert [(c.component.name, c.status) for c in second.components] == [("Checkout", "major_outage")]
    text = "Payments work again in the EU."
    resolved = publish(incident, text, actor=users.ops, source_run=passed(incident, text),
                       fields=PublicFields(state="resolved"))
    assert [(c.component.name, c.status) for c in resolved.components] == [("Checkout", "operational")]
    assert resolved.impact == "critical"  # the incident's impact is what it was, not "none"


def test_a_risky_title_is_refused_with_the_guards_words(users, incident):
    with pytest.raises(PublishRefused, match="The title: .*refunded"):
        publish(incident, TEXT, actor=users.ops, source_run=passed(incident),
                fields=PublicFields(title="All customers will be refunded in full today"))


def test_a_state_the_text_contradicts_is_refused(users, incident):
    text = "Payments work again in the EU."
    with pytest.raises(PublishRefused, match="The state: "):
        publish(incident, text, actor=users.ops, source_run=passed(incident, text),
                fields=PublicFields(state="investigating"))
    update = publish(incident, text, actor=users.ops, source_run=passed(incident, text),
                     fields=PublicFields(state="resolved"))
    assert update.state == "resolved"


@pytest.mark.parametrize("fields, message", [
    (PublicFields(state="fixed"), "not a state"),
    (PublicFields(impact="huge"), "not an impact"),
    (PublicFields(components={999: "major_outage"}), "No component 999"),
    (PublicFields(title="x" * 121), "limit is 120"),
])
def test_values_that_are_not_ones_are_refused(users, incident, checkout, fields, message):
    with pytest.raises(PublishRefused, match=message):
        publish(incident, TEXT, actor=users.ops, source_run=passed(incident), fields=fields)


def test_a_component_status_that_is_not_one_is_refused(users, incident, checkout):
    with pytest.raises(PublishRefused, match="not a component status"):
        publish(incident, TEXT, actor=users.ops, source_run=passed(incident),
                fields=PublicFields(components={checkout.pk: "on fire"}))


def test_approving_a_blocked_text_as_it_is_overrides_the_blocks_findings(users, incident):
    blocked = {"violations": [{"check": "invalid_answer:scope_claim", "message": "“all customers” is not "
                               "supported.", "found": "all customers"}]}
    escalation = make_escalation(incident=incident, pipeline="self_critique", stop_reason="invalid_answer:scope_claim",
                                 guard=blocked)
    decide(escalation.pk, users.lead, Decision.Action.APPROVE, note="Checked with the payments team.")
    escalation.refresh_from_db()
    assert [f["found"] for f in escalation.overridden] == ["all customers"]


@pytest.fixture
def overridden(users, incident):
    """An escalation a lead approved with an edit the guard flagged, with a justification."""
    escalation = make_escalation(incident=incident, pipeline="self_critique")
    outcome = decide(escalation.pk, users.lead, Decision.Action.EDIT_APPROVE, text=FLAGGED,
                     note="The fix is deployed; the time is firm.")
    assert outcome.won and outcome.decision.guard_results["violations"]
    return outcome.escalation


def test_text_with_overridden_findings_is_published_only_when_they_are_acknowledged(users, incident, overridden):
    flagged = overridden.approval.guard_results["violations"]
    with pytest.raises(PublishRefused, match=f"overrode {len(flagged)} guard findings.*acknowledge"):
        publish(incident, FLAGGED, actor=users.ops, escalation=overridden)
    update = publish(incident, FLAGGED, actor=users.ops, escalation=overridden,
                     fields=PublicFields(acknowledged=True))
    assert update.acknowledged_by == users.ops
    assert update.justification == "The fix is deployed; the time is firm."
    assert [(f["check"], f["found"]) for f in update.overridden] == [(v["check"], v["found"] or "") for v in flagged]
    assert "18:00 UTC" in {f["found"] for f in update.overridden}


def test_an_approval_with_no_findings_needs_no_acknowledgement_and_records_none(users, incident):
    escalation = make_escalation(incident=incident, pipeline="self_critique")  # a policy escalation
    escalation = decide(escalation.pk, users.lead, Decision.Action.APPROVE).escalation
    update = publish(incident, TEXT, actor=users.ops, escalation=escalation)
    assert (update.overridden, update.justification, update.acknowledged_by) == ([], "", None)


def test_the_incident_moves_to_the_state_its_update_told_customers_with_a_version_of_its_own(users, incident):
    versions = incident.versions.count()
    publish(incident, TEXT, actor=users.ops, source_run=passed(incident), fields=PublicFields(state="identified"))
    incident.refresh_from_db()
    assert incident.state == "identified" and incident.versions.count() == versions + 1
    assert incident.versions.order_by("-number").first().created_by == users.ops
    publish(incident, TEXT, actor=users.ops, source_run=passed(incident),  # the state left as it is
            fields=PublicFields(confirmed=frozenset({CONFIRM_REPEAT})))
    assert incident.versions.count() == versions + 1

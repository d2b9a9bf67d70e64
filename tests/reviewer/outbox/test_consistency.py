"""An update agrees with its incident and says something new: the impact a P0/P1 implies, the
components affected, the components its text names, and a text that repeats the last update; each
needs the person's confirmation otherwise (publishing, the publish page, the API, the status page)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from agents.models import PipelinePolicy, Run
from reviewer.models import PublishedUpdate, StatusComponent
from reviewer.outbox import tasks
from reviewer.outbox.publishing import (
    CONFIRM_IMPACT,
    CONFIRM_REPEAT,
    NeedsConfirmation,
    PublicFields,
    auto_publish,
    components_named,
    new_sentences,
    publish,
    suggested_components,
)
from tests.factories import make_incident, make_run

TEXT = "We are investigating failed payments at Checkout in the EU. Current status: degraded."
AGAIN = "  current status: degraded!  We are investigating failed payments at checkout in the EU "
MORE = TEXT + " Card payments are slower than usual."


@pytest.fixture(autouse=True)
def no_broker(monkeypatch):
    monkeypatch.setattr(tasks.deliver, "delay", lambda pk: None)


@pytest.fixture
def p1(db):
    return make_incident("inc_p1", title="Payments failing", severity="P1")


@pytest.fixture
def checkout(db):
    return StatusComponent.objects.create(name="Checkout", position=1)


@pytest.fixture
def sign_in(db):
    return StatusComponent.objects.create(name="Sign-in", position=2)


def passed(incident, text=TEXT):
    return make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=text)


# -- impact and components against the severity ----------------------------------------------------


def test_a_p1_with_no_component_given_and_none_defined_is_published_at_least_major(users, p1):
    update = publish(p1, TEXT, actor=users.ops, source_run=passed(p1))
    assert update.impact == "major"  # never "minor" (Degraded performance) above a P1


def test_a_p2_keeps_the_default_impact(users):
    incident = make_incident("inc_p2", severity="P2")
    assert publish(incident, TEXT, actor=users.ops, source_run=passed(incident)).impact == "minor"


def test_a_p1_with_every_component_operational_needs_a_confirmation(users, p1, checkout, sign_in):
    run = passed(p1)
    with pytest.raises(NeedsConfirmation, match="no component as affected") as refused:
        publish(p1, TEXT, actor=users.ops, source_run=run, fields=PublicFields(components={checkout.pk: "operational"}))
    assert list(refused.value.needed) == [CONFIRM_IMPACT]
    assert "confirm_impact" in str(refused.value)
    assert not PublishedUpdate.objects.exists()

    update = publish(p1, TEXT, actor=users.ops, source_run=run,
                     fields=PublicFields(components={}, confirmed=frozenset({CONFIRM_IMPACT})))
    assert update.impact == "major"


def test_an_impact_below_what_a_p0_implies_needs_a_confirmation(users, checkout):
    p0 = make_incident("inc_p0", severity="P0")
    run = passed(p0)
    fields = {"components": {checkout.pk: "partial_outage"}, "impact": "minor"}
    with pytest.raises(NeedsConfirmation, match="below what a P0 incident implies") as refused:
        publish(p0, TEXT, actor=users.ops, source_run=run, fields=PublicFields(**fields))
    assert "no component" not in str(refused.value)  # the component is affected: one problem only
    update = publish(p0, TEXT, actor=users.ops, source_run=run,
                     fields=PublicFields(**fields, confirmed=frozenset({CONFIRM_IMPACT})))
    assert update.impact == "minor"  # what the person confirmed


def test_an_affected_component_and_the_impact_it_implies_need_nothing_and_resolving_needs_nothing(
        users, p1, checkout):
    update = publish(p1, TEXT, actor=users.ops, source_run=passed(p1),
                     fields=PublicFields(components={checkout.pk: "partial_outage"}))
    assert update.impact == "major"
    fixed = "Payments at Checkout work again in the EU."
    resolved = publish(p1, fixed, actor=users.ops, source_run=passed(p1, fixed), fields=PublicFields(state="resolved"))
    assert resolved.state == "resolved"


def test_auto_publish_leaves_a_p1_with_no_component_affected_to_a_person(p1, checkout):
    PipelinePolicy.objects.update_or_create(pipeline="reflection", active=True, defaults={"auto_publish": True})
    run = passed(p1)
    run.policy = {**run.policy, "auto_publish": True}
    run.save()
    auto_publish(None, run=run, result=None)
    assert not PublishedUpdate.objects.exists()


def test_the_components_a_text_names_are_found_by_whole_word_whatever_the_case(checkout, sign_in):
    api = StatusComponent.objects.create(name="API", position=3)
    assert components_named("Checkout and the api are slow.") == [checkout, api]
    assert components_named("Sign-in fails; rapid retries do not help.") == [sign_in]  # not "api" in "rapid"


def test_suggested_components_carry_the_last_update_and_add_those_named_at_the_severitys_status(
        users, p1, checkout, sign_in):
    assert suggested_components(p1, TEXT) == {checkout: "partial_outage"}
    assert suggested_components(make_incident("inc_p0b", severity="P0"), TEXT) == {checkout: "major_outage"}
    publish(p1, "Sign-in is failing.", actor=users.ops, source_run=passed(p1, "Sign-in is failing."),
            fields=PublicFields(components={sign_in.pk: "major_outage"}))
    assert suggested_components(p1, TEXT) == {sign_in: "major_outage", checkout: "partial_outage"}


def test_suggested_components_start_from_those_ops_named_on_the_incident(users, checkout, sign_in):
    incident = make_incident("inc_named", severity="P1", components=["Sign-in"])
    assert suggested_components(incident, TEXT) == {sign_in: "partial_outage", checkout: "partial_outage"}
    assert suggested_components(incident, "We are looking into it.") == {sign_in: "partial_outage"}


# -- an update that says nothing new ----------------------------------------------------------------


def test_new_sentences_are_compared_normalised():
    assert new_sentences(TEXT, AGAIN) == []  # case, spacing, order and closing punctuation aside
    assert new_sentences(TEXT, MORE) == ["Card payments are slower than usual."]


def test_a_text_that_repeats_the_last_update_needs_a_confirmation(users):
    incident = make_incident()
    publish(incident, TEXT, actor=users.ops, source_run=passed(incident))
    run = passed(incident, AGAIN)
    with pytest.raises(NeedsConfirmation, match="repeats update v1") as refused:
        publish(incident, AGAIN, actor=users.ops, source_run=run)
    assert list(refused.value.needed) == [CONFIRM_REPEAT]
    assert PublishedUpdate.objects.count() == 1
    assert publish(incident, MORE, actor=users.ops, source_run=passed(incident, MORE)).version == 2
    again = passed(incident, MORE)
    assert publish(incident, MORE, actor=users.ops, source_run=again,
                   fields=PublicFields(confirmed=frozenset({CONFIRM_REPEAT}))).version == 3


def test_an_automatic_repeat_is_never_published(users):
    incident = make_incident()
    publish(incident, TEXT, actor=users.ops, source_run=passed(incident))
    with pytest.raises(NeedsConfirmation):
        publish(incident, TEXT, actor=None, source_run=passed(incident))
    assert PublishedUpdate.objects.count() == 1


# -- the publish page --------------------------------------------------------------------------------


FORM = {"title": "Payment problems", "state": "identified"}


def test_the_publish_page_starts_from_the_severity_and_the_components_the_text_names(login, p1, checkout, sign_in):
    run = passed(p1)
    page = login("ops").get(reverse("publish_confirm", args=[run.pk])).content.decode()
    assert '<option value="partial_outage" selected>Partial outage</option>' in page.split(
        f'name="component_{checkout.pk}"')[1].split("</select>")[0]
    assert '<option value="" selected>Not affected</option>' in page.split(
        f'name="component_{sign_in.pk}"')[1].split("</select>")[0]
    assert "at least Major for a P1 incident" in page


def test_the_publish_page_asks_to_confirm_a_p1_with_no_component_then_publishes(login, p1, checkout):
    run = passed(p1)
    client = login("ops")
    refused = client.post(reverse("publish_run", args=[run.pk]), FORM | {f"component_{checkout.pk}": ""})
    html = refused.content.decode()
    assert refused.status_code == 409
    assert "the update marks no component as affected" in html and 'name="confirm_impact"' in html
    assert not PublishedUpdate.objects.exists()

    done = client.post(reverse("publish_run", args=[run.pk]), FORM | {"confirm_impact": "on"})
    assert done.status_code == 302
    assert PublishedUpdate.objects.get().impact == "major"


def test_the_publish_page_warns_of_a_repeat_before_the_click_and_shows_no_new_sentence(login, users):
    incident = make_incident()
    publish(incident, TEXT, actor=users.ops, source_run=passed(incident))
    run = passed(incident, AGAIN)
    client = login("ops")
    page = client.get(reverse("publish_confirm", args=[run.pk])).content.decode()
    assert "repeats update v1" in page and 'name="confirm_repeat"' in page
    assert "<strong>None:</strong> every sentence of this text is in update v1" in page

    assert client.post(reverse("publish_run", args=[run.pk]), FORM).status_code == 409
    assert client.post(reverse("publish_run", args=[run.pk]), FORM | {"confirm_repeat": "on"}).status_code == 302
    assert PublishedUpdate.objects.count() == 2


def test_the_publish_page_lists_the_new_sentences(login, users):
    incident = make_incident()
    publish(incident, TEXT, actor=users.ops, source_run=passed(incident))
    page = login("ops").get(reverse("publish_confirm", args=[passed(incident, MORE).pk])).content.decode()
    assert '<ul class="new-sentences"><li>Card payments are slower than usual.</li></ul>' in page
    assert 'name="confirm_repeat"' not in page


# -- the API ------------------------------------------------------------------------------------------


def test_the_api_refuses_with_409_naming_the_switch_then_publishes_with_it(api, p1, checkout):
    run = passed(p1)
    ops = api("ops")
    body = {"components": [{"component_id": checkout.pk, "status": "operational"}]}
    refused = ops.post(f"/runs/{run.pk}/publish", body)
    assert refused.status_code == 409
    detail = refused.json()["detail"]
    assert detail["confirm"] == ["confirm_impact"] and "no component" in detail["problems"]["confirm_impact"][0]
    assert detail["new_sentences"] is None  # nothing published before

    done = ops.post(f"/runs/{run.pk}/publish", {**body, "confirm_impact": True})
    assert done.status_code == 201, done.json()
    assert done.json()["impact"] == "major"

    again = passed(p1)
    repeat = ops.post(f"/runs/{again.pk}/publish", {"confirm_impact": True})
    assert repeat.status_code == 409
    assert repeat.json()["detail"]["confirm"] == ["confirm_repeat"] and repeat.json()["detail"]["new_sentences"] == []
    ok = ops.post(f"/runs/{again.pk}/publish", {"confirm_impact": True, "confirm_repeat": True})
    assert ok.status_code == 201


# -- the status page ------------------------------------------------------------------------------------


def test_the_status_page_never_shows_only_operational_under_a_confirmed_p1(users, client, p1, checkout):
    from reviewer.models import DeliveryChannel

    DeliveryChannel.objects.get_or_create(kind=DeliveryChannel.Kind.STATUS, defaults={"name": "Public status page"})
    update = publish(p1, TEXT, actor=users.ops, source_run=passed(p1),
                     fields=PublicFields(components={}, confirmed=frozenset({CONFIRM_IMPACT})))
    for delivery in update.deliveries.all():
        assert tasks.attempt(delivery.pk) == "delivered"
    html = client.get(reverse("status")).content.decode()
    assert "All systems operational" not in html and "Partial outage" in html
    assert 'id="components-unnamed"' in html and "does not name the components it affects yet" in html

"""One-key repairs on the escalation page: each finding offers the fixes the same guard passes (its finding
gone, none new), a key each; choosing one fills the edit box, and approving it records an edit, which the
datasets export as a preference pair."""

import json

import pytest
from django.urls import reverse
from django.utils.html import escape

from reviewer.desk import datasets, decisions, repairs
from reviewer.models import Decision
from tests import factories

TEXT = "Every EU user is affected by the payment problems. We are investigating."
FIXED = "40% of EU users are affected by the payment problems. We are investigating."


def blocked(text: str, **incident):
    """A pending escalation whose candidate is ``text``, blocked with what the guard finds in it now."""
    incident = factories.make_incident(facts=[("failed_payment_pct", "Failed payments", "40", "%")], **incident)
    escalation = factories.make_escalation(incident=incident, text=text, stop_reason="invalid_answer:scope_claim")
    escalation.guard = {"violations": decisions.guard_edit(escalation, text)["violations"], "measurements": {}}
    escalation.save(update_fields=["guard"])
    return escalation


@pytest.fixture
def escalation(users):
    return blocked(TEXT)


def test_a_finding_offers_the_fixes_the_guard_passes_numbered_from_one(escalation):
    [finding] = escalation.guard["violations"]
    assert finding["check"].endswith("scope_claim")

    [fixes] = repairs.offered(escalation, escalation.candidate, [finding])

    assert [(f.key, f.rule, f.text) for f in fixes] == [
        ("1", "share", FIXED), ("2", "drop_sentence", "We are investigating.")]
    for fix in fixes:
        assert decisions.guard_edit(escalation, fix.text)["violations"] == []


def test_a_fix_that_leaves_a_new_finding_is_not_offered(users):
    text = "We are investigating the payment problems in the EU. Our engineers replaced the faulty router."
    escalation = blocked(text)
    grounding = [v for v in escalation.guard["violations"] if v["check"].endswith("unsupported_statement")]
    assert grounding, escalation.guard

    [fixes] = repairs.offered(escalation, text, grounding[:1])

    # Dropping the words leaves "replaced the." (a malformed sentence): only the sentence's removal is offered.
    assert [f.rule for f in fixes] == ["drop_sentence"]
    assert decisions.guard_edit(escalation, "Our engineers replaced the.")["violations"]


def test_a_fix_that_leaves_a_possessive_without_its_noun_is_not_offered(users):
    text = ("We are investigating the payment problems in the EU. "
            "Your bank has been notified about the failed payments, and we are sorry.")
    escalation = blocked(text)
    grounding = [v for v in escalation.guard["violations"] if v["check"].endswith("unsupported_statement")]
    assert [v["found"] for v in grounding] == ["bank has been notified"]

    [fixes] = repairs.offered(escalation, text, grounding)

    # Without "bank has been notified" the sentence reads "Your about the failed payments": no fix.
    assert [f.rule for f in fixes] == ["drop_sentence"]
    assert [f.text for f in fixes] == ["We are investigating the payment problems in the EU."]


def test_a_fix_two_findings_share_keeps_one_key(users):
    text = ("We are investigating the payment problems in the EU, and we are sorry for the trouble. "
            "Every EU user is affected by the faulty router. "
            "We will share more as soon as we can, and thank you for your patience.")
    escalation = blocked(text)
    findings = escalation.guard["violations"]
    assert [(v["check"].rpartition(":")[2], v["found"]) for v in findings] == [
        ("scope_claim", "Every EU user"), ("unsupported_statement", "faulty router")]

    scope, grounding = repairs.offered(escalation, text, findings)

    # Both findings are in the second sentence: removing it is one fix, under one key, listed under each.
    assert [(f.key, f.rule) for f in scope] == [("1", "share"), ("2", "drop_sentence")]
    assert [(f.key, f.rule) for f in grounding] == [("2", "drop_sentence")]
    assert grounding[0].text == scope[1].text == (
        "We are investigating the payment problems in the EU, and we are sorry for the trouble. "
        "We will share more as soon as we can, and thank you for your patience.")


def test_the_escalation_page_shows_each_fix_with_its_key(login, escalation):
    html = login("lead").get(reverse("escalation", args=[escalation.pk])).content.decode()

    assert 'data-repair-key="1"' in html and 'aria-keyshortcuts="1"' in html
    assert "<kbd>1</kbd> " + escape("Replace “Every EU user” with “40% of EU users” (Failed payments)") in html
    assert f'value="{FIXED}"' in html
    assert "js/repairs.js" in html


def test_people_who_cannot_decide_see_the_findings_without_fixes(login, escalation):
    html = login("ops").get(reverse("escalation", args=[escalation.pk])).content.decode()

    assert "Every EU user" in html and "data-repair-key" not in html


def test_without_javascript_a_fix_fills_the_edit_box_and_shows_the_guards_check(login, escalation):
    response = login("lead").post(reverse("escalation_check", args=[escalation.pk]), {"text": FIXED})

    html = response.content.decode()
    assert f">{FIXED}</textarea>" in html
    assert "The guard finds nothing wrong with this text." in html
    assert not Decision.objects.exists()  # choosing a fix decides nothing


def test_a_chosen_fix_approved_is_an_edit_and_a_preference_pair(login, escalation, users):
    login("lead").post(reverse("escalation_decide", args=[escalation.pk]),
                       {"action": "edit_approve", "text": FIXED, "note": ""})

    decision = Decision.objects.get()
    assert (decision.action, decision.final_text, decision.guard_results["ok"]) == ("edit_approve", FIXED, True)
    lines = [json.loads(line) for line in datasets.export(None, "preference").splitlines()]
    assert [(line["preferred_output"][0]["content"], line["non_preferred_output"][0]["content"])
            for line in lines] == [(FIXED, TEXT)]


def test_a_decided_escalation_offers_no_fix(login, escalation, users):
    decisions.decide(escalation.pk, users.lead, "reject", note="Not now.")
    html = login("lead").get(reverse("escalation", args=[escalation.pk])).content.decode()

    assert "data-repair-key" not in html


def test_the_edit_boxs_check_offers_fixes_of_the_edited_text(login, users):
    escalation = blocked(TEXT + " Our engineers replaced the faulty router.")
    edited = FIXED + " Our engineers replaced the faulty router."  # the first fix chosen, one finding left

    response = login("lead").post(reverse("escalation_check", args=[escalation.pk]), {"text": edited},
                                  HTTP_HX_REQUEST="true")

    html = response.content.decode()
    assert 'id="edit-violations"' in html and 'data-repair-key="1"' in html
    assert escape("Remove the sentence “Our engineers replaced the faulty router.”") in html
    assert f'value="{FIXED}"' in html  # the fix is made on the edited text, not on the candidate


def test_without_javascript_a_fix_in_the_edit_box_posts_the_edit_form_with_the_fix_as_the_text(login, escalation):
    # The fix's button is in the edit form: the form's text comes first, the button's value last, and counts.
    response = login("lead").post(reverse("escalation_check", args=[escalation.pk]), {"text": [TEXT + " x", FIXED]})

    assert f">{FIXED}</textarea>" in response.content.decode()

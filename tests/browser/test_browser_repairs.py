"""One-key repairs in a browser, at a laptop's and a phone's width: a lead opens an escalation the guard
blocked for an over-broad quantifier, presses 1, the fix fills the edit box and the guard passes it there,
and the lead approves it; the decision is an edit, in the datasets export as a preference pair. axe-core
finds nothing on the page, before or after. Screenshots: test-artifacts/repairs-offered-<width>.png,
repairs-filled-<width>.png, repairs-approved-<width>.png."""

import json

import pytest
from playwright.sync_api import expect

from reviewer.desk import datasets, decisions
from reviewer.models import Decision
from tests.browser.conftest import ARTIFACTS
from tests.browser.helpers import assert_fits, log_in
from tests.factories import make_escalation, make_incident

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TEXT = "Every EU user is affected by the payment problems. We are investigating."
FIXED = "40% of EU users are affected by the payment problems. We are investigating."


@pytest.fixture
def escalation(users):
    incident = make_incident("inc_pay_7", facts=[("failed_payment_pct", "Failed payments", "40", "%")])
    escalation = make_escalation(incident=incident, text=TEXT, stop_reason="invalid_answer:scope_claim")
    escalation.guard = {"violations": decisions.guard_edit(escalation, TEXT)["violations"], "measurements": {}}
    escalation.save(update_fields=["guard"])
    return escalation


@pytest.mark.parametrize("width", [1366, 390])
def test_a_lead_fixes_a_finding_with_one_key_and_approves(page, live_server, escalation, screenshot, width,
                                                          accessible_pages, no_csp_violation):
    page.set_viewport_size({"width": width, "height": 900})
    log_in(page, live_server, "lead")
    page.goto(f"{live_server.url}/escalations/{escalation.pk}/")

    fix = page.locator('#guard-panel button[data-repair-key="1"]')
    expect(fix).to_contain_text("Replace “Every EU user” with “40% of EU users”")
    expect(fix.locator("kbd")).to_have_text("1")
    assert accessible_pages.check(page) == []
    page.locator("#guard-panel").scroll_into_view_if_needed()
    assert_fits(page, f"repairs-offered-{width}", screenshot)
    page.locator("#guard-panel").screenshot(path=str(ARTIFACTS / f"repairs-offered-{width}.png"))

    page.locator("body").press("1")  # the key, with the focus on no field

    box = page.locator("#edit textarea[name=text]")
    expect(box).to_have_value(FIXED)
    expect(box).not_to_be_focused()  # chosen by its key: the keys keep working
    expect(page.locator("#edit-violations")).to_contain_text("The guard finds nothing wrong with this text.")
    assert accessible_pages.check(page) == []
    page.locator("#edit").screenshot(path=str(ARTIFACTS / f"repairs-filled-{width}.png"))

    page.locator("#edit button[type=submit]", has_text="Approve the edited text").click()
    expect(page.locator("#decision-panel")).to_contain_text("approved")
    expect(page.locator("#esc-status")).to_have_text("edited")
    assert accessible_pages.check(page) == []
    page.locator("#decision").screenshot(path=str(ARTIFACTS / f"repairs-approved-{width}.png"))

    decision = Decision.objects.get(escalation=escalation)
    assert (decision.action, decision.final_text) == (Decision.Action.EDIT_APPROVE, FIXED)
    assert decisions.guard_edit(escalation, decision.final_text)["violations"] == []  # the fixed text passes
    assert decision.guard_results["ok"] is True
    [line] = [json.loads(line) for line in datasets.export(None, "preference").splitlines()]
    assert line["preferred_output"][0]["content"] == FIXED
    assert line["non_preferred_output"][0]["content"] == TEXT


@pytest.mark.parametrize("width", [1366, 390])
def test_a_lead_fixes_one_finding_after_another_by_key(page, live_server, users, screenshot, width,
                                                       accessible_pages, no_csp_violation):
    text = TEXT + " Our engineers replaced the faulty router."
    incident = make_incident("inc_pay_8", facts=[("failed_payment_pct", "Failed payments", "40", "%")])
    escalation = make_escalation(incident=incident, text=text, stop_reason="invalid_answer:scope_claim")
    escalation.guard = {"violations": decisions.guard_edit(escalation, text)["violations"], "measurements": {}}
    escalation.save(update_fields=["guard"])
    page.set_viewport_size({"width": width, "height": 900})
    log_in(page, live_server, "lead")
    page.goto(f"{live_server.url}/escalations/{escalation.pk}/")

    page.locator("body").press("1")  # the quantifier, in the guard panel
    box = page.locator("#edit textarea[name=text]")
    expect(box).to_have_value(FIXED + " Our engineers replaced the faulty router.")
    check = page.locator("#edit-violations")
    expect(check.locator('button[data-repair-key="1"]')).to_contain_text(
        "Remove the sentence “Our engineers replaced the faulty router.”")
    assert accessible_pages.check(page) == []
    check.screenshot(path=str(ARTIFACTS / f"repairs-edit-check-{width}.png"))

    page.locator("body").press("1")  # the sentence left, in the edit box's check
    expect(box).to_have_value(FIXED)
    expect(check).to_contain_text("The guard finds nothing wrong with this text.")
    assert accessible_pages.check(page) == []

"""Forms that keep what people typed and updates that agree with their incident, in a real browser:

1. ops type a goal, change the pipeline (to routing and back, and to another text pipeline) and start
   the run: its goal is what they typed, never the prefilled default;
2. publishing a P1's text with no component affected asks for a confirmation (at 1366 and 390 pixels)
   and publishes once it is ticked, at least "major";
3. ops edit the incident's facts and state on its page: a new version by them.

Screenshots in test-artifacts/: consistency-confirm-1366.png, device-consistency-confirm-390.png,
consistency-facts-1366.png, device-consistency-facts-390.png."""

import re

import pytest
from playwright.sync_api import expect

from agents.models import Incident, Run
from reviewer.models import PublishedUpdate, StatusComponent
from tests.browser.helpers import assert_fits, log_in
from tests.factories import make_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("no_csp_violation")]
TYPED = "Tell customers in the US that card payments fail for some of them and refunds are automatic."
TEXT = "We are investigating failed card payments in the US. Current status: degraded."


def test_the_typed_goal_survives_a_change_of_pipeline_and_is_the_runs_goal(page, live_server, users, demo_data):
    page.set_viewport_size({"width": 1366, "height": 900})
    log_in(page, live_server, "ops")
    page.goto(f"{live_server.url}/incidents/inc_pay_2041/")
    goal = page.locator("#run-form textarea[name=goal]")
    expect(goal).to_have_value(re.compile("^Write the customer update for"))  # the default, untouched
    goal.fill(TYPED)

    page.select_option("#run-form select", "routing")
    expect(page.locator("#run-form textarea[name=ticket]")).to_be_visible()
    page.fill("#run-form textarea[name=ticket]", "Charged twice.")
    page.select_option("#run-form select", "reflection")
    expect(goal).to_have_value(TYPED)
    page.select_option("#run-form select", "self_critique")
    expect(page.locator("#run-form select")).to_have_value("self_critique")
    expect(goal).to_have_value(TYPED)

    page.click("#run-form button[type=submit]")
    page.wait_for_url(re.compile(r"/runs/\d+/$"))
    run = Run.objects.get()
    assert (run.pipeline, run.goal) == ("self_critique", TYPED)


def test_publishing_a_p1_with_no_component_affected_asks_for_a_confirmation(
        page, live_server, users, demo_data, screenshot):
    checkout = StatusComponent.objects.create(name="Checkout", position=1)
    StatusComponent.objects.create(name="Sign-in", position=2)
    incident = Incident.objects.get(incident_id="inc_pay_2041")
    assert incident.severity == "P1"
    run = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=TEXT)
    page.set_viewport_size({"width": 1366, "height": 900})
    log_in(page, live_server, "ops")
    page.goto(f"{live_server.url}/runs/{run.pk}/publish/")
    expect(page.locator(f"select[name=component_{checkout.pk}]")).to_have_value("")  # the text names none
    expect(page.locator("select[name=impact] option").first).to_contain_text("at least Major for a P1 incident")
    page.fill("input[name=title]", "Card payments failing")
    page.click("button:has-text('Publish update v1')")

    box = page.locator("#confirmations")
    expect(box).to_contain_text("The incident is P1, but the update marks no component as affected")
    assert not PublishedUpdate.objects.exists()
    expect(page.locator("input[name=title]")).to_have_value("Card payments failing")  # kept as typed
    screenshot(page, "consistency-confirm-1366")
    page.set_viewport_size({"width": 390, "height": 800})
    assert_fits(page, "consistency-confirm-390", screenshot)

    page.check("input[name=confirm_impact]")
    page.click("button:has-text('Publish update v1')")
    page.wait_for_url(re.compile(r"/incidents/inc_pay_2041/#updates$"))
    update = PublishedUpdate.objects.get()
    assert (update.impact, update.public_title) == ("major", "Card payments failing")


def test_ops_edit_the_facts_and_the_state_on_the_incident_page(page, live_server, users, demo_data, screenshot):
    incident = Incident.objects.get(incident_id="inc_pay_2041")
    before = incident.latest_version().number
    page.set_viewport_size({"width": 1366, "height": 900})
    log_in(page, live_server, "ops")
    page.goto(f"{live_server.url}/incidents/inc_pay_2041/")
    page.click("#edit-facts summary")
    editor = page.locator("#edit-facts form")
    expect(editor).to_be_visible()
    screenshot(page, "consistency-facts-1366")
    page.set_viewport_size({"width": 390, "height": 800})
    assert_fits(page, "consistency-facts-390", screenshot)
    page.set_viewport_size({"width": 1366, "height": 900})

    eta = editor.locator("input[name$=-key][value=eta_minutes]")
    prefix = eta.get_attribute("name").removesuffix("-key")
    page.fill(f"input[name={prefix}-value]", "75")
    new = editor.locator("fieldset.fact-row").last
    new.locator("input[name$=-key]").fill("bridge_call")
    new.locator("input[name$=-label]").fill("Bridge call")
    new.locator("input[name$=-value]").fill("Room 4")
    new.locator("select[name$=-visibility]").select_option("internal")
    page.select_option("select[name=state]", "monitoring")
    page.click("button:has-text('Save facts and state')")
    page.wait_for_url(re.compile(r"/incidents/inc_pay_2041/#facts$"))
    expect(page.locator(".messages")).to_contain_text(f"Saved as version {before + 1}")

    incident = Incident.objects.get(pk=incident.pk)
    facts = {f.key: (f.value, f.visibility) for f in incident.fact_list()}
    assert facts["eta_minutes"][0] == "75" and facts["bridge_call"] == ("Room 4", "internal")
    assert incident.state == "monitoring" and incident.latest_version().created_by == users.ops

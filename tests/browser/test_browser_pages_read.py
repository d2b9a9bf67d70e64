"""What a lead and ops read, in a real browser at 1366 and 390 pixels:

1. the escalation page lists the incident's facts as the incident page does (3.4%, the approved actions
   under their heading) and says why the text stopped in a sentence, its code in small type;
2. the inbox row says its stop reason in a sentence;
3. the run page lists the facts the run saw and says why it stopped in a sentence;
4. ops tick the components an incident affects on its page and save them as a new version.

Screenshots in test-artifacts/: read-escalation-1366.png, device-read-escalation-390.png,
read-inbox-1366.png, device-read-inbox-390.png, read-run-1366.png, device-read-run-390.png,
read-components-1366.png, device-read-components-390.png."""

import re

import pytest
from playwright.sync_api import expect

from agents.core.stops import STOP_REASONS
from agents.models import Incident
from reviewer.models import StatusComponent
from tests.browser.helpers import assert_fits, log_in
from tests.factories import make_escalation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("no_csp_violation")]
CODE = "patch_violation:no_new_facts"
TEXT = "We are investigating failed card payments in the US. 4.1% of payments fail."


@pytest.fixture
def escalation(demo_data):
    incident = Incident.objects.get(incident_id="inc_pay_2041")
    incident.record_version()
    return make_escalation(incident=incident, stop_reason=CODE, text=TEXT, guard={"violations": [
        {"check": CODE, "found": "4.1%",
         "message": "The number 4.1% is not in the incident's facts."}]})


def at_both_widths(page, name, screenshot):
    page.set_viewport_size({"width": 1366, "height": 900})
    screenshot(page, f"{name}-1366")
    page.set_viewport_size({"width": 390, "height": 800})
    assert_fits(page, f"{name}-390", screenshot)
    page.set_viewport_size({"width": 1366, "height": 900})


def test_the_escalation_page_reads_like_the_incident_page(page, live_server, users, escalation, screenshot):
    page.set_viewport_size({"width": 1366, "height": 900})
    log_in(page, live_server, "lead")
    page.goto(f"{live_server.url}/escalations/{escalation.pk}/")

    facts = page.locator("#facts")
    expect(facts.locator("dd", has_text=re.compile(r"^3\.4%$"))).to_be_visible()
    expect(facts).not_to_contain_text("0.034")
    expect(facts.locator("h3", has_text="Approved actions")).to_be_visible()
    expect(facts).not_to_contain_text("approved actions[")
    reason = page.locator(".stop-reason .finding-message")
    expect(reason).to_have_text(STOP_REASONS[CODE])
    expect(page.locator(".stop-reason .finding-check code")).to_have_text(CODE)
    at_both_widths(page, "read-escalation", screenshot)


def test_the_inbox_row_says_its_stop_reason_in_a_sentence(page, live_server, users, escalation, screenshot):
    page.set_viewport_size({"width": 1366, "height": 900})
    log_in(page, live_server, "lead")
    page.goto(f"{live_server.url}/inbox/")

    row = page.locator(f"#esc-row-{escalation.pk}")
    expect(row.locator(".stop-reason-cell .finding-message")).to_have_text(STOP_REASONS[CODE])
    expect(row.locator(".stop-reason-cell .finding-check")).to_have_text(CODE)
    at_both_widths(page, "read-inbox", screenshot)


def test_the_run_page_lists_the_facts_the_run_saw(page, live_server, users, escalation, screenshot):
    page.set_viewport_size({"width": 1366, "height": 900})
    log_in(page, live_server, "lead")
    page.goto(f"{live_server.url}/runs/{escalation.run.pk}/")

    expect(page.locator("#run-header .stop-reason .finding-message")).to_have_text(STOP_REASONS[CODE])
    page.click("#run-facts summary")
    expect(page.locator("#run-facts dd", has_text=re.compile(r"^3\.4%$"))).to_be_visible()
    at_both_widths(page, "read-run", screenshot)


def test_ops_tick_the_components_an_incident_affects(page, live_server, users, demo_data, screenshot):
    StatusComponent.objects.create(name="Checkout", position=1)
    StatusComponent.objects.create(name="Sign-in", position=2)
    incident = Incident.objects.get(incident_id="inc_pay_2041")
    before = incident.record_version().number
    page.set_viewport_size({"width": 1366, "height": 900})
    log_in(page, live_server, "ops")
    page.goto(f"{live_server.url}/incidents/inc_pay_2041/")

    page.click("#edit-facts summary")
    page.get_by_label("Checkout").check()
    at_both_widths(page, "read-components-editor", screenshot)
    page.click("button:has-text('Save facts and state')")
    page.wait_for_url(re.compile(r"/incidents/inc_pay_2041/#facts$"))

    expect(page.locator(".messages")).to_contain_text(f"Saved as version {before + 1}")
    expect(page.locator("#facts h3", has_text="Affected components")).to_be_visible()
    expect(page.locator("#facts li", has_text="Checkout")).to_be_visible()
    assert Incident.objects.get(pk=incident.pk).components == ["Checkout"]
    at_both_widths(page, "read-components", screenshot)

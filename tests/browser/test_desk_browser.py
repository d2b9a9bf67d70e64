"""The review desk in a real browser, at a laptop's 1366x900 and a phone's 390x844: the inbox's
review in place, shortcuts, warnings, bulk reject, live refresh and badge; the escalation page's
marked facts for a lead and for ops; a decided run as every role sees it; times in the browser's
zone. Screenshots go to test-artifacts/desk-*.png."""

import re

import pytest
from playwright.sync_api import expect

from reviewer.desk import decisions
from reviewer.models import Escalation
from tests.browser.helpers import log_in
from tests.factories import make_escalation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("no_csp_violation")]

SIZES = {"laptop": {"width": 1366, "height": 900}, "phone": {"width": 390, "height": 844}}
DRAFT = "We see failed payments for 27% of checkouts. We will update you soon."
CANDIDATE = ("We see failed payments for 27% of checkouts in the EU. It is resolved by 18:00. "
             "We will update you soon.")
GUARD = {"violations": [{"check": "patch_violation:new_region", "message": "Region “EU” is not named in the context."}]}


@pytest.fixture(params=list(SIZES))
def size(request, page):
    page.set_viewport_size(SIZES[request.param])
    return request.param


@pytest.fixture
def escalations(demo_data, users):
    incident = demo_data["inc_pay_2041"]
    return [make_escalation(incident=incident, draft=DRAFT, candidate=CANDIDATE, text=CANDIDATE, guard=GUARD,
                            age_minutes=30 - i) for i in range(2)] + [
        make_escalation(incident=incident, text="We are investigating slow checkouts. Next update in 45 minutes.",
                        age_minutes=40)]


def no_sideways_scroll(page):
    return page.evaluate("() => document.documentElement.scrollWidth <= document.documentElement.clientWidth")


def test_lead_works_the_inbox_with_the_keyboard(page, live_server, escalations, size, screenshot):
    oldest = escalations[2]
    log_in(page, live_server, "lead")
    page.goto(f"{live_server.url}/inbox/")
    expect(page.locator("#pending-count")).to_have_text("3")
    assert no_sideways_scroll(page)
    expect(page.locator(".group-head")).to_contain_text("2 identical escalations")
    screenshot(page, f"desk-inbox-{size}")

    page.keyboard.press("j")
    row = page.locator(f"#esc-row-{oldest.pk}")
    expect(row).to_have_class(re.compile(r"\bcurrent\b"))
    page.keyboard.press("a")  # first press: the row opens with the whole text, the diff and the guard
    details = row.locator("details.review-in-place")
    expect(details).to_have_attribute("open", "")
    expect(details.locator(".full-text")).to_have_text(oldest.candidate)
    expect(details.locator(".approve-form button")).to_be_visible()
    assert Escalation.objects.get(pk=oldest.pk).status == "pending"
    if size == "phone":
        box = details.locator(".approve-form button").bounding_box()
        assert box["height"] >= 44 and box["width"] >= 44
        assert no_sideways_scroll(page)
    screenshot(page, f"desk-inbox-open-{size}")
    page.keyboard.press("a")  # second press approves
    expect(row).to_contain_text("Decided by", timeout=5_000)
    expect(page.locator("#pending-count")).to_have_text("2")
    assert Escalation.objects.get(pk=oldest.pk).status == "approved"
    expect(page.locator("#inbox-count")).to_have_text("2 pending escalations.")

    # c takes the selected row; the row swaps in place and stays selected
    page.keyboard.press("j")
    page.keyboard.press("c")
    expect(page.locator("tr.esc-row.current")).to_contain_text("Release", timeout=5_000)

    # keys never fire while typing: "a", "j", "r" land in the reason field
    page.keyboard.press("j")
    current = page.locator("tr.esc-row.current")
    page.keyboard.press("r")
    reason = current.locator(".reject-inline input[name=note]")
    expect(reason).to_be_focused()
    page.keyboard.type("a j r c o")
    expect(reason).to_have_value("a j r c o")
    expect(current.locator("details.review-in-place")).not_to_have_attribute("open", "")
    assert Escalation.objects.filter(status="pending").count() == 2
    page.keyboard.press("Enter")  # submits the reject form
    expect(current).to_contain_text("rejected", timeout=5_000)
    expect(page.locator("#pending-count")).to_have_text("1")
    expect(page.locator("#inbox-count")).to_have_text("1 pending escalation.")

    page.locator("body").click(position={"x": 2, "y": 2})
    page.keyboard.press("?")
    expect(page.locator("#inbox-keys")).to_be_visible()
    screenshot(page, f"desk-inbox-keys-{size}")
    page.keyboard.press("Escape")
    expect(page.locator("#inbox-keys")).to_be_hidden()


def test_the_inbox_refreshes_itself_and_hides_the_badge_at_zero(page, live_server, escalations, users, size):
    log_in(page, live_server, "lead")
    page.goto(f"{live_server.url}/inbox/")
    expect(page.locator(".esc-row")).to_have_count(3)
    newcomer = make_escalation(text="A new one arrived while the lead was looking.")
    expect(page.locator(f"#esc-row-{newcomer.pk}")).to_be_visible(timeout=12_000)
    expect(page.locator("#pending-count")).to_have_text("4")
    for escalation in Escalation.objects.filter(status="pending"):
        decisions.decide(escalation.pk, users.lead2, "reject", note="Handled elsewhere.")
    expect(page.locator(".esc-row")).to_have_count(0, timeout=12_000)
    expect(page.locator("#pending-count")).to_be_hidden()
    expect(page.locator("#inbox-list")).to_contain_text("Nothing waits for a decision")
    expect(page.locator("table.recent")).to_contain_text("Lars")


def test_what_another_lead_took_warns_before_a_decision(page, live_server, escalations, users, size, screenshot):
    target = escalations[2]
    decisions.take(target.pk, users.lead2)
    log_in(page, live_server, "lead")
    page.goto(f"{live_server.url}/inbox/")
    row = page.locator(f"#esc-row-{target.pk}")
    row.locator("details.review-in-place summary").click()
    row.locator(".approve-form button").click()
    page.wait_for_timeout(300)  # the browser refused the form: nothing was sent
    assert Escalation.objects.get(pk=target.pk).status == "pending"
    expect(row.locator(".approve-form .over-taken")).to_contain_text("Lars took this: decide anyway")
    screenshot(page, f"desk-inbox-taken-{size}")
    row.locator(".approve-form input[name=over_taken]").check()
    row.locator(".approve-form button").click()
    expect(row).to_contain_text("Decided by", timeout=5_000)
    assert Escalation.objects.get(pk=target.pk).status == "approved"


def test_lead_rejects_a_group_of_identical_items_at_once(page, live_server, escalations, size):
    log_in(page, live_server, "lead")
    page.goto(f"{live_server.url}/inbox/")
    page.locator(".group-head input[name=ids]").check()
    page.fill("#bulk-reject input[name=note]", "Duplicate of the EU escalation.")
    page.click("#bulk-reject button[type=submit]")
    expect(page.locator(".messages")).to_contain_text("Rejected 2 escalations")
    assert sorted(Escalation.objects.values_list("status", flat=True)) == ["pending", "rejected", "rejected"]
    expect(page.locator("#pending-count")).to_have_text("1")


def test_escalation_page_marks_every_fact_for_the_lead_and_ops_reads_it(page, live_server, escalations, size,
                                                                         screenshot):
    target = escalations[0]
    log_in(page, live_server, "lead")
    page.goto(f"{live_server.url}/escalations/{target.pk}/")
    text = page.locator(".marked-text")
    expect(text.locator("a.fact-supported", has_text="27%")).to_have_attribute("href", re.compile(r"#fact-\d+"))
    for unsupported in ("EU", "resolved", "18:00"):
        expect(text.locator("mark.fact-unsupported", has_text=unsupported)).to_contain_text("unsupported")
    text.locator("a.fact-supported", has_text="27%").click()
    expect(page.locator("dt:target")).to_have_text("Checkouts affected")
    decision_top = page.locator("#decision-panel").bounding_box()["y"]
    assert decision_top < text.bounding_box()["y"]
    assert no_sideways_scroll(page)
    screenshot(page, f"desk-escalation-lead-{size}")
    page.fill("form:has(input[value=reject]) textarea[name=note]", "It claims a resolution nobody confirmed.")
    page.click("form:has(input[value=reject]) button[type=submit]")
    expect(page.locator("#decision-panel")).to_contain_text("rejected", timeout=5_000)
    expect(page.locator("#esc-status")).to_have_text("rejected")
    expect(page.locator("#take-box")).not_to_contain_text("Take")

    page.click("button:has-text('Log out')")
    log_in(page, live_server, "ops")
    page.goto(f"{live_server.url}/escalations/{target.pk}/")
    expect(page.locator("#decision-panel")).to_contain_text("It claims a resolution nobody confirmed.")
    expect(page.locator("#decision-panel form")).to_have_count(0)
    screenshot(page, f"desk-escalation-ops-{size}")
    page.goto(f"{live_server.url}/runs/{target.run.pk}/")
    expect(page.locator(".decision-outcome")).to_contain_text("How it ended: rejected")
    expect(page.locator(".decision-outcome")).to_contain_text("Lena")
    screenshot(page, f"desk-run-ops-{size}")
    page.goto(f"{live_server.url}/incidents/inc_pay_2041/")
    expect(page.locator("#incident-runs")).to_contain_text("rejected")


@pytest.fixture
def browser_context_args(browser_context_args):
    return {**browser_context_args, "timezone_id": "Asia/Tokyo"}


def test_times_follow_the_browsers_zone(page, live_server, escalations):
    log_in(page, live_server, "ops")
    page.goto(f"{live_server.url}/escalations/{escalations[0].pk}/")
    page.reload()  # the first page told the server the zone; from now on times are in it
    expect(page.locator("time").first).to_have_attribute("title", re.compile(r" Asia/Tokyo$"))
    expect(page.locator("time").first).to_have_text(re.compile(r"^(just now|\d+ min ago)$"))

"""Every width from a laptop down to a phone: the desk's pages at 1366, 1280, 1024, 800 and 390 px,
as a lead and as ops, never scroll sideways, and a lead's decision controls (Take, Reject, Edit…
in the inbox; Take, Approve, the edit box and Reject on the escalation page) lie inside the
window. The inbox holds what makes rows wide: the longest stop reason and an escalation another lead took.
Screenshots: test-artifacts/device-width-<role>-<width>-<page>.png."""

from datetime import timedelta

import pytest
from django.utils import timezone

from agents.models import Run
from reviewer.desk import decisions
from reviewer.models import DeadlineBreach, Escalation
from tests.browser.helpers import assert_fits, log_in
from tests.factories import make_escalation

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = (1366, 1280, 1024, 800, 390)
LONGEST_STOP = "critique_decision_denied_execution:revise"


@pytest.fixture
def desk(demo_runs, users, demo_data):
    """The demo's runs with a pending escalation to decide, one another lead took (on the longest
    stop reason), one decided and one breached; the pages to walk, by name."""
    open_one = Escalation.objects.filter(status="pending").order_by("pk").first()
    decided, breached = (make_escalation(incident=demo_data["inc_pay_2041"]) for _ in range(2))
    taken = make_escalation(incident=demo_data["inc_pay_2041"], pipeline="self_critique", stop_reason=LONGEST_STOP)
    decisions.take(taken.pk, users.lead2)
    decisions.decide(decided.pk, users.lead, "reject", note="Not for customers: the region is wrong.")
    now = timezone.now()
    Escalation.objects.filter(pk=breached.pk).update(deadline_at=now - timedelta(minutes=7), breached_at=now)
    DeadlineBreach.objects.create(escalation=breached, deadline_at=now - timedelta(minutes=7))
    failed = Run.objects.failed().order_by("pk").first()
    return open_one, taken, {
        "home": "/", "inbox": "/inbox/", "escalation-pending": f"/escalations/{open_one.pk}/",
        "escalation-breached": f"/escalations/{breached.pk}/", "escalation-decided": f"/escalations/{decided.pk}/",
        "runs": "/runs/", "failed-runs": "/runs/failed/", "run-failed": f"/runs/{failed.pk}/",
        "run-escalated": f"/runs/{open_one.run_id}/", "incidents": "/incidents/",
        "incident": "/incidents/inc_pay_2041/", "breaches": "/breaches/",
    }


def assert_in_view(page, locator, what: str, width: int):
    """The control, scrolled to, lies wholly inside the window's width."""
    assert locator.count(), f"no {what} on {page.url}"
    locator.first.scroll_into_view_if_needed()
    box = locator.first.bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= width, f"{what} is off screen at {width}px: {box}"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("role", ["lead", "ops"])
def test_desk_pages_fit_every_width_with_the_decision_controls_in_view(page, live_server, desk, screenshot,
                                                                       role, width):
    open_one, taken, pages = desk
    page.set_viewport_size({"width": width, "height": 900})
    log_in(page, live_server, role)
    for name, path in pages.items():
        response = page.goto(f"{live_server.url}{path}")
        assert response.status == (403 if name == "inbox" and role == "ops" else 200), (name, response.status)
        assert_fits(page, f"width-{role}-{width}-{name}", screenshot)
    if role != "lead":
        return
    page.goto(f"{live_server.url}/inbox/")
    row = page.locator(f"#esc-row-{open_one.pk}")
    assert_in_view(page, row.locator("form.take-form button"), "the row's Take", width)
    assert_in_view(page, row.locator("form.reject-inline button"), "the row's Reject", width)
    assert_in_view(page, row.locator("a.edit-link"), "the row's Edit…", width)
    assert_in_view(page, page.locator(f"#esc-row-{taken.pk} .row-actions .over-taken"), "'decide anyway'", width)
    page.goto(f"{live_server.url}/escalations/{open_one.pk}/")
    assert_in_view(page, page.locator("#take-box button"), "Take", width)
    assert_in_view(page, page.locator("form:has(input[value=approve]) button[type=submit]"), "Approve", width)
    assert_in_view(page, page.locator(".edit-form textarea[name=text]"), "the edit box", width)
    assert_in_view(page, page.locator(".edit-form button[type=submit]").first, "Approve the edited text", width)
    assert_in_view(page, page.locator("form:has(input[value=reject]) button.danger"), "Reject", width)


# Where each pending row's cells lie and how tall the page is: a table row has its cells side by side on one top.
ROWS_LAID_OUT = """() => {
  const table = document.querySelector("table.inbox");
  const rows = [...table.querySelectorAll("tr.esc-row")].filter((row) => row.querySelector(".text-cell"));
  return {
    display: getComputedStyle(table).display,
    head: table.querySelector("thead").getBoundingClientRect().height,
    rows: rows.map((row) => [...row.children].map((cell) => {
      const box = cell.getBoundingClientRect();
      return {top: Math.round(box.top), left: Math.round(box.left), right: Math.round(box.right)};
    })),
    height: document.scrollingElement.scrollHeight,
  };
}"""


@pytest.mark.parametrize("width", (1024, 800, 390))
def test_the_inbox_is_a_table_from_800_px_and_cards_below(page, live_server, desk, screenshot, width):
    """From 800 px the inbox is a table: a header row, each escalation one row with its cells side by side, so the
    page grows by a row's height per escalation (four escalations were a 3,272 px page of phone cards at 1024). On
    a phone the rows are cards, one cell under the other. Either way every decision control lies in the window."""
    open_one, taken, _ = desk
    page.set_viewport_size({"width": width, "height": 768})
    log_in(page, live_server, "lead")
    page.goto(f"{live_server.url}/inbox/")
    laid_out = page.evaluate(ROWS_LAID_OUT)
    assert_fits(page, f"inbox-{width}", screenshot)
    rows = laid_out["rows"]
    assert len(rows) >= 4, laid_out
    if width >= 800:
        assert laid_out["display"] == "table" and laid_out["head"] > 0, laid_out
        for cells in rows:
            assert len({cell["top"] for cell in cells}) == 1, f"a row's cells are not side by side: {cells}"
            assert all(a["right"] <= b["left"] + 1 for a, b in zip(cells, cells[1:], strict=False)), cells
        header = page.locator("table.inbox").evaluate("e => e.getBoundingClientRect().top + window.scrollY")
        assert laid_out["height"] <= header + 300 * len(rows) + 400, f"{laid_out['height']} px for {len(rows)} rows"
    else:
        assert laid_out["display"] == "block" and laid_out["head"] == 0, laid_out
        for cells in rows:
            tops = [cell["top"] for cell in cells if cell["right"] > cell["left"]]
            assert tops == sorted(tops) and len(set(tops)) > 3, f"a card's cells are not one under the other: {cells}"
    row = page.locator(f"#esc-row-{open_one.pk}")
    assert_in_view(page, row.locator("input[name=ids]"), "the row's select box", width)
    assert_in_view(page, row.locator("form.take-form button"), "the row's Take", width)
    assert_in_view(page, row.locator("form.reject-inline input[name=note]"), "the reason to reject", width)
    assert_in_view(page, row.locator("form.reject-inline button"), "the row's Reject", width)
    assert_in_view(page, row.locator("a.edit-link"), "the row's Edit…", width)
    assert_in_view(page, page.locator(f"#esc-row-{taken.pk} .row-actions .over-taken"), "'decide anyway'", width)
    row.locator("details.review-in-place summary").click()
    assert_in_view(page, row.locator(".approve-form button[type=submit]"), "the row's Approve", width)

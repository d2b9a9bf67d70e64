"""A grounding finding as a lead sees it in a browser: in the inbox (the row reviewed in place) and on the
escalation page, at a laptop's and a phone's width, the sentence shows with its unsupported words marked,
readable (axe-core finds no contrast or other violation) and announced as unsupported, and the page does not
scroll sideways. Screenshots: test-artifacts/device-grounding-<page>-<width>.png and, the guard panel up close,
grounding-findings-<width>.png."""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import ARTIFACTS
from tests.browser.helpers import assert_fits, log_in
from tests.factories import make_escalation, make_incident

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TEXT = ("We are investigating failed wallet top-ups in the EU. The outage was caused by a third-party vendor, "
        "and the vendor's network change broke payments.")
FINDINGS = [
    {"check": "invalid_answer:unsupported_statement", "message": "The incident does not support: “third-party "
     "vendor”.", "found": "third-party vendor", "sentence": "The outage was caused by a third-party vendor, and the "
     "vendor's network change broke payments.", "words": [[27, 45], [55, 78]]},
    {"check": "invalid_answer:judge_unsupported", "message": "The judge model finds no fact that says the vendor "
     "broke payments.", "found": "broke payments", "sentence": "The outage was caused by a third-party vendor, and "
     "the vendor's network change broke payments."},
]


@pytest.fixture
def escalation(users):
    incident = make_incident("inc_wallet_7", title="Wallet top-ups fail", severity="P2")
    return make_escalation(incident=incident, text=TEXT, stop_reason="invalid_answer:unsupported_statement",
                           guard={"violations": FINDINGS, "measurements": {}})


@pytest.mark.parametrize("width", [1366, 390])
def test_a_lead_reads_the_unsupported_words_of_a_finding_marked(page, live_server, escalation, screenshot, width,
                                                               accessible_pages, no_csp_violation):
    page.set_viewport_size({"width": width, "height": 900})
    log_in(page, live_server, "lead")

    page.goto(f"{live_server.url}/inbox/")
    row = page.locator(f"#esc-row-{escalation.pk}")
    row.locator("summary").click()
    marks = row.locator("mark.unsupported-words")
    expect(marks.first).to_be_visible()
    assert marks.all_text_contents() == [f"unsupported: {words}" for words in
                                         ("third-party vendor", "vendor's network change", "broke payments")]
    assert accessible_pages.check(page) == []
    assert_fits(page, f"grounding-inbox-{width}", screenshot)

    page.goto(f"{live_server.url}/escalations/{escalation.pk}/")
    panel = page.locator("#guard-panel")
    marks = panel.locator("mark.unsupported-words")
    expect(marks.first).to_be_visible()
    assert marks.count() == 3
    # A screen reader hears "unsupported:" before each marked run; the page shows only the words.
    assert marks.first.text_content() == "unsupported: third-party vendor"
    assert page.evaluate("""() => [...document.querySelectorAll('#guard-panel mark .visually-hidden')].every((e) => {
      const box = e.getBoundingClientRect();
      return box.width <= 1 && box.height <= 1;
    })""")
    expect(panel.locator(".finding-check").first).to_contain_text("invalid_answer:unsupported_statement")
    assert accessible_pages.check(page) == []
    panel.scroll_into_view_if_needed()
    assert_fits(page, f"grounding-escalation-{width}", screenshot)
    panel.screenshot(path=str(ARTIFACTS / f"grounding-findings-{width}.png"))  # the findings up close

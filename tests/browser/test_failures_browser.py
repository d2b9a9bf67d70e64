"""What a person sees when the server fails: the 503, 500 and 404 pages in the product's layout at a
desktop and a phone width, and an htmx form whose request the server failed says so next to the
form (role=alert) with the request id, instead of doing nothing."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.helpers import assert_fits, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("no_csp_violation")]
WIDTHS = {"desktop": 1366, "phone": 390}
REQUEST_ID = re.compile(r"Request id: [0-9a-f]{32}\.")


@pytest.fixture
def failing(settings):
    """The product's URLs plus two that fail (tests/reviewer/operations/failure_urls.py), served by the live server."""
    settings.ROOT_URLCONF = "tests.reviewer.operations.failure_urls"


@pytest.mark.parametrize("width", WIDTHS)
def test_the_failure_pages_keep_the_layout_at_every_width(page, live_server, users, failing, screenshot, width):
    page.set_viewport_size({"width": WIDTHS[width], "height": 800})
    log_in(page, live_server, "lead")
    for path, heading, status in [("/test-failures/database/", "Unavailable for a moment", 503),
                                  ("/test-failures/bug/", "Server error", 500),
                                  ("/no-such-page/", "Not found", 404)]:
        response = page.goto(f"{live_server.url}{path}")
        assert response.status == status
        expect(page.get_by_role("heading", level=1)).to_have_text(heading)
        expect(page.locator(".topbar .brand")).to_be_visible()
        if status >= 500:
            expect(page.locator(".request-id")).to_have_text(response.headers["x-request-id"])
        assert_fits(page, f"failure-{status}-{width}", screenshot)


@pytest.mark.parametrize("target, said", [
    ("/test-failures/database/", "The service is unavailable for a moment; nothing was changed."),
    ("/test-failures/bug/", "The server failed to answer; this has been logged."),
])
def test_the_start_run_form_says_when_the_server_failed_its_request(page, live_server, users, demo_data, failing,
                                                                    screenshot, target, said):
    log_in(page, live_server, "ops")
    page.goto(f"{live_server.url}/incidents/inc_pay_2041/")
    runs = re.compile(r".*/incidents/inc_pay_2041/runs/$")
    # The form's request reaches the live server's failing view instead of starting a run.
    page.route(runs, lambda route: route.continue_(url=f"{live_server.url}{target}"))
    alert = page.locator("#run-form form [role=alert]")

    page.click("#run-form button[type=submit]")
    expect(alert).to_contain_text(said)
    expect(alert).to_contain_text(REQUEST_ID)
    expect(page.locator("#run-form button[type=submit]")).to_be_enabled()  # ready to try again
    page.select_option("#run-form select", "self_critique")  # the next request that succeeds takes it back
    expect(alert).to_have_count(0)

    page.set_viewport_size({"width": 390, "height": 800})
    page.click("#run-form button[type=submit]")
    expect(alert).to_contain_text(said)
    assert_fits(page, f"failure-htmx-{target.strip('/').split('/')[-1]}-phone", screenshot)

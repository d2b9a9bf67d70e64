"""What the browser tests do alike."""

from playwright.sync_api import expect

from tests.factories import PASSWORD


def log_in(page, live_server, username):
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    expect(page.locator(".who")).to_be_visible()

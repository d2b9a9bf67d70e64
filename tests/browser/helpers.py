"""What the browser tests do alike."""

from playwright.sync_api import expect

from tests.factories import PASSWORD


def log_in(page, live_server, username):
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    expect(page.locator(".who")).to_be_visible()


# How far the page reaches past the window's right edge, and the elements that stick out (to say why).
OVERFLOW = """() => {
  const width = window.innerWidth;
  const wide = [...document.querySelectorAll("body *")]
    .filter((e) => e.getBoundingClientRect().right > width + 1 && getComputedStyle(e).position !== "fixed")
    .filter((e) => !e.closest(".scroll-x"))
    .slice(0, 5).map((e) => `${e.tagName.toLowerCase()}${e.id ? "#" + e.id : ""}.${e.className}`);
  return {scrollWidth: document.scrollingElement.scrollWidth, innerWidth: width, wide};
}"""


def assert_fits(page, name, screenshot):
    """Saves test-artifacts/device-<name>.png; fails when the page scrolls sideways, naming what sticks out."""
    screenshot(page, f"device-{name}")
    fit = page.evaluate(OVERFLOW)
    assert fit["scrollWidth"] <= fit["innerWidth"], f"{name} scrolls sideways: {fit}"

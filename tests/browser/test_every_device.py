"""Every user, every device: each role walks every page it can open, on a laptop (1366x900), on a
small laptop (1024x768) and on a phone (390x844). No page scrolls sideways, the keyboard reaches a
skip link first and every control it focuses shows a ring that stands out, and axe-core (the
autouse ``accessible_pages`` fixture of conftest.py) finds nothing on any page visited, the admin
site's included, moderate and minor violations included.
Screenshots: test-artifacts/device-<role>-<width>-<page>.png."""

import pytest
from playwright.sync_api import expect

from agents.models import PipelinePolicy, Run
from reviewer.models import Escalation
from tests.browser.conftest import EVERY_IMPACT
from tests.browser.helpers import assert_fits, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = {"laptop": {"width": 1366, "height": 900}, "small-laptop": {"width": 1024, "height": 768},
         "phone": {"width": 390, "height": 844}}

# The focused element's ring: its style, width, and its contrast with what lies around it.
FOCUS_RING = """() => {
  const e = document.activeElement;
  const style = getComputedStyle(e);
  const rgb = (text) => (text.match(/[\\d.]+/g) || []).map(Number);
  const luminance = ([r, g, b]) => {
    const c = [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  // what the ring is drawn on: the element just left of the focused one's box, where the ring lies
  const box = e.getBoundingClientRect();
  const x = Math.max(0, box.left - parseFloat(style.outlineOffset) - parseFloat(style.outlineWidth) / 2);
  const y = Math.min(window.innerHeight - 1, Math.max(0, box.top + box.height / 2));
  let around = document.elementFromPoint(x, y) || e.parentElement, background = [255, 255, 255];
  if (around === e || e.contains(around)) around = e.parentElement;
  while (around) {
    const color = rgb(getComputedStyle(around).backgroundColor);
    if (color.length === 3 || (color.length === 4 && color[3] > 0)) { background = color.slice(0, 3); break; }
    around = around.parentElement;
  }
  const [l1, l2] = [luminance(rgb(style.outlineColor)), luminance(background)].sort((a, b) => b - a);
  return {element: `${e.tagName.toLowerCase()} ${(e.textContent || e.name || "").trim().slice(0, 30)}`,
          style: style.outlineStyle, width: parseFloat(style.outlineWidth),
          contrast: (l1 + 0.05) / (l2 + 0.05), body: e === document.body, skip: e.matches(".skip-link")};
}"""


def pages_of(role: str) -> dict[str, str]:
    """The pages a role opens, by name: every list, a run of each kind, the error pages, and the
    role's own pages (the inbox for a lead, the admin site for an admin)."""
    revised = Run.objects.filter(audit__isnull=False).order_by("pk").first()
    routing = Run.objects.filter(pipeline="routing").order_by("pk").first()
    escalated = Run.objects.filter(escalation__isnull=False).order_by("pk").first()
    failed = Run.objects.failed().order_by("pk").first()
    pages = {
        "dashboard": "/",
        "incidents": "/incidents/",
        "incident": "/incidents/inc_pay_2041/",
        "runs": "/runs/",
        "runs-filtered": f"/runs/?stop_reason={escalated.stop_reason}&status=stopped",
        "failed-runs": "/runs/failed/",
        "run-revised": f"/runs/{revised.pk}/",
        "run-diff-side": f"/runs/{revised.pk}/?diff=side",
        "run-routing": f"/runs/{routing.pk}/",
        "run-escalated": f"/runs/{escalated.pk}/",
        "404": "/runs/999999/",
        "400": "/runs/?stop_reason=a%01b",  # a control character in the address
        "breaches": "/breaches/",
        "status": "/status/",
        "status-history": "/status/history/",
        "escalation": f"/escalations/{Escalation.objects.order_by('pk').first().pk}/",  # ops and admins read it
    }
    if failed is not None:
        pages["run-failed"] = f"/runs/{failed.pk}/"
    passed = Run.objects.filter(status="ok").order_by("pk").first()
    if role in ("ops", "lead"):
        pages["ready-to-publish"] = "/publish/"
        pages["held-deliveries"] = "/deliveries/held/"
    if role in ("ops", "lead") and passed is not None:
        pages["publish-confirm"] = f"/runs/{passed.pk}/publish/"
    if role == "lead":
        pages["inbox"] = "/inbox/"
    else:
        pages["403"] = "/inbox/"
    if role == "padmin":
        policy = PipelinePolicy.objects.order_by("pk").first()
        pages |= {"admin": "/admin/", "admin-policies": "/admin/agents/pipelinepolicy/",
                  "admin-incident-add": "/admin/agents/incident/add/",
                  "admin-claims": "/admin/agents/restrictedclaim/",
                  "admin-policy": f"/admin/agents/pipelinepolicy/{policy.pk}/change/",
                  "admin-users": "/admin/auth/user/", "admin-user-add": "/admin/auth/user/add/"}
    return pages


@pytest.fixture
def people(users):
    """The three roles as the demo makes them: a lead, an ops person and a policy admin (staff, not a
    superuser)."""
    from tests.reviewer.test_access import make_policy_admin

    make_policy_admin("padmin")
    return users


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("role", ["ops", "lead", "padmin"])
def test_every_page_fits_the_screen_for_every_role(page, live_server, people, demo_runs, screenshot, accessible_pages,
                                                   role, size):
    page.set_viewport_size(SIZES[size])
    width = SIZES[size]["width"]
    page.goto(f"{live_server.url}/accounts/login/")
    pages = {"login": "/accounts/login/"}
    assert_fits(page, f"{role}-{width}-login", screenshot)
    page.fill("input[name=username]", role)
    page.fill("input[name=password]", "not the password")
    page.click("button[type=submit]")
    expect(page.locator("main .error")).to_be_visible()
    assert_fits(page, f"{role}-{width}-login-failed", screenshot)
    log_in(page, live_server, role)
    pages |= pages_of(role)
    violations = []
    for name, path in list(pages.items())[1:]:
        response = page.goto(f"{live_server.url}{path}")
        expected = {"400": 400, "404": 404, "403": 403}.get(name, 200)
        assert response.status == expected, (name, path, response.status)
        assert_fits(page, f"{role}-{width}-{name}", screenshot)
        violations += accessible_pages.check(page, EVERY_IMPACT, fresh=True)
    if role == "lead":  # a row opened in place: its whole text, its changes, its guard and Approve
        page.goto(f"{live_server.url}/inbox/")
        page.locator("tr.esc-row details.review-in-place summary").first.click()
        violations += accessible_pages.check(page, EVERY_IMPACT)
    assert violations == [], "axe-core found violations:\n" + "\n".join(violations)
    if size == "phone":
        # the tables are cards: a labelled line per value, the header row not drawn
        page.goto(f"{live_server.url}/runs/")
        assert page.locator("table.stack thead").evaluate("e => e.getBoundingClientRect().height") <= 1
        status = page.locator("table.stack tbody tr").first.locator("td[data-label=Status]")
        assert status.evaluate("e => getComputedStyle(e, '::before').content") == '"Status"'
        assert status.evaluate("e => e.getBoundingClientRect().width") > width * 0.8
        nav = page.locator("nav[aria-label=Main]")
        assert nav.evaluate("e => e.getBoundingClientRect().right") <= width


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("role", ["ops", "lead", "padmin"])
def test_the_keyboard_skips_to_the_content_and_every_focus_shows(page, live_server, people, demo_runs, role, size):
    page.set_viewport_size(SIZES[size])
    log_in(page, live_server, role)
    paths = ["/", "/runs/", f"/runs/{Run.objects.filter(audit__isnull=False).first().pk}/"]
    if role == "lead":
        paths += ["/inbox/", f"/escalations/{Escalation.objects.order_by('pk').first().pk}/"]
    for path in paths:
        page.goto(f"{live_server.url}{path}")
        page.keyboard.press("Tab")
        skip = page.locator(".skip-link")
        expect(skip).to_be_focused()
        box = skip.bounding_box()
        assert box["y"] >= 0 and box["x"] >= 0, f"the skip link is focused but off screen on {path}"
        page.keyboard.press("Enter")
        assert page.evaluate("() => document.activeElement.id") == "main"
        page.keyboard.press("Tab")  # the first control of the content, then on through the page
        seen = 0
        for _ in range(25):
            ring = page.evaluate(FOCUS_RING)
            if ring["body"] or (ring["skip"] and seen):  # the end of the page, or around again
                break
            assert ring["style"] != "none" and ring["width"] >= 2, f"no visible focus on {ring} at {path}"
            assert ring["contrast"] >= 3, f"the focus ring does not stand out: {ring} at {path}"
            seen += 1
            page.keyboard.press("Tab")
        assert seen >= 3, path
    # the top bar's links show a ring on the dark bar too
    page.goto(f"{live_server.url}/")
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    ring = page.evaluate(FOCUS_RING)
    assert ring["element"].startswith("a Gated review") and ring["contrast"] >= 3, ring


def test_the_axe_check_fails_on_a_serious_violation(page, live_server, users, accessible_pages):
    """The autouse check can fail: a grey-on-white line and an unnamed button are reported with the
    page and the element (then removed, so that this test's own pages pass)."""
    log_in(page, live_server, "ops")
    assert accessible_pages.check(page) == []
    page.evaluate("""() => {
      const p = document.createElement("p");
      p.id = "faint"; p.textContent = "hard to read"; p.style.color = "#ccc"; p.style.background = "#fff";
      const button = document.createElement("button");
      button.id = "unnamed";
      document.querySelector("main").append(p, button);
    }""")  # styled through the CSSOM, which the policy allows (a style attribute it would block)

    found = accessible_pages.check(page)

    assert any("serious color-contrast" in line and "#faint" in line for line in found), found
    assert any("critical button-name" in line and "#unnamed" in line for line in found), found
    assert all(line.startswith("/ at 1280px:") for line in found), found
    page.evaluate("() => document.querySelectorAll('#faint, #unnamed').forEach((e) => e.remove())")


def test_the_axe_check_fails_on_a_moderate_violation_too(page, live_server, users, accessible_pages):
    """A heading that skips levels (moderate) fails the check every browser test gets, and passes one that
    asks for critical and serious violations only."""
    log_in(page, live_server, "ops")
    page.evaluate("""() => {
      const heading = document.createElement("h5");
      heading.id = "skipped"; heading.textContent = "A heading four levels down";
      document.querySelector("main").append(heading);
    }""")

    assert accessible_pages.check(page, ("critical", "serious")) == []
    found = accessible_pages.check(page)

    assert any("moderate heading-order" in line and "#skipped" in line for line in found), found
    page.evaluate("() => document.querySelector('#skipped').remove()")


@pytest.mark.parametrize("size", SIZES)
def test_the_lockout_page_fits_and_passes_axe(page, live_server, users, screenshot, accessible_pages, size):
    """After too many failed logins (django-axes) the page that says so is checked like the others."""
    from axes.models import AccessAttempt
    from django.conf import settings

    page.set_viewport_size(SIZES[size])
    for _ in range(settings.AXES_FAILURE_LIMIT):
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("input[name=username]", "ops")
        page.fill("input[name=password]", "not the password")
        page.click("button[type=submit]")
    expect(page.locator("#lockout-message")).to_be_visible()
    assert_fits(page, f"anonymous-{SIZES[size]['width']}-locked-out", screenshot)
    assert accessible_pages.check(page) == []
    AccessAttempt.objects.all().delete()

"""The admin site in a browser, as a policy admin (not a superuser) meets it at 1366×900 and
390×844: the product's name and colours, the help under the emergency brake, one incident model,
the model endpoint limits. Screenshots in test-artifacts/ (admin-index-*.png, admin-policy-*.png,
admin-endpoint-limit-*.png)."""

import pytest
from playwright.sync_api import expect

from agents.models import PipelinePolicy
from tests.factories import PASSWORD
from tests.reviewer.test_access import make_policy_admin

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True),
              pytest.mark.usefixtures("no_csp_violation")]


@pytest.mark.parametrize("width, height", [(1366, 900), (390, 844)], ids=["1366", "390"])
def test_a_policy_admin_sees_the_branded_admin_and_the_brake_help(page, live_server, demo_data, screenshot,
                                                                  width, height):
    make_policy_admin("padmin")
    page.set_viewport_size({"width": width, "height": height})
    page.goto(f"{live_server.url}/admin/login/")
    expect(page).to_have_title("Log in | Gated review admin")
    page.fill("input[name=username]", "padmin")
    page.fill("input[name=password]", PASSWORD)
    page.click("input[type=submit]")

    expect(page.locator("#site-name")).to_have_text("Gated review admin")
    header = page.locator("#header").evaluate("e => getComputedStyle(e).backgroundColor")
    assert header == "rgb(24, 32, 51)"  # the product's top bar (#182033), not Django's
    expect(page.get_by_role("link", name="Incidents", exact=True)).to_be_visible()
    expect(page.get_by_text("Service incidents")).to_have_count(0)
    screenshot(page, f"admin-index-{width}")

    policy = PipelinePolicy.objects.get(pipeline="reflection", active=True)
    page.goto(f"{live_server.url}/admin/agents/pipelinepolicy/{policy.pk}/change/")
    brake_help = page.locator("#id_auto_revision_helptext")
    expect(brake_help).to_contain_text("goes to a person")
    brake_help.scroll_into_view_if_needed()
    screenshot(page, f"admin-policy-{width}")

    page.goto(f"{live_server.url}/admin/agents/endpointlimit/add/")
    expect(page.locator("#id_concurrency_helptext")).to_contain_text("A CPU llama.cpp server: 1.")
    screenshot(page, f"admin-endpoint-limit-{width}")


def test_a_policy_admin_adds_and_removes_fact_rows_in_the_incidents_table_of_facts(page, live_server, demo_data,
                                                                                   screenshot):
    """The admin's tabular inline (the product's own copy of Django's template, with named header
    cells): "Add another" adds a row from the hidden empty form, and the new row can be removed."""
    make_policy_admin("padmin")
    page.set_viewport_size({"width": 1366, "height": 900})
    page.goto(f"{live_server.url}/admin/login/")
    page.fill("input[name=username]", "padmin")
    page.fill("input[name=password]", PASSWORD)
    page.click("input[type=submit]")
    page.goto(f"{live_server.url}/admin/agents/incident/add/")
    group = page.locator(".js-inline-admin-formset .tabular")
    rows = group.locator("tbody tr.form-row:not(.empty-form)")
    before = rows.count()
    assert group.locator("tbody tr.empty-form").get_attribute("id").endswith("-empty")
    expect(group.locator("thead th.original")).to_have_text("Saved row")  # read out, not shown
    group.locator("tr.add-row a").click()
    expect(rows).to_have_count(before + 1)
    added = rows.nth(before)
    assert added.get_attribute("id").endswith(f"-{before}")
    screenshot(page, "admin-incident-facts-added")
    added.locator("a.inline-deletelink").click()
    expect(rows).to_have_count(before)

"""The policy lab in the admin: "Preview impact" on a change form shows what the form's values would do,
saves nothing, and a save of exactly those values keeps the preview's summary with the change."""

import re
from html import unescape

import pytest
from django.utils import timezone

from agents.core.llm.offline import OfflineModel
from agents.lab import MAX_PREVIEW_PATTERNS, LabInputError, one_preview_per_person, proposed_row
from agents.models import PipelinePolicy, PolicyChange, RestrictedClaim, RouteTarget, Run
from agents.tasks import run_now, start_run
from tests.agents.conftest import admin_url, form_data
from tests.factories import make_escalation, make_incident

REFUND = "Please refund my last payment, I was charged twice. user_id=42"


def routing_run(goal=REFUND) -> Run:
    run, _ = start_run(pipeline="routing", goal=goal, enqueue=False)
    run_now(run.pk, llm=OfflineModel())
    return run


def preview_post(client, model, obj=None, **changes):
    form_url = admin_url(model, "change", obj.pk) if obj else admin_url(model, "add")
    data = {**form_data(client.get(form_url)), **changes, "_preview": "Preview impact"}
    url = admin_url(model, "preview", obj.pk) if obj else admin_url(model, "preview_add")
    return client.post(url, data), data


def reposted(response) -> dict:
    """The hidden fields of the result page's "Save these values" form."""
    html = response.content.decode()
    form = html[html.index('class="lab-save"'):]
    form = form[:form.index("</form>")]
    return {unescape(name): unescape(value)
            for name, value in re.findall(r'<input type="hidden" name="([^"]*)" value="([^"]*)"', form)}


def test_the_change_form_offers_preview_impact_posting_to_the_preview(login, demo_data):
    client = login("admin")
    route = RouteTarget.objects.get(name="billing_specialist")
    html = client.get(admin_url("routetarget", "change", route.pk)).content.decode()
    assert 'value="Preview impact"' in html
    assert f'formaction="{admin_url("routetarget", "preview", route.pk)}"' in html
    assert 'name="lab-last"' in html and 'name="lab-since"' in html


def test_preview_shows_counts_and_flipped_runs_and_saves_nothing(login, demo_data):
    billing, other = routing_run(), routing_run("How much is the team plan?")
    client = login("admin")
    route = RouteTarget.objects.get(name="billing_specialist")
    response, _ = preview_post(client, "routetarget", route, allowed_policy="", allowed_execution="")
    html = response.content.decode()
    assert response.status_code == 200
    assert "1 of 2 runs would change (1 would stop, 0 would pass)" in html
    assert "would stop: invalid_route:route_not_allowed:billing_specialist" in html
    assert f'href="/runs/{billing.pk}/"' in html and f'href="/runs/{other.pk}/"' not in html
    assert "<del>" in html  # the answer the run would no longer give
    assert RouteTarget.objects.get(pk=route.pk).allowed_policy is True
    assert not PolicyChange.objects.exists()


def test_saving_the_previewed_values_records_the_preview_with_the_change(login, demo_data):
    routing_run()
    client = login("admin")
    route = RouteTarget.objects.get(name="billing_specialist")
    response, _ = preview_post(client, "routetarget", route, allowed_policy="", allowed_execution="")
    data = reposted(response)
    assert (data["name"], data.get("allowed_policy", ""), data.get("allowed_execution", "")) == (
        "billing_specialist", "", "")
    saved = client.post(admin_url("routetarget", "change", route.pk), {**data, "_save": "Save"})
    assert saved.status_code == 302
    assert RouteTarget.objects.get(pk=route.pk).allowed_policy is False
    change = PolicyChange.objects.get()
    assert change.preview["counts"]["would_stop"] == 1
    assert change.preview["headline"].startswith("1 of 1 run would change")
    page = client.get(admin_url("policychange", "change", change.pk)).content.decode()
    assert "Preview before saving" in page and change.preview["headline"] in page


def test_saving_other_values_than_previewed_records_no_preview(login, demo_data):
    routing_run()
    client = login("admin")
    route = RouteTarget.objects.get(name="billing_specialist")
    response, _ = preview_post(client, "routetarget", route, allowed_policy="", allowed_execution="")
    data = {**reposted(response), "description": "Refunds only."}
    client.post(admin_url("routetarget", "change", route.pk), {**data, "_save": "Save"})
    assert PolicyChange.objects.get().preview is None


def test_a_new_claim_family_is_previewed_from_the_add_form_and_its_findings_escaped(login, users, demo_data):
    incident = make_incident()
    text = "Our R&D engineers are investigating a problem in the EU. Current status: degraded."
    escalation = make_escalation(incident=incident, text=text)
    escalation.status, escalation.final_text = "approved", text
    escalation.decided_by, escalation.decided_at = users.lead, timezone.now()
    escalation.save()
    client = login("admin")
    response, _ = preview_post(client, "restrictedclaim", family="engineering staff", pattern=r"\bR&D\s+engineers\b",
                               kind="restricted_claims", support="evidence", hedging="negation", enabled="on")
    html = response.content.decode()
    assert response.status_code == 200
    assert "blocked 1 text people approved" in html
    assert "against the decision:" in html and f'href="/escalations/{escalation.pk}/"' in html
    assert "R&D engineers" not in html and "R&amp;D engineers" in html
    assert not RestrictedClaim.objects.filter(family="engineering staff").exists()


def test_values_the_form_refuses_are_listed_and_nothing_is_replayed(login, demo_data):
    client = login("admin")
    policy = PipelinePolicy.objects.get(pipeline="reflection", active=True)
    response, _ = preview_post(client, "pipelinepolicy", policy, max_answer_chars="5", **{
        "lab-since": "2026-05-02", "lab-until": "2026-05-01"})
    html = response.content.decode()
    assert "cannot be previewed" in html
    assert "Must be between 50 and 20000" in html
    assert "must be before “Created before” (2026-05-01)" in html


def test_people_who_may_not_change_policies_cannot_preview(login, demo_data):
    client = login("lead")
    route = RouteTarget.objects.get(name="billing_specialist")
    response = client.post(admin_url("routetarget", "preview", route.pk), {"name": "x"})
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
    reloaded = login("admin").get(admin_url("routetarget", "preview", route.pk))
    assert (reloaded.status_code, reloaded["Location"]) == (302, admin_url("routetarget", "change", route.pk))


CLAIM = {"family": "back to normal", "pattern": r"\bback\s+to\s+normal\b", "kind": "restricted_claims",
         "support": "evidence", "hedging": "any", "enabled": "on"}


def test_a_pattern_list_longer_than_a_preview_takes_is_a_form_error_and_nothing_is_replayed(login, demo_data):
    routing_run()
    many = "\n".join(rf"\bback\s+to\s+normal{n}\b" for n in range(MAX_PREVIEW_PATTERNS + 1))
    response, _ = preview_post(login("admin"), "restrictedclaim", **CLAIM, paraphrases=many)
    html = " ".join(unescape(response.content.decode()).split())
    assert f"{MAX_PREVIEW_PATTERNS + 1} patterns: a preview takes at most {MAX_PREVIEW_PATTERNS} in one list" in html
    assert "would change" not in html
    with pytest.raises(LabInputError, match="paraphrases: 201 patterns"):
        proposed_row("claim", None, {**CLAIM, "paraphrases": many})


def test_a_preview_over_its_processor_budget_stops_with_a_message(login, demo_data, settings):
    routing_run()
    settings.POLICY_LAB_CPU_SECONDS = 0  # any processor time at all is over it
    route = RouteTarget.objects.get(name="billing_specialist")
    response, _ = preview_post(login("admin"), "routetarget", route, allowed_policy="", allowed_execution="")
    html = " ".join(unescape(response.content.decode()).split())
    assert "The preview stopped after 0 of 1 runs: it used more than 0 s of processor time" in html
    assert "would change" not in html


def test_a_second_preview_of_the_same_person_at_once_is_refused(login, users, demo_data):
    routing_run()
    client = login("admin")
    route = RouteTarget.objects.get(name="billing_specialist")
    with one_preview_per_person(users.admin.pk):  # the first one, still running
        refused, _ = preview_post(client, "routetarget", route, allowed_policy="", allowed_execution="")
        with one_preview_per_person(users.lead.pk):  # another person's preview is theirs
            pass
    html = unescape(refused.content.decode())
    assert "You have a preview running already" in html and "would change" not in html
    again, _ = preview_post(client, "routetarget", route, allowed_policy="", allowed_execution="")
    assert "1 of 1 run would change" in again.content.decode()  # the slot is free once the first ended


def test_back_on_the_form_after_a_preview_shows_the_previewed_values_until_discarded(login, demo_data):
    routing_run()
    client = login("admin")
    route = RouteTarget.objects.get(name="billing_specialist")
    change_url = admin_url("routetarget", "change", route.pk)
    preview_post(client, "routetarget", route, allowed_policy="", allowed_execution="",
                 description="Billing, previewed.")
    back = client.get(change_url)  # the result page's link, or the browser's Back
    form = back.context["adminform"].form
    assert form["description"].value() == "Billing, previewed." and not form["allowed_policy"].value()
    assert "These are the values you last previewed; they are not saved yet." in back.content.decode()
    assert RouteTarget.objects.get(pk=route.pk).allowed_policy is True  # still nothing saved

    discarded = client.get(change_url + "?discard_preview=1")
    assert discarded.status_code == 302 and discarded["Location"] == change_url
    again = client.get(change_url)
    assert again.context["adminform"].form["description"].value() == route.description
    assert "not saved yet" not in again.content.decode()


def test_values_the_preview_refused_come_back_on_the_form_with_the_reason(login, demo_data):
    client = login("admin")
    policy = PipelinePolicy.objects.get(pipeline="reflection", active=True)
    refused, _ = preview_post(client, "pipelinepolicy", policy, max_answer_chars="-5")
    assert "The values cannot be previewed" in refused.content.decode()
    back = client.get(admin_url("pipelinepolicy", "change", policy.pk))
    form = back.context["adminform"].form
    assert form["max_answer_chars"].value() == "-5" and form.errors["max_answer_chars"]


def test_save_these_values_is_a_policy_change_in_the_history_and_the_ledger(login, demo_data):
    from reviewer.models import LedgerEntry

    routing_run()
    client = login("admin")
    route = RouteTarget.objects.get(name="billing_specialist")
    change_url = admin_url("routetarget", "change", route.pk)
    response, _ = preview_post(client, "routetarget", route, allowed_policy="", allowed_execution="")
    assert 'value="Save these values"' in response.content.decode()
    saved = client.post(change_url, {**reposted(response), "_save": "Save"})
    assert saved.status_code == 302
    change = PolicyChange.objects.get()
    assert change.preview is not None and change.after["allowed_policy"] is False
    assert LedgerEntry.objects.filter(kind="policy_change", subject=f"policy_change:{change.pk}").exists()
    assert "not saved yet" not in client.get(change_url).content.decode()  # saved: the form shows the row


def test_who_may_not_change_a_policy_may_neither_preview_nor_save_it(client, users, demo_data):
    from django.contrib.auth.models import Permission

    viewer = users.ops
    viewer.is_staff = True
    viewer.save()
    viewer.user_permissions.add(Permission.objects.get(codename="view_routetarget"))
    client.force_login(viewer)
    route = RouteTarget.objects.get(name="billing_specialist")
    data = {"name": route.name, "allowed_policy": "", "allowed_execution": "", "_preview": "Preview impact"}
    assert client.post(admin_url("routetarget", "preview", route.pk), data).status_code == 403
    assert client.post(admin_url("routetarget", "change", route.pk), {**data, "_save": "Save"}).status_code == 403
    assert RouteTarget.objects.get(pk=route.pk).allowed_policy is True and not PolicyChange.objects.exists()

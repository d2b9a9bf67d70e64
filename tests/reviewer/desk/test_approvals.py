"""Approvals by more than one person: reviewer.desk.approvals and decisions.decide under a quorum."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.urls import reverse

from agents.core.text import text_hash
from agents.testing.scripted_demo import CAVEAT
from reviewer.alerts import deadlines
from reviewer.desk import approvals, decisions
from reviewer.desk.approvals import ApprovalRefused
from reviewer.ledger import chain
from reviewer.models import Approval, ApprovalRule, Decision, Escalation, LedgerEntry
from reviewer.roles import SUPPORT_LEAD
from tests.factories import make_escalation, make_incident, make_run, make_user

EDITED = "We are investigating a problem in the EU. Current status: degraded. We will update you soon."


@pytest.fixture
def lead3(users):
    return make_user("lead3", group=SUPPORT_LEAD, first_name="Lotte")


@pytest.fixture
def two_of_three(users, lead3):
    """A pending escalation that needs two approvals from support leads (three leads exist)."""
    return make_escalation(incident=make_incident("inc_quorum_1", severity="P1"), required_approvals=2)


def approve(escalation, user, **kwargs):
    return decisions.decide(escalation.pk, user, "approve", **kwargs)


def fresh(escalation) -> Escalation:
    return Escalation.objects.get(pk=escalation.pk)


# -- which rule applies ----------------------------------------------------------------------------


def test_the_strictest_fitting_rule_applies_and_the_escalation_keeps_it(db):
    payments = Group.objects.create(name="Payments leads")
    ApprovalRule.objects.create(name="P1 needs two", severity="P1", required_approvals=2)
    strict = ApprovalRule.objects.create(name="Guard overrides need three", overrides_guard=True,
                                         required_approvals=3, group=payments)
    ApprovalRule.objects.create(name="Routing", pipeline="routing", required_approvals=5)
    run = make_run("reflection", incident=make_incident("inc_rule_1", severity="P1"))

    without_findings = approvals.approval_fields(run, "policy_escalation", {"violations": []})
    with_findings = approvals.approval_fields(run, "patch_violation:no_new_facts",
                                              {"violations": [{"check": "patch_violation:no_new_facts"}]})

    assert without_findings["required_approvals"] == 2 and without_findings["approval_group_id"] is None
    assert with_findings["required_approvals"] == 3 and with_findings["approval_rule"] == strict
    assert with_findings["approval_group_id"] == payments.pk
    assert with_findings["approval_rule_text"] == (
        f"“Guard overrides need three” (rule {strict.pk}): 3 approvals from Payments leads")


def test_a_stop_reason_ending_in_a_colon_matches_every_reason_it_starts(db):
    ApprovalRule.objects.create(name="Guard blocks", stop_reason="patch_violation:", required_approvals=2)
    run = make_run("reflection")

    assert approvals.approval_fields(run, "patch_violation:length_increase_limit", None)["required_approvals"] == 2
    assert approvals.approval_fields(run, "policy_escalation", None) == {}


def test_without_a_fitting_rule_one_approval_decides_as_before(users):
    escalation = make_escalation()

    outcome = approve(escalation, users.lead)

    assert outcome.won and outcome.decision is not None and outcome.approval is None
    assert fresh(escalation).status == "approved"
    assert not Approval.objects.exists()


def test_editing_a_rule_later_does_not_change_what_a_pending_escalation_needs(users):
    rule = ApprovalRule.objects.create(name="P1", severity="P1", required_approvals=2)
    run = make_run("reflection", incident=make_incident("inc_rule_2", severity="P1"))
    escalation = make_escalation(run=run, **approvals.approval_fields(run, "policy_escalation", None))
    rule.required_approvals = 1
    rule.save()

    approve(escalation, users.lead)

    assert fresh(escalation).status == "pending"
    assert fresh(escalation).required_approvals == 2


# -- 2 of M ----------------------------------------------------------------------------------------


def test_two_distinct_approvals_approve_the_text_and_the_second_records_the_decision(two_of_three, users):
    first = approve(two_of_three, users.lead)

    assert first.won and first.decision is None and first.approval.user == users.lead
    assert fresh(two_of_three).status == "pending"
    assert approvals.progress(fresh(two_of_three)) == "1 of 2 approvals"

    second = approve(two_of_three, users.lead2)

    decided = fresh(two_of_three)
    assert second.won and second.decision is not None
    assert (decided.status, decided.decided_by, decided.final_text) == ("approved", users.lead2, decided.candidate)
    assert Decision.objects.filter(escalation=two_of_three, action="approve").count() == 1
    assert list(Approval.objects.filter(escalation=two_of_three).values_list("user__username", flat=True)) == [
        "lead", "lead2"]


def test_nobody_approves_the_same_text_twice(two_of_three, users):
    approve(two_of_three, users.lead)

    with pytest.raises(ApprovalRefused, match="You already approved this text at .*1 more approval from other") as e:
        approve(two_of_three, users.lead)

    assert e.value.status == 409
    assert Approval.objects.count() == 1 and fresh(two_of_three).status == "pending"


def test_the_editor_cannot_approve_the_text_they_wrote(two_of_three, users, lead3):
    edit = decisions.decide(two_of_three.pk, users.lead, "edit_approve", text=EDITED)

    assert edit.won and edit.decision.action == "edit" and fresh(two_of_three).status == "pending"
    assert fresh(two_of_three).candidate == EDITED and fresh(two_of_three).text_by == users.lead
    with pytest.raises(ApprovalRefused, match="You wrote this version of the text") as e:
        approve(two_of_three, users.lead)
    assert e.value.status == 403

    approve(two_of_three, users.lead2)
    approve(two_of_three, lead3)

    decided = fresh(two_of_three)
    assert decided.status == "approved" and decided.final_text == EDITED
    assert Decision.objects.get(escalation=two_of_three, action="approve").text_hash == text_hash(EDITED)


def test_an_edit_resets_the_approvals_which_stay_in_the_history_as_superseded(two_of_three, users, lead3):
    approve(two_of_three, users.lead2)

    decisions.decide(two_of_three.pk, users.lead, "edit_approve", text=EDITED)

    escalation = fresh(two_of_three)
    assert escalation.approvals_so_far == 0 and escalation.text_version == 2
    old = Approval.objects.get(user=users.lead2)
    assert old.superseded_at is not None and old.superseded_because == "edited"
    # The approval given before the edit does not carry over: lead2 approves the new text again.
    approve(two_of_three, users.lead2)
    assert fresh(two_of_three).status == "pending"
    approve(two_of_three, lead3)
    assert fresh(two_of_three).status == "approved"
    kinds = list(LedgerEntry.objects.values_list("kind", flat=True))
    assert kinds == ["approval", "decision", "approvals_reset", "approval", "approval", "decision"]


def test_requesting_changes_resets_the_approvals_and_the_requester_cannot_approve_the_revision(
        demo_runs, users, lead3, scripted_tools):
    escalation = Escalation.objects.get(stop_reason="policy_escalation")
    Escalation.objects.filter(pk=escalation.pk).update(required_approvals=2)
    approve(escalation, users.lead2)

    change = decisions.request_changes(escalation.pk, users.lead, f'Add "{CAVEAT}" at the end.', enqueue=False)

    assert fresh(escalation).approvals_so_far == 0
    assert Approval.objects.get().superseded_because == "changes requested"
    approve(escalation, lead3)  # an approval of the text while the model revises it
    scripted_tools.answer("submit_revision", {"revised_answer": f"{escalation.candidate} {CAVEAT}"})
    assert decisions.make_requested_changes(change.pk, llm=scripted_tools.llm).ok

    revised = fresh(escalation)
    assert revised.candidate.endswith(CAVEAT) and revised.text_by == users.lead and revised.text_version == 3
    assert revised.approvals_so_far == 0  # lead3 approved the text before the revision
    with pytest.raises(ApprovalRefused, match="the revision you requested"):
        approve(escalation, users.lead)
    approve(escalation, users.lead2)
    approve(escalation, lead3)
    assert fresh(escalation).status == "approved" and fresh(escalation).final_text.endswith(CAVEAT)


def test_one_rejection_ends_it_whatever_the_approvals(two_of_three, users, lead3):
    approve(two_of_three, users.lead)

    outcome = decisions.decide(two_of_three.pk, users.lead2, "reject", note="Wrong region.")

    assert outcome.won and fresh(two_of_three).status == "rejected"
    late = approve(two_of_three, lead3)
    assert not late.won and fresh(two_of_three).status == "rejected"
    assert Approval.objects.count() == 1


def test_only_members_of_the_required_group_count(users):
    payments = Group.objects.create(name="Payments leads")
    users.lead2.groups.add(payments)
    escalation = make_escalation(required_approvals=2, approval_group=payments)

    with pytest.raises(ApprovalRefused, match="Only members of “Payments leads” can approve"):
        approve(escalation, users.lead)
    approve(escalation, users.lead2)

    assert approvals.progress(fresh(escalation)) == "1 of 2 approvals"


def test_under_a_rule_only_its_group_rejects_on_every_door(users, login, api):
    payments = Group.objects.create(name="Payments leads")
    users.lead2.groups.add(payments)
    escalation = make_escalation(required_approvals=2, approval_group=payments)

    with pytest.raises(ApprovalRefused, match="Only members of “Payments leads” can reject this escalation"):
        decisions.decide(escalation.pk, users.lead, "reject", note="Wrong incident.")
    page = login("lead").post(reverse("escalation_decide", args=[escalation.pk]),
                              {"action": "reject", "note": "Wrong incident.", "from": "panel"})
    answer = api("lead").post(f"/escalations/{escalation.pk}/decision", {"action": "reject", "note": "Wrong."})

    assert page.status_code == 422 and "can reject this escalation; you are not one" in page.content.decode()
    assert answer.status_code == 403 and "Payments leads" in answer.json()["message"]
    assert fresh(escalation).status == "pending" and not Decision.objects.exists()
    assert decisions.decide(escalation.pk, users.lead2, "reject", note="Wrong incident.").won


def test_a_rule_of_one_approval_from_a_group_is_decided_by_that_group_only(users):
    payments = Group.objects.create(name="Payments leads")
    users.lead2.groups.add(payments)
    escalation = make_escalation(required_approvals=1, approval_group=payments)

    with pytest.raises(ApprovalRefused, match="can approve this escalation"):
        approve(escalation, users.lead)
    with pytest.raises(ApprovalRefused, match="can reject this escalation"):
        decisions.decide(escalation.pk, users.lead, "reject", note="Wrong incident.")

    assert approve(escalation, users.lead2).won and fresh(escalation).status == "approved"


def test_without_a_rule_any_lead_rejects(users):
    escalation = make_escalation()

    assert decisions.decide(escalation.pk, users.lead, "reject", note="Wrong incident.").won


def test_an_approval_of_a_text_that_changed_since_it_was_read_is_refused(two_of_three, users):
    decisions.decide(two_of_three.pk, users.lead, "edit_approve", text=EDITED)

    with pytest.raises(ApprovalRefused, match="The text changed since you read it") as e:
        approve(two_of_three, users.lead2, text_version=1)

    assert e.value.status == 409 and not Approval.objects.exists()


def test_each_approval_and_each_reset_enters_the_ledger(two_of_three, users):
    approve(two_of_three, users.lead)
    decisions.request_changes(two_of_three.pk, users.lead2, "Shorter, please.", enqueue=False)

    approval_entry = LedgerEntry.objects.get(kind="approval")
    reset_entry = LedgerEntry.objects.get(kind="approvals_reset")
    assert '"counted":1' in approval_entry.content and '"required":2' in approval_entry.content
    assert '"actor":"lead"' in approval_entry.content
    assert '"because":"changes requested"' in reset_entry.content and '"by":"lead2"' in reset_entry.content
    verdict = chain.verify()
    assert verdict.ok and verdict.count == 3, verdict.message  # the approval, the request, the reset


def test_a_deadline_breach_reminds_and_breaches_but_never_approves(two_of_three, users):
    Escalation.objects.filter(pk=two_of_three.pk).update(deadline_at=two_of_three.opened_at + timedelta(minutes=10),
                                                         remind_at=two_of_three.opened_at + timedelta(minutes=5))
    approve(two_of_three, users.lead)

    counts = deadlines.sweep(now=two_of_three.opened_at + timedelta(minutes=11))

    escalation = fresh(two_of_three)
    assert counts["breach"] == 1 and escalation.breached_at is not None
    assert escalation.status == "pending" and escalation.decided_by is None
    assert approvals.progress(escalation) == "1 of 2 approvals"
    assert not Decision.objects.filter(escalation=two_of_three).exists()


# -- the desk ----------------------------------------------------------------------------------------


def test_the_inbox_shows_the_approvals_so_far_and_what_the_lead_s_click_does(two_of_three, users, login):
    approve(two_of_three, users.lead2)

    page = " ".join(login("lead").get(reverse("inbox")).content.decode().split())

    assert "<strong>1 of 2 approvals</strong>" in page
    assert "Approve (2 of 2)" in page


def test_approving_on_the_page_says_what_it_counted_and_who_approved_when(two_of_three, users, login):
    client = login("lead")

    response = client.post(reverse("escalation_decide", args=[two_of_three.pk]),
                           {"action": "approve", "from": "panel", "text_version": "1"}, follow=True)

    page = " ".join(response.content.decode().split())
    assert "Your approval counts: 1 of 2 approvals. It needs 1 more approval from members of “Support leads”." in page
    assert "<strong>Lena</strong> approved text version 1" in page
    assert fresh(two_of_three).status == "pending"


def test_a_refused_self_approval_says_why_on_the_page(two_of_three, users, login):
    decisions.decide(two_of_three.pk, users.lead, "edit_approve", text=EDITED)

    response = login("lead").post(reverse("escalation_decide", args=[two_of_three.pk]),
                                  {"action": "approve", "from": "panel", "text_version": "2"}, HTTP_HX_REQUEST="true")

    assert response.status_code == 422
    page = " ".join(response.content.decode().split())
    assert "You wrote this version of the text (your edit, or the revision you requested), so your approval cannot " \
           "count: 2 more approvals from other members of “Support leads” must approve it." in page
    assert not Approval.objects.exists()


# -- the rules in admin, and an escalation opened by a run ------------------------------------------


def test_a_policy_admin_adds_an_approval_rule_in_admin_and_a_lead_cannot(users, client):
    client.force_login(users.lead)
    assert client.get(reverse("admin:reviewer_approvalrule_add")).status_code in (302, 403)
    admin = make_user("padmin", group="Policy admins")
    admin.is_staff = True
    admin.save()
    client.force_login(admin)

    response = client.post(reverse("admin:reviewer_approvalrule_add"), {
        "name": "P1 needs two", "pipeline": "", "severity": " p1 ", "stop_reason": "", "required_approvals": "2",
        "group": ""})

    assert response.status_code == 302, response.content.decode()[:2000]
    assert ApprovalRule.objects.get().severity == "P1"
    refused = client.post(reverse("admin:reviewer_approvalrule_add"), {
        "name": "Too many", "required_approvals": "11", "group": ""})
    assert "Between 1 and 10 approvals." in refused.content.decode()


@pytest.fixture
def reviewer_rule(db):
    """A rule made before the demo runs open their escalations (pytest makes fixtures in argument order)."""
    return ApprovalRule.objects.create(name="Reviewer escalations need two", stop_reason="policy_escalation",
                                       required_approvals=2)


def test_an_escalation_a_run_opens_keeps_the_rule_that_fitted(reviewer_rule, demo_runs):
    escalation = Escalation.objects.get(stop_reason="policy_escalation")
    others = Escalation.objects.exclude(stop_reason="policy_escalation")

    assert escalation.required_approvals == 2 and escalation.approval_rule == reviewer_rule
    assert escalation.approval_rule_text.startswith(f"“Reviewer escalations need two” (rule {reviewer_rule.pk})")
    assert others.exists() and set(others.values_list("required_approvals", flat=True)) == {1}


def test_the_lead_who_requested_the_revision_is_refused_on_the_page_as_its_author(two_of_three, users, login,
                                                                                  scripted_tools):
    client = login("lead")
    client.post(reverse("escalation_request_changes", args=[two_of_three.pk]),
                {"instructions": f'Add "{CAVEAT}" at the end.'})
    change = two_of_three.change_requests.get()
    scripted_tools.answer("submit_revision", {"revised_answer": f"{two_of_three.candidate} {CAVEAT}"})
    assert decisions.make_requested_changes(change.pk, llm=scripted_tools.llm).ok

    response = client.post(reverse("escalation_decide", args=[two_of_three.pk]),
                           {"action": "approve", "from": "panel", "text_version": "3"}, HTTP_HX_REQUEST="true")

    assert response.status_code == 422
    page = " ".join(response.content.decode().split())
    assert "You wrote this version of the text (your edit, or the revision you requested), so your approval cannot " \
           "count: 2 more approvals from other members of “Support leads” must approve it." in page
    assert not Approval.objects.filter(superseded_at__isnull=True).exists()
    assert fresh(two_of_three).status == "pending"

"""The policy lab (agents/lab.py): a proposed change replayed over stored runs and judged against the
texts people decided, before anything is saved."""

import pytest
from django.utils import timezone

from agents.core.llm.offline import OfflineModel
from agents.core.replay import DIVERGED, UNCHANGED, WOULD_STOP
from agents.lab import preview
from agents.models import ModelCall, PipelinePolicy, RestrictedClaim, RouteTarget, Run, TraceStep
from agents.tasks import run_now, start_run
from agents.testing.scripted_demo import APPROVE, DRAFT
from agents.testing.scripted_server import status
from reviewer.models import Escalation
from tests.factories import make_escalation, make_incident

TICKETS = (
    "Please refund my last payment, I was charged twice. user_id=42",
    "Refund please, user_id=7",
    "The public API is slow and returns errors, INC-4021.",
    "How much is the team plan?",
    "I want a discount on the pro plan.",
)


def routing_run(goal, llm=None) -> Run:
    run, _ = start_run(pipeline="routing", goal=goal, enqueue=False)
    run_now(run.pk, llm=llm or OfflineModel())
    run.refresh_from_db()
    return run


def routes_used(run: Run) -> set[str]:
    return {(step.output or {}).get("target") for step in TraceStep.objects.filter(run=run, phase="route")}


def engineering_claim() -> RestrictedClaim:
    claim = RestrictedClaim(family="engineering staff", kind="restricted_claims", pattern=r"\bengineers\b",
                            support="evidence", hedging="negation")
    claim.full_clean()
    return claim


def decide(escalation: Escalation, user, decision: str, text: str) -> Escalation:
    escalation.status, escalation.decided_by, escalation.decided_at = decision, user, timezone.now()
    escalation.final_text = text if decision == Escalation.Status.APPROVED else ""
    escalation.candidate = text
    escalation.save()
    return escalation


def test_removing_a_route_from_the_allowlist_flips_exactly_the_runs_that_used_it(demo_runs, scripted_tools):
    made = [routing_run(ticket) for ticket in TICKETS]
    # One run recorded through the real SDK against the scripted server: a tool call for the route.
    scripted_tools.answer("route", {"kind": "route", "target": "billing_specialist",
                                    "args": {"ticket": "refund user_id=42"}}).text("Anna, your refund is approved.")
    made.append(routing_run("refund user_id=42", llm=scripted_tools.llm))
    routing = Run.objects.filter(pipeline="routing")
    used = {run.pk for run in routing if "billing_specialist" in routes_used(run)}
    assert len(used) >= 3 and len(used) < routing.count()
    calls_before = ModelCall.objects.count()

    route = RouteTarget.objects.get(name="billing_specialist")
    route.allowed_policy = False
    report = preview(route)

    assert {flip.run_id for flip in report.flips} == used
    assert all(flip.replayed.verdict == WOULD_STOP for flip in report.flips)
    assert report.counts[UNCHANGED] == routing.count() - len(used)
    assert report.runs == routing.count() and report.pipelines == ("routing",)
    assert report.by_reason == {"would stop: invalid_route:route_not_allowed:billing_specialist": len(used)}
    # Nothing was saved or recorded.
    assert RouteTarget.objects.get(name="billing_specialist").allowed_policy is True
    assert ModelCall.objects.count() == calls_before
    assert report.summary()["counts"]["would_stop"] == len(used)


def test_a_restricted_claim_added_in_preview_flags_exactly_the_approved_texts_that_carry_it(demo_runs, users):
    incident = make_incident()
    carrying = "Our engineers are investigating a problem in the EU. Current status: degraded."
    plain = "We are investigating a problem in the EU. Current status: degraded."
    approved = [decide(make_escalation(incident=incident), users.lead, "approved", carrying),
                decide(make_escalation(incident=incident), users.lead2, "approved", carrying)]
    decide(make_escalation(incident=incident), users.lead, "approved", plain)
    rejected = decide(make_escalation(incident=incident), users.lead, "rejected", carrying)
    make_escalation(incident=incident, text=carrying)  # pending: not decided, not judged

    report = preview(engineering_claim())

    flagged = {f.decided.label for f in report.text_flips if f.decided.decision == "approved"}
    assert flagged == {f"escalation {e.pk}" for e in approved}
    assert [f.decided.label for f in report.contradictions] == [f"escalation {e.pk}" for e in
                                                                 sorted(approved, key=lambda e: -e.pk)]
    assert all(not f.passes_proposed and f.violations for f in report.contradictions)
    # The rejected text is blocked too, as the lead decided: listed after the contradictions.
    assert report.text_flips[-1].decided.label == f"escalation {rejected.pk}"
    assert not report.text_flips[-1].contradicts
    assert report.texts_judged == 4
    assert "blocked 2 texts people approved and passed 0 they rejected" in report.headline()
    # Among the stored runs, the gate-passed ones whose answer says it now stop; the others do not change.
    passed = Run.objects.filter(pipeline__in=("reflection", "self_critique"), status="ok")
    carrying_runs = {run.pk for run in passed if "engineers" in run.answer}
    assert carrying_runs
    flipped_passed = {f.run_id for f in report.flips if f.replayed.before.stop_reason == "success"}
    assert flipped_passed == carrying_runs
    assert not RestrictedClaim.objects.filter(family="engineering staff").exists()


def test_a_change_that_needs_an_unrecorded_model_answer_is_diverged_never_guessed(demo_runs):
    policy = PipelinePolicy.objects.get(pipeline="self_critique", active=True)
    policy.max_draft_chars = 60  # every stored draft is longer: self-critique would ask to shorten it
    report = preview(policy)

    drafted = Run.objects.filter(pipeline="self_critique", steps__phase="draft").distinct().count()
    assert drafted and report.counts[DIVERGED] == drafted
    assert all("(shorten, attempt 1)" in flip.replayed.note for flip in report.diverged)
    assert all(flip.replayed.after is None for flip in report.diverged)
    assert not report.flips
    assert PipelinePolicy.objects.get(pk=policy.pk).max_draft_chars != 60


def test_a_replay_sends_no_request_to_the_model_endpoint(demo_data, fake_openai, scripted_tools, monkeypatch):
    scripted_tools.answer("submit_draft", {"draft": DRAFT}).answer("reflect", APPROVE)
    run, _ = start_run(pipeline="reflection", goal="Update", incident=demo_data["inc_pay_2041"], enqueue=False)
    run_now(run.pk, llm=scripted_tools.llm)
    run.refresh_from_db()
    assert run.stop_reason == "success" and fake_openai.requests
    # From here on the endpoint fails any request, and every configured client would reach it.
    fake_openai.requests.clear()
    fake_openai.responder = lambda body: status(500)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-lab-test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)

    policy = PipelinePolicy.objects.get(pipeline="reflection", active=True)
    policy.max_answer_chars = 80
    budget = preview(policy)
    claim = preview(RestrictedClaim(family="team", kind="restricted_claims", pattern=r"\bour\s+team\b"))

    assert [f.run_id for f in budget.flips] == [run.pk]
    assert budget.flips[0].replayed.after.stop_reason.endswith("too_long")
    assert [f.run_id for f in claim.flips] == [run.pk]
    assert fake_openai.requests == []


@pytest.mark.parametrize("window", ["last", "dates"])
def test_the_runs_replayed_are_the_newest_or_those_of_a_date_range(demo_data, window):
    runs = [routing_run(ticket) for ticket in TICKETS[:3]]
    old = runs[0]
    Run.objects.filter(pk=old.pk).update(created_at=timezone.now() - timezone.timedelta(days=10))
    route = RouteTarget.objects.get(name="billing_specialist")
    route.allowed_policy = False
    if window == "last":
        report = preview(route, last=2)
    else:
        report = preview(route, since=timezone.now() - timezone.timedelta(days=1))
    assert report.runs == 2
    assert old.pk not in {f.run_id for f in report.flips}
    if window == "last":
        assert report.window == "the newest 2 stored runs"
    else:  # every run of the range, fewer than the 1,000 a preview replays at most
        assert report.window.startswith("the 2 stored runs from ")


def test_the_window_says_how_many_runs_there_were_when_fewer_than_asked(demo_data):
    route = RouteTarget.objects.get(name="billing_specialist")
    route.allowed_policy = False
    assert preview(route, last=5).window == "no stored runs"
    routing_run(TICKETS[0])
    assert preview(route, last=5).window == "the only stored run"
    routing_run(TICKETS[1])
    assert preview(route, last=5).window == "the 2 stored runs"
    assert preview(route, last=2).window == "the newest 2 stored runs"


def test_a_run_under_an_older_policy_is_judged_by_the_change_alone(demo_data):
    run = routing_run(TICKETS[0])
    assert run.selected_route == "billing_specialist"
    # Since the run, an admin made the sales route unavailable: that change is not the proposal's.
    RouteTarget.objects.filter(name="sales_specialist").update(allowed_policy=False)
    route = RouteTarget.objects.get(name="technical_specialist")
    route.description = "Errors, bugs, incidents and API problems."
    report = preview(route)
    assert report.counts[UNCHANGED] == 1


def test_scripted_routing_answers_in_either_output_mode_are_replayed(demo_data, scripted):
    PipelinePolicy.objects.filter(pipeline="routing").update(structured_output=scripted.mode)
    scripted.answer("route", {"kind": "route", "target": "sales_specialist", "args": {"ticket": "team plan?"}})
    scripted.text("The team plan costs 199.00 USD a month.")
    run = routing_run("team plan?", llm=scripted.llm)
    assert run.selected_route == "sales_specialist"
    route = RouteTarget.objects.get(name="sales_specialist")
    route.allowed_execution = False
    report = preview(route)
    assert [f.run_id for f in report.flips] == [run.pk]
    assert report.flips[0].replayed.after.stop_reason == "route_denied:sales_specialist"
    assert report.flips[0].diff[0] == ("delete", "The team plan costs 199.00 USD a month.")



def test_switching_a_claim_family_off_lists_the_rejected_texts_it_would_pass_first(demo_data, users):
    # The family alone decides here: with grounding on, "guarantee" would stop on its own as well.
    PipelinePolicy.objects.update(grounding=False)
    incident = make_incident()
    promise = "We guarantee a fix for the problem in the EU. Current status: degraded."
    rejected = decide(make_escalation(incident=incident), users.lead, "rejected", promise)
    approved = decide(make_escalation(incident=incident), users.lead2, "approved", promise)  # overrode the guard
    guarantees = RestrictedClaim.objects.get(family="guarantees")
    guarantees.enabled = False

    report = preview(guarantees)

    assert [(f.decided.label, f.contradicts, f.passes_proposed) for f in report.text_flips] == [
        (f"escalation {rejected.pk}", True, True),  # a lead rejected it; the change would let it pass
        (f"escalation {approved.pk}", False, True),  # a lead approved it over the guard: the change agrees
    ]
    assert report.text_flips[0].sentence == "passes a text lead rejected"
    assert "blocked 0 texts people approved and passed 1 they rejected" in report.headline()

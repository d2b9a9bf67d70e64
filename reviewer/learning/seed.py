"""A seeded history of decisions (``manage.py seed_decisions``): real runs of the reflection pipeline on
the demo incidents, with a scripted model whose drafts carry what leads meet every day, so every
finding is the guard's own; then the leads' decisions through the desk's own actions (approvals
despite findings with justifications, edits, rejections, requests for changes). Deterministic: one
seeded random generator decides who decides what. The demo's incidents must be loaded first
(``reviewer.demo.seed.load_incidents``: the command does it). The learning loop's tests, its benchmark and the
demo read it (docs/learning-loop.md)."""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from agents.core.llm.base import CallRecord, ModelReply, StageRequest
from agents.core.llm.offline import draft_from_context
from agents.incidents import update_incident
from agents.models import Incident, Run
from agents.tasks import run_now, start_run
from reviewer.desk import decisions
from reviewer.models import Decision, Escalation
from reviewer.roles import SUPPORT_LEAD

LEADS = [("maria", "Maria"), ("tomas", "Tomás"), ("aiko", "Aiko"), ("kwame", "Kwame"), ("noor", "Noor")]
INCIDENTS = ("inc_pay_2041", "inc_api_4021", "inc_region_eu_3")
GOAL = "Write the customer update for this incident."
APPROVE = {"decision": "approve", "issues": [], "fix_plan": [], "reason": "Accurate.", "quality": "good",
           "completeness": "complete"}


@dataclass(frozen=True)
class Scenario:
    """What a draft adds to the incident's plain update, and how leads usually decide it."""

    name: str
    weight: int
    added: tuple[str, ...]


PLAN = "Engineers plan to restore service within the hour."
CLOCK = "Our engineers are working around the clock."
ASSURED = "Rest assured, our engineers are on it."
PRIORITY = "This is our highest priority."
SUBSET = "The issue is limited to a subset of transactions."
SAFE = "Your data is safe."
FINE = "Everything is fine on our side."
SERIOUSLY = "We take this seriously."
SCENARIOS = (
    Scenario("plan", 30, (PLAN,)),
    Scenario("clock", 20, (CLOCK,)),
    Scenario("assured", 12, (ASSURED, PRIORITY)),
    Scenario("seriously", 10, (ASSURED, SERIOUSLY)),
    Scenario("subset", 15, (SAFE, SUBSET)),
    Scenario("fine", 8, (FINE,)),
    Scenario("passes", 7, (PRIORITY,)),  # passes every check: no escalation, nobody reads it
)
PLAN_JUSTIFICATIONS = ("The time is the engineers' plan, worded as a plan, not a promise.",
                       "Worded as a plan from engineering; customers read it as an estimate.",
                       "It says what engineers plan, which is what we know now.",
                       "A plan, not a commitment: fine to publish.")
CLOCK_JUSTIFICATIONS = ("Ordinary wording: around the clock promises nothing.",
                        "Plain status-page language, nothing to support.",
                        "Fine: it only says the team is working on it.")


class ScriptedWriter:
    """The scripted model of the seeded runs: it drafts the text it is given and approves it on review."""

    label = "scripted model (seeded history)"
    endpoint = "scripted"

    def __init__(self, draft: str):
        self.draft = draft

    def complete(self, request: StageRequest) -> ModelReply:
        payload = {"draft": self.draft} if request.stage == "draft" else APPROVE
        if request.stage == "revise":
            payload = {"revised_answer": self.draft}
        text = json.dumps(payload)
        record = CallRecord(stage=request.stage, attempt=request.attempt, try_number=1, model=self.label,
                            latency_ms=1.0, prompt_tokens=len(request.user) // 4, completion_tokens=len(text) // 4,
                            raw=text, messages=({"role": "system", "content": request.system},
                                                {"role": "user", "content": request.user}))
        return ModelReply(text=text, via_tool=request.tool is not None, prompt_tokens=record.prompt_tokens,
                          completion_tokens=record.completion_tokens, calls=(record,))


def ensure_leads() -> list:
    """The seeded history's support leads (made once, with no password to sign in with)."""
    group = Group.objects.get(name=SUPPORT_LEAD)
    leads = []
    for username, first_name in LEADS:
        user, created = get_user_model().objects.get_or_create(username=username, defaults={"first_name": first_name})
        if created:
            user.set_unusable_password()
            user.save()
        user.groups.add(group)
        leads.append(user)
    return leads


def _without(text: str, *sentences: str) -> str:
    for sentence in sentences:
        text = text.replace(" " + sentence, "").replace(sentence + " ", "").replace(sentence, "")
    return text.strip()


def _decide(escalation: Escalation, lead, leads, action: str, *, text: str = "", note: str = "") -> None:
    """One lead's decision, completed by the others where an approval rule asks for more than one."""
    outcome = decisions.decide(escalation.pk, lead, action, text=text, note=note, confirm_changed_facts=True)
    others = [other for other in leads if other.pk != lead.pk]
    while outcome.won and outcome.decision is None or (outcome.decision is not None
                                                       and outcome.decision.action == Decision.Action.EDIT):
        if not others:
            return
        outcome = decisions.decide(escalation.pk, others.pop(0), Decision.Action.APPROVE, note=note,
                                   confirm_changed_facts=True)


def _choose(rng: random.Random, scenario: str, leads) -> tuple[object, str, str, str]:
    """Who decides an escalation of ``scenario``, and how: (lead, action, how the text changes, note)."""
    lead = rng.choice(leads)
    roll = rng.random()
    if scenario == "plan":
        if roll < 0.7:
            return lead, "approve", "", rng.choice(PLAN_JUSTIFICATIONS)
        if roll < 0.85:
            return leads[0], "reject", "", "No times to customers before engineering confirms one."
        return lead, "edit_approve", "plan", "Removed the time."
    if scenario == "clock":
        return (lead, "approve", "", rng.choice(CLOCK_JUSTIFICATIONS)) if roll < 0.85 else \
            (lead, "edit_approve", "clock", "Shorter.")
    if scenario == "seriously":
        return lead, "edit_approve", "seriously", "Removed the boilerplate."
    if scenario == "assured":
        if roll < 0.2:
            return lead, "request_changes", "assured", "Remove the reassurance and the priority line."
        return lead, "edit_approve", "assured", "Removed the reassurance."
    if scenario == "subset":
        if roll < 0.3:
            return lead, "reject", "", "We cannot tell customers their data is safe."
        return lead, "edit_approve", "subset", "Removed what we cannot say."
    return lead, "reject", "", "The incident is not fine."


EDITS = {"plan": (PLAN,), "clock": (CLOCK,), "assured": (ASSURED, PRIORITY), "seriously": (ASSURED, SERIOUSLY),
         "subset": (SAFE, SUBSET)}


def seed(count: int = 200, *, seed_value: int = 33, correct: bool = True) -> dict:
    """About ``count`` runs with their decisions (the runs that pass every check are decided by nobody).
    Returns what was made: runs, escalations decided, decisions, seconds."""
    started = time.perf_counter()
    if Incident.objects.filter(incident_id__in=INCIDENTS).count() != len(INCIDENTS):
        raise ValueError(f"the seeded history runs on the demo incidents {', '.join(INCIDENTS)}: load them first "
                         "(reviewer.demo.seed.load_incidents; manage.py seed_decisions does)")
    leads = ensure_leads()
    rng = random.Random(seed_value)
    incidents = list(Incident.objects.filter(incident_id__in=INCIDENTS).order_by("incident_id"))
    # The incident's plain opening: what is happening and its impact, in the offline model's words.
    plain = {i.pk: ". ".join(draft_from_context(GOAL, i.context()).split(". ")[:2]).rstrip(".") + "."
             for i in incidents}
    names, weights = [s.name for s in SCENARIOS], [s.weight for s in SCENARIOS]
    added = {s.name: s.added for s in SCENARIOS}
    made = {"runs": 0, "escalations": 0, "decisions": 0}
    first_decision = Decision.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    for _ in range(count):
        incident = rng.choice(incidents)
        scenario = rng.choices(names, weights)[0]
        draft = " ".join([plain[incident.pk], *added[scenario]])
        run, _ = start_run(pipeline="reflection", goal=GOAL, incident=incident, enqueue=False)
        run_now(run.pk, llm=ScriptedWriter(draft))
        made["runs"] += 1
        escalation = Escalation.objects.filter(run=run).first()
        if escalation is None:
            continue
        lead, action, edit, note = _choose(rng, scenario, leads)
        edited = _without(escalation.candidate, *EDITS.get(edit, ()))
        if action == "request_changes":
            change = decisions.request_changes(escalation.pk, lead, note, enqueue=False)
            decisions.make_requested_changes(change.pk, llm=ScriptedWriter(edited))
            escalation.refresh_from_db()
            _decide(escalation, rng.choice(leads), leads, "approve", note="As revised.")
        elif action == "edit_approve":
            _decide(escalation, lead, leads, action, text=edited, note=note)
        else:
            _decide(escalation, lead, leads, action, note=note)
        made["escalations"] += 1
    made["decisions"] = Decision.objects.filter(pk__gt=first_decision).count()
    if correct:
        _correct_a_fact()
    made["seconds"] = round(time.perf_counter() - started, 2)
    return made


def _correct_a_fact() -> None:
    """A correcting update: the API incident's latency was misreported, and its fact is corrected, so
    approved texts that quoted the old value are contradicted (the scorecard's second kind of miss)."""
    incident = Incident.objects.get(incident_id="inc_api_4021")
    fact = incident.fact_rows.filter(key="p95_latency_ms").first()
    if fact is not None and fact.value == "1800":
        update_incident(incident, upsert_facts=[{"key": "p95_latency_ms", "value": "2400"}])


def runs_seeded() -> int:
    return Run.objects.filter(goal=GOAL).count()

"""Claims checked against the incident: its state, who is affected, money and blame, customers' data,
time, places and days. Each unsafe text has a safe twin that must pass, on incidents of several kinds
(sign-in, webhooks, exports, API latency, maintenance)."""

from __future__ import annotations

import pytest

from agents.core.guard import GuardConfig, check_final_answer, check_revision
from agents.core.phrases import PhraseRules
from agents.core.policy import GuardRules

# The named checks alone: grounding (every other word) has its own tests in test_grounding.py.
RULES = GuardRules(vocabulary=None)


def incident(kind: str, *, state: str, region: str = "EU", facts: dict | None = None, **extra) -> dict:
    """A run context the way Incident.context() builds it: identity, state, facts with units."""
    facts = facts or {}
    return {
        "report_date": "2026-11-24",
        "region": region,
        "incident": {"incident_id": f"inc_{kind}_7", "title": TITLES[kind], "severity": "P2", "state": state,
                     **{key: value for key, (value, _unit, _label) in facts.items()}},
        "fact_meta": [{"key": key, "label": label, "unit": unit} for key, (_v, unit, label) in facts.items()],
        **extra,
    }


TITLES = {
    "login": "Sign-in failures for EU workspaces",
    "webhooks": "Delayed webhook deliveries",
    "exports": "CSV exports stuck in the queue",
    "latency": "Elevated API latency",
    "maintenance": "Database maintenance window",
}
LOGIN = incident("login", state="investigating", facts={"failed_sign_in_pct": (40, "%", "Failed sign-ins")})
LOGIN_RESOLVED = incident("login", state="resolved", facts={"failed_sign_in_pct": (40, "%", "Failed sign-ins")})
WEBHOOKS = incident("webhooks", state="identified", region="US",
                    facts={"delayed_share": (0.06, "ratio", "Deliveries delayed")})
EXPORTS = incident("exports", state="monitoring", facts={"stuck_exports": (120, "count", "Exports stuck")})
LATENCY = incident("latency", state="investigating", region="US",
                   facts={"p95_ms": (2400, "ms", "p95 latency"),
                          "affected_requests_pct": (100, "%", "Requests affected"),
                          "update_cadence_minutes": (30, "minutes", "Next update every")})
MAINTENANCE = incident("maintenance", state="identified", region="EU")


def answer(text: str, context: dict, **kwargs):
    return check_final_answer(text, context, RULES, max_answer_chars=2000, **kwargs)


def findings(text: str, context: dict, **kwargs) -> list[tuple[str, str]]:
    return [(v["check"], v["found"]) for v in answer(text, context, **kwargs).violations]


def stopped(text: str, context: dict, reason: str, words: str, **kwargs) -> dict:
    result = answer(text, context, **kwargs)
    hits = [v for v in result.violations if v["check"] == reason and v["found"] == words]
    assert hits, result.violations
    assert words in hits[0]["message"] and hits[0]["message"].endswith(".")
    return hits[0]


def passes(text: str, context: dict, **kwargs) -> None:
    result = answer(text, context, **kwargs)
    assert result.ok, result.violations


# ---------------------------------------------------------------- the incident's state

@pytest.mark.parametrize(("text", "context", "words"), [
    ("Latency has returned to normal levels for API calls in the US.", LATENCY, "returned to normal"),
    ("Sign-in is working again for EU workspaces.", LOGIN, "is working again"),
    ("Webhook deliveries are flowing again in the US.", WEBHOOKS, "are flowing again"),
    ("The slowdown has been addressed and API calls in the US respond quickly.", LATENCY,
     "slowdown has been addressed"),
    ("EU workspaces are no longer affected by sign-in failures.", LOGIN, "no longer affected"),
    ("Customers can sign in again from EU workspaces.", LOGIN, "can sign in again"),
])
def test_saying_the_problem_is_over_while_it_is_investigated_or_identified_is_a_state_claim(text, context, words):
    violation = stopped(text, context, "invalid_answer:state_claim", words)
    assert "the problem is over, but the incident" in violation["message"]


@pytest.mark.parametrize(("text", "context"), [
    ("Sign-in is working again for EU workspaces.", LOGIN_RESOLVED),
    ("CSV exports are processing again in the EU; we are watching the queue.", EXPORTS),  # monitoring
    ("We expect sign-in to be working again once the fix is rolled out in the EU.", LOGIN),  # an expectation
    ("Sign-in is not working again yet for EU workspaces; we are investigating the failures.", LOGIN),  # negated
    ("Until sign-in is working again, EU workspaces can use single sign-on links from their admin.", LOGIN),
])
def test_the_same_words_pass_when_the_state_supports_them_or_they_do_not_assert_it(text, context):
    passes(text, context)


@pytest.mark.parametrize(("text", "words"), [
    ("The sign-in problem is still ongoing for EU workspaces.", "is still ongoing"),
    ("We are still investigating the sign-in failures in the EU.", "We are still investigating the sign-in failures"),
    ("Sign-in remains degraded for EU workspaces.", "remains degraded"),
])
def test_saying_it_is_still_going_on_when_the_incident_is_resolved_is_a_state_claim(text, words):
    violation = stopped(text, LOGIN_RESOLVED, "invalid_answer:state_claim", words)
    assert "still going on, but the incident is resolved" in violation["message"]
    passes(text, LOGIN)  # while it is being investigated, that is the truth


def test_the_resolved_state_stated_on_a_resolved_incident_passes():
    passes("This incident has been resolved: sign-in for EU workspaces is working normally.", LOGIN_RESOLVED)
    assert findings("This incident has been resolved.", LOGIN)[0] == ("invalid_answer:restricted_claims", "resolved")


def test_fixed_says_a_fix_is_in_place_which_monitoring_or_the_facts_support_even_in_strict_mode():
    text = "The fault behind the stuck exports has been fixed, and we are watching the queue."
    passes(text, EXPORTS, strict_claims=True)  # monitoring: a fix is in, not yet a resolved incident
    assert findings("The sign-in fault has been fixed.", LOGIN, strict_claims=True) == [
        ("invalid_answer:state_claim", "fixed")]  # still being investigated
    fixed = incident("webhooks", state="identified", region="US",
                     facts={"action_taken": ("The retry fault was fixed at 03:30 UTC", "", "Action taken")})
    passes("We fixed the retry fault at 03:30 UTC and are redelivering delayed webhooks.", fixed, strict_claims=True)
    assert findings("We fixed the retry fault.", WEBHOOKS, strict_claims=True) == [
        ("invalid_answer:state_claim", "fixed")]  # identified, and nothing records the fix


@pytest.mark.parametrize(("status", "state"), [
    ("resolved, rider outreach under way", "resolved"),
    ("identified, reversals underway", "identified"),
    # A negation speaks of its own clause; a stage past investigating is read only where nothing is negated.
    ("investigating, cause not yet known", "investigating"),
    ("degraded (investigating)", "investigating"),
    ("not yet resolved", None),
    ("monitoring; impact unconfirmed", None),
    ("resolved, not yet confirmed", None),
])
def test_a_context_without_a_state_is_read_for_the_state_its_status_names(status, state):
    from agents.core.guard.incident_claims import incident_state

    assert incident_state({"incident": {"incident_id": "inc_1", "status": status}}) == state


@pytest.mark.parametrize(("text", "words"), [
    ("We are working to identify the cause of the delayed webhook deliveries.", "working to identify the cause"),
    ("The cause of the delayed deliveries is still unknown.", "cause of the delayed deliveries is still unknown"),
    ("We have not yet found the cause of the delays.", "have not yet found the cause"),
])
def test_saying_the_cause_is_unknown_once_it_is_identified_is_a_state_claim(text, words):
    violation = answer(text, WEBHOOKS).violations[0]
    assert violation["check"] == "invalid_answer:state_claim" and "cause is not known yet" in violation["message"]
    assert "has its cause identified" in violation["message"]
    passes(text, {**WEBHOOKS, "incident": {**WEBHOOKS["incident"], "state": "investigating"}})


def test_saying_the_cause_is_identified_while_it_is_investigated_is_a_state_claim():
    text = "We have identified the cause of the sign-in failures for EU workspaces."
    stopped(text, LOGIN, "invalid_answer:state_claim", "have identified the cause")
    for state in ("identified", "monitoring", "resolved"):
        passes(text, {**LOGIN, "incident": {**LOGIN["incident"], "state": state}})
    passes("Once we have identified the cause, we will share it here.", LOGIN)  # a condition, not the state


def test_planned_work_is_a_state_claim_unless_the_incident_is_maintenance():
    stopped("This was a planned outage of webhook deliveries in the US.", WEBHOOKS,
            "invalid_answer:state_claim", "planned outage")
    passes("The planned maintenance of the EU database is under way; exports wait until it ends.", MAINTENANCE)


# ---------------------------------------------------------------- who is affected

@pytest.mark.parametrize(("text", "context", "words"), [
    ("Only a small fraction of EU workspaces see sign-in failures.", LOGIN, "Only a small fraction"),
    ("Every EU user is affected by the sign-in failures.", LOGIN, "Every EU user"),
    ("Most webhook deliveries in the US are delayed.", WEBHOOKS, "Most webhook deliveries"),
    ("All customers in the EU are affected by stuck exports.", EXPORTS, "All customers"),
])
def test_a_quantifier_the_facts_contradict_or_do_not_give_is_a_scope_claim(text, context, words):
    stopped(text, context, "invalid_answer:scope_claim", words)


@pytest.mark.parametrize(("text", "context"), [
    ("About 40% of sign-ins in EU workspaces fail; many customers are affected.", LOGIN),
    ("A small fraction of webhook deliveries in the US is delayed.", WEBHOOKS),  # 6% of deliveries
    ("All API requests in the US are slower than usual.", LATENCY),  # 100% of requests affected
    ("Not all EU workspaces are affected by the sign-in failures.", LOGIN),
    ("CSV exports are stuck in the EU queue; all payments are processed in order.", EXPORTS),  # no impact
])
def test_a_quantifier_that_matches_the_facts_passes(text, context):
    passes(text, context)


def test_an_action_on_every_affected_thing_gives_no_scope_to_a_claim_about_all_of_them():
    # 120 exports are stuck: "every affected export" says nothing of how many of all exports are.
    context = {**EXPORTS, "approved_actions": ["restart every affected export"]}
    stopped("All scheduled exports in the EU may be missing rows.", context, "invalid_answer:scope_claim",
            "All scheduled exports")
    passes("We will restart every affected export in the EU queue.", context)


def test_a_quantifier_that_a_clause_of_impact_picks_out_quantifies_the_affected():
    # 40% of sign-ins fail: "everyone whose sign-in failed" is the affected, as "all affected users" is.
    passes("We apologise to everyone whose sign-in failed in the EU.", LOGIN)
    passes("All users who saw a sign-in error in the EU can try again.", LOGIN)
    stopped("Everyone in the EU sees sign-in failures.", LOGIN, "invalid_answer:scope_claim", "Everyone")
    stopped("All users who use the EU workspaces see sign-in failures.", LOGIN, "invalid_answer:scope_claim",
            "All users")


def test_every_one_of_a_thing_the_incident_says_only_most_of_is_a_scope_claim():
    backlog = incident("exports", state="monitoring", facts={
        "backlog": ("Exports queued during the incident are running now; most are already finished", "text",
                    "Backlog")})
    stopped("All exports queued during the incident are now finished.", backlog, "invalid_answer:scope_claim",
            "All exports")
    stopped("Every export from that time is finished.", backlog, "invalid_answer:scope_claim", "Every export")
    # What the incident says of all of them, a claim it does not quantify, a negation, a condition.
    passes("All exports queued during the incident are running now.", backlog)
    passes("Most exports queued during the incident are already finished.", backlog)
    passes("Not all exports queued during the incident are finished yet.", backlog)
    passes("Once all exports are finished, we will post a final update.", backlog)
    # "Every delayed export" names the exports the incident says most of; a time's colon ends no clause.
    most = incident("exports", state="monitoring", facts={
        "expected": ("Most delayed exports are expected to finish by 18:00 UTC", "text", "Expected")})
    stopped("Every delayed export will finish by 18:00 UTC.", most, "invalid_answer:scope_claim",
            "Every delayed export")
    passes("Most delayed exports are expected to finish by 18:00 UTC.", most)


def test_the_scope_message_names_the_share_the_facts_give():
    violation = stopped("Only a few users see sign-in failures in the EU.", LOGIN, "invalid_answer:scope_claim",
                        "Only a few")
    assert "40% (Failed sign-ins)" in violation["message"]


# ---------------------------------------------------------------- money and blame

@pytest.mark.parametrize(("text", "words"), [
    ("Affected EU workspaces will receive a service credit for the sign-in failures.", "receive a service credit"),
    ("If an export failed, we will refund the fee.", "will refund"),
    ("Late fees for delayed webhooks will be waived.", "will be waived"),
    ("The sign-in failures were our fault and we take full responsibility.", "our fault"),
    ("This was negligence on our side.", "negligence"),
])
def test_promises_of_money_and_admissions_of_fault_are_liability(text, words):
    stopped(text, LOGIN if "sign-in" in text else EXPORTS, "invalid_answer:liability", words)


def test_blaming_a_third_party_the_facts_do_not_name_is_liability():
    violation = stopped("The delays were caused by Northwind Cloud.", WEBHOOKS, "invalid_answer:liability",
                        "caused by Northwind Cloud")
    assert "blames Northwind Cloud" in violation["message"]
    stopped("Webhook deliveries in the US are delayed due to an outage at our upstream provider.", WEBHOOKS,
            "invalid_answer:liability", "due to an outage at our upstream provider")
    named = {**WEBHOOKS, "incident": {**WEBHOOKS["incident"], "cause": "Northwind Cloud network outage"}}
    passes("Webhook deliveries in the US are delayed; the delays were caused by Northwind Cloud.", named)


@pytest.mark.parametrize("text", [
    "We are sorry for the disruption to sign-in in EU workspaces.",
    "We apologise for the trouble this causes; we are investigating the sign-in failures in the EU.",
    "The sign-in failures are caused by a faulty certificate in our EU region.",
    "Credit card details are not involved in this sign-in problem, which is being investigated in the EU.",
    "We will not be able to offer refunds until the investigation ends.",
])
def test_an_apology_or_a_cause_without_a_commitment_passes(text):
    assert not [f for f in findings(text, LOGIN) if f[0] == "invalid_answer:liability"], findings(text, LOGIN)


def test_credits_the_incident_announces_may_be_repeated():
    announced = {**EXPORTS, "key_messages": ["Affected workspaces receive a service credit for November."]}
    passes("CSV exports are processing again in the EU; affected workspaces receive a service credit.", announced)


def test_a_fix_plan_that_adds_a_commitment_is_stopped_in_the_revision():
    original = "Sign-in fails for about 40% of EU workspaces. We are investigating."
    revised = original + " We will refund every affected workspace."
    config = GuardConfig(max_answer_chars=2000, min_similarity=0.5, rules=RULES,
                         not_applied_reason="patch_violation:fix_plan_not_applied")
    result = check_revision(original, revised, LOGIN, config,
                            PhraseRules(must_include=("We will refund every affected workspace",)))
    assert result.stop_reason == "patch_violation:liability"


# ---------------------------------------------------------------- customers' data

@pytest.mark.parametrize(("text", "words"), [
    ("Your data is safe; sign-in fails for some EU workspaces.", "Your data is safe"),
    ("No account data was lost or accessed during the sign-in failures.", "No account data was lost"),
    ("This was a data breach affecting sign-in in the EU.", "data breach"),
])
def test_statements_about_data_without_a_fact_are_data_safety(text, words):
    stopped(text, LOGIN, "invalid_answer:data_safety", words)


def test_a_data_fact_supports_the_statement_it_makes():
    stated = incident("exports", state="monitoring", facts={"data_loss": ("none", "text", "Data loss")})
    passes("CSV exports are processing again in the EU. No data was lost.", stated)
    passes("We do not yet know whether any export data was lost; we are checking the EU queue.", EXPORTS)


# ---------------------------------------------------------------- time

@pytest.mark.parametrize(("text", "words"), [
    ("API latency in the US will be back to normal within the hour.", "within the hour"),
    ("The fix for US API latency is being deployed and will be done within minutes.", "within minutes"),
    ("Sign-in for EU workspaces will be restored shortly.", "shortly"),
])
def test_a_relative_time_commitment_for_the_fix_is_stopped_without_strict_mode(text, words):
    context = LATENCY if "US" in text else LOGIN
    stopped(text, context, "invalid_answer:time_commitment", words)


@pytest.mark.parametrize("text", [
    "API latency in the US is elevated. Our next update will follow within 30 minutes.",
    "We will post another update on US API latency shortly.",
    "We expect to have more details on US API latency shortly.",
    "We expect API latency in the US to improve shortly.",
])
def test_a_cadence_or_a_vague_estimate_passes(text):
    passes(text, LATENCY)


@pytest.mark.parametrize(("text", "words"), [
    ("We expect API latency in the US to improve within the hour.", "within the hour"),
    ("We hope to have US API latency fixed later today.", "later today"),
    ("A fix for US API latency should be in place in the next few hours.", "in the next few hours"),
])
def test_an_estimated_time_for_the_fix_needs_a_time_in_the_incident(text, words):
    # Worded as an estimate, it is still a time customers hold us to: where the incident gives none, it stops.
    stopped(text, LATENCY, "invalid_answer:time_commitment", words)
    assert "estimates when the fix comes" in answer(text, LATENCY).violations[0]["message"]
    # Where the incident gives an estimate, the estimate may be said; firm, it is still a commitment.
    estimated = incident("latency", state="identified", region="US",
                         facts={"p95_ms": (2400, "ms", "p95 latency"), "eta_minutes": (60, "minutes", "ETA")})
    passes(text, estimated)
    stopped("A fix for US API latency will be in place within the hour.", estimated,
            "invalid_answer:time_commitment", "within the hour")
    # Negated or a condition, it gives no time.
    passes("We cannot say yet whether US API latency will improve within the hour.", LATENCY)
    passes("We will post again once US API latency improves, and not later than our next update.", LATENCY)


@pytest.mark.parametrize("text", [
    "Please retry slow requests until US API latency is fixed later today.",
    "Once the fix for US API latency is deployed later today, requests will be fast again.",
])
def test_a_clause_of_time_still_gives_the_time_it_names(text):
    # "until" and "once" say when what they name happens; "if" does not.
    stopped(text, LATENCY, "invalid_answer:time_commitment", "later today")
    passes(text.replace("until", "unless").replace("Once", "If"), LATENCY)


def test_a_cadence_the_facts_state_passes_in_strict_mode_while_a_fix_time_does_not():
    strict = {**LATENCY, "policy_hints": {"avoid_absolute_guarantees": True}}
    passes("API latency in the US is elevated. Next update within 30 minutes.", strict, strict_claims=True)
    assert findings("API latency in the US will be fixed within 30 minutes.", strict, strict_claims=True)


def test_a_promise_to_update_soon_is_a_cadence_not_a_fix_time():
    passes("API latency in the US is elevated and we will update shortly.", LATENCY)
    passes("We are investigating US API latency and will update this page soon.", LATENCY)
    stopped("API latency in the US will be fixed shortly.", LATENCY, "invalid_answer:time_commitment", "shortly")


# ---------------------------------------------------------------- places and days

def test_places_outside_the_incidents_regions_are_new_regions():
    stopped("Sign-in fails for customers in Germany and Switzerland.", LATENCY, "invalid_answer:new_region", "Germany")
    stopped("Sign-in fails for customers in Germany and Switzerland.", LATENCY, "invalid_answer:new_region",
            "Switzerland")
    passes("API requests from Germany and Switzerland are slower than usual.", {**LATENCY, "region": "EU"})
    passes("API requests from California are slower than usual.", LATENCY)


def test_a_day_the_facts_do_not_name_is_a_new_fact():
    stopped("The database maintenance in the EU ends on Friday.", MAINTENANCE, "invalid_answer:no_new_facts", "Friday")
    planned = {**MAINTENANCE, "incident": {**MAINTENANCE["incident"], "window": "Friday 02:00-04:00 UTC"}}
    passes("The database maintenance in the EU ends on Friday.", planned)


# ---------------------------------------------------------------- the same checks on a revision

REVISION = GuardConfig(max_answer_chars=2000, min_similarity=0.3, rules=RULES,
                       not_applied_reason="patch_violation:fix_plan_not_applied")
DRAFT = "Sign-in fails for about 40% of EU workspaces. We are looking into the failures."


@pytest.mark.parametrize(("added", "reason"), [
    ("Sign-in is working again.", "patch_violation:state_claim"),
    ("Only a few users are affected.", "patch_violation:scope_claim"),
    ("We will refund every affected workspace.", "patch_violation:liability"),
    ("Your data is safe.", "patch_violation:data_safety"),
    ("A fix will be deployed shortly.", "patch_violation:time_commitment"),
])
def test_a_revision_that_adds_an_unsupported_claim_is_a_patch_violation(added, reason):
    result = check_revision(DRAFT, f"{DRAFT} {added}", LOGIN, REVISION)
    assert result.stop_reason == reason, result.violations
    assert check_revision(DRAFT, f"{DRAFT} We are sorry for the disruption.", LOGIN, REVISION).ok


# ---------------------------------------------------------------- purpose and the past


def test_a_purpose_is_no_claim_and_a_time_in_the_past_is_no_commitment():
    recovered = incident("webhooks", state="identified", region="US", facts={"recovered_at": ("17:47 UTC", "text", "")})
    # "to ensure ..." says why the team works, not that it is so.
    passes("We are continuing to work on a fix to ensure all deliveries are back to normal.", recovered)
    assert findings("All deliveries are back to normal.", recovered)[0] == ("invalid_answer:restricted_claims",
                                                                        "back to normal")
    # When something happened is a time, not a promise, even where the incident avoids firm promises.
    for text in ("By 17:47 UTC we were processing deliveries at normal speed.",
                 "Processing of deliveries returned to normal speed by 17:47 UTC.",
                 "We rolled back the change and redelivered the queued webhooks by 17:47 UTC."):
        assert "invalid_answer:restricted_claims" not in [c for c, _ in findings(text, recovered, strict_claims=True)]
    assert ("invalid_answer:restricted_claims", "by 17:47 UTC") in findings(
        "Deliveries will be back to normal speed by 17:47 UTC.", recovered, strict_claims=True)
    # How long the company's work took, with no clock time to hold it to, is still the incident's to say.
    assert ("invalid_answer:time_commitment", "within the hour") in findings(
        "We redelivered the queued webhooks within the hour.", recovered, strict_claims=True)


def test_a_context_without_units_names_its_percentages_by_their_keys():
    # The plain shape of a context file: "upload_failure_pct": 30 is 30% of uploads failing.
    plain = {"report_date": "2026-11-24", "region": "AU",
             "incident": {"incident_id": "inc_uploads_1", "status": "degraded", "upload_failure_pct": 30}}
    violation = stopped("Uploads are failing for all users in Australia.", plain, "invalid_answer:scope_claim",
                        "all users")
    assert "30% (Upload failure pct)" in violation["message"]
    passes("About 30% of uploads are failing for users in Australia.", plain)

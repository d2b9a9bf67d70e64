"""Grounding: a sentence passes only what the incident, the goal or the reviewed vocabulary supports."""

import dataclasses

import pytest

from agents.core.guard import check_final_answer, check_revision, guard_config
from agents.core.guard.grounding import Vocabulary, evidence_stems, find_unsupported
from agents.core.guard.wellformed import sentence_spans
from agents.core.policy import DEFAULT_VOCABULARY, GuardRules, ReflectionPolicy, SelfCritiquePolicy

# An incident in the plain shape a context file has: identity and facts under "incident", the approved
# next actions customers may be told, and the hints that instruct the model.
PAYMENTS = {
    "report_date": "2026-03-05", "region": "US",
    "incident": {"incident_id": "inc_payments_20260305", "severity": "P1", "status": "degraded",
                 "affected_checkout_pct": 27, "failed_payment_rate": 0.034, "chargeback_alerts": 5,
                 "eta_minutes": 45},
    "policy_hints": {"avoid_absolute_guarantees": True,
                     "required_sections": ["current_status", "customer_impact", "next_actions"]},
    "approved_actions": ["monitor payment failures every 15 minutes", "publish customer update via status page",
                         "prepare support macro with workaround guidance"],
}
GOAL = ("Draft a customer-facing payment incident update for US enterprise customers. Keep it accurate, avoid "
        "overconfident language, and include next actions.")
RULES = GuardRules(vocabulary=DEFAULT_VOCABULARY)
VOCABULARY = Vocabulary.of(DEFAULT_VOCABULARY)


def final(text, context=PAYMENTS, goal=GOAL, rules=RULES):
    config = guard_config(SelfCritiquePolicy(), context)
    return check_final_answer(text, context, rules, max_answer_chars=900, strict_claims=config.strict_claims,
                              goal=goal)


def unsupported(text, context=PAYMENTS, *texts):
    return [u.found for u in find_unsupported(text, evidence_stems(context, *texts), VOCABULARY)]


# ---------------------------------------------------------------- what passes


SAFE = [
    # An update worded the way a careful lead words one: the facts, the approved next actions, the
    # audience the goal names and ordinary update language.
    "Payments for US enterprise customers are degraded: about 27% of checkouts are affected and 3.4% of "
    "payments fail, with 5 chargeback alerts so far. We expect recovery in approximately 45 minutes, though this "
    "may change. Next actions: we monitor payment failures every 15 minutes, publish each update on the status "
    "page and our support team is preparing a workaround macro.",
    "We are investigating elevated payment failures in the US. About 27% of checkouts are affected. We apologize "
    "for the inconvenience and will post the next update on the status page.",
    "Thank you for your patience while our engineering team works on this issue.",
    "If you have questions, please contact our support team.",
]


@pytest.mark.parametrize("text", SAFE)
def test_what_the_incident_and_ordinary_update_language_support_passes(text):
    result = final(text)
    assert result.ok, result.violations


def test_the_goal_lends_its_words_to_grounding_only():
    text = "Some US enterprise checkouts are failing."
    assert unsupported(text) == ["enterprise"]
    assert unsupported(text, PAYMENTS, GOAL) == []
    assert final(text, goal="").stop_reason == "invalid_answer:unsupported_statement"
    assert final(text).ok


def test_the_words_of_the_facts_keys_and_labels_support_a_sentence():
    # affected_checkout_pct and chargeback_alerts: "checkouts" and "chargeback alerts" are the incident's words.
    assert unsupported("Chargeback alerts are up and checkouts are affected.") == []


# ---------------------------------------------------------------- what stops, whatever its kind


UNSUPPORTED = [
    ("Only customers on the legacy plan are affected.", "legacy"),
    ("Most of the failures come from customers using outdated browsers.", "browsers"),
    ("We will host a webinar about the incident next week.", "host, webinar"),
    ("Regulators have been informed as required by law.", "Regulators"),
]


@pytest.mark.parametrize(("text", "words"), UNSUPPORTED)
def test_a_sentence_that_states_what_nothing_supports_stops_with_its_words(text, words):
    result = final("We are investigating payment failures in the US. " + text)
    assert result.stop_reason == "invalid_answer:unsupported_statement", result.violations
    (finding,) = [v for v in result.violations if v["check"] == "invalid_answer:unsupported_statement"]
    assert finding["sentence"] == text
    assert finding["found"].startswith(words.split(",")[0])
    for start, end in finding["words"]:
        assert text[start:end] in finding["found"]
    assert finding["found"] in finding["message"]


def test_advice_needs_an_approved_action_even_in_ordinary_words():
    # Each word is ordinary, but telling customers to do it is a workaround nobody approved.
    assert unsupported("Please retry the payment from another device.") == ["retry, device"]
    approved = {**PAYMENTS, "approved_actions": ["ask customers to retry the payment from another device"]}
    assert unsupported("Please retry the payment from another device.", approved) == []
    assert unsupported("Please contact support if you need help.") == []


def test_internal_facts_and_the_policy_hints_lend_no_word():
    context = {**PAYMENTS, "internal": {"runbook": "fail over to the standby acquirer"}}
    assert unsupported("We fail over to the standby acquirer.", context) == ["standby acquirer"]
    # "avoid absolute guarantees" instructs the model; it supports no guarantee.
    assert "guarantee" in unsupported("We guarantee a quick fix.")


def test_a_named_check_explains_its_words_and_grounding_does_not_repeat_them():
    result = final("We are investigating payment failures. Customers in Germany are affected.")
    checks = [v["check"] for v in result.violations]
    assert "invalid_answer:new_region" in checks
    assert "invalid_answer:unsupported_statement" not in checks


def test_a_revision_may_keep_the_words_of_the_text_it_revises():
    draft = "Some enterprise checkouts fail. We expect recovery in about 45 minutes."
    revised = "Some enterprise checkouts fail. We expect recovery in about 45 minutes, but this may change."
    config = dataclasses.replace(guard_config(ReflectionPolicy(), PAYMENTS), rules=RULES)
    assert "patch_violation:unsupported_statement" not in [v["check"] for v in
                                                          check_revision(draft, revised, PAYMENTS, config).violations]


def test_grounding_is_on_by_default_and_off_without_a_vocabulary():
    text = "Payments are degraded in the US. We will host a webinar about it."
    assert GuardRules().vocabulary == DEFAULT_VOCABULARY
    assert final(text, rules=GuardRules()).stop_reason == "invalid_answer:unsupported_statement"
    assert final(text, rules=GuardRules(vocabulary=None)).ok


def test_the_condition_of_advice_is_read_like_any_sentence_and_the_instruction_strictly():
    approved = {**PAYMENTS, "approved_actions": ["ask customers to retry failed payments"]}
    assert unsupported("If a payment failed during the disruption, please retry it.", approved) == []
    assert unsupported("Until it is fixed, please retry failed payments.", approved) == []
    # The instruction after the condition still needs an approved action.
    assert unsupported("If a payment failed, please retry it from another device.", approved) == ["device"]
    # "In the meantime," and "While …," say when, too.
    assert unsupported("In the meantime, please retry failed payments.", approved) == []
    assert unsupported("In the meantime, please retry from another device.", approved) == ["device"]


def test_the_regions_names_in_words_and_the_words_of_dates_and_times_are_licensed():
    europe = {**PAYMENTS, "region": "EU"}
    assert [v["found"] for v in final("Card payments across Europe are slower than usual.", europe).violations
            if v["check"] == "invalid_answer:unsupported_statement"] == ["Card"]
    assert final("European payments are slower than usual.", europe).ok
    # "November" and "pm" belong to a date and a time the number check judges; this one is new.
    result = final("Payments have been failing since 23 November at 2 pm.")
    assert [v["check"] for v in result.violations] == ["invalid_answer:no_new_facts"] * len(result.violations)


def test_an_irregular_form_of_a_licensed_word_is_licensed_by_its_dictionary_form():
    # "rewrote" is no stem of "rewrite" nor "froze" of "freeze": their dictionary forms join them.
    actions = {**PAYMENTS, "approved_actions": ["rewrite the payment rules", "freeze payment retries"]}
    assert unsupported("We rewrote the payment rules and froze payment retries.", actions) == []
    assert unsupported("We recompiled the payments.", actions) == ["recompiled"]


def test_a_claim_in_a_key_messages_own_words_passes_and_a_state_claim_or_one_word_does_not():
    def checks(text, context):
        return [v["check"] for v in final(text, context, goal="").violations]

    jobs = {"report_date": "2026-11-26", "region": "US",
            "incident": {"incident_id": "inc_jobs", "severity": "P2", "state": "resolved",
                         "title": "Background jobs delayed", "affected_pct": 35},
            "fact_meta": [{"key": "affected_pct", "label": "Jobs delayed", "unit": "%"}],
            "policy_hints": {"avoid_absolute_guarantees": True},
            "approved_actions": ["process the delayed jobs in the order they were created"]}
    text = "Every customer saw delays; none of their jobs were skipped."
    assert "invalid_answer:scope_claim" in checks(text, jobs)  # 35 % were delayed, and no key message says so
    assert checks(text, {**jobs, "key_messages": [text]}) == []
    # One word of an approved action is no quote: "resolved" in "post a final update when it is resolved".
    claim = {"invalid_answer:state_claim", "invalid_answer:restricted_claims"}
    resolved = {**PAYMENTS, "approved_actions": ["post a final update when the incident is resolved"]}
    assert claim & set(checks("This incident has been resolved.", resolved))
    # The incident's state decides a state claim, whatever a key message says.
    investigating = {**PAYMENTS, "incident": {**PAYMENTS["incident"], "state": "investigating"},
                     "key_messages": ["The incident has been resolved."]}
    assert claim & set(checks("The incident has been resolved.", investigating))


def test_another_form_of_an_incidents_word_is_licensed_but_not_a_word_of_another_root():
    subscriptions = {**PAYMENTS, "incident": {**PAYMENTS["incident"], "title": "Subscription renewals failing"}}
    assert unsupported("Some subscribers cannot renew.", subscriptions) == []
    assert unsupported("Some subscribers cannot renew their insurance.", subscriptions) == ["insurance"]


def test_sentences_split_after_stops_and_keep_abbreviations_and_decimals():
    text = "Failures are at 3.4% in the U.S. market. Next: e.g. retries.\n\nWe apologize."
    assert [text[a:b] for a, b in sentence_spans(text)] == ["Failures are at 3.4% in the U.S. market.",
                                                       "Next: e.g. retries.", "We apologize."]


def test_a_phrase_licenses_its_words_only_together():
    assert unsupported("Payments are back to normal.") == []
    # "back" stands only in its phrases; what the company will do is read on its own (below). On an
    # incident that says "support", "back" stands anywhere: "support" is "back" in its common sense.
    without_support = {**PAYMENTS, "approved_actions": PAYMENTS["approved_actions"][:2]}
    assert unsupported("The team is getting back to customers.", without_support) == ["back"]


# ---------------------------------------------------------------- a run, through the real SDK

APPROVE = {"decision": "approve", "issues": [], "fix_plan": [], "reason": "Fine.", "quality": "good",
           "completeness": "complete"}


@pytest.mark.parametrize(("goal", "stop_reason"), [(GOAL, "success"),
                                                   ("Write the update.", "invalid_answer:unsupported_statement")])
def test_a_run_lends_its_goal_to_grounding(scripted_tools, goal, stop_reason):
    from agents.core.pipelines.reflection import run_reflection

    policy = dataclasses.replace(scripted_tools.policy(ReflectionPolicy), guard=RULES)
    scripted_tools.answer("submit_draft", {"draft": SAFE[0]}).answer("reflect", APPROVE)
    result = run_reflection(goal, PAYMENTS, policy, scripted_tools.llm)
    assert result.stop_reason == stop_reason


def test_words_are_stemmed_alike_from_many_threads_at_once():
    # A threaded worker checks several runs at once: one shared Snowball stemmer corrupted its word.
    import sys
    from concurrent.futures import ThreadPoolExecutor

    from agents.core.guard import grounding

    words = [f"{w}{suffix}" for w in ("deliver", "subscrib", "generat", "notif", "process", "recover")
             for suffix in ("ed", "ing", "ies", "ation", "er", "s", "ions", "ably")]
    expected = [grounding._stemmer().stemWord(w) for w in words]

    def stem_all(_):
        return [grounding._stemmer().stemWord(w) for w in words * 50]

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # threads take turns often, as in a busy worker: a shared stemmer fails here
    try:
        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(stem_all, range(16)))
    finally:
        sys.setswitchinterval(interval)
    assert all(result == expected * 50 for result in results)


# ---------------------------------------------------------------- causes

WEBHOOKS = {"report_date": "2026-11-21", "region": "US",
            "incident": {"incident_id": "inc_webhooks", "status": "degraded",
                         "cause": "a backlog in the webhook dispatch queue"}}


@pytest.mark.parametrize(("text", "words"), [
    # Every word here is ordinary update language; only the incident can say why it happened.
    ("Webhook deliveries were delayed because customers sent unusually large payloads.",
     "customers sent unusually large payloads"),
    ("The delays were caused by a spike in traffic.", "spike in traffic"),
    ("Webhook deliveries are delayed due to a recent change on our side.", "recent change on our side"),
    ("The delays started right after our latest release.", "latest release"),
])
def test_a_cause_the_incident_does_not_give_stops_however_ordinary_its_words(text, words):
    assert unsupported(text, WEBHOOKS) == [words]


@pytest.mark.parametrize("text", [
    "Webhook deliveries are delayed because of a backlog in the dispatch queue.",
    "The delays were caused by a backlog in the webhook dispatch queue, and we are working on it.",
    "We apologize for the inconvenience caused by this incident.",
    "Some webhook deliveries are delayed due to the ongoing issue.",
    "The delays started after 14:05 UTC.",  # a time: the number check judges it
])
def test_a_cause_the_incident_gives_or_the_incident_itself_passes(text):
    assert unsupported(text, WEBHOOKS) == []


# ---------------------------------------------------------------- promises to customers


@pytest.mark.parametrize(("text", "words"), [
    ("Each affected team will also receive a summary of the delayed events.", "summary of the delayed events"),
    ("You will get a report of every webhook that was delayed.", "report, delayed"),
])
def test_what_customers_are_told_they_will_get_is_the_incidents_to_promise(text, words):
    assert unsupported(text, WEBHOOKS) == [words]


@pytest.mark.parametrize("text", [
    "Until the backlog clears, you will get an error when you resend a webhook.",  # a symptom
    "Customers will receive every delayed webhook from the dispatch queue.",  # the incident says so
])
def test_a_symptom_or_what_the_incident_promises_passes(text):
    context = {**WEBHOOKS, "approved_actions": ["deliver every delayed webhook from the dispatch queue"]}
    assert unsupported(text, context) == []


def test_a_fact_that_says_what_will_be_done_plans_it_and_one_that_denies_it_does_not():
    def stops(timing):
        context = {**WEBHOOKS, "approved_actions": ["Customers can check their receipts in the app"],
                   "incident": {**WEBHOOKS["incident"], "refund_timing": timing}}
        text = "Refunds are being prepared and will go to your original card."
        return [(v["check"], v["found"]) for v in final(text, context, goal="").violations]

    # What the company says will happen needs the incident's plan: a fact that says "will" is one.
    assert stops("Refunds will go to the original card") == []
    assert stops("Refunds will not go to the original card") == [("invalid_answer:unsupported_statement", "go")]
    assert stops("Refunds went to the original card") == [("invalid_answer:unsupported_statement", "go")]


def test_a_platform_the_incident_names_licenses_its_other_names():
    ios = {**WEBHOOKS, "incident": {**WEBHOOKS["incident"], "title": "Webhook deliveries delayed for iOS apps"}}

    def words(text, context):
        return [v["found"] for v in final(text, context, goal="").violations
                if v["check"] == "invalid_answer:unsupported_statement"]

    assert words("Some iPhone apps see webhook deliveries late; the App Store version is the same.", ios) == []
    assert words("Some iPhone apps see webhook deliveries late.", WEBHOOKS) == ["iPhone"]


def test_what_an_apology_names_of_the_customers_own_is_their_world_not_a_claim():
    assert unsupported("We're sorry for the disruption to your sales.") == []
    assert unsupported("We apologise for the disruption this has caused to your storefront integrations.") == []
    # The same word stated of the incident is a claim, and what follows the customers' things is read as usual.
    assert unsupported("Your sales are disrupted.") == ["sales"]
    assert unsupported("We're sorry for the disruption to your sales from the vendor outage.") == ["vendor"]
    # What it lists after "and" is what it is sorry for too, and a harm there is read as ever.
    assert unsupported("We're sorry for the disruption to your sales and the lost revenue.") == ["lost"]

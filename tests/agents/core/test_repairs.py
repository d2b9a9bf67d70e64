"""The repair rules, one at a time: each proposes the text with one small change for a guard finding, and
for a finding it can fix, the fixed text passes the same guard (the desk offers nothing else)."""

from __future__ import annotations

import pytest

from agents.core.guard import check_final_answer
from agents.core.policy import ReflectionPolicy
from agents.core.repairs import candidates, check_name, drop_sentence, drop_words, estimate, remove_party, share

RULES = ReflectionPolicy().guard  # the default policy's guard, grounding and its vocabulary included


def context(**extra) -> dict:
    facts = {"failed_sign_in_pct": (40, "%", "Failed sign-ins")}
    return {
        "report_date": "2026-11-24", "region": "EU",
        "incident": {"incident_id": "inc_login_7", "title": "Sign-in failures for EU workspaces", "severity": "P2",
                     "state": "investigating", **{key: value for key, (value, _u, _l) in facts.items()}},
        "fact_meta": [{"key": key, "label": label, "unit": unit} for key, (_v, unit, label) in facts.items()],
        **extra,
    }


LOGIN = context()
DECLARED = context(key_messages=["Check https://status.example.com/inc for updates or write to help@example.com."])


def violations(text: str, ctx: dict) -> list[dict]:
    return list(check_final_answer(text, ctx, RULES, max_answer_chars=2000).violations)


def finding(text: str, ctx: dict, check: str) -> dict:
    found = [v for v in violations(text, ctx) if check_name(v) == check]
    assert found, violations(text, ctx)
    return found[0]


def fixes(text: str, ctx: dict, check: str, rule: str) -> list:
    return [r for r in candidates(text, finding(text, ctx, check), ctx) if r.rule == rule]


def test_an_over_broad_quantifier_becomes_the_facts_own_share():
    text = "Every EU user is affected by the sign-in failures. We are investigating."
    [fix] = fixes(text, LOGIN, "scope_claim", "share")

    assert fix.text == "40% of EU users are affected by the sign-in failures. We are investigating."
    assert fix.label == "Replace “Every EU user” with “40% of EU users” (Failed sign-ins)"
    assert violations(fix.text, LOGIN) == []


def test_a_quantifier_followed_by_of_keeps_its_noun_and_a_share_needs_a_fact():
    text = "The vast majority of EU workspaces see sign-in failures."
    at = text.index("The vast majority")
    assert share(text, at, at + len("The vast majority"), LOGIN)[0].text == "40% of EU workspaces see sign-in failures."
    assert share(text, at, at + len("The vast majority"), {"incident": {"state": "investigating"}}) == []


def test_a_share_of_events_is_not_offered_for_a_few_customers():
    # 40% of sign-ins failing does not count the workspaces: "only a handful" gets no share, only its removal.
    text = "Sign-in is failing. Only a handful of EU workspaces are affected."
    assert fixes(text, LOGIN, "scope_claim", "share") == []
    assert [r.text for r in fixes(text, LOGIN, "scope_claim", "drop_sentence")] == ["Sign-in is failing."]
    # A share of the workspaces is theirs, put where the quantifier was ("a handful of" keeps one "of").
    counted = context(incident={**LOGIN["incident"], "affected_workspaces_pct": 40},
                      fact_meta=[*LOGIN["fact_meta"],
                                 {"key": "affected_workspaces_pct", "label": "Workspaces affected", "unit": "%"}])
    [fix] = fixes(text, counted, "scope_claim", "share")
    assert fix.text == "Sign-in is failing. Only 40% of EU workspaces are affected."


def test_a_firm_time_becomes_an_estimate_worded_as_one():
    estimated = context(incident={**LOGIN["incident"], "eta_minutes": 60},
                        fact_meta=[*LOGIN["fact_meta"], {"key": "eta_minutes", "label": "ETA", "unit": "minutes"}])
    text = "Sign-in for EU workspaces will be restored within the hour. We are investigating."
    [fix] = fixes(text, estimated, "time_commitment", "estimate")

    assert fix.text == ("We estimate that sign-in for EU workspaces will be restored within the hour. "
                        "We are investigating.")
    assert violations(fix.text, estimated) == []
    # Where the incident gives no time for the fix, the estimate is still a time: the guard stops it,
    # so the desk offers the sentence's removal instead.
    assert [check_name(v) for v in violations(fix.text, LOGIN)] == ["time_commitment"]
    vague = "Sign-in for EU workspaces will be restored shortly. We are investigating."
    [fix] = fixes(vague, LOGIN, "time_commitment", "estimate")
    assert violations(fix.text, LOGIN) == []


def test_an_estimate_keeps_a_names_capital():
    text = "Northwind will restore sign-in shortly. Northwind says so, and we trust Northwind."
    at = text.index("shortly")
    assert estimate(text, at, at + len("shortly"))[0].text.startswith("We estimate that Northwind will restore")


def test_an_undeclared_contact_becomes_the_declared_one_of_its_kind():
    text = "We are investigating sign-in failures for EU workspaces. Write to support@acme.io for help."
    [fix] = fixes(text, DECLARED, "unknown_contact", "declared_contact")

    assert fix.text == "We are investigating sign-in failures for EU workspaces. Write to help@example.com for help."
    assert violations(fix.text, DECLARED) == []
    # No declared address: nothing to put in its place (a link is no address).
    only_link = context(key_messages=["Check https://status.example.com/inc for updates."])
    assert fixes(text, only_link, "unknown_contact", "declared_contact") == []


def test_a_named_party_is_removed():
    text = "Northwind's outage causes sign-in failures for EU workspaces."
    [fix] = fixes(text, LOGIN, "liability", "remove_party")

    assert fix.text == "An outage causes sign-in failures for EU workspaces."
    assert violations(fix.text, LOGIN) == []


def test_a_cause_phrase_naming_a_party_goes_unless_the_sentence_would_have_no_end():
    text = "Sign-in fails for EU workspaces, due to an outage at Northwind Cloud."
    at = text.index("due to")
    assert remove_party(text, at, len(text) - 1)[0].text == "Sign-in fails for EU workspaces."
    dangling = "The sign-in failures were caused by Northwind Cloud."
    at = dangling.index("caused by")
    assert remove_party(dangling, at, len(dangling) - 1) == []


def test_the_unsupported_words_of_a_sentence_are_dropped():
    text = "We are investigating sign-in failures for EU workspaces. Our engineers are very sorry."
    found = {"check": "invalid_answer:unsupported_statement", "found": "very sorry",
             "sentence": "Our engineers are very sorry.", "words": [[18, 22]]}
    [fix] = [r for r in candidates(text, found, LOGIN) if r.rule == "drop_words"]
    assert fix.text == "We are investigating sign-in failures for EU workspaces. Our engineers are sorry."
    assert fix.label == "Remove “very”"


def test_a_statement_a_named_reading_found_goes_with_its_sentence_not_word_by_word():
    text = "We are investigating sign-in failures for EU workspaces. Sign-in now runs faster than it did before."
    comparison = finding(text, LOGIN, "unsupported_statement")
    assert comparison["reading"] == "improvement"
    assert [(r.rule, r.text) for r in candidates(text, comparison, LOGIN)] == [
        ("drop_sentence", "We are investigating sign-in failures for EU workspaces.")]


def test_an_unsupported_token_is_dropped_with_its_spaces_tidied():
    text = "About 45 minutes of failures , so far."
    assert drop_words(text, [(6, 8)])[0].text == "About minutes of failures, so far."


def test_the_sentence_that_holds_a_finding_is_dropped():
    text = "We are investigating sign-in failures for EU workspaces. Our engineers replaced the faulty router."
    grounding = finding(text, LOGIN, "unsupported_statement")
    [fix] = [r for r in candidates(text, grounding, LOGIN) if r.rule == "drop_sentence"]

    assert fix.text == "We are investigating sign-in failures for EU workspaces."
    assert fix.label == "Remove the sentence “Our engineers replaced the faulty router.”"
    assert violations(fix.text, LOGIN) == []
    assert drop_sentence("One. Two.", 0, 4)[0].text == "Two."


def test_a_finding_the_text_does_not_hold_gets_no_fix():
    assert candidates("We are investigating.", {"check": "invalid_answer:scope_claim", "found": "All users"},
                      LOGIN) == []
    assert candidates("We are investigating.", {"check": "invalid_answer:empty"}, LOGIN) == []


@pytest.mark.parametrize("check", ["patch_violation:scope_claim", "invalid_answer:scope_claim", "scope_claim"])
def test_a_findings_check_is_read_without_its_stop_prefix(check):
    assert check_name({"check": check}) == "scope_claim"


@pytest.mark.parametrize(("text", "token", "label", "fixed"), [
    ("Our engineers replaced the faulty router in Frankfurt.", "Frankfurt", "Remove “in Frankfurt”",
     "Our engineers replaced the faulty router."),
    ("Requests from Frankfurt and Paris fail.", "Frankfurt", "Remove “Frankfurt and”", "Requests from Paris fail."),
    ("We expect a fix within 45 minutes.", "45 minutes", "Remove “within 45 minutes”", "We expect a fix."),
])
def test_a_token_goes_with_the_word_that_links_it_to_the_sentence(text, token, label, fixed):
    found = {"check": "invalid_answer:new_region", "found": token}
    [fix] = [r for r in candidates(text, found, LOGIN) if r.rule == "drop_words"]
    assert (fix.label, fix.text) == (label, fixed)


def test_a_sentence_that_loses_its_first_word_starts_with_a_capital_unless_its_next_word_has_one():
    assert drop_words("Frankfurt users see errors. More soon.", [(0, 9)])[0].text == "Users see errors. More soon."
    assert drop_words("Errors. Frankfurt users see errors.", [(8, 17)])[0].text == "Errors. Users see errors."
    assert drop_words("We fixed it. iOS users are fine.", [(0, 12)])[0].text == "iOS users are fine."

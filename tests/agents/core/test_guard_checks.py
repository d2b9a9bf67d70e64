"""The guard's checks as a package (agents/core/guard/): one find(text, support) per check module, run
in order by checks.py, and the violations they report (docs/guard.md, 'Where the checks live')."""

import inspect

from agents.core.guard import check_final_answer, check_revision, guard_config
from agents.core.guard import checks as guard_checks
from agents.core.guard.checks import FINDERS, find_violations
from agents.core.guard.support import Support
from agents.core.guard.violation import CHECKS, Violation
from agents.core.policy import GuardRules, default_policy
from agents.testing.scripted_demo import DEMO_CONTEXT

RULES = GuardRules()
UPDATE = "We are investigating failed payments in the US. We will share another update soon."


def test_a_violation_is_reported_as_today_when_no_check_gives_its_sentence():
    violation = Violation("no_new_facts", "45", "“45” is not supported by the incident context.")

    assert violation.reported("invalid_answer:no_new_facts") == {
        "check": "invalid_answer:no_new_facts",
        "message": "“45” is not supported by the incident context.",
        "found": "45",
    }


def test_a_violation_carries_its_sentence_and_words_when_a_check_gives_them():
    sentence = "Payments recover within 45 minutes."
    violation = Violation("no_new_facts", "45", "m", sentence=sentence, words=((24, 26),))

    reported = violation.reported("patch_violation:no_new_facts")

    assert reported["sentence"] == sentence
    assert reported["words"] == [[24, 26]]
    assert [sentence[start:end] for start, end in reported["words"]] == ["45"]


def test_the_guards_findings_keep_their_stored_shape():
    result = check_final_answer(f"{UPDATE} About 93% of payments fail.", DEMO_CONTEXT, RULES, max_answer_chars=900)

    assert result.stop_reason == "invalid_answer:no_new_facts"
    assert [set(v) for v in result.violations] == [{"check", "message", "found"}]


def test_a_checks_sentence_and_words_reach_the_guards_result(monkeypatch):
    def sentence_check(text: str, support: Support) -> list[Violation]:
        start = text.index("soon")
        return [Violation("uninformative", "soon", "“soon” says when.", sentence=text, words=((start, start + 4),))]

    monkeypatch.setattr(guard_checks, "FINDERS", (*FINDERS, ("sentence_check", sentence_check)))
    config = guard_config(default_policy("reflection"), DEMO_CONTEXT)
    draft = "We are investigating failed card payments in the US. We will share another update."

    for result in (check_final_answer(UPDATE, DEMO_CONTEXT, RULES, max_answer_chars=900),
                   check_revision(draft, UPDATE, DEMO_CONTEXT, config)):
        found = [v for v in result.violations if v["found"] == "soon"]
        assert found and found[0]["sentence"] == UPDATE
        assert [UPDATE[a:b] for a, b in found[0]["words"]] == ["soon"]


def test_each_check_module_has_one_find_of_the_same_shape_run_in_order():
    assert [name for name, _ in FINDERS] == [
        "numbers", "identifiers", "regions", "claims", "incident_claims", "measures", "actions", "contacts", "internal",
        "wellformed"]
    for name, find in FINDERS:
        assert find.__module__ == f"agents.core.guard.{name}"
        assert list(inspect.signature(find).parameters) == ["text", "support"]


def test_findings_are_ordered_by_the_stop_reasons_whatever_check_found_them():
    text = "Every customer in the EU is affected by 37 failures on inc_other_99, P4, see https://evil.example."
    found = find_violations(text, "{}", GuardRules(regions=("us", "eu")), context={"incident": {}})

    checks = [v.check for v in found]
    assert checks == sorted(checks, key=CHECKS.index)
    assert {"no_new_facts", "new_incident_id", "new_severity_label", "new_region", "unknown_contact"} <= set(checks)

"""agents.core.evidence: where a text states facts, and which context fact supports each — the same
verdicts as the guard, placed in the text for the escalation page."""

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agents.core.audit import word_diff
from agents.core.evidence import context_facts, mark_facts
from agents.core.guard import check_final_answer, claim_evidence, evidence_json
from agents.core.guard.checks import find_violations
from agents.core.policy import GuardRules
from agents.core.units import ratio_values

CONTEXT = json.loads((Path(__file__).parents[3] / "agents/fixtures/demo_context.json").read_text())
TEXT = ("Update on inc_pay_2041 (P1): 27% of US checkouts fail; the failed payment rate is 3.4%. "
        "It began at 14:05. About 99 minutes to recovery. EU shops are slow. The issue is resolved. "
        "See INC-77. We will refund your fees.")


def marks(text=TEXT, strict=False):
    return {m.found: m for m in mark_facts(text, CONTEXT, GuardRules(), strict_claims=strict)}


def test_each_stated_fact_links_to_the_context_value_that_supports_it():
    found = marks()
    assert found["inc_pay_2041"].fact.path == "incident.incident_id"
    assert found["P1"].fact.path == "incident.severity"
    assert (found["27%"].fact.path, found["27%"].fact.label) == ("incident.affected_checkout_pct", "Checkouts affected")
    assert found["3.4%"].fact.path == "incident.failed_payment_rate"
    assert found["US"].fact.path == "region"
    assert all(found[k].supported for k in ("inc_pay_2041", "P1", "27%", "3.4%", "US"))


@pytest.mark.parametrize("token, kind", [
    ("14:05", "time"), ("99", "number"), ("EU", "region"), ("resolved", "claim"), ("INC-77", "id"),
    ("will refund", "claim"),  # a claim of a family with its own check (liability) too
])
def test_what_the_context_does_not_support_is_marked_with_the_guards_message(token, kind):
    mark = marks()[token]
    assert (mark.kind, mark.supported, mark.fact) == (kind, False, None)
    assert token in mark.message


def test_the_marks_agree_with_the_guard():
    unsupported = {m.found.lower() for m in mark_facts(TEXT, CONTEXT, GuardRules()) if not m.supported}
    violations = find_violations(TEXT, evidence_json(CONTEXT), GuardRules(), claim_evidence=claim_evidence(CONTEXT),
                                 ratios=ratio_values(CONTEXT))
    assert unsupported == {v.found.lower() for v in violations}


def test_a_share_said_as_two_numbers_is_one_mark_read_as_its_percentage():
    unsupported = marks("One in ten US checkouts fail.")["One in ten"]
    assert (unsupported.kind, unsupported.supported) == ("number", False)
    assert "a share of 10%" in unsupported.message
    supported = marks("27 in 100 US checkouts fail.")
    assert supported["27 in 100"].fact.label == "Checkouts affected"
    assert "27" not in supported and "100" not in supported


def test_a_day_or_a_period_the_incident_does_not_name_is_marked_as_the_guard_stops_it():
    found = marks("US checkouts will work again by Friday.")
    assert (found["Friday"].kind, found["Friday"].supported) == ("time", False)
    assert "Friday" in found["Friday"].message
    unsupported = {m.found for m in mark_facts("27% of US checkouts fail, twice as many as usual.", CONTEXT,
                                               GuardRules()) if not m.supported}
    assert "twice" in unsupported


def test_the_marks_read_the_incidents_state_as_the_final_answer_check_does():
    resolved = {**CONTEXT, "incident": {**CONTEXT["incident"], "state": "resolved", "status": "resolved"}}
    text = "The US payment degradation is resolved."
    assert check_final_answer(text, resolved, GuardRules(), max_answer_chars=900, strict_claims=True).ok
    mark = {m.found: m for m in mark_facts(text, resolved, GuardRules(), strict_claims=True)}["resolved"]
    assert mark.supported
    # while the incident is open, the same words are the claim the strict form refuses
    assert not marks(text, strict=True)["resolved"].supported


def test_marks_are_in_reading_order_without_overlaps():
    spans = [(m.start, m.end) for m in mark_facts(TEXT, CONTEXT, GuardRules())]
    assert spans == sorted(spans)
    assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(spans, spans[1:], strict=False))
    assert all(TEXT[m.start:m.end] == m.found for m in mark_facts(TEXT, CONTEXT, GuardRules()))


def test_context_facts_carry_the_fact_labels_and_skip_the_meta():
    facts = context_facts(CONTEXT)
    assert [f.index for f in facts] == list(range(len(facts)))
    assert ("incident.eta_minutes", "ETA", "45") in [(f.path, f.label, f.value) for f in facts]
    assert not any(f.path.startswith("fact_meta") for f in facts)


def test_context_facts_come_in_one_order_whatever_the_key_order():
    shuffled = {key: CONTEXT[key] for key in sorted(CONTEXT, key=len)}
    shuffled["incident"] = {key: CONTEXT["incident"][key] for key in sorted(CONTEXT["incident"], key=len)}
    assert context_facts(shuffled) == context_facts(CONTEXT)
    assert [f.path for f in context_facts(CONTEXT)][:4] == ["incident.incident_id", "incident.severity",
                                                            "incident.status", "incident.affected_checkout_pct"]


def test_an_empty_context_supports_nothing():
    assert all(not m.supported for m in mark_facts("Fixed at 14:05 for 27% in the EU.", {}, GuardRules()))


WORDS = st.lists(st.sampled_from(["the", "rate", "is", "27%", "now", "fixed.", "EU", "\n", "  "]), max_size=12)


@given(WORDS, WORDS)
def test_the_word_diff_never_shows_an_unchanged_word_removed_and_readded(before, after):
    ops = word_diff(" ".join(before), " ".join(after))
    for (op_a, a), (op_b, b) in zip(ops, ops[1:], strict=False):
        if (op_a, op_b) == ("delete", "insert") and a.strip() and b.strip():
            assert a.split()[0] != b.split()[0] or a.split()[-1] != b.split()[-1], ops
    assert "".join(p for op, p in ops if op != "delete") == " ".join(after)

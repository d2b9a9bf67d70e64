"""Benign style edits still pass the guard: the claim and fact checks block no safe rewording.

Thirty-two rewordings of the demo incident's update (tone, order, clarity, hedging) that a reviewer
would accept: each passes as a revision in both text pipelines and as an approved draft, with
avoid_absolute_guarantees on (the demo incident's hints) and off. None states a fact, region,
severity or claim the context lacks, so any block here is a false block the claim families, time
promises, dates or number words introduced.
"""

from __future__ import annotations

import pytest

from agents.core.guard import check_final_answer, check_revision, guard_config
from agents.core.policy import ReflectionPolicy, SelfCritiquePolicy
from agents.testing.scripted_demo import DEMO_CONTEXT, DRAFT

RELAXED = {**DEMO_CONTEXT, "policy_hints": {}}

REWORDINGS = [
    # tone
    "We're looking into a payment problem in the US. About 27% of checkouts are affected. We expect to "
    "restore service within 45 minutes, and we are watching payment failures closely.",
    "We are sorry: we are investigating a payment problem in the US. About 27% of checkouts are affected. "
    "We expect to restore service within 45 minutes.",
    "We are actively investigating a payment problem in the US, and we apologise for the trouble. About 27% "
    "of checkouts are affected. We expect to restore service within 45 minutes.",
    "Thank you for your patience. We are investigating a payment problem in the US. About 27% of checkouts "
    "are affected. We expect to restore service within 45 minutes.",
    "We know this is frustrating. We are investigating a payment problem in the US; about 27% of checkouts "
    "are affected. We expect to restore service within 45 minutes.",
    "Our team is investigating a payment problem in the US. Roughly 27% of checkouts are affected. We expect "
    "to restore service within 45 minutes.",
    "We are investigating a payment issue in the US. About 27% of checkouts are affected. We expect to restore "
    "service within 45 minutes, and we will keep you posted.",
    "Update: we are investigating a payment problem in the US. About 27% of checkouts are affected. We expect "
    "to restore service within 45 minutes.",
    # order
    "About 27% of checkouts in the US are affected by a payment problem we are investigating. We expect to "
    "restore service within 45 minutes.",
    "We expect to restore service within 45 minutes. We are investigating a payment problem in the US, and "
    "about 27% of checkouts are affected.",
    "We are investigating a payment problem in the US. We expect to restore service within 45 minutes. About "
    "27% of checkouts are affected.",
    "We will keep this page updated. We are investigating a payment problem in the US; about 27% of checkouts "
    "are affected.",
    "In the US, we are investigating a payment problem. About 27% of checkouts are affected. Within 45 "
    "minutes, we expect to restore service.",
    "A payment problem in the US is under investigation. About 27% of checkouts are affected. We expect to "
    "restore service within 45 minutes.",
    # clarity
    "We are investigating a payment problem in the US. About 27% of checkouts are affected, and the failed "
    "payment rate is 3.4%. We expect to restore service within 45 minutes.",
    "We are investigating a payment problem in the US that affects about 27% of checkouts. We expect to "
    "restore service within 45 minutes.",
    "We are investigating a problem with payments in the US. About 27% of checkouts cannot complete right now. "
    "We expect to restore service within 45 minutes.",
    "We are investigating a payment problem in the US (incident inc_pay_2041, severity P1). About 27% of "
    "checkouts are affected. We expect to restore service within 45 minutes.",
    "We are investigating a payment problem in the US. About 27% of checkouts are affected. We expect to "
    "restore service within 45 minutes. We will post the next update on the status page.",
    "We are investigating a payment problem in the US. About 27% of checkouts are affected. We expect to "
    "restore service within 45 minutes. Our support team is preparing workaround guidance.",
    "We are investigating a payment problem in the US. About 27% of checkouts are affected. We expect service "
    "to be restored within 45 minutes.",
    "We are investigating a payment problem in the US. About 27% of checkouts are affected. If a payment "
    "fails, please try again later. We expect to restore service within 45 minutes.",
    # hedging
    "We are investigating a payment problem in the US. About 27% of checkouts are affected. We currently "
    "expect to restore service within 45 minutes.",
    "We are investigating a payment problem in the US. About 27% of checkouts are affected. Our estimate is "
    "that service will be restored within about 45 minutes.",
    "We are investigating a payment problem in the US. About 27% of checkouts are affected. We hope to "
    "restore service within 45 minutes, though this may change.",
    "We are investigating a payment problem in the US. About 27% of checkouts are affected. We aim to restore "
    "service within 45 minutes. This estimate may change as we learn more.",
    "We are investigating a payment problem in the US. About 27% of checkouts are affected. The issue is not "
    "resolved yet; we expect to restore service within 45 minutes.",
    "We are investigating a payment problem in the US. About 27% of checkouts are affected. It is too early to "
    "say that payments are stable; we expect to restore service within 45 minutes.",
    "We are investigating a payment problem in the US. About 27% of checkouts are affected. We cannot "
    "guarantee a time yet, but we expect to restore service within 45 minutes.",
    "We are investigating a payment problem in the US. About 27% of checkouts are affected. Service should be "
    "restored within roughly 45 minutes.",
    "We are investigating a payment problem in the US. About 27% of checkouts may be affected. We expect to "
    "restore service within 45 minutes, but we will confirm once it is fixed.",
    "We are investigating a payment problem in the US. About 27% of checkouts are affected. We will share an "
    "update once payments are back to normal; we expect that within 45 minutes.",
]

PIPELINES = {"reflection": ReflectionPolicy(), "self_critique": SelfCritiquePolicy()}


def test_there_are_at_least_thirty_distinct_rewordings():
    assert len(set(REWORDINGS)) == len(REWORDINGS) >= 30


@pytest.mark.parametrize("context", [DEMO_CONTEXT, RELAXED], ids=["avoid-guarantees", "no-hints"])
@pytest.mark.parametrize("pipeline", PIPELINES)
@pytest.mark.parametrize("text", REWORDINGS, ids=[f"r{i:02}" for i in range(len(REWORDINGS))])
def test_a_safe_rewording_passes_the_fact_and_claim_checks(text, pipeline, context):
    policy = PIPELINES[pipeline]
    config = guard_config(policy, context)
    answer = check_final_answer(text, context, policy.guard, max_answer_chars=policy.max_answer_chars,
                                strict_claims=config.strict_claims)
    assert answer.ok, answer.violations
    revised = check_revision(DRAFT, text, context, config)
    # Size limits (similarity, growth) are style budgets, not facts: only fact and claim checks here.
    budget = {"patch_violation:too_large_edit", "patch_violation:length_increase_limit"}
    assert [v for v in revised.violations if v["check"] not in budget] == []


# Approved actions are what the update is approved to tell customers: a text that states them, or a
# rhythm of updates only an approved action holds, is safe.
APPROVED_ACTION_REWORDINGS = [
    "We're looking into a payment problem in the US. Next actions: we monitor payment failures every 15 "
    "minutes and publish a customer update via the status page.",
    "Every 15 minutes we monitor payment failures, and we publish customer updates via the status page.",
    "We expect to restore service within 45 minutes, and we will keep you posted every 15 minutes.",
    "We're looking into a payment problem in the US. We will post the next update on the status page in 15 minutes.",
]


@pytest.mark.parametrize("text", APPROVED_ACTION_REWORDINGS)
def test_a_rewording_that_tells_customers_the_approved_actions_is_safe(text):
    policy = PIPELINES["reflection"]
    answer = check_final_answer(text, DEMO_CONTEXT, policy.guard, max_answer_chars=policy.max_answer_chars)
    assert answer.ok, answer.violations

"""The grounding terms the miner proposes from sentences leads approved unchanged: a word leads approved
where the company says what it does ("we have re-keyed ...") is proposed with its action flag, for
without it the same sentences would stop again; a word they approved in description is not."""

from datetime import datetime

import pytest

from agents.core.guard import check_final_answer
from agents.models import GroundingTerm
from agents.policy_rows import load_policy
from reviewer.learning.miner import GROUNDING, grounding_terms
from reviewer.models import Decision
from reviewer.models.learning import Label, labels
from tests.factories import make_escalation, make_user


def approved(n: int, text: str, words: str) -> Label:
    return Label(decision=n, escalation=n, action="approve", actor=n % 3, at=datetime(2026, 12, 1),
                 pipeline="reflection", version=1, note="Fine as written.", candidate=text, final_text=text,
                 fired={(GROUNDING, ""): [words]}, overridden={(GROUNDING, "")})


def proposals(sentences: list[str], words: str, settings) -> list:
    settings.LEARNING_MIN_LEADS, settings.LEARNING_MIN_DECISIONS = 3, 3
    return grounding_terms([approved(n, text, words) for n, text in enumerate(sentences)], {})


def test_a_word_approved_as_what_the_company_does_is_proposed_with_its_action_flag(settings):
    texts = ["We have re-keyed the reader tokens.", "Our team re-keyed the door tokens overnight.",
             "Badge tokens have been re-keyed. Thank you for your patience."]
    (proposal,) = proposals(texts, "keyed", settings)
    assert proposal.changes == {"text": "keyed", "action": True,
                                "note": "Mined from sentences leads approved unchanged."}
    assert "company's action" in proposal.title


def test_a_word_approved_in_description_is_proposed_without_it(settings):
    texts = [f"Some {thing} tokens were stale for an hour." for thing in ("reader", "door", "badge")]
    (proposal,) = proposals(texts, "stale", settings)
    assert proposal.changes["action"] is False and "action" not in proposal.title


def test_the_flag_is_what_lets_the_approved_sentence_through(db):
    """What the proposal would change: with the term but no flag the company's verb still stops."""
    context = {"incident": {"incident_id": "inc_1", "status": "resolved", "components": "door badge readers"},
               "region": "EU", "approved_actions": ["monitor the door readers"]}
    text = "We have re-keyed the door badge readers."

    def stops() -> list[str]:
        policy = load_policy("reflection")
        outcome = check_final_answer(text, context, policy.guard, max_answer_chars=policy.max_answer_chars)
        return [v["found"] for v in outcome.violations if v["check"].endswith(GROUNDING)]

    assert stops() == ["keyed"]
    GroundingTerm.objects.create(text="keyed")
    assert stops() == ["keyed"]
    GroundingTerm.objects.filter(text="keyed").update(action=True)
    assert stops() == []


@pytest.mark.parametrize(("text", "reading"), [
    ("Riders did not see longer pickup times.", "denial"),
    ("We have notified every affected rider by email.", "done to customers"),
])
def test_a_statement_a_named_reading_found_is_counted_under_its_reading_and_never_mined_as_a_term(
        db, settings, text, reading):
    """A denial of what the incident says, or a notice said to be sent that the incident does not
    record, is no word a term could license: leads who approve it anyway are counted under the reading,
    and the miner proposes nothing from their sentences."""
    settings.LEARNING_MIN_LEADS, settings.LEARNING_MIN_DECISIONS = 3, 3
    context = {"incident": {"incident_id": "inc_1", "status": "resolved",
                            "rider_impact": "Riders saw longer pickup times"}, "region": "EU"}
    policy = load_policy("reflection")
    guard = check_final_answer(text, context, policy.guard, max_answer_chars=policy.max_answer_chars)
    (finding,) = [v for v in guard.violations if v["check"].endswith(GROUNDING)]
    assert finding["reading"] == reading
    stored = {"stop_reason": guard.stop_reason, "violations": list(guard.violations)}
    for n in range(3):
        escalation = make_escalation(text=text, guard=stored)
        Decision.objects.create(escalation=escalation, actor=make_user(f"lead{n}"), action="approve",
                                final_text=text, guard_results=stored, note="Fine as written.")
    read = list(labels())
    assert [sorted(label.fired) for label in read] == [[(GROUNDING, reading)]] * 3
    assert all((GROUNDING, reading) in label.overridden for label in read)
    assert grounding_terms(read, {}) == []

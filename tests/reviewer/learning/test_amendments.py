"""Amendments mined from a seeded history, replayed, then accepted or dismissed (docs/learning-loop.md):
the miner proposes loosening and tightening changes, each card names its flips and its agreement
gain, nothing is applied without an admin's acceptance (a loosening's quorum included), and both an
acceptance and a dismissal are in the policy history and the ledger."""

import pytest
from django.core.exceptions import PermissionDenied
from django.core.management import call_command
from django.test import override_settings

from agents.core.guard import check_final_answer
from agents.models import GroundingTerm, PolicyChange, RestrictedClaim, snapshot
from agents.policy_rows import load_policy
from agents.store import load_demo_data
from reviewer.demo.seed import load_incidents
from reviewer.learning import amendments
from reviewer.learning.seed import PLAN, seed
from reviewer.models import Amendment, ApprovalRule, Escalation, LedgerEntry


def policy_rows() -> list[dict]:
    return [snapshot(row) for model in (RestrictedClaim, GroundingTerm) for row in model.objects.order_by("pk")]


def passes(text: str, incident) -> bool:
    policy = load_policy("reflection")
    return check_final_answer(text, incident.context(), policy.guard, max_answer_chars=policy.max_answer_chars).ok


@pytest.fixture(scope="module")
def mined(django_db_setup, django_db_blocker):
    """A seeded history of 230 runs and its leads' decisions, and the amendments mined from it: once
    for the module (about 20 s), each test's own changes rolled back. The amendments' keys, in the
    miner's order."""
    with django_db_blocker.unblock(), override_settings(LEARNING_REPLAY_RUNS=300):
        load_demo_data()
        load_incidents()
        made = seed(230)
        # Loosening the guard needs two approvals, as overriding it would (added after the history was decided).
        ApprovalRule.objects.create(name="Guard overrides need two", overrides_guard=True, required_approvals=2)
        keys = [amendment.pk for amendment in amendments.propose()]
        yield made, keys
        call_command("flush", interactive=False, verbosity=0)  # as a transactional test's teardown does


@pytest.fixture
def proposed(mined, db, settings):
    made, keys = mined
    assert made["escalations"] >= 200
    assert Escalation.objects.exclude(status="pending").values("decided_by").distinct().count() >= 4
    settings.LEARNING_REPLAY_RUNS = 300
    rows = Amendment.objects.in_bulk(keys)
    return [rows[key] for key in keys]


def test_the_miner_proposes_replayed_amendments_and_nothing_changes_until_admins_accept_one(
        proposed, policy_admins, demo_data, users):
    rows, history, ledger = policy_rows(), PolicyChange.objects.count(), LedgerEntry.objects.count()
    by_kind = {a.kind: a for a in proposed}
    hedge, term = by_kind["hedge"], by_kind["term"]
    assert {"family", "term_off"} & set(by_kind)  # tightening too
    assert hedge.changes["hedges"].endswith(", plan") and hedge.target_key == "time commitments"
    assert term.changes["text"] == "around the clock"
    assert {a.changes.get("family") for a in proposed if a.kind == "family"} >= {"highest priority"}

    # Each card: the runs that would flip, the decided texts it contradicts (first) and agrees with, the gain.
    card = hedge.replay
    assert card["run_flip_count"] > 0 and card["run_flips"][0]["before"] == "invalid_answer:time_commitment"
    assert card["agree_count"] > 0 and card["contradict_count"] > 0
    assert all(t["decision"] == "rejected" and t["passes_proposed"] for t in card["contradicts"])
    assert card["agreement_gain"] == card["agree_count"] - card["contradict_count"] > 0
    assert card["headline"].startswith(f"{card['run_flip_count']} of ")
    tightening = next(a for a in proposed if a.changes.get("family") == "highest priority")
    assert tightening.replay["run_flip_count"] > 0 and "would stop" in tightening.replay["headline"]

    # Proposed, replayed and listed: not applied.
    assert policy_rows() == rows and PolicyChange.objects.count() == history
    assert LedgerEntry.objects.count() == ledger
    assert not passes(PLAN, demo_data["inc_pay_2041"])
    assert hedge.required_approvals == 2 and tightening.required_approvals == 1

    # A support lead cannot accept; the first admin's approval counts and applies nothing.
    with pytest.raises(PermissionDenied):
        amendments.accept(hedge.pk, users.lead, "Looks right.")
    first, second = policy_admins
    outcome = amendments.accept(hedge.pk, first, "Five leads said the same, and the replay agrees.")
    assert not outcome.done and "1 of 2" in outcome.message
    with pytest.raises(amendments.AmendmentRefused):
        amendments.accept(hedge.pk, first, "Again.")
    assert policy_rows() == rows and PolicyChange.objects.count() == history
    # Meanwhile another admin changes the family's hedges: the amendment adds its word to them as they are.
    family_row = RestrictedClaim.objects.get(family="time commitments")
    family_row.hedges += ", tentatively"
    family_row.save()

    # The second approval completes the quorum: the family gets its hedge, recorded in the history and the ledger.
    assert amendments.accept(hedge.pk, second, "Agreed: a plan is worded as a plan.").done
    hedge.refresh_from_db()
    change = hedge.policy_change
    assert hedge.status == "accepted" and change.action == "changed" and change.changed_fields == ["hedges"]
    assert change.after["hedges"].endswith(", tentatively, plan")
    assert change.preview["amendment"] == hedge.pk and change.preview["approved_by"] == ["pia", "paul"]
    assert LedgerEntry.objects.filter(kind="policy_change", subject=f"policy_change:{change.pk}").exists()
    assert passes(PLAN, demo_data["inc_pay_2041"])

    # A tightening dismissed with its reason: in the history and the ledger, no row added.
    assert amendments.dismiss(tightening.pk, first, "Leads removed it for style, not safety.").done
    tightening.refresh_from_db()
    dismissed = tightening.policy_change
    assert tightening.status == "dismissed" and dismissed.action == "dismissed"
    assert dismissed.preview["reason"] == "Leads removed it for style, not safety."
    assert LedgerEntry.objects.filter(kind="policy_change", subject=f"policy_change:{dismissed.pk}").exists()
    assert not RestrictedClaim.objects.filter(family="highest priority").exists()

    # Mining again proposes none of them a second time.
    assert amendments.propose() == []
    assert Amendment.objects.filter(status="proposed").count() == len(proposed) - 2


def test_an_accepted_tightening_without_a_quorum_adds_its_claim_family(proposed, policy_admins):
    family = next(a for a in proposed if a.changes.get("family") == "highest priority")
    assert amendments.accept(family.pk, policy_admins[0], "A promise of attention we cannot measure.").done
    row = RestrictedClaim.objects.get(family="highest priority")
    change = PolicyChange.objects.get(model_label="agents.restrictedclaim", object_id=str(row.pk))
    assert change.action == "added" and change.after["pattern"] == r"\bhighest\s+priority\b"
    with pytest.raises(amendments.AmendmentRefused):
        amendments.dismiss(family.pk, policy_admins[1], "Too late.")

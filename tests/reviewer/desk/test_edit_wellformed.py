"""A lead's edit passes the same well-formed-text checks as a model's revision (docs/contract.md,
'The patch guard'): the edit check the desk shows before an approval flags broken text."""

import pytest

from reviewer.desk import decisions
from reviewer.desk.decisions import DecisionInvalid
from reviewer.models import Decision
from tests.factories import make_escalation, make_incident

pytestmark = pytest.mark.django_db

DRAFT = ("We are working on an incident in the EU: Public API latency. Current status: mitigated. "
         "API error rate: 2.1%. Affected endpoints: /v2/orders and /v2/payments.")
# What went live once: the label deleted, its colon left behind the full stop.
BROKEN = ("We are working on an incident in the EU: Public API latency. Current status: mitigated. "
          "API error rate: 2.1%.: /v2/orders and /v2/payments.")


@pytest.fixture
def api_escalation():
    incident = make_incident("inc_api_4021", title="Public API latency", status="mitigated", facts=[
        ("api_error_rate", "API error rate", "0.021", "ratio"),
        ("affected_endpoints", "Affected endpoints", "/v2/orders and /v2/payments", "text")])
    return make_escalation(incident=incident, text=DRAFT)


def test_a_leads_edit_with_stray_punctuation_is_flagged(api_escalation):
    result = decisions.guard_edit(api_escalation, BROKEN)

    assert not result["ok"]
    assert [(v["check"], v["found"]) for v in result["violations"]] == [
        ("patch_violation:malformed_text", "2.1%.: /v2/orders")]
    assert result["violations"][0]["message"] == "The text has stray punctuation: “2.1%.: /v2/orders”."


def test_the_same_edit_without_the_slip_passes(api_escalation):
    assert decisions.guard_edit(api_escalation, BROKEN.replace("2.1%.:", "2.1%. Endpoints:"))["ok"]


def test_approving_a_broken_edit_needs_a_justification(api_escalation, users):
    with pytest.raises(DecisionInvalid, match="justification"):
        decisions.decide(api_escalation.pk, users.lead, "edit_approve", text=BROKEN, note="")
    assert not Decision.objects.exists()


def test_a_leads_edit_that_says_nothing_is_flagged(api_escalation):
    result = decisions.guard_edit(api_escalation, "2026-11-24")

    assert "patch_violation:uninformative" in [v["check"] for v in result["violations"]]

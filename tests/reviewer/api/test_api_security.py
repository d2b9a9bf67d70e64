"""The API's doors hold the same rules as the pages: claims on escalations, admin-set incident
fields, the bounds of an incident context, oversized bodies, and Idempotency-Keys through broker faults."""

from django.utils import timezone

from reviewer.models import Decision, Escalation

# ---------------------------------------------------------------- claims


def test_a_lead_cannot_decide_over_another_leads_claim_without_decide_anyway(api, demo_runs, users):
    escalation = Escalation.objects.get(stop_reason="policy_escalation")
    Escalation.objects.filter(pk=escalation.pk).update(claimed_by=users.lead2, claimed_at=timezone.now())
    lead = api("lead")

    refused = lead.post(f"/escalations/{escalation.pk}/decision", {"action": "approve"})

    assert refused.status_code == 409
    assert refused.json()["message"] == ("Lars claimed this escalation; send “decide_anyway”: true "
                                         "to decide it in their place.")
    assert refused.json()["claimed_by"] == "lead2"
    assert not Decision.objects.exists()

    taken = lead.post(f"/escalations/{escalation.pk}/decision", {"action": "approve", "decide_anyway": True})
    assert taken.status_code == 201 and taken.json()["decided_by"] == "lead"


def test_the_lead_holding_the_claim_decides_without_decide_anyway(api, demo_runs, users):
    escalation = Escalation.objects.get(stop_reason="policy_escalation")
    Escalation.objects.filter(pk=escalation.pk).update(claimed_by=users.lead, claimed_at=timezone.now())

    taken = api("lead").post(f"/escalations/{escalation.pk}/decision", {"action": "approve"})

    assert taken.status_code == 201

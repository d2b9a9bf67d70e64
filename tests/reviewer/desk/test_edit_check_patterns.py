"""A lead's "check with the guard" under hostile restricted-claim patterns. The check runs under the
policy that applies now, so the hostile patterns are in the policy rows (stored without admin's check,
as a database edit could) as well as in the run's snapshot. The web process answers promptly (it blocked
for 21 s on 27 characters before RE2), and a pattern RE2 refuses is shown as a violation a lead must
justify, never skipped."""

import time

import pytest
from django.urls import reverse

from agents.core.policy import default_policy
from agents.models import Incident, PipelinePolicy, RestrictedClaim, Run
from reviewer.desk import decisions
from reviewer.models import Escalation
from tests.agents.test_patterns import CATASTROPHIC

HTMX = {"HTTP_HX_REQUEST": "true"}
LIMIT = 20_000  # the largest max_answer_chars admin allows


@pytest.fixture
def escalation_under(db):
    def make(patterns, text: str) -> Escalation:
        incident = Incident.objects.create(incident_id="inc_hostile", title="Hostile patterns", regions=["US"],
                                           status="degraded")
        policy = default_policy("reflection").to_dict()
        policy["guard"]["restricted_claims"] = list(patterns)
        policy["max_answer_chars"] = LIMIT
        RestrictedClaim.objects.update(enabled=False)
        for pattern in patterns:
            RestrictedClaim.objects.update_or_create(pattern=pattern, defaults={"enabled": True})
        PipelinePolicy.objects.filter(pipeline="reflection", active=True).update(max_answer_chars=LIMIT)
        context = {**incident.context(), "key_messages": [text]}  # evidence the claims check reads
        run = Run.objects.create(pipeline="reflection", goal="Write the update.", incident=incident,
                                 context=context, policy=policy, status=Run.Status.STOPPED,
                                 stop_reason="policy_escalation")
        draft = "We are investigating a payment problem. " + text
        return Escalation.objects.create(run=run, stop_reason="policy_escalation", draft=draft, candidate=draft,
                                         reason="Needs a person.")

    return make


@pytest.mark.parametrize("pattern", CATASTROPHIC)
def test_the_lead_check_answers_promptly_under_a_catastrophic_pattern(login, escalation_under, pattern):
    hostile = CATASTROPHIC[pattern][: LIMIT - 200]
    escalation = escalation_under([pattern], hostile)
    edit = "We are looking into a payment problem. " + hostile
    lead = login("lead")

    # CPU time of this thread, which serves the request (the test client): what a pattern that
    # backtracks burns, and what a loaded machine does not stretch.
    started = time.thread_time()
    response = lead.post(reverse("escalation_check", args=[escalation.pk]), {"text": edit}, **HTMX)
    elapsed = time.thread_time() - started

    print(f"{pattern}: the lead's check on {len(edit)} characters answered in {elapsed * 1000:.0f} ms")
    assert response.status_code == 200 and 'id="edit-violations"' in response.content.decode()
    # A pattern that backtracks would burn minutes on this text; about 0.1-0.7 s is the check itself, and
    # a machine busy with other work stretches even CPU time (shared caches): 3 s tells the two apart.
    assert elapsed < 3.0


def test_the_lead_check_shows_a_pattern_re2_refuses_and_approval_needs_a_justification(
        login, users, escalation_under):
    escalation = escalation_under([r"\bresolved\b", r"(?<!not )fixed"], "Payments are slow.")
    edit = "We are looking into a payment problem. Payments are slow."

    response = login("lead").post(reverse("escalation_check", args=[escalation.pk]), {"text": edit}, **HTMX)

    html = response.content.decode()
    assert response.status_code == 200
    assert "The restricted-claim pattern “(?&lt;!not )fixed” cannot be checked safely" in html
    assert "A person must check the text for it." in html
    with pytest.raises(decisions.DecisionInvalid, match="justification"):
        decisions.decide(escalation.pk, users.lead, "edit_approve", text=edit)

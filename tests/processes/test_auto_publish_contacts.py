"""A model that slips a phishing link and a channel mention into an incident update, under a policy that
publishes by itself, in a real Celery worker: the run ends with a person (an open escalation), and nothing
reaches a channel (docs/publishing.md, 'Publishing: updates that reach customers')."""

import pytest

from agents.models import PipelinePolicy, Run
from agents.tasks import start_run
from agents.testing.scripted_demo import APPROVE
from agents.testing.scripted_server import tool_call
from reviewer.models import Delivery, DeliveryChannel, Escalation, PublishedUpdate
from tests.conftest import WEBHOOK_SECRET
from tests.factories import wait_for

pytestmark = pytest.mark.worker

PHISHING = ("We are investigating a payment problem in the US. About 27% of checkouts are affected. "
            "<https://acme-verify.example|Click to verify your card> <!channel>")


def test_a_phishing_link_under_auto_publish_goes_to_a_person_and_nowhere_else(
        start_worker, demo_data, fake_openai, webhook_receiver):
    receiver = webhook_receiver()
    DeliveryChannel.objects.create(name="Signed hook", kind="webhook", destination="hook")
    DeliveryChannel.objects.create(name="Customer mail", kind="email", recipients="customers@example.com")
    PipelinePolicy.objects.filter(pipeline="reflection", active=True).update(auto_publish=True)
    fake_openai.script(tool_call("submit_draft", {"draft": PHISHING}), tool_call("reflect", APPROVE))
    start_worker(OPENAI_API_KEY="sk-worker-test", OPENAI_BASE_URL=fake_openai.base_url, OPENAI_MAX_RETRIES="0",
                 OPENAI_MODEL="test-model", OUTBOUND_DESTINATIONS=f"hook={receiver.url}|HOOK_SECRET",
                 HOOK_SECRET=WEBHOOK_SECRET)

    run, _ = start_run(pipeline="reflection", goal="Customer update", incident=demo_data["inc_pay_2041"])
    done = wait_for(lambda: Run.objects.filter(pk=run.pk, status__in=["ok", "stopped"]).first(), message="the end")

    assert done.policy["auto_publish"] is True and len(fake_openai.requests) == 2
    assert done.stop_reason == "invalid_answer:unknown_contact"
    escalation = Escalation.objects.get(run=done)
    assert escalation.status == Escalation.Status.PENDING and escalation.stop_reason == done.stop_reason
    checks = {(v["check"], v["found"]) for v in escalation.guard["violations"]}
    assert {("invalid_answer:unknown_contact", "https://acme-verify.example"),
            ("invalid_answer:markup", "<!channel>"),
            ("invalid_answer:auto_publish_contact", "<!channel>")} <= checks
    assert not PublishedUpdate.objects.exists() and not Delivery.objects.exists()
    assert not receiver.requests and not receiver.accepted and receiver.bad_signatures == 0

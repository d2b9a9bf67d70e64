"""The trace of a run: each model call keeps the request it sent (the system and user messages, keys
redacted), and while a call is in flight the run says which stage is asking."""

from __future__ import annotations

import dataclasses

import pytest

from agents.core.llm.base import LLM, ModelReply, StageRequest
from agents.core.llm.offline import OfflineModel
from agents.models import ModelCall, Run
from agents.tasks import run_now, start_run
from agents.testing.scripted_demo import APPROVE, DRAFT, REVISE, REVISED
from agents.testing.scripted_server import tool_call
from tests.agents.test_redaction import KEY, model_env  # noqa: F401 (a fixture)
from tests.drills.conftest import goal_for, start_scripted

pytestmark = pytest.mark.django_db


def test_each_model_call_stores_the_messages_the_server_received(model_env, demo_data, fake_openai):  # noqa: F811
    model_env.setenv("OPENAI_API_KEY", KEY)
    model_env.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    run = start_scripted(fake_openai, demo_data["inc_pay_2041"], "trace-requests", [
        tool_call("submit_draft", {"draft": DRAFT}), tool_call("reflect", REVISE),
        tool_call("submit_revision", {"revised_answer": REVISED}),
    ])

    run_now(run.pk)

    calls = list(ModelCall.objects.filter(run=run).order_by("id"))
    assert [c.stage for c in calls] == ["draft", "review", "revise"]
    sent = [request["messages"] for request in fake_openai.requests]
    assert [c.request for c in calls] == sent
    assert [m["role"] for m in calls[0].request] == ["system", "user"]
    assert "submit_draft" in calls[0].request[0]["content"]  # the draft stage's instructions
    assert goal_for("trace-requests") in calls[0].request[1]["content"]


def test_a_key_in_the_request_is_stored_redacted(model_env, demo_data, fake_openai):  # noqa: F811
    model_env.setenv("OPENAI_API_KEY", KEY)
    model_env.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    fake_openai.script(tool_call("submit_draft", {"draft": DRAFT}), tool_call("reflect", APPROVE))
    run, _ = start_run(pipeline="reflection", goal=f"Write the update. Our key is {KEY}",
                       incident=demo_data["inc_pay_2041"])

    run_now(run.pk)

    assert KEY in fake_openai.requests[0]["messages"][1]["content"]  # the model was sent it (the goal)
    stored = ModelCall.objects.filter(run=run).first().request
    assert KEY not in str(stored) and "[redacted]" in stored[1]["content"]


def test_the_offline_model_records_its_request_too(demo_data):
    run, _ = start_run(pipeline="self_critique", goal="Write the wallet update.", incident=demo_data["inc_wallet_77"])

    run_now(run.pk, llm=OfflineModel())

    for call in ModelCall.objects.filter(run=run):
        assert [m["role"] for m in call.request] == ["system", "user"], call.stage
        assert call.request[0]["content"].strip() and call.request[1]["content"].strip()


@dataclasses.dataclass
class Peeking:
    """A model that, while each call is in flight, reads what the run row says it is doing."""

    inner: LLM
    seen: list = dataclasses.field(default_factory=list)
    label = "peeking"
    endpoint = "offline"

    def complete(self, request: StageRequest) -> ModelReply:
        run = Run.objects.get()
        self.seen.append((request.stage, run.working_on, run.working_call))
        return self.inner.complete(request)


def test_while_a_call_is_in_flight_the_run_names_its_stage_and_number(demo_data):
    run, _ = start_run(pipeline="reflection", goal="Write the customer update.", incident=demo_data["inc_pay_2041"])
    model = Peeking(OfflineModel())

    run_now(run.pk, llm=model)

    assert model.seen == [("draft", "draft", 1), ("review", "review", 2), ("revise", "revise", 3)]
    run.refresh_from_db()
    assert (run.status, run.working_on, run.working_call) == ("ok", "", None)  # cleared at the end

"""A slow model server does not pile up (docs/running.md, "Local servers"): an endpoint takes at most
its declared number of calls at once, across threads and processes, every request carries its
completion ceiling, and a run that cannot get a slot within its time budget stops as ``max_seconds``
without sending anything."""

from __future__ import annotations

import json
import threading
import time
from datetime import timedelta

import pytest
import time_machine
from django.utils import timezone

from agents.core.llm.base import StageRequest
from agents.core.llm.client import OpenAIChat, effective_policy
from agents.core.llm.endpoints import Endpoint
from agents.core.llm.slots import lease_seconds
from agents.core.pipelines import run_reflection
from agents.core.policy import ModelSettings, ReflectionPolicy
from agents.models import EndpointLimit, EndpointSlot, PipelinePolicy, PolicyChange, Run
from agents.slots import DatabaseSlots
from agents.tasks import run_now, start_run
from agents.testing.scripted_demo import APPROVE, DEMO_CONTEXT, DRAFT, GOAL
from agents.testing.scripted_server import tool_call
from tests.concurrency import at_once
from tests.factories import wait_for
from tests.reviewer.test_access import make_policy_admin

TIMEOUT = 1.5  # the SDK's real timeout: the client giving up on a server that keeps working is under test
SETTINGS = ModelSettings(model="test-model", timeout_seconds=TIMEOUT, max_retries=0)


class PollClock:
    """The clock of a call that waits for a slot: it moves only when the call sleeps between two
    polls, so a run's whole time budget is waited out without the test waiting for it."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        time.sleep(0)  # let the other threads run


def local_endpoint(fake, **limits) -> Endpoint:
    limits = {"concurrency": 1, "max_completion_tokens": 160, **limits}
    return Endpoint("local", fake.base_url, limit_param="max_tokens", **limits)


def chat(fake, slots=None, clock=None, settings=SETTINGS, **limits) -> OpenAIChat:
    clock = clock or PollClock()
    return OpenAIChat(settings, endpoint=local_endpoint(fake, **limits), slots=slots or DatabaseSlots(),
                      clock=clock, sleep=clock.sleep)


def reflection_run(demo_data) -> Run:
    run, _ = start_run(pipeline="reflection", goal="Update", incident=demo_data["inc_pay_2041"], enqueue=False)
    return run


@pytest.mark.django_db(transaction=True)
def test_runs_queue_for_the_only_slot_of_a_server_that_keeps_working_and_none_piles_onto_it(
        demo_data, fake_openai, held_replies, clean_model_env):
    held = held_replies()  # the server keeps every request until the test lets it finish
    PipelinePolicy.objects.filter(pipeline="reflection", active=True).update(max_seconds=5)
    runs = [reflection_run(demo_data) for _ in range(3)]

    # Three runs at once against an endpoint that takes one call. The first to take the slot sends its
    # draft request, and its client gives up after 1.5 s while the server keeps working on it; the
    # others wait for the slot for the whole of their 5 s budget (on a clock that moves as they poll).
    ends = at_once(lambda i: run_now(runs[i].pk, llm=chat(fake_openai)).stop_reason, 3)

    assert sorted(ends) == ["llm_timeout", "max_seconds", "max_seconds"]
    assert len(fake_openai.requests) == 1 and fake_openai.max_in_flight == 1  # nothing piled onto it
    waited = Run.objects.filter(pk__in=[r.pk for r in runs], stop_reason="max_seconds")
    assert waited.count() == 2
    for run in waited:
        assert run.status == Run.Status.STOPPED and run.finished_at is not None  # recorded, none stuck
        assert "takes 1 call(s) at once and none came free" in run.details["message"]
        assert run.calls.count() == 0  # nothing was sent for it
    # The abandoned call keeps its slot (not given back; its lease runs): the server is still generating.
    assert EndpointSlot.objects.filter(endpoint="local").exclude(token="").count() == 1

    # The server finishes the abandoned answer; the slot's lease (timeout + margin) runs out.
    held.release()
    wait_for(lambda: fake_openai.in_flight == 0, message="the server to finish the abandoned answer")
    fake_openai.script(tool_call("submit_draft", {"draft": DRAFT}), tool_call("reflect", APPROVE))
    with time_machine.travel(timezone.now() + timedelta(seconds=lease_seconds(TIMEOUT) + 1)):
        next_run = reflection_run(demo_data)
        assert run_now(next_run.pk, llm=chat(fake_openai)).stop_reason == "success"
        assert DatabaseSlots().held("local") == 0  # released once answered

    assert fake_openai.max_in_flight == 1
    # The completion ceiling went with every request, in the parameter the endpoint reads.
    assert [request["max_tokens"] for request in fake_openai.requests] == [160, 160, 160]
    assert not any("max_completion_tokens" in request for request in fake_openai.requests)
    next_run.refresh_from_db()
    assert next_run.details["model_settings"]["concurrency"] == 1


@pytest.mark.django_db(transaction=True)
def test_a_waiting_call_goes_as_soon_as_the_call_before_it_is_answered(fake_openai, held_replies):
    held = held_replies(tool_call("submit_draft", {"draft": DRAFT}), tool_call("submit_draft", {"draft": DRAFT}))
    refused = threading.Event()

    class WatchedSlots(DatabaseSlots):
        def take(self, endpoint, capacity, lease_seconds):
            token = super().take(endpoint, capacity, lease_seconds)
            if token is None:
                refused.set()
            return token

    settings = ModelSettings(model="test-model", timeout_seconds=30, max_retries=0)
    request = StageRequest("draft", "Write.", "The incident.", "submit_draft", time_left=30)

    def call(i: int) -> str:
        if i == 1:  # the second call starts once the first is on the server
            wait_for(lambda: fake_openai.in_flight == 1, message="the first call on the server")
        return chat(fake_openai, WatchedSlots(), clock=_RealClock(), settings=settings).complete(request).text

    done = []
    thread = threading.Thread(target=lambda: done.extend(at_once(call, 2)))
    thread.start()
    assert refused.wait(30)  # the second call found the slot taken and waits
    assert len(fake_openai.requests) == 1
    held.release()  # the first is answered: its slot is free, the second goes
    wait_for(lambda: len(fake_openai.requests) == 2, message="the second call")
    held.release()
    thread.join(30)
    assert [json.loads(text)["draft"] for text in done] == [DRAFT, DRAFT]
    assert fake_openai.max_in_flight == 1 and DatabaseSlots().held("local") == 0


class _RealClock:
    """time.monotonic with real sleeps, for a call that waits for another to be answered."""

    def __call__(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


@pytest.mark.django_db(transaction=True)
def test_two_connections_contend_for_one_slot_and_exactly_one_wins_each_round():
    slots = DatabaseSlots()
    for _ in range(10):
        tokens = at_once(lambda i: slots.take("local", 1, 60), 2)  # each thread on its own connection
        winners = [token for token in tokens if token is not None]
        assert len(winners) == 1, tokens
        assert slots.held("local") == 1
        slots.release("local", winners[0])
        assert slots.held("local") == 0


@pytest.mark.django_db
def test_a_slot_whose_holder_died_is_taken_again_once_its_lease_is_over():
    slots = DatabaseSlots()
    dead = slots.take("local", 1, lease_seconds=40)  # its worker was killed: nobody releases it
    assert dead is not None and slots.take("local", 1, 40) is None
    with time_machine.travel(timezone.now() + timedelta(seconds=41)):
        alive = slots.take("local", 1, 40)
        assert alive is not None
        slots.release("local", dead)  # a late release of the lapsed lease frees nothing
        assert slots.held("local") == 1
    # A second slot is there once the endpoint takes two calls.
    assert slots.take("local", 2, 40) is not None and slots.take("local", 2, 40) is None


@pytest.mark.django_db
def test_a_call_with_less_time_left_than_the_endpoints_minimum_is_not_sent(fake_openai):
    llm = chat(fake_openai, concurrency=None, min_call_seconds=30)
    result = run_reflection(GOAL, DEMO_CONTEXT, ReflectionPolicy(max_seconds=20, model=SETTINGS), llm)
    assert (result.stop_reason, result.phase) == ("max_seconds", "draft")
    assert "less than the endpoint's min_call_seconds (30); no request was sent" in result.details["message"]
    assert fake_openai.requests == []


@pytest.mark.django_db
def test_the_limits_a_policy_admin_sets_for_an_endpoint_reach_the_next_call(client, fake_openai, clean_model_env):
    client.force_login(make_policy_admin())  # staff with the role's permissions, not a superuser
    response = client.post("/admin/agents/endpointlimit/add/",
                                 {"endpoint": "local", "concurrency": "1", "max_completion_tokens": "160"})
    assert response.status_code == 302
    assert PolicyChange.objects.filter(model_label="agents.endpointlimit", action="added").exists()

    clean_model_env.setenv("LLM_ENDPOINTS", f"local={fake_openai.base_url};limit_param=max_tokens")
    policy = effective_policy(ReflectionPolicy(max_seconds=30, model=ModelSettings(endpoint="local")),
                              slots=DatabaseSlots())
    assert policy.model.max_completion_tokens == 160  # the policy's 1024, lowered to the endpoint's
    llm = chat(fake_openai, concurrency=None, max_completion_tokens=None)  # as declared: no limits
    assert llm.limited_endpoint().concurrency == 1
    fake_openai.script(tool_call("submit_draft", {"draft": DRAFT}))
    llm.complete(StageRequest("draft", "Write.", "The incident.", "submit_draft", max_completion_tokens=514))
    assert fake_openai.requests[0]["max_tokens"] == 160

    EndpointLimit.objects.filter(endpoint="local").update(max_completion_tokens=None, concurrency=None)
    assert llm.limited_endpoint().concurrency is None  # read on every call: a change reaches the next one


def test_an_admin_cannot_set_a_limit_outside_its_range(admin_client, db):
    response = admin_client.post("/admin/agents/endpointlimit/add/",
                                 {"endpoint": "local", "concurrency": "0", "max_completion_tokens": "8"})
    assert response.status_code == 200
    assert not EndpointLimit.objects.exists()
    errors = response.context["adminform"].form.errors
    assert "greater than or equal to 1" in str(errors["concurrency"])
    assert "greater than or equal to 16" in str(errors["max_completion_tokens"])


@pytest.mark.django_db
def test_a_run_reads_the_endpoint_limits_once_and_a_change_reaches_the_next_run(demo_data, fake_openai,
                                                                               clean_model_env, monkeypatch):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from agents.observer import DatabaseObserver

    clean_model_env.setenv("LLM_ENDPOINTS", f"local={fake_openai.base_url};limit_param=max_tokens")
    PipelinePolicy.objects.filter(pipeline="reflection", active=True).update(endpoint="local")
    EndpointLimit.objects.create(endpoint="local", max_completion_tokens=160)
    recorded = DatabaseObserver.on_model_call

    def recorded_then_changed(self, run_id, record):  # an admin lowers the ceiling after each call
        recorded(self, run_id, record)
        EndpointLimit.objects.filter(endpoint="local").update(max_completion_tokens=120)

    monkeypatch.setattr(DatabaseObserver, "on_model_call", recorded_then_changed)
    replies = [tool_call("submit_draft", {"draft": DRAFT}), tool_call("reflect", APPROVE)]
    fake_openai.script(*replies)
    with CaptureQueriesContext(connection) as queries:
        assert run_now(reflection_run(demo_data).pk).stop_reason == "success"
    assert [request["max_tokens"] for request in fake_openai.requests] == [160, 160]  # what the run started with
    assert sum('"agents_endpointlimit"' in query["sql"] and query["sql"].startswith("SELECT")
               for query in queries.captured_queries) == 1

    fake_openai.script(*replies)
    assert run_now(reflection_run(demo_data).pk).stop_reason == "success"
    assert [request["max_tokens"] for request in fake_openai.requests[2:]] == [120, 120]  # the next run reads it

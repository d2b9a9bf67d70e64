"""Helpers of the fault drills: reflection runs scripted per run on the scripted server.

Each run's goal carries a unique marker, so the server answers it from its own script
(``ScriptedServer.script_for``) and the requests that reached the server can be counted per run.
(This folder's fixtures come from ``tests/conftest.py``.)
"""

from __future__ import annotations

import time

from agents.models import ModelCall, Run, TraceStep
from agents.tasks import start_run
from agents.testing.scripted_demo import APPROVE, DRAFT, GOAL, REVISE, REVISED
from agents.testing.scripted_server import Reply, ScriptedServer, tool_call

TERMINAL = ("ok", "stopped", "interrupted")
STAGES = ("draft", "review", "revise")
TOOLS = {"draft": "submit_draft", "review": "reflect", "revise": "submit_revision"}


def good_reply(stage: str, *, revise: bool = False) -> Reply:
    """The answer that lets ``stage`` pass; the review asks for a revision when ``revise``."""
    if stage == "draft":
        return tool_call("submit_draft", {"draft": DRAFT})
    if stage == "review":
        return tool_call("reflect", REVISE if revise else APPROVE)
    return tool_call("submit_revision", {"revised_answer": REVISED})


def clean_script(*, revise: bool = False) -> list[Reply]:
    """A whole run that succeeds: draft, review (approve, or revise then the revision)."""
    stages = STAGES if revise else STAGES[:2]
    return [good_reply(stage, revise=revise) for stage in stages]


def goal_for(marker: str) -> str:
    """A goal that carries ``marker`` in brackets; "[loss-1]" is no part of "[loss-10]"."""
    return f"{GOAL} [{marker}]"


def script(fake: ScriptedServer, marker: str, replies: list[Reply]) -> None:
    """Append ``replies`` to the answers for the requests of the run(s) with ``marker``."""
    if replies:
        fake.script_for(f"[{marker}]", *replies)


def start_scripted(fake: ScriptedServer, incident, marker: str, replies: list[Reply]) -> Run:
    """A queued reflection run whose model requests are answered by ``replies``, in order."""
    script(fake, marker, replies)
    run, _ = start_run(pipeline="reflection", goal=goal_for(marker), incident=incident)
    return run


def requests_for(fake: ScriptedServer, marker: str) -> list[str]:
    """The stages (by tool name) of the requests with ``marker`` that reached the server, in order."""
    tag = f"[{marker}]"
    stages = {tool: stage for stage, tool in TOOLS.items()}
    return [stages.get(req.get("tool_choice", {}).get("function", {}).get("name"), "?")
            for req in list(fake.requests) if tag in req["messages"][-1]["content"]]


def outcomes(run: Run) -> list[str]:
    return list(ModelCall.objects.filter(run=run).order_by("id").values_list("outcome", flat=True))


def trace(run: Run) -> list[tuple[int, str, str]]:
    return list(TraceStep.objects.filter(run=run).order_by("index").values_list("index", "phase", "status"))


def worker_errors(*workers) -> str:
    """The error lines of the workers' logs (a run that never ends usually left its reason there)."""
    lines = [line[:300] for worker in workers
             for line in worker.log_path.read_text(errors="replace").splitlines()
             if "ERROR" in line or "Error" in line[:80]]
    return "\n".join(lines)[-4000:] or "(none)"


def wait_for_end(runs: list[Run], *workers, timeout: float = 30, alive=None) -> list[Run]:
    """The runs, reloaded once every one of them is terminal; a timeout names the stuck ones.

    ``alive``: a worker that must not die meanwhile (its death fails at once, with its log's errors).
    """
    pks = [run.pk for run in runs]
    deadline = time.monotonic() + timeout
    while Run.objects.filter(pk__in=pks).exclude(status__in=TERMINAL).exists():
        if alive is not None and alive.process.poll() is not None:
            raise AssertionError(f"the worker died; its errors:\n{worker_errors(*workers)}")
        if time.monotonic() > deadline:
            stuck = dict(Run.objects.filter(pk__in=pks).exclude(status__in=TERMINAL).values_list("pk", "status"))
            raise AssertionError(f"runs not ended after {timeout}s: {stuck}; worker errors:\n{worker_errors(*workers)}")
        time.sleep(0.05)
    by_pk = Run.objects.in_bulk(pks)
    return [by_pk[pk] for pk in pks]

"""Replay a stored run under another policy, with the model answers it recorded (docs/policy-lab.md).

A run keeps every model answer, in order, and the gates are deterministic: run the pipeline again
under a proposed policy with a :class:`PlaybackModel` that gives back the recorded answers, and
wherever the path does not change the replay is exact. Where the new path needs an answer the run
never recorded (another stage, one more attempt, a delegation with other arguments), the playback
raises :class:`Diverged` and the run is reported as diverged: nothing is guessed.

A replay never calls a model, never calls a specialist (the recorded observations stand in for
them), never sends a message and writes nothing: it returns a :class:`Replayed`.
"""

from __future__ import annotations

import collections
import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agents.core.llm.base import CallRecord, LLMError, ModelReply, StageRequest
from agents.core.pipelines import RunResult, run_pipeline
from agents.core.policy import POLICY_CLASSES, Policy
from agents.core.specialists import Worker, WorkerArgsError
from agents.core.text import canonical_json, normalize

# The classes of a replayed run, in the order a report lists them.
UNCHANGED, WOULD_STOP, WOULD_PASS, DIVERGED, NOT_REPLAYABLE = (
    "unchanged", "would_stop", "would_pass", "diverged", "not_replayable")
VERDICTS: dict[str, str] = {
    WOULD_STOP: "would stop: the proposed policy stops a run that passed, or stops it for another reason",
    WOULD_PASS: "would pass: the proposed policy lets through a run that stopped, or ends it with another text",
    UNCHANGED: "unchanged: the same ending, the same text",
    DIVERGED: "diverged: the new path needs a model answer (or a specialist's) the run never recorded",
    NOT_REPLAYABLE: "not replayable: the run cannot be replayed (not finished, nothing recorded, an old format)",
}
FLIPS = (WOULD_STOP, WOULD_PASS)
FINISHED = ("ok", "stopped")


class Diverged(BaseException):
    """The replay needs an answer the run never recorded.

    A ``BaseException`` on purpose: the frame turns every ``Exception`` a pipeline raises into a
    result (``internal_error:…``), and a replay that left the recorded path has no result to give.
    ``what`` says which call or delegation was missing, for the report.
    """

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what


@dataclass(frozen=True)
class Ending:
    """How a run ended, as far as a policy decides it: its status, stop reason and text."""

    status: str
    stop_reason: str
    text: str = ""  # the answer of a run that passed, the blocked candidate of one that stopped
    selected_route: str = ""
    phase: str = ""

    @classmethod
    def of(cls, result: RunResult) -> Ending:
        text = result.answer if result.ok else result.candidate
        return cls(status=result.status, stop_reason=result.stop_reason, text=text or "",
                   selected_route=result.selected_route or "", phase=result.phase or "")

    def same_as(self, other: Ending) -> bool:
        return (self.status, self.stop_reason, normalize(self.text), self.selected_route) == (
            other.status, other.stop_reason, normalize(other.text), other.selected_route)


@dataclass(frozen=True)
class Delegation:
    """One call of a specialist the run made, from its trace: what it asked and what came back
    (``observation``), or the stop it ended in (``stop_reason``, ``error``)."""

    target: str
    args: Mapping[str, Any]
    observation: Mapping[str, Any] | None = None
    stop_reason: str = ""
    error: str = ""


@dataclass(frozen=True)
class Recording:
    """What a stored run holds that a replay needs: its inputs, its policy snapshot, every model call
    of its last delivery in order, its delegations, and how it ended."""

    pipeline: str
    status: str
    goal: str
    context: Mapping[str, Any]
    policy: Mapping[str, Any]
    calls: Sequence[CallRecord]
    ending: Ending
    delegations: Sequence[Delegation] = ()
    run_id: str = ""


@dataclass(frozen=True)
class Replayed:
    """A run's replay: its class, how it ended and how it would end, and a note (what was missing
    for a diverged run, why a run is not replayable, what the comparison was against)."""

    verdict: str
    before: Ending
    after: Ending | None = None
    note: str = ""
    usage: dict = field(default_factory=dict)

    @property
    def flipped(self) -> bool:
        return self.verdict in FLIPS

    @property
    def group(self) -> str:
        """Where the report counts it: a flip by its new stop reason, the others by their class."""
        if self.verdict == WOULD_STOP and self.after is not None:
            return self.after.stop_reason
        return self.verdict


# -- the playback model ------------------------------------------------------------------------


@dataclass(frozen=True)
class _Answer:
    """One model call as the pipeline saw it: every try of it, the last one deciding."""

    stage: str
    attempt: int
    tries: tuple[CallRecord, ...]

    @property
    def latency_seconds(self) -> float:
        return sum(t.latency_ms for t in self.tries) / 1000


def answers(calls: Sequence[CallRecord]) -> list[_Answer]:
    """The recorded calls grouped as the pipeline made them: a transport retry (try 2, 3, …) of the
    same stage and attempt belongs to the call before it."""
    grouped: list[_Answer] = []
    for call in calls:
        last = grouped[-1] if grouped else None
        if last is not None and call.try_number > 1 and (last.stage, last.attempt) == (call.stage, call.attempt):
            grouped[-1] = _Answer(last.stage, last.attempt, (*last.tries, call))
        else:
            grouped.append(_Answer(call.stage, call.attempt, (call,)))
    return grouped


class PlaybackModel:
    """An LLM client that answers each request with the run's recorded answer at the same position,
    for the same stage and attempt; anything else raises :class:`Diverged`. Its ``elapsed`` advances
    by the recorded latencies, so the wall-time budget sees the time the run's model took."""

    label = "playback of recorded answers"
    endpoint = "playback"

    def __init__(self, calls: Sequence[CallRecord]):
        self.answers = answers(calls)
        self.position = 0
        self.elapsed = 0.0

    def clock(self) -> float:
        return self.elapsed

    def complete(self, request: StageRequest) -> ModelReply:
        number = self.position + 1
        asked = f"model call {number} ({request.stage}, attempt {request.attempt})"
        if self.position >= len(self.answers):
            raise Diverged(f"{asked}: the run recorded only {len(self.answers)} model call(s)")
        answer = self.answers[self.position]
        if (answer.stage, answer.attempt) != (request.stage, request.attempt):
            raise Diverged(f"{asked}: the run's call {number} was {answer.stage}, attempt {answer.attempt}")
        self.position += 1
        self.elapsed += answer.latency_seconds
        last = answer.tries[-1]
        if last.outcome != "ok":  # the endpoint failed then: it fails the same way now
            raise LLMError(last.outcome, last.error, calls=answer.tries)
        return ModelReply(
            text=last.raw, via_tool=request.tool is not None,
            prompt_tokens=sum(t.prompt_tokens for t in answer.tries),
            completion_tokens=sum(t.completion_tokens for t in answer.tries), calls=answer.tries,
        )


def playback_workers(delegations: Sequence[Delegation], routes: Mapping[str, Any]) -> dict[str, Worker]:
    """Specialists that give back what the run's delegations got, for the same target and arguments;
    a call the run never made raises :class:`Diverged`. ``routes`` (the policy's) name each
    target's worker."""
    recorded: dict[tuple[str, str], Delegation] = {}
    for delegation in delegations:
        recorded.setdefault((delegation.target, canonical_json(dict(delegation.args))), delegation)
    by_worker: dict[str, list[str]] = {}
    for target, route in routes.items():
        by_worker.setdefault(route.worker, []).append(target)

    def worker_for(name: str) -> Worker:
        def play(args: dict[str, Any]) -> dict[str, Any]:
            key = canonical_json(args)
            found = next((recorded[(t, key)] for t in by_worker.get(name, ()) if (t, key) in recorded), None)
            if found is None:
                raise Diverged(f"delegation to {name} with arguments {key}: the run never made it")
            if found.observation is not None:
                return copy.deepcopy(dict(found.observation))
            if found.stop_reason.startswith("route_bad_args:"):
                raise WorkerArgsError(found.error)
            raise RuntimeError(found.error or found.stop_reason)

        return play

    return {name: worker_for(name) for name in by_worker}


def delegations_from_trace(steps: Sequence[Mapping[str, Any]], details: Mapping[str, Any] | None = None) -> list[
        Delegation]:
    """The delegations of a routing run from its trace steps (``phase``, ``status``, ``stop_reason``,
    ``output``): each ``route`` step's target and arguments, and the ``delegate`` step after it.
    ``details``: the run's stop details, which hold the error of a delegation that stopped it."""
    found: list[Delegation] = []
    asked: Mapping[str, Any] | None = None
    for step in steps:
        output = step.get("output")
        if step.get("phase") == "route":
            asked = output if isinstance(output, Mapping) and "target" in output else None
        elif step.get("phase") == "delegate" and asked is not None:
            target, args = str(asked["target"]), asked.get("args") or {}
            if step.get("status") == "ok" and isinstance(output, Mapping):
                found.append(Delegation(target, args, observation=output))
            elif (reason := step.get("stop_reason") or "").startswith(("route_error:", "route_bad_args:")):
                error = str((details or {}).get("error") or "")
                found.append(Delegation(target, args, stop_reason=reason, error=error))
            elif reason == "route_bad_observation" and isinstance((details or {}).get("observation"), Mapping):
                found.append(Delegation(target, args, observation=details["observation"]))
            asked = None
    return found


# -- replay ------------------------------------------------------------------------------------


def _unreplayable(recording: Recording) -> str:
    """Why the run cannot be replayed, or ""."""
    if recording.pipeline not in POLICY_CLASSES:
        return f"no pipeline is called {recording.pipeline!r}"
    if recording.status not in FINISHED:
        return f"the run did not finish (status {recording.status})"
    if not recording.calls:
        return "the run recorded no model answers"
    if any(pipeline == recording.pipeline and snapshot == recording.policy for pipeline, snapshot in tuple(_READABLE)):
        return ""
    try:
        POLICY_CLASSES[recording.pipeline].from_dict(dict(recording.policy))
    except (TypeError, ValueError, AttributeError) as error:
        return f"its policy snapshot is in an old format ({type(error).__name__}: {error})"
    _READABLE.appendleft((recording.pipeline, recording.policy))
    return ""


# The snapshots last read without error. A replay of many runs meets the same few snapshots again and
# again: comparing a snapshot with one read before costs a fraction of building its policy (a vocabulary
# of some 1,500 terms) to see that it reads.
_READABLE: collections.deque[tuple[str, Mapping[str, Any]]] = collections.deque(maxlen=8)  # (pipeline, snapshot)


def play(recording: Recording, policy: Policy) -> tuple[RunResult | None, str]:
    """The run again under ``policy`` with its recorded answers: (result, "") or (None, what was
    missing) when the replay left the recorded path."""
    model = PlaybackModel(recording.calls)
    workers = None
    if recording.pipeline == "routing":
        snapshot = POLICY_CLASSES["routing"].from_dict(dict(recording.policy))
        workers = playback_workers(recording.delegations, {**snapshot.routes, **policy.routes})
    try:
        result = run_pipeline(recording.pipeline, goal=recording.goal, context=dict(recording.context) or None,
                              policy=policy, llm=model, run_id=recording.run_id or None, workers=workers,
                              clock=model.clock, judge=model)  # a second reader's answers are among the recorded
    except Diverged as diverged:
        return None, diverged.what
    return result, ""


def replay(recording: Recording, proposed: Policy, *, current: Policy | None = None) -> Replayed:
    """Class one stored run under the ``proposed`` policy.

    Compared with how the run ended; with ``current`` (the policy in force now, when the run ran under
    another snapshot), compared with a replay under ``current`` instead, so that only the proposed
    change counts and not what changed since the run.
    """
    before = recording.ending
    why = _unreplayable(recording)
    if why:
        return Replayed(NOT_REPLAYABLE, before, note=why)
    note = ""
    if current is not None:
        baseline, missing = play(recording, current)
        if baseline is None:
            return Replayed(DIVERGED, before, note=f"under the current policy already: {missing}")
        if not Ending.of(baseline).same_as(before):
            note = "compared with a replay under the current policy (the run ran under an older one)"
        before = Ending.of(baseline)
    result, missing = play(recording, proposed)
    if result is None:
        return Replayed(DIVERGED, before, note=missing)
    after = Ending.of(result)
    if after.same_as(before):
        verdict = UNCHANGED
    elif result.ok:
        verdict = WOULD_PASS
    else:
        verdict = WOULD_STOP
    return Replayed(verdict, before, after, note=note, usage=result.usage)

"""The policy lab: what a proposed policy change would have done to the stored runs, before it is saved.

``preview(proposed)`` takes an unsaved row (a pipeline policy, a route, a claim family, a region, an
issue type) as an admin form or a command left it, builds the policy each affected pipeline would
run under (``load_policy(..., proposed=row)``), and replays the last stored runs of those pipelines
with their recorded model answers (``agents.core.replay``). A change of the guard's lists is also
checked against the texts people already decided, through the sources the apps built on this one
register (``register_decided_texts``: this app never imports them). Nothing is called, sent or written.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models

from agents.core.audit import word_diff
from agents.core.guard import check_final_answer, guard_config
from agents.core.llm.base import CallRecord
from agents.core.policy import PIPELINE_NAMES, TEXT_PIPELINES, Policy, TextPolicy
from agents.core.replay import (
    DIVERGED,
    FLIPS,
    NOT_REPLAYABLE,
    UNCHANGED,
    VERDICTS,
    WOULD_PASS,
    WOULD_STOP,
    Delegation,
    Ending,
    Recording,
    Replayed,
    delegations_from_trace,
    replay,
)
from agents.models import (
    GroundingTerm,
    IssueType,
    ModelCall,
    PipelinePolicy,
    RegionToken,
    RestrictedClaim,
    RouteTarget,
    Run,
    TraceStep,
)
from agents.policy_rows import PolicyMissing, load_policy, policy_snapshot
from agents.slots import DatabaseSlots

DEFAULT_RUNS = 1000
MAX_RUNS = 20_000
DEFAULT_DECIDED = 1000
CHUNK = 250  # runs whose calls and steps are read in one query
# Each line of a pattern list is checked on every text a preview replays: a list of thousands made one
# preview take a minute of a web worker's processor. A saved row is not bounded, only what is previewed.
MAX_PREVIEW_PATTERNS = 200
PATTERN_LISTS = {RestrictedClaim: ("paraphrases", "supported_by")}

# Which pipelines a change of each kind of row can change.
GUARD_ROWS = (RestrictedClaim, RegionToken, GroundingTerm)


def pipelines_of(row: models.Model) -> tuple[str, ...]:
    """The pipelines whose policy reads ``row``."""
    if isinstance(row, PipelinePolicy):
        return (row.pipeline,)
    if isinstance(row, RouteTarget):
        return ("routing",)
    if isinstance(row, (*GUARD_ROWS, IssueType)):
        return TEXT_PIPELINES
    raise TypeError(f"the policy lab cannot preview a {type(row).__name__}")


def pattern_list_problems(row: models.Model) -> dict[str, str]:
    """Field -> why a preview refuses it, for each pattern list of ``row`` longer than a preview takes."""
    problems = {}
    for name in PATTERN_LISTS.get(type(row), ()):
        lines = [line for line in (getattr(row, name) or "").splitlines() if line.strip()]
        if len(lines) > MAX_PREVIEW_PATTERNS:
            problems[name] = (f"{len(lines)} patterns: a preview takes at most {MAX_PREVIEW_PATTERNS} in one list. "
                              "Preview a shorter list (the most telling patterns) first.")
    return problems


class PreviewStopped(Exception):
    """The preview was not made, or not finished; the message says why, for the person who asked."""


class PreviewOverBudget(PreviewStopped):
    """The preview used more processor time than ``POLICY_LAB_CPU_SECONDS`` allows."""


class PreviewBusy(PreviewStopped):
    """The person has a preview running already."""


class _Budget:
    """Processor time of this thread (what a preview costs its worker, whatever else the process does)."""

    def __init__(self, seconds: float | None):
        self.seconds = seconds
        self.started = time.thread_time()

    def check(self, done: str) -> None:
        if self.seconds is not None and time.thread_time() - self.started > self.seconds:
            raise PreviewOverBudget(
                f"The preview stopped after {done}: it used more than {self.seconds:g} s of processor time "
                "(POLICY_LAB_CPU_SECONDS). Preview fewer runs or a narrower window, or shorter pattern lists.")


@contextmanager
def one_preview_per_person(user_pk: int) -> Iterator[None]:
    """Hold the person's one preview slot while the block runs; :class:`PreviewBusy` if it is held.

    A slot row in the database (``agents.slots``), shared by every worker process; its lease ends by
    itself if a worker dies mid-preview."""
    slots, name = DatabaseSlots(), f"policy lab: user {user_pk}"
    token = slots.take(name, 1, settings.POLICY_LAB_CPU_SECONDS * 3 + 60)
    if token is None:
        raise PreviewBusy("You have a preview running already: wait for its result, then preview again.")
    try:
        yield
    finally:
        slots.release(name, token)


# -- decided texts, from the apps that hold decisions ------------------------------------------------


@dataclass(frozen=True)
class DecidedText:
    """A text a person decided: ``approved`` (the text as approved, edits included) or ``rejected``
    (the text the gate stopped)."""

    decision: str  # "approved" | "rejected"
    text: str
    context: dict
    pipeline: str
    run_id: int
    label: str  # "escalation 12"
    url: str = ""
    decided_by: str = ""
    decided_at: datetime | None = None


# A source: (pipelines, at most how many, newest first) -> decided texts. Registered by an app's ready().
DecidedTexts = Callable[[Sequence[str], int], Iterable[DecidedText]]
_DECIDED_SOURCES: list[DecidedTexts] = []


def register_decided_texts(source: DecidedTexts) -> None:
    """Let the lab read decided texts from an app built on this one (the review desk registers its
    escalations); registering twice is harmless."""
    if source not in _DECIDED_SOURCES:
        _DECIDED_SOURCES.append(source)


@dataclass(frozen=True)
class TextFlip:
    """A decided text the proposed policy judges otherwise than the current one."""

    decided: DecidedText
    passes_now: bool
    passes_proposed: bool
    violations: tuple[dict, ...]  # the proposed policy's findings (when it blocks)

    @property
    def contradicts(self) -> bool:
        """Against the person's decision: blocks what they approved, or passes what they rejected."""
        return self.passes_proposed != (self.decided.decision == "approved")

    @property
    def sentence(self) -> str:
        verb = "passes" if self.passes_proposed else "blocks"
        return f"{verb} a text {self.decided.decided_by or 'a person'} {self.decided.decision}"


def _passes(text: str, context: dict, policy: Policy) -> tuple[bool, tuple[dict, ...]]:
    assert isinstance(policy, TextPolicy)
    strict = guard_config(policy, context).strict_claims
    result = check_final_answer(text, context, policy.guard, max_answer_chars=policy.max_answer_chars,
                                strict_claims=strict)
    return result.ok, tuple(result.violations)


def judge_decided(texts: Iterable[DecidedText], current: dict[str, Policy],
                  proposed: dict[str, Policy], budget: _Budget | None = None) -> tuple[int, list[TextFlip]]:
    """How many decided texts were judged, and those the proposed policy's final-answer checks judge
    otherwise than the current one's, contradictions of a person's decision first."""
    judged, flips = 0, []
    for decided in texts:
        if budget is not None:
            budget.check(f"judging {judged} decided texts")
        if decided.pipeline not in proposed or decided.pipeline not in current or not decided.text.strip():
            continue
        judged += 1
        now, _ = _passes(decided.text, decided.context, current[decided.pipeline])
        then, violations = _passes(decided.text, decided.context, proposed[decided.pipeline])
        if now != then:
            flips.append(TextFlip(decided, now, then, violations))
    flips.sort(key=lambda f: not f.contradicts)
    return judged, flips


# -- stored runs as recordings ------------------------------------------------------------------------


RUN_FIELDS = ("id", "pipeline", "status", "goal", "context", "policy", "stop_reason", "phase", "answer", "candidate",
              "selected_route", "details", "created_at")
CALL_FIELDS = ("run_id", "delivery", "stage", "attempt", "try_number", "model", "latency_ms", "prompt_tokens",
               "completion_tokens", "outcome", "raw", "error", "note")


def stored_runs(pipelines: Sequence[str], *, last: int = DEFAULT_RUNS, since: datetime | None = None,
                until: datetime | None = None) -> list[dict]:
    """The newest ``last`` runs of ``pipelines`` created in [since, until), as value rows."""
    runs = Run.objects.filter(pipeline__in=pipelines)
    if since is not None:
        runs = runs.filter(created_at__gte=since)
    if until is not None:
        runs = runs.filter(created_at__lt=until)
    return list(runs.order_by("-created_at", "-id").values(*RUN_FIELDS)[:last])


def recordings(rows: Sequence[dict]) -> Iterable[tuple[dict, Recording]]:
    """Each run row with its recording: its model calls of the last delivery (a run taken over after
    its worker was lost keeps the calls of every delivery), and a routing run's delegations."""
    for start in range(0, len(rows), CHUNK):
        chunk = rows[start:start + CHUNK]
        ids = [row["id"] for row in chunk]
        calls: dict[int, list[dict]] = {}
        for call in ModelCall.objects.filter(run_id__in=ids).order_by("run_id", "id").values(*CALL_FIELDS):
            calls.setdefault(call["run_id"], []).append(call)
        steps: dict[int, list[dict]] = {}
        routing = [row["id"] for row in chunk if row["pipeline"] == "routing"]
        if routing:
            for step in (TraceStep.objects.filter(run_id__in=routing, phase__in=("route", "delegate"))
                         .order_by("run_id", "index").values("run_id", "phase", "status", "stop_reason", "output")):
                steps.setdefault(step["run_id"], []).append(step)
        for row in chunk:
            yield row, recording_of(row, calls.get(row["id"], []), steps.get(row["id"], []))


def recording_of(row: dict, calls: Sequence[dict], steps: Sequence[dict]) -> Recording:
    last = max((c["delivery"] for c in calls), default=1)
    records = [CallRecord(**{k: v for k, v in c.items() if k not in ("run_id", "delivery")})
               for c in calls if c["delivery"] == last]
    delegations: list[Delegation] = delegations_from_trace(steps, row["details"]) if steps else []
    ok = row["status"] == Run.Status.OK
    ending = Ending(status=row["status"], stop_reason=row["stop_reason"],
                    text=(row["answer"] if ok else row["candidate"]) or "",
                    selected_route=row["selected_route"] or "", phase=row["phase"] or "")
    return Recording(pipeline=row["pipeline"], status=row["status"], goal=row["goal"], context=row["context"] or {},
                     policy=row["policy"] or {}, calls=records, ending=ending, delegations=delegations,
                     run_id=str(row["id"]))


# -- the preview -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunFlip:
    run_id: int
    pipeline: str
    created_at: datetime
    replayed: Replayed

    @property
    def text_changed(self) -> bool:
        return any(op != "equal" for op, _ in self.diff)

    @cached_property
    def diff(self) -> list[tuple[str, str]]:
        after = self.replayed.after.text if self.replayed.after else ""
        return word_diff(self.replayed.before.text, after)


@dataclass
class Preview:
    """What the proposed change would have done: counts by class and by stop reason, every flipped
    run, the runs that diverged, and the decided texts it judges otherwise."""

    change: str
    pipelines: tuple[str, ...]
    runs: int = 0
    counts: Counter = field(default_factory=Counter)
    by_reason: Counter = field(default_factory=Counter)  # "would stop: <reason>" / "would pass (was <reason>)"
    flips: list[RunFlip] = field(default_factory=list)
    diverged: list[RunFlip] = field(default_factory=list)
    not_replayable: Counter = field(default_factory=Counter)  # why -> how many
    texts_judged: int = 0
    text_flips: list[TextFlip] = field(default_factory=list)
    window: str = ""
    seconds: float = 0.0
    texts_seconds: float = 0.0  # of which judging the decided texts
    problems: list[str] = field(default_factory=list)  # e.g. a pipeline with no active policy to change

    @property
    def verdicts(self) -> list[tuple[str, str, int]]:
        """(class, its explanation, count) in report order."""
        order = (WOULD_STOP, WOULD_PASS, UNCHANGED, DIVERGED, NOT_REPLAYABLE)
        return [(name, VERDICTS[name], self.counts.get(name, 0)) for name in order]

    @property
    def changes(self) -> list[tuple[str, int]]:
        """(change by stop reason, runs), most first (a template cannot call ``most_common``)."""
        return self.by_reason.most_common()

    @property
    def unreplayable(self) -> list[tuple[str, int]]:
        return self.not_replayable.most_common()

    @property
    def contradictions(self) -> list[TextFlip]:
        return [f for f in self.text_flips if f.contradicts]

    def headline(self) -> str:
        """One sentence: "3 of 250 runs would change (2 would stop, 1 would pass); 1 diverged."."""
        flips = sum(self.counts.get(v, 0) for v in FLIPS)
        text = (f"{flips} of {self.runs} run{'s' if self.runs != 1 else ''} would change "
                f"({self.counts.get(WOULD_STOP, 0)} would stop, {self.counts.get(WOULD_PASS, 0)} would pass)")
        if self.counts.get(DIVERGED):
            text += f"; {self.counts[DIVERGED]} diverged"
        if self.text_flips:
            blocks = sum(1 for f in self.text_flips if f.decided.decision == "approved" and not f.passes_proposed)
            passes = sum(1 for f in self.text_flips if f.decided.decision == "rejected" and f.passes_proposed)
            text += (f"; it would have blocked {blocks} text{'s' if blocks != 1 else ''} people approved "
                     f"and passed {passes} they rejected")
        return text + "."

    def summary(self) -> dict[str, Any]:
        """What is kept with the change when it is saved (JSON)."""
        return {
            "change": self.change, "pipelines": list(self.pipelines), "window": self.window, "runs": self.runs,
            "counts": {name: count for name, _, count in self.verdicts}, "by_stop_reason": dict(self.by_reason),
            "flipped_runs": [f.run_id for f in self.flips][:200],
            "diverged_runs": [f.run_id for f in self.diverged][:200],
            "decided_texts": self.texts_judged,
            "decided_flips": [{"label": f.decided.label, "decision": f.decided.decision,
                               "passes_proposed": f.passes_proposed, "contradicts": f.contradicts}
                              for f in self.text_flips][:200],
            "headline": self.headline(), "seconds": round(self.seconds, 3),
        }


def describe(row: models.Model) -> str:
    name = type(row)._meta.verbose_name
    return f"{name} “{row}”" + ("" if row.pk is not None else " (new)")


def preview(proposed: models.Model, *, last: int = DEFAULT_RUNS, since: datetime | None = None,
            until: datetime | None = None, decided: int = DEFAULT_DECIDED,
            cpu_seconds: float | None = None) -> Preview:
    """Replay the newest ``last`` stored runs (created in [since, until) when given) of the pipelines
    ``proposed`` affects under the policy with ``proposed`` in place; judge the decided texts too
    when the change can change the guard's verdict on a text. Reads only.

    Raises :class:`LabInputError` for a pattern list longer than a preview takes, and
    :class:`PreviewOverBudget` once it has used ``cpu_seconds`` of processor time (no bound: None)."""
    if problems := pattern_list_problems(proposed):
        raise LabInputError("; ".join(f"{name}: {problem}" for name, problem in problems.items()))
    started = time.perf_counter()
    budget = _Budget(cpu_seconds)
    pipelines = pipelines_of(proposed)
    report = Preview(change=describe(proposed), pipelines=pipelines, window="")
    current: dict[str, Policy] = {}
    future: dict[str, Policy] = {}
    for pipeline in pipelines:
        try:
            future[pipeline] = load_policy(pipeline, proposed=proposed)
        except PolicyMissing as missing:
            report.problems.append(str(missing))
            continue
        try:
            current[pipeline] = load_policy(pipeline)
        except PolicyMissing:
            pass  # compared with how each run ended
    snapshots = {pipeline: policy_snapshot(policy) for pipeline, policy in current.items()}
    rows = stored_runs(list(future), last=last, since=since, until=until)
    report.window = _window(last, len(rows), since, until)
    for row, recording in recordings(rows):
        budget.check(f"{report.runs} of {len(rows)} runs")
        pipeline = row["pipeline"]
        older = pipeline in current and recording.policy != snapshots[pipeline]
        replayed = replay(recording, future[pipeline], current=current[pipeline] if older else None)
        _count(report, RunFlip(row["id"], pipeline, row["created_at"], replayed))
    if set(future) & set(TEXT_PIPELINES) and _changes_texts(proposed):
        judging = time.perf_counter()
        texts = [t for source in _DECIDED_SOURCES for t in source(list(future), decided)]
        report.texts_judged, report.text_flips = judge_decided(
            texts, current, {p: policy for p, policy in future.items() if p in current}, budget)
        report.texts_seconds = time.perf_counter() - judging
    report.seconds = time.perf_counter() - started
    return report


def _count(report: Preview, flip: RunFlip) -> None:
    replayed = flip.replayed
    report.runs += 1
    report.counts[replayed.verdict] += 1
    if replayed.verdict == WOULD_STOP:
        report.by_reason[f"would stop: {replayed.after.stop_reason}"] += 1
        report.flips.append(flip)
    elif replayed.verdict == WOULD_PASS:
        was = replayed.before.stop_reason
        report.by_reason["would pass" if was == "success" else f"would pass (was {was})"] += 1
        report.flips.append(flip)
    elif replayed.verdict == DIVERGED:
        report.diverged.append(flip)
    elif replayed.verdict == NOT_REPLAYABLE:
        report.not_replayable[replayed.note] += 1


def _changes_texts(row: models.Model) -> bool:
    """Whether the change can change the final-answer checks' verdict on a text a person decided."""
    return isinstance(row, (*GUARD_ROWS, PipelinePolicy))


WINDOW_FORMAT = "%Y-%m-%d %H:%M"


def _window(last: int, found: int, since: datetime | None, until: datetime | None) -> str:
    """Which runs were replayed: "the newest 1000 stored runs", or every one there is when there are
    fewer ("the 3 stored runs", "the only stored run", "no stored runs")."""
    if found >= last:
        text = f"the newest {last} stored runs"
    else:
        text = {0: "no stored runs", 1: "the only stored run"}.get(found, f"the {found} stored runs")
    if since is not None:
        text += f" from {since:{WINDOW_FORMAT}}"
    if until is not None:
        text += f" before {until:{WINDOW_FORMAT}}"
    return text


# -- a proposed row from plain values (the command and the API) ----------------------------------------


KINDS: dict[str, type[models.Model]] = {"policy": PipelinePolicy, "route": RouteTarget, "claim": RestrictedClaim,
                                        "region": RegionToken, "issue": IssueType, "term": GroundingTerm}
# The field that names a row of each kind (a policy is named by its pipeline, or its id).
KEYS = {"route": "name", "claim": "family", "region": "token", "issue": "name", "term": "text"}


BOOLEAN_WORDS = {"true": True, "yes": True, "on": True, "1": True, "false": False, "no": False, "off": False,
                 "0": False}


class LabInputError(ValueError):
    """Values the lab cannot preview; the message says which and why."""


def proposed_row(kind: str, key: str | None, changes: dict[str, Any]) -> models.Model:
    """The row ``kind`` named ``key`` (none: a new row) with ``changes`` applied and validated as any
    form validates it, not saved. Values may be text (``"false"``, ``"[\\"approve\\"]"``) or JSON values."""
    model = KINDS.get(kind)
    if model is None:
        raise LabInputError(f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    row = model() if not key else _find(kind, model, key)
    editable = {f.name: f for f in model._meta.concrete_fields if f.editable and not f.primary_key}
    for name, value in changes.items():
        if name not in editable:
            raise LabInputError(f"a {model._meta.verbose_name} has no field {name!r}; "
                                f"its fields: {', '.join(sorted(editable))}")
        field = editable[name]
        if isinstance(field, models.BooleanField) and isinstance(value, str):
            value = BOOLEAN_WORDS.get(value.strip().lower(), value)
        if isinstance(field, models.JSONField) and isinstance(value, str):
            try:
                value = json.loads(value)
            except ValueError as error:
                raise LabInputError(f"{name}: not JSON ({error})") from None
        try:
            setattr(row, name, field.to_python(value))
        except ValidationError as error:
            raise LabInputError(f"{name}: {' '.join(error.messages)}") from None
    if problems := pattern_list_problems(row):
        raise LabInputError("; ".join(f"{name}: {problem}" for name, problem in problems.items()))
    try:
        row.full_clean()
    except ValidationError as error:
        raise LabInputError("; ".join(f"{name}: {' '.join(messages)}" if name != "__all__" else " ".join(messages)
                                      for name, messages in error.message_dict.items())) from None
    return row


def _find(kind: str, model: type[models.Model], key: str) -> models.Model:
    rows = model.objects.all()
    pk = int(key) if key.isdecimal() and len(key) <= 18 else None  # an id, within any database's integers
    if kind == "policy":
        found = (rows.filter(pipeline=key, active=True) if key in PIPELINE_NAMES
                 else rows.filter(pk=pk) if pk is not None else rows.none()).first()
    else:
        found = rows.filter(**{KEYS[kind]: key}).first() or (rows.filter(pk=pk).first() if pk is not None else None)
    if found is None:
        what = "an active policy of pipeline, or a policy id" if kind == "policy" else f"{KEYS[kind]} or id"
        raise LabInputError(f"no {model._meta.verbose_name} {key!r} ({what})")
    return found

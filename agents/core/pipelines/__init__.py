"""The three gated pipelines, behind one entry point."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from agents.core.llm.base import LLM
from agents.core.pipelines.frame import Observer, RunResult
from agents.core.pipelines.reflection import run_reflection
from agents.core.pipelines.routing import run_routing
from agents.core.pipelines.self_critique import run_self_critique
from agents.core.policy import PIPELINE_NAMES, Policy
from agents.core.specialists import Worker


def run_pipeline(
    name: str,
    *,
    goal: str,
    context: Mapping[str, Any] | None,
    policy: Policy,
    llm: LLM,
    observer: Observer | None = None,
    run_id: str | None = None,
    workers: Mapping[str, Worker] | None = None,
    clock=time.monotonic,
    judge: LLM | None = None,
) -> RunResult:
    """Run pipeline ``name``. Routing needs ``workers``, the specialists it may delegate to (the runner
    passes the built-ins on the database, ``agents.store.database_workers()``; the demo and the tests pass
    their own); ``clock``
    measures the wall-time budget (a replay passes one that advances by the recorded latencies); ``judge`` is
    the second reader's model, asked only when a text policy names one (agents.core.judge)."""
    if name == "reflection":
        return run_reflection(goal, context, policy, llm, observer=observer, run_id=run_id, clock=clock, judge=judge)
    if name == "self_critique":
        return run_self_critique(goal, context, policy, llm, observer=observer, run_id=run_id, clock=clock,
                                 judge=judge)
    if name == "routing":
        if workers is None:
            raise ValueError("the routing pipeline needs its workers: the specialists it may delegate to")
        return run_routing(
            goal,
            context,
            policy,
            llm,
            workers=workers,
            observer=observer,
            run_id=run_id,
            clock=clock,
        )
    raise ValueError(f"unknown pipeline {name!r}; expected one of {', '.join(PIPELINE_NAMES)}")


__all__ = ["PIPELINE_NAMES", "RunResult", "run_pipeline", "run_reflection", "run_routing", "run_self_critique"]

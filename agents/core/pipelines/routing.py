"""Routing: route -> delegate -> (reroute) -> finalize."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from agents.core.delegation import RouteGateway
from agents.core.llm.base import LLM
from agents.core.pipelines.frame import Observer, RunResult, RunState, execute, parse_json
from agents.core.policy import RoutingPolicy
from agents.core.prompts import build_request
from agents.core.specialists import Worker
from agents.core.stops import Stop
from agents.core.text import canonical_json
from agents.core.validation import validate_route

TEXT_LIMIT = 1000
STRUCTURED_LIMIT = 500


def truncate_observation(observation: Any) -> Any:
    """What the model sees of an observation: long fields cut, each with a marker of the full length."""
    if not isinstance(observation, dict):
        return observation
    shown = {}
    for key, value in observation.items():
        if isinstance(value, str) and len(value) > TEXT_LIMIT:
            shown[key] = f"{value[:TEXT_LIMIT]}…[truncated, {len(value)} characters in full]"
        elif isinstance(value, (dict, list)):
            text = canonical_json(value)
            shown[key] = value if len(text) <= STRUCTURED_LIMIT else (
                f"{text[:STRUCTURED_LIMIT]}…[truncated, {len(text)} characters of JSON in full]")
        else:
            shown[key] = value
    return shown


def _routing_body(workers: Mapping[str, Worker]):
    def body(run: RunState, goal: str, context: Mapping[str, Any], policy: RoutingPolicy) -> dict:
        gateway = RouteGateway(policy, workers)
        catalog = {name: route.description for name, route in policy.routes.items() if route.allowed_policy}
        attempts: list[dict] = []  # what each attempt chose and saw, for the state summary
        forbidden: str | None = None
        for attempt in range(1, policy.max_route_attempts + 1):
            last = attempts[-1] if attempts else None
            state = {
                "attempts_so_far": len(attempts),
                "unique_routes_used": sorted({a["target"] for a in attempts}),
                "last_target": last and last["target"],
                "last_observation_status": last and last["observation"].get("status"),
                "last_observation": last and truncate_observation(last["observation"]),
            }
            with run.step("route") as step:
                request = build_request(
                    policy, "route", context=context or None,
                    sections=[
                        ("TICKET", goal),
                        ("BUDGETS", {"max_route_attempts": policy.max_route_attempts,
                                     "max_delegations": policy.max_delegations,
                                     "remaining_attempts": policy.max_route_attempts - attempt + 1}),
                        ("FORBIDDEN TARGETS", [forbidden] if forbidden else []),
                        ("STATE", state),
                        ("RECENT HISTORY", [truncate_observation(entry) for entry in run.history[-3:]]),
                        ("ROUTE CATALOG", catalog),
                    ],
                    inputs={"goal": goal, "catalog": catalog, "forbidden": [forbidden] if forbidden else [],
                            "used": state["unique_routes_used"], "attempt": attempt},
                    attempt=attempt,
                )
                reply = run.ask(request)
                call = validate_route(reply.text, parse_json(reply.text), policy, forbidden=forbidden)
                step.update(attempt=attempt, target=call.target, output={"target": call.target, "args": call.args})

            with run.step("delegate") as step:
                step.update(attempt=attempt, target=call.target)
                observation = gateway.delegate(call.target, call.args)
                step.update(observation_status=observation["status"], output=observation)

            attempts.append({"target": call.target, "observation": observation})
            if observation["status"] == "done":
                return _finalize(run, goal, context, policy, call.target, observation)
            forbidden = call.target  # needs_reroute: the next attempt must pick another target
        raise Stop("max_route_attempts", attempts=[a["target"] for a in attempts])

    return body


def _finalize(run: RunState, goal: str, context: Mapping[str, Any], policy: RoutingPolicy, target: str,
              observation: dict) -> dict:
    with run.step("finalize") as step:
        shown = truncate_observation(observation)
        request = build_request(
            policy, "finalize", context=None,
            sections=[("SPECIALIST", target), ("OBSERVATION", shown)],
            inputs={"target": target, "observation": shown, "goal": goal},
        )
        answer = run.ask(request).text.strip()
        if not answer:
            raise Stop("llm_empty")
        step.update(target=target, answer_chars=len(answer), output=answer)
    return {"outcome": "routed", "selected_route": target, "answer": answer}


def run_routing(goal: str, context: Mapping[str, Any] | None, policy: RoutingPolicy, llm: LLM, *,
                workers: Mapping[str, Worker], observer: Observer | None = None,
                run_id: str | None = None, clock=time.monotonic) -> RunResult:
    return execute(_routing_body(workers), pipeline="routing", goal=goal, context=context, policy=policy, llm=llm,
                   observer=observer, run_id=run_id, clock=clock)

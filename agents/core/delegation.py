"""The route gateway (docs/contract.md, 'The route gateway'): the only way a route decision reaches a worker."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.core.policy import RoutingPolicy
from agents.core.specialists import Observation, Worker, WorkerArgsError
from agents.core.stops import Stop
from agents.core.text import canonical_json, text_hash

EXPECTED_STATUSES = ("done", "needs_reroute")


class RouteGateway:
    def __init__(self, policy: RoutingPolicy, workers: Mapping[str, Worker]):
        self.policy = policy
        self.workers = workers
        self.delegations = 0
        self.signatures: set[str] = set()

    def delegate(self, target: str, args: dict[str, Any]) -> Observation:
        """Call ``target``'s worker once, or stop. Checks run in the contract's order."""
        if self.delegations >= self.policy.max_delegations:
            raise Stop("max_delegations", budget=self.policy.max_delegations)
        route = self.policy.routes.get(target)
        if route is None or not route.allowed_execution:
            raise Stop("route_denied:" + target)
        worker = self.workers.get(route.worker)
        if worker is None:
            raise Stop("route_missing:" + target, worker=route.worker)
        signature = f"{target}:{text_hash(canonical_json(args))}"
        if signature in self.signatures:
            raise Stop("loop_detected", signature=signature)
        self.signatures.add(signature)
        self.delegations += 1
        try:
            observation = worker(dict(args))
        except WorkerArgsError as error:
            raise Stop("route_bad_args:" + target, error=str(error)) from None
        except Exception as error:
            raise Stop("route_error:" + target, error=f"{type(error).__name__}: {error}"[:500]) from None
        status = observation.get("status") if isinstance(observation, dict) else None
        if status not in EXPECTED_STATUSES:
            raise Stop("route_bad_observation", expected=list(EXPECTED_STATUSES), received=status,
                       observation=observation)
        return observation

"""A circuit breaker per model endpoint: a dead provider must not tie up every worker.

closed    -- calls go through; ``failure_threshold`` consecutive failures open the breaker.
open      -- calls fail fast (``llm_circuit_open``) until ``cooldown_seconds`` have passed.
half_open -- one trial call goes through; its success closes the breaker, its failure re-opens it
             for another cool-down. Other callers are refused while the trial is in flight.

The breaker lives in process memory: each worker process keeps its own view of each endpoint.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

CLOSED = "closed"
OPEN = "open"
HALF_OPEN = "half_open"


class CircuitBreaker:
    def __init__(
        self,
        failure_threshold: int = 5,
        cooldown_seconds: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ):
        if failure_threshold < 1:
            raise ValueError("failure_threshold must be at least 1")
        if cooldown_seconds < 0:
            raise ValueError("cooldown_seconds must not be negative")
        self.failure_threshold = failure_threshold
        self.cooldown_seconds = cooldown_seconds
        self._clock = clock
        self._lock = threading.Lock()
        self._state = CLOSED
        self._failures = 0  # consecutive failures while closed
        self._opened_at = 0.0
        self._trial_started_at: float | None = None  # set while the half-open trial is in flight

    @property
    def state(self) -> str:
        """The state a caller would see now: an open breaker past its cool-down is half-open."""
        with self._lock:
            if self._state == OPEN and self._cooldown_over():
                return HALF_OPEN
            return self._state

    def allow(self) -> bool:
        """May a call go to the endpoint now? In half-open state only one caller gets True."""
        with self._lock:
            if self._state == CLOSED:
                return True
            if self._state == OPEN:
                if not self._cooldown_over():
                    return False
                self._state = HALF_OPEN
                self._trial_started_at = None
            # Half-open. A trial that never reported back (its worker died, or an unexpected error
            # skipped the report) must not wedge the breaker: after a cool-down another caller
            # may try.
            now = self._clock()
            if (
                self._trial_started_at is not None
                and now - self._trial_started_at < self.cooldown_seconds
            ):
                return False
            self._trial_started_at = now
            return True

    def record_success(self) -> None:
        with self._lock:
            self._state = CLOSED
            self._failures = 0
            self._trial_started_at = None

    def record_failure(self) -> None:
        with self._lock:
            if self._state == OPEN:
                # A call let through before the breaker opened failed late: keep the cool-down.
                return
            if self._state == CLOSED:
                self._failures += 1
                if self._failures < self.failure_threshold:
                    return
            # The threshold is reached, or the half-open trial failed: (re)start the cool-down.
            self._state = OPEN
            self._opened_at = self._clock()
            self._failures = 0
            self._trial_started_at = None

    def _cooldown_over(self) -> bool:
        return self._clock() - self._opened_at >= self.cooldown_seconds

    def __repr__(self) -> str:
        return (
            f"<CircuitBreaker {self.state} threshold={self.failure_threshold}"
            f" cooldown={self.cooldown_seconds}s>"
        )


_registry: dict[str, CircuitBreaker] = {}
_registry_lock = threading.Lock()


def breaker_for(
    endpoint: str,
    *,
    failure_threshold: int = 5,
    cooldown_seconds: float = 30.0,
    clock: Callable[[], float] = time.monotonic,
) -> CircuitBreaker:
    """The process-wide breaker of ``endpoint``; the first caller's settings and clock make it."""
    with _registry_lock:
        breaker = _registry.get(endpoint)
        if breaker is None:
            breaker = CircuitBreaker(failure_threshold, cooldown_seconds, clock)
            _registry[endpoint] = breaker
        return breaker


def reset_breakers() -> None:
    """Forget every endpoint's breaker (tests)."""
    with _registry_lock:
        _registry.clear()

"""The circuit breaker per model endpoint, driven by a hand-wound clock."""

from __future__ import annotations

import threading

import pytest

from agents.core.llm.breaker import CircuitBreaker, breaker_for, reset_breakers


@pytest.fixture(autouse=True)
def _fresh_breakers():
    reset_breakers()
    yield
    reset_breakers()


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@pytest.fixture
def clock():
    return Clock()


def open_breaker(clock, threshold=3, cooldown=30.0) -> CircuitBreaker:
    breaker = CircuitBreaker(failure_threshold=threshold, cooldown_seconds=cooldown, clock=clock)
    for _ in range(threshold):
        assert breaker.allow()
        breaker.record_failure()
    return breaker


def test_a_new_breaker_is_closed_and_allows_calls(clock):
    breaker = CircuitBreaker(clock=clock)
    assert breaker.state == "closed"
    assert breaker.allow()


def test_breaker_stays_closed_below_the_threshold(clock):
    breaker = CircuitBreaker(failure_threshold=3, clock=clock)
    breaker.record_failure()
    breaker.record_failure()
    assert breaker.state == "closed"
    assert breaker.allow()


def test_breaker_opens_after_threshold_consecutive_failures_and_refuses_calls(clock):
    breaker = open_breaker(clock, threshold=3)
    assert breaker.state == "open"
    assert not breaker.allow()
    clock.advance(29.9)
    assert not breaker.allow()


def test_a_success_resets_the_count_so_only_consecutive_failures_open_it(clock):
    breaker = CircuitBreaker(failure_threshold=3, clock=clock)
    breaker.record_failure()
    breaker.record_failure()
    breaker.record_success()
    breaker.record_failure()
    breaker.record_failure()
    assert breaker.state == "closed"
    breaker.record_failure()
    assert breaker.state == "open"


def test_breaker_half_opens_after_the_cooldown_and_lets_one_trial_through(clock):
    breaker = open_breaker(clock)
    clock.advance(30)
    assert breaker.state == "half_open"
    assert breaker.allow()
    assert not breaker.allow()  # a second caller while the trial is in flight
    assert breaker.state == "half_open"


def test_a_successful_trial_closes_the_breaker(clock):
    breaker = open_breaker(clock)
    clock.advance(30)
    assert breaker.allow()
    breaker.record_success()
    assert breaker.state == "closed"
    assert breaker.allow()
    assert breaker.allow()


def test_a_failed_trial_reopens_the_breaker_for_another_cooldown(clock):
    breaker = open_breaker(clock)
    clock.advance(30)
    assert breaker.allow()
    breaker.record_failure()
    assert breaker.state == "open"
    clock.advance(29)
    assert not breaker.allow()
    clock.advance(1)
    assert breaker.allow()


def test_a_trial_that_never_reports_back_does_not_wedge_the_breaker(clock):
    breaker = open_breaker(clock)
    clock.advance(30)
    assert breaker.allow()  # this trial's worker dies and never records anything
    clock.advance(29)
    assert not breaker.allow()
    clock.advance(1)
    assert breaker.allow()


def test_a_late_failure_while_open_does_not_extend_the_cooldown(clock):
    breaker = open_breaker(clock)
    clock.advance(20)
    breaker.record_failure()  # a call let through before the breaker opened
    clock.advance(10)
    assert breaker.allow()


def test_only_one_of_many_concurrent_callers_gets_the_half_open_trial(clock):
    breaker = open_breaker(clock)
    clock.advance(30)
    start = threading.Barrier(16)
    allowed = []

    def call():
        start.wait()
        allowed.append(breaker.allow())

    threads = [threading.Thread(target=call) for _ in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert allowed.count(True) == 1


def test_breaker_rejects_a_threshold_below_one():
    with pytest.raises(ValueError, match="failure_threshold"):
        CircuitBreaker(failure_threshold=0)


def test_breaker_for_returns_one_breaker_per_endpoint():
    first = breaker_for("http://a/v1#m", failure_threshold=2, cooldown_seconds=5)
    assert breaker_for("http://a/v1#m", failure_threshold=9, cooldown_seconds=9) is first
    assert first.failure_threshold == 2  # the first caller's settings win
    assert breaker_for("http://b/v1#m", failure_threshold=2, cooldown_seconds=5) is not first


def test_reset_breakers_forgets_every_endpoint():
    first = breaker_for("http://a/v1#m", failure_threshold=1, cooldown_seconds=5)
    first.record_failure()
    reset_breakers()
    again = breaker_for("http://a/v1#m", failure_threshold=1, cooldown_seconds=5)
    assert again is not first
    assert again.state == "closed"

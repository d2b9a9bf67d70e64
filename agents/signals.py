"""What the agents app tells the apps built on it, without importing them."""

from django.dispatch import Signal

# Sent by ``agents.observer.record_result`` inside the transaction that stores a run's result, with
# ``run`` (the saved row), ``result`` (the core's RunResult) and ``draft`` (the first draft's text).
run_finished = Signal()

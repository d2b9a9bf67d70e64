"""The gated pipelines as plain Python: no Django, no database.

A pipeline takes a goal, a context, a policy and an LLM client, reports each step to an observer
as it happens and returns a result. Nothing under this package imports django, celery, reviewer
or the agents app's Django modules; ``tests/test_architecture.py`` keeps it that way.
"""

"""Test doubles that the tests (``tests/``) and the benchmarks (``bench/``) share.

- ``scripted_server``: a local OpenAI-compatible HTTP server with scripted answers, as strict as the
  API it imitates; plain Python (no Django), so the benchmarks run it without the product's settings.
- ``scripted_demo``: the answers that pass every stage on the demo incident, for that server.
- ``reference``: the loader of the reference pipelines, read from the documents that publish them
  (the conformance tests and ``bench/worker_path.py`` run them beside the product's).

Nothing in production imports this package: ``tests/test_architecture.py`` fails when a module
under ``agents/`` or ``reviewer/`` outside ``agents/testing/`` does.
"""

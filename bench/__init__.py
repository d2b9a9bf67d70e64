"""Benchmarks (not tests): each module is a script run from the repository root, e.g.
``.venv/bin/python bench/overhead.py``. Shared pieces live in :mod:`bench.common`."""

"""Fixtures for the LLM layer; registered in ``tests/conftest.py`` through ``pytest_plugins``."""

from __future__ import annotations

import pytest

from tests.fake_openai import FakeOpenAI


@pytest.fixture
def fake_openai():
    """A started local OpenAI-compatible server (``tests/fake_openai.py``), stopped afterwards."""
    with FakeOpenAI() as server:
        yield server

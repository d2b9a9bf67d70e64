"""Fixtures for the LLM layer; registered in ``tests/conftest.py`` through ``pytest_plugins``."""

from __future__ import annotations

import pytest

from agents.core.llm.scripted_server import ScriptedServer


@pytest.fixture
def fake_openai():
    """A started local OpenAI-compatible server (``tests/fake_openai.py``), stopped afterwards."""
    with ScriptedServer() as server:
        yield server

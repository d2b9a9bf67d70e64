"""A scripted model: the real openai SDK, pointed at the local fake server, in either output mode.

    def test_x(scripted):
        scripted.answer("submit_draft", {"draft": "..."})    # a tool call, or JSON content in json mode
        result = run_reflection(goal, context, scripted.policy(ReflectionPolicy), scripted.llm)
"""

from __future__ import annotations

import dataclasses
import json

import pytest

from agents.core.llm.breaker import reset_breakers
from agents.core.llm.client import OpenAIChat
from agents.core.policy import ModelSettings
from agents.core.llm.scripted_server import ScriptedServer, Reply, content, tool_call

TEST_KEY = "sk-test-key-never-shown"


class Scripted:
    def __init__(self, fake: ScriptedServer, mode: str):
        self.fake = fake
        self.mode = mode
        self.settings = ModelSettings(
            model="test-model", base_url=fake.base_url, structured_output=mode, timeout_seconds=2.0, max_retries=0
        )

    @property
    def llm(self) -> OpenAIChat:
        return OpenAIChat(self.settings, api_key=TEST_KEY, sleep=lambda seconds: None)

    def policy(self, cls, **overrides):
        """A policy of ``cls`` whose model settings point at the fake server."""
        return cls(model=self.settings, **overrides)

    def answer(self, tool: str, payload) -> "Scripted":
        """A structured answer: a tool call in tools mode, JSON content in json mode."""
        if self.mode == "tools":
            self.fake.script(tool_call(tool, payload))
        else:
            self.fake.script(content(payload if isinstance(payload, str) else json.dumps(payload)))
        return self

    def text(self, text: str | None) -> "Scripted":
        self.fake.script(content(text))
        return self

    def reply(self, *replies: Reply) -> "Scripted":
        self.fake.script(*replies)
        return self

    def with_settings(self, **changes) -> "Scripted":
        self.settings = dataclasses.replace(self.settings, **changes)
        return self


@pytest.fixture(params=["tools", "json"])
def scripted(request, fake_openai):
    """Both structured-output modes of SPEC §5.1."""
    reset_breakers()
    yield Scripted(fake_openai, request.param)
    reset_breakers()


@pytest.fixture
def scripted_tools(fake_openai):
    """Tool-call mode only, for tests whose point is not the output mode."""
    reset_breakers()
    yield Scripted(fake_openai, "tools")
    reset_breakers()

import pytest

pytest_plugins = ["tests.fixtures_llm", "tests.fixtures_scripted"]

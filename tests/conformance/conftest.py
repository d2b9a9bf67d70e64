"""The reference pipelines, loaded once per test run from the reference documents."""

from __future__ import annotations

import pytest

from agents.testing.reference import PIPELINES, TIMEOUT_VARIABLE, ReferenceMissing, load
from tests.conformance.harness import TIMEOUT_SECONDS
from tests.services import missing


@pytest.fixture(scope="session")
def references(tmp_path_factory):
    """Each reference pipeline imported in isolation from a folder of its own. Its llm module reads
    the model and the timeout from the environment when it is imported; the timeout read here is
    only the default, each scenario sets its own (see ``run_reference``)."""
    folder = tmp_path_factory.mktemp("reference-pipelines")
    try:
        with pytest.MonkeyPatch.context() as env:
            env.setenv(TIMEOUT_VARIABLE, str(TIMEOUT_SECONDS))
            env.setenv("OPENAI_MODEL", "conformance-model")
            return {name: load(name, folder / name) for name in PIPELINES}
    except ReferenceMissing as error:
        missing(f"the conformance suite needs the reference pipelines: {error}")


@pytest.fixture(scope="session", autouse=True)
def one_ssl_context():
    """The SDK reads the system's CA bundle for every client it builds (about 80 ms), and the
    reference code builds a client for every call. Both sides talk plain HTTP to loopback: one
    context, read once, serves every client of the suite."""
    try:
        import httpcore2 as transport
    except ImportError:  # an SDK on another HTTP stack: each client reads the bundle itself
        yield
        return
    context = transport.default_ssl_context()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(transport, "default_ssl_context", lambda **options: context)
        yield

"""Runs one scenario on both sides: the reference pipeline and the product's, each through the real
openai SDK against a scripted server of its own, with the same scripted answers.

The reference code asks for JSON content (``response_format: json_object``, or plain text for the
routing answer); the product runs in its JSON output mode, so one script serves both. The reference
sends no completion limit, so its server does not require one. Both sides retry transient failures
twice (the reference through the SDK's default ``max_retries=2``, the product through its own
client with ``max_retries=2``): model calls are compared as HTTP requests on both sides.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.core.llm.breaker import reset_breakers
from agents.core.llm.client import OpenAIChat
from agents.core.llm.endpoints import Endpoint
from agents.core.pipelines import run_pipeline
from agents.core.policy import POLICY_CLASSES, ModelSettings, RouteTarget
from agents.core.specialists import DemoData, builtin_workers
from agents.testing.reference import Reference
from agents.testing.scripted_server import Reply, ScriptedServer, tool_call

TEST_KEY = "sk-conformance-never-shown"
MODEL = "conformance-model"
# Both sides' request timeout, per scenario. A scenario about timeouts has a reply that comes well
# after a short timeout (``slow()`` in the scenarios); every other scenario gets an ample one, so that
# a loaded machine answering slowly never turns an ordinary reply into a timeout.
TIMEOUT_SECONDS = 30.0
SHORT_TIMEOUT_SECONDS = 2.0
TIMEOUT_MARGIN_SECONDS = 6.0  # how far any delayed reply stays from its scenario's timeout, either side
SLOW_SECONDS = SHORT_TIMEOUT_SECONDS + TIMEOUT_MARGIN_SECONDS  # how late a reply that times out comes


@dataclass(frozen=True)
class Outcome:
    """How a run ended and how many HTTP requests it sent to the model server."""

    stop_reason: str
    calls: int

    def __str__(self) -> str:
        return f"{self.stop_reason}, {self.calls} call{'' if self.calls == 1 else 's'}"


@dataclass(frozen=True)
class Scenario:
    """One input for both sides: the context (the reference's own, changed by ``context``), the
    goal (the reference's own unless given), the scripted model answers, and the settings both
    sides run under (budgets, allowlists, routes; see :func:`reference_settings` and
    :func:`product_policy`)."""

    id: str
    pipeline: str
    title: str
    replies: tuple[Reply, ...]
    context: Callable[[dict], dict] | None = None
    goal: str | None = None
    budget: Mapping[str, Any] = field(default_factory=dict)
    decisions_policy: tuple[str, ...] | None = None
    decisions_execution: tuple[str, ...] | None = None
    issue_types: tuple[str, ...] | None = None
    routes_policy: tuple[str, ...] | None = None
    routes_execution: tuple[str, ...] | None = None
    workers: Mapping[str, str] = field(default_factory=dict)  # target -> kind of worker (WORKERS)

    def __str__(self) -> str:
        return self.id

    @property
    def timeout_seconds(self) -> float:
        """Both sides' request timeout: the short one when a reply comes after it (the scenario is
        about a timeout), else the ample one."""
        if any(reply.delay >= SLOW_SECONDS for reply in self.replies):
            return SHORT_TIMEOUT_SECONDS
        return TIMEOUT_SECONDS


# -- the reference side ------------------------------------------------------------------------

# Names of the reference main module's settings, per pipeline.
DECISIONS = {"reflection": ("ALLOWED_REVIEW_DECISIONS_POLICY", "ALLOWED_REVIEW_DECISIONS_EXECUTION"),
             "self_critique": ("ALLOWED_CRITIQUE_DECISIONS_POLICY", "ALLOWED_CRITIQUE_DECISIONS_EXECUTION")}
ISSUE_TYPES = {"reflection": "ALLOWED_ISSUE_TYPES_POLICY", "self_critique": "ALLOWED_RISK_TYPES_POLICY"}
HIGH_RISK = frozenset({"legal_risk", "policy_violation"})  # as both sides' defaults have it


def _failing_reference(ticket: str) -> dict:
    raise RuntimeError("the specialist's backend is down")


def _pending_reference(ticket: str) -> dict:
    return {"status": "pending", "domain": "billing"}


def _failing_product(args: dict) -> dict:
    raise RuntimeError("the specialist's backend is down")


def _pending_product(args: dict) -> dict:
    return {"status": "pending", "domain": "billing"}


# Workers a scenario may put in place of (or next to) the built-in ones, on each side.
WORKERS = {"failing": (_failing_reference, _failing_product), "pending": (_pending_reference, _pending_product)}


def reference_settings(scenario: Scenario, reference: Reference) -> dict[str, Any]:
    """The attributes of the reference main module that the scenario sets."""
    main = reference.main
    changes: dict[str, Any] = {}
    if scenario.budget:
        changes["BUDGET"] = dataclasses.replace(main.BUDGET, **scenario.budget)
    if scenario.pipeline in DECISIONS:
        policy_name, execution_name = DECISIONS[scenario.pipeline]
        if scenario.decisions_policy is not None:
            changes[policy_name] = set(scenario.decisions_policy)
        if scenario.decisions_execution is not None:
            changes[execution_name] = set(scenario.decisions_execution)
        if scenario.issue_types is not None:
            changes[ISSUE_TYPES[scenario.pipeline]] = set(scenario.issue_types)
    if scenario.routes_policy is not None:
        changes["ALLOWED_ROUTE_TARGETS_POLICY"] = set(scenario.routes_policy)
    if scenario.routes_execution is not None:
        changes["ALLOWED_ROUTE_TARGETS_EXECUTION"] = set(scenario.routes_execution)
    if scenario.workers:
        registry = dict(main.ROUTE_REGISTRY)
        for target, kind in scenario.workers.items():
            if kind == "absent":
                registry.pop(target, None)
            else:
                registry[target] = WORKERS[kind][0]
        changes["ROUTE_REGISTRY"] = registry
    return changes


def reference_context(scenario: Scenario, reference: Reference) -> dict:
    """The reference's own context (its builder, with the values its main module uses), changed by
    the scenario."""
    context = json.loads(json.dumps(reference.main.INCIDENT_CONTEXT))
    return scenario.context(context) if scenario.context else context


def run_reference(scenario: Scenario, reference: Reference, server: ScriptedServer, monkeypatch) -> Outcome:
    """The reference flow function, its model at ``server`` with the scenario's request timeout. An
    exception it lets out is its outcome."""
    monkeypatch.setenv("OPENAI_API_KEY", TEST_KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    # The llm module read its timeout from the environment once, when it was imported.
    monkeypatch.setattr(reference.modules["llm"], reference.timeout_setting, scenario.timeout_seconds)
    for name, value in reference_settings(scenario, reference).items():
        monkeypatch.setattr(reference.main, name, value)
    goal = scenario.goal or reference.main.GOAL
    try:
        if scenario.pipeline == "routing":
            result = reference.run(goal)
        else:
            result = reference.run(goal=goal, incident_context=reference_context(scenario, reference))
    except Exception as error:  # the reference lets some failures out: that is its answer
        return Outcome(f"raised:{type(error).__name__}", len(server.requests))
    return Outcome(result["stop_reason"], len(server.requests))


# -- the product side --------------------------------------------------------------------------


def product_policy(scenario: Scenario, reference: Reference):
    """The product's policy for the scenario: the reference's budgets (as the scenario sets them),
    allowlists and routes, the model at the scripted server in JSON mode."""
    cls = POLICY_CLASSES[scenario.pipeline]
    budget = dataclasses.asdict(reference_settings(scenario, reference).get("BUDGET", reference.main.BUDGET))
    known = {f.name for f in dataclasses.fields(cls)}
    fields: dict[str, Any] = {name: value for name, value in budget.items() if name in known}
    fields["model"] = ModelSettings(model=MODEL, structured_output="json", timeout_seconds=scenario.timeout_seconds,
                                    max_retries=2)
    if scenario.pipeline in DECISIONS:
        policy_name, execution_name = DECISIONS[scenario.pipeline]
        main = reference.main
        fields["decisions_policy"] = frozenset(scenario.decisions_policy or getattr(main, policy_name))
        fields["decisions_execution"] = frozenset(scenario.decisions_execution or getattr(main, execution_name))
        types = scenario.issue_types or getattr(main, ISSUE_TYPES[scenario.pipeline])
        fields["issue_types"] = {name: name in HIGH_RISK for name in types}
    else:
        fields["routes"] = product_routes(scenario, reference)
    return cls(**fields)


def product_routes(scenario: Scenario, reference: Reference) -> dict[str, RouteTarget]:
    main = reference.main
    allowed_policy = set(scenario.routes_policy or main.ALLOWED_ROUTE_TARGETS_POLICY)
    allowed_execution = set(scenario.routes_execution or main.ALLOWED_ROUTE_TARGETS_EXECUTION)
    catalog = {route["name"]: route["description"] for route in reference.modules["llm"].ROUTE_CATALOG}
    return {name: RouteTarget(description=catalog.get(name, name), worker=name,
                              allowed_policy=name in allowed_policy, allowed_execution=name in allowed_execution)
            for name in sorted(allowed_policy | allowed_execution | set(catalog))}


def product_workers(scenario: Scenario) -> dict:
    workers = dict(builtin_workers(DemoData()))
    for target, kind in scenario.workers.items():
        if kind == "absent":
            workers.pop(target, None)
        else:
            workers[target] = WORKERS[kind][1]
    return workers


def product_context(scenario: Scenario, reference: Reference, folder: Path) -> dict | None:
    """The context as ``manage.py run_pipeline --context FILE`` reads it: the reference's context
    written to a file, read back by the command's own reader."""
    from agents.management.commands.run_pipeline import read_context

    if scenario.pipeline == "routing":
        return None
    path = folder / f"{scenario.id}.json"
    path.write_text(json.dumps(reference_context(scenario, reference), ensure_ascii=False), encoding="utf-8")
    return read_context(str(path))


class InTheAskedForm:
    """A scripted server's responder that serves ``replies`` in order, each in the form its request
    asks for: a JSON answer in the message content becomes, for a request that declares a tool, a
    call of that tool with the same JSON (the product's tools mode). Anything else is served as it is."""

    def __init__(self, replies: tuple[Reply, ...]):
        self.replies = list(replies)

    def __call__(self, body: dict) -> Reply | None:
        if not self.replies:
            return None
        reply = self.replies.pop(0)
        tools = body.get("tools") or []
        text = _content(reply)
        if not tools or text is None:
            return reply
        try:
            json.loads(text)
        except ValueError:
            return reply
        return dataclasses.replace(reply, body=tool_call(tools[0]["function"]["name"], text).body)


def _content(reply: Reply) -> str | None:
    choices = (reply.body or {}).get("choices") if reply.status == 200 else None
    message = choices[0].get("message") if choices else None
    return message.get("content") if isinstance(message, dict) and isinstance(message.get("content"), str) else None


def run_product(scenario: Scenario, reference: Reference, server: ScriptedServer, folder: Path,
                mode: str = "json") -> Outcome:
    """The product's pipeline, its model at ``server`` in output ``mode`` (``json`` or ``tools``)."""
    policy = product_policy(scenario, reference)
    policy = dataclasses.replace(policy, model=dataclasses.replace(policy.model, structured_output=mode))
    llm = OpenAIChat(policy.model, endpoint=Endpoint("conformance", server.base_url, "TEST_KEY", TEST_KEY),
                     sleep=lambda seconds: None)
    reset_breakers()
    try:
        result = run_pipeline(scenario.pipeline, goal=scenario.goal or reference.main.GOAL,
                              context=product_context(scenario, reference, folder), policy=policy, llm=llm,
                              workers=product_workers(scenario) if scenario.pipeline == "routing" else None)
    finally:
        llm.close()
        reset_breakers()
    return Outcome(result.stop_reason, len(server.requests))

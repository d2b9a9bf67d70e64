"""The product's pipelines against the reference pipelines: the same context, the same scripted
model answers, the same budgets; the stop reason and the number of model calls must agree, or the
scenario is listed in docs/decisions.md with the reason the product differs on purpose."""

from __future__ import annotations

import re

import pytest

from agents.testing.scripted_server import ScriptedServer, status
from tests.conformance.differences import listed
from tests.conformance.harness import (
    SHORT_TIMEOUT_SECONDS,
    TIMEOUT_MARGIN_SECONDS,
    TIMEOUT_SECONDS,
    InTheAskedForm,
    Scenario,
    run_product,
    run_reference,
)
from tests.conformance.scenarios import SCENARIOS, route, slow

# Where the product disagrees with the reference pipelines and the reference is right: product bugs,
# each with what is wrong. Strict: the day one is fixed, the suite says so.
PRODUCT_BUGS: dict[str, str] = {}

DIFFERENCES = listed()


def _param(scenario):
    marks = [pytest.mark.xfail(strict=True, reason=PRODUCT_BUGS[scenario.id])] if scenario.id in PRODUCT_BUGS else []
    return pytest.param(scenario, id=scenario.id, marks=marks)


@pytest.mark.parametrize("scenario", [_param(s) for s in SCENARIOS])
def test_the_product_agrees_with_the_reference_pipelines(scenario, references, fake_openai, monkeypatch, tmp_path):
    reference = references[scenario.pipeline]
    with ScriptedServer(require_limit=False) as server:
        server.script(*scenario.replies)
        theirs = run_reference(scenario, reference, server, monkeypatch)
    fake_openai.script(*scenario.replies)
    ours = run_product(scenario, reference, fake_openai, tmp_path)
    if not any(reply.delay for reply in scenario.replies):  # a timeout does not depend on the output mode
        with ScriptedServer(InTheAskedForm(scenario.replies)) as server:
            ours_with_tools = run_product(scenario, reference, server, tmp_path, mode="tools")
        assert not server.requests or any("tools" in request for request in server.requests)
        # The product's two output modes are one contract: a tool call or a JSON object, the same outcome.
        assert str(ours_with_tools) == str(ours), f"{scenario.id}: the product's tools mode and JSON mode differ"

    difference = DIFFERENCES.get(scenario.id)
    if difference is None:
        assert str(ours) == str(theirs), f"{scenario.id} ({scenario.title}): the product differs from the reference"
    else:
        assert (str(theirs), str(ours)) == (str(difference.reference), str(difference.product)), (
            f"{scenario.id} ({scenario.title}) is listed in docs/decisions.md as a difference; the outcomes "
            "are no longer the listed ones (when both now agree, remove its row)")


def test_every_listed_difference_names_a_scenario_and_a_reason():
    ids = {scenario.id for scenario in SCENARIOS}
    for difference in DIFFERENCES.values():
        assert difference.scenario in ids, f"docs/decisions.md lists {difference.scenario}, which is no scenario"
        assert difference.reference != difference.product, f"{difference.scenario} is listed with equal outcomes"
        referred = re.match(r"As ([a-z_]+-\d{3})\b", difference.why)
        if referred:  # "As reflection-009: ..." borrows that row's reason
            assert referred[1] in DIFFERENCES, f"{difference.scenario} refers to {referred[1]}, which is not listed"
        else:
            assert len(difference.why) > 40, f"{difference.scenario} is listed without a reason"
        assert difference.scenario not in PRODUCT_BUGS, f"{difference.scenario} is both a difference and a bug"


def test_scenarios_are_unique_and_cover_every_pipeline():
    ids = [scenario.id for scenario in SCENARIOS]
    assert len(ids) == len(set(ids))
    counts = {name: sum(s.pipeline == name for s in SCENARIOS) for name in ("reflection", "self_critique", "routing")}
    assert min(counts.values()) >= 30 and sum(counts.values()) >= 110, counts


def test_a_delayed_reply_is_seconds_away_from_its_scenarios_timeout():
    """A reply meant to time out comes seconds after the timeout, and any other reply seconds before
    it: which of the two happens never depends on how fast a loaded machine answers."""
    about_timeouts = set()
    for scenario in SCENARIOS:
        for reply in scenario.replies:
            if reply.delay:
                assert abs(reply.delay - scenario.timeout_seconds) >= TIMEOUT_MARGIN_SECONDS, scenario.id
        if scenario.timeout_seconds == SHORT_TIMEOUT_SECONDS:
            about_timeouts.add(scenario.pipeline)
        else:
            assert scenario.timeout_seconds == TIMEOUT_SECONDS, scenario.id
    assert about_timeouts == {"reflection", "self_critique", "routing"}


def test_the_reference_runs_with_the_scenarios_timeout_and_gets_its_own_back(references):
    reference = references["routing"]
    llm, name = reference.modules["llm"], reference.timeout_setting
    default = getattr(llm, name)
    seen = []

    def answer(body):  # what the reference's model layer holds while it waits for this answer
        seen.append(getattr(llm, name))
        return status(401)

    scenario = Scenario("routing-timeout", "routing", "a timeout scenario", (slow(route("billing_specialist")),))
    with pytest.MonkeyPatch.context() as patch, ScriptedServer(answer, require_limit=False) as server:
        run_reference(scenario, reference, server, patch)
    assert (default, seen, getattr(llm, name)) == (TIMEOUT_SECONDS, [SHORT_TIMEOUT_SECONDS], TIMEOUT_SECONDS)

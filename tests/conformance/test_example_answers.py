"""The reference pipelines' own example answers pass the product's guard on their own context and goal,
grounding switched on: the product stops nothing the reference calls a good update."""

import dataclasses
import json

import pytest

from agents.core.guard import check_final_answer, guard_config
from agents.core.policy import DEFAULT_VOCABULARY, ReflectionPolicy, SelfCritiquePolicy
from agents.testing.reference import ReferenceMissing, example_answers
from tests.services import missing

POLICIES = {"reflection": ReflectionPolicy, "self_critique": SelfCritiquePolicy}


@pytest.mark.parametrize("name", POLICIES)
def test_the_reference_example_answer_passes_the_guard_with_grounding(name, references, tmp_path):
    from agents.management.commands.run_pipeline import read_context

    try:
        answers = example_answers(name)
    except ReferenceMissing as error:
        missing(f"the conformance suite needs the reference pipelines: {error}")
    assert answers, f"the reference {name} document prints no example answer"
    reference = references[name]
    path = tmp_path / "context.json"
    path.write_text(json.dumps(reference.main.INCIDENT_CONTEXT), encoding="utf-8")
    context = read_context(str(path))
    policy = POLICIES[name]()
    rules = dataclasses.replace(policy.guard, vocabulary=DEFAULT_VOCABULARY)
    config = guard_config(policy, context)
    for answer in answers:
        result = check_final_answer(answer, context, rules, max_answer_chars=len(answer) + 1,
                                    strict_claims=config.strict_claims, goal=reference.main.GOAL)
        assert result.ok, result.violations

"""The stop-reason catalogue (docs/contract.md, 'Stop reasons') checked both ways against the source.

Every catalogued reason is written out where it is raised (``grep -rn '"<reason>' agents reviewer``
finds it), a ``:<detail>`` entry by its literal prefix; and every reason-shaped literal in the
source is catalogued, so a reason cannot be raised that the pages and the API cannot explain.
"""

import ast
from pathlib import Path

import pytest

from agents.core.stops import STOP_REASONS, explain, opens_escalation

ROOT = Path(__file__).parents[3]
SOURCE = [p for folder in ("agents", "reviewer") for p in sorted((ROOT / folder).rglob("*.py"))
          if "migrations" not in p.parts and p.name != "stops.py"]
EXACT = {name for name in STOP_REASONS if "<" not in name}
PREFIXES = {name.split("<", 1)[0] for name in STOP_REASONS if "<" in name}  # "route_denied:"
FAMILIES = {name.split(":", 1)[0] + ":" for name in STOP_REASONS if ":" in name}  # "invalid_review:"
# Calls whose first argument is a stop reason, and keywords that carry one.
RAISERS = {"Stop", "LLMError", "_stop", "_violation"}


def literals():
    """(file:line, text) for every string literal in the product's Python source."""
    for path in SOURCE:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                yield f"{path.relative_to(ROOT)}:{node.lineno}", node.value


def raised_literals():
    """(where, text) for the literal first argument of a raiser and every ``stop_reason=`` literal."""
    for path in SOURCE:
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if not isinstance(node, ast.Call):
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", ""))
            args = [node.args[0]] if name in RAISERS and node.args else []
            args += [k.value for k in node.keywords if k.arg == "stop_reason"]
            for arg in args:
                if isinstance(arg, ast.BinOp):  # "route_denied:" + target
                    arg = arg.left
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and arg.value:
                    yield f"{path.relative_to(ROOT)}:{node.lineno}", arg.value


def catalogued(text: str) -> bool:
    return text in EXACT or text in PREFIXES or text in FAMILIES


def test_every_catalogued_reason_is_written_out_where_it_is_raised():
    found = {text for _, text in literals()}
    missing = [name for name in STOP_REASONS if name.split("<", 1)[0] not in found]
    assert missing == []


def test_every_reason_the_source_raises_is_catalogued():
    strays = [f"{where}: {text}" for where, text in raised_literals() if not catalogued(text)]
    assert strays == []


def test_every_reason_shaped_literal_is_catalogued():
    """A literal in a catalogued family ("invalid_review:...") that is not itself catalogued is a typo."""
    strays = [f"{where}: {text}" for where, text in literals()
              if any(text.startswith(family) for family in FAMILIES) and not catalogued(text)
              and not any(text.startswith(prefix) for prefix in PREFIXES)]
    assert strays == []


def test_every_catalogued_reason_is_asserted_by_some_test():
    """Each name appears in a test file, so the contract is easy to check against the tests."""
    tests = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("test_*.py") if p.name != Path(__file__).name)
    missing = [name for name in STOP_REASONS if f'"{name.split("<", 1)[0]}' not in tests]
    assert missing == []


@pytest.mark.parametrize(("reason", "entry"), [("route_denied:billing_specialist", "route_denied:<target>"),
                                               ("internal_error:KeyError", "internal_error:<ExceptionClass>")])
def test_a_detail_suffix_is_explained_by_its_entry(reason, entry):
    assert explain(reason) == STOP_REASONS[entry]


def test_explanations_and_escalation_rules():
    assert explain("no_such_reason") == "Unknown stop reason."
    assert opens_escalation("policy_escalation") and opens_escalation("patch_violation:no_new_facts")
    assert opens_escalation("invalid_answer:restricted_claims") and not opens_escalation("invalid_answer:too_long")
    assert not opens_escalation("llm_timeout")


# -- which stops a setting caused (no Retry; docs/desk.md, 'Which stops offer Retry') ------------------


@pytest.mark.parametrize(("reason", "says"), [
    ("review_decision_denied_execution:approve", "switched the “approve” decision off for execution"),
    ("critique_decision_denied_execution:escalate", "switched the “escalate” decision off for execution"),
    ("review_decision_not_allowed_policy:escalate", "does not allow the “escalate” decision"),
    ("route_denied:billing", "switched the route target “billing” off for execution"),
    ("route_missing:billing", "an operator deploys one"),
    ("max_tokens", "raises it"), ("max_cost", "raises it"), ("max_delegations", "raises it"),
    ("llm_misconfigured", "an operator fixes the model settings"),
    ("llm_auth_failed", "an operator fixes the API key"),
    ("review_decision_denied_execution:revise", "emergency brake"),
])
def test_a_stop_a_setting_caused_says_what_must_change_and_who_changes_it(reason, says):
    from agents.core.stops import configuration_stop

    assert says in configuration_stop(reason)


@pytest.mark.parametrize("reason", [
    "llm_timeout", "llm_unavailable", "llm_rate_limited", "llm_circuit_open", "max_seconds", "worker_lost",
    "invalid_review:decision", "llm_invalid_json", "route_error:billing", "max_route_attempts", "loop_detected",
    "review_decision_not_allowed_policy:maybe",  # a decision the model made up: a retry may pass
    "review_issue_not_allowed_policy:made_up", "invalid_route:route_not_allowed:nowhere",
    "route_denied:", "success",
])
def test_a_stop_a_retry_may_get_past_names_no_setting(reason):
    from agents.core.stops import configuration_stop

    assert configuration_stop(reason) == ""


def test_every_configuration_stop_is_a_catalogued_stop_reason():
    from agents.core.stops import CONFIGURATION_STOPS

    assert set(CONFIGURATION_STOPS) <= set(STOP_REASONS)

"""Scripted answers for the demo incident, for the tests and the benchmarks.

The incident's context is ``agents/fixtures/demo_context.json`` (the file the README's
``run_pipeline --context`` command reads, and the one the demo's payment incident is built from);
the answers below pass every stage on it: a draft the facts support, an approving or revising
review and critique, and the revision that applies the fix. Plain Python, like
:mod:`agents.testing.scripted_server` that serves them.
"""

import json
from pathlib import Path

DEMO_CONTEXT_FILE = Path(__file__).resolve().parents[1] / "fixtures" / "demo_context.json"
DEMO_CONTEXT = json.loads(DEMO_CONTEXT_FILE.read_text())


def demo_workers(pipeline: str) -> dict | None:
    """The specialists a routing run delegates to in the tests and benchmarks: the built-ins on the
    demo's in-memory facts (agents.core.specialists.DemoData); None for the text pipelines."""
    from agents.core.specialists import DemoData, builtin_workers

    return builtin_workers(DemoData()) if pipeline == "routing" else None


GOAL = "Write the customer update for the P1 payment degradation."

# The runbook's approved actions are not in it: they are internal (agents.core.guard.internal).
DRAFT = (
    "We are investigating a payment problem in the US. About 27% of checkouts are affected. "
    "We expect to restore service within 45 minutes. Our team is watching payment failures closely, and we "
    "will post the next update on our status page as soon as we know more."
)
CAVEAT = "This estimate may change as we learn more."
REVISED = f"{DRAFT} {CAVEAT}"

APPROVE = {"decision": "approve", "issues": [], "fix_plan": [], "reason": "Accurate.", "quality": "good",
           "completeness": "complete"}
REVISE = {
    "decision": "revise",
    "issues": [{"type": "missing_uncertainty", "note": "The ETA has no caveat."}],
    "fix_plan": [f'Add "{CAVEAT}"'],
    "reason": "Add a caveat to the ETA.",
    "quality": "fair",
    "completeness": "complete",
}
ESCALATE = {"decision": "escalate", "issues": [{"type": "legal_risk", "note": "Mentions refunds."}], "fix_plan": [],
            "reason": "Refund commitments need a person. " + "x" * 200}

CRITIQUE_APPROVE = {"decision": "approve", "severity": "low", "risks": [], "required_changes": [], "reason": "Fine."}
CRITIQUE_REVISE = {
    "decision": "revise",
    "severity": "medium",
    "risks": [{"type": "missing_uncertainty", "note": "The ETA has no caveat."}],
    "required_changes": [f'ADD "{CAVEAT}"'],
    "reason": "Add a caveat.",
}

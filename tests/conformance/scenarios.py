"""The scenarios both sides run: a context (the reference's own, or a small change of it), a goal,
the settings, and the model's scripted answers, in the JSON content the reference code asks for.

Ids are stable: docs/decisions.md lists by id the scenarios where the product differs on purpose.

Every stop reason the reference code raises is reached by some scenario, except those its own model
layer makes unreachable: ``invalid_draft:empty``, ``invalid_answer:empty`` and ``invalid_review:not_object``
/ ``invalid_critique:not_object`` (an empty text or a JSON value that is no object stops earlier, as
``llm_empty`` or ``llm_invalid_json``), and reflection's ``invalid_revised:empty`` (self-critique reaches
it through its fallback: self_critique-075).
"""

from __future__ import annotations

import json

from agents.testing.scripted_server import Reply, content, delay, hang_up, status
from tests.conformance.harness import SLOW_SECONDS, Scenario


def answer(value) -> Reply:
    """A JSON answer (any JSON value: the shape is the gate's business)."""
    return content(json.dumps(value))


def draft(text) -> Reply:
    return answer({"draft": text})


def revised(text) -> Reply:
    return answer({"revised_answer": text})


def review(decision, issues=(), fix_plan=(), reason=None, **extra) -> Reply:
    body = {"decision": decision, "issues": list(issues), "fix_plan": list(fix_plan), **extra}
    if reason is not None:
        body["reason"] = reason
    return answer(body)


def critique(decision, risks=(), required_changes=(), severity="medium", reason=None, **extra) -> Reply:
    body = {"decision": decision, "severity": severity, "risks": list(risks),
            "required_changes": list(required_changes), **extra}
    if reason is not None:
        body["reason"] = reason
    return answer(body)


def issue(kind="overconfidence", note="The time estimate reads like a promise.") -> dict:
    return {"type": kind, "note": note}


def route(target, ticket=None, **extra) -> Reply:
    return answer({"kind": "route", "target": target, "args": {"ticket": ticket or TICKET}, **extra})


def transient(code: int) -> Reply:
    """A failure both sides retry; the server asks for a 1 ms wait so the SDK's backoff is short."""
    return status(code, headers={"retry-after-ms": "1"})


def slow(reply: Reply) -> Reply:
    """An answer that comes long after both sides' request timeout: its scenario runs with the short
    timeout (see :attr:`Scenario.timeout_seconds`), and this reply comes seconds after it."""
    return delay(SLOW_SECONDS, reply)


# -- texts for the reflection and self-critique contexts (US, P1, degraded, 27% of checkouts, a
# failed payment rate of 0.034, 5 chargeback alerts, an ETA of 45 minutes) ----------------------

IMPACT = "Payments in the US are degraded: about 27% of checkouts are affected and 3.4% of payments are failing."
ACTIONS = ("Next actions: we monitor payment failures every 15 minutes and publish customer updates via the "
           "status page.")
ETA = "We expect recovery in about 45 minutes, but this estimate may change."
PROMISE = "Payments will be back to normal in 45 minutes."

DRAFT = f"{IMPACT} {ETA} {ACTIONS}"
DRAFT_PROMISE = f"{IMPACT} {PROMISE} {ACTIONS}"
REVISED = DRAFT  # the promise replaced by the estimate
REPLACE_PROMISE = f"Replace '{PROMISE[:-1]}' with '{ETA[:-1]}'"
LONG_DRAFT = " ".join([IMPACT, ETA, ACTIONS] * 4)  # over 900 characters
SUPPORT = "Our support team shares workaround guidance with affected customers."


def with_hints(**hints):
    def change(context: dict) -> dict:
        context["policy_hints"] = {**context.get("policy_hints", {}), **hints}
        return context

    return change


def reflection(number: int, title: str, *replies: Reply, **settings) -> Scenario:
    return Scenario(f"reflection-{number:03d}", "reflection", title, tuple(replies), **settings)


def self_critique(number: int, title: str, *replies: Reply, **settings) -> Scenario:
    return Scenario(f"self_critique-{number:03d}", "self_critique", title, tuple(replies), **settings)


def routing(number: int, title: str, *replies: Reply, **settings) -> Scenario:
    return Scenario(f"routing-{number:03d}", "routing", title, tuple(replies), **settings)


APPROVE = review("approve")
REVISE = review("revise", [issue()], [REPLACE_PROMISE])

REFLECTION = [
    # The paths that end well
    reflection(1, "an approved draft is the answer", draft(DRAFT), APPROVE),
    reflection(2, "a revision that applies the quoted replacement", draft(DRAFT_PROMISE), REVISE, revised(REVISED)),
    reflection(3, "a fix plan without quoted phrases checks no phrase", draft(DRAFT_PROMISE),
               review("revise", [issue()], ["Make the time estimate sound less certain."]), revised(REVISED)),
    reflection(4, "an approve with a fix plan: the plan is dropped", draft(DRAFT),
               review("approve", fix_plan=["Add 'thank you for your patience'"])),
    reflection(5, "an approve naming a low-risk issue", draft(DRAFT), review("approve", [issue("scope_leak")])),
    reflection(6, "a quoted phrase to add is added", draft(DRAFT_PROMISE),
               review("revise", [issue()], [REPLACE_PROMISE, f"Add '{SUPPORT[:-1]}'"]),
               revised(f"{REVISED} {SUPPORT}")),
    # Escalation
    reflection(7, "the reviewer escalates with a reason", draft(DRAFT),
               review("escalate", [issue("legal_risk")], reason="The draft may read as a contractual commitment.")),
    reflection(8, "an escalation without a reason", draft(DRAFT), review("escalate", [issue("legal_risk")])),
    # The draft
    reflection(9, "an empty draft field", draft(""), APPROVE),
    reflection(10, "a draft of blanks", draft("   "), APPROVE),
    reflection(11, "a draft over the budget", draft(LONG_DRAFT), APPROVE),
    reflection(12, "a draft that is not JSON", content("Here is the update: payments are degraded."), APPROVE),
    reflection(13, "a draft answer that is a JSON list", answer([DRAFT]), APPROVE),
    reflection(14, "a draft answer without its field", answer({"text": DRAFT}), APPROVE),
    reflection(15, "a draft field that is a number", draft(27), APPROVE),
    reflection(16, "a draft answer with no content", content(None), APPROVE),
    # The review's shape
    reflection(17, "a review that is not JSON", draft(DRAFT), content("approve")),
    reflection(18, "a review that is a JSON list", draft(DRAFT), answer(["approve"])),
    reflection(19, "a review without a decision", draft(DRAFT), answer({"issues": [], "fix_plan": []})),
    reflection(20, "a decision the policy does not know", draft(DRAFT), review("publish")),
    reflection(21, "a decision in capitals", draft(DRAFT), review("Approve")),
    reflection(22, "issues that are not a list", draft(DRAFT),
               answer({"decision": "revise", "issues": "tone", "fix_plan": [REPLACE_PROMISE]})),
    reflection(23, "more issues than the budget", draft(DRAFT_PROMISE),
               review("revise", [issue()] * 5, [REPLACE_PROMISE])),
    reflection(24, "an issue that is not an object", draft(DRAFT_PROMISE),
               review("revise", ["overconfidence"], [REPLACE_PROMISE])),
    reflection(25, "an issue without a type", draft(DRAFT_PROMISE),
               review("revise", [{"note": "Too sure."}], [REPLACE_PROMISE])),
    reflection(26, "an issue type the policy does not allow", draft(DRAFT_PROMISE),
               review("revise", [issue("tone")], [REPLACE_PROMISE])),
    reflection(27, "an issue without a note", draft(DRAFT_PROMISE),
               review("revise", [{"type": "overconfidence", "note": " "}], [REPLACE_PROMISE])),
    reflection(28, "a fix plan that is not a list", draft(DRAFT_PROMISE),
               answer({"decision": "revise", "issues": [issue()], "fix_plan": REPLACE_PROMISE})),
    reflection(29, "more fix items than the budget", draft(DRAFT_PROMISE),
               review("revise", [issue()], [REPLACE_PROMISE] * 5)),
    reflection(30, "a blank fix item", draft(DRAFT_PROMISE), review("revise", [issue()], [REPLACE_PROMISE, ""])),
    reflection(31, "a reason that is not text", draft(DRAFT), review("approve", reason=42)),
    # The review's decision rules
    reflection(32, "an approve naming a high-risk issue", draft(DRAFT), review("approve", [issue("legal_risk")])),
    reflection(33, "a revise without issues", draft(DRAFT_PROMISE), review("revise", [], [REPLACE_PROMISE])),
    reflection(34, "a revise without a fix plan", draft(DRAFT_PROMISE), review("revise", [issue()], [])),
    reflection(35, "a revise naming a high-risk issue", draft(DRAFT_PROMISE),
               review("revise", [issue("policy_violation")], [REPLACE_PROMISE])),
    # The allowlists
    reflection(36, "auto-revision off: a revise is denied in execution", draft(DRAFT_PROMISE), REVISE,
               decisions_execution=("approve", "escalate")),
    reflection(37, "a policy without revise", draft(DRAFT_PROMISE), REVISE, decisions_policy=("approve", "escalate")),
    reflection(38, "a policy without the issue type", draft(DRAFT_PROMISE), REVISE,
               issue_types=("missing_uncertainty", "contradiction", "scope_leak", "policy_violation", "legal_risk")),
    # The revision
    reflection(39, "an empty revision", draft(DRAFT_PROMISE), REVISE, revised("")),
    reflection(40, "a revision over the budget", draft(DRAFT_PROMISE), REVISE, revised(LONG_DRAFT)),
    reflection(41, "a revision that changes nothing", draft(DRAFT_PROMISE), REVISE, revised(DRAFT_PROMISE)),
    reflection(42, "a revision that rewrites everything", draft(DRAFT_PROMISE), REVISE,
               revised("Checkout trouble continues; our team keeps watching and will post news as it comes.")),
    reflection(43, "a revision with a new number", draft(DRAFT_PROMISE), REVISE,
               revised(REVISED.replace("about 27%", "about 31%"))),
    reflection(44, "a revision with a new incident id", draft(DRAFT_PROMISE), REVISE,
               revised(REVISED.replace("Payments in the US", "Payments in the US (inc_payments_legacy)"))),
    reflection(45, "a revision with a new severity label", draft(DRAFT_PROMISE), REVISE,
               revised(REVISED.replace("are degraded", "are degraded (P0)"))),
    reflection(46, "a revision with a new region", draft(DRAFT_PROMISE), REVISE,
               revised(REVISED.replace("in the US", "in the US and EU"))),
    reflection(47, "a revision with a restricted claim", draft(DRAFT_PROMISE), REVISE,
               revised(REVISED.replace(ETA, "The incident is resolved, and we keep watching payments."))),
    reflection(48, "a revision that does not apply the quoted replacement", draft(DRAFT_PROMISE), REVISE,
               revised(DRAFT_PROMISE.replace("back to normal", "back"))),
    reflection(49, "a revision that keeps the phrase to remove", draft(DRAFT_PROMISE),
               review("revise", [issue()], [f"Rewrite '{PROMISE[:-1]}'"]),
               revised(f"{DRAFT_PROMISE} {ETA}")),
    reflection(50, "a revision without the quoted phrase to add", draft(DRAFT),
               review("revise", [issue("missing_uncertainty")], [f"Add '{SUPPORT[:-1]}'"]),
               revised(DRAFT.replace("about 45 minutes", "roughly 45 minutes"))),
    # The final answer
    reflection(51, "an approved draft that claims the incident is resolved", draft(
        "The US payment issue is resolved. About 27% of checkouts were affected and 3.4% of payments failed. "
        + ACTIONS), APPROVE),
    reflection(52, "an approved draft with a number the context lacks", draft(DRAFT.replace("27%", "72%")), APPROVE),
    # The model server
    reflection(53, "a 500 on the draft, then an answer", transient(500), draft(DRAFT), APPROVE),
    reflection(54, "a 503 on the review, then an answer", draft(DRAFT), transient(503), APPROVE),
    reflection(55, "a 429 on the revision, then an answer", draft(DRAFT_PROMISE), REVISE, transient(429),
               revised(REVISED)),
    reflection(56, "500 on every try of the draft", transient(500), transient(500), transient(500)),
    reflection(57, "429 on every try of the review", draft(DRAFT), transient(429), transient(429), transient(429)),
    reflection(58, "401 on the draft", status(401)),
    reflection(59, "400 on the review", draft(DRAFT), status(400)),
    reflection(60, "a timeout on the draft, then an answer", slow(draft(DRAFT)), draft(DRAFT), APPROVE),
    reflection(61, "timeouts on every try of the revision", draft(DRAFT_PROMISE), REVISE,
               slow(revised(REVISED)), slow(revised(REVISED)), slow(revised(REVISED))),
    reflection(62, "dropped connections on every try of the draft", hang_up(), hang_up(), hang_up()),
    reflection(63, "the wall-time budget runs out during the draft", delay(0.4, draft(DRAFT)), APPROVE,
               budget={"max_seconds": 0.2}),
    reflection(64, "no wall time at all", draft(DRAFT), APPROVE, budget={"max_seconds": 0}),
    reflection(65, "a fix plan that says remove a quoted phrase", draft(DRAFT_PROMISE),
               review("revise", [issue()], [f"Remove '{PROMISE[:-1]}'"]), revised(f"{IMPACT} {ACTIONS}")),
    reflection(66, "a fix plan that says change one phrase to another", draft(DRAFT_PROMISE),
               review("revise", [issue()], [f"Change '{PROMISE[:-1]}' to '{ETA[:-1]}'"]),
               revised(f"{IMPACT} {ACTIONS}")),
    reflection(67, "a replacement given as an example", draft(DRAFT_PROMISE),
               review("revise", [issue()], [f"Replace '{PROMISE[:-1]}' with an estimate, such as '{ETA[:-1]}'"]),
               revised(REVISED)),
    reflection(68, "a revision that keeps the draft's unsupported claim", draft(
        f"{IMPACT} The incident is resolved for new checkouts. {PROMISE} {ACTIONS}"), REVISE,
               revised(f"{IMPACT} The incident is resolved for new checkouts. {ETA} {ACTIONS}")),
    reflection(69, "a revision that says fully recovered", draft(DRAFT_PROMISE), REVISE,
               revised(REVISED.replace(ETA, f"{ETA} Payments have fully recovered for most customers."))),
    reflection(70, "a draft exactly at the budget", draft((DRAFT + " " + SUPPORT * 20)[:900].rsplit(" ", 1)[0]
                                                           .ljust(900, ".")[:900]), review("escalate", reason="x")),
    reflection(71, "an issue type with spaces around it", draft(DRAFT),
               review("approve", [issue(" scope_leak ")])),
    reflection(72, "a 409 on the draft, then an answer", transient(409), draft(DRAFT), APPROVE),
    reflection(73, "two 500s on the review, then an answer", draft(DRAFT), transient(500), transient(500), APPROVE),
    reflection(74, "403 on the draft", status(403)),
    reflection(75, "404 on the revision", draft(DRAFT_PROMISE), REVISE, status(404)),
    reflection(76, "a fix plan that says update one phrase to say another", draft(DRAFT_PROMISE),
               review("revise", [issue()], [f"Update '{PROMISE[:-1]}' to say '{ETA[:-1]}'"]),
               revised(f"{IMPACT} {ACTIONS}")),
    reflection(77, "a phrase to add, written with other punctuation", draft(DRAFT),
               review("revise", [issue("missing_uncertainty")], ["Add 'Our support team, shares workaround guidance'"]),
               revised(f"{DRAFT} {SUPPORT}")),
    reflection(78, "a revision that names a region in words", draft(DRAFT_PROMISE), REVISE,
               revised(REVISED.replace("in the US", "in the US and Europe"))),
    reflection(79, "a revision with a new number in words", draft(DRAFT_PROMISE), REVISE,
               revised(REVISED.replace("every 15 minutes", "every twenty minutes"))),
    reflection(80, "a revision with the context's severity in lower case", draft(DRAFT_PROMISE), REVISE,
               revised(REVISED.replace("are degraded", "are degraded (p1)"))),
    reflection(81, "a revision with the context's incident id", draft(DRAFT_PROMISE), REVISE,
               revised(REVISED.replace("Payments in the US", "Payments in the US (inc_payments_20260305)"))),
    reflection(82, "a revision that says the incident closed", draft(DRAFT_PROMISE), REVISE,
               revised(REVISED.replace(ETA, f"{ETA} The incident closed ticket stays open."))),
    reflection(83, "a revision that says all payments are stable", draft(DRAFT_PROMISE), REVISE,
               revised(REVISED.replace(ETA, f"{ETA} All payments are stable for existing subscriptions."))),
    reflection(84, "a revision that says the issue is not resolved", draft(DRAFT_PROMISE), REVISE,
               revised(REVISED.replace(ETA, f"{ETA} The issue is not resolved yet."))),
    reflection(85, "a decision with spaces around it", draft(DRAFT), review(" approve ")),
    reflection(86, "null issues", draft(DRAFT), answer({"decision": "approve", "issues": None})),
    reflection(87, "a revise with a null fix plan", draft(DRAFT),
               answer({"decision": "revise", "issues": [issue()], "fix_plan": None})),
    reflection(88, "an approved draft over a tighter answer budget", draft(DRAFT), APPROVE,
               budget={"max_answer_chars": 200}),
    reflection(89, "a policy that allows a decision no step handles", draft(DRAFT), review("hold"),
               decisions_policy=("approve", "revise", "escalate", "hold")),
    reflection(90, "a fix plan that says avoid a quoted phrase", draft(DRAFT_PROMISE),
               review("revise", [issue()], [f"Avoid '{PROMISE[:-1]}'"]), revised(f"{IMPACT} {ACTIONS}")),
    reflection(91, "a fix plan that says delete a quoted phrase", draft(DRAFT_PROMISE),
               review("revise", [issue()], [f"Delete '{PROMISE[:-1]}'"]), revised(f"{IMPACT} {ACTIONS}")),
    reflection(92, "a fix plan that says do not say a quoted phrase", draft(DRAFT_PROMISE),
               review("revise", [issue()], [f"Do not say '{PROMISE[:-1]}'"]), revised(f"{IMPACT} {ACTIONS}")),
    reflection(93, "a fix plan that says one phrase instead of another", draft(DRAFT_PROMISE),
               review("revise", [issue()], [f"Say '{ETA[:-1]}' instead of '{PROMISE[:-1]}'"]), revised(REVISED)),
    reflection(94, "a replacement in double quotes", draft(DRAFT_PROMISE),
               review("revise", [issue()], [f'Replace "{PROMISE[:-1]}" with "{ETA[:-1]}"']), revised(REVISED)),
    reflection(95, "a policy without escalate", draft(DRAFT), review("escalate", reason="Reads like a commitment."),
               decisions_policy=("approve", "revise")),
]

# -- self-critique ---------------------------------------------------------------------------------

REMOVE_PROMISE = f'REMOVE "{PROMISE[:-1]}"'
ADD_ETA = f'ADD "{ETA[:-1]}"'
CRITIQUE_REVISE = critique("revise", [issue()], [REMOVE_PROMISE, ADD_ETA])
CRITIQUE_APPROVE = critique("approve", severity="low")
NOT_APPLIED = revised(f"{IMPACT} {ACTIONS}")  # the promise removed, the estimate not added

SELF_CRITIQUE = [
    # The paths that end well
    self_critique(1, "an approved draft is the answer", draft(DRAFT), CRITIQUE_APPROVE),
    self_critique(2, "a revision that applies the required changes", draft(DRAFT_PROMISE), CRITIQUE_REVISE,
                  revised(REVISED)),
    self_critique(3, "the second attempt applies the required changes", draft(DRAFT_PROMISE), CRITIQUE_REVISE,
                  NOT_APPLIED, revised(REVISED)),
    self_critique(4, "three attempts fail; the deterministic fallback applies the changes", draft(DRAFT_PROMISE),
                  CRITIQUE_REVISE, NOT_APPLIED, NOT_APPLIED, NOT_APPLIED),
    self_critique(5, "MUST_INCLUDE and MUST_REMOVE markers", draft(DRAFT_PROMISE),
                  critique("revise", [issue()], [f'MUST_REMOVE "{PROMISE[:-1]}"', f'MUST_INCLUDE "{ETA[:-1]}"']),
                  revised(REVISED)),
    self_critique(6, "a draft over the budget is shortened once", draft(LONG_DRAFT), draft(DRAFT), CRITIQUE_APPROVE),
    self_critique(7, "an approve with no severity", draft(DRAFT), answer({"decision": "approve"})),
    # Escalation
    self_critique(8, "the critic escalates with a reason", draft(DRAFT),
                  critique("escalate", [issue("legal_risk")], severity="high", reason="Reads like a commitment.")),
    self_critique(9, "an escalation without a reason", draft(DRAFT), critique("escalate", severity="high")),
    # The draft
    self_critique(10, "an empty draft field", draft(""), CRITIQUE_APPROVE),
    self_critique(11, "a draft that is not JSON", content("Payments are degraded."), CRITIQUE_APPROVE),
    self_critique(12, "a shortened draft still over the budget", draft(LONG_DRAFT), draft(LONG_DRAFT),
                  CRITIQUE_APPROVE),
    self_critique(13, "a shortening answer that is not JSON", draft(LONG_DRAFT), content("shorter"),
                  CRITIQUE_APPROVE),
    self_critique(14, "a draft answer without its field", answer({"update": DRAFT}), CRITIQUE_APPROVE),
    # The critique's shape
    self_critique(15, "a critique that is not JSON", draft(DRAFT), content("looks fine")),
    self_critique(16, "a critique that is a JSON list", draft(DRAFT), answer([])),
    self_critique(17, "a critique without a decision", draft(DRAFT), answer({"severity": "low"})),
    self_critique(18, "a decision the policy does not know", draft(DRAFT), critique("rewrite")),
    self_critique(19, "a severity outside low, medium and high", draft(DRAFT),
                  critique("approve", severity="critical")),
    self_critique(20, "a blank severity", draft(DRAFT), critique("approve", severity=" ")),
    self_critique(21, "risks that are not a list", draft(DRAFT),
                  answer({"decision": "approve", "severity": "low", "risks": "none"})),
    self_critique(22, "more risks than the budget", draft(DRAFT), critique("approve", [issue()] * 6)),
    self_critique(23, "a risk that is not an object", draft(DRAFT), critique("approve", ["overconfidence"])),
    self_critique(24, "a risk without a type", draft(DRAFT), critique("approve", [{"note": "Too sure."}])),
    self_critique(25, "a risk type the policy does not allow", draft(DRAFT), critique("approve", [issue("tone")])),
    self_critique(26, "a risk without a note", draft(DRAFT), critique("approve", [{"type": "overconfidence"}])),
    self_critique(27, "required changes that are not a list", draft(DRAFT_PROMISE),
                  answer({"decision": "revise", "severity": "medium", "risks": [issue()],
                          "required_changes": REMOVE_PROMISE})),
    self_critique(28, "more required changes than the budget", draft(DRAFT_PROMISE),
                  critique("revise", [issue()], [REMOVE_PROMISE] * 6)),
    self_critique(29, "a blank required change", draft(DRAFT_PROMISE),
                  critique("revise", [issue()], [REMOVE_PROMISE, " "])),
    self_critique(30, "a reason that is not text", draft(DRAFT), critique("approve", reason=["x"])),
    # The critique's decision rules
    self_critique(31, "an approve with required changes", draft(DRAFT), critique("approve", [], [ADD_ETA])),
    self_critique(32, "an approve of high severity", draft(DRAFT), critique("approve", severity="high")),
    self_critique(33, "a revise without required changes", draft(DRAFT_PROMISE), critique("revise", [issue()], [])),
    self_critique(34, "a required change without a marker", draft(DRAFT_PROMISE),
                  critique("revise", [issue()], [f'Soften "{PROMISE[:-1]}"'])),
    self_critique(35, "a required change with two quoted phrases", draft(DRAFT_PROMISE),
                  critique("revise", [issue()], [f'REMOVE "{PROMISE[:-1]}" and "every 15 minutes"'])),
    self_critique(36, "a revise naming a legal risk", draft(DRAFT_PROMISE),
                  critique("revise", [issue("legal_risk")], [REMOVE_PROMISE])),
    self_critique(37, "a revise of high severity", draft(DRAFT_PROMISE),
                  critique("revise", [issue()], [REMOVE_PROMISE], severity="high")),
    # The allowlists
    self_critique(38, "auto-revision off: a revise is denied in execution", draft(DRAFT_PROMISE), CRITIQUE_REVISE,
                  decisions_execution=("approve", "escalate")),
    self_critique(39, "a policy without the risk type", draft(DRAFT_PROMISE), CRITIQUE_REVISE,
                  issue_types=("missing_uncertainty", "contradiction", "scope_leak", "policy_violation", "legal_risk")),
    # The revision
    self_critique(40, "an empty revision", draft(DRAFT_PROMISE), CRITIQUE_REVISE, revised("")),
    self_critique(41, "a revision that changes nothing", draft(DRAFT_PROMISE), CRITIQUE_REVISE, revised(DRAFT_PROMISE)),
    self_critique(42, "a revision that rewrites everything", draft(DRAFT_PROMISE), CRITIQUE_REVISE,
                  revised(f"{ETA} Checkout trouble continues and our team keeps watching it closely.")),
    self_critique(43, "a revision that grows the text past the cap", draft(DRAFT_PROMISE), CRITIQUE_REVISE,
                  revised(f"{REVISED} {SUPPORT} Thank you for your patience while the team works on it.")),
    self_critique(44, "the context's hint tightens the length cap", draft(DRAFT_PROMISE),
                  critique("revise", [issue()], [REMOVE_PROMISE, f'ADD "{ETA[:-1]}"']),
                  revised(f"{REVISED} Thank you for bearing with us."), context=with_hints(max_length_increase_pct=5)),
    self_critique(45, "a revision with a new number", draft(DRAFT_PROMISE), CRITIQUE_REVISE,
                  revised(REVISED.replace("about 27%", "about 31%"))),
    self_critique(46, "a revision with a new region", draft(DRAFT_PROMISE), CRITIQUE_REVISE,
                  revised(REVISED.replace("in the US", "in the US and UK"))),
    self_critique(47, "a revision with a new severity label", draft(DRAFT_PROMISE), CRITIQUE_REVISE,
                  revised(REVISED.replace("are degraded", "are degraded (P2)"))),
    self_critique(48, "a revision with a restricted claim", draft(DRAFT_PROMISE), CRITIQUE_REVISE,
                  revised(REVISED.replace("but this estimate may change", "and the incident is resolved for most"))),
    self_critique(49, "the fallback's text fails the length cap", draft(DRAFT_PROMISE),
                  critique("revise", [issue()], [ADD_ETA, f'ADD "{SUPPORT[:-1]}"']),
                  NOT_APPLIED, NOT_APPLIED, NOT_APPLIED),
    # The model server
    self_critique(50, "a 503 on the critique, then an answer", draft(DRAFT), transient(503), CRITIQUE_APPROVE),
    self_critique(51, "timeouts on every try of the critique", draft(DRAFT), slow(CRITIQUE_APPROVE),
                  slow(CRITIQUE_APPROVE), slow(CRITIQUE_APPROVE)),
    self_critique(52, "401 on the revision", draft(DRAFT_PROMISE), CRITIQUE_REVISE, status(401)),
    self_critique(53, "500 on every try of the shortening", draft(LONG_DRAFT), transient(500), transient(500),
                  transient(500)),
    self_critique(54, "a shortened draft that is empty", draft(LONG_DRAFT), draft(""), CRITIQUE_APPROVE),
    self_critique(55, "a risk type in capitals", draft(DRAFT), critique("approve", [issue("Scope_Leak")])),
    self_critique(56, "a required change with a list marker", draft(DRAFT_PROMISE),
                  critique("revise", [issue()], [f"- {REMOVE_PROMISE}", f"- {ADD_ETA}"]), revised(REVISED)),
    self_critique(57, "lower-case markers", draft(DRAFT_PROMISE),
                  critique("revise", [issue()], [f'remove: "{PROMISE[:-1]}"', f'add: "{ETA[:-1]}"']), revised(REVISED)),
    self_critique(58, "the second attempt adds a number", draft(DRAFT_PROMISE), CRITIQUE_REVISE, NOT_APPLIED,
                  revised(REVISED.replace("about 27%", "about 29%"))),
    self_critique(59, "a revision over the budget", draft(DRAFT_PROMISE), CRITIQUE_REVISE, revised(LONG_DRAFT)),
    self_critique(60, "a revision with a new incident id", draft(DRAFT_PROMISE), CRITIQUE_REVISE,
                  revised(REVISED.replace("Payments in the US", "Payments in the US (inc_payments_legacy)"))),
    self_critique(61, "a revision that says fully recovered", draft(DRAFT_PROMISE), CRITIQUE_REVISE,
                  revised(REVISED.replace("but this estimate may change", "and most payments have fully recovered"))),
    self_critique(62, "the draft's unsupported claim kept when guarantees are not ruled out", draft(
        f"{IMPACT} The incident is resolved for new checkouts. {PROMISE} {ACTIONS}"), CRITIQUE_REVISE,
                  revised(f"{IMPACT} The incident is resolved for new checkouts. {ETA} {ACTIONS}"),
                  context=with_hints(avoid_absolute_guarantees=False)),
    self_critique(63, "the phrase to remove stays through every attempt; the fallback removes it",
                  draft(DRAFT), critique("revise", [issue()], [f'REMOVE "{ETA}"']),
                  revised(f"{DRAFT} Thank you."), revised(f"{DRAFT} Thank you."), revised(f"{DRAFT} Thank you.")),
    self_critique(64, "a 408 on the draft, then an answer", transient(408), draft(DRAFT), CRITIQUE_APPROVE),
    self_critique(65, "no wall time at all", draft(DRAFT), CRITIQUE_APPROVE, budget={"max_seconds": 0}),
    self_critique(66, "a phrase to remove in single quotes", draft(DRAFT_PROMISE),
                  critique("revise", [issue()], [f"REMOVE '{PROMISE[:-1]}'"]), revised(f"{IMPACT} {ACTIONS}")),
    self_critique(67, "the context's hint allows no growth at all", draft(DRAFT_PROMISE), CRITIQUE_REVISE,
                  revised(REVISED), context=with_hints(max_length_increase_pct=0)),
    self_critique(68, "a negative length hint", draft(DRAFT_PROMISE), critique("revise", [issue()], [REMOVE_PROMISE]),
                  revised(f"{IMPACT} {ACTIONS}"), context=with_hints(max_length_increase_pct=-50)),
    self_critique(69, "the fallback removes a phrase quoted with other end punctuation", draft(DRAFT),
                  critique("revise", [issue()], [f'REMOVE "{ETA[:-1]}!"']), revised(f"{DRAFT} Thanks."),
                  revised(f"{DRAFT} Thanks."), revised(f"{DRAFT} Thanks.")),
    self_critique(70, "the fallback adds a missing phrase", draft(DRAFT_PROMISE),
                  critique("revise", [issue()], [REMOVE_PROMISE, 'ADD "Thank you for your patience"']),
                  NOT_APPLIED, NOT_APPLIED, NOT_APPLIED),
    self_critique(71, "an approved draft that claims part of the incident is resolved",
                  draft(f"{IMPACT} Some payments are resolved. {ACTIONS}"), CRITIQUE_APPROVE),
    self_critique(72, "an approved draft over a tighter answer budget", draft(DRAFT), CRITIQUE_APPROVE,
                  budget={"max_answer_chars": 200}),
    self_critique(73, "the fallback removes the whole candidate", draft(DRAFT),
                  critique("revise", [issue()], [f'REMOVE "{IMPACT[:-1]}"']), revised(IMPACT), revised(IMPACT),
                  revised(IMPACT)),
    self_critique(74, "the fallback meets a phrase to remove written with other punctuation", draft(DRAFT),
                  critique("revise", [issue()], ['REMOVE "about 45 minutes but this estimate"']),
                  revised(f"{DRAFT} Thanks."), revised(f"{DRAFT} Thanks."), revised(f"{DRAFT} Thanks.")),
    self_critique(75, "a revision without its final full stop, which the fallback then empties", draft(DRAFT),
                  critique("revise", [issue()], [f'REMOVE "{IMPACT[:-1]}"']), revised(IMPACT[:-1]),
                  revised(IMPACT[:-1]), revised(IMPACT[:-1])),
    self_critique(76, "the second attempt is not JSON", draft(DRAFT_PROMISE), CRITIQUE_REVISE, NOT_APPLIED,
                  content("oops")),
    self_critique(77, "a policy without revise", draft(DRAFT_PROMISE), CRITIQUE_REVISE,
                  decisions_policy=("approve", "escalate")),
    self_critique(78, "escalation off in execution", draft(DRAFT),
                  critique("escalate", severity="high", reason="Reads like a commitment."),
                  decisions_execution=("approve", "revise")),
]

# -- routing ---------------------------------------------------------------------------------------

TICKET = "User Anna (user_id=42) asks for a refund of a pro_monthly subscription charged 10 days ago."
TECHNICAL_TICKET = "The public API returns error 502 on every request since this morning."
SALES_TICKET = "Which plan and pricing would fit a team of 12 people?"
FINAL = content("The billing specialist confirmed Anna can get a refund of 49.00 USD within the 14-day window.")
ALL_ROUTES = ("billing_specialist", "technical_specialist", "sales_specialist")

ROUTING = [
    # The paths that end well
    routing(1, "the billing specialist answers", route("billing_specialist"), FINAL),
    routing(2, "a technical ticket goes to the technical specialist", route("technical_specialist", TECHNICAL_TICKET),
            content("The API incident is mitigated; the next update follows in 30 minutes."), goal=TECHNICAL_TICKET),
    routing(3, "a sales ticket goes to the sales specialist", route("sales_specialist", SALES_TICKET),
            content("We recommend team_plus at 199.00 USD a month."), goal=SALES_TICKET),
    routing(4, "a reroute, then the right specialist", route("sales_specialist"), route("billing_specialist"), FINAL),
    routing(5, "two reroutes, then the right specialist", route("sales_specialist"), route("technical_specialist"),
            route("billing_specialist"), FINAL),
    routing(6, "the reference goal, routed as it is", answer({"kind": "route", "target": "billing_specialist",
                                                               "args": {"ticket": "  user_id=42   refund  please "}}),
            FINAL),
    # Attempts and budgets
    routing(7, "every attempt asks for a reroute", route("sales_specialist"), route("technical_specialist"),
            route("sales_specialist", TICKET + " Please check.")),
    routing(8, "the same target and ticket again", route("sales_specialist"), route("technical_specialist"),
            route("sales_specialist")),
    routing(9, "the delegation budget runs out", route("sales_specialist"), route("technical_specialist"),
            route("billing_specialist"), FINAL, budget={"max_route_attempts": 4, "max_delegations": 2}),
    routing(10, "no wall time at all", route("billing_specialist"), FINAL, budget={"max_seconds": 0}),
    # The route's shape
    routing(11, "a route that is not JSON", content("billing_specialist")),
    routing(12, "a route that is a JSON list", answer(["billing_specialist"])),
    routing(13, "a route of another kind", answer({"kind": "answer", "target": "billing_specialist",
                                                   "args": {"ticket": TICKET}})),
    routing(14, "a route with extra keys", route("billing_specialist", reason="refund")),
    routing(15, "a route without a target", answer({"kind": "route", "args": {"ticket": TICKET}})),
    routing(16, "a target the policy does not know", route("refund_bot")),
    routing(17, "args that are not an object", answer({"kind": "route", "target": "billing_specialist",
                                                       "args": [TICKET]})),
    routing(18, "args without a ticket", answer({"kind": "route", "target": "billing_specialist", "args": {}})),
    routing(19, "a blank ticket", route("billing_specialist", "   ")),
    routing(20, "null args", answer({"kind": "route", "target": "billing_specialist", "args": None})),
    routing(21, "the same target right after its reroute", route("sales_specialist"), route("sales_specialist")),
    routing(22, "a route in a fenced code block",
            content('```json\n{"kind": "route", "target": "billing_specialist", "args": {"ticket": "refund for '
                    'user_id=42"}}\n```'), FINAL),
    routing(23, "a route answer with no content", content(None)),
    routing(24, "a route whose kind says it is invalid", answer({"kind": "invalid"})),
    # The allowlists and the registry
    routing(25, "a target off in execution", route("billing_specialist"),
            routes_execution=("technical_specialist", "sales_specialist")),
    routing(26, "a target the policy does not allow", route("billing_specialist"),
            routes_policy=("technical_specialist", "sales_specialist")),
    routing(27, "an allowed target with no worker", route("refunds_specialist"),
            routes_policy=(*ALL_ROUTES, "refunds_specialist"), routes_execution=(*ALL_ROUTES, "refunds_specialist")),
    routing(28, "args the specialist does not take", answer({"kind": "route", "target": "billing_specialist",
                                                             "args": {"ticket": TICKET, "priority": "high"}})),
    routing(29, "a specialist that fails", route("billing_specialist"), workers={"billing_specialist": "failing"}),
    routing(30, "a specialist with an unexpected status", route("billing_specialist"),
            workers={"billing_specialist": "pending"}),
    routing(31, "a billing ticket that names no customer", route("billing_specialist", "I want a refund."), FINAL,
            goal="I was charged twice and want a refund."),
    # The final answer and the model server
    routing(32, "an empty final answer", route("billing_specialist"), content("  ")),
    routing(33, "a final answer with no content", route("billing_specialist"), content(None)),
    routing(34, "a 500 on the route, then an answer", transient(500), route("billing_specialist"), FINAL),
    routing(35, "a 429 on the final answer, then an answer", route("billing_specialist"), transient(429), FINAL),
    routing(36, "timeouts on every try of the route", slow(route("billing_specialist")),
            slow(route("billing_specialist")), slow(route("billing_specialist"))),
    routing(37, "401 on the route", status(401)),
    routing(38, "dropped connections on every try of the final answer", route("billing_specialist"), hang_up(),
            hang_up(), hang_up()),
    routing(39, "the same ticket with other spaces is the same call",
            route("sales_specialist", "refund  for  user_id=42"), route("technical_specialist"),
            route("sales_specialist", " refund for user_id=42 ")),
    routing(40, "a target with spaces around it", route(" billing_specialist "), FINAL),
    routing(41, "a customer on the free plan", route("billing_specialist", "Refund for user_id=7, charged today."),
            content("The billing specialist found that Max's free plan has no charge to refund."),
            goal="User Max (user_id=7) asks for a refund."),
    routing(42, "a 503 on every try of the route", transient(503), transient(503), transient(503)),
    routing(43, "a target that is not text", answer({"kind": "route", "target": 7, "args": {"ticket": TICKET}})),
    routing(44, "a ticket that is not text", answer({"kind": "route", "target": "billing_specialist",
                                                     "args": {"ticket": 42}})),
    routing(45, "a route without a kind", answer({"target": "billing_specialist", "args": {"ticket": TICKET}})),
    routing(46, "a route that is JSON null", content("null")),
    routing(47, "a ticket only the product's technical specialist reads as technical",
            route("technical_specialist", "The checkout page is down."), route("billing_specialist"), FINAL,
            goal="The checkout page is down; can user_id=42 get a refund?"),
    routing(48, "one route attempt, rerouted", route("sales_specialist"), budget={"max_route_attempts": 1}),
    routing(49, "no delegation allowed", route("billing_specialist"), budget={"max_delegations": 0}),
    routing(50, "extra keys and a target the policy does not know",
            answer({"kind": "route", "target": "nobody", "args": {"ticket": TICKET}, "note": "x"})),
]

SCENARIOS = [*REFLECTION, *SELF_CRITIQUE, *ROUTING]

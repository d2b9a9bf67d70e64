"""bench/guard_eval.py: its arithmetic on a tiny corpus checked by the real guard, its output,
and the gate on the whole corpus (which today's guard does not meet yet)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bench.guard_corpus import load, read
from bench.guard_eval import HIDDEN, evaluate, gate, summary

ROOT = Path(__file__).resolve().parents[2]
FACTS = "We are investigating failed card payments in the EU. About 27% of checkouts are affected."
UNKNOWN_CONTACT = f"{FACTS} For help, write to help@unknown-example.org."
# Outcomes no reading of the guard can dispute: an empty text stops, an address nobody declared
# stops, a text that only repeats the incident's own facts passes. "u3" and "s3" carry the wrong
# label on purpose, so the evaluator has a miss and a false stop to count.
TEXTS = [
    {"id": "u1", "label": "unsafe", "kind": "broken text", "text": "", "reason": "Empty."},
    {"id": "u2", "label": "unsafe", "kind": "unknown contact", "text": UNKNOWN_CONTACT, "reason": "Undeclared."},
    {"id": "u3", "label": "unsafe", "kind": "mislabelled", "text": FACTS, "reason": "A miss, on purpose."},
    {"id": "s1", "label": "safe", "text": FACTS, "reason": "The facts only."},
    {"id": "s2", "label": "safe", "twin_of": "u2", "text": f"{FACTS} We apologize for the inconvenience.",
     "reason": "The facts and an apology."},
    {"id": "s3", "label": "safe", "text": UNKNOWN_CONTACT, "reason": "A false stop, on purpose."},
]
TINY = {"kind": "payments", "incidents": [{
    "id": "inc_tiny_b", "part": "tune", "title": "Card payments failing in the EU", "report_date": "2026-11-22",
    "regions": ["EU"], "severity": "P1", "state": "investigating", "status": "degraded (investigating)",
    "components": ["Card payments"], "policy_hints": {"avoid_absolute_guarantees": True},
    "facts": [{"key": "affected_checkout_pct", "label": "Checkouts affected", "unit": "%", "value": 27}],
    "approved_actions": ["post an update on the status page every 30 minutes"], "texts": TEXTS}]}


@pytest.fixture(scope="module")
def result():
    return summary(evaluate(read([("tiny.yaml", TINY)])))


def test_recall_and_safe_pass_count_each_text_once_per_shape(result):
    assert result["overall"] == {"unsafe": 6, "stopped": 4, "recall": 4 / 6, "safe": 6, "passed": 4,
                                 "safe_pass": 4 / 6}
    for shape in ("plain", "product"):
        assert result["format"][shape] == {"unsafe": 3, "stopped": 2, "recall": 2 / 3, "safe": 3, "passed": 2,
                                           "safe_pass": 2 / 3}
    assert set(result["part_format"]) == {"tune/plain", "tune/product"}


def test_risk_kinds_and_checks_count_what_they_caught_and_falsely_stopped(result):
    assert result["risk_kind"]["unknown contact"]["recall"] == 1.0
    assert result["risk_kind"]["mislabelled"]["recall"] == 0.0
    assert result["check"]["invalid_answer:empty"] == {"caught_unsafe": 2, "stopped_safe": 0}
    assert result["check"]["invalid_answer:unknown_contact"] == {"caught_unsafe": 2, "stopped_safe": 2}


def test_a_held_out_text_the_guard_gets_wrong_is_listed_by_its_id_only_unless_asked():
    held_out = {**TINY, "incidents": [{**TINY["incidents"][0], "id": "inc_tiny_h0", "part": "holdout"}]}
    outcomes = evaluate(read([("tiny.yaml", held_out)]))
    hidden = summary(outcomes)["wrong"]
    assert {w["id"] for w in hidden} == {"u3", "s3"} and {w["text"] for w in hidden} == {HIDDEN}
    shown = summary(outcomes, show_held_out=True)["wrong"]
    assert {w["text"] for w in shown} == {FACTS[:100], UNKNOWN_CONTACT[:100]}


def test_the_wrong_texts_are_the_miss_and_the_false_stop(result):
    wrong = {(w["id"], w["format"], w["check"]) for w in result["wrong"]}
    assert wrong == {("u3", "plain", None), ("u3", "product", None),
                     ("s3", "plain", "invalid_answer:unknown_contact"),
                     ("s3", "product", "invalid_answer:unknown_contact")}


def test_the_gate_names_each_part_and_shape_below_a_threshold(result):
    assert gate(result, 0.6, 0.6) == []
    assert gate(result, 0.7, None) == ["tune/plain: recall 0.667 < 0.7", "tune/product: recall 0.667 < 0.7"]
    assert gate(result, None, 0.9) == ["tune/plain: safe-pass 0.667 < 0.9", "tune/product: safe-pass 0.667 < 0.9"]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "bench/guard_eval.py", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300, env={"PATH": "/usr/bin:/bin", "HOME": str(ROOT)})


def test_the_script_prints_json_for_one_part_and_shape_and_exits_1_below_the_gate():
    done = run("--part", "holdout", "--format", "product", "--json", "--min-recall", "1", "--min-safe-pass", "0")
    figures = json.loads(done.stdout)
    assert set(figures["part_format"]) == {"holdout/product"}
    assert figures["overall"]["unsafe"] == sum(1 for r in load() if r["part"] == "holdout" and r["label"] == "unsafe")
    below = figures["overall"]["recall"] < 1
    assert done.returncode == (1 if below else 0), done.stderr
    assert bool(figures["gate"]["misses"]) == below


def test_the_script_prints_its_tables():
    done = run("--part", "tune", "--format", "plain")
    assert done.returncode == 0, done.stderr
    for title in ("### Overall", "### Per part", "### Per context shape", "### Per incident kind",
                  "### Per risk kind", "### Per check that fired", "### Texts the guard gets wrong"):
        assert title in done.stdout


@pytest.mark.xfail(strict=True, reason="both parts are below the gate (tuned: recall 0.964, safe-pass "
                                       "0.943-0.961; held out: recall 0.923, safe-pass 0.904-0.917; docs/guard.md, "
                                       "'How well it does'); strict, so reaching the gate turns this into a failure "
                                       "to remove the mark")
def test_the_guard_meets_the_gate_on_every_part_and_shape():
    result = summary(evaluate(load()))
    assert set(result["part_format"]) == {"tune/plain", "tune/product", "holdout/plain", "holdout/product"}
    assert gate(result, 0.95, 0.95) == []

"""The customer-text guard measured on the guard corpus: how much of what a lead refuses it stops,
and how much of what a lead publishes it lets through.

    .venv/bin/python bench/guard_eval.py                         # every text, both context shapes
    .venv/bin/python bench/guard_eval.py --part holdout --format product
    .venv/bin/python bench/guard_eval.py --min-recall 0.95 --min-safe-pass 0.95   # exit 1 below either
    .venv/bin/python bench/guard_eval.py --json

Each text of ``bench/guard_corpus`` is checked as a final answer (``agents.core.guard.check_final_answer``)
against its incident's context, once per context shape (``plain``: the plain dict; ``product``: what
``Incident.context()`` gives), with the self-critique pipeline's default policy and its guard
configuration (``guard_config``: the strict claim form when the context's policy hints ask to avoid
absolute guarantees). A text "stops" when the result is not ok. Recall is unsafe texts stopped /
unsafe texts; safe-pass is safe texts passed / safe texts. The gate (``--min-recall``,
``--min-safe-pass``) holds for each part (tune, holdout) and each shape on its own. The texts the
guard gets wrong are printed for the tuned part; a held-out one shows its id only, unless
``--show-held-out`` asks for its text (not while tuning).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.core.guard import check_final_answer, guard_config
from agents.core.policy import DEFAULT_VOCABULARY, default_policy
from bench.common import print_table
from bench.guard_corpus import FORMATS, PARTS, load

PIPELINE = "self_critique"  # the pipeline whose default policy (and strict form) the texts are checked with


def fraction(text: str) -> float:
    """An argparse type: a share between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a number between 0 and 1 is needed, got {text!r}") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"must lie between 0 and 1, got {text}")
    return value


def check(text: str, context: dict, policy=None, goal: str = "") -> list[str]:
    """The checks that fail for ``text`` as a final answer on ``context`` and the run's ``goal`` (empty:
    it passes)."""
    policy = policy or default_policy(PIPELINE)
    config = guard_config(policy, context)
    result = check_final_answer(text, context, config.rules, max_answer_chars=config.max_answer_chars,
                                strict_claims=config.strict_claims, auto_publish=policy.auto_publish, goal=goal)
    if result.ok:
        return []
    return list(dict.fromkeys([result.stop_reason, *(v["check"] for v in result.violations)]))


def grounded(policy, on: bool = True):
    """The policy with grounding switched on (the vocabulary's first terms) or off."""
    vocabulary = DEFAULT_VOCABULARY if on else None
    return dataclasses.replace(policy, guard=dataclasses.replace(policy.guard, vocabulary=vocabulary))


def evaluate(records: Iterable[dict], formats: Sequence[str] = FORMATS, *, grounding: bool = True) -> list[dict]:
    """One outcome per text and context shape: the record's fields, ``format``, ``checks`` (what
    failed) and ``stopped``. ``grounding``: the policy's grounding switch."""
    policy = grounded(default_policy(PIPELINE), grounding)
    outcomes = []
    for record in records:
        for shape in formats:
            checks = check(record["text"], record["contexts"][shape], policy, record.get("goal", ""))
            outcomes.append({"id": record["id"], "incident": record["incident"], "label": record["label"],
                             "kind": record["kind"], "incident_kind": record["incident_kind"],
                             "part": record["part"], "twin_of": record["twin_of"], "text": record["text"],
                             "format": shape, "checks": checks, "stopped": bool(checks)})
    return outcomes


def rates(outcomes: Sequence[dict]) -> dict:
    """Counts and the two shares (None where there is nothing to divide by)."""
    unsafe = [o for o in outcomes if o["label"] == "unsafe"]
    safe = [o for o in outcomes if o["label"] == "safe"]
    stopped = sum(o["stopped"] for o in unsafe)
    passed = sum(not o["stopped"] for o in safe)
    return {"unsafe": len(unsafe), "stopped": stopped, "recall": stopped / len(unsafe) if unsafe else None,
            "safe": len(safe), "passed": passed, "safe_pass": passed / len(safe) if safe else None}


def grouped(outcomes: Sequence[dict], key: Callable[[dict], str | None]) -> dict[str, dict]:
    groups: dict[str, list[dict]] = defaultdict(list)
    for outcome in outcomes:
        name = key(outcome)
        if name is not None:
            groups[name].append(outcome)
    return {name: rates(groups[name]) for name in sorted(groups)}


def by_check(outcomes: Sequence[dict]) -> dict[str, dict]:
    """Per check: unsafe texts it failed (caught) and safe texts it failed (false stops). A text that
    fails several checks counts under each."""
    caught: Counter = Counter()
    false: Counter = Counter()
    for outcome in outcomes:
        for name in outcome["checks"]:
            (caught if outcome["label"] == "unsafe" else false)[name] += 1
    return {name: {"caught_unsafe": caught[name], "stopped_safe": false[name]} for name in sorted(caught | false)}


HIDDEN = "(held out: not shown)"


def summary(outcomes: Sequence[dict], *, show_held_out: bool = False) -> dict:
    """The figures of ``outcomes``, and the texts the guard gets wrong. A held-out text is listed by its
    id only unless ``show_held_out``: whoever tunes the guard reads the evaluation's output, and the
    held-out part is the one nobody tunes on."""
    return {
        "overall": rates(outcomes),
        "part": grouped(outcomes, lambda o: o["part"]),
        "format": grouped(outcomes, lambda o: o["format"]),
        "part_format": grouped(outcomes, lambda o: f"{o['part']}/{o['format']}"),
        "incident_kind": grouped(outcomes, lambda o: o["incident_kind"]),
        "risk_kind": grouped(outcomes, lambda o: o["kind"]),
        "check": by_check(outcomes),
        "wrong": [{"id": o["id"], "format": o["format"], "label": o["label"], "kind": o["kind"],
                   "check": o["checks"][0] if o["checks"] else None,
                   "text": o["text"][:100] if show_held_out or o["part"] != "holdout" else HIDDEN}
                  for o in outcomes if o["stopped"] != (o["label"] == "unsafe")],
    }


def gate(result: dict, min_recall: float | None, min_safe_pass: float | None) -> list[str]:
    """What falls below the thresholds, per part and shape: one line each (empty: the gate holds)."""
    misses = []
    for name, figures in result["part_format"].items():
        for what, floor in (("recall", min_recall), ("safe_pass", min_safe_pass)):
            value = figures[what]
            if floor is not None and value is not None and value < floor:
                misses.append(f"{name}: {what.replace('_', '-')} {value:.3f} < {floor:g}")
    return misses


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _rows(groups: dict[str, dict]) -> list[list]:
    return [[name, f["unsafe"], f["stopped"], _share(f["recall"]), f["safe"], f["passed"], _share(f["safe_pass"])]
            for name, f in groups.items()]


def print_tables(result: dict) -> None:
    headers = ["", "unsafe", "stopped", "recall", "safe", "passed", "safe-pass"]
    print_table("Overall", headers, _rows({"all": result["overall"]}))
    print_table("Per part", headers, _rows(result["part"]))
    print_table("Per context shape", headers, _rows(result["format"]))
    print_table("Per part and shape (the gate)", headers, _rows(result["part_format"]))
    print_table("Per incident kind", headers, _rows(result["incident_kind"]))
    print_table("Per risk kind (unsafe texts)", ["risk", "unsafe", "stopped", "recall"],
                [[name, f["unsafe"], f["stopped"], _share(f["recall"])] for name, f in result["risk_kind"].items()])
    print_table("Per check that fired", ["check", "unsafe caught", "safe stopped"],
                [[name, f["caught_unsafe"], f["stopped_safe"]] for name, f in result["check"].items()])
    print_table("Texts the guard gets wrong", ["id", "shape", "label", "check", "text"],
                [[w["id"], w["format"], w["label"], w["check"] or "(passed)",
                  w["text"].replace("|", "/").replace("\n", " ")] for w in result["wrong"]])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=[*PARTS, "all"], default="all", help="which incidents (default all)")
    parser.add_argument("--format", choices=[*FORMATS, "all"], default="all",
                        help="which context shape (default all)")
    parser.add_argument("--min-recall", type=fraction, default=None, help="exit 1 when a part/shape is below")
    parser.add_argument("--min-safe-pass", type=fraction, default=None, help="exit 1 when a part/shape is below")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON instead of tables")
    parser.add_argument("--no-grounding", action="store_true",
                        help="the named checks alone, with the policy's grounding switch off")
    parser.add_argument("--show-held-out", action="store_true",
                        help="print the held-out texts the guard gets wrong too (not while tuning)")
    args = parser.parse_args(argv)
    records = [r for r in load() if args.part in ("all", r["part"])]
    formats = FORMATS if args.format == "all" else (args.format,)
    result = summary(evaluate(records, formats, grounding=not args.no_grounding), show_held_out=args.show_held_out)
    misses = gate(result, args.min_recall, args.min_safe_pass)
    result["gate"] = {"min_recall": args.min_recall, "min_safe_pass": args.min_safe_pass, "misses": misses}
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        print_tables(result)
        for miss in misses:
            print(f"below the gate: {miss}")
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())

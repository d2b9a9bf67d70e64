"""The guard's own time on one customer text: the final-answer checks, with and without grounding.

    .venv/bin/python bench/guard_speed.py                # ~900-character texts, 5 rounds
    .venv/bin/python bench/guard_speed.py --chars 400 --rounds 9

The texts are the guard corpus's (``bench/guard_corpus``), joined per incident up to ``--chars``
characters, each checked against its incident's product context as a final answer under the
self-critique policy (its strict form where the incident asks for it). The first round fills the
caches every run fills on its first text (the vocabulary's index, an incident's evidence); the
figures are over the rounds after it. Plain Python: no database, no model.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agents.core.guard import check_final_answer, guard_config
from agents.core.policy import DEFAULT_VOCABULARY, SelfCritiquePolicy
from bench.common import fmt_ms, median, percentile, print_machine, print_table, whole
from bench.guard_corpus import load


def texts(chars: int) -> list[tuple[str, dict, str]]:
    """(text, context, goal) per incident: its texts joined, cut at a word before ``chars``."""
    by_incident: dict[str, list[dict]] = {}
    for record in load():
        by_incident.setdefault(record["incident"], []).append(record)
    found = []
    for records in by_incident.values():
        joined = " ".join(r["text"] for r in records)
        cut = joined[:chars].rsplit(" ", 1)[0] if len(joined) > chars else joined
        found.append((cut, records[0]["contexts"]["product"], records[0]["goal"]))
    return found


def timings(cases, policy, rules, rounds: int) -> list[float]:
    """Milliseconds per text, over every round after the first."""
    spent = []
    for round_ in range(rounds + 1):
        for text, context, goal in cases:
            strict = guard_config(policy, context).strict_claims
            started = time.perf_counter()
            check_final_answer(text, context, rules, max_answer_chars=len(text) + 1, strict_claims=strict, goal=goal)
            if round_:
                spent.append((time.perf_counter() - started) * 1000)
    return spent


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=whole(100), default=900, help="characters per text (default 900)")
    parser.add_argument("--rounds", type=whole(1), default=5, help="timed rounds over every text (default 5)")
    args = parser.parse_args(argv)
    cases = texts(args.chars)
    policy = SelfCritiquePolicy()
    # The policy's own guard has the vocabulary: grounding is off only where the vocabulary is None.
    named_only = dataclasses.replace(policy.guard, vocabulary=None)
    grounded = dataclasses.replace(policy.guard, vocabulary=DEFAULT_VOCABULARY)
    rows = []
    for name, rules in (("named checks (grounding off)", named_only), ("with grounding", grounded)):
        spent = timings(cases, policy, rules, args.rounds)
        rows.append([name, len(spent), fmt_ms(median(spent), 2), fmt_ms(percentile(spent, 90), 2),
                     fmt_ms(max(spent), 2)])
    size = round(sum(len(t) for t, _, _ in cases) / len(cases))
    print_table(f"The guard on one text ({len(cases)} texts of about {size} characters)",
                ["checks", "texts timed", "median ms", "p90 ms", "max ms"], rows)
    print_machine()
    return 0


if __name__ == "__main__":
    sys.exit(main())

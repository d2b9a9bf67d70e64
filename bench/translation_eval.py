"""The translation invariance check measured on labelled translations: how many unfaithful ones it
stops (recall) and how many of the ones it stops are unfaithful (precision).

    .venv/bin/python bench/translation_eval.py               # both parts, a table per part and language
    .venv/bin/python bench/translation_eval.py --verbose     # and every wrong decision with its findings
    .venv/bin/python bench/translation_eval.py --json

``bench/translation_corpus/tune.yaml`` was read while writing the check; ``holdout.yaml`` was
written after it and never used to change it. A translation "stops" when
``agents.core.guard.translation.check_translation`` has any finding.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agents.core.guard.translation import check_translation

CORPUS = Path(__file__).resolve().parent / "translation_corpus"
PARTS = ("tune", "holdout")


def load(part: str) -> list[dict]:
    records = yaml.safe_load((CORPUS / f"{part}.yaml").read_text(encoding="utf-8"))
    for record in records:
        missing = {"id", "lang", "faithful", "source", "translation"} - record.keys()
        if missing:
            raise ValueError(f"{part}.yaml {record.get('id')}: missing {sorted(missing)}")
    return records


def measure(records: list[dict]) -> dict:
    """Counts and figures; the positive class is "unfaithful" (the check should stop it)."""
    stopped_bad = stopped_good = passed_bad = passed_good = 0
    wrong = []
    for record in records:
        findings = check_translation(record["source"], record["translation"], record["lang"])
        stops = bool(findings)
        if stops and not record["faithful"]:
            stopped_bad += 1
        elif stops:
            stopped_good += 1
            wrong.append((record, findings))
        elif not record["faithful"]:
            passed_bad += 1
            wrong.append((record, findings))
        else:
            passed_good += 1
    precision = stopped_bad / (stopped_bad + stopped_good) if stopped_bad + stopped_good else 1.0
    recall = stopped_bad / (stopped_bad + passed_bad) if stopped_bad + passed_bad else 1.0
    return {"texts": len(records), "unfaithful": stopped_bad + passed_bad, "stopped_unfaithful": stopped_bad,
            "stopped_faithful": stopped_good, "precision": round(precision, 3), "recall": round(recall, 3),
            "wrong": wrong}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    results = {}
    for part in PARTS:
        records = load(part)
        for lang in sorted({r["lang"] for r in records}) + ["all"]:
            chosen = [r for r in records if lang == "all" or r["lang"] == lang]
            results[f"{part}/{lang}"] = measure(chosen)
    if args.json:
        print(json.dumps({k: {n: v for n, v in r.items() if n != "wrong"} for k, r in results.items()}, indent=2))
        return 0
    print("| part/language | texts | unfaithful | stopped unfaithful | stopped faithful | precision | recall |")
    print("|---|---|---|---|---|---|---|")
    for key, r in results.items():
        print(f"| {key} | {r['texts']} | {r['unfaithful']} | {r['stopped_unfaithful']} | {r['stopped_faithful']} "
              f"| {r['precision']:.2f} | {r['recall']:.2f} |")
    if args.verbose:
        for key, r in results.items():
            if key.endswith("/all"):
                for record, findings in r["wrong"]:
                    label = "faithful, stopped" if record["faithful"] else "unfaithful, passed"
                    print(f"\n{key.split('/')[0]} {record['id']} ({label}): {record['translation']}")
                    for finding in findings:
                        print(f"  - {finding.message}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

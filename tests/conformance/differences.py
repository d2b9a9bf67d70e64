"""The scenarios where the product differs from the reference pipelines on purpose, as listed in
docs/decisions.md ("Where the product differs from the reference pipelines"): one table row per
scenario with both outcomes and the reason. The suite reads the table itself, so the page and the
suite cannot disagree."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tests.conformance.harness import Outcome

DECISIONS = Path(__file__).parents[2] / "docs" / "decisions.md"
SECTION = "Where the product differs from the reference pipelines"
ROW = re.compile(r"^\|\s*`(?P<id>[a-z_]+-\d{3})`\s*\|(?P<reference>[^|]*)\|(?P<product>[^|]*)\|(?P<why>.*)\|\s*$")
OUTCOME = re.compile(r"^\s*`(?P<reason>[^`]+)`,\s*(?P<calls>\d+)\s+calls?\s*$")


@dataclass(frozen=True)
class Difference:
    scenario: str
    reference: Outcome
    product: Outcome
    why: str


def _outcome(cell: str, row: str) -> Outcome:
    match = OUTCOME.match(cell)
    if not match:
        raise ValueError(f"{DECISIONS.name}: an outcome reads `<stop reason>`, <n> calls; "
                         f"not {cell.strip()!r} in {row}")
    return Outcome(match["reason"], int(match["calls"]))


def section_lines(text: str) -> list[str]:
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.lstrip("#").strip() == SECTION and line.startswith("#")),
                 None)
    if start is None:
        raise ValueError(f"{DECISIONS.name} has no section “{SECTION}”")
    level = len(lines[start]) - len(lines[start].lstrip("#"))
    end = next((i for i in range(start + 1, len(lines))
                if lines[i].startswith("#") and len(lines[i]) - len(lines[i].lstrip("#")) <= level), len(lines))
    return lines[start + 1:end]


def listed(path: Path = DECISIONS) -> dict[str, Difference]:
    """The listed differences by scenario id."""
    found: dict[str, Difference] = {}
    for line in section_lines(path.read_text(encoding="utf-8")):
        match = ROW.match(line)
        if not match:
            continue
        if match["id"] in found:
            raise ValueError(f"{DECISIONS.name} lists {match['id']} twice")
        found[match["id"]] = Difference(match["id"], _outcome(match["reference"], line),
                                        _outcome(match["product"], line), match["why"].strip())
    return found

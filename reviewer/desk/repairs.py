"""One-key repairs on the escalation page (docs/desk.md, 'One-key repairs').

The rules (``agents.core.repairs``) propose fixed texts for a finding; here each proposal is checked
by the same guard as a lead's edit (:func:`reviewer.desk.decisions.guard_edit`, under the policy that
applies now), and a rule's first text is offered only when its finding is gone and no finding is
new. Choosing one puts the text in the edit box; approving it records an edit like any other.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agents.core import repairs
from reviewer.desk.decisions import guard_edit, policy_now
from reviewer.models import Escalation

# Keys 1 to 9, one per offered fix, in the page's order.
KEYS = "123456789"


@dataclass(frozen=True)
class Offered:
    label: str
    text: str
    rule: str
    key: str = ""  # the key that chooses it ("" past the ninth fix)


def _key(finding: Mapping) -> tuple[str, str]:
    return repairs.check_name(finding), str(finding.get("found") or "").lower()


def offered(escalation: Escalation, text: str, findings: list) -> list[list[Offered]]:
    """For each of ``findings`` (found in ``text``), the fixes the guard passes: per rule, the first
    proposed text that clears that finding and adds none (numbered 1 to 9 across the list; a text
    offered again, as removing a sentence two findings share is, keeps the key it was first given)."""
    under = policy_now(escalation.run)
    checked: dict[str, set] = {}

    def found_in(candidate: str) -> set:
        if candidate not in checked:
            checked[candidate] = {_key(v) for v in guard_edit(escalation, candidate, under=under)["violations"]}
        return checked[candidate]

    before = found_in(text)
    context = escalation.run.context or {}
    keys = iter(KEYS)
    key_of: dict[str, str] = {}
    fixes: list[list[Offered]] = []
    for finding in findings:
        mine: list[Offered] = []
        done: set[str] = set()
        for repair in repairs.candidates(text, finding, context) if isinstance(finding, Mapping) else []:
            if repair.rule in done:
                continue
            after = found_in(repair.text)
            if _key(finding) not in after and after <= before:
                done.add(repair.rule)
                if repair.text not in key_of:
                    key_of[repair.text] = next(keys, "")
                mine.append(Offered(repair.label, repair.text, repair.rule, key_of[repair.text]))
        fixes.append(mine)
    return fixes

"""Decisions as datasets (docs/datasets.md): what leads decided, exported as JSON Lines in formats
that fine-tuning, preference-tuning and eval tools take as they are.

- ``chat``: OpenAI chat fine-tuning, one line per approved text that was published:
  ``{"messages": [system, user (the goal and the public facts), assistant (the published text)]}``.
- ``preference``: OpenAI preference fine-tuning (DPO), one line per edited approval:
  ``{"input": {"messages": [...]}, "preferred_output": [the lead's text], "non_preferred_output":
  [the model's candidate]}``.
- ``evals``: OpenAI evals samples (a Match eval), one line per rejection: ``{"input": [messages
  asking a reviewer whether to publish the draft], "ideal": "reject", "reason": the lead's reason}``.
- ``guard``: guard regression cases, one line per final decision: the candidate, its public
  context, the lead's decision and the guard's findings, for a policy lab to replay.
- ``scorecard``: the guard's scorecard of the chosen decisions (docs/learning-loop.md), one line per
  check and claim family (all policy versions, then each), and one line of misses: counts only.

Nothing internal, personal or secret leaves (``scrub``, on every string of every line: texts,
messages, the context, the guard's findings): the context's internal facts and approved actions are
dropped; every internal detail is ``[internal]``; every email address and phone number is ``[email]``
or ``[phone]``; configured model keys, webhook signing secrets and anything shaped like an API token
or key are ``[redacted]``. Every export appends a ledger entry: who, which format, which filters, how
many lines.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from datetime import date

from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet

from agents.core.guard.contacts import find_contacts
from agents.core.guard.internal import CHECK as INTERNAL_CHECK
from agents.core.guard.internal import find_internal, public_context
from agents.core.llm.endpoints import REDACTED, configured_keys, redact
from agents.core.policy import PIPELINE_CHOICES
from reviewer.ledger.chain import sha256
from reviewer.ledger.events import record_export
from reviewer.models import Decision, PublishedUpdate
from reviewer.models.learning import scorecard
from reviewer.outbox import destinations
from reviewer.permissions import MESSAGES

EXPORT_PERMISSION = "reviewer.export_decisions"
FORMATS = ("chat", "preference", "evals", "guard")  # a line per decision
SCORECARD = "scorecard"  # the decisions' scorecard (docs/learning-loop.md): lines of counts
EXPORTS = (*FORMATS, SCORECARD)
FINAL_ACTIONS = (Decision.Action.APPROVE, Decision.Action.EDIT_APPROVE, Decision.Action.REJECT)
INTERNAL_MASK = "[internal]"
CONTACT_MASKS = {"email": "[email]", "phone": "[phone]"}
# Secrets whose values the product does not hold, by their shape: its own API tokens (only their
# digest is stored), model keys of the OpenAI kind, signing secrets of the Stripe/Svix kind, bearer
# tokens and private keys.
SECRET_SHAPES = re.compile(
    r"(?<![\w-])(?:gr_[A-Za-z0-9_-]{20,}|sk-[A-Za-z0-9_-]{16,}|whsec_[A-Za-z0-9+/=_-]{16,})"
    r"|(?<=Bearer )[A-Za-z0-9._~+/=-]{16,}"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)",
    re.DOTALL,
)
WRITER = ("You write customer-facing updates about service incidents. State only what the facts "
          "support, in plain language, with no internal details.")
REVIEWER = ("You review customer-facing incident updates before they are published. Answer with one "
            "word: publish or reject.")


class ExportInvalid(ValueError):
    """A filter or format that cannot be used; the message says which and what is allowed."""


@dataclass(frozen=True)
class Filters:
    since: date | None = None  # decided on or after (UTC date)
    until: date | None = None  # decided on or before
    pipeline: str = ""
    incident: str = ""  # the incident's id, e.g. inc_pay_2041
    decision: str = ""  # approve, edit_approve or reject

    def __post_init__(self):
        pipelines = [name for name, _ in PIPELINE_CHOICES]
        if self.pipeline and self.pipeline not in pipelines:
            raise ExportInvalid(f"“{self.pipeline[:40]}” is not a pipeline; one of: {', '.join(pipelines)}.")
        if self.decision and self.decision not in FINAL_ACTIONS:
            raise ExportInvalid(f"“{self.decision[:40]}” is not a decision; one of: {', '.join(FINAL_ACTIONS)}.")
        if self.since and self.until and self.since > self.until:
            raise ExportInvalid("The date range ends before it starts.")

    def record(self) -> dict:
        return {key: (value.isoformat() if isinstance(value, date) else value)
                for key, value in asdict(self).items() if value}


def decisions(filters: Filters) -> QuerySet[Decision]:
    rows = (Decision.objects.filter(action__in=FINAL_ACTIONS)
            .select_related("escalation", "escalation__run", "escalation__run__incident", "actor")
            .order_by("at", "id"))
    if filters.since:
        rows = rows.filter(at__date__gte=filters.since)
    if filters.until:
        rows = rows.filter(at__date__lte=filters.until)
    if filters.pipeline:
        rows = rows.filter(escalation__run__pipeline=filters.pipeline)
    if filters.incident:
        rows = rows.filter(escalation__run__incident__incident_id=filters.incident)
    if filters.decision:
        rows = rows.filter(action=filters.decision)
    return rows


# ---------------------------------------------------------------- one line per decision


def _masked(text: str, context: dict) -> str:
    """``text`` with every internal detail of ``context`` replaced by ``[internal]``."""
    for violation in find_internal(text, context):
        if violation.found:
            text = text.replace(violation.found, INTERNAL_MASK)
    return text


def _contacts_masked(text: str) -> str:
    """``text`` with every email address and phone number replaced by ``[email]`` or ``[phone]``."""
    for contact in reversed(find_contacts(text)):
        if contact.kind in CONTACT_MASKS:
            text = text[:contact.start] + CONTACT_MASKS[contact.kind] + text[contact.end:]
    return text


def secrets() -> list[str]:
    """Every secret the environment configures: the model keys and the webhooks' signing secrets."""
    return [*configured_keys(), *(d.secret for d in destinations.declared().values() if d.secret)]


def scrub(value, context: dict, keys: list[str]):
    """``value`` (a line, at any depth) with secrets, then contact details, then internal details
    masked in every string."""
    if isinstance(value, dict):
        return {scrub(key, context, keys): scrub(item, context, keys) for key, item in value.items()}
    if isinstance(value, list):
        return [scrub(item, context, keys) for item in value]
    if not isinstance(value, str) or not value:
        return value
    value = SECRET_SHAPES.sub(REDACTED, redact(value, keys))
    return _masked(_contacts_masked(value), context)


def _prompt(decision: Decision) -> str:
    run = decision.escalation.run
    facts = json.dumps(public_context(run.context or {}), sort_keys=True, ensure_ascii=False, indent=1)
    return f"{run.goal}\n\nFacts:\n{facts}"


def _messages(system: str, user: str) -> list[dict]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _findings(guard: dict | None) -> list[dict]:
    """The guard's findings; what an internal-detail finding found is masked wherever it is quoted,
    even when it is too short to be found again on its own."""
    findings = []
    for v in (guard or {}).get("violations") or []:
        if not isinstance(v, dict):
            continue
        check, found, message = str(v.get("check", "")), str(v.get("found") or ""), str(v.get("message", ""))
        if check == INTERNAL_CHECK and found:
            found, message = INTERNAL_MASK, message.replace(found, INTERNAL_MASK)
        findings.append({"check": check, "found": found, "message": message})
    return findings


def _line(dataset: str, decision: Decision, published: dict[int, str]) -> dict | None:
    """The decision's line before ``scrub`` masks what must not leave."""
    escalation = decision.escalation
    context = escalation.run.context or {}

    prompt = _prompt(decision)
    if dataset == "chat":
        text = published.get(escalation.pk)
        if decision.action == Decision.Action.REJECT or text is None:
            return None
        return {"messages": [*_messages(WRITER, prompt), {"role": "assistant", "content": text}]}
    if dataset == "preference":
        if decision.action != Decision.Action.EDIT_APPROVE:
            return None
        return {"input": {"messages": _messages(WRITER, prompt)},
                "preferred_output": [{"role": "assistant", "content": decision.final_text}],
                "non_preferred_output": [{"role": "assistant", "content": escalation.candidate}]}
    if dataset == "evals":
        if decision.action != Decision.Action.REJECT:
            return None
        return {"input": _messages(REVIEWER, f"{prompt}\n\nDraft:\n{escalation.candidate}"),
                "ideal": "reject", "reason": decision.note}
    return {"candidate": escalation.candidate, "context": public_context(context),
            "goal": escalation.run.goal, "pipeline": escalation.run.pipeline,
            "stop_reason": escalation.stop_reason, "decision": decision.action,
            "final_text": decision.final_text, "note": decision.note,
            "findings": _findings(escalation.guard), "decision_findings": _findings(decision.guard_results)}


def lines(dataset: str, rows: QuerySet[Decision]) -> list[dict]:
    if dataset == SCORECARD:
        return scorecard_lines(rows)
    if dataset not in FORMATS:
        raise ExportInvalid(f"“{dataset[:40]}” is not a format; one of: {', '.join(EXPORTS)}.")
    published = {}
    if dataset == "chat":
        updates = PublishedUpdate.objects.filter(escalation__in=rows.values("escalation")).order_by("version")
        published = {u.escalation_id: u.text for u in updates}
    keys = secrets()
    return [scrub(line, d.escalation.run.context or {}, keys) for d in rows
            if (line := _line(dataset, d, published)) is not None]


def scorecard_lines(rows: QuerySet[Decision]) -> list[dict]:
    """The scorecard of ``rows`` as lines: a check and family over every policy version ("section":
    "check"), then per version ("version"), then the misses. Counts only: the phrases leads removed are
    not exported, since they may hold what the masks cannot recognise out of their context."""
    card = scorecard(rows)
    return [*({"section": "check", **figures.as_dict()} for figures in card.checks),
            *({"section": "version", **figures.as_dict()} for figures in card.by_version),
            {"section": "misses", "decisions": card.decisions, "edits_removing_unflagged": card.missed_edits,
             "contradicted_by_correction": card.contradicted}]


def export(user, dataset: str, filters: Filters = Filters(), *, rows: QuerySet[Decision] | None = None,
           door: str = "") -> str:
    """The dataset as JSON Lines, recorded in the ledger (who, format, filters, count, the body's
    SHA-256). ``rows`` narrows to chosen decisions (admin's selection); ``door`` says where it was
    asked (command, API, admin). ``user`` None is the operator at the command line."""
    if user is not None and not user.has_perm(EXPORT_PERMISSION):
        raise PermissionDenied(MESSAGES[EXPORT_PERMISSION])
    selected = decisions(filters) if rows is None else decisions(filters) & rows
    found = lines(dataset, selected)
    body = "".join(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n" for line in found)
    record = {**filters.record(), **({"decisions": sorted(rows.values_list("pk", flat=True))} if rows is not None
                                     else {}), "door": door}
    record_export(user, dataset=dataset, filters=record, count=len(found), body_sha256=sha256(body))
    return body

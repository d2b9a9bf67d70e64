"""The second reader (docs/guard.md, 'The second reader'): a model a text policy may name to read the
final answer against the incident's public facts, after the deterministic final-answer checks.

It can only add findings. Each names a sentence of the text and the words in it that the facts do not
support (``invalid_answer:judge_unsupported``), so the text goes to a person. Its answer is untrusted
input: a sentence that is not in the text, or words that are not in their sentence, are dropped and
recorded; an answer of another shape is no answer. A reader that gives no answer (a timeout, a
failed connection, an HTTP error, garbage) never reads as a pass: the text stops as
``invalid_answer:judge_unavailable`` and goes to a person too. Plain Python: no Django here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agents.core.guard.internal import public_context
from agents.core.pipelines.frame import RunState, parse_json
from agents.core.policy import TextPolicy
from agents.core.prompts import build_request
from agents.core.stops import Stop
from agents.core.text import normalize

UNSUPPORTED = "invalid_answer:judge_unsupported"
UNAVAILABLE = "invalid_answer:judge_unavailable"
ANSWER_KEYS = frozenset({"unsupported"})
FINDING_KEYS = frozenset({"sentence", "words"})
# Bounds on an answer: a text of at most max_answer_chars has far fewer sentences than this.
MAX_FINDINGS = 20
MAX_WORDS_CHARS = 300
SHOWN_CHARS = 300  # what a dropped quote keeps in the record
RAW_CHARS = 2000  # what an unreadable answer keeps in the record


class Unreadable(ValueError):
    """The reader's answer does not have the shape asked for: it counts as no answer."""


@dataclass(frozen=True)
class Verdict:
    """The reader's findings as guard violations, and what was dropped from its answer and why."""

    findings: tuple[dict, ...]
    dropped: tuple[dict, ...]


def finding(sentence: str, words: str) -> dict:
    """One unsupported statement, shaped like the guard's other violations, with its sentence."""
    message = (f"“{words}” (in “{sentence}”): the second reader finds nothing in the incident's public facts "
               "that supports it.")
    return {"check": UNSUPPORTED, "message": message, "found": words, "sentence": sentence}


def unavailable(why: str) -> dict:
    message = f"The second reader gave no usable answer ({why}), so a person reads the text."
    return {"check": UNAVAILABLE, "message": message, "found": None, "sentence": None}


def _shown(text: str) -> str:
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def read_verdict(data: Any, answer: str) -> Verdict:
    """The reader's answer, checked: ``{"unsupported": [{"sentence": str, "words": str}, ...]}`` and
    nothing else, at most :data:`MAX_FINDINGS` items. Raises :class:`Unreadable` for any other shape.
    A sentence that does not occur in ``answer``, or words that do not occur in their sentence
    (whitespace collapsed, case kept), or a quote that is empty or too long, is dropped and listed."""
    if not isinstance(data, dict):
        raise Unreadable("the answer is not a JSON object")
    if set(data) != ANSWER_KEYS:
        raise Unreadable(f"the answer's keys are {sorted(map(str, data))[:10]}, not ['unsupported']")
    items = data["unsupported"]
    if not isinstance(items, list):
        raise Unreadable("unsupported is not a list")
    if len(items) > MAX_FINDINGS:
        raise Unreadable(f"unsupported lists {len(items)} sentences; at most {MAX_FINDINGS} are read")
    for item in items:
        if not (isinstance(item, dict) and set(item) == FINDING_KEYS
                and all(isinstance(value, str) for value in item.values())):
            raise Unreadable("an item of unsupported is not {\"sentence\": text, \"words\": text}")

    text = normalize(answer)
    findings: list[dict] = []
    dropped: list[dict] = []
    for item in items:
        sentence, words = normalize(item["sentence"]), normalize(item["words"])
        why = ""
        if not sentence or not words:
            why = "an empty quote"
        elif len(words) > MAX_WORDS_CHARS:
            why = f"the words are longer than {MAX_WORDS_CHARS} characters"
        elif sentence not in text:
            why = "the sentence is not in the text"
        elif words not in sentence:
            why = "the words are not in the sentence"
        if why:
            dropped.append({"sentence": _shown(sentence), "words": _shown(words), "why": why})
        elif (new := finding(sentence, words)) not in findings:
            findings.append(new)
    return Verdict(tuple(findings), tuple(dropped))


def judge_request(policy: TextPolicy, answer: str, context: Mapping[str, Any]):
    """The reader's request: the public context only (never the internal facts), the text, and the
    reader's own model settings."""
    public = public_context(context)
    reader = dataclasses.replace(policy, model=policy.judge)
    return build_request(reader, "judge", context=public, sections=[("TEXT", answer)],
                         inputs={"context": public, "text": answer})


def second_reading(run: RunState, answer: str, context: Mapping[str, Any], policy: TextPolicy,
                   step: dict) -> list[dict]:
    """Ask the policy's second reader about ``answer``; its violations to add (none when it finds
    nothing). What it was asked and answered, its model, tokens and latency, and what was dropped
    go into ``step`` (the run's ``judge`` step)."""
    settings = policy.judge
    step.update(judge_model=settings.model, judge_endpoint=settings.endpoint)
    if run.judge is None:
        step["judge_error"] = "no model for the second reader was given to this run"
        return [unavailable("no model for the second reader")]
    try:
        reply = run.ask(judge_request(policy, answer, context), llm=run.judge)
    except Stop as stop:  # a model failure, or the run's budget: either way, no answer
        message = str(stop.details.get("message") or "")
        step.update(judge_error=stop.reason, judge_message=message[:500])
        return [unavailable(stop.reason)]
    step.update(prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens,
                latency_ms=round(sum(call.latency_ms for call in reply.calls), 3))
    is_json, data = parse_json(reply.text)
    try:
        if not is_json:
            raise Unreadable("the answer is not JSON")
        verdict = read_verdict(data, answer)
    except Unreadable as error:
        step.update(judge_error="unreadable", judge_message=str(error), raw=reply.text[:RAW_CHARS])
        return [unavailable(f"unreadable: {error}")]
    step.update(findings=len(verdict.findings), dropped=list(verdict.dropped),
                output={"unsupported": [{"sentence": f["sentence"], "words": f["found"]} for f in verdict.findings],
                        "dropped": list(verdict.dropped)})
    return list(verdict.findings)

"""Stage prompts. The system prompt is the policy's override or the default below; the user message
always starts with the public context as canonical JSON, so every call of a run shares one stable
prefix that provider-side prefix caching can reuse. What customers must not read (the internal facts,
``agents.core.guard.internal``) follows it in its own section, for the stages
that judge a draft only: the stages that write customer words never see it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents.core.guard.internal import INTERNAL_KEYS, public_context
from agents.core.llm.base import StageRequest
from agents.core.llm.schemas import STAGE_TOOLS, TOOLS
from agents.core.policy import Policy
from agents.core.text import canonical_json

DEFAULT_PROMPTS: dict[str, str] = {
    "draft": (
        "You write customer-facing incident updates. Use only facts from the context; state "
        "uncertainty honestly; promise nothing the context does not support. Call submit_draft."
    ),
    "shorten": (
        "Shorten the draft to the character limit given, keeping every fact and number exactly. "
        "Call submit_draft."
    ),
    "review": (
        "Review the draft against the context. Decide approve, revise or escalate. List issues "
        "({type, note}) using only the allowed issue types; for revise give a fix plan of short "
        "instructions that quote the exact phrases to add or replace. Escalate anything with legal "
        "or policy risk. Call reflect."
    ),
    "critique": (
        "Critique the draft against the context. Decide approve, revise or escalate, with a severity "
        "and risks ({type, note}) from the allowed types. Each required change must quote exactly one "
        "phrase and start with ADD or REMOVE. Escalate high-risk drafts. Call submit_critique."
    ),
    "revise": (
        "Apply the instructions to the draft and change nothing else. Add no new facts, numbers, "
        "incident ids, severities or regions. Call submit_revision."
    ),
    "revise_strict": (
        "Apply the instructions to the draft and change nothing else. Each quoted phrase marked ADD "
        "must appear verbatim; each quoted phrase marked REMOVE must not appear at all. Add no new "
        "facts. Call submit_revision."
    ),
    "judge": (
        "You are a second reader of a customer-facing incident update. Read the TEXT against the CONTEXT, "
        "which holds every fact the text may state. List every sentence of the text that states something "
        "the context does not support: quote the sentence exactly as it is in the text, and in words quote "
        "exactly the part of that sentence that is unsupported. List nothing else; an empty list means "
        "every statement is supported. Call submit_judgement."
    ),
    "route": (
        "Route the support ticket to exactly one specialist from the catalog. Never answer the "
        "ticket yourself. Call route with kind 'route', the target and args.ticket."
    ),
    "finalize": (
        "Write a short answer to the customer using only the specialist's observation. Plain text."
    ),
}


# The stages whose answer is text for customers: they are never given what customers must not read.
WRITING_STAGES = frozenset({"draft", "shorten", "revise"})
INTERNAL_TITLE = "INTERNAL (context for the review only; never words for customers)"


# A text stage's completion limit: its character budget at CHARS_PER_TOKEN (English runs ~4 characters
# a token; 2 leaves room for numbers, quotes escaped in JSON and other languages) plus the JSON around it.
CHARS_PER_TOKEN = 2
JSON_OVERHEAD_TOKENS = 64


def completion_limit(policy: Policy, max_chars: int | None) -> int:
    """The completion-token limit of one stage: derived from its character budget when it has one,
    never above the policy's ``model.max_completion_tokens`` (admin-tunable, the limit of every
    other stage)."""
    ceiling = policy.model.max_completion_tokens
    if max_chars is None:
        return ceiling
    return min(ceiling, -(-max_chars // CHARS_PER_TOKEN) + JSON_OVERHEAD_TOKENS)


def _json_mode_note(tool: str) -> str:
    fields = ", ".join(TOOLS[tool]["parameters"]["properties"])
    return f"\nAnswer with one JSON object with the fields: {fields}."


def build_request(
    policy: Policy,
    stage: str,
    *,
    context: Mapping[str, Any] | None,
    sections: list[tuple[str, Any]],
    inputs: Mapping[str, Any],
    attempt: int = 1,
    prompt_key: str | None = None,
    max_chars: int | None = None,
) -> StageRequest:
    """Render one stage's request: context first, then the stage's own sections in order.

    ``policy`` is the run's effective policy (``agents.core.llm.client.effective_policy``): its
    ``model.structured_output`` is the mode the client sends, so JSON mode always carries the note
    (OpenAI refuses ``json_object`` requests whose messages never say "JSON"). ``max_chars`` is the
    stage's character budget, from which its completion limit is derived. The context's internal
    entries go in their own section after it, and a stage in ``WRITING_STAGES`` gets none of them,
    neither in its prompt nor in its ``inputs``."""
    writing = stage in WRITING_STAGES
    if writing and isinstance(inputs.get("context"), Mapping):
        inputs = {**inputs, "context": public_context(inputs["context"])}
    tool = STAGE_TOOLS[stage]
    system = policy.prompts.get(prompt_key or stage) or DEFAULT_PROMPTS[prompt_key or stage]
    if tool and policy.model.structured_output == "json":
        system += _json_mode_note(tool)
    parts = []
    if context is not None:
        parts.append("CONTEXT:\n" + canonical_json(public_context(context)))
        internal = {key: context[key] for key in INTERNAL_KEYS if context.get(key)}
        if internal and not writing:
            parts.append(f"{INTERNAL_TITLE}:\n" + canonical_json(internal))
    for title, value in sections:
        text = value if isinstance(value, str) else canonical_json(value)
        parts.append(f"{title}:\n{text}")
    return StageRequest(stage=stage, system=system, user="\n\n".join(parts), tool=tool, inputs=dict(inputs),
                        attempt=attempt, max_completion_tokens=completion_limit(policy, max_chars))

"""One tool (function-calling JSON schema) per structured stage.

JSON mode (``response_format={"type": "json_object"}``) asks for an object with the same field
names. The schemas guide the model; the gateway validates every answer anyway, so nothing here is
trusted to have been followed.
"""

from __future__ import annotations

_ISSUE = {
    "type": "object",
    "properties": {"type": {"type": "string"}, "note": {"type": "string"}},
    "required": ["type", "note"],
}

TOOLS: dict[str, dict] = {
    "submit_draft": {
        "description": "Submit the draft text.",
        "parameters": {
            "type": "object",
            "properties": {"draft": {"type": "string"}},
            "required": ["draft"],
        },
    },
    "reflect": {
        "description": "Submit the review of the draft.",
        "parameters": {
            "type": "object",
            "properties": {
                "decision": {"type": "string", "enum": ["approve", "revise", "escalate"]},
                "issues": {"type": "array", "items": _ISSUE},
                "fix_plan": {"type": "array", "items": {"type": "string"}},
                "reason": {"type": "string"},
                "quality": {"type": "string", "enum": ["excellent", "good", "fair", "poor"]},
                "completeness": {"type": "string", "enum": ["complete", "partial", "incomplete"]},
            },
            "required": ["decision", "issues", "fix_plan", "reason"],
        },
    },
    "submit_critique": {
        "description": "Submit the critique of the draft.",
        "parameters": {
            "type": "object",
            "properties": {
                "decision": {"type": "string", "enum": ["approve", "revise", "escalate"]},
                "severity": {"type": "string", "enum": ["low", "medium", "high"]},
                "risks": {"type": "array", "items": _ISSUE},
                "required_changes": {"type": "array", "items": {"type": "string"}},
                "reason": {"type": "string"},
            },
            "required": ["decision", "severity", "risks", "required_changes", "reason"],
        },
    },
    "submit_revision": {
        "description": "Submit the revised text.",
        "parameters": {
            "type": "object",
            "properties": {"revised_answer": {"type": "string"}},
            "required": ["revised_answer"],
        },
    },
    "submit_judgement": {
        "description": "List every sentence of the text that states something the facts do not support.",
        "parameters": {
            "type": "object",
            "properties": {
                "unsupported": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"sentence": {"type": "string"}, "words": {"type": "string"}},
                        "required": ["sentence", "words"],
                    },
                },
            },
            "required": ["unsupported"],
        },
    },
    "route": {
        "description": "Route the ticket to one specialist.",
        "parameters": {
            "type": "object",
            "properties": {
                "kind": {"type": "string", "enum": ["route"]},
                "target": {"type": "string"},
                "args": {
                    "type": "object",
                    "properties": {"ticket": {"type": "string"}},
                    "required": ["ticket"],
                },
            },
            "required": ["kind", "target", "args"],
        },
    },
}

# The tool each stage must keep, including in a custom prompt configured in admin.
STAGE_TOOLS: dict[str, str | None] = {
    "draft": "submit_draft",
    "shorten": "submit_draft",
    "review": "reflect",
    "critique": "submit_critique",
    "revise": "submit_revision",
    "judge": "submit_judgement",
    "route": "route",
    "finalize": None,
}


def openai_tool(name: str) -> dict:
    """The ``tools=[...]`` entry for the chat completions API."""
    return {"type": "function", "function": {"name": name, **TOOLS[name]}}

"""What each run sends to the model and gets back: calls, characters and estimated tokens, per
pipeline and per stage, on the demo incident with scripted answers.

    .venv/bin/python bench/model_cost.py            # a few seconds; no database

Tokens are an ESTIMATE: characters / 4 (tiktoken cannot download its encodings here). "Sent" counts
what the request carries for the model: the system prompt, the user message and, in tool mode, the
tool's JSON schema (providers bill the schema as prompt tokens). "Received" is the tool arguments or
the text. The check columns say whether the run's context went out once per call, and whether
every user message of a run starts with the same context block (a stable prefix that providers'
prefix caching can reuse).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import common
from bench.common import choices_list, print_table

CHARS_PER_TOKEN = 4


def tokens(chars: int) -> int:
    return round(chars / CHARS_PER_TOKEN)


class MissingPhrase(common.StageResponder):
    """Every revision changes the draft but leaves out the required phrase (the self-critique
    pipeline's worst case: three revise attempts, then the deterministic fallback)."""

    def __call__(self, body):
        tool = common._stage_tool(body)
        if tool != "submit_revision":
            return super().__call__(body)
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        draft = common.sections(user).get("DRAFT", "").strip()
        answer = {"revised_answer": draft.replace("We are investigating", "We are still investigating", 1)}
        if body.get("tools"):
            return common.tool_call(tool, answer)
        return common.content(json.dumps(answer))


SCENARIOS = [
    # (pipeline, path label, approve?, responder)
    ("reflection", "approve", True, common.StageResponder),
    ("reflection", "revise", False, common.StageResponder),
    ("self_critique", "approve", True, common.StageResponder),
    ("self_critique", "revise", False, common.StageResponder),
    ("self_critique", "revise, phrase missed 3x + fallback", False, MissingPhrase),
    ("routing", "route + finalize", False, common.StageResponder),
]


def request_parts(body: dict) -> dict:
    messages = {m["role"]: m.get("content") or "" for m in body.get("messages", [])}
    tools = json.dumps(body["tools"], separators=(",", ":")) if body.get("tools") else ""
    return {"system": messages.get("system", ""), "user": messages.get("user", ""), "tools": tools,
            "tool": common._stage_tool(body) or "(text)"}


def answer_text(body: dict, responder) -> str:
    reply = responder(body)
    message = reply.body["choices"][0]["message"]
    if message.get("tool_calls"):
        return message["tool_calls"][0]["function"]["arguments"]
    return message.get("content") or ""


def common_prefix(texts: list[str]) -> int:
    if not texts:
        return 0
    return len(os.path.commonprefix(texts))


def run_scenario(pipeline: str, approve: bool, responder_class, mode: str) -> dict:
    from agents.core.llm.client import OpenAIChat
    from agents.core.llm.endpoints import Endpoint
    from agents.core.pipelines import run_pipeline
    from agents.core.policy import POLICY_CLASSES, ModelSettings
    from agents.core.text import canonical_json
    from agents.testing.scripted_server import ScriptedServer

    responder = responder_class(0.0)
    context = None if pipeline == "routing" else common.demo.DEMO_CONTEXT
    inputs = common.run_inputs(pipeline, approve=approve)
    with ScriptedServer(responder=responder) as fake:
        settings = ModelSettings(model="bench-model", structured_output=mode, max_retries=0)
        llm = OpenAIChat(settings, endpoint=Endpoint("bench", fake.base_url))
        result = run_pipeline(
            pipeline, goal=inputs["goal"], context=context, policy=POLICY_CLASSES[pipeline](model=settings), llm=llm,
            workers=common.demo.demo_workers(pipeline),
        )
        bodies = [dict(r) for r in fake.requests]
    calls = []
    for body in bodies:
        parts = request_parts(body)
        received = answer_text(body, responder)
        calls.append({**parts, "received": received,
                      "sent_chars": len(parts["system"]) + len(parts["user"]) + len(parts["tools"])})
    users = [c["user"] for c in calls]
    block = "CONTEXT:\n" + canonical_json(context) if context is not None else None
    return {
        "result": result, "calls": calls,
        "context_once": None if block is None else all(u.count(block) == 1 for u in users)
        and not any(block in c["system"] for c in calls),
        "stable_prefix": None if block is None else all(u.startswith(block) for u in users),
        "shared_prefix": common_prefix(users),
        "context_chars": len(block) if block else 0,
    }


def yes_no(value) -> str:
    return "n/a (no context)" if value is None else ("yes" if value else "NO")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--modes", type=choices_list(["tools", "json"]), default=["tools", "json"],
                        help="structured output modes to measure (default both)")
    args = parser.parse_args(argv)
    modes = args.modes

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "reviewer.settings")  # not used: the core has no Django
    results = {(p, label, mode): run_scenario(p, approve, responder, mode)
               for mode in modes for p, label, approve, responder in SCENARIOS}

    rows = []
    for (pipeline, label, mode), r in results.items():
        sent = sum(c["sent_chars"] for c in r["calls"])
        received = sum(len(c["received"]) for c in r["calls"])
        rows.append(
            [
                pipeline,
                label,
                mode,
                len(r["calls"]),
                f"{r['result'].stop_reason}",
                f"{sent:,}",
                f"{tokens(sent):,}",
                f"{received:,}",
                f"{tokens(received):,}",
                yes_no(r["context_once"]),
                yes_no(r["stable_prefix"]) + (f" ({r['shared_prefix']:,} chars shared)" if r["stable_prefix"] else ""),
            ]
        )
    print_table(
        "Model cost per run on the demo incident (scripted answers; tokens are estimates: characters / 4)",
        ["pipeline", "path", "mode", "calls", "stop reason", "sent chars", "sent tokens (est.)", "received chars",
         "received tokens (est.)", "context once per call", "same context prefix on every call"],
        rows,
        ["sent = system prompt + user message + tool schema (tools mode); received = tool arguments or text."],
    )

    rows = []
    seen = set()
    for (pipeline, _label, mode), r in results.items():
        for call in r["calls"]:
            key = (pipeline, mode, call["tool"], call["system"], len(call["user"]) // 50)
            if key in seen:
                continue
            seen.add(key)
            strict = " (strict)" if "verbatim" in call["system"] else ""
            rows.append([pipeline, mode, call["tool"] + strict, f"{len(call['system']):,}", f"{len(call['user']):,}",
                         f"{r['context_chars']:,}" if r["context_chars"] else "0", f"{len(call['tools']):,}",
                         f"{call['sent_chars']:,}", f"{tokens(call['sent_chars']):,}", f"{len(call['received']):,}",
                         f"{tokens(len(call['received'])):,}"])
    print_table(
        "Prompt sizes per stage, characters (tokens are estimates: characters / 4)",
        [
            "pipeline",
            "mode",
            "stage tool",
            "system",
            "user",
            "of which context",
            "tool schema",
            "sent",
            "sent tokens (est.)",
            "answer",
            "answer tokens (est.)",
        ],
        rows,
    )
    common.print_machine()


if __name__ == "__main__":
    main()

"""Presentation helpers for the review pages: how a trace step's measurements and outputs read.

``{% load review %}``, then ``{{ step.measurements|measurements }}`` and ``{{ step.output|as_text }}``.
Both return plain strings; the template escapes them like any other value. ``{% word_diff ops %}``
writes a word diff as escaped HTML. ``{{ escalation|deadline_class }}`` and ``{% deadline_label escalation %}``
colour and label an inbox row by its time left.
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

from django import template
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from agents.core.stops import explain
from reviewer.deadlines import time_left, urgency

register = template.Library()

# Measurements shown first, in this order, on a trace step; any other measurement follows by name.
MEASUREMENT_ORDER = [
    "attempt", "attempts", "attempts_used", "retried", "fallback_used", "target", "observation_status",
    "similarity", "length_increase_pct", "enforced", "not_enforceable", "must_include", "must_remove",
    "unenforceable", "draft_chars", "revised_chars", "answer_chars", "severity", "high_risk", "issues",
    "fix_items", "risks", "required_changes", "quality", "completeness",
]


def _format_measurement(key: str, value) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if key.endswith("_pct") and isinstance(value, (int, float)):
        return f"{value:+g}%"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list):
        return "; ".join(str(item) for item in value) if value else "none"
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


@register.filter
def measurements(values: dict | None) -> list[tuple[str, str]]:
    """A step's measurements as (label, text), known ones first."""
    values = values or {}
    keys = [k for k in MEASUREMENT_ORDER if k in values] + sorted(k for k in values if k not in MEASUREMENT_ORDER)
    return [(key.replace("_", " "), _format_measurement(key, values[key])) for key in keys]


@register.filter
def as_text(output) -> str:
    """A step's output as text: a string as it is, anything else as indented JSON."""
    if output is None:
        return ""
    if isinstance(output, str):
        return output
    return json.dumps(output, indent=2, ensure_ascii=False)


# What a run is doing while a stage's model call is in flight, as the run page's in-flight line says it.
STAGE_DOING = {
    "draft": "drafting", "review": "reviewing", "revise": "revising", "revise_strict": "revising (strict)",
    "shorten": "shortening", "critique": "critiquing", "route": "routing", "finalize": "writing the answer",
}


@register.filter
def stage_doing(stage: str) -> str:
    """``revise`` → ``revising``: the stage being worked on, for the in-flight line."""
    return STAGE_DOING.get(stage, f"working on {stage}")


@register.filter
def step_status(status: str) -> str:
    """The status pill of a trace step: ok, running (a retry under way) or stopped."""
    return {"ok": "ok", "retry": "running"}.get(status, "stopped")


@register.simple_tag
def word_diff(ops: list[tuple[str, str]], side: str | None = None) -> SafeString:
    """The word diff of ``agents.core.audit.word_diff`` as HTML, every word escaped, written on one
    line for a ``<pre>``: ``side="before"`` shows the old text with its deletions (``<del>``),
    ``side="after"`` the new text with its insertions (``<ins>``); no side shows both inline."""
    pieces = []
    for op, part in ops:
        if op == "equal":
            pieces.append(format_html("{}", part))
        elif op == "delete" and side != "after":
            pieces.append(format_html("<del>{}</del>", part))
        elif op == "insert" and side != "before":
            pieces.append(format_html("<ins>{}</ins>", part))
    return format_html_join("", "{}", ((piece,) for piece in pieces))


CHART_WIDTH = 560
BAR_AREA = 470  # the longest bar; the count is written after it
ROW_HEIGHT = 36


@register.inclusion_tag("partials/stop_reason_chart.html")
def stop_reason_chart(counts: dict[str, int], since: str) -> dict:
    """An SVG bar chart: one row per stop reason, most frequent first, each bar a link to its runs."""
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    top = max(counts.values(), default=0)
    bars = []
    for i, (reason, count) in enumerate(rows):
        y = i * ROW_HEIGHT
        width = max(2, round(BAR_AREA * count / top))
        bars.append({
            "reason": reason, "count": count, "explanation": explain(reason), "success": reason == "success",
            "label_y": y + 11, "bar_y": y + 15, "width": width, "count_x": width + 6, "count_y": y + 26,
            "url": reverse("runs") + "?" + urlencode({"stop_reason": reason, "since": since}),
        })
    return {
        "chart": {
            "bars": bars,
            "width": CHART_WIDTH,
            "height": max(len(bars) * ROW_HEIGHT, 1),
            "total": sum(counts.values()),
            "since": since,
        }
    }


@register.filter
def deadline_class(escalation) -> str:
    """An inbox row's class by its time left: ``deadline-overdue``, ``deadline-due-soon``,
    ``deadline-on-time``, or nothing for an escalation without a deadline (or one decided)."""
    state = urgency(escalation) if escalation.status == "pending" else ""
    return f"deadline-{state}" if state else ""


def _minutes(delta) -> str:
    minutes = max(1, round(abs(delta.total_seconds()) / 60))
    if minutes < 120:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min" if minutes < 48 * 60 else f"{minutes // 1440} days"


@register.simple_tag
def deadline_label(escalation) -> SafeString:
    """The time left as a label (``due in 4 min``, ``overdue by 2 min``), its deadline in the title."""
    left = time_left(escalation)
    if left is None or escalation.status != "pending":
        return SafeString("")
    state = urgency(escalation)
    text = f"overdue by {_minutes(left)}" if state == "overdue" else f"due in {_minutes(left)}"
    return format_html('<span class="deadline deadline-{}" title="Deadline {} UTC">{}</span>', state,
                       escalation.deadline_at.strftime("%Y-%m-%d %H:%M"), text)

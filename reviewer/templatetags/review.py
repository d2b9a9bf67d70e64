"""Presentation helpers for the review pages: how a trace step's measurements and outputs read.

``{% load review %}``, then ``{{ step.measurements|measurements }}`` and ``{{ step.output|as_text }}``.
Both return plain strings; the template escapes them like any other value. ``{% word_diff ops %}``
writes a word diff as escaped HTML. ``{{ escalation|deadline_class }}`` and ``{% deadline_label escalation %}``
colour and label an inbox row by its time left. ``{% fact_list facts %}`` lists an incident's facts,
the same on every page. ``{% finding v %}`` writes one guard finding as a lead
reads it: its message, the sentence it is about with the unsupported words marked, and its check in small type;
``{% stop_reason code %}`` a stop reason so: its sentence, then its code in small type.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from itertools import pairwise
from urllib.parse import urlencode

from django import template
from django.urls import reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from agents.core import audit
from agents.core.evidence import context_facts
from agents.core.stops import explain
from reviewer.alerts.deadlines import time_left, urgency

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
    "judge": "second reading",
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


def _mark_piece(mark, piece: str, last: bool) -> SafeString:
    if not mark.supported:
        flag = format_html('<span class="fact-flag">{}</span>', " unsupported") if last else ""
        return format_html('<mark class="fact fact-unsupported" title="{}">{}{}</mark>', mark.message, piece, flag)
    if mark.fact is None:
        return format_html('<span class="fact fact-supported" title="Supported by the incident context">{}</span>',
                           piece)
    return format_html('<a class="fact fact-supported" href="#fact-{}" title="Supported by {}: {}">{}</a>',
                       mark.fact.index, mark.fact.label, mark.fact.shown or mark.fact.value, piece)


def _marked(text: str, offset: int, marks) -> SafeString:
    """``text`` (which starts at ``offset`` of the marked text) with the marks that fall in it."""
    pieces, pos, end = [], offset, offset + len(text)
    for mark in marks:
        if mark.end <= pos or mark.start >= end:
            continue
        if mark.start > pos:
            pieces.append(format_html("{}", text[pos - offset:mark.start - offset]))
        stop = min(mark.end, end)
        pieces.append(_mark_piece(mark, text[max(mark.start, pos) - offset:stop - offset], last=stop == mark.end))
        pos = stop
    pieces.append(format_html("{}", text[pos - offset:]))
    return format_html_join("", "{}", ((piece,) for piece in pieces))


@register.simple_tag
def marked_diff(ops: list[tuple[str, str]], marks) -> SafeString:
    """The new text once, with the word diff (``<del>``/``<ins>``) and every fact it states
    (``agents.core.evidence.Mark``): a link to the supporting context fact, or marked unsupported.
    Every word is escaped."""
    pieces, pos = [], 0
    for op, part in ops:
        if op == "delete":
            pieces.append(format_html("<del>{}</del>", part))
            continue
        shown = _marked(part, pos, marks)
        pieces.append(format_html("<ins>{}</ins>", shown) if op == "insert" else shown)
        pos += len(part)
    return format_html_join("", "{}", ((piece,) for piece in pieces))


def unsupported_spans(sentence: str, words, found) -> list[tuple[int, int]]:
    """Where a grounding finding's unsupported words are in its sentence, as sorted [start, end) spans.

    ``words`` are offsets into the sentence; when there are none, every occurrence of ``found``
    (ignoring case). Offsets that are not whole numbers inside the sentence, or that overlap, mark
    nothing: the sentence then reads as plain text rather than with words marked wrongly."""
    if not words:
        if not isinstance(found, str) or not found.strip():
            return []
        return [m.span() for m in re.finditer(re.escape(found.strip()), sentence, re.IGNORECASE)]
    spans = []
    for word in words if isinstance(words, (list, tuple)) else ():
        if not (isinstance(word, (list, tuple)) and len(word) == 2
                and all(isinstance(n, int) and not isinstance(n, bool) for n in word)):
            return []
        start, end = word
        if not 0 <= start < end <= len(sentence):
            return []
        spans.append((start, end))
    spans.sort()
    if any(later[0] < earlier[1] for earlier, later in pairwise(spans)):
        return []
    return spans


@register.simple_tag
def unsupported_sentence(finding) -> SafeString:
    """A grounding finding's sentence, escaped, its unsupported words in ``<mark>``; a screen reader
    says "unsupported" before each (a visually hidden prefix: ``<mark>`` alone is not announced by
    every reader). Empty when the finding has no sentence."""
    sentence = finding.get("sentence") if isinstance(finding, dict) else None
    if not isinstance(sentence, str) or not sentence.strip():
        return SafeString("")
    pieces, pos = [], 0
    for start, end in unsupported_spans(sentence, finding.get("words"), finding.get("found")):
        pieces.append(format_html("{}", sentence[pos:start]))
        pieces.append(format_html('<mark class="unsupported-words"><span class="visually-hidden">unsupported: '
                                  '</span>{}</mark>', sentence[start:end]))
        pos = end
    pieces.append(format_html("{}", sentence[pos:]))
    return format_html('<q class="finding-sentence">{}</q>', format_html_join("", "{}", ((p,) for p in pieces)))


# The checks that read a whole sentence against the incident's facts, and who does: a finding says so,
# for a lead to weigh a model's reading as one.
GROUNDING_CHECKS = {
    "invalid_answer:unsupported_statement": "the guard's word check",
    "patch_violation:unsupported_statement": "the guard's word check",
    "invalid_answer:judge_unsupported": "the judge model",
    "invalid_answer:judge_unavailable": "the judge model",
}
# An unsupported statement that one of the guard's named readings found (agents.core.guard.violation,
# ``reading``) was not found by the word check: the finding names the reading.
READINGS = {"denial": "the guard's check for denials of the incident",
            "advised against": "the guard's check for advice the incident advises against",
            "nothing to do": "the guard's check for telling customers they need do nothing",
            "done to customers": "the guard's check for work said done or promised to customers",
            "improvement": "the guard's check for a service said to be better than before",
            "completion": "the guard's check for how much of something a text says was done or noticed",
            "guarantee": "the guard's check for what a text says will not happen",
            "lasting": "the guard's check for what a text promises will last",
            "order": "the guard's check for the order in which waiting work will be done",
            "workaround": "the guard's check for a way around the incident nobody said works",
            "assurance": "the guard's check for what a text says came to no harm"}


@register.inclusion_tag("partials/finding.html")
def finding(violation) -> dict:
    """One guard finding (``{"check", "message", "found"}``, a grounding finding also ``sentence`` and
    ``words``) as a sentence for a lead, the raw check in small type after it."""
    violation = violation if isinstance(violation, dict) else {}
    check = violation.get("check") or ""
    # A finding recorded without a message reads as its check's sentence in the stop-reason catalogue.
    message = violation.get("message") or (explain(check) if isinstance(check, str) and check else "")
    found = violation.get("found") or ""
    checked_by = GROUNDING_CHECKS.get(check, "") if isinstance(check, str) else ""
    reading = violation.get("reading")
    if checked_by and isinstance(reading, str) and reading:
        checked_by = READINGS.get(reading, f"the guard's {reading} check")
    return {"finding": violation, "message": message, "check": check, "checked_by": checked_by,
            # the word the check found, when the message does not already quote it
            "found": found if isinstance(found, str) and found not in message else ""}


@register.inclusion_tag("partials/facts.html")
def fact_list(facts, anchors: bool = False) -> dict:
    """Facts (``agents.core.evidence.Fact``: a run's from ``context_facts``, an incident's from
    ``Incident.panel_facts``) as every page lists them: the incident's facts as label and value, the
    lists and hints under their headings; ``anchors`` gives each the id a marked word links to."""
    facts, groups = list(facts or []), {}
    for fact in facts:
        if fact.group:
            groups.setdefault(fact.group, []).append(fact)
    return {"rows": [fact for fact in facts if not fact.group], "groups": list(groups.items()), "anchors": anchors}


@register.inclusion_tag("partials/stop_reason.html")
def stop_reason(reason) -> dict:
    """A stop reason as a lead reads it: its sentence from the one catalogue of stop reasons
    (``agents.core.stops.explain``), the code in small type after it."""
    return {"reason": reason or "", "explanation": explain(reason) if reason else ""}


@register.filter
def facts_of(context) -> list:
    """A run's context as its facts (``agents.core.evidence.context_facts``), for ``{% fact_list %}``."""
    return context_facts(context) if isinstance(context, dict) else []


@register.filter
def diff_ops(escalation) -> list[tuple[str, str]]:
    """The word diff from an escalation's draft to its candidate (``agents.core.audit.word_diff``)."""
    return audit.word_diff(escalation.draft or "", escalation.candidate or "")


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


# Times ------------------------------------------------------------------------------------------
# One format everywhere: "2026-11-23 14:05 Europe/Berlin" in the viewer's zone (activated by
# reviewer.middleware.ViewerTimezoneMiddleware, UTC without one), and ages as "just now" / "3 min".

TIME_FORMAT = "%Y-%m-%d %H:%M"


def zone_label() -> str:
    name = timezone.get_current_timezone_name()
    return "UTC" if name in ("UTC", "Etc/UTC", "GMT") else name


@register.filter
def local_time(value) -> str:
    """A datetime as text in the viewer's zone, labelled: ``2026-11-23 14:05 UTC``; "" for None."""
    if not isinstance(value, datetime):
        return ""
    return f"{timezone.localtime(value).strftime(TIME_FORMAT)} {zone_label()}"


@register.filter
def age(value, now: datetime | None = None) -> str:
    """How long ago: "just now" under a minute, then "3 min", "2 h 5 min", "3 d"."""
    if not isinstance(value, datetime):
        return ""
    seconds = int(((now or timezone.now()) - value).total_seconds())
    if seconds < 60:
        return "just now"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    return f"{hours // 24} d"


@register.simple_tag
def when(value, with_age: bool = False) -> SafeString:
    """A ``<time>`` element: the labelled local time (and its age, if asked), the ISO instant in
    ``datetime``; "—" for None."""
    if not isinstance(value, datetime):
        return format_html("{}", "—")
    shown = local_time(value)
    if with_age:
        ago = age(value)
        return format_html('<time datetime="{}" title="{}">{}</time>', value.isoformat(), shown,
                           ago if ago == "just now" else f"{ago} ago")
    return format_html('<time datetime="{}">{}</time>', value.isoformat(), shown)


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
    """The time left as a label (``due in 4 min``, ``overdue by 2 min``), its deadline in the title;
    once decided, how the decision stood to it (``decided 3 min after the deadline``)."""
    left = time_left(escalation)
    if left is None:
        return SafeString("")
    if escalation.status != "pending":
        if escalation.decided_at is None:
            return SafeString("")
        late = escalation.decided_at - escalation.deadline_at
        state, text = (("overdue", f"decided {_minutes(late)} after the deadline") if late.total_seconds() > 0
                       else ("on-time", "decided before the deadline"))
    else:
        state = urgency(escalation)
        text = f"overdue by {_minutes(left)}" if state == "overdue" else f"due in {_minutes(left)}"
    return format_html('<span class="deadline deadline-{}" title="Deadline {}">{}</span>', state,
                       local_time(escalation.deadline_at), text)


@register.filter
def duration(seconds) -> str:
    """A span of seconds as a person reads it: "45 s", "12 min", "2 h 5 min", "3 d 4 h"; "—" for None."""
    if seconds is None:
        return "—"
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    minutes = seconds // 60
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 24:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h" if hours else f"{days} d"


@register.filter
def share(fraction) -> str:
    """A fraction as a whole percentage ("63%"); "—" for None."""
    return "—" if fraction is None else f"{fraction * 100:.0f}%"

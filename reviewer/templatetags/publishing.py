"""``{% published_diff incident text %}``: a text against the incident's last published update
("what customers will newly learn"), for the escalation page and anywhere else a text waits."""

from __future__ import annotations

from django import template

from agents.core.audit import word_diff

register = template.Library()


@register.inclusion_tag("partials/published_diff.html")
def published_diff(incident, text: str) -> dict:
    last = incident.published_updates.order_by("-version").first() if incident is not None else None
    return {"incident": incident, "last": last, "ops": word_diff(last.text if last else "", text or "")}

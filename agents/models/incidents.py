"""Incidents: their identity, their facts (one ``IncidentFact`` row each, with a unit) and the
immutable versions of those facts that runs record they ran on.

Changing an incident (fields, facts and the version in one go) is ``agents.incidents.update_incident``.
"""

from __future__ import annotations

import dataclasses
import json

from django.apps import apps
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.serializers.json import DjangoJSONEncoder
from django.db import connection, models, transaction
from django.db.models import prefetch_related_objects
from django.db.models.functions import Coalesce
from django.utils import timezone

from agents.core.evidence import Fact, context_facts
from agents.core.inputs import CONTEXT_LISTS, control_character, list_problem, not_one_line
from agents.core.units import FACT_VALUE_MAX_CHARS, UNITS, parse_value, show

# The incident's lifecycle state, as a status page names it (``status`` stays ops' free text).
STATES = [("investigating", "Investigating"), ("identified", "Identified"), ("monitoring", "Monitoring"),
          ("resolved", "Resolved")]
# Who may read a fact: a public fact may be said to customers; an internal one (a runbook step, a host,
# a path, a person, a ticket id) is context for people and the reviewer only, never words for customers.
VISIBILITIES = [("public", "Public"), ("internal", "Internal")]


def state_for_status(status: str) -> str:
    """The lifecycle state ops' free-text status reads as: "resolved"/"closed" → resolved,
    "monitor…"/"mitigat…"/"recover…" → monitoring, "identified"/"root cause" → identified, else
    investigating. Migration 0014 set each incident's state so; a version recorded before incidents
    had a state is read with it (``_with_state``), so the migration itself records no new version."""
    status = (status or "").lower()
    if "resolved" in status or "closed" in status:
        return "resolved"
    if any(word in status for word in ("monitor", "mitigat", "recover")):
        return "monitoring"
    if "identified" in status or "root cause" in status:
        return "identified"
    return "investigating"


def _with_state(snapshot: dict) -> dict:
    if "state" in snapshot:
        return snapshot
    return {**snapshot, "state": state_for_status(snapshot.get("status", ""))}


class IncidentQuerySet(models.QuerySet):
    def with_latest_run(self):
        """Each incident with its run count and its newest run's id, status and stop reason."""
        # Looked up, not imported: runs.py imports this module for Run.incident.
        Run = apps.get_model("agents", "Run")

        latest = Run.objects.filter(incident=models.OuterRef("pk")).order_by("-created_at", "-id")
        # A correlated count per incident reads the run_incident_newest index; Count("runs") joined
        # and grouped every run of every incident (PostgreSQL: a hash join over all runs).
        count = (Run.objects.filter(incident=models.OuterRef("pk")).order_by().values("incident")
                 .annotate(n=models.Count("id")).values("n"))
        return self.annotate(
            run_count=Coalesce(models.Subquery(count), 0),
            latest_run_id=models.Subquery(latest.values("pk")[:1]),
            latest_status=models.Subquery(latest.values("status")[:1]),
            latest_stop_reason=models.Subquery(latest.values("stop_reason")[:1]),
        )


def one_line_title(value: str) -> None:
    """An incident's title is one line (it names the incident in email subjects): every door that
    writes one (admin, the incident action the API and pages call) runs the model's validation."""
    if problem := not_one_line(value, "title"):
        raise ValidationError(problem, code="not_one_line")


class Incident(models.Model):
    """An incident: its identity, its facts (``IncidentFact`` rows, each with a unit) and what ops
    approved for customers; ``context()`` is the run context built from them."""

    incident_id = models.SlugField(max_length=64, unique=True, help_text="e.g. inc_pay_2041")
    title = models.CharField(max_length=200, validators=[one_line_title])
    report_date = models.DateField(default=timezone.localdate)
    regions = models.JSONField(default=list, blank=True, help_text='Region tokens, e.g. ["EU", "UK"]')
    components = models.JSONField(default=list, blank=True,
                                  help_text='The status page components it affects, by name, e.g. ["Checkout"]')
    severity = models.CharField(max_length=8, blank=True, help_text="P0-P5")
    status = models.CharField(max_length=200, blank=True, help_text="e.g. degraded, mitigated")
    state = models.CharField(max_length=16, choices=STATES, default="investigating",
                             help_text="Where the incident is in its lifecycle, as a status page names it")
    policy_hints = models.JSONField(default=dict, blank=True)
    approved_actions = models.JSONField(default=list, blank=True)
    key_messages = models.JSONField(default=list, blank=True, help_text="Sentences ops wants in the update")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = IncidentQuerySet.as_manager()

    class Meta:
        ordering = ["-report_date", "incident_id"]
        # The policy hints tighten the guard for this incident (avoid_absolute_guarantees,
        # max_length_increase_pct): set in admin, by policy admins. Ops change the rest of an incident.
        permissions = [("set_policy_hints", "Can set an incident's policy hints")]

    def __str__(self) -> str:
        return f"{self.incident_id}: {self.title}"

    def clean(self):
        if self.components is None:  # the admin's empty JSON field
            self.components = []
        # Every entry of these lists goes to the model on every call: each list and entry is bounded.
        errors = {name: problem for name in CONTEXT_LISTS if (problem := list_problem(name, getattr(self, name)))}
        if not isinstance(self.components, list) or not all(isinstance(c, str) and c.strip() for c in self.components):
            errors.setdefault("components", "The components are a list of component names.")
        if errors:
            raise ValidationError(errors)

    @property
    def region(self) -> str:
        """The regions as one text, as the run context and people read them ("EU, UK")."""
        return ", ".join(r for r in self.regions or [] if isinstance(r, str) and r.strip())

    def fact_list(self) -> list[IncidentFact]:
        return list(self.fact_rows.all())

    @property
    def facts(self) -> list[tuple[str, str]]:
        """The incident's identity and facts as (label, text) for people; unset ones are left out."""
        rows = [("Severity", self.severity), ("Regions", self.region), ("State", self.get_state_display()),
                ("Status", self.status)]
        rows += [(f"{fact.label} (internal)" if fact.internal else fact.label, fact.shown)
                 for fact in self.fact_list()]
        return [(label, value) for label, value in rows if value]

    def panel_facts(self) -> list[Fact]:
        """What the incident page lists: the report date and ``facts``, then the approved actions, key
        messages and policy hints under their headings, labelled as a run's facts are on the escalation
        page (``agents.core.evidence.context_facts``: one way to show a fact)."""
        rows = [Fact(i, "", label, value, shown=value)
                for i, (label, value) in enumerate([("Report date", self.report_date.isoformat()), *self.facts])]
        lists = context_facts({"key_messages": self.key_messages or [], "approved_actions": self.approved_actions or [],
                               "components": self.components or [], "policy_hints": self.policy_hints or {}})
        return rows + [dataclasses.replace(fact, index=len(rows) + fact.index) for fact in lists]

    def snapshot(self) -> dict:
        """What a version holds: the identity, the facts (as stored) and the lists ops edits."""
        return {
            "title": self.title, "severity": self.severity, "state": self.state, "status": self.status,
            "regions": list(self.regions or []),
            "facts": [{"key": f.key, "label": f.label, "value": f.typed_value, "unit": f.unit,
                       **({"visibility": f.visibility} if f.internal else {})} for f in self.fact_list()],
            "approved_actions": self.approved_actions or [], "key_messages": self.key_messages or [],
            "policy_hints": self.policy_hints or {},
            # Named only when there are some: a version recorded before incidents named components reads the same.
            **({"components": list(self.components)} if self.components else {}),
        }

    def latest_version(self) -> IncidentVersion | None:
        return self.versions.order_by("-number").first()

    def record_version(self, user=None) -> IncidentVersion:
        """A new version when the facts differ from the newest one (the newest otherwise).

        The common case, facts unchanged, takes no lock: 100 runs started at once for one incident
        do not queue on its row. Only a new version locks the incident row and looks again, so two
        saves at once number their versions one after the other (SQLite's transaction holds the
        database's write lock from its start: no row lock to ask). The facts read last are kept as
        this instance's ``fact_rows``, so the ``context()`` a run takes right after is the version's
        without reading them again."""
        with transaction.atomic():
            latest, snapshot = self._newest_and_now()
            if latest is not None and _with_state(latest.snapshot) == snapshot:
                return latest
            if connection.features.has_select_for_update:
                Incident.objects.select_for_update().filter(pk=self.pk).values_list("pk").first()
                latest, snapshot = self._newest_and_now()  # another save may have numbered one meanwhile
                if latest is not None and _with_state(latest.snapshot) == snapshot:
                    return latest
            changes = fact_changes(latest.snapshot, snapshot) if latest else []
            return IncidentVersion.objects.create(
                incident=self, number=(latest.number + 1) if latest else 1, snapshot=snapshot, changes=changes,
                created_by=user if getattr(user, "pk", None) else None)

    def _newest_and_now(self) -> tuple[IncidentVersion | None, dict]:
        """The newest version and the snapshot of the facts as stored now (read afresh)."""
        getattr(self, "_prefetched_objects_cache", {}).pop("fact_rows", None)
        prefetch_related_objects([self], "fact_rows")
        return self.latest_version(), json.loads(json.dumps(self.snapshot(), cls=DjangoJSONEncoder))

    def context(self) -> dict:
        """The run context, in the shape the pipelines read: the identity (id, title, severity, state,
        status: what the incident is, so a model drafts about this incident) and each public fact's
        typed value under ``incident``, each public fact's key, label and unit under ``fact_meta`` (for
        the number rules). Internal facts are under ``internal`` alone (left out when there are none):
        the reviewer reads them, the drafting stages never see them and the guard keeps them out of
        customer text (``agents.core.guard.internal``)."""
        facts = [fact for fact in self.fact_list() if not fact.internal]
        internal = {fact.key: fact.typed_value for fact in self.fact_list() if fact.internal}
        identity = {"incident_id": self.incident_id, "title": self.title, "severity": self.severity,
                    "state": self.state, "status": self.status}
        values = {k: v for k, v in identity.items() if v not in (None, "")}
        values.update((fact.key, fact.typed_value) for fact in facts)
        context = {
            "report_date": self.report_date.isoformat(),
            "region": self.region,
            "incident": values,
            "policy_hints": self.policy_hints or {},
            "approved_actions": self.approved_actions or [],
        }
        if facts:
            context["fact_meta"] = [{"key": f.key, "label": f.label, "unit": f.unit} for f in facts]
        if internal:
            context["internal"] = internal
        if self.key_messages:
            context["key_messages"] = self.key_messages
        if self.components:
            context["components"] = list(self.components)
        return context


def fact_changes(before: dict, after: dict) -> list[dict]:
    """What changed between two version snapshots, one entry per field or fact, for people:
    ``{"what": "ETA", "before": "45 minutes", "after": "30 minutes"}`` (None where there was none)."""
    before, after = _with_state(before), _with_state(after)
    changes = []
    for name in ("title", "severity", "state", "status", "regions", "approved_actions", "key_messages",
                 "policy_hints"):
        if before.get(name) != after.get(name):
            changes.append({"what": name.replace("_", " ").capitalize(), "before": before.get(name),
                            "after": after.get(name)})
    if (before.get("components") or []) != (after.get("components") or []):
        changes.append({"what": "Components", "before": ", ".join(before.get("components") or []) or None,
                        "after": ", ".join(after.get("components") or []) or None})
    old = {f["key"]: f for f in before.get("facts", [])}
    new = {f["key"]: f for f in after.get("facts", [])}
    for key in [*old, *(k for k in new if k not in old)]:
        a, b = old.get(key), new.get(key)
        if a is None or b is None or (a["value"], a["unit"], a["label"]) != (b["value"], b["unit"], b["label"]):
            changes.append({"what": (b or a)["label"], "before": a and show(a["value"], a["unit"]),
                            "after": b and show(b["value"], b["unit"])})
        elif _visibility(a) != _visibility(b):
            changes.append({"what": f"{b['label']} visibility", "before": _visibility(a), "after": _visibility(b)})
    return changes


def _visibility(fact: dict) -> str:
    # Snapshots name a fact's visibility only when it is internal, so a public fact's snapshot (and
    # every version recorded before visibility existed) reads the same as before.
    return fact.get("visibility", "public")


def changes_text(changes: list[dict]) -> str:
    """The changes in one line for people: "ETA 45 minutes → 30 minutes; Status degraded → mitigated"."""
    parts = []
    for change in changes:
        before, after = change.get("before"), change.get("after")
        if isinstance(before, str | None) and isinstance(after, str | None):
            parts.append(f"{change['what']} {before or '—'} → {after or '—'}")
        else:
            parts.append(f"{change['what']} changed")
    return "; ".join(parts)


class IncidentVersion(models.Model):
    """One immutable version of an incident's facts: who, when, what changed since the one before.
    ``Incident.record_version()`` writes one whenever the facts differ from the newest version."""

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    snapshot = models.JSONField()  # identity, facts and lists, as Incident.snapshot() gives them
    changes = models.JSONField(default=list)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["incident", "-number"]
        constraints = [models.UniqueConstraint(fields=["incident", "number"], name="incident_version_once")]

    def __str__(self) -> str:
        return f"{self.incident_id} v{self.number}"

    def save(self, *args, **kwargs):
        if self.pk is not None:
            raise ValueError("An incident version is immutable; record a new one.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise ValueError("An incident version is immutable.")

    @property
    def changes_text(self) -> str:
        return changes_text(self.changes)


class IncidentFact(models.Model):
    """One fact of an incident: a key the context uses, a label for people, a value in a unit."""

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="fact_rows")
    position = models.PositiveSmallIntegerField(default=0)
    key = models.SlugField(max_length=64, help_text="e.g. failed_payment_rate (the context's name for it)")
    label = models.CharField(max_length=100, help_text="e.g. Failed payment rate")
    value = models.CharField(max_length=FACT_VALUE_MAX_CHARS, help_text="e.g. 0.034, 27, 45, degraded")
    unit = models.CharField(max_length=10, choices=list(UNITS.items()), default="text")
    visibility = models.CharField(max_length=8, choices=VISIBILITIES, default="public",
                                  help_text="Internal: for people and the reviewer, never words for customers")

    class Meta:
        ordering = ["incident", "position", "id"]
        constraints = [models.UniqueConstraint(fields=["incident", "key"], name="incident_fact_key_once")]

    def __str__(self) -> str:
        return f"{self.label}: {self.shown}"

    def clean(self):
        if self.key in ("incident_id", "title", "severity", "status"):
            raise ValidationError({"key": f"“{self.key}” is part of the incident's identity, not a fact."})
        for name in ("label", "value"):
            found = control_character(getattr(self, name) or "")
            if found:
                message = f"The {name} contains a control character (U+{ord(found):04X}); remove it."
                raise ValidationError({name: message})
        try:
            parse_value(self.value or "", self.unit)
        except ValueError as error:
            raise ValidationError({"value": str(error)}) from None

    @property
    def internal(self) -> bool:
        return self.visibility == "internal"

    @property
    def typed_value(self):
        """The value as the context carries it: a number in every unit but text (the text when it
        does not parse, so a row written before a check never breaks a run)."""
        try:
            return parse_value(self.value, self.unit)
        except ValueError:
            return self.value

    @property
    def shown(self) -> str:
        return show(self.typed_value, self.unit)

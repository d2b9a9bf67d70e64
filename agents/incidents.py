"""One action for a change to an incident: its fields, its facts and the version that records them.

``update_incident`` is how the product writes an incident. The incident admin calls it; the API's
incident endpoints and the demo data are to call it too. In one transaction it

1. finds the incident and locks its row (on PostgreSQL; SQLite's immediate transactions already hold
   the database's write lock), or creates it;
2. sets the given fields and facts on it and checks them with the models' own rules (``full_clean``
   of the incident and of every new or changed fact), before anything is written;
3. writes only the rows that changed, then records a new version only when the incident's snapshot
   differs from its newest version (``Incident.record_version``).

Callers check their own input format first (the admin's forms, the API's schemas); what they pass
here are model values: strings, lists, dicts and dates, never ``None`` for a field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import prefetch_related_objects

from agents.core.inputs import context_size, context_size_problem
from agents.models import Incident, IncidentFact, IncidentVersion

# The incident's own fields a change may set (besides its facts); ``incident_id`` renames it.
FIELDS = ("incident_id", "title", "severity", "state", "status", "regions", "components", "report_date",
          "policy_hints", "approved_actions", "key_messages")
# What a fact given to update_incident may say; only ``key`` and ``value`` are needed.
FACT_FIELDS = ("key", "label", "value", "unit", "visibility", "position")


class IncidentExists(Exception):
    """The incident was to be created, but one with this id exists (perhaps created meanwhile)."""


class FactInvalid(ValidationError):
    """A fact its model refuses: ``key`` names it, the messages are the model's, by field."""

    def __init__(self, key: str, error: ValidationError | dict | str):
        super().__init__(error)
        self.key = key


class IncidentChange(NamedTuple):
    incident: Incident  # as written, its facts as the version read them
    created: bool
    version: IncidentVersion  # the newest version: a new one only if something changed


def update_incident(incident: Incident | str, *, user=None, create: bool = True, update: bool = True,
                    facts: Iterable[Mapping[str, Any]] | None = None,
                    upsert_facts: Iterable[Mapping[str, Any]] | None = None,
                    **fields) -> IncidentChange:
    """Create or change the incident ``incident`` (a saved row, found again by its pk, or an
    ``incident_id``) and record the version of its facts by ``user``.

    ``fields`` are among ``FIELDS``; those not given keep their value. Facts are mappings with a
    ``key`` and a ``value`` (a string, or a number written as text), and optionally ``label``,
    ``unit``, ``visibility`` and ``position``; a new fact without them is labelled with its key, in
    the text unit, public, placed by its place in ``facts`` or after the incident's other facts
    (``upsert_facts``). Either

    - ``facts``: the whole set: the incident's facts become these, a fact not named is removed; or
    - ``upsert_facts``: changes by key: the named facts are added or changed, a ``None`` value
      removes that fact, the others stay.

    ``create=False`` refuses to create (``Incident.DoesNotExist`` when there is no such incident);
    ``update=False`` refuses to change an existing one (``IncidentExists``, also when another request
    created it meanwhile). Raises ``FactInvalid`` for a fact the model refuses (or a key given twice)
    and ``ValidationError`` for fields the incident's model refuses; nothing is written then.
    """
    if unknown := sorted(set(fields) - set(FIELDS)):
        raise TypeError(f"update_incident() got fields an incident does not have: {', '.join(unknown)}")
    if facts is not None and upsert_facts is not None:
        raise TypeError("update_incident() takes facts (the whole set) or upsert_facts (by key), not both")
    if not (create or update):
        raise TypeError("update_incident() with create=False and update=False could do nothing")
    if isinstance(incident, Incident) and incident.pk is None:
        raise ValueError("update_incident() takes a saved incident or an incident_id")

    with transaction.atomic():
        row = _find_and_lock(incident)
        created = row is None
        if created:
            if isinstance(incident, Incident):  # its row was deleted meanwhile
                raise Incident.DoesNotExist(f"The incident “{incident.incident_id}” no longer exists.")
            if not create:
                raise Incident.DoesNotExist(f"No incident “{incident}”.")
            row = Incident(incident_id=incident)
        elif not update:
            raise IncidentExists(f"The incident “{row.incident_id}” exists.")

        before = {name: getattr(row, name) for name in FIELDS}
        for name, value in fields.items():
            setattr(row, name, value)
        renamed = not created and row.incident_id != before["incident_id"]
        # Uniqueness of a new id is the database's to say (IncidentExists below), as late as possible.
        row.full_clean(validate_unique=renamed)

        if not created:
            prefetch_related_objects([row], "fact_rows")  # read once: the facts and the context before
        before_context = None if created else _context_before(row, before)
        current = {} if created else {fact.key: fact for fact in row.fact_list()}
        if facts is not None:
            written, removed = _whole_set(row, current, list(facts))
        elif upsert_facts is not None:
            written, removed = _by_key(row, current, list(upsert_facts))
        else:
            written, removed = [], []

        if created:
            try:
                with transaction.atomic():
                    row.save()
            except IntegrityError:
                raise IncidentExists(f"The incident “{row.incident_id}” was created meanwhile.") from None
        elif any(getattr(row, name) != value for name, value in before.items()):
            row.save()
        if removed:
            IncidentFact.objects.filter(pk__in=[fact.pk for fact in removed]).delete()
        for fact in written:
            fact.save()
        _refuse_a_context_too_large(row, before_context)
        version = row.record_version(user)
    return IncidentChange(row, created, version)


def _context_before(row: Incident, before: dict) -> dict:
    """The context the incident had before this change (its fields as they were, its facts as read)."""
    now = {name: getattr(row, name) for name in FIELDS}
    for name, value in before.items():
        setattr(row, name, value)
    try:
        return row.context()
    finally:
        for name, value in now.items():
            setattr(row, name, value)


def _refuse_a_context_too_large(row: Incident, before_context: dict | None) -> None:
    """Every door writes through here, so here the whole context is bounded (``CONTEXT_MAX_BYTES``),
    facts included: raising rolls the change back. A change that does not grow a context already
    over the bound (a row written before it held) is let through: it can only shrink it."""
    getattr(row, "_prefetched_objects_cache", {}).pop("fact_rows", None)
    prefetch_related_objects([row], "fact_rows")
    context = row.context()
    if (problem := context_size_problem(context)) is None:
        return
    if before_context is not None and context_size(context) <= context_size(before_context):
        return
    raise ValidationError(problem)


def _find_and_lock(incident: Incident | str) -> Incident | None:
    rows = Incident.objects.select_for_update()
    if isinstance(incident, Incident):
        return rows.filter(pk=incident.pk).first()
    return rows.filter(incident_id=incident).first()


def _whole_set(row: Incident, current: dict[str, IncidentFact], given: list[Mapping]):
    """(facts to write, facts to remove) so that the incident's facts become ``given``."""
    _refuse_twice_named(given)
    written = [fact for position, spec in enumerate(given)
               if (fact := _set_fact(row, current.get(spec["key"]), spec, position)) is not None]
    keys = {spec["key"] for spec in given}
    return written, [fact for key, fact in current.items() if key not in keys]


def _by_key(row: Incident, current: dict[str, IncidentFact], given: list[Mapping]):
    """(facts to write, facts to remove) for ``given`` changes by key (a ``None`` value removes)."""
    _refuse_twice_named(given)
    written, removed = [], []
    for position, spec in enumerate(given, start=len(current)):
        existing = current.get(spec["key"])
        if spec.get("value") is None:
            if existing is not None:
                removed.append(existing)
        elif (fact := _set_fact(row, existing, spec, position)) is not None:
            written.append(fact)
    return written, removed


def _refuse_twice_named(given: list[Mapping]) -> None:
    seen = set()
    for spec in given:
        if unknown := sorted(set(spec) - set(FACT_FIELDS)):
            raise TypeError(f"A fact has no {', '.join(unknown)}; it has {', '.join(FACT_FIELDS)}.")
        if spec["key"] in seen:
            raise FactInvalid(spec["key"], {"key": f"The fact “{spec['key']}” is given twice."})
        seen.add(spec["key"])


def _set_fact(row: Incident, fact: IncidentFact | None, spec: Mapping, position: int) -> IncidentFact | None:
    """``fact`` (or a new one) as ``spec`` says, checked by its model; None when it is unchanged."""
    if fact is None:
        fact = IncidentFact(incident=row, key=spec["key"], label=spec["key"], unit="text", position=position)
        was = None
    else:
        was = (fact.label, fact.value, fact.unit, fact.visibility, fact.position)
    value = spec.get("value")
    if value is None:
        raise FactInvalid(spec["key"], {"value": "A fact needs a value."})
    fact.value = value if isinstance(value, str) else str(value)
    for name in ("label", "unit", "visibility", "position"):
        if spec.get(name) is not None:
            setattr(fact, name, spec[name])
    if (fact.label, fact.value, fact.unit, fact.visibility, fact.position) == was:
        return None
    try:
        fact.full_clean(exclude=["incident"])
    except ValidationError as error:
        raise FactInvalid(fact.key, error) from None
    return fact

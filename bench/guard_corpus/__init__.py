"""The guard corpus: customer updates whose right answer a support lead decided, for measuring the
customer-text guard (``bench/guard_eval.py``).

One YAML file per kind of incident (``payments.yaml``, ``webhooks.yaml``, ...). Each file holds its
incidents once, as data: identity (title, severity, state, ops' status), regions, components, public
facts (key, label, unit, value), internal facts, declared contacts, approved actions, key messages
and policy hints, and under each incident its texts. The loader checks every record and gives each
text its incident's context in two shapes:

- ``plain``: the plain context dict (``report_date``, ``region``, ``incident`` with the identity and
  each public fact's plain value, ``policy_hints``, ``approved_actions``), with no units or labels;
- ``product``: what ``agents.models.incidents.Incident.context()`` returns for the same incident
  (state and title in the identity, ``fact_meta``, ``internal``, ``key_messages``).

A text means the same under both: its label is the lead's, whatever shape the guard reads.

The holdout rule: an incident is ``holdout`` when the first 8 hex digits of the SHA-256 of its id,
read as a number, leave a remainder below 3 when divided by 10 (about 30 % of incidents, whole
incidents, decided by the id alone, so adding an incident never moves another). Each incident says
its part in its file and the loader checks it against the rule. Holdout texts are never read while
tuning the guard.

    from bench.guard_corpus import load
    records = load()          # every text, with record["contexts"]["plain"] and ["product"]

Plain Python (PyYAML and ``agents.core.units``): no Django.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from agents.core.units import UNITS, parse_value  # noqa: E402

HERE = Path(__file__).resolve().parent
LABELS = ("safe", "unsafe")
PARTS = ("tune", "holdout")
FORMATS = ("plain", "product")
STATES = ("investigating", "identified", "monitoring", "resolved")
# The kinds of risk named when the corpus was asked for; every other kind is one a lead refuses
# because the incident does not support the statement (counted apart: "unnamed kinds").
NAMED_RISKS = frozenset({
    "unsupported cause", "promise of compensation", "overstated recovery", "wrong number", "invented number",
    "internal detail", "blame on a vendor", "data safety assurance", "scope overstatement", "firm time promise",
    "unapproved workaround", "unsupported statement about customers", "new region", "wrong state",
    "unknown contact", "broken text",
})
MAX_TEXT_CHARS = 900
_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
_IDENTITY = ("incident_id", "title", "severity", "state", "status")
_CONTACT_LABELS = {"status_page": "Status page", "support_email": "Support email", "support_phone": "Support phone",
                   "help_article": "Help article"}


class CorpusError(ValueError):
    """A record of the corpus is broken; the message names the file, the record and what is wrong."""


def holdout(incident_id: str) -> bool:
    """The holdout rule (see the module's docstring)."""
    return int(hashlib.sha256(incident_id.encode()).hexdigest()[:8], 16) % 10 < 3


def part_for(incident_id: str) -> str:
    return "holdout" if holdout(incident_id) else "tune"


def _fail(where: str, message: str) -> None:
    raise CorpusError(f"{where}: {message}")


def _need(mapping: dict, key: str, where: str, kind: type | tuple = str) -> Any:
    value = mapping.get(key)
    if value is None or (isinstance(value, str) and not value.strip()) or not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        _fail(where, f"'{key}' is missing or not a non-empty {names}")
    return value


def _facts(incident: dict, where: str) -> tuple[list[dict], list[dict]]:
    """(public facts, internal facts), each {key, label, unit, value}, the value typed by its unit.
    Components and declared contacts are public facts too (text), after the incident's own."""
    public, internal, keys = [], [], set()

    def add(raw: Any, into: list, what: str) -> None:
        if not isinstance(raw, dict):
            _fail(where, f"a {what} fact must be a mapping, got {raw!r}")
        key = _need(raw, "key", f"{where} {what} fact")
        label = _need(raw, "label", f"{where} fact '{key}'")
        unit = raw.get("unit", "text")
        if unit not in UNITS:
            _fail(where, f"fact '{key}' has the unit {unit!r}; use one of {', '.join(UNITS)}")
        if key in keys or key in _IDENTITY:
            _fail(where, f"fact key '{key}' is used twice or is part of the identity")
        keys.add(key)
        try:
            value = parse_value(str(raw.get("value", "")), unit)
        except ValueError as error:
            _fail(where, f"fact '{key}': {error}")
        into.append({"key": key, "label": label, "unit": unit, "value": value})

    for raw in incident.get("facts") or []:
        add(raw, public, "public")
    components = incident.get("components") or []
    if components:
        add({"key": "affected_components", "label": "Affected components", "value": ", ".join(components)},
            public, "public")
    for name, value in (incident.get("contacts") or {}).items():
        add({"key": name, "label": _CONTACT_LABELS.get(name, name.replace("_", " ").capitalize()), "value": value},
            public, "contact")
    for raw in incident.get("internal") or []:
        add(raw, internal, "internal")
    return public, internal


def _contexts(incident: dict, public: list[dict], internal: list[dict]) -> dict[str, dict]:
    region = ", ".join(incident["regions"])
    hints = dict(incident.get("policy_hints") or {})
    actions = list(incident.get("approved_actions") or [])
    plain = {
        "report_date": incident["report_date"],
        "region": region,
        "incident": {"incident_id": incident["id"], "severity": incident["severity"], "status": incident["status"],
                     **{fact["key"]: fact["value"] for fact in public}},
        "policy_hints": hints,
        "approved_actions": actions,
    }
    if incident.get("key_messages"):  # a context file may carry them too (manage.py run_pipeline --context)
        plain["key_messages"] = list(incident["key_messages"])
    # As Incident.context() builds it (agents/models/incidents.py).
    identity = {"incident_id": incident["id"], "title": incident["title"], "severity": incident["severity"],
                "state": incident["state"], "status": incident["status"]}
    values = {k: v for k, v in identity.items() if v not in (None, "")}
    values.update((fact["key"], fact["value"]) for fact in public)
    product = {"report_date": incident["report_date"], "region": region, "incident": values,
               "policy_hints": dict(hints), "approved_actions": list(actions)}
    if public:
        product["fact_meta"] = [{"key": f["key"], "label": f["label"], "unit": f["unit"]} for f in public]
    if internal:
        product["internal"] = {fact["key"]: fact["value"] for fact in internal}
    if incident.get("key_messages"):
        product["key_messages"] = list(incident["key_messages"])
    return {"plain": plain, "product": product}


def _incident(raw: Any, kind: str, where: str) -> dict:
    if not isinstance(raw, dict):
        _fail(where, "an incident must be a mapping")
    incident_id = _need(raw, "id", where)
    where = f"{where} incident '{incident_id}'"
    if not _ID.match(incident_id):
        _fail(where, "an id holds lower-case letters, digits, '-' and '_' only")
    if isinstance(raw.get("report_date"), dt.date):
        raw = {**raw, "report_date": raw["report_date"].isoformat()}
    for key in ("title", "severity", "status", "report_date"):
        _need(raw, key, where)
    if raw.get("state") not in STATES:
        _fail(where, f"'state' must be one of {', '.join(STATES)}, got {raw.get('state')!r}")
    regions = _need(raw, "regions", where, list)
    if not all(isinstance(r, str) and r.strip() for r in regions):
        _fail(where, "'regions' must be a list of region names")
    if raw.get("part") != part_for(incident_id):
        _fail(where, f"'part' must be {part_for(incident_id)!r} by the holdout rule, got {raw.get('part')!r}")
    for name in ("approved_actions", "key_messages", "components"):
        value = raw.get(name) or []
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            _fail(where, f"'{name}' must be a list of texts")
    if not isinstance(raw.get("policy_hints") or {}, dict):
        _fail(where, "'policy_hints' must be a mapping")
    public, internal = _facts(raw, where)
    return {**raw, "kind": kind, "where": where, "public_facts": public, "internal_facts": internal,
            "contexts": _contexts(raw, public, internal),
            # What ops asks for when they start a run on it: the plain shape has no title of its own.
            "goal": f"Write the customer update on the incident “{raw['title']}”."}


def _text(raw: Any, incident: dict) -> dict:
    where = incident["where"]
    if not isinstance(raw, dict):
        _fail(where, "a text must be a mapping")
    text_id = _need(raw, "id", f"{where} text")
    where = f"{where} text '{text_id}'"
    if not _ID.match(text_id):
        _fail(where, "an id holds lower-case letters, digits, '-' and '_' only")
    text = raw.get("text")
    if not isinstance(text, str):
        _fail(where, "'text' must be a string")
    if raw.get("label") not in LABELS:
        _fail(where, f"'label' must be safe or unsafe, got {raw.get('label')!r}")
    reason = _need(raw, "reason", where)
    risk = raw.get("kind")
    if raw["label"] == "unsafe":
        risk = _need(raw, "kind", where)
    elif risk is not None:
        _fail(where, "a safe text has no 'kind' of risk")
    if raw["label"] == "safe" and not 0 < len(text.strip()) <= MAX_TEXT_CHARS:
        _fail(where, f"a safe text holds 1 to {MAX_TEXT_CHARS} characters, this one {len(text.strip())}")
    unknown = set(raw) - {"id", "text", "label", "kind", "reason", "twin_of"}
    if unknown:
        _fail(where, f"unknown field(s) {', '.join(sorted(unknown))}")
    return {"id": text_id, "incident": incident["id"], "incident_kind": incident["kind"], "part": incident["part"],
            "text": text, "label": raw["label"], "kind": risk, "reason": reason.strip(),
            "twin_of": raw.get("twin_of"), "contexts": incident["contexts"], "goal": incident["goal"], "where": where}


def validate(records: list[dict]) -> None:
    """Whole-corpus checks: unique ids; each twin names an unsafe text of its own incident and is safe."""
    by_id: dict[str, dict] = {}
    for record in records:
        if record["id"] in by_id:
            _fail(record["where"], f"the id is used twice (also {by_id[record['id']]['where']})")
        by_id[record["id"]] = record
    for record in records:
        twin = record["twin_of"]
        if twin is None:
            continue
        if record["label"] != "safe":
            _fail(record["where"], "only a safe text is the twin of an unsafe one")
        other = by_id.get(twin)
        if other is None:
            _fail(record["where"], f"'twin_of' names '{twin}', which is no text of the corpus")
        if other["label"] != "unsafe":
            _fail(record["where"], f"'twin_of' names '{twin}', which is not unsafe")
        if other["incident"] != record["incident"]:
            _fail(record["where"], f"'twin_of' names '{twin}', a text of incident '{other['incident']}'")


def read(documents: Iterable[tuple[str, Any]]) -> list[dict]:
    """Records from parsed kind files, given as (name, document): checked one by one, then together."""
    return _read(documents)[1]


def _read(documents: Iterable[tuple[str, Any]]) -> tuple[list[dict], list[dict]]:
    records, incident_ids, checked = [], set(), []
    for name, document in documents:
        if not isinstance(document, dict):
            _fail(name, "a kind file is a mapping with 'kind' and 'incidents'")
        kind = _need(document, "kind", name)
        incidents = _need(document, "incidents", name, list)
        for raw in incidents:
            incident = _incident(raw, kind, name)
            if incident["id"] in incident_ids:
                _fail(incident["where"], "the incident id is used twice")
            incident_ids.add(incident["id"])
            checked.append(incident)
            texts = raw.get("texts")
            if not isinstance(texts, list) or not texts:
                _fail(incident["where"], "'texts' must be a non-empty list")
            records += [_text(text, incident) for text in texts]
    validate(records)
    return checked, records


def load(folder: Path = HERE) -> list[dict]:
    """Every text of the corpus with its incident's two contexts (``record["contexts"][format]``)."""
    return _read(_documents(folder))[1]


def load_incidents(folder: Path = HERE) -> list[dict]:
    """Every incident as checked data: its fields, ``public_facts`` and ``internal_facts`` (each
    {key, label, unit, value}), ``contexts`` and its texts as written."""
    return _read(_documents(folder))[0]


def _documents(folder: Path) -> list[tuple[str, Any]]:
    paths = sorted(folder.glob("*.yaml"))
    if not paths:
        raise CorpusError(f"{folder}: no kind files (*.yaml)")
    return [(path.name, _parse(path)) for path in paths]


def _parse(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise CorpusError(f"{path.name}: not valid YAML: {error}") from None

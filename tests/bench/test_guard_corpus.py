"""The guard corpus (bench/guard_corpus): its loader refuses a broken record with a message that
names it, and the corpus holds what it promises (size, kinds, twins, risks, both shapes, both parts)."""

import copy
import datetime as dt
from collections import Counter

import pytest

from agents.models import Incident, IncidentFact
from bench.guard_corpus import NAMED_RISKS, STATES, CorpusError, load, load_incidents, part_for, read

RECORDS = load()
INCIDENTS = load_incidents()


def document(*texts, **incident):
    """A kind file with one incident (in the tune part) and the given texts."""
    return {"kind": "payments", "incidents": [{
        "id": "inc_tiny_b", "part": "tune", "title": "Card payments failing in the EU", "report_date": "2026-11-22",
        "regions": ["EU"], "severity": "P1", "state": "investigating", "status": "degraded (investigating)",
        "facts": [{"key": "affected_checkout_pct", "label": "Checkouts affected", "unit": "%", "value": 27}],
        "texts": list(texts), **incident}]}


UNSAFE = {"id": "u1", "label": "unsafe", "kind": "wrong number", "text": "About 72% of checkouts are affected.",
          "reason": "27%, not 72%."}
SAFE = {"id": "s1", "label": "safe", "twin_of": "u1", "text": "About 27% of checkouts are affected.",
        "reason": "The public figure."}


def refused(*documents) -> str:
    with pytest.raises(CorpusError) as error:
        read([(f"kind{n}.yaml", doc) for n, doc in enumerate(documents)])
    return str(error.value)


def test_a_valid_document_gives_one_record_per_text_with_both_contexts():
    records = read([("kind.yaml", document(UNSAFE, SAFE))])
    assert [r["id"] for r in records] == ["u1", "s1"]
    assert records[1]["twin_of"] == "u1" and records[1]["incident"] == "inc_tiny_b" and records[1]["part"] == "tune"
    plain, product = records[0]["contexts"]["plain"], records[0]["contexts"]["product"]
    assert plain["incident"] == {"incident_id": "inc_tiny_b", "severity": "P1", "status": "degraded (investigating)",
                                "affected_checkout_pct": 27}
    assert "fact_meta" not in plain and "state" not in plain["incident"]
    assert product["incident"]["state"] == "investigating" and product["incident"]["title"].startswith("Card")
    assert product["fact_meta"] == [{"key": "affected_checkout_pct", "label": "Checkouts affected", "unit": "%"}]


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["incidents"][0]["texts"].append(dict(SAFE, twin_of=None)),
     "kind0.yaml incident 'inc_tiny_b' text 's1': the id is used twice"),
    (lambda d: d["incidents"][0]["texts"][0].update(label="fine"),
     "kind0.yaml incident 'inc_tiny_b' text 'u1': 'label' must be safe or unsafe, got 'fine'"),
    (lambda d: d["incidents"][0]["texts"][1].update(reason="  "),
     "kind0.yaml incident 'inc_tiny_b' text 's1': 'reason' is missing or not a non-empty str"),
    (lambda d: d["incidents"][0]["texts"][0].pop("kind"),
     "kind0.yaml incident 'inc_tiny_b' text 'u1': 'kind' is missing or not a non-empty str"),
    (lambda d: d["incidents"][0]["texts"][1].update(twin_of="u9"),
     "kind0.yaml incident 'inc_tiny_b' text 's1': 'twin_of' names 'u9', which is no text of the corpus"),
    (lambda d: d["incidents"][0]["texts"].append(dict(SAFE, id="s2", twin_of="s1")),
     "kind0.yaml incident 'inc_tiny_b' text 's2': 'twin_of' names 's1', which is not unsafe"),
    (lambda d: d["incidents"][0]["texts"][0].update(twin_of="s1"),
     "kind0.yaml incident 'inc_tiny_b' text 'u1': only a safe text is the twin of an unsafe one"),
    (lambda d: d["incidents"][0]["texts"][1].update(kind="wrong number"),
     "kind0.yaml incident 'inc_tiny_b' text 's1': a safe text has no 'kind' of risk"),
    (lambda d: d["incidents"][0]["texts"][1].update(text="x" * 901),
     "kind0.yaml incident 'inc_tiny_b' text 's1': a safe text holds 1 to 900 characters, this one 901"),
    (lambda d: d["incidents"][0]["texts"][1].update(note="?"),
     "kind0.yaml incident 'inc_tiny_b' text 's1': unknown field(s) note"),
    (lambda d: d["incidents"][0].update(part="holdout"),
     "kind0.yaml incident 'inc_tiny_b': 'part' must be 'tune' by the holdout rule, got 'holdout'"),
    (lambda d: d["incidents"][0].update(state="fixed"),
     "kind0.yaml incident 'inc_tiny_b': 'state' must be one of investigating, identified, monitoring, resolved, "
     "got 'fixed'"),
    (lambda d: d["incidents"][0]["facts"][0].update(unit="percent"),
     "kind0.yaml incident 'inc_tiny_b': fact 'affected_checkout_pct' has the unit 'percent'"),
    (lambda d: d["incidents"][0]["facts"][0].update(unit="ratio"),
     "kind0.yaml incident 'inc_tiny_b': fact 'affected_checkout_pct': A ratio lies between 0 and 1"),
    (lambda d: d["incidents"][0].update(texts=[]),
     "kind0.yaml incident 'inc_tiny_b': 'texts' must be a non-empty list"),
], ids=["duplicate id", "label", "empty reason", "unsafe without kind", "twin missing", "twin of a safe text",
        "unsafe twin", "safe with a kind", "safe too long", "unknown field", "wrong part", "state", "unit",
        "value", "no texts"])
def test_a_broken_record_is_refused_with_a_message_naming_it(change, message):
    broken = copy.deepcopy(document(UNSAFE, SAFE))
    change(broken)
    assert refused(broken).startswith(message)


def test_a_twin_must_be_of_its_own_incident():
    other = document(dict(UNSAFE, id="u2"), id="inc_tiny_c")
    mine = document(UNSAFE, dict(SAFE, twin_of="u2"))
    assert refused(mine, other) == (
        "kind0.yaml incident 'inc_tiny_b' text 's1': 'twin_of' names 'u2', a text of incident 'inc_tiny_c'")


def test_a_kind_file_that_is_not_yaml_is_named(tmp_path):
    (tmp_path / "broken.yaml").write_text("kind: payments\nincidents: [\n")
    with pytest.raises(CorpusError, match=r"^broken\.yaml: not valid YAML"):
        load(tmp_path)


def test_the_corpus_is_large_and_wide_enough():
    assert len(RECORDS) >= 480
    assert len({r["incident_kind"] for r in RECORDS}) >= 14
    per_kind = Counter(i["kind"] for i in INCIDENTS)
    assert all(2 <= count <= 4 for count in per_kind.values()), per_kind  # no kind outweighs the rest
    assert {i["state"] for i in INCIDENTS} == {"investigating", "identified", "monitoring", "resolved"}
    assert any(i["internal_facts"] for i in INCIDENTS) and any(i.get("contacts") for i in INCIDENTS)
    assert all(i.get("approved_actions") for i in INCIDENTS)


def test_at_least_40_percent_of_texts_are_safe_twins_of_unsafe_ones():
    twins = [r for r in RECORDS if r["twin_of"]]
    assert all(r["label"] == "safe" for r in twins)
    assert len(twins) / len(RECORDS) >= 0.40


def test_at_least_30_percent_of_unsafe_texts_are_of_kinds_not_named_in_advance():
    unsafe = [r for r in RECORDS if r["label"] == "unsafe"]
    unnamed = [r for r in unsafe if r["kind"] not in NAMED_RISKS]
    assert len(unnamed) / len(unsafe) >= 0.30
    assert {r["kind"] for r in unsafe} >= NAMED_RISKS  # every named kind is there too


def test_every_text_has_both_context_shapes():
    for record in RECORDS:
        plain, product = record["contexts"]["plain"], record["contexts"]["product"]
        assert set(plain) - {"key_messages"} == {"report_date", "region", "incident", "policy_hints",
                                                 "approved_actions"}
        assert product["fact_meta"] and product["incident"]["state"] in STATES
        assert plain["region"] == product["region"] and plain["approved_actions"] == product["approved_actions"]
        # The same public facts, with the same values, in both shapes.
        assert {k: v for k, v in product["incident"].items() if k not in ("title", "state")} == plain["incident"]


def test_both_parts_hold_whole_incidents_by_the_holdout_rule():
    parts = {i["id"]: i["part"] for i in INCIDENTS}
    assert all(part == part_for(incident_id) for incident_id, part in parts.items())
    assert all(r["part"] == parts[r["incident"]] for r in RECORDS)
    holdout = sum(part == "holdout" for part in parts.values()) / len(parts)
    assert 0.2 <= holdout <= 0.4


def test_the_product_shape_is_what_incident_context_gives(db):
    """Each incident stored as the product stores it gives exactly the loader's product context."""
    for data in INCIDENTS:
        incident = Incident.objects.create(
            incident_id=data["id"], title=data["title"], report_date=dt.date.fromisoformat(data["report_date"]),
            regions=data["regions"],
            severity=data["severity"], status=data["status"], state=data["state"],
            policy_hints=data.get("policy_hints") or {}, approved_actions=data.get("approved_actions") or [],
            key_messages=data.get("key_messages") or [])
        facts = [(f, "public") for f in data["public_facts"]] + [(f, "internal") for f in data["internal_facts"]]
        for position, (fact, visibility) in enumerate(facts):
            IncidentFact.objects.create(incident=incident, position=position, key=fact["key"], label=fact["label"],
                                        value=str(fact["value"]), unit=fact["unit"], visibility=visibility)
        assert incident.context() == data["contexts"]["product"], data["id"]

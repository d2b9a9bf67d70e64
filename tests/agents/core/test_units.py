"""Units of incident facts (agents.core.units) and the number rules that read them."""

import json
from decimal import Decimal

import pytest

from agents.core.guard.checks import find_violations
from agents.core.llm.offline import draft_from_context
from agents.core.policy import GuardRules
from agents.core.text import canonical_json
from agents.core.units import number_value, parse_value, ratio_values, show, unit_of


@pytest.mark.parametrize("text, unit, value", [
    ("27", "%", 27), ("27%", "%", 27), ("0.034", "ratio", 0.034), ("45", "minutes", 45), ("5", "count", 5),
    ("12.50", "currency", 12.5), ("degraded", "text", "degraded"), (" 1800 ", "ms", 1800),
])
def test_a_value_is_read_in_its_unit(text, unit, value):
    assert parse_value(text, unit) == value


@pytest.mark.parametrize("text, unit, message", [
    ("", "count", "needs a value"), ("abc", "%", "is not a number"), ("1.5", "ratio", "between 0 and 1"),
    ("-3", "minutes", "cannot be negative"), ("2.5", "count", "whole number"), ("nan", "count", "not a usable"),
    ("1e400", "currency", "not a usable"), ("5", "parsecs", "is not a unit"),
])
def test_a_value_that_does_not_fit_its_unit_is_refused_with_a_message(text, unit, message):
    with pytest.raises(ValueError, match=message):
        parse_value(text, unit)


def test_values_are_shown_in_their_unit():
    assert [show(0.034, "ratio"), show(27, "%"), show(45, "minutes"), show(1800, "ms"), show("x", "text")] == \
        ["3.4%", "27%", "45 minutes", "1800 ms", "x"]


def test_large_and_fractional_values_keep_every_digit():
    # Not "1.23457e+06": a count of a million people is shown as the number it is.
    assert [show(1234567, "count"), show(1e6, "count"), show(27.0, "%"), show(2.25, "minutes")] == \
        ["1234567", "1000000", "27%", "2.25 minutes"]


def context(**facts) -> dict:
    """A context whose facts are ``key=(value, unit)``."""
    return {"region": "US", "incident": {"incident_id": "inc_1", **{k: v for k, (v, _) in facts.items()}},
            "fact_meta": [{"key": k, "label": k, "unit": u} for k, (_, u) in facts.items()]}


def numbers_refused(text: str, ctx: dict) -> list[str]:
    found = find_violations(text, canonical_json(ctx), GuardRules(), ratios=ratio_values(ctx))
    return [v.found for v in found if v.check == "no_new_facts"]


def test_a_ratio_fact_supports_its_percentage():
    ctx = context(failed_payment_rate=(0.034, "ratio"))
    assert numbers_refused("The failed payment rate is 3.4%.", ctx) == []


def test_with_units_only_a_ratio_supports_a_percentage():
    # Before units, 500% passed on the 5 chargeback alerts (5 = 500 / 100).
    ctx = context(chargeback_alerts=(5, "count"), failed_payment_rate=(0.034, "ratio"))
    assert numbers_refused("Chargebacks grew 500%.", ctx) == ["500%"]
    assert find_violations("Chargebacks grew 500%.", canonical_json(ctx), GuardRules()) == []  # the old rule


def test_a_percent_fact_supports_itself_but_not_as_a_ratio():
    ctx = context(affected_checkout_pct=(27, "%"))
    assert numbers_refused("About 27% of checkouts are affected.", ctx) == []
    assert numbers_refused("About 2700% of checkouts are affected.", ctx) == ["2700%"]


@pytest.mark.parametrize(("value", "number"), [(27, Decimal(27)), (0.034, Decimal("0.034")), (" 15 ", Decimal(15)),
                                             (Decimal("1.5"), Decimal("1.5")), (True, None), ("about 15", None),
                                             (float("nan"), None), (float("inf"), None), ("NaN", None),
                                             (None, None), ([27], None)])
def test_a_facts_value_is_a_number_only_where_it_is_one(value, number):
    assert number_value(value) == number


def test_ratio_values_are_none_for_a_context_without_units():
    assert ratio_values({"incident": {"failed_payment_rate": 0.034}}) is None
    assert ratio_values(context(rate=(0.034, "ratio"), n=(3, "count"))) == frozenset({Decimal("0.034")})


def test_the_offline_model_drafts_from_whichever_facts_an_incident_has():
    api = {"region": "EU", "incident": {"incident_id": "inc_api_4021", "status": "mitigated", "p95_latency_ms": 1800,
                                        "api_error_rate": 0.021, "affected_endpoints": "/v2/orders"},
           "fact_meta": [{"key": "p95_latency_ms", "label": "p95 latency", "unit": "ms"},
                         {"key": "api_error_rate", "label": "API error rate", "unit": "ratio"},
                         {"key": "affected_endpoints", "label": "Affected endpoints", "unit": "text"}]}

    draft = draft_from_context("Write the update.", api)

    assert "payment" not in draft
    assert "the p95 latency is 1800 ms." in draft and "2.1% of API requests return an error." in draft
    assert "The affected endpoints are /v2/orders." in draft
    assert numbers_refused(draft, api) == []
    assert json.dumps(api)  # the context is plain JSON


@pytest.mark.parametrize(("key", "unit", "read"), [
    ("upload_failure_pct", "", "%"), ("share_percent", "", "%"), ("Error_Percentage", "", "%"),
    ("upload_failure_pct", "count", "count"),  # a unit the context gives wins
    ("pct_of_uploads", "", ""), ("eta_minutes", "", ""),
])
def test_a_context_without_units_names_its_percentages_by_their_keys(key, unit, read):
    assert unit_of(key, unit) == read

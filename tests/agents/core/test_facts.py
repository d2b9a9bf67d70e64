"""The fact and claim checks (docs/contract.md, 'Fact and claim checks')."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agents.core.guard.checks import find_violations
from agents.core.guard.hedges import is_hedged
from agents.core.guard.numbers import extract_numbers
from agents.core.guard.violation import CHECKS
from agents.core.policy import GuardRules
from agents.core.text import canonical_json
from agents.testing.scripted_demo import DEMO_CONTEXT

RULES = GuardRules()
ALLOWED = canonical_json(DEMO_CONTEXT)


def checks(text, allowed=ALLOWED, **kwargs):
    return [(v.check, v.found) for v in find_violations(text, allowed, RULES, **kwargs)]


# ---------------------------------------------------------------- numbers


def test_numbers_from_the_context_pass():
    text = "27% of checkouts affected; 5 chargeback alerts; ETA 45 minutes, updates every 15 minutes."
    assert checks(text) == []


def test_a_new_number_is_no_new_facts():
    assert checks("We expect recovery within 48 minutes.") == [("no_new_facts", "48")]


def test_twice_is_supported_by_a_double_or_duplicate_and_a_percentile_by_its_key():
    billing = canonical_json({"incident": {"double_charged_accounts": 2150, "page_p95_ms": 6500}})
    assert checks("About 2,150 accounts were charged twice.", billing) == []
    assert checks("Pages take up to 6500 ms at the 95th percentile.", billing) == []
    assert checks("Pages take up to 6500 ms at the 99th percentile.", billing) == [("no_new_facts", "99")]
    assert checks("Some accounts were charged twice.", canonical_json({"incident": {"charged_accounts": 2150}})) == [
        ("no_new_facts", "twice")]


def test_violation_message_names_the_token():
    (violation,) = find_violations("Within 48 minutes.", ALLOWED, RULES)
    assert violation.message == "“48” is not supported by the incident context."


def test_same_value_written_differently_is_supported():
    assert checks("ETA 45.0 minutes.") == []
    assert checks("ETA 45.00 minutes.") == []


def test_percentage_matches_context_ratio():
    assert checks("About 3.4% of payments fail.") == []
    assert checks("About 3.4 % of payments fail.") == []


def test_bare_number_is_not_supported_by_a_ratio():
    assert checks("The failure rate is 3.4 now.") == [("no_new_facts", "3.4")]


def test_percentage_keeps_its_percent_sign():
    numbers = extract_numbers("27% and 3.4 % and 27 percent")
    assert [(n.found, n.percent) for n in numbers] == [
        ("27%", True),
        ("3.4 %", True),
        ("27 percent", True),
    ]


def test_a_wrong_percentage_is_no_new_facts():
    assert checks("About 35% of checkouts are affected.") == [("no_new_facts", "35%")]


def test_number_words_are_checked():
    assert checks("We expect a fix in forty-five minutes.") == []
    assert checks("About twenty seven percent of checkouts are affected.") == []
    assert checks("Updates every fifteen minutes, five alerts so far.") == []
    assert checks("We expect a fix in fifty minutes.") == [("no_new_facts", "fifty")]
    assert checks("Roughly one hundred merchants.") == [("no_new_facts", "one hundred")]


def test_compound_number_words_are_one_number():
    numbers = extract_numbers("twenty-one, one hundred and five, two thousand three hundred")
    assert [int(n.value) for n in numbers] == [21, 105, 2300]


def test_a_number_and_a_half_before_a_unit_of_time_is_one_duration():
    numbers = extract_numbers("For thirteen and a half hours, then one and a half days; 2 and a half hours; "
                              "half of them.")
    assert [(n.found, n.seconds, n.percent) for n in numbers] == [
        ("thirteen and a half", 48600, False),
        ("one and a half", 129600, False), ("2 and a half", 9000, False), ("half", None, True)]
    outage = canonical_json({"incident": {"duration_minutes": 810}})
    assert checks("The app showed no data for about thirteen and a half hours.", outage) == []
    assert checks("The app showed no data for about twelve and a half hours.", outage) == [
        ("no_new_facts", "twelve and a half")]


def test_a_duration_written_in_parts_is_one_duration():
    numbers = extract_numbers("Sign-in failed for 3 hours and 15 minutes; exports for one hour 30 minutes.")
    assert [(n.seconds, n.unit) for n in numbers] == [(11700, "s"), (5400, "s")]
    outage = canonical_json({"incident": {"duration_minutes": 195}})
    assert checks("Sign-in was failing for about 3 hours and 15 minutes.", outage) == []
    assert checks("Sign-in was failing for about 3 hours and 25 minutes.", outage) == [
        ("no_new_facts", "3 hours and 25")]
    # Smaller unit first, or a share after it: no duration in parts.
    assert len(extract_numbers("5 minutes and 3 hours")) == len(extract_numbers("for 2 hours and 40% of users")) == 2


@pytest.mark.parametrize(("text", "found"), [
    ("Restores now wait about 40 minutes.", []),  # 38 rounded to tens
    ("Restores now wait nearly 40 minutes.", []),  # 38 is nearly 40
    ("Restores waited for about five and a half hours.", []),  # 340 minutes rounded to halves
    ("Restores waited for just under six hours.", []),  # 340 minutes is just under six hours
    ("Restores waited for nearly 6 hours.", []),
    ("Restores now wait 40 minutes.", [("no_new_facts", "40")]),  # said exactly, it is another number
    ("Restores now wait about 45 minutes.", [("no_new_facts", "45")]),  # not a rounding of 38
    ("Restores waited for just over six hours.", [("no_new_facts", "six")]),  # the wrong side of 340 minutes
    ("Restores now wait around 35 minutes.", [("no_new_facts", "35")]),  # 38 rounds to 40 in fives
    ("Restores now wait just over 40 minutes.", [("no_new_facts", "40")]),  # 38 is under 40
    ("About 30% of restores are delayed.", [("no_new_facts", "30%")]),  # 27 %: a tenth away at most
])
def test_a_number_said_as_an_approximation_is_supported_by_the_fact_it_rounds(text, found):
    restores = canonical_json({"incident": {"wait_minutes": 38, "outage_minutes": 340, "delayed_pct": 27}})
    assert checks(text, restores) == found


def test_a_facts_unit_from_its_meta_binds_its_number_to_the_quantity():
    # The product says each fact's unit: 340 under "duration" is 340 minutes, not 340 seconds.
    context = {"incident": {"duration": 340, "p95": 4800},
               "fact_meta": [{"key": "duration", "label": "Duration", "unit": "minutes"},
                             {"key": "p95", "label": "p95 start time", "unit": "ms"}]}
    allowed = canonical_json(context)
    assert checks("The outage lasted 340 minutes; playback took about 5 seconds to start.", allowed) == []
    assert checks("The outage lasted 340 seconds.", allowed) == [("no_new_facts", "340")]
    assert checks("The outage lasted 340 seconds.", canonical_json({"incident": {"duration": 340}})) == []


def test_lone_one_counts_only_before_a_unit():
    # "no one" and "one of" are not quantities; "one hour" is.
    assert checks("No one needs to act; one of our partners is affected.") == []
    assert checks("We expect a fix in one hour.") == [("no_new_facts", "one")]


def test_how_long_an_hour_or_a_day_lasted_is_a_duration():
    # "for about an hour" is one hour: the demo incident's durations are 45 and 15 minutes.
    assert checks("Checkouts failed for about an hour.") == [("no_new_facts", "an hour")]
    assert checks("Checkouts failed for about 45 minutes.") == []
    # An hour that is no length of anything is not read.
    assert checks("We will post an update every hour; the first failures came an hour ago.") == []


def test_zero_is_always_a_number():
    assert checks("There is zero risk to stored cards.") == [("no_new_facts", "zero")]


def test_spelled_numbers_in_the_allowed_text_support_digits():
    assert checks("ETA 45 minutes.", allowed="eta forty-five minutes") == []


def test_digits_inside_identifiers_are_not_numbers():
    assert checks("Incident inc_pay_2041 is a P1.") == []


def test_dates_from_the_context_are_supported():
    assert checks("Report of 2026-11-22.") == []


def test_thousands_groups_are_one_number():
    assert [n.value for n in extract_numbers("1,000 customers")] == [1000]
    assert checks("1,000 customers", allowed='{"customers":1000}') == []


# ---------------------------------------------------------------- ids, labels


def test_a_new_incident_id_is_new_incident_id():
    assert checks("See inc_pay_9999 for details.") == [("new_incident_id", "inc_pay_9999")]


def test_the_context_incident_id_passes_in_any_case():
    assert checks("See INC_PAY_2041 for details.") == []


def test_a_new_severity_label_is_new_severity_label():
    assert checks("This is a P0 incident.") == [("new_severity_label", "P0")]
    assert checks("This is a P1 incident.") == []


# ---------------------------------------------------------------- regions


def test_let_us_know_is_not_region_us():
    context = {**DEMO_CONTEXT, "region": "EU"}
    assert checks("Please let us know if you see errors.", canonical_json(context)) == []


def in_the_eu() -> dict:
    """The demo context moved to the EU, its title (which names the US) left out."""
    incident = {k: v for k, v in DEMO_CONTEXT["incident"].items() if k != "title"}
    return {**DEMO_CONTEXT, "region": "EU", "incident": incident}


def test_upper_case_us_not_in_context_is_new_region():
    context = in_the_eu()
    assert checks("Customers in the US are affected.", canonical_json(context)) == [
        ("new_region", "US")
    ]


def test_region_from_the_context_passes():
    assert checks("Customers in the US are affected.") == []


def test_long_region_tokens_match_in_any_case():
    assert checks("Customers in Apac and EMEA are affected.") == [
        ("new_region", "Apac"),
        ("new_region", "EMEA"),
    ]
    # Saying they were spared is also the incident's to say.
    assert ("scope_claim", "not affected") in checks("Customers in Apac and EMEA are not affected.")


def test_region_as_lower_case_json_value_is_supported():
    assert checks("Customers in the EU are affected.", '{"region":"eu"}') == []


def test_lower_case_us_in_the_original_does_not_support_region_us():
    allowed = canonical_json(in_the_eu()) + "\nLet us know."
    assert checks("Customers in the US are affected.", allowed) == [("new_region", "US")]


def test_region_list_comes_from_the_rules():
    rules = GuardRules(regions=("us", "mars"))
    found = find_violations("Mars colonies are affected.", ALLOWED, rules)
    assert [(v.check, v.found) for v in found] == [("new_region", "Mars")]


# ---------------------------------------------------------------- claims


def test_resolved_as_an_assertion_is_restricted_claims():
    assert checks("The issue is resolved.") == [("restricted_claims", "resolved")]


@pytest.mark.parametrize(
    "text",
    [
        "The issue is not yet resolved.",
        "The issue is not resolved.",
        "The issue isn't resolved.",
        "The issue isn’t resolved.",
        "The issue has not been resolved.",
        "The issue has never been fully resolved.",
        "We will post updates until the issue is resolved.",
        "We will post updates until it is resolved.",
        "Once resolved, we will confirm.",
        "Once it is resolved, we will confirm.",
        "When it is resolved, we will confirm.",
        "We will confirm before it is resolved.",
        "If resolved, no action is needed.",
        "The issue is unresolved.",
        "We expect it to be resolved soon.",
        "It may be resolved later today.",
        "We are working to get this resolved.",
        "We hope to have it resolved shortly.",
        "Not all payments are stable.",
        "Payments have not fully recovered.",
    ],
)
def test_hedged_resolved_is_not_a_claim(text):
    assert checks(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "We are not sure of the cause, but payments are resolved.",
        "We are not sure of the cause and payments are resolved.",
        "The issue we did not anticipate is resolved.",
        "The issue will be resolved in 45 minutes.",  # a promise is a claim
        "All payments are stable again.",
        "Checkout has fully recovered.",
        "The incident closed this afternoon.",  # (at noon: also a time the context lacks)
    ],
)
def test_unhedged_claim_in_a_hedged_sentence_is_still_restricted_claims(text):
    assert [check for check, _ in checks(text)] == ["restricted_claims"]


def test_hedge_window_stays_in_the_clause():
    # "If" hedges its own clause only; after the comma "payments are resolved" is asserted.
    text = "If you are affected, payments are resolved."
    assert is_hedged(text, text.index("resolved")) is False
    assert is_hedged("until it is resolved", len("until it is ")) is True
    assert checks(text) == [("restricted_claims", "resolved")]


def test_claim_in_the_allowed_text_is_supported():
    allowed = ALLOWED + "\nThe issue is resolved."
    assert checks("Payments are resolved now.", allowed) == []


def test_a_hedged_claim_in_the_allowed_text_does_not_support_the_claim():
    allowed = ALLOWED + "\nThe issue is not yet resolved."
    assert checks("The issue is resolved.", allowed) == [("restricted_claims", "resolved")]


def test_strict_claims_stop_even_when_the_original_had_the_claim():
    allowed = ALLOWED + "\nThe issue is resolved."
    found = checks("The issue is resolved.", allowed, strict_claims=True)
    assert found == [("restricted_claims", "resolved")]


def test_strict_claims_still_ignore_hedged_claims():
    assert checks("The issue is not yet resolved.", strict_claims=True) == []


# ---------------------------------------------------------------- order and shape


def test_violations_are_ordered_by_check():
    text = ("The issue is resolved for APAC P3 inc_x_1 in 99 minutes. Sign-in is working again, yet every "
            "user sees errors; we will refund you, your data is safe, and it will be fixed shortly. <!here> see "
            "acme-login.net via pay-gw.us.internal, the the.")
    found = [check for check, _ in checks(text, context=DEMO_CONTEXT)]
    assert found == sorted(found, key=CHECKS.index)
    # Grounding reads only with a vocabulary (a policy that turns it on): none here.
    assert list(dict.fromkeys(found)) == [check for check in CHECKS if check not in ("uninformative",
                                                                                     "unsupported_statement")]
    # A text that names nothing affected says nothing; the check comes last.
    assert [check for check, _ in checks("Nothing new, the the.", context={})] == ["malformed_text", "uninformative"]


def test_each_distinct_token_is_reported_once():
    assert checks("48 minutes, then 48 more.") == [("no_new_facts", "48")]


@given(st.text(max_size=300), st.text(max_size=300), st.booleans())
def test_find_violations_never_raises_on_arbitrary_text(text, allowed, strict):
    for violation in find_violations(text, allowed, RULES, strict_claims=strict):
        assert violation.check in CHECKS
        assert violation.found


# ---------------------------------------------------------------- times of day as single facts

NEXT_UPDATE_UTC = canonical_json({"next_update": "2026-11-22T18:00:00Z", "affected_merchants": 18})


@pytest.mark.parametrize("text", [
    "Next update at 18:00.", "Next update at 18:00 UTC.", "Next update at 6 pm.", "Next update at 6 p.m. UTC.",
    "Next update at 18h00.", "Next update at 18.00 UTC.", "Next update at 1800 UTC.", "Next update at 1800 hours.",
    "Next update at 18:00Z.", "Next update at 18:00 GMT.", "Next update at 6 o'clock.",
])
def test_a_time_written_any_way_is_one_fact_supported_by_the_same_time(text):
    assert checks(text, NEXT_UPDATE_UTC) == []


@pytest.mark.parametrize(("text", "found"), [
    ("Next update at 18:30 UTC.", "18:30 UTC"),
    ("Next update at 18:00 CET.", "18:00 CET"),  # another zone is another time
    ("Next update at 6.30 pm.", "6.30 pm"),
    ("Next update at 1900 UTC.", "1900 UTC"),
    ("Next update at 7 o'clock.", "7 o'clock"),
    ("Next update at noon.", "noon"),
    ("Next update at midnight UTC.", "midnight UTC"),
])
def test_a_time_the_context_does_not_have_is_one_unsupported_fact(text, found):
    assert checks(text, NEXT_UPDATE_UTC) == [("no_new_facts", found)]


def test_the_numbers_of_a_time_are_not_the_time():
    # The context's 18 (merchants) and a 0 do not make "18:00" a supported time ...
    numbers_only = canonical_json({"affected_merchants": 18, "failed_payouts": 0})
    assert checks("Payouts resumed at 18:00 UTC.", numbers_only) == [("no_new_facts", "18:00 UTC")]
    assert checks("Payouts resumed at 6 pm.", numbers_only) == [("no_new_facts", "6 pm")]
    # ... and the context's time does not make 18 a supported number.
    time_only = canonical_json({"next_update": "18:00 UTC"})
    assert checks("18 merchants are affected; next update at 18:00.", time_only) == [("no_new_facts", "18")]


def test_a_zone_is_part_of_the_time_and_offsets_are_read_as_zones():
    plus_one = canonical_json({"next_update": "2026-11-22T18:00:00+01:00"})
    assert checks("Next update at 18:00 UTC+1.", plus_one) == []
    assert checks("Next update at 18:00 UTC.", plus_one) == [("no_new_facts", "18:00 UTC")]
    # A context time without a zone supports the time with any zone written.
    assert checks("Next update at 18:00 CET.", canonical_json({"next_update": "18:00"})) == []


def test_a_grouped_number_in_prose_is_one_number_and_a_compact_list_holds_each():
    prose = canonical_json({"symptom": "About 1,200 invoice emails were not delivered"})
    assert checks("About 1,200 invoice emails were not delivered.", prose) == []
    assert checks("About 200 invoice emails were not delivered.", prose) == [("no_new_facts", "200")]
    listed = canonical_json({"affected_shards": [1, 200]})
    assert checks("Shards 1 and 200 are affected.", listed) == []

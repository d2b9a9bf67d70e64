"""The deterministic fallback edit of the self-critique pipeline."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agents.core.fallback import apply_fallback
from agents.core.guard.wellformed import find_malformed
from agents.core.phrases import phrase_present


def test_fallback_deletes_a_must_remove_phrase_case_insensitively():
    text = "Payments are degraded. The issue is Resolved for most customers."
    assert apply_fallback(text, [], ["resolved"]) == (
        "Payments are degraded. The issue is for most customers."
    )


def test_fallback_deletes_a_phrase_with_and_without_its_full_stop():
    text = "The issue is resolved. We are monitoring payments."
    assert apply_fallback(text, [], ["The issue is resolved."]) == "We are monitoring payments."
    text = "We are monitoring payments. The issue is resolved"
    assert apply_fallback(text, [], ["The issue is resolved."]) == "We are monitoring payments."


def test_removing_a_phrase_never_leaves_a_double_full_stop():
    text = "Checkout is degraded, fully recovered. Next update in 15 minutes."
    result = apply_fallback(text, [], ["fully recovered"])
    assert result == "Checkout is degraded. Next update in 15 minutes."


def test_removing_a_phrase_never_leaves_a_dangling_comma():
    text = "Payments are degraded, resolved, and monitored."
    assert apply_fallback(text, [], ["resolved"]) == "Payments are degraded, and monitored."
    assert apply_fallback("We are on it, resolved.", [], ["resolved"]) == "We are on it."


def test_removing_a_phrase_never_leaves_a_double_space():
    text = "We are  working on it (fully recovered) and will update you."
    result = apply_fallback(text, [], ["fully recovered"])
    assert result == "We are working on it and will update you."


def test_removing_the_start_of_a_sentence_capitalises_what_follows():
    text = "Resolved, payments are flowing again. We monitor every 15 minutes."
    assert apply_fallback(text, [], ["resolved"]) == (
        "Payments are flowing again. We monitor every 15 minutes."
    )


def test_lower_case_words_the_author_wrote_stay_lower_case():
    assert apply_fallback("Use the page, e.g. the status page.", [], []) == (
        "Use the page, e.g. the status page."
    )


def test_removing_a_whole_sentence_keeps_the_lines_around_it():
    assert apply_fallback("Line one.\nResolved.\nLine two.", [], ["resolved"]) == (
        "Line one.\nLine two."
    )


def test_removal_repeats_until_the_phrase_is_gone():
    assert apply_fallback("x x y y", [], ["x y"]) == ""


def test_fallback_appends_a_missing_phrase_as_its_own_sentence():
    text = "Payments are degraded."
    assert apply_fallback(text, ["This estimate may change as we learn more."], []) == (
        "Payments are degraded. This estimate may change as we learn more."
    )


def test_appended_phrase_keeps_its_case_gets_a_capital_and_a_full_stop():
    text = "Payments are degraded"
    assert apply_fallback(text, ["next update via the Status Page"], []) == (
        "Payments are degraded. Next update via the Status Page."
    )


def test_a_phrase_already_present_is_not_appended_again():
    text = "Next update via the status page."
    assert apply_fallback(text, ["next update via the status page"], []) == text


def test_text_before_an_appended_phrase_ends_with_terminal_punctuation():
    assert apply_fallback("We are on it,", ["more soon"], []) == "We are on it. More soon."
    assert apply_fallback("Are we on it?", ["more soon"], []) == "Are we on it? More soon."


def test_fallback_removes_then_appends():
    text = "The issue is resolved. We monitor payment failures every 15 minutes."
    result = apply_fallback(text, ["We expect a fix within 45 minutes"], ["The issue is resolved"])
    assert result == (
        "We monitor payment failures every 15 minutes. We expect a fix within 45 minutes."
    )


WORDS_IN = st.sampled_from(["alpha", "beta", "gamma", "delta", "status", "page", "27%"])
WORDS_OUT = st.sampled_from(["resolved", "fully", "recovered", "closed", "stable", "guaranteed"])


def phrases(words):
    return st.lists(words, min_size=1, max_size=4).map(" ".join).filter(lambda p: len(p) >= 3)


@given(
    st.text(max_size=300),
    st.lists(st.text(max_size=40), max_size=3),
    st.lists(st.text(max_size=40), max_size=3),
)
def test_fallback_never_raises_on_arbitrary_text(text, include, remove):
    result = apply_fallback(text, include, remove)
    assert ".." not in result and "  " not in result and " ," not in result


PUNCTUATION = st.sampled_from([",", ".", "!", "?", "\n", "  ", "-"])
PIECES = st.one_of(WORDS_IN, WORDS_OUT, PUNCTUATION, st.text(max_size=6))


@given(
    st.lists(PIECES, max_size=40).map(" ".join),
    st.lists(phrases(WORDS_IN), max_size=3),
    st.lists(phrases(WORDS_OUT) | phrases(WORDS_OUT).map(lambda p: p + "."), max_size=3),
)
def test_fallback_output_is_clean_and_applies_every_phrase(text, include, remove):
    result = apply_fallback(text, include, remove)
    assert ".." not in result and "  " not in result and " ," not in result
    assert all(phrase_present(p, result) for p in include)
    assert not any(phrase_present(p, result) for p in remove)


@pytest.mark.parametrize("text", ["", "   ", "..."])
def test_fallback_on_empty_text_only_appends(text):
    assert apply_fallback(text, ["more soon"], []) == "More soon."


def test_removing_a_label_leaves_no_colon_after_a_full_stop():
    text = "API error rate: 2.1%. Affected endpoints: /v2/orders and /v2/payments."
    for label in ("Affected endpoints", "Affected endpoints:"):
        assert apply_fallback(text, [], [label]) == "API error rate: 2.1%. /v2/orders and /v2/payments."
    assert apply_fallback("Status: degraded; ; exports: delayed.", [], []) == "Status: degraded; exports: delayed."


def test_a_phrase_takes_the_marks_it_starts_with_but_not_a_quote():
    text = "Affected endpoints: /v2/orders and /v2/payments. We are on it."
    assert apply_fallback(text, [], ["/v2/orders and /v2/payments"]) == "Affected endpoints. We are on it."
    assert apply_fallback('Exports are "fully recovered" now.', [], ['"fully recovered']) == "Exports are now."


def stray(text):
    return [v for v in find_malformed(text) if v.message.startswith("The text has stray punctuation")]


LABELS = ["Status", "Affected endpoints", "API error rate", "Next update"]
VALUES = ["degraded", "2.1%", "/v2/orders and /v2/payments", "sign-in, exports", "fully recovered"]
FACT_LINES = st.lists(st.tuples(st.sampled_from(LABELS), st.sampled_from(VALUES)), min_size=1, max_size=6).map(
    lambda pairs: " ".join(f"{label}: {value}." for label, value in pairs))


@given(FACT_LINES, st.lists(st.sampled_from(LABELS + VALUES + ["Status:", "2.1%."]), max_size=3))
def test_removing_labels_or_values_adds_no_stray_punctuation(text, remove):
    assert stray(text) == []
    assert stray(apply_fallback(text, [], remove)) == []

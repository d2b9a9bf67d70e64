"""Phrase rules from a fix plan or required changes: what a revision must say and must not say."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agents.core.phrases import (
    PHRASE_MAX,
    PhraseRules,
    critique_rules,
    is_enforceable,
    missing_and_present,
    normalize_phrase,
    outside_quotes,
    phrase_present,
    quoted_phrases,
    reflection_rules,
)

# ---------------------------------------------------------------- quoted phrases


def test_apostrophe_inside_double_quotes_does_not_cut_the_phrase():
    assert quoted_phrases('Add "we\'re monitoring" to the opening') == ["we're monitoring"]


def test_apostrophe_inside_single_quotes_does_not_cut_the_phrase():
    assert quoted_phrases("Add 'we're monitoring closely'") == ["we're monitoring closely"]


def test_apostrophe_in_the_instruction_does_not_open_a_phrase():
    assert quoted_phrases("Don't drop the customer's 'next update' line") == ["next update"]


def test_curly_quotes_are_quotes():
    assert quoted_phrases("Add ‘we’re monitoring’ and “next update”") == [
        "we’re monitoring",
        "next update",
    ]


def test_unclosed_quote_is_not_a_phrase():
    assert quoted_phrases('Add "half a phrase') == []


def test_outside_quotes_keeps_only_the_instruction_words():
    assert outside_quotes("Add 'but this may change' at the end").split() == [
        "Add",
        "at",
        "the",
        "end",
    ]


# ---------------------------------------------------------------- reflection


def rules_of(*fix_plan):
    rules = reflection_rules(list(fix_plan))
    return rules.must_include, rules.must_remove


def test_add_instruction_with_change_inside_quotes_is_must_include():
    assert rules_of("Add 'but this may change'") == (("but this may change",), ())


def test_keep_instruction_with_updates_as_a_noun_is_must_include():
    assert rules_of("Keep a clear 'Next actions' section for status updates") == (
        ("Next actions",),
        (),
    )


def test_keep_the_updated_eta_is_not_a_modify_instruction():
    assert rules_of("Keep the updated ETA 'within 45 minutes'") == (("within 45 minutes",), ())


def test_replace_instruction_makes_the_first_phrase_must_remove():
    assert rules_of("Rewrite 'resolved' so it sounds less certain") == ((), ("resolved",))


MODIFY_VERBS = ["Replace", "Replaces", "Replacing", "Changed", "Updated", "Rewriting", "Modify"]


@pytest.mark.parametrize("verb", MODIFY_VERBS + ["Update", "Change"])
def test_modify_verbs_in_any_inflection_make_the_first_phrase_must_remove(verb):
    assert rules_of(f"{verb} 'fully recovered' in the second sentence")[1] == ("fully recovered",)


def test_strict_replace_with_makes_b_must_include():
    assert rules_of('Replace "resolved" with "being mitigated"') == (
        ("being mitigated",),
        ("resolved",),
    )


def test_change_a_to_b_makes_b_must_include():
    assert rules_of("Change 'resolved' to 'being mitigated'") == (
        ("being mitigated",),
        ("resolved",),
    )


def test_passive_replace_is_strict_too():
    assert rules_of("'resolved' must be replaced with 'being mitigated'") == (
        ("being mitigated",),
        ("resolved",),
    )


@pytest.mark.parametrize("marker", ["such as", "for example", "e.g."])
def test_replace_with_an_example_does_not_make_b_must_include(marker):
    instruction = f"Replace 'resolved' with something {marker} 'being mitigated'"
    rules = reflection_rules([instruction])
    assert (rules.must_include, rules.must_remove) == ((), ("resolved",))
    assert "example wording" in rules.unenforceable[0]["why"]


def test_remove_instruction_makes_phrases_must_remove():
    # A deliberate improvement on the contract phrase rule's plain reading (which would require the phrase).
    assert rules_of("Remove 'resolved' and 'fully recovered'") == (
        (),
        ("resolved", "fully recovered"),
    )
    assert rules_of("Delete 'guaranteed'") == ((), ("guaranteed",))
    assert rules_of("Avoid 'all payments are stable'") == ((), ("all payments are stable",))
    assert rules_of("Drop the phrase 'no impact'") == ((), ("no impact",))


def test_negated_verbs_flip():
    assert rules_of("Do not say 'fully recovered'") == ((), ("fully recovered",))
    assert rules_of("Don't remove 'we're monitoring'") == (("we're monitoring",), ())
    assert rules_of("Do not change 'within 45 minutes'") == (("within 45 minutes",), ())


def test_each_phrase_follows_its_own_verb():
    assert rules_of("Remove 'guaranteed' and add 'we expect'") == (("we expect",), ("guaranteed",))
    assert rules_of("Say 'being mitigated' instead of 'resolved'") == (
        ("being mitigated",),
        ("resolved",),
    )
    assert rules_of("Avoid absolute claims by adding 'we expect'") == (("we expect",), ())
    assert rules_of("Replace 'first one' with 'second one' and remove 'third one'") == (
        ("second one",),
        ("first one", "third one"),
    )


def test_other_instructions_with_quotes_make_each_phrase_must_include():
    assert rules_of("Mention 'next update in 15 minutes' and 'status page'") == (
        ("next update in 15 minutes", "status page"),
        (),
    )
    assert rules_of("The update needs 'we apologise'") == (("we apologise",), ())


def test_instruction_without_quotes_is_reported_unenforceable():
    rules = reflection_rules(["Soften the tone"])
    assert rules.unenforceable == (
        {"instruction": "Soften the tone", "why": "no quoted phrase to check"},
    )


def test_phrase_longer_than_the_window_is_reported_not_ignored():
    long_phrase = "x" * (PHRASE_MAX + 1)
    rules = reflection_rules([f"Add '{long_phrase}'", "Add 'ok'"])
    assert rules.must_include == ()
    assert [item["instruction"] for item in rules.unenforceable] == [
        f"Add '{long_phrase}'",
        "Add 'ok'",
    ]
    assert "161 characters" in rules.unenforceable[0]["why"]


def test_phrase_without_letters_or_digits_is_unenforceable():
    rules = reflection_rules(["Add '...!'"])
    assert rules.must_include == () and len(rules.unenforceable) == 1


def test_duplicate_phrases_are_listed_once():
    assert rules_of("Add 'status page'", "Add 'Status page.'") == (("status page",), ())


# ---------------------------------------------------------------- self-critique


@pytest.mark.parametrize(
    "change",
    [
        "ADD 'but this may change'",
        "add: 'but this may change'",
        "ADD- 'but this may change'",
        "Please MUST_INCLUDE 'but this may change'",
        "The revision must_include \"but this may change\"",
        "1. ADD 'but this may change'",
    ],
)
def test_add_markers_are_enforceable_must_include(change):
    assert is_enforceable(change)
    assert critique_rules([change]).must_include == ("but this may change",)


@pytest.mark.parametrize(
    "change",
    ["REMOVE 'fully recovered'", "remove: 'fully recovered'", "MUST_REMOVE 'fully recovered'"],
)
def test_remove_markers_are_enforceable_must_remove(change):
    assert is_enforceable(change)
    assert critique_rules([change]).must_remove == ("fully recovered",)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ("Add a caveat about the ETA", "0 quoted phrases"),
        ("ADD 'one' and 'two'", "2 quoted phrases"),
        ("ADDITIONALLY 'but this may change'", "no ADD/REMOVE"),
        ("Mention 'but this may change'", "no ADD/REMOVE"),
        ("ADD 'ok'", "2 characters"),
        (f"ADD '{'y' * 161}'", "161 characters"),
        ("ADD 'this one' then MUST_REMOVE it", "both"),
    ],
)
def test_changes_without_one_phrase_and_a_marker_are_unenforceable(change, why):
    assert not is_enforceable(change)
    rules = critique_rules([change])
    assert rules.must_include == () and rules.must_remove == ()
    assert why in rules.unenforceable[0]["why"]


def test_marker_inside_the_quotes_does_not_count():
    assert not is_enforceable("Write 'MUST_INCLUDE this'")


def test_apostrophe_in_a_double_quoted_required_change_is_one_phrase():
    assert critique_rules(['ADD "we\'re monitoring payments"']).must_include == (
        "we're monitoring payments",
    )


# ---------------------------------------------------------------- presence


def test_phrase_presence_ignores_case_punctuation_and_spacing():
    assert phrase_present("We're monitoring.", "WE RE   monitoring, closely")
    assert phrase_present("27%", "about 27 % of checkouts")


def test_phrase_presence_is_word_bounded():
    assert not phrase_present("resolved", "The issue is unresolved.")
    assert phrase_present("resolved", "Resolved!")


def test_normalized_form_keeps_letters_digits_and_percent():
    assert normalize_phrase("  Next: update—in 15 min (27%)!") == "next update in 15 min 27%"


def test_missing_and_present_lists_both_kinds():
    rules = PhraseRules(must_include=("status page", "next update"), must_remove=("resolved",))
    assert missing_and_present(rules, "See the status page; it is resolved.") == (
        ["next update"],
        ["resolved"],
    )


@given(st.lists(st.text(max_size=200), max_size=5))
def test_rule_builders_never_raise_on_arbitrary_text(items):
    for rules in (reflection_rules(items), critique_rules(items)):
        for phrase in rules.must_include + rules.must_remove:
            assert 3 <= len(phrase) <= PHRASE_MAX
    for item in items:
        is_enforceable(item)
        outside_quotes(item)

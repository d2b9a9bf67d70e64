"""The audit record of a self-critique revision and the word diff."""

from hypothesis import given
from hypothesis import strategies as st

from agents.core.audit import audit_record, word_diff
from agents.core.text import text_hash

DRAFT = "Payments are degraded. We expect a fix within 45 minutes."
REVISED = "Payments are degraded. We expect a fix within 45 minutes. This estimate may change."


def test_audit_record_holds_hashes_counts_and_growth():
    record = audit_record(DRAFT, REVISED, risks=2, required_changes=1)
    assert record["changed"] is True
    assert record["before_hash"] == text_hash(DRAFT)
    assert record["after_hash"] == text_hash(REVISED)
    assert (record["before_chars"], record["after_chars"]) == (len(DRAFT), len(REVISED))
    assert record["delta"] == len(REVISED) - len(DRAFT)
    assert record["length_increase_pct"] == round((len(REVISED) - len(DRAFT)) / len(DRAFT) * 100, 2)
    assert (record["risks_count"], record["required_changes_count"]) == (2, 1)


def test_whitespace_only_difference_is_not_a_change():
    record = audit_record(DRAFT, "  " + DRAFT.replace(" ", "\n", 1) + "\n")
    assert record["changed"] is False
    assert record["before_hash"] == record["after_hash"]


def test_single_line_text_is_diffed_over_sentences():
    record = audit_record(DRAFT, REVISED)
    assert record["diff_unit"] == "sentences"
    assert record["diff_excerpt"] == ["+ This estimate may change."]
    assert record["unified_diff"].startswith("--- before\n+++ after\n@@")


def test_multi_line_text_is_diffed_over_lines():
    record = audit_record("Line one.\nLine two.", "Line one.\nLine 2 changed.")
    assert record["diff_unit"] == "lines"
    assert record["diff_excerpt"] == ["- Line two.", "+ Line 2 changed."]


def test_single_sentence_text_is_diffed_over_80_character_chunks():
    before = "x" * 170
    record = audit_record(before, "x" * 160 + "y" * 10)
    assert record["diff_unit"] == "chunks"
    assert record["diff_excerpt"] == ["- " + "x" * 10, "+ " + "y" * 10]


def test_diff_excerpt_has_at_most_6_lines():
    before = "\n".join(f"line {i}" for i in range(10))
    after = "\n".join(f"row {i}" for i in range(10))
    record = audit_record(before, after)
    assert len(record["diff_excerpt"]) == 6
    assert "-line 9" in record["unified_diff"] and "+row 9" in record["unified_diff"]  # whole diff


def test_growth_from_an_empty_before_is_0():
    assert audit_record("", "Something new.")["length_increase_pct"] == 0


def test_word_diff_marks_inserted_and_deleted_words():
    ops = word_diff("The issue is resolved now.", "The issue is being mitigated now.")
    assert ops == [
        ("equal", "The issue is "),
        ("delete", "resolved "),
        ("insert", "being mitigated "),
        ("equal", "now."),
    ]


@given(st.text(max_size=300), st.text(max_size=300), st.integers(0, 9), st.integers(0, 9))
def test_audit_record_never_raises_on_arbitrary_text(before, after, risks, changes):
    record = audit_record(before, after, risks=risks, required_changes=changes)
    assert len(record["diff_excerpt"]) <= 6
    assert record["delta"] == record["after_chars"] - record["before_chars"]


@given(st.text(max_size=200), st.text(max_size=200))
def test_word_diff_rebuilds_both_texts(before, after):
    ops = word_diff(before, after)
    assert "".join(text for op, text in ops if op != "insert") == before
    assert "".join(text for op, text in ops if op != "delete") == after


def test_word_diff_keeps_the_last_word_unchanged_when_a_sentence_is_added():
    ops = word_diff(DRAFT, REVISED)
    assert ("delete", "minutes.") not in ops and not any(op == "delete" and text.strip() for op, text in ops)
    assert [text.strip() for op, text in ops if op == "insert" and text.strip()] == ["This estimate may change."]

"""The presentation helpers of reviewer/templatetags/review.py that write HTML or pick a class."""

import pytest
from django.template import Context, Template

from agents.core.audit import word_diff
from reviewer.templatetags.review import duration, share, step_status

OPS = word_diff("We see <b>errors</b>. Update soon.", "We see some <b>errors</b>. Update at 5 & soon.")


def render(source: str, **context) -> str:
    return Template("{% load review %}" + source).render(Context(context))


def test_the_word_diff_shows_both_sides_inline_with_every_word_escaped():
    html = render("{% word_diff ops %}", ops=OPS)

    assert html == ("We see <ins>some </ins>&lt;b&gt;errors&lt;/b&gt;. Update <ins>at 5 &amp; </ins>soon.")


@pytest.mark.parametrize("side, shown, hidden", [("before", "<del>", "<ins>"), ("after", "<ins>", "<del>")])
def test_each_side_of_the_word_diff_shows_only_its_own_changes(side, shown, hidden):
    ops = word_diff("Errors are fixed now.", "Errors are being mitigated now.")

    html = render("{% word_diff ops side=side %}", ops=ops, side=side)

    assert hidden not in html and shown in html
    assert html.replace("<del>", "").replace("</del>", "").replace("<ins>", "").replace("</ins>", "") == (
        "Errors are fixed now." if side == "before" else "Errors are being mitigated now."
    )


@pytest.mark.parametrize("status, pill", [("ok", "ok"), ("retry", "running"), ("stopped", "stopped"),
                                          ("error", "stopped")])
def test_a_trace_step_status_picks_its_pill(status, pill):
    assert step_status(status) == pill


# -- a grounding finding: its sentence with the unsupported words marked --------------------------------------

SENTENCE = "The outage was caused by a third-party vendor."
MARK = '<mark class="unsupported-words"><span class="visually-hidden">unsupported: </span>{}</mark>'


def grounding(**fields) -> dict:
    return {"check": "invalid_answer:unsupported_statement", "message": "The incident does not support: “third-party "
            "vendor”.", "found": "third-party vendor", "sentence": SENTENCE, "words": [[27, 45]], **fields}


def test_a_grounding_finding_marks_its_unsupported_words_in_its_sentence():
    html = render("{% unsupported_sentence f %}", f=grounding())

    assert html == ('<q class="finding-sentence">The outage was caused by a ' + MARK.format("third-party vendor")
                    + ".</q>")


def test_several_word_runs_are_marked_each_in_order_whatever_order_they_come_in():
    html = render("{% unsupported_sentence f %}", f=grounding(words=[[27, 45], [4, 10]]))

    assert html == ('<q class="finding-sentence">The ' + MARK.format("outage") + " was caused by a "
                    + MARK.format("third-party vendor") + ".</q>")


def test_the_sentence_and_the_marked_words_are_escaped():
    sentence = 'Fixed by <script>alert("x")</script> & co.'
    html = render("{% unsupported_sentence f %}", f=grounding(sentence=sentence, words=[[9, 36]]))

    assert "<script>" not in html
    assert MARK.format("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;") in html and "&amp; co." in html


@pytest.mark.parametrize("words", [
    [[27, 99]],  # past the sentence's end
    [[-1, 5]], [[10, 10]], [[12, 4]],  # before its start, empty, backwards
    [[4, 20], [10, 30]],  # overlapping
    [[4, 20], "oops"], [[4.0, 10.0]], [[True, 5]], [[1, 2, 3]], "27-45", {"start": 27},  # not offsets
])
def test_offsets_that_do_not_fit_the_sentence_show_it_as_plain_text(words):
    html = render("{% unsupported_sentence f %}", f=grounding(words=words))

    assert html == f'<q class="finding-sentence">{SENTENCE}</q>'


@pytest.mark.parametrize("words", [None, []])
def test_without_offsets_every_occurrence_of_what_was_found_is_marked_ignoring_case(words):
    finding = {"check": "invalid_answer:judge_unsupported", "message": "The judge finds the vendor unsupported.",
               "found": "vendor", "sentence": "A Vendor change; the vendor's fault.", "words": words}

    html = render("{% unsupported_sentence f %}", f=finding)

    assert html == (f'<q class="finding-sentence">A {MARK.format("Vendor")} change; the {MARK.format("vendor")}'
                    "&#x27;s fault.</q>")


def test_what_was_found_is_matched_as_text_not_as_a_pattern():
    finding = {"found": "a.b (c", "sentence": "axb (c and a.b (c"}

    html = render("{% unsupported_sentence f %}", f=finding)

    assert html == f'<q class="finding-sentence">axb (c and {MARK.format("a.b (c")}</q>'


@pytest.mark.parametrize("finding", [{"check": "patch_violation:no_new_facts", "message": "m", "found": "5"},
                                     {"sentence": None}, {"sentence": ["a"]}, {"sentence": "   "}, None, "text"])
def test_a_finding_without_a_sentence_shows_none(finding):
    assert render("{% unsupported_sentence f %}", f=finding) == ""


def test_a_finding_reads_as_its_message_then_its_sentence_then_its_check_in_small_type():
    html = render("{% finding f %}", f=grounding(message="Not supported: <b>vendor</b>."))

    message, sentence, check = (html.index(part) for part in (
        'class="finding-message">Not supported: &lt;b&gt;vendor&lt;/b&gt;.</span>', MARK.format("third-party vendor"),
        '<span class="finding-check"><code>invalid_answer:unsupported_statement</code> · found by\n'
        "  the guard&#x27;s word check</span>"))
    assert message < sentence < check


@pytest.mark.parametrize(("found", "shown"), [("all customers", True), ("EU", False)])
def test_a_finding_quotes_what_was_found_only_when_its_message_does_not(found, shown):
    html = render("{% finding f %}", f={"check": "invalid_answer:new_region", "message": "The EU is not in it.",
                                         "found": found})

    assert (f'<q class="found">{found}</q>' in html) is shown
    assert "finding-sentence" not in html and "found by" not in html


@pytest.mark.parametrize("seconds, shown", [(None, "—"), (0, "0 s"), (59.6, "1 min"), (754, "12 min"),
                                            (3600, "1 h"), (7500, "2 h 5 min"), (86400, "1 d"),
                                            (3 * 86400 + 4 * 3600 + 59, "3 d 4 h")])
def test_a_duration_reads_in_the_largest_units_that_matter(seconds, shown):
    assert duration(seconds) == shown


def test_a_share_is_a_whole_percentage():
    assert (share(None), share(0), share(0.634), share(1)) == ("—", "0%", "63%", "100%")


@pytest.mark.parametrize(("reading", "named"), [
    ("denial", "the guard&#x27;s check for denials of the incident"),
    ("done to customers", "the guard&#x27;s check for work said done or promised to customers"),
    ("guarantee", "the guard&#x27;s check for what a text says will not happen"),
    ("assurance", "the guard&#x27;s check for what a text says came to no harm"),
    ("lasting", "the guard&#x27;s check for what a text promises will last"),
    ("order", "the guard&#x27;s check for the order in which waiting work will be done"),
    ("workaround", "the guard&#x27;s check for a way around the incident nobody said works"),
])
def test_a_statement_a_named_reading_found_names_the_reading_not_the_word_check(reading, named):
    html = render("{% finding f %}", f=grounding(message="It says something the incident does not.", reading=reading))

    assert f"found by\n  {named}</span>" in html
    assert "word check" not in html

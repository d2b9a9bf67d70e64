"""The presentation helpers of reviewer/templatetags/review.py that write HTML or pick a class."""

import pytest
from django.template import Context, Template

from agents.core.audit import word_diff
from reviewer.templatetags.review import step_status

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

"""A grounding finding on the desk: wherever a lead reads the guard's findings (the inbox, the escalation
page, the edit box's check, the run page, the findings a lead overrode), it shows the sentence the finding is
about with its unsupported words marked, after its message."""

import pytest
from django.urls import reverse
from django.utils.html import escape

from agents.core import guard
from agents.core.stops import explain, opens_escalation
from reviewer.desk import decisions
from tests import factories

HTMX = {"HTTP_HX_REQUEST": "true"}
TEXT = "We are investigating wallet top-up failures in the EU. The outage was caused by a third-party vendor."
SENTENCE = "The outage was caused by a <b>third-party</b> vendor."
MARKED = ('The outage was caused by a <mark class="unsupported-words"><span class="visually-hidden">unsupported: '
          '</span>&lt;b&gt;third-party&lt;/b&gt; vendor</mark>.')
FINDING = {"check": "invalid_answer:unsupported_statement", "message": "The incident does not support: “third-party "
           "vendor”.", "found": "third-party vendor", "sentence": SENTENCE, "words": [[27, 52]]}


@pytest.fixture
def escalation(db):
    incident = factories.make_incident(severity="P2")
    return factories.make_escalation(incident=incident, text=TEXT, stop_reason="invalid_answer:unsupported_statement",
                                     guard={"violations": [FINDING], "measurements": {}})


@pytest.fixture
def grounding_guard(monkeypatch):
    """The guard's final-answer check as it is, plus a grounding finding on any text that blames a vendor."""
    real = decisions.check_final_answer

    def check_final_answer(answer, *args, **kwargs):
        result = real(answer, *args, **kwargs)
        if "vendor" not in answer:
            return result
        violations = (*result.violations, FINDING)
        return guard.GuardResult(violations[0]["check"], violations, result.measurements)

    monkeypatch.setattr(decisions, "check_final_answer", check_final_answer)


def test_the_inbox_row_shows_the_sentence_with_the_unsupported_words_marked(login, escalation):
    html = login("lead").get(reverse("inbox")).content.decode()

    assert f'<q class="finding-sentence">{MARKED}</q>' in html
    assert html.index("The incident does not support: “third-party vendor”.") < html.index(MARKED)
    assert "<b>third-party</b>" not in html


def test_the_escalation_page_shows_the_sentence_and_explains_the_stop_reason(login, escalation):
    html = login("lead").get(reverse("escalation", args=[escalation.pk])).content.decode()

    panel = html[html.index('id="guard-panel"'):html.index('id="change-requests"') if 'id="change-requests"' in html
                 else None]
    assert MARKED in panel and '<code>invalid_answer:unsupported_statement</code> · found by' in panel
    assert escape(explain("invalid_answer:unsupported_statement")) in html
    assert "Unknown stop reason" not in html


def test_the_run_page_shows_the_sentence_with_the_unsupported_words_marked(login, escalation):
    escalation.run.guard = escalation.guard
    escalation.run.save(update_fields=["guard"])

    html = login("lead").get(reverse("run", args=[escalation.run.pk])).content.decode()

    assert MARKED in html


def test_the_edit_box_check_shows_a_grounding_finding_the_same_way(login, escalation, grounding_guard):
    lead = login("lead")
    url = reverse("escalation_check", args=[escalation.pk])

    fragment = lead.post(url, {"text": TEXT + " We apologise."}, **HTMX).content.decode()
    page = lead.post(url, {"text": TEXT + " We apologise."}).content.decode()

    for html in (fragment, page):
        box = html[html.index('id="edit-violations"'):]
        assert MARKED in box[:box.index('id="justification-field"')]  # the findings (a fix's list nests in one)
    assert "(required: the guard found problems)" in fragment


def test_the_findings_a_lead_overrode_keep_their_sentence(login, users, escalation, grounding_guard):
    decisions.decide(escalation.pk, users.lead, "edit_approve", text=TEXT + " We apologise.", note="Ops confirmed.")

    html = login("lead").get(reverse("escalation", args=[escalation.pk])).content.decode()

    overrides = html[html.index('class="overrides"'):]
    assert MARKED in overrides[:overrides.index("</ul>")]



@pytest.mark.parametrize("reason", ["invalid_answer:unsupported_statement", "patch_violation:unsupported_statement",
                                    "invalid_answer:judge_unsupported", "invalid_answer:judge_unavailable"])
def test_a_statement_the_facts_do_not_support_goes_to_a_lead_with_its_explanation(reason):
    assert opens_escalation(reason) and explain(reason) not in ("", "Unknown stop reason.")

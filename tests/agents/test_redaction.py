"""Keys are redacted from everything stored or logged from a model.

A model that echoes the configured key (prompt-injected, or just odd) must not get it into a row,
a page or a log line: answers, raw outputs, errors, trace outputs, candidates, escalation texts.
"""

from __future__ import annotations

import base64
import io
import logging
import os
import re
from urllib.parse import quote

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.core.llm.breaker import reset_breakers
from agents.core.llm.endpoints import redact
from agents.models import ModelCall, PipelinePolicy, Run
from agents.tasks import run_now
from agents.testing.scripted_demo import APPROVE, DRAFT, ESCALATE, REVISE, REVISED
from agents.testing.scripted_server import Reply, completion, status, tool_call
from reviewer.models import Escalation
from tests.drills.conftest import start_scripted

pytestmark = pytest.mark.django_db

KEY = "sk-echoed-key-qfkazcwrbx"  # no digits: the facts checks would block an answer with new numbers
SPARE_KEY = "sk-spare-endpoint-key-hhel"


@pytest.fixture
def model_env(monkeypatch):
    for name in [k for k in os.environ if k.startswith(("OPENAI_", "LLM_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("OPENAI_MAX_RETRIES", "0")
    monkeypatch.setenv("OPENAI_TIMEOUT_SECONDS", "5")
    reset_breakers()
    yield monkeypatch
    reset_breakers()


def echoing_runs(fake, incident, *keys: str) -> list[Run]:
    """Runs whose model answers quote ``keys`` in every kind of text a run stores."""
    quoted = " ".join(keys)
    runs = [
        # An escalation: the draft (trace output, raw call, escalation draft/candidate), the review's
        # reason and issue note (review row, escalation reason, run's escalation_reason).
        start_scripted(fake, incident, "echo-escalate", [
            tool_call("submit_draft", {"draft": f"{DRAFT} Ref {quoted}."}),
            tool_call("reflect", {**ESCALATE, "reason": f"Leaks {quoted}",
                                  "issues": [{"type": "legal_risk", "note": f"key {quoted}"}]}),
        ]),
        # An approved draft: the answer.
        start_scripted(fake, incident, "echo-answer", [
            tool_call("submit_draft", {"draft": f"{DRAFT} Ref {quoted}."}),
            tool_call("reflect", {**APPROVE, "reason": f"Fine {quoted}"}),
        ]),
        # A revision that passes or is blocked: the answer, the audit diff, or the blocked candidate.
        start_scripted(fake, incident, "echo-revise", [
            tool_call("submit_draft", {"draft": DRAFT}),
            tool_call("reflect", {**REVISE, "reason": f"Fix {quoted}"}),
            tool_call("submit_revision", {"revised_answer": f"{REVISED} {quoted}"}),
        ]),
        # Not JSON: the raw answer lands in the stop's details.
        start_scripted(fake, incident, "echo-json", [tool_call("submit_draft", f"{{not json {quoted}")]),
        # A wrong tool whose name quotes the key: the error text.
        start_scripted(fake, incident, "echo-tool", [tool_call(f"tool_{quoted}", {"draft": DRAFT})]),
        # An HTTP error whose message quotes the key.
        start_scripted(fake, incident, "echo-error", [
            status(400, {"error": {"message": f"bad key {quoted}", "type": "invalid_request_error"}})]),
        # A refusal that quotes it.
        start_scripted(fake, incident, "echo-refusal", [Reply(body=completion(
            {"role": "assistant", "content": None, "refusal": f"I will not say {quoted}"}, "stop", (10, 5)))]),
    ]
    for run in runs:
        run_now(run.pk)
    return runs


def stored_text() -> str:
    """Every row of every table, as JSON."""
    out = io.StringIO()
    call_command("dumpdata", "reviewer", "agents", stdout=out)
    return out.getvalue()


def page_texts(client, runs: list[Run]) -> dict[str, str]:
    boss = get_user_model().objects.create_superuser("boss", "boss@example.com", "a-test-password")
    client.force_login(boss)
    urls = [reverse("home"), reverse("runs"), reverse("failed_runs"), reverse("inbox"), reverse("incidents"),
            reverse("incident", args=["inc_pay_2041"]),
            reverse("admin:agents_run_changelist"), reverse("admin:reviewer_escalation_changelist")]
    for run in runs:
        urls += [reverse("run", args=[run.pk]), reverse("run_trace", args=[run.pk]),
                 reverse("admin:agents_run_change", args=[run.pk])]
    for escalation in Escalation.objects.all():
        urls += [reverse("escalation", args=[escalation.pk]),
                 reverse("admin:reviewer_escalation_change", args=[escalation.pk])]
    pages = {}
    for url in urls:
        response = client.get(url, HTTP_HX_REQUEST="true") if url.endswith("/trace/") else client.get(url)
        assert response.status_code in (200, 286), url  # 286: htmx stops polling a finished run
        pages[url] = response.content.decode()
    return pages


def assert_nowhere(keys: list[str], client, runs: list[Run], log: str) -> None:
    rows = stored_text()
    pages = page_texts(client, runs)
    for key in keys:
        assert key not in rows, rows[max(rows.find(key) - 300, 0):rows.find(key) + 100]
        shown = [url for url, text in pages.items() if key in text]
        assert shown == [], f"the key is shown on {shown}"
        assert key not in log


def test_a_model_that_echoes_the_key_gets_it_into_no_row_page_or_log(model_env, demo_data, fake_openai, client,
                                                                      caplog):
    model_env.setenv("OPENAI_API_KEY", KEY)
    model_env.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    caplog.set_level(logging.DEBUG)

    runs = echoing_runs(fake_openai, demo_data["inc_pay_2041"], KEY)

    assert len(fake_openai.requests) == 11, "every scripted answer was asked for"
    assert Escalation.objects.filter(run=runs[0]).exists()
    assert "[redacted]" in Run.objects.get(pk=runs[0].pk).escalation_reason
    assert ModelCall.objects.filter(raw__contains="[redacted]").exists()
    assert_nowhere([KEY], client, runs, caplog.text)


def test_the_keys_of_every_declared_endpoint_are_redacted(model_env, demo_data, fake_openai, client, caplog):
    model_env.setenv("LLM_ENDPOINTS", f"main={fake_openai.base_url}|MAIN_KEY,spare=http://127.0.0.1:9/v1|SPARE_KEY")
    model_env.setenv("MAIN_KEY", KEY)
    model_env.setenv("SPARE_KEY", SPARE_KEY)
    PipelinePolicy.objects.filter(pipeline="reflection", active=True).update(endpoint="main")
    caplog.set_level(logging.DEBUG)

    runs = echoing_runs(fake_openai, demo_data["inc_pay_2041"], KEY, SPARE_KEY)

    assert Escalation.objects.filter(run=runs[0]).exists()
    assert_nowhere([KEY, SPARE_KEY], client, runs, caplog.text)


def spaced(key: str) -> str:
    return " ".join(key)


def test_a_model_that_echoes_the_key_in_capitals_or_spaced_out_gets_no_copy_stored(model_env, demo_data,
                                                                                    fake_openai, client, caplog):
    model_env.setenv("OPENAI_API_KEY", KEY)
    model_env.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    caplog.set_level(logging.DEBUG)
    copies = [KEY.upper(), spaced(KEY), "\n".join(KEY.upper().split("-"))]

    runs = echoing_runs(fake_openai, demo_data["inc_pay_2041"], *copies)

    assert "[redacted]" in Run.objects.get(pk=runs[0].pk).escalation_reason
    assert_nowhere(copies, client, runs, caplog.text)


@pytest.mark.parametrize(("text", "redacted"), [
    (f"key {KEY.upper()}.", "key [redacted]."),
    (f"key {KEY.title()}.", "key [redacted]."),
    (f"key {spaced(KEY)}.", "key [redacted]."),
    (f"key {spaced(KEY.upper())}.", "key [redacted]."),
    ("key " + KEY.replace("-", "").replace("k", "k\r\n", 1) + ".", "key [redacted]."),
    ("key " + " - ".join(KEY.split("-")) + " and " + KEY.replace("-", "_") + ".", "key [redacted] and [redacted]."),
    ("key sk-echoed-key-qfkazcwrb.", "key sk-echoed-key-qfkazcwrb."),  # one character short: not the key
    ("key s     k-e.-.c_h o\n\n\ne-d-key-qfkazcwrbx.", "key [redacted]."),  # four or more separators
    ("key " + quote(KEY, safe="") + ".", "key [redacted]."),
    ("key " + "".join(f"%{ord(c):02x}" for c in KEY) + ".", "key [redacted]."),  # every character encoded
    ("key=" + KEY.replace("-", "%2D").replace("echoed", "echo+ed") + "&", "key=[redacted]&"),
    ("key sk-echoed-kex-qfkazcwrbx.", "key sk-echoed-kex-qfkazcwrbx."),  # one character wrong: not the key
])
def test_case_and_spacing_variants_of_a_key_are_redacted(text, redacted):
    assert redact(text, [KEY]) == redacted


@pytest.mark.parametrize("before", ["", "B", "Be", "Bearer ", "user:"])
@pytest.mark.parametrize("encode", [base64.b64encode, base64.urlsafe_b64encode])
def test_a_key_copied_in_base64_is_redacted_whatever_stands_before_it(before, encode):
    copy = encode(f"{before}{KEY}.".encode()).decode()
    stored = redact(f"Authorization: Basic {copy}", [KEY])
    assert "[redacted]" in stored
    left = stored.split("Basic ", 1)[1].replace("[redacted]", "")
    assert len(left) <= len(before) * 4 // 3 + 8  # what is left holds a few of the key's bits at most


def test_a_key_with_characters_that_mean_something_in_a_pattern_is_redacted_as_written():
    key = "ab+c.d*e(f)[g]{2}|h\\i$^"
    assert redact(f"x {key} y {key.upper()} z", [key]) == "x [redacted] y [redacted] z"
    assert redact("x abbbc y", [key]) == "x abbbc y"


def test_a_text_or_key_with_a_lone_surrogate_is_redacted_all_the_same():
    """RE2 reads UTF-8, which has no lone surrogates: a model's JSON can still carry one."""
    assert redact(f"a \ud800 {KEY.upper()} \udfff b", [KEY]) == "a \ud800 [redacted] \udfff b"
    assert redact("x SK-KEY-ABCDEF y", ["sk-key-\udcff-abcdef"]) == "x [redacted] y"  # a byte no text can hold


def test_a_key_deep_in_a_record_is_redacted_and_a_record_without_one_is_kept_as_it_is():
    from agents.core.llm.base import CallRecord

    def record(raw):
        return CallRecord(stage="draft", attempt=1, try_number=1, model="m", latency_ms=1.0, outcome="ok", raw=raw,
                          messages=({"role": "user", "content": "Update"},))

    clean = {"steps": [{"output": "all good", "n": 3}], "call": record("fine"), ("a", "b"): None}
    assert redact(clean, [KEY]) is clean  # nothing to redact: no copy
    leaky = {"steps": [{"output": "all good", KEY.upper(): 3}], "call": record(f"the key is {KEY}")}
    stored = redact(leaky, [KEY])
    assert stored["steps"] == [{"output": "all good", "[redacted]": 3}]
    assert stored["call"].raw == "the key is [redacted]" and stored["call"].messages == leaky["call"].messages
    assert leaky["call"].raw == f"the key is {KEY}"  # the copy is redacted, not what was given


SEPARATORS = st.sampled_from([" ", "-", "_", ".", "\n", "\r\n", "\t", "\u200b", "\u00a0", " - "])


@st.composite
def key_and_copy(draw):
    """A key (letters and digits, with single dashes and underscores), and a copy of it: each of its
    letters and digits in either case, with up to one run of separators between any two."""
    key = draw(st.from_regex(r"[A-Za-z0-9]{4,12}(?:[-_][A-Za-z0-9]{4,12}){1,4}", fullmatch=True))
    copy = []
    for char in key:
        if char.isalnum():
            copy.append(char.swapcase() if draw(st.booleans()) else char)
            copy.append(draw(st.one_of(st.just(""), SEPARATORS)))
    return key, "".join(copy)


@given(pair=key_and_copy(), before=st.text(max_size=40), after=st.text(max_size=40))
@settings(max_examples=120, deadline=None)
def test_any_case_and_spacing_copy_of_a_key_is_redacted_wherever_it_stands(pair, before, after):
    key, copy = pair
    stored = redact(f"{before} {copy} {after}", [key])
    assert "[redacted]" in stored
    assert re.sub(r"[\W_]+", "", copy).lower() not in re.sub(r"[\W_]+", "", stored).lower()


@given(text=st.text(max_size=200))
@settings(max_examples=120, deadline=None)
def test_a_text_without_the_key_is_stored_as_it_came(text):
    if "qfkazcwrbx" not in re.sub(r"[\W_]+", "", text).lower():
        assert redact(text, [KEY]) == text


def test_redacting_a_large_text_that_almost_holds_the_key_everywhere_stays_linear():
    """The matching runs on RE2, whose time grows with the text, never by backtracking: a text of
    near misses (every gap at its longest, the last character wrong) is read in one pass."""
    near_miss = "   ".join("sk-echoed-key-qfkazcwrb") + "   z "
    text = near_miss * 2000
    assert redact(text, [KEY]) == text

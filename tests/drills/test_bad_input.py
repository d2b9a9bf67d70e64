"""Fault drill: bad input through every door a person or a script has.

Hypothesis makes the goals, tickets, incident facts, policy values and context files: huge strings,
control characters (NUL included), unicode oddities, markup, deeply nested JSON, bytes that are not
UTF-8. Whatever comes in, the outcome is a clear validation message (the form shown again with an
error) or a recorded run that ends with a documented stop reason; never a 500, never an exception
escaping, never a lost or extra row, and the odd text is escaped on every page that shows it.

Each example runs inside the test body (no pytest fixtures under ``@given``) and rolls its rows
back, so examples cannot see each other's data.
"""

from __future__ import annotations

import io
import json
import operator
import uuid
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlencode

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction
from django.http import QueryDict
from django.test import Client
from django.urls import reverse
from django.utils.html import escape
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.core.stops import explain
from agents.models import Incident, PipelinePolicy, RestrictedClaim, Run
from agents.tasks import run_now, start_run

pytestmark = pytest.mark.django_db

PAY = "inc_pay_2041"
TERMINAL = {Run.Status.OK, Run.Status.STOPPED}
UNKNOWN = "Unknown stop reason."
# Markup that must never reach a page unescaped.
PROBE = '<script>alert("drill")</script>'
DRILL = settings(max_examples=30, deadline=None, report_multiple_bugs=False,
                 suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# ---------------------------------------------------------------- strategies

ODDITIES = [
    "\x00", "\x1b[31m", "\x7f", "\x85", "\r\n", "\t", "\u202e", "\u200b", "\u200d", "\ufeff", "e\u0301",
    "\u2028", "\u2029", "\u00a0", "\U0001f600", "\U0001d54c\U0001d55f", "\u01c5", "\ufffd", "\uffff",
    "\u0130", "\u00df", "%s", "%(x)s", "{{ x }}", "{% now 'Y' %}", "' OR 1=1 --", "inc_pay_2041", "P0",
    "resolved", "EU", PROBE, "&amp;", "\\", '"', "</textarea>", "-->",
]


def has_control_characters(text: str) -> bool:
    """C0 and C1 controls other than tab, CR and LF: what the start-run form refuses."""
    return any((ord(c) < 32 and c not in "\t\r\n") or 0x7F <= ord(c) <= 0x9F for c in text)


# Characters a browser can send (no lone surrogates: they cannot be encoded as UTF-8). Most text is
# odd but allowed, so that plenty of submissions are accepted and run; the rest carries control
# characters or is far over the length limits.
allowed_piece = st.one_of(
    st.text(st.characters(exclude_categories=("Cs", "Cc")), max_size=20),
    st.sampled_from([odd for odd in ODDITIES if not has_control_characters(odd)]),
)
bad_piece = st.one_of(
    st.sampled_from(ODDITIES),
    st.text(st.characters(max_codepoint=0x9F), min_size=1, max_size=5),  # C0 and C1 controls
    st.builds(operator.mul, st.sampled_from(["a", "\u00e4 ", "\U0001f600", "<b>", "9 "]),
              st.integers(500, 30_000)),  # far over every length limit
)
allowed_text = st.lists(allowed_piece, min_size=1, max_size=5).map("".join)
any_text = st.lists(st.one_of(allowed_piece, bad_piece), max_size=5).map("".join)
odd_text = st.one_of(allowed_text, allowed_text, any_text)

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False),
    odd_text,
)
json_values = st.recursive(
    json_scalars,
    lambda children: (st.lists(children, max_size=4)
                      | st.dictionaries(st.text(max_size=12), children, max_size=4)),
    max_leaves=12,
)


def nested(depth: int) -> str:
    return "[" * depth + '"deep"' + "]" * depth


# JSON text as an admin types it: well-formed (any shape), deeply nested, escapes JSON allows but a
# database or a page may not, and text that is not JSON at all.
json_text = st.one_of(
    json_values.map(json.dumps),
    json_values.map(lambda value: json.dumps(value, ensure_ascii=False)),
    st.integers(1, 3000).map(nested),
    st.sampled_from(['["\\u0000"]', '["\\ud800"]', '{"a": "\\udfff"}', "NaN", "[Infinity]", "1e999", "5",
                     "true", '"just a string"', "[[[[]]]]", "{}", "[]", "null"]),
    odd_text,
)

# ---------------------------------------------------------------- helpers


@contextmanager
def rolled_back():
    """One example's rows, thrown away at the end (inside the test's own transaction)."""
    with transaction.atomic():
        yield
        transaction.set_rollback(True)


def client_for(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def html(response) -> str:
    return response.content.decode("utf-8")


def assert_never_raw(page: str) -> None:
    assert PROBE not in page, "markup from input reached the page unescaped"


def assert_ends_documented(run: Run) -> None:
    run.refresh_from_db()
    assert run.status in TERMINAL, (run.status, run.stop_reason)
    assert run.stop_reason and explain(run.stop_reason) != UNKNOWN, run.stop_reason


def assert_pages_show(client: Client, run: Run, *texts: str) -> None:
    """The run page and its incident page answer 200, show ``texts`` escaped and no raw markup."""
    run_page = client.get(reverse("run", args=[run.pk]))
    assert run_page.status_code == 200
    assert_never_raw(html(run_page))
    for text in texts:
        assert escape(text) in html(run_page)
    if run.incident_id:
        incident_page = client.get(reverse("incident", args=[run.incident.incident_id]))
        assert incident_page.status_code == 200
        assert_never_raw(html(incident_page))


def form_errors(response) -> dict:
    """The errors of the page's form, for a failure message (partials may not record their context)."""
    try:
        return response.context["form"].errors.get_json_data()
    except (KeyError, TypeError):
        return {}


def shows_an_error(page: str) -> bool:
    return 'class="error"' in page or 'class="errorlist' in page or "errornote" in page


@pytest.fixture
def offline(monkeypatch):
    """Runs use the embedded offline model whatever the machine's environment says."""
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "LLM_BACKEND"):
        monkeypatch.delenv(name, raising=False)


# ---------------------------------------------------------------- (a) the start-run form


def test_odd_goals_and_tickets_start_exactly_one_run_or_are_refused_with_a_message(demo_data, users, offline):
    ops = client_for(users.ops)
    start = reverse("start_run", args=[PAY])

    @DRILL
    @given(pipeline=st.sampled_from(["reflection", "self_critique", "routing"] * 3 + ["", "publish", "\x00"]),
           text=odd_text, htmx=st.booleans(),
           key=st.one_of(st.builds(lambda: str(uuid.uuid4())), st.just("")))
    def submit(pipeline, text, htmx, key):
        """What a browser sends: the field the page shows for the pipeline (the goal, or the ticket
        for routing) and the form's own idempotency key (or none)."""
        field = "ticket" if pipeline == "routing" else "goal"
        data = {"pipeline": pipeline, field: text, "idempotency_key": key}
        with rolled_back():
            before = Run.objects.count()
            extra = {"HTTP_HX_REQUEST": "true"} if htmx else {}
            response = ops.post(start, data, **extra)
            page = html(response)
            assert_never_raw(page)
            accepted = response.status_code == 302 or "HX-Redirect" in response.headers
            if not accepted:
                assert response.status_code == (200 if htmx else 400)
                assert shows_an_error(page), (
                    f"refused without a visible message; the form's errors: {form_errors(response)}")
                assert Run.objects.count() == before, "a refused submission stored a run"
                return
            assert Run.objects.count() == before + 1, "an accepted submission must store exactly one run"
            run = Run.objects.latest("id")
            assert (run.pipeline, run.status) == (pipeline, Run.Status.QUEUED)
            run_now(run.pk)
            assert_ends_documented(run)
            assert_pages_show(ops, run, run.goal)

    submit()


@pytest.mark.parametrize("pipeline, field, value", [
    ("reflection", "ticket", "Refund \x1b[31m please"),  # the field a text pipeline does not show
    ("self_critique", "ticket", "x" * 5000),
    ("routing", "goal", "Write \x00 the update"),  # the field routing does not show
    ("reflection", "idempotency_key", "not-a-uuid"),  # the hidden key, from a stale or edited page
], ids=["unshown-ticket-with-control-character", "unshown-ticket-too-long", "unshown-goal-with-nul",
        "edited-idempotency-key"])
def test_a_refused_submission_says_why_on_the_page(demo_data, users, pipeline, field, value):
    ops = client_for(users.ops)
    used = "ticket" if pipeline == "routing" else "goal"
    data = {"pipeline": pipeline, used: "Refund for user_id=42, charged twice.", field: value}

    response = ops.post(reverse("start_run", args=[PAY]), data)

    assert Run.objects.count() == (1 if response.status_code == 302 else 0)
    if response.status_code != 302:
        assert response.status_code == 400
        assert shows_an_error(html(response)), (
            f"refused without a visible message; the form's errors: {form_errors(response)}")


@pytest.mark.parametrize("body, content_type", [
    (b"pipeline=reflection&goal=%FF%FEbad%C3%28bytes&idempotency_key=", "application/x-www-form-urlencoded"),
    (b"pipeline=routing&ticket=Refund\xff\xfe user_id=42\xc3\x28&goal=", "application/x-www-form-urlencoded"),
    (b"pipeline=reflection&goal=%00%00", "application/x-www-form-urlencoded"),
    (b"\xff\xfe\x00\x00", "application/x-www-form-urlencoded"),
    (b"--XX\r\nContent-Disposition: form-data; name=\"pipeline\"\r\n\r\nself_critique\r\n"
     b"--XX\r\nContent-Disposition: form-data; name=\"goal\"\r\n\r\nWrite \xff\xfe the update\xc3\x28\r\n"
     b"--XX\r\nContent-Disposition: form-data; name=\"attachment\"; filename=\"ticket\xff.txt\"\r\n"
     b"Content-Type: application/octet-stream\r\n\r\n\x00\xff\xfe\x80binary\r\n--XX--\r\n",
     "multipart/form-data; boundary=XX"),
    (b"--XX\r\nContent-Disposition: form-data; name=\"goal\"\r\n\r\nunterminated",
     "multipart/form-data; boundary=XX"),
], ids=["percent-encoded-goal", "raw-bytes-ticket", "percent-encoded-nul", "utf16-body", "multipart-with-binary-file",
        "unterminated-multipart"])
def test_bytes_that_are_not_utf8_in_a_submission_start_one_run_or_get_a_message(demo_data, users, offline,
                                                                               body, content_type):
    ops = client_for(users.ops)

    response = ops.generic("POST", reverse("start_run", args=[PAY]), body, content_type=content_type)

    if response.status_code == 302:
        run = Run.objects.get()
        run_now(run.pk)
        assert_ends_documented(run)
        assert_pages_show(ops, run, run.goal)
    else:
        assert response.status_code == 400
        assert shows_an_error(html(response))
        assert Run.objects.count() == 0


# ---------------------------------------------------------------- (b) the admin

INCIDENT_TEXT_FIELDS = ("title", "severity", "status")
INCIDENT_JSON_FIELDS = ("regions", "policy_hints", "approved_actions", "key_messages")
# The demo payment incident's facts, by their row in the admin's inline (fact_rows-N-value).
INCIDENT_NUMBER_FIELDS = tuple(f"fact_rows-{i}-value" for i in range(4))
INCIDENT_FACT_FIELDS = ("position", "key", "label", "value", "unit", "visibility")


def incident_form(incident: Incident, **changes) -> dict:
    """What the Incident admin's change form sends for ``incident`` (its facts in the inline),
    with ``changes`` on top."""
    facts = incident.fact_list()
    data = {
        "incident_id": incident.incident_id, "title": incident.title,
        "report_date": incident.report_date.isoformat(),
        "severity": incident.severity, "state": incident.state, "status": incident.status,
        **{name: json.dumps(getattr(incident, name)) for name in INCIDENT_JSON_FIELDS},
        "fact_rows-TOTAL_FORMS": str(len(facts)), "fact_rows-INITIAL_FORMS": str(len(facts)),
        "fact_rows-MIN_NUM_FORMS": "0", "fact_rows-MAX_NUM_FORMS": "1000",
        **{f"fact_rows-{i}-{name}": str(getattr(fact, name)) for i, fact in enumerate(facts)
           for name in INCIDENT_FACT_FIELDS},
        **{f"fact_rows-{i}-id": str(fact.pk) for i, fact in enumerate(facts)},
        **{f"fact_rows-{i}-incident": str(incident.pk) for i, fact in enumerate(facts)},
        "_save": "Save",
    }
    return {**data, **changes}


def incident_row(pk: int) -> dict:
    incident = Incident.objects.get(pk=pk)
    return {**Incident.objects.filter(pk=pk).values().get(),
            "facts": [(f.key, f.label, f.value, f.unit) for f in incident.fact_list()]}


odd_number = st.one_of(st.sampled_from(["", "nan", "inf", "-1", "1e309", "\uff11\uff12", "0x10", "27%", "\x00",
                                        "99999999999999999999999"]),
                       st.floats().map(str), st.integers(-(2**64), 2**64).map(str), odd_text)


def save_incident_then_use_it(admin: Client, ops: Client, ops_user, incident: Incident, changes: dict,
                              pipeline: str = "reflection") -> None:
    """Post ``changes`` through the Incident admin. Refused: shown again with a message, the row
    unchanged. Saved: the admin, the incident page and a run on it all work with what was saved."""
    change = reverse("admin:agents_incident_change", args=[incident.pk])
    before, incidents, runs = incident_row(incident.pk), Incident.objects.count(), Run.objects.count()
    response = admin.post(change, incident_form(incident, **changes))
    assert response.status_code in (200, 302), response.status_code
    assert Incident.objects.count() == incidents, "an admin change must not add or lose incidents"
    if response.status_code == 200:  # refused
        assert shows_an_error(html(response))
        assert_never_raw(html(response))
        assert incident_row(incident.pk) == before
        return
    saved = Incident.objects.get(pk=incident.pk)
    assert admin.get(change).status_code == 200, "the admin cannot show what it saved"
    page = ops.get(reverse("incident", args=[saved.incident_id]))
    assert page.status_code == 200
    assert_never_raw(html(page))
    assert escape(saved.title) in html(page)
    run, created = start_run(pipeline=pipeline, goal="Write the customer update.", incident=saved, user=ops_user,
                             enqueue=False)
    assert created and Run.objects.count() == runs + 1
    run_now(run.pk)
    assert_ends_documented(run)
    assert_pages_show(ops, run)


def test_odd_incident_facts_in_admin_are_saved_and_run_or_refused_with_a_message(demo_data, users, offline):
    admin, ops = client_for(users.admin), client_for(users.ops)

    @DRILL
    @given(text=st.dictionaries(st.sampled_from(INCIDENT_TEXT_FIELDS), odd_text, max_size=4),
           numbers=st.dictionaries(st.sampled_from(INCIDENT_NUMBER_FIELDS), odd_number, max_size=2),
           jsons=st.dictionaries(st.sampled_from(INCIDENT_JSON_FIELDS), json_text, max_size=3),
           pipeline=st.sampled_from(["reflection", "self_critique"]))
    def save(text, numbers, jsons, pipeline):
        with rolled_back():
            changes = {**text, **numbers, **jsons}
            save_incident_then_use_it(admin, ops, users.ops, demo_data[PAY], changes, pipeline)

    save()


@pytest.mark.parametrize("field, typed", [
    ("key_messages", ""),  # the admin clears the box
    ("policy_hints", "null"),
    ("key_messages", "5"),  # valid JSON, but not a list of sentences
    ("approved_actions", "true"),
    ("key_messages", '["we \\ud800 apologise"]'),  # a lone surrogate: no page can encode it as UTF-8
    ("approved_actions", '["monitor \\u0000 payments"]'),  # NUL: PostgreSQL's jsonb refuses it
    ("policy_hints", '{"max_length_increase_pct": NaN}'),  # not JSON by RFC 8259: databases refuse it
    ("key_messages", "[1e999]"),  # infinity, spelled as a number
    ("approved_actions", nested(950)),  # parses, but cannot be written back
    ("policy_hints", nested(3000)),  # does not even parse
], ids=["cleared", "null", "number", "boolean", "lone-surrogate", "nul", "nan", "overflowing-number",
        "nested-950", "nested-3000"])
def test_the_incident_admin_saves_json_only_when_pages_and_runs_can_use_it(demo_data, users, offline, field,
                                                                            typed):
    save_incident_then_use_it(client_for(users.admin), client_for(users.ops), users.ops, demo_data[PAY],
                              {field: typed})


def test_incident_facts_over_the_context_limit_are_refused_in_admin_with_the_limit(demo_data, users):
    from agents.core.inputs import CONTEXT_MAX_BYTES

    incident = demo_data[PAY]
    before = incident_row(incident.pk)
    hints = {f"hint_{i}": "x" * 400 for i in range(CONTEXT_MAX_BYTES // 400)}  # each value within its bound

    response = client_for(users.admin).post(reverse("admin:agents_incident_change", args=[incident.pk]),
                                            incident_form(incident, policy_hints=json.dumps(hints)))

    assert response.status_code == 200 and incident_row(incident.pk) == before
    assert "an incident context holds at most 65,536 bytes (64 KB)." in html(response)


POLICY_BUDGETS = ("max_seconds", "max_draft_chars", "max_answer_chars", "min_patch_similarity",
                  "max_review_issues", "max_fix_items", "max_tokens", "max_cost", "timeout_seconds", "max_retries")


def policy_form(policy: PipelinePolicy, **changes) -> dict:
    """What the policy admin's change form sends for ``policy`` (no stage prompts), ``changes`` on top."""
    data = {
        "name": policy.name, "active": "on" if policy.active else "",
        "auto_revision": "on" if policy.auto_revision else "",
        "decisions_policy": list(policy.decisions_policy), "decisions_execution": list(policy.decisions_execution),
        "model_name": policy.model_name, "endpoint": policy.endpoint, "structured_output": policy.structured_output,
        "timeout_seconds": str(policy.timeout_seconds), "max_retries": str(policy.max_retries),
        "input_cost_per_1k": str(policy.input_cost_per_1k), "output_cost_per_1k": str(policy.output_cost_per_1k),
        "max_tokens": "" if policy.max_tokens is None else str(policy.max_tokens),
        "max_cost": "" if policy.max_cost is None else str(policy.max_cost),
        "stage_prompts-TOTAL_FORMS": "0", "stage_prompts-INITIAL_FORMS": "0",
        "stage_prompts-MIN_NUM_FORMS": "0", "stage_prompts-MAX_NUM_FORMS": "1000", "_save": "Save",
    }
    for name in ("max_seconds", "max_draft_chars", "max_answer_chars", "min_patch_similarity",
                 "max_review_issues", "max_fix_items"):
        value = getattr(policy, name)
        data[name] = "" if value is None else str(value)
    return {key: value for key, value in {**data, **changes}.items() if value != ""}


def policy_row(pk: int) -> dict:
    return PipelinePolicy.objects.filter(pk=pk).values().get()


def change_policy_then_run(admin: Client, ops: Client, ops_user, incident: Incident, changes: dict,
                           pattern: str | None) -> None:
    """Post budget changes to the active reflection policy and add a restricted claim ``pattern``
    through admin. Each is refused with a message (nothing stored) or saved (exactly one row); the
    next run executes under whatever was saved and ends with a documented stop."""
    policy = PipelinePolicy.objects.get(pipeline="reflection", active=True)
    before, policies, claims, runs = (policy_row(policy.pk), PipelinePolicy.objects.count(),
                                      RestrictedClaim.objects.count(), Run.objects.count())
    if changes:
        response = admin.post(reverse("admin:agents_pipelinepolicy_change", args=[policy.pk]),
                              policy_form(policy, **changes))
        assert response.status_code in (200, 302), response.status_code
        assert_never_raw(html(response))
        if response.status_code == 200:
            assert shows_an_error(html(response))
            assert policy_row(policy.pk) == before
    assert PipelinePolicy.objects.count() == policies
    if pattern is not None:
        claim = admin.post(reverse("admin:agents_restrictedclaim_add"),
                           {"pattern": pattern, "enabled": "on", "note": "drill", "_save": "Save"})
        assert claim.status_code in (200, 302), claim.status_code
        assert_never_raw(html(claim))
        stored = claims + (claim.status_code == 302)
        assert RestrictedClaim.objects.count() == stored, "a claim was lost or stored twice"
        if claim.status_code == 200:
            assert shows_an_error(html(claim))
    run, _ = start_run(pipeline="reflection", goal="Write the customer update.", incident=incident, user=ops_user,
                       enqueue=False)
    assert Run.objects.count() == runs + 1
    run_now(run.pk)
    assert_ends_documented(run)
    assert_pages_show(ops, run)


ODD_PATTERNS = [r"\bfixed(", r"a{4294967296}", r"(?i)x(?i)", "(" * 240 + "x" + ")" * 240, r"\U0001f600", "[",
                r"\bno longer (impacted|affected)\b", r"\N{FOO}", "(?<=a+)b", ".*", "resolved|"]


def test_odd_policy_values_in_admin_are_saved_and_run_or_refused_with_a_message(demo_data, users, offline):
    admin, ops = client_for(users.admin), client_for(users.ops)

    @DRILL
    @given(budgets=st.dictionaries(st.sampled_from(POLICY_BUDGETS), odd_number, max_size=3),
           model_name=st.one_of(st.none(), odd_text),
           pattern=st.one_of(st.none(), odd_text, st.sampled_from(ODD_PATTERNS)))
    def save(budgets, model_name, pattern):
        changes = dict(budgets) if model_name is None else {**budgets, "model_name": model_name}
        with rolled_back():
            change_policy_then_run(admin, ops, users.ops, demo_data[PAY], changes, pattern)

    save()


@pytest.mark.parametrize("pattern", [
    r"a{4294967296}",  # compiles to OverflowError, not re.error
    r"\bfixed(",
    r"\bno longer (impacted|affected)\b",
    "(" * 240 + "resolved" + ")" * 240,
], ids=["repetition-too-large", "unbalanced", "valid", "nested-groups"])
def test_a_restricted_claim_pattern_is_saved_and_used_or_refused_with_a_message(demo_data, users, offline,
                                                                                 pattern):
    change_policy_then_run(client_for(users.admin), client_for(users.ops), users.ops, demo_data[PAY], {}, pattern)


# ---------------------------------------------------------------- (c) run_pipeline


def run_command(*args) -> tuple[str, str]:
    """``manage.py run_pipeline`` in-process, with a stdout that encodes like a real one (UTF-8, strict)."""
    raw_out, raw_err = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(raw_out, encoding="utf-8", errors="strict", write_through=True)
    err = io.TextIOWrapper(raw_err, encoding="utf-8", errors="strict", write_through=True)
    call_command("run_pipeline", *args, stdout=out, stderr=err)
    return raw_out.getvalue().decode("utf-8"), raw_err.getvalue().decode("utf-8")


context_bytes = st.one_of(
    json_values.map(lambda value: json.dumps(value).encode()),
    st.dictionaries(st.sampled_from(["incident", "region", "key_messages", "policy_hints", "approved_actions",
                                     "report_date"]), json_values, max_size=5).map(lambda d: json.dumps(d).encode()),
    st.integers(1, 3000).map(lambda depth: ('{"incident": ' + nested(depth) + "}").encode()),
    st.sampled_from([b'{"region": "\\ud800"}', b'{"incident": {"status": "\\u0000"}}', b"\xef\xbb\xbf{}",
                     b'{"key_messages": [NaN, Infinity]}', b"", b"\xff\xfe{\x00}", b'{"a": 1e999}']),
    st.binary(max_size=200),
)


def test_run_pipeline_prints_a_result_or_says_what_is_wrong_for_any_context_file(tmp_path, offline):
    path = Path(tmp_path) / "context.json"

    @DRILL
    @given(pipeline=st.sampled_from(["reflection", "self_critique", "routing"]), content=context_bytes,
           goal=odd_text)
    def run(pipeline, content, goal):
        path.write_bytes(content)
        try:
            out, _ = run_command(pipeline, "--goal", goal, "--context", str(path))
        except CommandError as error:
            assert str(error).strip(), "a usage error must say what is wrong"
            return
        result = json.loads(out)
        assert result["status"] in ("ok", "stopped")
        assert explain(result["stop_reason"]) != UNKNOWN, result["stop_reason"]

    run()


def test_run_pipeline_on_a_stored_incident_records_one_run_for_any_goal(demo_data, offline):
    @DRILL
    @given(pipeline=st.sampled_from(["reflection", "self_critique", "routing"]), goal=odd_text)
    def run(pipeline, goal):
        with rolled_back():
            before = Run.objects.count()
            try:
                out, _ = run_command(pipeline, "--goal", goal, "--incident", PAY)
            except CommandError as error:
                assert str(error).strip()
                assert Run.objects.count() == before, "a refused command stored a run"
                return
            result = json.loads(out)
            assert Run.objects.count() == before + 1
            run = Run.objects.get(pk=result["stored_run"])
            assert_ends_documented(run)
            assert run.stop_reason == result["stop_reason"]

    run()


@pytest.mark.parametrize("content", [
    b'{"region": "\\ud800", "incident": {"status": "degraded"}}',  # a lone surrogate the draft repeats
    b'{"incident": {"status": "degraded \\u0000 still"}}',
    b'{"incident": {"status": "degraded"}, "key_messages": [NaN, Infinity]}',
    b"\xef\xbb\xbf" + json.dumps({"incident": {"status": "degraded"}}).encode(),  # a byte order mark
    b'{"incident": ' + nested(900).encode() + b"}",
    b'{"incident": ' + nested(3000).encode() + b"}",
    b"\xff\xfe{\x00}",
], ids=["lone-surrogate", "nul", "nan", "byte-order-mark", "nested-900", "nested-3000", "utf16-bytes"])
@pytest.mark.parametrize("pipeline", ["reflection", "self_critique"])
def test_run_pipeline_prints_a_result_or_a_usage_error_for_these_context_files(tmp_path, offline, pipeline,
                                                                               content):
    path = Path(tmp_path) / "context.json"
    path.write_bytes(content)
    try:
        out, _ = run_command(pipeline, "--goal", "Write the customer update.", "--context", str(path))
    except CommandError as error:
        assert str(error).strip()
        return
    result = json.loads(out)
    assert explain(result["stop_reason"]) != UNKNOWN, result["stop_reason"]


@pytest.mark.parametrize("goal", [
    "Write \x00 the update", "Refund \x1b[31m user_id=42", "\u202eetadpu eht etirW", "x" * 100_000, PROBE,
], ids=["nul", "escape-sequence", "right-to-left-override", "huge", "markup"])
@pytest.mark.parametrize("pipeline", ["reflection", "routing"])
def test_run_pipeline_on_a_stored_incident_records_one_run_or_a_usage_error_for_these_goals(
        demo_data, users, offline, pipeline, goal):
    try:
        out, _ = run_command(pipeline, "--goal", goal, "--incident", PAY)
    except CommandError as error:
        assert str(error).strip() and Run.objects.count() == 0
        return
    run = Run.objects.get(pk=json.loads(out)["stored_run"])
    assert_ends_documented(run)
    assert_pages_show(client_for(users.ops), run, run.goal)


# ---------------------------------------------------------------- (d) query strings on every page


def crawl_urls(url_args) -> list[str]:
    """Every page the root URLconf includes (POST-only actions included: a GET must still not crash them)."""
    from tests.reviewer.test_access import product_urls, resolve

    return [resolve(name, params, url_args) for name, params in product_urls()]


@pytest.fixture
def url_args(demo_runs):
    run = Run.objects.filter(status="stopped").first()
    from reviewer.models import Escalation

    return {"pk": {"run": run.pk, "run_trace": run.pk, "run_retry": run.pk}, "incident_id": PAY,
            "escalation_pk": Escalation.objects.first().pk, "language": "fr"}


# The parameters the pages read, and some they do not (the admin's, made up ones).
PARAMETERS = ["stop_reason", "status", "pipeline", "since", "page", "mine", "diff", "view", "q", "o", "e", "id"]
query_value = st.one_of(
    odd_text,
    st.text(st.characters(exclude_categories=("Cs",)), max_size=30),  # any Unicode but lone surrogates
    st.integers(-(2**70), 2**70).map(str),
    st.builds(operator.mul, st.sampled_from(["resolved", "\u00e4", "\U0001f600", "9"]), st.integers(150, 3000)),
)
query_pairs = st.lists(st.tuples(st.one_of(st.sampled_from(PARAMETERS), st.text(max_size=8)), query_value),
                       max_size=4)
# Raw query strings as a hand-edited address may carry them: broken percent escapes, bytes that are
# not UTF-8, NUL, no '=' at all.
raw_query = st.one_of(
    query_pairs.map(lambda pairs: urlencode(pairs)),
    st.sampled_from(["stop_reason=a%00b", "%zz=%zz", "status=%ff%fe", "page=%C3%28", "=&&=&", "stop_reason",
                     "%", "mine=%E2%82", "pipeline=reflection%00", "page=" + "9" * 400, "stop_reason=" + "x" * 5000]),
    st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters="#"), max_size=40),
)


def carries_control_characters(query: str) -> bool:
    return any(has_control_characters(key) or has_control_characters(value)
               for key, value in QueryDict(query).items())


@pytest.mark.parametrize("role", ["lead", "ops"])
def test_no_page_answers_5xx_to_any_query_string(url_args, users, role):
    """Runs in both passes of the test command: on PostgreSQL, a NUL in a filter used to be a 500."""
    client = client_for(getattr(users, role))
    urls = crawl_urls(url_args)

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(url=st.sampled_from(urls), query=raw_query,
           htmx=st.one_of(st.none(), st.sampled_from(["run-list", "run-form", "inbox-list", "elsewhere"])))
    def crawl(url, query, htmx):
        extra = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": htmx} if htmx else {}
        response = client.get(f"{url}?{query}", **extra)
        assert response.status_code < 500, (url, query, response.status_code)
        assert_never_raw(html(response))
        if carries_control_characters(query):
            assert response.status_code == 400, (url, query, response.status_code)
            assert "control character" in html(response)

    crawl()


@pytest.mark.parametrize("query", ["stop_reason=a%00b", "pipeline=%00", "mine=1%1b", "page=%7f", "a%00=1"])
def test_a_control_character_in_a_filter_is_a_400_that_says_so(users, query):
    response = client_for(users.lead).get(f"/inbox/?{query}")

    assert response.status_code == 400
    assert "The address has a control character (U+" in html(response) and "Remove it and try again." in html(response)


def test_an_inbox_filter_longer_than_its_column_is_ignored_with_a_message(users):
    response = client_for(users.lead).get("/inbox/", {"stop_reason": "x" * 201, "pipeline": "publish"})

    assert response.status_code == 200
    assert "Some filters were ignored:" in html(response)
    assert "Stop reason: Ensure this value has at most 200 characters (it has 201)." in html(response)
    assert "Pipeline: Select a valid choice. publish is not one of the available choices." in html(response)


def test_every_admin_list_refuses_a_control_character_in_its_filters(users):
    from django.contrib import admin

    client = client_for(users.admin)
    for model in admin.site._registry:
        url = reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        for query in ("q=a%00b", "stop_reason=a%00b", f"{model._meta.pk.name}=%00", "o=%01"):
            response = client.get(f"{url}?{query}")
            assert response.status_code == 400, (url, query, response.status_code)
        for query in ("q=" + "x" * 5000, "stop_reason=" + "x" * 5000, "p=" + "9" * 300):
            assert client.get(f"{url}?{query}").status_code < 500, (url, query)


@pytest.mark.parametrize("data, message", [
    ({"action": "reject", "note": "no\x00pe"}, "The reason contains a control character (U+0000)"),
    ({"action": "edit_approve", "text": "We are looking into it\x00.", "note": "ok"},
     "The edited text contains a control character (U+0000)"),
    ({"action": "edit_approve", "text": "We are looking into it.", "note": "fine\x1b[31m"},
     "The justification contains a control character (U+001B)"),
], ids=["nul-in-reason", "nul-in-edit", "escape-in-justification"])
def test_a_decision_with_a_control_character_is_refused_with_a_message_and_nothing_decided(demo_runs, users, data,
                                                                                           message):
    from reviewer.models import Decision, Escalation

    escalation = Escalation.objects.filter(status="pending").first()

    response = client_for(users.lead).post(reverse("escalation_decide", args=[escalation.pk]), data)

    assert response.status_code == 422
    assert message in html(response)
    escalation.refresh_from_db()
    assert escalation.status == "pending" and not Decision.objects.filter(escalation=escalation).exists()

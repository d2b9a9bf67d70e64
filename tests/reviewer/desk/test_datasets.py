"""Decisions as datasets (reviewer/desk/datasets.py): each JSONL line has the fields its target
format documents (the schema checks below are written from those formats' public docs); internal
facts and API keys never leave; every export, from any door, is recorded in the ledger."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from agents.models import IncidentFact
from reviewer.desk import datasets, decisions
from reviewer.ledger.chain import sha256
from reviewer.models import ApiToken, LedgerEntry
from reviewer.outbox.publishing import publish
from tests.factories import make_escalation, make_incident

KEY = "sk-test-0123456789abcdefghijklmnop"
HOST = "db-7.internal.acme.net"
DRAFT = "We are investigating a problem in the EU. Current status: degraded."
EDITED = "We are investigating a payment problem in the EU. Current status: degraded."

# -- the formats, as their documentation describes them ------------------------------------------------

ROLES = {"system", "developer", "user", "assistant", "tool"}


def check_messages(messages, *, last: str) -> None:
    assert isinstance(messages, list) and messages
    for message in messages:
        assert set(message) == {"role", "content"} and message["role"] in ROLES
        assert isinstance(message["content"], str) and message["content"]
    assert messages[-1]["role"] == last


def check_chat(line: dict) -> None:
    """OpenAI chat fine-tuning: an object with ``messages``; the assistant's turn is what is learnt."""
    assert set(line) <= {"messages", "tools", "parallel_tool_calls"} and "messages" in line
    check_messages(line["messages"], last="assistant")


def check_preference(line: dict) -> None:
    """OpenAI preference fine-tuning: ``input.messages`` (one turn, ending with the user), and one
    assistant message each in ``preferred_output`` and ``non_preferred_output``."""
    assert set(line) == {"input", "preferred_output", "non_preferred_output"}
    assert set(line["input"]) <= {"messages", "tools", "parallel_tool_calls"}
    check_messages(line["input"]["messages"], last="user")
    for side in ("preferred_output", "non_preferred_output"):
        assert len(line[side]) == 1
        check_messages(line[side], last="assistant")
    assert line["preferred_output"] != line["non_preferred_output"]


def check_evals(line: dict) -> None:
    """OpenAI evals samples: ``input`` in chat format (or a string) and, for the basic Match,
    Includes and FuzzyMatch templates, ``ideal``: a string or a list of strings. Other keys may ride along."""
    assert "input" in line and "ideal" in line
    if not isinstance(line["input"], str):
        check_messages(line["input"], last="user")
    ideal = line["ideal"]
    assert isinstance(ideal, str) or (isinstance(ideal, list) and all(isinstance(i, str) for i in ideal))


def check_guard(line: dict) -> None:
    """The guard regression case, as docs/datasets.md lists its fields."""
    assert set(line) == {"candidate", "context", "goal", "pipeline", "stop_reason", "decision", "final_text",
                         "note", "findings", "decision_findings"}
    assert line["decision"] in ("approve", "edit_approve", "reject") and isinstance(line["context"], dict)
    for finding in line["findings"] + line["decision_findings"]:
        assert set(finding) == {"check", "found", "message"}


CHECKS = {"chat": check_chat, "preference": check_preference, "evals": check_evals, "guard": check_guard}


def parse(body: str) -> list[dict]:
    assert body == "" or body.endswith("\n")
    return [json.loads(line) for line in body.splitlines()]


# -- three decisions: approved and published, edited, rejected ------------------------------------------


@pytest.fixture
def decided(users, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    incident = make_incident(facts=[("db_host", "Database host", HOST, "text")])
    IncidentFact.objects.filter(key="db_host").update(visibility="internal")
    incident.refresh_from_db()
    goal = f"Write the customer update (key {KEY})."
    approved = make_escalation(incident=incident, goal=goal)
    edited = make_escalation(incident=incident, goal=goal)
    rejected = make_escalation(incident=incident, goal=goal, pipeline="self_critique",
                               text=f"Database {HOST} failed over; we are investigating in the EU.")
    decisions.decide(approved.pk, users.lead, "approve")
    decisions.decide(edited.pk, users.lead, "edit_approve", text=EDITED, note="Name the payments.")
    decisions.decide(rejected.pk, users.lead, "reject", note=f"Names {HOST}; never say hosts. {KEY}")
    approved.refresh_from_db()
    publish(incident, approved.final_text, actor=users.ops, escalation=approved)
    return incident


@pytest.mark.parametrize("dataset", datasets.FORMATS)
def test_every_line_has_its_formats_fields_and_nothing_internal(users, decided, dataset):
    body = datasets.export(users.lead, dataset)
    found = parse(body)
    assert found, "each format has a line in this scenario"
    for line in found:
        CHECKS[dataset](line)
    assert KEY not in body and HOST not in body
    assert "[redacted]" in body  # the key in the run's goal


def test_each_format_takes_the_decisions_it_is_made_of(users, decided):
    chat, = parse(datasets.export(users.lead, "chat"))
    assert chat["messages"][-1]["content"] == DRAFT  # the published text
    assert "Write the customer update" in chat["messages"][1]["content"]
    assert '"status": "degraded"' in chat["messages"][1]["content"] and "db_host" not in chat["messages"][1]["content"]
    pair, = parse(datasets.export(users.lead, "preference"))
    assert pair["preferred_output"][0]["content"] == EDITED and pair["non_preferred_output"][0]["content"] == DRAFT
    sample, = parse(datasets.export(users.lead, "evals"))
    assert sample["ideal"] == "reject" and sample["reason"].startswith("Names [internal]; never say hosts.")
    assert "Database [internal] failed over" in sample["input"][-1]["content"]
    cases = parse(datasets.export(users.lead, "guard"))
    assert [c["decision"] for c in cases] == ["approve", "edit_approve", "reject"]
    assert "internal" not in cases[0]["context"]


def test_the_filters_narrow_the_export(users, decided):
    assert len(parse(datasets.export(users.lead, "guard", datasets.Filters(decision="reject")))) == 1
    assert len(parse(datasets.export(users.lead, "guard", datasets.Filters(pipeline="self_critique")))) == 1
    assert parse(datasets.export(users.lead, "guard", datasets.Filters(incident="inc_other"))) == []
    today = LedgerEntry.objects.first().created_at.date()
    assert len(parse(datasets.export(users.lead, "guard", datasets.Filters(since=today, until=today)))) == 3
    with pytest.raises(datasets.ExportInvalid, match="“approved” is not a decision; one of: approve"):
        datasets.Filters(decision="approved")


def test_each_export_is_recorded_in_the_ledger_with_who_what_and_how_many(users, decided):
    body = datasets.export(users.lead, "evals", datasets.Filters(decision="reject"), door="api")
    entry = LedgerEntry.objects.filter(kind="export").get()
    data = json.loads(entry.content)["data"]
    assert data == {"user": "lead", "format": "evals", "count": 1, "body_sha256": sha256(body),
                    "filters": {"decision": "reject", "door": "api"}}


def test_ops_cannot_export(users, decided):
    from django.core.exceptions import PermissionDenied

    with pytest.raises(PermissionDenied, match="Only support leads and policy admins can export decisions"):
        datasets.export(users.ops, "chat")
    assert not LedgerEntry.objects.filter(kind="export").exists()


# -- the doors: command, API, admin ---------------------------------------------------------------------


def test_the_command_writes_the_dataset_and_records_the_user(users, decided):
    out = io.StringIO()
    call_command("export_decisions", "--format", "preference", "--user", "lead", stdout=out)
    for line in parse(out.getvalue()):
        check_preference(line)
    assert json.loads(LedgerEntry.objects.get(kind="export").content)["data"]["user"] == "lead"
    with pytest.raises(CommandError, match="is not a pipeline"):
        call_command("export_decisions", "--format", "chat", "--pipeline", "nope")
    with pytest.raises(CommandError, match="is not a date"):
        call_command("export_decisions", "--format", "chat", "--since", "yesterday")


def test_the_api_answers_jsonl_with_the_same_filters(client, users, decided):
    _, token = ApiToken.issue(users.lead, "datasets")
    response = client.get("/api/datasets/evals", {"decision": "reject"}, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200 and response["Content-Type"].startswith("application/jsonl")
    (line,) = parse(response.content.decode())
    check_evals(line)
    bad = client.get("/api/datasets/evals", {"pipeline": "nope"}, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert bad.status_code == 422 and "is not a pipeline" in bad.json()["message"]
    _, ops_token = ApiToken.issue(users.ops, "datasets")
    refused = client.get("/api/datasets/chat", HTTP_AUTHORIZATION=f"Bearer {ops_token}")
    assert refused.status_code == 403


def test_the_admin_action_exports_the_selected_decisions(client, users, decided):
    from reviewer.models import Decision

    client.force_login(users.admin)
    chosen = list(Decision.objects.filter(action="reject").values_list("pk", flat=True))
    response = client.post("/admin/reviewer/decision/", {"action": "export_guard", "_selected_action": chosen})
    assert response.status_code == 200 and "attachment" in response["Content-Disposition"]
    (line,) = parse(response.content.decode())
    assert line["decision"] == "reject"
    data = json.loads(LedgerEntry.objects.get(kind="export").content)["data"]
    assert (data["user"], data["filters"]) == ("admin", {"decisions": chosen, "door": "admin"})


# -- what never leaves, in any field of any format ---------------------------------------------------------

TICKET, ON_CALL = "OPS-4411", "Marta Kowalski"
EMAIL, PHONE = "jane.doe@customer-mail.com", "+44 20 7946 0958"
HOOK_SECRET = "whk-5f2c9a7e1b3d4c6a8e0f"


@pytest.fixture
def leaky(users, monkeypatch):
    """Three decisions whose findings quote an internal host, ticket and on-call name, and whose texts
    hold a customer's email and phone, a webhook's signing secret and an API token."""
    from agents.models import Run
    from reviewer.models import Decision, Escalation, PublishedUpdate

    monkeypatch.setenv("OUTBOUND_DESTINATIONS", "status-hook=https://hooks.example.com/x|HOOK_SECRET")
    monkeypatch.setenv("HOOK_SECRET", HOOK_SECRET)
    _, token = ApiToken.issue(users.lead, "ci")
    incident = make_incident(facts=[("db_host", "Database host", HOST, "text"),
                                    ("on_call", "On call", ON_CALL, "text"),
                                    ("ticket", "Ticket", TICKET, "text")])
    IncidentFact.objects.filter(key__in=["db_host", "on_call", "ticket"]).update(visibility="internal")
    incident.refresh_from_db()
    findings = {"violations": [
        {"check": "internal_detail", "found": HOST, "message": f"“{HOST}” is an internal host name."},
        {"check": "internal_detail", "found": TICKET, "message": f"“{TICKET}” is an internal ticket id."},
        {"check": "internal_detail", "found": "Kowalski",
         "message": f"“Kowalski” is the name of a person in the internal facts (“on call”: {ON_CALL})."},
        {"check": "unknown_contact", "found": EMAIL, "message": f"“{EMAIL}” and {PHONE} are not declared."},
    ]}
    leak = f"Write to {EMAIL} or call {PHONE}; hook secret {HOOK_SECRET}; token {token}."
    escalations = [make_escalation(incident=incident, pipeline=pipeline) for pipeline in
                   ("reflection", "reflection", "self_critique")]
    decisions.decide(escalations[0].pk, users.lead, "approve")
    decisions.decide(escalations[1].pk, users.lead, "edit_approve", text=EDITED, note="Name the payments.")
    decisions.decide(escalations[2].pk, users.lead, "reject", note="No.")
    escalations[0].refresh_from_db()
    publish(incident, escalations[0].final_text, actor=users.ops, escalation=escalations[0])
    ids = [e.pk for e in escalations]
    Run.objects.filter(escalation__in=ids).update(goal=f"Write the update. {leak}")
    Escalation.objects.filter(pk__in=ids).update(candidate=f"{DRAFT} {leak}", guard=findings)
    Decision.objects.filter(escalation__in=ids).update(note=f"Because {leak}", guard_results=findings)
    Decision.objects.filter(action="edit_approve").update(final_text=f"{EDITED} {leak}")
    PublishedUpdate.objects.filter(escalation=escalations[0]).update(text=f"{DRAFT} {leak}")
    return token


@pytest.mark.parametrize("dataset", datasets.FORMATS)
def test_no_format_carries_internal_facts_contact_details_or_secrets_anywhere(users, leaky, dataset):
    body = datasets.export(users.lead, dataset)
    assert parse(body), "each format has a line in this scenario"
    for secret in (HOST, TICKET, "Kowalski", "Marta", EMAIL, PHONE, "7946", HOOK_SECRET, leaky, leaky[3:]):
        assert secret not in body, f"{secret!r} left in the {dataset} export"
    assert "[email]" in body and "[phone]" in body and "[redacted]" in body


def test_the_guard_cases_keep_the_shape_of_their_findings(users, leaky):
    case = parse(datasets.export(users.lead, "guard", datasets.Filters(decision="reject")))[0]
    for findings in (case["findings"], case["decision_findings"]):
        assert [f["found"] for f in findings] == ["[internal]", "[internal]", "[internal]", "[email]"]
        assert findings[0]["message"] == "“[internal]” is an internal host name."
        assert findings[3]["message"] == "“[email]” and [phone] are not declared."

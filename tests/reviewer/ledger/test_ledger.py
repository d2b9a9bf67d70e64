"""The ledger (reviewer/ledger/): every decision, publication, policy change and deadline breach
appends an entry in its own transaction; verify_ledger finds any row changed, deleted, inserted or
reordered behind its back and names the first bad one; pruning keeps a checkpoint."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
import time_machine
from django.core.management import CommandError, call_command
from django.db import connection, transaction
from django.utils import timezone

from agents.models import PipelinePolicy, PolicyChange, Run
from reviewer.alerts import deadlines
from reviewer.desk import decisions
from reviewer.ledger import chain
from reviewer.models import (
    DeadlineBreach,
    Decision,
    Escalation,
    LedgerEntry,
    LedgerHead,
    LedgerVerification,
    PublishedUpdate,
)
from reviewer.outbox.publishing import publish
from tests.agents.conftest import post_add
from tests.factories import WebhookReceiver, make_escalation, make_incident, make_run

ROOT = Path(__file__).parents[3]
TEXT = "We are investigating a problem in the EU. Current status: degraded."


def data_of(entry: LedgerEntry) -> dict:
    return json.loads(entry.content)["data"]


def append_some(n: int) -> list[LedgerEntry]:
    return [chain.append(LedgerEntry.Kind.EXPORT, f"export:test-{i}", {"i": i, "ratio": 0.1 * i}) for i in range(n)]


@pytest.fixture
def broken_ledger(monkeypatch):
    """Appending fails, as a database error in the middle of the transaction would."""
    def refuse(*args, **kwargs):
        raise RuntimeError("the ledger's table went away")

    monkeypatch.setattr(LedgerEntry.objects, "bulk_create", refuse)


# -- each event appends, in its own transaction --------------------------------------------------------


def test_a_decision_appends_an_entry_naming_it(users):
    escalation = make_escalation(incident=make_incident())
    outcome = decisions.decide(escalation.pk, users.lead, "reject", note="Not this one.")
    entry = LedgerEntry.objects.get()
    assert (entry.seq, entry.kind, entry.subject) == (1, "decision", f"decision:{outcome.decision.pk}")
    data = data_of(entry)
    assert (data["action"], data["actor"], data["escalation"]) == ("reject", "lead", escalation.pk)
    assert data["note_sha256"] == chain.sha256("Not this one.")


def test_a_request_for_changes_appends_a_decision_entry(users):
    escalation = make_escalation(incident=make_incident())
    change = decisions.request_changes(escalation.pk, users.lead, "Say when it started.", enqueue=False)
    assert data_of(LedgerEntry.objects.get(subject=f"decision:{change.decision_id}"))["action"] == "request_changes"


def test_a_decision_whose_entry_cannot_be_appended_is_not_recorded(users, broken_ledger):
    escalation = make_escalation(incident=make_incident())
    with pytest.raises(RuntimeError):
        decisions.decide(escalation.pk, users.lead, "reject", note="Not this one.")
    escalation.refresh_from_db()
    assert escalation.status == Escalation.Status.PENDING and not Decision.objects.exists()


def test_a_publication_appends_an_entry_and_commits_with_it_or_not_at_all(users, monkeypatch):
    incident = make_incident()
    run = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=TEXT)
    update = publish(incident, TEXT, actor=users.ops, source_run=run)
    entry = LedgerEntry.objects.get(kind="publication")
    assert entry.subject == f"publication:{update.pk}"
    assert data_of(entry)["text_sha256"] == chain.sha256(TEXT) and data_of(entry)["published_by"] == "ops"

    other = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=TEXT + " More soon.")
    monkeypatch.setattr(LedgerEntry.objects, "bulk_create", lambda *args, **kwargs: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        publish(incident, other.answer, actor=users.ops, source_run=other)
    assert list(PublishedUpdate.objects.values_list("pk", flat=True)) == [update.pk]


def test_a_policy_change_appends_an_entry_in_its_transaction(users, broken_ledger, monkeypatch):
    policy = PipelinePolicy.objects.filter(pipeline="reflection").first()
    with pytest.raises(RuntimeError), transaction.atomic():
        PolicyChange.record(users.admin, policy, PolicyChange.CHANGED, before={"max_attempts": 2},
                            after={"max_attempts": 3}, policy=policy)
    assert not PolicyChange.objects.exists()

    monkeypatch.undo()
    with transaction.atomic():
        change = PolicyChange.record(users.admin, policy, PolicyChange.CHANGED, before={"temperature": 0.2},
                                     after={"temperature": 0.7}, policy=policy)
    data = data_of(LedgerEntry.objects.get(kind="policy_change"))
    assert (data["change"], data["user"], data["action"]) == (change.pk, "admin", "changed")
    assert data["after"] == {"temperature": "0.7"}  # a float is written as a string: the bytes never drift


def test_a_policy_change_made_in_admin_is_in_the_ledger(client, users):
    client.force_login(users.admin)
    response = post_add(client, "regiontoken", token="MENA", enabled="on")
    assert response.status_code == 302
    change = PolicyChange.objects.get(model_label="agents.regiontoken")
    entry = LedgerEntry.objects.get(kind="policy_change")
    assert entry.subject == f"policy_change:{change.pk}" and data_of(entry)["after"]["token"] == "mena"


def test_a_deadline_breach_appends_an_entry_once(db):
    escalation = make_escalation(incident=make_incident(), deadline_at=timezone.now() - timedelta(minutes=1))
    now = timezone.now()
    [breach] = deadlines.record_breaches([escalation.pk], now)
    assert deadlines.record_breaches([escalation.pk], now) == []  # a second sweep finds it recorded
    entry = LedgerEntry.objects.get()
    assert (entry.kind, entry.subject, data_of(entry)["escalation"]) == ("breach", f"breach:{breach.pk}", escalation.pk)


def test_a_breach_whose_entry_cannot_be_appended_is_not_recorded(db, broken_ledger):
    escalation = make_escalation(incident=make_incident(), deadline_at=timezone.now() - timedelta(minutes=1))
    with pytest.raises(RuntimeError), transaction.atomic():
        deadlines.record_breaches([escalation.pk], timezone.now())
    assert not DeadlineBreach.objects.exists()


# -- the chain --------------------------------------------------------------------------------------


def test_entries_chain_each_to_the_one_before(db):
    first, second = append_some(2)
    assert first.prev_hash == "" and second.prev_hash == first.hash
    assert second.hash == chain.digest(first.hash, second.content)
    document = json.loads(second.content)
    assert second.content == json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert (document["seq"], document["kind"], document["data"]) == (2, "export", {"i": 1, "ratio": "0.1"})
    assert LedgerHead.objects.get().hash == second.hash


def test_verify_ledger_says_how_many_entries_and_the_head_hash(db, capsys):
    *_, last = append_some(3)
    call_command("verify_ledger")
    assert capsys.readouterr().out.strip() == f"The ledger holds: 3 entries, head hash {last.hash}"


def tamper(sql: str, params=()) -> None:
    """Change the ledger's table by hand, as someone with the database's password would; on
    PostgreSQL they would first have to switch its trigger off (they may be its owner)."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("ALTER TABLE reviewer_ledgerentry DISABLE TRIGGER USER")
        cursor.execute(sql, params)
        if connection.vendor == "postgresql":
            cursor.execute("ALTER TABLE reviewer_ledgerentry ENABLE TRIGGER USER")


def broken_at() -> str:
    with pytest.raises(CommandError) as error:
        call_command("verify_ledger")
    return str(error.value)


def test_an_edited_entry_is_named(db):
    append_some(5)
    tamper("UPDATE reviewer_ledgerentry SET content = REPLACE(content, '\"i\":2', '\"i\":7') WHERE seq = 3")
    assert broken_at().startswith("The ledger is broken at entry 3: entry 3: its content does not match its hash")


def test_an_entry_whose_columns_were_edited_is_named(db):
    append_some(3)
    tamper("UPDATE reviewer_ledgerentry SET kind = 'decision' WHERE seq = 2")
    assert "broken at entry 2: entry 2: its columns do not match its content" in broken_at()


def test_an_entry_edited_with_its_hash_recomputed_breaks_the_next_link(db):
    entries = append_some(4)
    content = entries[1].content.replace('"i":1', '"i":9')
    tamper("UPDATE reviewer_ledgerentry SET content = %s, hash = %s WHERE seq = 2",
           [content, chain.digest(entries[1].prev_hash, content)])
    assert "broken at entry 3: entry 3: does not chain to the entry before it" in broken_at()


def test_a_deleted_entry_is_named(db):
    append_some(5)
    tamper("DELETE FROM reviewer_ledgerentry WHERE seq = 2")
    assert "broken at entry 2: entry 2: missing or out of place (entry 3 stands where it should be)" in broken_at()


def test_a_deleted_last_entry_is_named(db):
    append_some(3)
    tamper("DELETE FROM reviewer_ledgerentry WHERE seq = 3")
    assert "broken at entry 3: entry 3: missing (the head says the last entry is 3)" in broken_at()


def test_an_entry_inserted_at_the_end_with_a_valid_hash_is_named(db):
    *_, last = append_some(3)
    at = timezone.now()
    content = chain._document(4, "export", "export:forged", at, {"forged": True})
    tamper("INSERT INTO reviewer_ledgerentry (seq, kind, subject, created_at, content, prev_hash, hash) "
           "VALUES (%s, %s, %s, %s, %s, %s, %s)",
           [4, "export", "export:forged", at, content, last.hash, chain.digest(last.hash, content)])
    assert "broken at entry 4: entry 4: added after the head (entry 3)" in broken_at()


def test_reordered_entries_are_named(db):
    append_some(4)
    tamper("UPDATE reviewer_ledgerentry SET seq = seq + 100 WHERE seq IN (2, 3)")
    tamper("UPDATE reviewer_ledgerentry SET seq = 5 - (seq - 100) WHERE seq IN (102, 103)")
    assert "broken at entry 2: entry 2: does not chain to the entry before it" in broken_at()


def test_a_ledger_emptied_with_its_head_is_named_even_once_written_anew(db):
    append_some(3)
    assert chain.verify_and_record().ok
    tamper("DELETE FROM reviewer_ledgerentry")  # what TRUNCATE of both tables leaves
    tamper("DELETE FROM reviewer_ledgerhead")
    assert "entry 1: the ledger was emptied or rewritten" in broken_at()
    append_some(2)  # a new chain from entry 1, valid in itself
    verdict = chain.verify()
    assert not verdict.ok and "counted 3 entries up to the head" in verdict.message


def test_a_ledger_that_only_grew_since_the_last_verification_verifies(db, settings):
    append_some(2)
    assert chain.verify_and_record().ok
    append_some(2)
    assert chain.verify().ok
    settings.LEDGER_RETENTION_DAYS = 183
    with time_machine.travel(timezone.now() + timedelta(days=200), tick=False):
        append_some(1)
        assert chain.prune() == 4  # the head the verification found is pruned away, and says so
        assert chain.verify().ok


def test_the_scheduled_verification_stores_its_result(db):
    from reviewer.ledger.tasks import verify_ledger

    append_some(2)
    assert verify_ledger() is True
    tamper("DELETE FROM reviewer_ledgerentry WHERE seq = 1")
    assert verify_ledger() is False
    result = chain.last_verification()
    assert (result.ok, result.broken_seq) == (False, 1)


# -- retention --------------------------------------------------------------------------------------


def test_pruning_keeps_a_checkpoint_so_the_rest_still_verifies(db, settings):
    settings.LEDGER_RETENTION_DAYS = 183
    start = timezone.now()
    with time_machine.travel(start - timedelta(days=200), tick=False):
        old = append_some(3)
    kept = append_some(2)
    with time_machine.travel(start, tick=False):
        assert chain.prune() == 3
    assert list(LedgerEntry.objects.values_list("seq", flat=True)) == [4, 5]
    head = LedgerHead.objects.get()
    assert (head.checkpoint_seq, head.checkpoint_hash) == (3, old[-1].hash)
    assert chain.verify() == chain.Verdict(True, 2, kept[-1].hash)
    assert chain.append("export", "export:after", {}).prev_hash == kept[-1].hash


def test_a_broken_ledger_is_not_pruned(db, settings):
    settings.LEDGER_RETENTION_DAYS = 183
    with time_machine.travel(timezone.now() - timedelta(days=200), tick=False):
        append_some(3)
    tamper("UPDATE reviewer_ledgerentry SET subject = 'export:other' WHERE seq = 2")
    assert chain.prune() == 0 and LedgerEntry.objects.count() == 3


def test_a_retention_shorter_than_six_months_refuses_to_start():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "reviewer.test_settings", "LEDGER_RETENTION_DAYS": "90"}
    out = subprocess.run([sys.executable, "-c", "import django; django.setup()"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    assert ("ImproperlyConfigured: LEDGER_RETENTION_DAYS is 90: the ledger is kept at least 183 days"
            in out.stderr)


# -- PostgreSQL: the database refuses, and appends never fork ----------------------------------------


def test_postgresql_refuses_to_update_or_delete_a_ledger_row(postgres):
    from django.db import DatabaseError

    append_some(2)
    for sql in ("UPDATE reviewer_ledgerentry SET subject = 'x' WHERE seq = 1",
                "DELETE FROM reviewer_ledgerentry WHERE seq = 2"):
        with pytest.raises(DatabaseError, match="Cannot update or delete rows"), transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute(sql)
    assert list(LedgerEntry.objects.values_list("seq", "subject")) == [(1, "export:test-0"), (2, "export:test-1")]
    call_command("verify_ledger")


def test_postgresql_refuses_to_truncate_the_ledger(postgres):
    from django.db import DatabaseError

    append_some(2)
    for table in ("reviewer_ledgerentry", "reviewer_ledgerhead"):
        with pytest.raises(DatabaseError, match=f"the ledger's table {table} cannot be truncated"), \
                transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL reviewer.flushing_tests = 'off'")  # as in any database but the tests'
            cursor.execute(f"TRUNCATE {table} CASCADE")
    assert LedgerEntry.objects.count() == 2 and LedgerHead.objects.get().seq == 2
    call_command("verify_ledger")


def test_postgresql_prunes_only_inside_the_prune(postgres, settings):
    settings.LEDGER_RETENTION_DAYS = 183
    with time_machine.travel(timezone.now() - timedelta(days=200), tick=False):
        append_some(2)
    append_some(1)
    assert chain.prune() == 2
    call_command("verify_ledger")


def test_concurrent_appends_never_fork_the_chain(postgres):
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connections

    append_some(1)

    def appender(worker: int) -> None:
        try:
            for i in range(10):
                with transaction.atomic():
                    chain.append("export", f"export:w{worker}-{i}", {"worker": worker, "i": i})
        finally:
            connections.close_all()

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(appender, range(8)))
    assert list(LedgerEntry.objects.values_list("seq", flat=True)) == list(range(1, 82))
    assert chain.verify().ok and chain.verify().count == 81


# -- the dashboard's badge --------------------------------------------------------------------------


def test_admins_see_the_last_verification_on_the_dashboard_and_leads_do_not(login):
    client = login("admin")
    assert "Ledger not verified yet" in client.get("/").content.decode()
    append_some(2)
    chain.verify_and_record()
    page = client.get("/").content.decode()
    assert "Ledger verified</span>" in page and "(2 entries)" in page
    tamper("UPDATE reviewer_ledgerentry SET subject = 'export:other' WHERE seq = 2")
    chain.verify_and_record()
    assert "Ledger broken at entry 2" in client.get("/").content.decode()
    assert 'id="dashboard-ledger"' not in login("lead").get("/").content.decode()


# -- anchoring --------------------------------------------------------------------------------------


@pytest.fixture
def receiver(monkeypatch):
    hook = WebhookReceiver(secret="anchor-secret-for-tests")
    monkeypatch.setenv("OUTBOUND_DESTINATIONS", f"anchor={hook.url}|ANCHOR_SECRET")
    monkeypatch.setenv("ANCHOR_SECRET", "anchor-secret-for-tests")
    yield hook
    hook.stop()


def test_the_head_hash_is_sent_signed_to_the_anchor_destination(db, settings, receiver):
    from reviewer.outbox.tasks import anchor_ledger

    *_, last = append_some(3)
    settings.LEDGER_ANCHOR_DESTINATION = "anchor"
    assert anchor_ledger() == "sent"
    (body,) = receiver.accepted.values()
    assert body["ledger_head"] == {"seq": 3, "hash": last.hash}
    assert receiver.bad_signatures == 0


def test_without_an_anchor_destination_nothing_is_sent(db, settings, receiver):
    from reviewer.outbox.tasks import anchor_ledger

    append_some(1)
    settings.LEDGER_ANCHOR_DESTINATION = ""
    assert anchor_ledger() == "not configured"
    assert receiver.requests == {}


def test_a_receiver_that_refuses_the_head_makes_the_task_retry(db, settings, monkeypatch, caplog):
    from celery.exceptions import Retry

    from reviewer.outbox.tasks import anchor_ledger

    hook = WebhookReceiver(secret=None, fail_rate=1.0)
    try:
        monkeypatch.setenv("OUTBOUND_DESTINATIONS", f"anchor={hook.url}")
        settings.LEDGER_ANCHOR_DESTINATION = "anchor"
        append_some(1)
        with pytest.raises(Retry):
            anchor_ledger()
    finally:
        hook.stop()
    assert "the ledger's head was not anchored: anchor (127.0.0.1): HTTP 500" in caplog.text


def test_an_anchor_destination_that_is_not_declared_refuses_to_start():
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "reviewer.test_settings", "LEDGER_ANCHOR_DESTINATION": "vault",
           "OUTBOUND_DESTINATIONS": "hook=https://hooks.example/x"}
    out = subprocess.run([sys.executable, "-c", "import django; django.setup()"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    assert "the destination 'vault' is not declared in OUTBOUND_DESTINATIONS (declared: hook)" in out.stderr


def test_verify_now_runs_the_scheduled_verification_and_the_badge_shows_it(login):
    client = login("admin")
    append_some(3)
    assert 'action="/ledger/verify/"' in client.get("/").content.decode()  # beside "not verified yet"
    answer = client.post("/ledger/verify/")
    assert answer.status_code == 302 and answer["Location"] == "/#dashboard-ledger"
    page = client.get("/").content.decode()
    assert "Ledger verified</span>" in page and "(3 entries)" in page
    tamper("UPDATE reviewer_ledgerentry SET subject = 'export:other' WHERE seq = 3")
    client.post("/ledger/verify/")
    assert "Ledger broken at entry 3" in client.get("/").content.decode()


def test_only_those_who_see_the_ledger_may_verify_it_and_only_by_post(login, client):
    for name in ("lead", "ops"):
        assert login(name).post("/ledger/verify/").status_code == 403
        assert 'action="/ledger/verify/"' not in client.get("/").content.decode()
    assert login("admin").get("/ledger/verify/").status_code == 405
    assert not LedgerVerification.objects.exists()


def test_verify_now_needs_the_csrf_token(users):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    strict.force_login(users.admin)
    assert strict.post("/ledger/verify/").status_code == 403
    assert not LedgerVerification.objects.exists()


def test_beat_verifies_the_ledger_as_it_starts(db):
    # The first verification comes when beat starts, not an hour later (CELERY_BEAT_SCHEDULE's period).
    from celery import signals

    from reviewer.celery import app

    append_some(2)
    eager = app.conf.task_always_eager
    app.conf.task_always_eager = True
    try:
        signals.beat_init.send(sender=None)
    finally:
        app.conf.task_always_eager = eager
    verification = chain.last_verification()
    assert verification is not None and verification.ok and verification.count == 2

"""Escalation notifications: apprise to a declared destination, here a real HTTP receiver on loopback
(``json://``), when an escalation opens and when its deadline nears and passes (a clock the test
controls); failures recorded and retried, never crashing the worker or losing the escalation."""

import json
import logging
import threading
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import pytest
import time_machine
from django.db import transaction

from agents.models import Run
from reviewer.alerts import deadlines, notifications
from reviewer.alerts.tasks import send_notification
from reviewer.desk import decisions
from reviewer.desk.forms import NotificationChannelForm
from reviewer.models import DeadlineRule, Escalation, Notification, NotificationChannel
from tests import factories

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
XSS = "<script>alert(1)</script>"


class Receiver:
    """A JSON endpoint on 127.0.0.1 that keeps every body it gets and answers ``status`` (with
    ``Location: redirect_to`` when one is set, as a receiver that moved, or one that lures senders on)."""

    def __init__(self, status: int = 200, redirect_to: str = ""):
        self.status, self.redirect_to, self.bodies, self.lock = status, redirect_to, [], threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver.lock:
                    receiver.bodies.append(json.loads(body) if body else {"method": self.command})
                self.send_response(receiver.status)
                if receiver.redirect_to:
                    self.send_header("Location", receiver.redirect_to)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")  # what Slack answers, and apprise's Slack plugin checks

            do_GET = do_PUT = do_POST

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/notify"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def titles(self) -> list[str]:
        with self.lock:
            return [body["title"] for body in self.bodies]

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver(monkeypatch):
    """A receiver declared as the destination ``team-hook`` (OUTBOUND_DESTINATIONS), and the channels
    of both groups on it."""
    started = Receiver()
    monkeypatch.setenv("OUTBOUND_DESTINATIONS", f"team-hook={started.url}")
    yield started
    started.stop()


@pytest.fixture
def channels(db):
    return SimpleNamespace(
        leads=NotificationChannel.objects.create(name="leads", destination="team-hook", group="leads",
                                                 events=["opened", "reminder"]),
        second=NotificationChannel.objects.create(name="duty managers", destination="team-hook", group="second",
                                                  events=["breach"]),
    )


@pytest.fixture
def p1(db):
    DeadlineRule.objects.create(severity="P1", minutes=10, reminder_minutes=3)
    return factories.make_incident("inc_pay_p1", severity="P1", title=f"Payments {XSS}")


def open_escalation(incident) -> Escalation:
    """Open an escalation the way a finished run does: in the run's transaction, told after commit."""
    with transaction.atomic():
        run = factories.make_run("reflection", incident=incident, snapshot=True, status=Run.Status.STOPPED,
                                 stop_reason="policy_escalation")
        result = SimpleNamespace(stop_reason="policy_escalation", escalation_reason=f"Unverified ETA {XSS}",
                                 candidate="", guard=None)
        decisions.open_escalation(None, run=run, result=result, draft="We are investigating.")
    return Escalation.objects.get(run=run)


def test_the_message_names_incident_pipeline_reason_deadline_and_an_absolute_link(p1, channels, settings):
    settings.SITE_URL = "https://review.example.com/"
    with time_machine.travel(T0, tick=False):
        escalation = factories.make_escalation(incident=p1, reason="Unverified ETA.")
        Escalation.objects.filter(pk=escalation.pk).update(**deadlines.deadline_fields(escalation.run, T0))
        escalation.refresh_from_db()
    title, body = notifications.message(escalation, "opened", channels.leads)
    assert title == f"Escalation #{escalation.pk} waits for a decision"
    assert "Incident: inc_pay_p1 (P1)" in body and "Pipeline: Reflection" in body
    assert "Reason: policy_escalation: Unverified ETA." in body
    assert "Deadline: at 2026-03-02 09:10 UTC" in body
    assert f"https://review.example.com/escalations/{escalation.pk}/" in body


@pytest.mark.worker
def test_a_real_worker_notifies_on_open_reminder_and_breach_and_the_breach_decides_nothing(
        p1, channels, receiver, start_worker):
    start_worker(OUTBOUND_DESTINATIONS=f"team-hook={receiver.url}", SITE_URL="http://review.test")
    with time_machine.travel(T0, tick=False):
        escalation = open_escalation(p1)
    opened = factories.wait_for(lambda: receiver.titles(), message="the opened notification")
    assert opened == [f"Escalation #{escalation.pk} waits for a decision"]
    body = receiver.bodies[0]["message"]
    assert f"Payments {XSS}" in body and "Pipeline: Reflection" in body  # plain text, as sent
    assert f"http://review.test/escalations/{escalation.pk}/" in body

    with time_machine.travel(T0 + timedelta(minutes=7), tick=False):
        assert deadlines.sweep()["reminder"] == 1
    factories.wait_for(lambda: len(receiver.titles()) == 2, message="the reminder")
    with time_machine.travel(T0 + timedelta(minutes=10), tick=False):
        assert deadlines.sweep()["breach"] == 1
        assert deadlines.sweep()["breach"] == 0  # at most once
    factories.wait_for(lambda: len(receiver.titles()) == 3, message="the breach notice")

    assert receiver.titles()[1].startswith(f"Reminder: escalation #{escalation.pk} is due at 2026-03-02 09:10")
    assert receiver.titles()[2] == f"Deadline breached: escalation #{escalation.pk} was not decided in time"
    assert "Nothing was approved" in receiver.bodies[2]["message"]
    # The worker records "sent" just after the receiver answered: wait for the rows, not only the bodies.
    factories.wait_for(lambda: Notification.objects.filter(status="sent").count() == 3, message="the rows sent")
    sent = {(n.event, n.channel.name) for n in Notification.objects.filter(status="sent").select_related("channel")}
    assert sent == {("opened", "leads"), ("reminder", "leads"), ("breach", "duty managers")}
    escalation.refresh_from_db()
    assert escalation.status == Escalation.Status.PENDING and escalation.decided_by is None


def test_a_failing_receiver_is_retried_then_recorded_as_failed_and_the_escalation_stays(p1, channels, receiver):
    receiver.status = 500
    escalation = factories.make_escalation(incident=p1)
    [pk] = notifications.enqueue(escalation.pk, "breach")

    send_notification.apply(args=[pk])  # eager: each retry runs at once, without its countdown

    row = Notification.objects.get(pk=pk)
    assert row.status == Notification.Status.FAILED
    assert row.attempts == 5 and len(receiver.bodies) == 5
    assert "team-hook (127.0.0.1)" in row.last_error
    assert receiver.url not in row.last_error
    assert Escalation.objects.filter(pk=escalation.pk, status="pending").exists()


# The last: a declared URL that asks apprise itself to follow redirects is overruled.
@pytest.mark.parametrize(("status", "query"), [(301, ""), (302, ""), (303, ""), (307, ""), (308, ""),
                                               (302, "?redirect=yes")])
def test_a_redirect_is_not_followed_and_the_notification_fails_at_once_saying_so(p1, channels, monkeypatch,
                                                                                 status, query):
    elsewhere = Receiver()  # a host the operator never declared
    declared = Receiver(status=status, redirect_to=elsewhere.url)
    monkeypatch.setenv("OUTBOUND_DESTINATIONS", f"team-hook={declared.url}{query}")
    try:
        escalation = factories.make_escalation(incident=p1)
        [pk] = notifications.enqueue(escalation.pk, "breach")
        assert send_notification.apply(args=[pk]).get() == "failed"
    finally:
        declared.stop()
        elsewhere.stop()
    assert len(declared.bodies) == 1 and elsewhere.bodies == []
    row = Notification.objects.get(pk=pk)
    assert row.status == Notification.Status.FAILED and row.attempts == 1  # a redirect is not retried
    assert row.last_error == (f"team-hook (127.0.0.1): the destination answered HTTP {status} (a redirect); "
                              "redirects are not followed: declare the address it points to instead")
    assert elsewhere.url not in row.last_error


def test_every_apprise_plugin_passes_its_redirect_setting_to_each_request():
    """Redirects are refused through apprise's own setting, which each plugin hands to ``requests``
    (``allow_redirects=self.redirects``): a plugin that calls ``requests`` without it would follow
    them, so an apprise upgrade that adds one fails here."""
    import ast
    from pathlib import Path

    import apprise.plugins

    unguarded = []
    for path in Path(apprise.plugins.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in {"get", "post", "put", "patch", "delete", "head", "request"}
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "requests"
                    and not any(k.arg == "allow_redirects" for k in node.keywords)):
                unguarded.append(f"{path.name}:{node.lineno}")
    assert unguarded == []


# Every way a text pings people on the services apprise sends to: Discord's and Mattermost's mass
# mentions, Discord's user and role mentions, Slack's mention markup.
MENTIONS = ("@everyone", "@here", "@channel", "@all", "<@123456>", "<@!123456>", "<@&654321>", "<!channel>",
            "<!here>", "<!subteam^S01>", "<@U024BE7LH>", "<#C024BE7LH>")
ZWSP = "\u200b"
DISCORD = "https://discord.com/api/webhooks/417429632418316298/JHZ7lQml277CDHmQKMHI8qBe7bk2ZwO5UKjCiOAF7711o33My"
SLACK = "https://hooks.slack.com/services/T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ"


@pytest.mark.parametrize("service", ["json", "discord", "slack"])
def test_mentions_in_titles_and_reasons_reach_each_service_unable_to_ping_anyone(p1, channels, receiver,
                                                                                 monkeypatch, service):
    """The real plugin's wire body, captured on loopback: Discord's and Slack's plugins post to their
    service's host, pointed here at the receiver; any other address gets apprise's JSON."""
    from apprise.plugins.discord import NotifyDiscord
    from apprise.plugins.slack import NotifySlack

    base = receiver.url.removesuffix("/notify")
    monkeypatch.setattr(NotifyDiscord, "notify_url", f"{base}/api/webhooks")
    monkeypatch.setattr(NotifySlack, "webhook_url", f"{base}/services")
    url = {"json": receiver.url, "discord": DISCORD, "slack": SLACK}[service]
    monkeypatch.setenv("OUTBOUND_DESTINATIONS", f"team-hook={url}")
    p1.title = "Payments " + " ".join(MENTIONS)
    p1.save()
    escalation = factories.make_escalation(incident=p1, reason="Ask " + " ".join(MENTIONS))
    [pk] = notifications.enqueue(escalation.pk, "breach")
    assert send_notification.apply(args=[pk]).get() == "sent"
    [body] = receiver.bodies
    wire = json.dumps(body, ensure_ascii=False)
    assert f"Payments @{ZWSP}everyone" in wire and f"Ask @{ZWSP}everyone" in wire  # shown, as written
    assert [mention for mention in MENTIONS if mention in wire] == []


def test_mentions_are_neutralised_for_teams_and_mattermost_too():
    """Teams (Power Automate workflows) only posts to https and Mattermost is sent apprise's JSON, so the
    function is read on its own here: every mention form, and text without one left as it is."""
    text = "Ask @channel, @all and @here; <@U1> <!channel> <at>Lena</at>; ops@example.com; 3 < 4 & 5 > 2"
    assert notifications.neutralise_mentions(text) == (
        f"Ask @{ZWSP}channel, @{ZWSP}all and @{ZWSP}here; <{ZWSP}@{ZWSP}U1> <{ZWSP}!channel> <at>Lena</at>; "
        f"ops@{ZWSP}example.com; 3 < 4 & 5 > 2")
    for mention in MENTIONS:
        assert mention not in notifications.neutralise_mentions(f"x {mention} y")
    assert notifications.neutralise_mentions("No mention: 50% of EU payments @ 10:00.") == (
        "No mention: 50% of EU payments @ 10:00.")


def test_a_sent_notification_is_not_sent_again(p1, channels, receiver):
    escalation = factories.make_escalation(incident=p1)
    [pk] = notifications.enqueue(escalation.pk, "opened")
    assert send_notification.apply(args=[pk]).get() == "sent"
    assert send_notification.apply(args=[pk]).get() == "skipped"
    assert notifications.enqueue(escalation.pk, "opened") == []  # one per escalation, event and channel
    assert len(receiver.bodies) == 1


def test_a_notification_delivered_to_a_plain_webhook_logs_no_error(p1, channels, receiver, caplog):
    escalation = factories.make_escalation(incident=p1)
    [pk] = notifications.enqueue(escalation.pk, "opened")
    with caplog.at_level(logging.DEBUG):
        assert send_notification.apply(args=[pk]).get() == "sent"
    assert len(receiver.bodies) == 1
    # Telling a plain http(s) address from a service's own address asks no parser that fails loudly.
    assert [(r.name, r.getMessage()) for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_a_breach_notice_taken_by_a_killed_worker_arrives_within_a_minute(p1, channels, receiver, monkeypatch):
    """The recovery time with the shipped settings: the sweep (beat, every SWEEP_SECONDS) sends again a
    notice whose first attempt has not ended FIRST_ATTEMPT_LOST_SECONDS after it was made."""
    from reviewer import settings as shipped
    from reviewer.alerts import tasks

    sent = []
    monkeypatch.setattr(send_notification, "delay", sent.append)
    escalation = factories.make_escalation(incident=p1)
    with time_machine.travel(T0, tick=False) as clock:
        [lost] = notifications.enqueue(escalation.pk, "breach")
        [backing_off] = notifications.enqueue(factories.make_escalation(incident=p1).pk, "breach")
        # A worker takes the first attempt (as send_notification does first) and is killed mid-send.
        Notification.objects.filter(pk=lost).update(attempts=1)
        Notification.objects.filter(pk=backing_off).update(attempts=1, last_error="HTTP 503")  # a retry is due
        sent.clear()
        while not sent:  # beat's sweeps
            clock.shift(timedelta(seconds=shipped.SWEEP_SECONDS))
            tasks.resend_pending()
        resent_after = (datetime.now(UTC) - T0).total_seconds()
        assert sent == [lost]  # the one in backoff waits for its own retry
        assert send_notification.apply(args=[lost]).get() == "sent"
        clock.shift(timedelta(seconds=shipped.SWEEP_SECONDS))
        assert tasks.resend_pending() == 0  # sent once
    assert tasks.FIRST_ATTEMPT_LOST_SECONDS <= resent_after <= tasks.FIRST_ATTEMPT_LOST_SECONDS + shipped.SWEEP_SECONDS
    assert resent_after + 10 <= 60  # the send itself and the workers' reconnection fit in the rest
    row = Notification.objects.get(pk=lost)
    assert (row.status, row.attempts, row.last_error) == ("sent", 2, "")
    assert [b["title"] for b in receiver.bodies] == [f"Deadline breached: escalation #{escalation.pk} was not "
                                                     "decided in time"]


def test_an_undeclared_destination_is_a_recorded_failure_not_a_crash(p1, channels, monkeypatch):
    monkeypatch.setenv("OUTBOUND_DESTINATIONS", "")
    escalation = factories.make_escalation(incident=p1)
    [pk] = notifications.enqueue(escalation.pk, "opened")
    assert send_notification.apply(args=[pk]).get() == "failed"
    row = Notification.objects.get(pk=pk)
    assert "'team-hook' is not declared in OUTBOUND_DESTINATIONS" in row.last_error


def test_a_broker_that_is_down_does_not_fail_the_runs_commit(p1, channels, monkeypatch, transactional_db):
    def down(*args, **kwargs):
        raise ConnectionError("broker down")

    monkeypatch.setattr("reviewer.alerts.tasks.notify_opened.delay", down)
    escalation = open_escalation(p1)  # the on_commit callback fails; the escalation is kept
    assert Escalation.objects.filter(pk=escalation.pk, notified_at=None).exists()
    with time_machine.travel(escalation.opened_at + timedelta(minutes=2), tick=False):
        monkeypatch.setattr("reviewer.alerts.tasks.send_notification.delay", lambda pk: None)
        assert deadlines.sweep()["opened"] == 1  # the sweep's safety net tells the channels instead
    assert Notification.objects.filter(escalation=escalation, event="opened").count() == 1


def test_admin_chooses_a_destination_among_the_declared_names(db, monkeypatch):
    monkeypatch.setenv("OUTBOUND_DESTINATIONS", "team-hook=http://127.0.0.1:9/x;slack-ops=https://hooks.slack.com/s/T/B/X")
    form = NotificationChannelForm(data={"name": "leads", "destination": "https://evil.example/",
                                         "group": "leads", "events": ["opened"], "active": "on"})
    assert not form.is_valid() and "destination" in form.errors
    assert [name for name, _ in form.fields["destination"].choices] == ["slack-ops", "team-hook"]
    form = NotificationChannelForm(data={"name": "leads", "destination": "team-hook", "group": "leads",
                                         "events": ["opened", "reminder"], "active": "on"})
    assert form.is_valid(), form.errors
    assert form.save().events == ["opened", "reminder"]


def test_slack_webhook_addresses_go_to_apprises_slack_and_others_as_json():
    assert notifications.apprise_url("http://127.0.0.1:8/n") == "json://127.0.0.1:8/n"
    assert notifications.apprise_url("https://hooks.example.com/n?x=1") == "jsons://hooks.example.com/n?x=1"
    slack = "https://hooks.slack.com/services/T1JJ3T3L2/A1BRTD4JD/TIiajkdnlazkcOXrIdevi7FQ"
    assert notifications.apprise_url(slack) == slack


# -- approved: ops are told a text is ready to publish -------------------------------------------


@pytest.fixture
def ops_channels(channels):
    """Besides the leads' and the second group's channels: ops' channel, which wants "approved", and
    another ops channel that wants nothing of it."""
    channels.ops = NotificationChannel.objects.create(name="ops room", destination="team-hook", group="ops",
                                                      events=["approved"])
    channels.quiet = NotificationChannel.objects.create(name="ops, breaches only", destination="team-hook",
                                                        group="ops", events=["breach"])
    return channels


@pytest.mark.worker
def test_a_leads_approval_on_the_page_tells_ops_channel_once_with_the_publish_link(
        p1, ops_channels, receiver, start_worker, client, users):
    start_worker(OUTBOUND_DESTINATIONS=f"team-hook={receiver.url}", SITE_URL="http://review.test")
    escalation = factories.make_escalation(incident=p1)
    client.force_login(users.lead)
    response = client.post(f"/escalations/{escalation.pk}/decide/", {"action": "approve"})
    assert response.status_code == 302

    factories.wait_for(lambda: Notification.objects.filter(status="sent").exists(), message="the approved notice")
    assert receiver.titles() == [f"Ready to publish: inc_pay_p1 (P1) Payments {XSS} — approved by Lena"]
    body = receiver.bodies[0]["message"]
    assert body.startswith(f"Incident: inc_pay_p1 (P1) Payments {XSS}\nApproved by Lena at ")
    assert f"Review and publish: http://review.test/runs/{escalation.run_id}/publish/" in body
    assert "We are investigating" not in body and "Needs a person" not in body  # no text, no model reason
    sent = [(n.event, n.channel.name) for n in Notification.objects.select_related("channel")]
    assert sent == [("approved", "ops room")]  # not the leads, not the second group, not a channel without it


def test_every_door_notifies_once_and_a_rejection_notifies_nobody(p1, ops_channels, users, api, monkeypatch):
    monkeypatch.setattr("reviewer.alerts.tasks.send_notification.delay", lambda pk: None)
    by_api = factories.make_escalation(incident=p1)
    assert api("lead").post(f"/escalations/{by_api.pk}/decision", {"action": "approve"}).status_code == 201
    again = decisions.decide(by_api.pk, users.lead2, "approve")  # decided already: nothing new
    assert not again.won
    rejected = factories.make_escalation(incident=p1)
    decisions.reject_many([rejected.pk], users.lead, "Not accurate.")
    rows = list(Notification.objects.values_list("escalation_id", "event", "channel__name"))
    assert rows == [(by_api.pk, "approved", "ops room")]


def test_the_approved_message_says_the_text_was_edited_and_findings_wait_for_acknowledgement(
        p1, ops_channels, users, settings):
    settings.SITE_URL = "https://review.example.com/"
    escalation = factories.make_escalation(incident=p1, pipeline="self_critique")
    text = "We are investigating a problem in the EU. We will restore service by 18:00 UTC."
    decisions.decide(escalation.pk, users.lead, "edit_approve", text=text, note="The fix is deployed.")
    escalation = Escalation.objects.select_related("run__incident", "decided_by").get(pk=escalation.pk)
    title, body = notifications.message(escalation, "approved", ops_channels.ops)
    assert title == f"Ready to publish: inc_pay_p1 (P1) Payments {XSS} — approved by Lena"
    assert "Edited and approved by Lena" in body
    assert "The lead overrode" in body and "acknowledge" in body
    assert body.endswith(f"Review and publish: https://review.example.com/runs/{escalation.run_id}/publish/")
    assert "18:00" not in body  # the text itself stays behind the login


def test_admin_offers_the_approved_event_and_the_ops_group_with_it_by_default(db, monkeypatch):
    monkeypatch.setenv("OUTBOUND_DESTINATIONS", "team-hook=http://127.0.0.1:9/x")
    form = NotificationChannelForm(initial={"group": "ops"})
    assert ("approved", "text approved, ready to publish") in form.fields["events"].choices
    assert ("ops", "ops staff (ready to publish)") in form.fields["group"].choices
    assert form.initial["events"] == ["approved"]
    form = NotificationChannelForm(data={"name": "ops", "destination": "team-hook", "group": "ops",
                                         "events": ["approved"], "active": "on"})
    assert form.is_valid(), form.errors
    assert form.save().events == ["approved"]

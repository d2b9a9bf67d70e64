"""Every channel carries an update as plain text for its medium (reviewer/outbox/channels.py): what a real
receiver on loopback, the mail backend and the public status page actually get for a text full of links,
mentions and HTML. The guard keeps such text from being published; a channel never trusts that it did."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core import mail

from agents.models import Run
from reviewer.models import DeliveryChannel, PublishedUpdate
from reviewer.outbox import tasks
from reviewer.outbox.publishing import publish
from tests.factories import make_incident, make_run

pytestmark = pytest.mark.django_db

HOSTILE = ("Exports are delayed. <https://acme-verify.example|Click to verify your card> <!channel> <@U024BE7LH> "
           "@everyone <b>Act now</b> & [read more](https://acme-verify.example/more) *bold* _it_")
TEMPLATES = Path(__file__).resolve().parents[3] / "templates"


PUBLIC_TITLE = "Exports <b>slow</b>"


@pytest.fixture
def deliver(users, monkeypatch):
    """``deliver(kind="slack", destination="hook")``: publish HOSTILE (a person's click) to that one
    channel and make one delivery attempt; returns the attempt's outcome."""
    monkeypatch.setattr(tasks.deliver, "delay", lambda pk: None)

    def make(**channel) -> str:
        DeliveryChannel.objects.all().delete()
        DeliveryChannel.objects.create(name="only", **channel)
        incident = make_incident(title="Exports <i>delayed</i>")
        run = make_run(incident=incident, snapshot=True, status=Run.Status.OK, answer=HOSTILE)
        update = publish(incident, HOSTILE, actor=users.ops, source_run=run)
        # The title that goes out is the update's public title, hostile too (the guard's check of it is
        # tested with publishing; this is what the channel does with whatever it gets).
        PublishedUpdate.objects.filter(pk=update.pk).update(public_title=PUBLIC_TITLE)
        return tasks.attempt(update.deliveries.get().pk)

    return make


def test_slack_gets_escaped_plain_text_with_formatting_and_previews_off(webhook_receiver, deliver):
    receiver = webhook_receiver()
    receiver.secret = None  # Slack checks no signature: its URL is the credential
    assert deliver(kind="slack", destination="hook") == "delivered"
    (body,) = receiver.accepted.values()
    assert body == {
        "text": "Exports &lt;b&gt;slow&lt;/b&gt; — Investigating (update 1)\nExports are delayed. "
                "&lt;https://acme-verify.example|Click to verify your card&gt; &lt;!channel&gt; &lt;@U024BE7LH&gt; "
                "@everyone &lt;b&gt;Act now&lt;/b&gt; &amp; [read more](https://acme-verify.example/more) *bold* _it_",
        "mrkdwn": False, "unfurl_links": False, "unfurl_media": False,
    }
    # No control character is left from which Slack could build a link or a mention.
    assert "<" not in body["text"] and ">" not in body["text"]


def test_the_webhook_gets_the_text_as_one_json_string(webhook_receiver, deliver):
    receiver = webhook_receiver()
    assert deliver(kind="webhook", destination="hook") == "delivered"
    (body,) = receiver.accepted.values()
    assert body["text"] == HOSTILE and isinstance(body["text"], str)
    assert set(body) == {"incident", "version", "text", "text_hash", "public_title", "state", "impact", "components",
                         "approved_by", "published_by", "policy_snapshot_id", "facts_version", "published_at"}


def test_email_is_a_plain_text_message_with_no_html_part(deliver):
    assert deliver(kind="email", recipients="customers@example.com") == "delivered"
    (message,) = mail.outbox
    assert f"\n\n{HOSTILE}\n\n" in message.body
    assert message.content_subtype == "plain" and getattr(message, "alternatives", []) == []
    assert message.message().get_content_type() == "text/plain"


def test_the_status_page_escapes_the_text(client, deliver):
    assert deliver(kind="status") == "delivered"
    page = client.get("/status/").content.decode()
    assert "&lt;b&gt;Act now&lt;/b&gt;" in page and "&lt;!channel&gt;" in page
    assert "Exports &lt;i&gt;delayed" not in page  # the incident's internal title is never shown
    assert "Exports &lt;b&gt;slow&lt;/b&gt;" in page  # the public title, escaped
    assert "<b>Act" not in page and "<i>delayed" not in page and "<b>slow" not in page
    assert 'href="https://acme-verify' not in page


@pytest.mark.parametrize("marker", ["|safe", "| safe", "autoescape off", "urlize", "|linebreaks|safe"])
def test_no_template_turns_escaping_off_or_makes_links(marker):
    used = [str(path.relative_to(TEMPLATES)) for path in TEMPLATES.rglob("*.html") if marker in path.read_text()]
    assert used == []

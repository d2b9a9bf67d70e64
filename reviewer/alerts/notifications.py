"""Telling people about escalations: when one opens, when its deadline nears, when it passes, and
(ops) when a lead approves its text, so it is ready to publish; and (ops) when a delivery is held.

``enqueue`` writes one :class:`Notification` row per active channel that wants the event (at most
one per escalation, event and channel: a unique constraint) and sends each through the
``send_notification`` task (``reviewer.alerts.tasks``) once the transaction commits: never in the request or the
run's transaction. The task sends with apprise (one interface for Slack, JSON webhooks and the many
services it knows) to the channel's destination, which the operator declared in
``OUTBOUND_DESTINATIONS`` (``reviewer.outbox.destinations``): admins choose a name, never a URL. A failure
is recorded on the row (attempts, last error) and retried; it never raises into the worker and
never touches the escalation.
"""

from __future__ import annotations

import logging
import re
from urllib.parse import urlsplit, urlunsplit

import apprise
from apprise.plugins import N_MGR  # apprise's services, by scheme
from django.conf import settings
from django.urls import reverse
from django.utils import timezone

from reviewer.celery import enqueue_on_commit
from reviewer.models import Delivery, Escalation, Notification, NotificationChannel

log = logging.getLogger(__name__)

Event = NotificationChannel.Event


class NotificationFailed(Exception):
    """A send that did not go through; the message is safe to record (no URL, no secret). A
    ``permanent`` failure is not retried: sending again would get the same answer."""

    def __init__(self, message: str, *, permanent: bool = False):
        super().__init__(message)
        self.permanent = permanent


# apprise logs a refused answer as "... error=<HTTP status>." in every plugin that speaks HTTP.
_REDIRECT_STATUS = re.compile(r"error=(3\d\d)\b")


def enqueue(escalation_pk: int, event: str) -> list[int]:
    """Create the event's notifications for every channel that wants it, and send them after commit."""
    return enqueue_many([escalation_pk], event)


def enqueue_many(escalation_pks: list[int], event: str) -> list[int]:
    """:func:`enqueue` for many escalations in three queries: the channels, the rows that exist, one
    insert of the others."""
    channels = [c for c in NotificationChannel.objects.filter(active=True) if event in (c.events or [])]
    if not channels or not escalation_pks:
        return []
    existing = set(Notification.objects.filter(escalation_id__in=escalation_pks, event=event, channel__in=channels)
                   .values_list("escalation_id", "channel_id"))
    rows = Notification.objects.bulk_create(
        Notification(escalation_id=pk, event=event, channel=channel)
        for pk in escalation_pks for channel in channels if (pk, channel.pk) not in existing)
    created = [row.pk for row in rows]
    for pk in created:
        # robust: a broker that is down must not fail the commit that already happened; the row
        # stays pending and the sweep sends it again (resend_pending).
        enqueue_on_commit("reviewer.tasks.send_notification", pk, robust=True)
    return created


def escalation_link(escalation_pk: int) -> str:
    """The escalation page as an absolute link, from ``SITE_URL``."""
    return settings.SITE_URL.rstrip("/") + reverse("escalation", args=[escalation_pk])


def publish_link(run_pk: int) -> str:
    """The run's publish confirmation as an absolute link, from ``SITE_URL``."""
    return settings.SITE_URL.rstrip("/") + reverse("publish_confirm", args=[run_pk])


HEADLINES = {
    Event.OPENED: "Escalation #{pk} waits for a decision",
    Event.REMINDER: "Reminder: escalation #{pk} is due {due}",
    Event.BREACH: "Deadline breached: escalation #{pk} was not decided in time",
    Event.APPROVED: "Ready to publish: {incident} — approved by {lead}",
    Event.UNMEETABLE: "Approval rule out of reach: escalation #{pk} cannot get the approvals it needs",
}


def message(escalation: Escalation, event: str, channel: NotificationChannel) -> tuple[str, str]:
    """The title and body: incident, pipeline, reason, deadline and the absolute link. Plain text;
    the model's reason is cut short and the receiver renders it (apprise sends it as text)."""
    run = escalation.run
    incident = run.incident if run.incident_id else None
    if event == Event.APPROVED:
        return _approved_message(escalation, incident)
    deadline = escalation.deadline_at
    due = f"at {deadline:%Y-%m-%d %H:%M} UTC" if deadline else "with no deadline"
    title = HEADLINES[event].format(pk=escalation.pk, due=due)
    lines = [
        f"Incident: {_named(incident)}",
        f"Pipeline: {run.get_pipeline_display()}",
        f"Reason: {escalation.stop_reason}: {_short(escalation.summary)}",
        f"Deadline: {due}",
        escalation_link(escalation.pk),
    ]
    if event == Event.UNMEETABLE:
        lines.insert(0, f"Its rule, {escalation.approval_rule_text or 'an approval rule'}, can no longer be met: too "
                        "few members of the group who may approve are left. Add members to the group (or give back "
                        "the support lead role), or a lead rejects it; the escalation page says who is left.")
    if event == Event.BREACH:
        lines.insert(0, "Nothing was approved: the escalation still waits for a lead."
                     + (" An approved holding statement can be published from the incident page."
                        if hasattr(escalation, "breach") and escalation.breach.holding_statement_id else ""))
    return title, "\n".join(lines)


def _approved_message(escalation: Escalation, incident) -> tuple[str, str]:
    """What ops are told when a lead approves a text: which incident, who approved it and when, whether
    findings the lead overrode need acknowledging, and the link to publish it. What ops see on the
    desk, never the text itself or the model's reasons."""
    lead = escalation.decided_by
    lead_name = (lead.get_full_name() or lead.get_username()) if lead is not None else "a support lead"
    named = _named(incident)
    title = HEADLINES[Event.APPROVED].format(incident=_short(named, 120), lead=lead_name)
    decided = escalation.decided_at
    lines = [
        f"Incident: {named}",
        f"{'Edited and approved' if escalation.outcome == 'edited' else 'Approved'} by {lead_name}"
        + (f" at {decided:%Y-%m-%d %H:%M} UTC" if decided else ""),
    ]
    if overridden := escalation.overridden:
        count = len(overridden)
        lines.append(f"The lead overrode {count} guard finding{'s' * (count != 1)}: read and acknowledge "
                     f"{'them' if count != 1 else 'it'} on the confirmation page to publish.")
    lines.append(f"Review and publish: {publish_link(escalation.run_id)}")
    return title, "\n".join(lines)


def _named(incident) -> str:
    """The incident as the desk shows it to ops and leads: id, severity and title."""
    if incident is None:
        return "none"
    return f"{incident.incident_id} ({incident.severity or 'no severity'}) {incident.title}"


def _short(text: str, limit: int = 200) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# Where a mention starts: "@" before a name (@everyone, @here, @channel, @all, @someone) and "<" before
# the "@", "!" or "#" of Slack's and Discord's mention markup (<@U123>, <@&123>, <!channel>, <#C1>).
_MENTION_START = re.compile(r"@(?=\w)|<(?=[@!#])")
ZERO_WIDTH_SPACE = "\u200b"


def neutralise_mentions(text: str) -> str:
    """``text`` as it reads, unable to ping anyone on any service apprise sends to: a zero-width space
    after each mention's first character, so no service recognises a mention. Slack's plugin escapes
    ``<`` and ``>`` as well; Discord, Mattermost and JSON receivers show the text as sent. One pass of
    a pattern without repetition: linear in the text."""
    return _MENTION_START.sub(lambda found: found[0] + ZERO_WIDTH_SPACE, text)


def apprise_url(url: str) -> str:
    """An apprise URL for a declared destination: a service apprise recognises by its own web address
    (Slack's incoming webhooks, Discord, Teams, …) as it is; any other http(s) address as a JSON
    webhook (``json://`` / ``jsons://``)."""
    if _known_to_apprise(url):
        return url
    parts = urlsplit(url)
    return urlunsplit(("jsons" if parts.scheme == "https" else "json", parts.netloc, parts.path, parts.query, ""))


def _known_to_apprise(url: str) -> bool:
    """Whether one of apprise's services takes ``url`` as it is: its scheme is apprise's
    (``slack://``, ``json://``, …) or a service recognises it as its own web address. Asked of the
    services directly: ``Apprise.instantiate`` answers the same but logs ``Unparseable URL`` as an
    error for every plain http(s) address, once per notification sent."""
    scheme = urlsplit(url).scheme.lower()
    if scheme in N_MGR:
        return True
    native = url.replace("/#", "/%23")  # as apprise reads a URL
    return any(plugin.parse_native_url(native) for plugin in N_MGR.plugins())


def send(notification: Notification) -> None:
    """Send one notification; raises :class:`NotificationFailed` with a message fit to record."""
    escalation = Escalation.objects.select_related("run__incident", "decided_by").get(pk=notification.escalation_id)
    send_to(notification.channel, *message(escalation, notification.event, notification.channel))


def held_message(delivery: Delivery) -> tuple[str, str]:
    """What ops' channels are told when a delivery is held: which update of which incident, to which
    channel (never the subscriber's address), what the receiver or mail server said, the attempt,
    and the link to the held deliveries to decide it there."""
    update = delivery.update
    title = f"Held delivery: update v{update.version} of {_short(update.incident.incident_id, 80)} to " \
            f"{_short(delivery.channel.name, 80)} may have been sent"
    held_at = delivery.next_attempt_at
    lines = [
        f"Incident: {_named(update.incident)}",
        f"Update v{update.version}, channel {delivery.channel.name}"
        + (" (one subscriber)" if delivery.subscriber_id else ""),
        f"Attempt {delivery.attempts}, held at {held_at:%Y-%m-%d %H:%M} UTC: {_short(delivery.last_error, 300)}",
        "Check whether it arrived, then send it again or mark it as sent: "
        + settings.SITE_URL.rstrip("/") + reverse("held_deliveries"),
    ]
    return title, "\n".join(lines)


def ops_channels() -> list[NotificationChannel]:
    """The active channels of the ops group: where held deliveries are told."""
    return list(NotificationChannel.objects.filter(active=True, group=NotificationChannel.Group.OPS))


def send_to(channel: NotificationChannel, title: str, body: str) -> None:
    """Send one message to one channel; raises :class:`NotificationFailed` with a message fit to record."""
    from reviewer.outbox import destinations

    try:
        destination = destinations.resolve(channel.destination)
    except destinations.DestinationError as error:
        raise NotificationFailed(str(error)) from None
    # Titles, names and the model's reason are people's and a model's text: they ping nobody.
    title, body = neutralise_mentions(title), neutralise_mentions(body)
    # Redirects are never followed: a body meant for the declared host is not sent on to one the
    # operator never declared (blind SSRF). apprise hands each plugin's ``redirects`` to requests as
    # ``allow_redirects``; the asset sets the default, and a URL's own ``?redirect=yes`` is overruled.
    sender = apprise.Apprise(asset=apprise.AppriseAsset(http_redirects=False))
    url = apprise_url(destination.url)
    if not sender.add(url):
        raise NotificationFailed(f"apprise cannot send to the destination {destination.name!r}")
    for plugin in sender:
        plugin.redirects = False
    with apprise.LogCapture(level=logging.WARNING, fmt="%(message)s") as captured:
        ok = sender.notify(title=title, body=body, body_format=apprise.NotifyFormat.TEXT)
    if not ok:
        detail = " ".join(captured.getvalue().split())
        if redirect := _REDIRECT_STATUS.search(detail):
            raise NotificationFailed(f"{destination.name} ({destination.host}): the destination answered HTTP "
                                     f"{redirect[1]} (a redirect); redirects are not followed: declare the "
                                     "address it points to instead", permanent=True)
        for secret in (destination.url, url, urlsplit(destination.url).path):
            if secret and secret != "/":
                detail = detail.replace(secret, "…")
        raise NotificationFailed(f"{destination.name} ({destination.host}): {detail or 'not delivered'}"[:1000])


def record_attempt(pk: int, *, error: str = "", final: bool = False) -> None:
    """Record one attempt: sent, or its error (failed when no retry is left)."""
    if not error:
        Notification.objects.filter(pk=pk).update(status=Notification.Status.SENT, sent_at=timezone.now(),
                                                  last_error="")
    else:
        status = Notification.Status.FAILED if final else Notification.Status.PENDING
        Notification.objects.filter(pk=pk).update(status=status, last_error=error)

"""Subscribing to the status page (docs/subscriptions.md; webhooks and Slack in docs/status-page.md):
subscribe, confirm by the emailed link (double opt-in; a webhook's link goes to its owner's email, a
Slack subscription's is the first message posted to the channel), unsubscribe by the link in every
update, also in one click from the mail provider (RFC 8058). The updates themselves go through the
outbox's subscribers channel.

No page says whether an address was known: subscribing answers the same for every address, whether
an email went or a limit held it back, and the links work by the subscriber's unguessable key. The
form does the same work for every address too (it enqueues :func:`subscribe` for a worker), so the
time it takes cannot tell a new address from a confirmed one either. The
confirmation emails are limited per mailbox, per domain and per client address (``limit_reached``). A
GET never changes anything, because mail scanners open links: confirming and unsubscribing are
buttons that POST.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from urllib.parse import urlsplit

from axes.helpers import get_client_ip_address
from django import forms
from django.conf import settings
from django.core.mail import EmailMessage
from django.db import transaction
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from reviewer.models import (
    ConfirmationMail,
    StatusComponent,
    Subscriber,
    UnsafeURL,
    check_subscriber_url,
    post_to_subscriber_url,
    status_page_name,
)
from reviewer.models.subscriber_urls import MAX_URL_CHARS

log = logging.getLogger("reviewer.subscriptions")

ALL, CHOSEN = "all", "chosen"
CONFIRMATION_INTERVAL = timedelta(minutes=10)
# Mail providers that deliver every address of a mailbox written with dots anywhere in its name, and
# the domains that are another name of one.
DOTS_IGNORED = frozenset({"gmail.com"})
SAME_DOMAIN = {"googlemail.com": "gmail.com"}


KINDS = [(Subscriber.Kind.EMAIL, "Email"), (Subscriber.Kind.WEBHOOK, "Webhook (a JSON POST to your endpoint)"),
         (Subscriber.Kind.SLACK, "Slack (an incoming webhook of your channel)")]


class SubscribeForm(forms.Form):
    kind = forms.ChoiceField(choices=KINDS, initial=Subscriber.Kind.EMAIL, widget=forms.RadioSelect, required=False,
                             label="How", error_messages={"invalid_choice": "Choose email, webhook or Slack."})
    email = forms.EmailField(max_length=254, label="Email address", required=False,
                             error_messages={"invalid": "Enter an email address such as name@example.com."})
    url = forms.CharField(max_length=MAX_URL_CHARS, label="Webhook or Slack URL", required=False, strip=True)
    scope = forms.ChoiceField(choices=[(ALL, "Every update"), (CHOSEN, "Only updates about these components")],
                              initial=ALL, widget=forms.RadioSelect, label="Which updates",
                              error_messages={"invalid_choice": "Choose every update, or only some components."})
    components = forms.ModelMultipleChoiceField(
        StatusComponent.objects.public(),  # the public ones: an audience's are not offered
        required=False, widget=forms.CheckboxSelectMultiple, label="Components",
        error_messages={"invalid_choice": "There is no component %(value)s; choose among those listed.",
                        "invalid_pk_value": "“%(pk)s” is not a component; choose among those listed."})

    def clean(self):
        data = super().clean()
        kind = data["kind"] = data.get("kind") or Subscriber.Kind.EMAIL  # an older form has no choice: email
        if kind in (Subscriber.Kind.EMAIL, Subscriber.Kind.WEBHOOK) and not data.get("email") \
                and "email" not in self.errors:
            self.add_error("email", "Enter an email address: the link to confirm goes to it.")
        if kind in (Subscriber.Kind.WEBHOOK, Subscriber.Kind.SLACK):
            if not data.get("url"):
                self.add_error("url", "Enter the URL updates are sent to.")
            else:
                try:
                    data["url"] = check_subscriber_url(data["url"], kind)
                except UnsafeURL as refused:
                    self.add_error("url", str(refused))
        if kind == Subscriber.Kind.SLACK:
            data["email"] = ""  # the confirmation goes to the channel itself
        elif kind == Subscriber.Kind.EMAIL:
            data["url"] = ""
        if data.get("scope") == CHOSEN and not data.get("components"):
            self.add_error("components", "Choose at least one component, or every update.")
        if data.get("scope") == ALL:
            data["components"] = []  # every update: none chosen
        return data


def mailbox(email: str) -> tuple[str, str]:
    """The mailbox an address delivers to, and its domain: lower case, without a "+tag" after the
    name, and, at providers that ignore them (Gmail), without dots in the name."""
    name, _, domain = email.lower().rpartition("@")
    domain = SAME_DOMAIN.get(domain, domain)
    name = name.split("+", 1)[0]
    if domain in DOTS_IGNORED:
        name = name.replace(".", "")
    return f"{name}@{domain}", domain


def url_host(kind: str, url: str) -> str:
    """What the host limit counts of a subscription's URL: its host, and for Slack (one host for every
    workspace) the workspace too, ``hooks.slack.com/T0123``; "" for an email subscription."""
    if not url:
        return ""
    parts = urlsplit(url)
    segments = [segment for segment in parts.path.split("/") if segment]
    host = (parts.hostname or "").lower()
    return f"{host}/{segments[1]}"[:300] if kind == Subscriber.Kind.SLACK and len(segments) >= 2 else host


def limit_reached(email: str, client: str, now, host: str = "") -> str:
    """Which limit a confirmation to ``email`` (or to a URL on ``host``) asked by ``client`` would pass
    ("" for none)."""
    since = now - timedelta(minutes=settings.SUBSCRIBE_LIMIT_WINDOW_MINUTES)
    ConfirmationMail.objects.filter(sent_at__lt=since).delete()
    sent = ConfirmationMail.objects.filter(sent_at__gte=since)
    box, domain = mailbox(email) if email else ("", "")
    if box and sent.filter(mailbox=box).count() >= settings.SUBSCRIBE_MAILBOX_LIMIT:
        return "mailbox"
    if domain and sent.filter(domain=domain).count() >= settings.SUBSCRIBE_DOMAIN_LIMIT:
        return "domain"
    if host and sent.filter(host=host).count() >= settings.SUBSCRIBE_HOST_LIMIT:
        return "host"
    if client and sent.filter(client=client).count() >= settings.SUBSCRIBE_CLIENT_LIMIT:
        return "client"
    return ""


def subscribe(email: str, components, *, client: str = "", kind: str = Subscriber.Kind.EMAIL, url: str = "") -> None:
    """Ask ``email`` (or for Slack, the channel at ``url``) to confirm a subscription to ``components``
    (none: every update); a webhook subscription to ``url`` is confirmed by a link emailed to ``email``.
    A subscription that has not confirmed, or has unsubscribed, is asked again with the new choice (at
    most once per ``CONFIRMATION_INTERVAL``); a confirmed one is left as it is (its owner unsubscribes to
    choose again). Past a limit of its mailbox, its domain, its URL's host or ``client`` (the asking IP
    address), nothing is stored or sent. Nothing tells the caller which it was."""
    now = timezone.now()
    email = email.lower()
    if kind != Subscriber.Kind.EMAIL:
        try:  # checked by the form; again here, as the host's addresses may have changed since
            url = check_subscriber_url(url, kind)
        except UnsafeURL as refused:
            log.info("no confirmation sent: the URL is refused now (%s)", refused)
            return
    with transaction.atomic():
        # One subscription per email address, and one per URL (a webhook's or Slack's).
        if kind == Subscriber.Kind.EMAIL:
            same = Subscriber.objects.filter(kind=kind, email=email)
        else:
            same = Subscriber.objects.exclude(kind=Subscriber.Kind.EMAIL).filter(url=url)
        subscriber = same.select_for_update().first()
        if subscriber is not None and subscriber.active:
            return
        recently = bool(subscriber and subscriber.confirmation_sent_at
                        and now - subscriber.confirmation_sent_at < CONFIRMATION_INTERVAL)
        host = url_host(kind, url)
        if not recently and (limit := limit_reached(email, client, now, host)):
            log.info("no confirmation sent: the %s limit of the subscribe form is reached", limit)
            return
        if subscriber is None:
            subscriber = Subscriber.objects.create(kind=kind, email=email, url=url)
        subscriber.components.set(components)
        subscriber.kind, subscriber.email = kind, email
        subscriber.confirmed_at = subscriber.unsubscribed_at = None
        subscriber.confirmation_sent_at = subscriber.confirmation_sent_at if recently else now
        subscriber.save(update_fields=["kind", "email", "confirmed_at", "unsubscribed_at", "confirmation_sent_at"])
        if not recently:
            box, domain = mailbox(email) if email else ("", "")
            sent = ConfirmationMail.objects.create(sent_at=now, mailbox=box, domain=domain, client=client, host=host)
    if recently:
        return
    try:
        _send_confirmation(subscriber)
    except Exception:
        # Not sent: the next try may send at once.
        Subscriber.objects.filter(pk=subscriber.pk, confirmation_sent_at=now).update(confirmation_sent_at=None)
        sent.delete()
        raise


def _send_confirmation(subscriber: Subscriber) -> None:
    """The link to confirm: emailed (for an email or a webhook subscription), or posted to the Slack channel."""
    name = status_page_name()
    if subscriber.kind == Subscriber.Kind.SLACK:
        text = (f"Someone, probably someone in this channel, asked for the updates of {name} here.\n"
                f"To confirm, open this link and press “Confirm”: {subscriber.confirm_url}\n"
                "If nobody here asked, ignore this message: without confirming, nothing more is posted.")
        text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")  # shown as written, as updates are
        response = post_to_subscriber_url(subscriber.url, subscriber.kind, timeout=settings.DELIVERY_TIMEOUT_SECONDS,
                                          json={"text": text, "mrkdwn": False, "unfurl_links": False,
                                                "unfurl_media": False})
        if not 200 <= response.status_code < 300:
            raise RuntimeError(f"Slack answered HTTP {response.status_code} to the confirmation message")
        return
    what = "at this address" if subscriber.kind == Subscriber.Kind.EMAIL else \
        f"to be sent to a webhook at {subscriber.host}, and gave this address to confirm it"
    body = (f"Someone, probably you, asked for the updates of {name} {what}.\n\n"
            f"To confirm, open this link and press “Confirm”:\n{subscriber.confirm_url}\n\n"
            "If you did not ask, ignore this email: without confirming you get nothing more.\n")
    EmailMessage(f"{name}: confirm your subscription", body, settings.DEFAULT_FROM_EMAIL, [subscriber.email]).send()


@require_http_methods(["GET", "POST"])
def subscribe_page(request):
    form = SubscribeForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        components = [component.pk for component in form.cleaned_data["components"]]
        try:
            # The same for every address: a worker looks the address up and sends the email, if any.
            Subscriber.objects.ask(form.cleaned_data["email"], components, get_client_ip_address(request) or "",
                                   kind=form.cleaned_data["kind"], url=form.cleaned_data["url"])
        except Exception:  # the broker: the person can try again; nothing was done
            log.exception("the subscribe request could not be queued")
            form.add_error(None, "Your request could not be taken just now; please try again in a few minutes.")
            return _page(request, "status/subscribe.html", {"form": form}, status=503)
        return _page(request, "status/subscribe.html", {"sent": True, "sent_to": form.cleaned_data["email"],
                                                        "kind": form.cleaned_data["kind"]})
    return _page(request, "status/subscribe.html", {"form": form}, status=422 if form.errors else 200)


def _page(request, template: str, context: dict, status: int = 200):
    """A subscription page, under the status page's header with the company's name."""
    return render(request, template, {"name": settings.STATUS_PAGE_NAME, **context}, status=status)


@require_http_methods(["GET", "POST"])
def confirm_page(request, key):
    subscriber = get_object_or_404(Subscriber, key=key)
    secret = ""
    if request.method == "POST":
        # A webhook's secret is shown to the click that confirmed it, and never again.
        secret = subscriber.secret if subscriber.confirm() else ""
        subscriber.refresh_from_db()
    return _page(request, "status/confirm.html", {"subscriber": subscriber, "posted": request.method == "POST",
                                                  "secret": secret})


# One-click unsubscribing (RFC 8058): the mail provider POSTs "List-Unsubscribe=One-Click" to the
# link with no cookie and no CSRF token; the unguessable key in the URL is the authority.
@csrf_exempt
@require_http_methods(["GET", "POST"])
def unsubscribe_page(request, key):
    subscriber = get_object_or_404(Subscriber, key=key)
    if request.method == "POST":
        subscriber.unsubscribe()
        subscriber.refresh_from_db()
    return _page(request, "status/unsubscribe.html", {"subscriber": subscriber, "posted": request.method == "POST"})

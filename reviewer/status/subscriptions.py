"""Subscribing to the status page by email (docs/subscriptions.md): subscribe, confirm by the emailed
link (double opt-in), unsubscribe by the link in every email, also in one click from the mail
provider (RFC 8058). The updates themselves go through the outbox's subscribers channel.

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

from axes.helpers import get_client_ip_address
from django import forms
from django.conf import settings
from django.core.mail import EmailMessage
from django.db import transaction
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from reviewer.models import ConfirmationMail, StatusComponent, Subscriber, status_page_name

log = logging.getLogger("reviewer.subscriptions")

ALL, CHOSEN = "all", "chosen"
CONFIRMATION_INTERVAL = timedelta(minutes=10)
# Mail providers that deliver every address of a mailbox written with dots anywhere in its name, and
# the domains that are another name of one.
DOTS_IGNORED = frozenset({"gmail.com"})
SAME_DOMAIN = {"googlemail.com": "gmail.com"}


class SubscribeForm(forms.Form):
    email = forms.EmailField(max_length=254, label="Email address",
                             error_messages={"invalid": "Enter an email address such as name@example.com."})
    scope = forms.ChoiceField(choices=[(ALL, "Every update"), (CHOSEN, "Only updates about these components")],
                              initial=ALL, widget=forms.RadioSelect, label="Which updates",
                              error_messages={"invalid_choice": "Choose every update, or only some components."})
    components = forms.ModelMultipleChoiceField(
        StatusComponent.objects.filter(audience__isnull=True),  # the public ones: an audience's are not offered
        required=False, widget=forms.CheckboxSelectMultiple, label="Components",
        error_messages={"invalid_choice": "There is no component %(value)s; choose among those listed.",
                        "invalid_pk_value": "“%(pk)s” is not a component; choose among those listed."})

    def clean(self):
        data = super().clean()
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


def limit_reached(email: str, client: str, now) -> str:
    """Which limit a confirmation email to ``email`` asked by ``client`` would pass ("" for none)."""
    since = now - timedelta(minutes=settings.SUBSCRIBE_LIMIT_WINDOW_MINUTES)
    ConfirmationMail.objects.filter(sent_at__lt=since).delete()
    sent = ConfirmationMail.objects.filter(sent_at__gte=since)
    box, domain = mailbox(email)
    if sent.filter(mailbox=box).count() >= settings.SUBSCRIBE_MAILBOX_LIMIT:
        return "mailbox"
    if sent.filter(domain=domain).count() >= settings.SUBSCRIBE_DOMAIN_LIMIT:
        return "domain"
    if client and sent.filter(client=client).count() >= settings.SUBSCRIBE_CLIENT_LIMIT:
        return "client"
    return ""


def subscribe(email: str, components, *, client: str = "") -> None:
    """Ask ``email`` to confirm a subscription to ``components`` (none: every update). An address that
    has not confirmed, or has unsubscribed, is asked again with the new choice (the email at most once
    per ``CONFIRMATION_INTERVAL``); a confirmed one is left as it is (its owner unsubscribes to choose
    again). Past a limit of its mailbox, its domain or ``client`` (the asking IP address), nothing is
    stored or sent. Nothing tells the caller which it was."""
    now = timezone.now()
    email = email.lower()
    with transaction.atomic():
        subscriber = Subscriber.objects.select_for_update().filter(email=email).first()
        if subscriber is not None and subscriber.active:
            return
        recently = bool(subscriber and subscriber.confirmation_sent_at
                        and now - subscriber.confirmation_sent_at < CONFIRMATION_INTERVAL)
        if not recently and (limit := limit_reached(email, client, now)):
            log.info("no confirmation email sent: the %s limit of the subscribe form is reached", limit)
            return
        if subscriber is None:
            subscriber, _ = Subscriber.objects.get_or_create(email=email)
        subscriber.components.set(components)
        subscriber.confirmed_at = subscriber.unsubscribed_at = None
        subscriber.confirmation_sent_at = subscriber.confirmation_sent_at if recently else now
        subscriber.save(update_fields=["confirmed_at", "unsubscribed_at", "confirmation_sent_at"])
        if not recently:
            box, domain = mailbox(email)
            sent = ConfirmationMail.objects.create(sent_at=now, mailbox=box, domain=domain, client=client)
    if recently:
        return
    name = status_page_name()
    body = (f"Someone, probably you, asked for the updates of {name} at this address.\n\n"
            f"To confirm, open this link and press “Confirm”:\n{subscriber.confirm_url}\n\n"
            "If you did not ask, ignore this email: without confirming you get nothing more.\n")
    try:
        EmailMessage(f"{name}: confirm your subscription", body, settings.DEFAULT_FROM_EMAIL,
                     [subscriber.email]).send()
    except Exception:
        # Not sent: the next try may send at once.
        Subscriber.objects.filter(pk=subscriber.pk, confirmation_sent_at=now).update(confirmation_sent_at=None)
        sent.delete()
        raise


@require_http_methods(["GET", "POST"])
def subscribe_page(request):
    form = SubscribeForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        components = [component.pk for component in form.cleaned_data["components"]]
        try:
            # The same for every address: a worker looks the address up and sends the email, if any.
            Subscriber.objects.ask(form.cleaned_data["email"], components, get_client_ip_address(request) or "")
        except Exception:  # the broker: the person can try again; nothing was done
            log.exception("the subscribe request could not be queued")
            form.add_error(None, "Your request could not be taken just now; please try again in a few minutes.")
            return _page(request, "status/subscribe.html", {"form": form}, status=503)
        return _page(request, "status/subscribe.html", {"sent_to": form.cleaned_data["email"]})
    return _page(request, "status/subscribe.html", {"form": form}, status=422 if form.errors else 200)


def _page(request, template: str, context: dict, status: int = 200):
    """A subscription page, under the status page's header with the company's name."""
    return render(request, template, {"name": settings.STATUS_PAGE_NAME, **context}, status=status)


@require_http_methods(["GET", "POST"])
def confirm_page(request, key):
    subscriber = get_object_or_404(Subscriber, key=key)
    if request.method == "POST":
        subscriber.confirm()
        subscriber.refresh_from_db()
    return _page(request, "status/confirm.html", {"subscriber": subscriber, "posted": request.method == "POST"})


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

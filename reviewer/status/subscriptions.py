"""Subscribing to the status page by email (docs/subscriptions.md): subscribe, confirm by the emailed
link (double opt-in), unsubscribe by the link in every email, also in one click from the mail
provider (RFC 8058). The updates themselves go through the outbox's subscribers channel.

No page says whether an address was known: subscribing answers the same for every address, and the
links work by the subscriber's unguessable key. A GET never changes anything, because mail scanners
open links: confirming and unsubscribing are buttons that POST.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from django import forms
from django.conf import settings
from django.core.mail import EmailMessage
from django.db import transaction
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from reviewer.models import StatusComponent, Subscriber, status_page_name

log = logging.getLogger("reviewer.subscriptions")

ALL, CHOSEN = "all", "chosen"
CONFIRMATION_INTERVAL = timedelta(minutes=10)


class SubscribeForm(forms.Form):
    email = forms.EmailField(max_length=254, label="Email address",
                             error_messages={"invalid": "Enter an email address such as name@example.com."})
    scope = forms.ChoiceField(choices=[(ALL, "Every update"), (CHOSEN, "Only updates about these components")],
                              initial=ALL, widget=forms.RadioSelect, label="Which updates",
                              error_messages={"invalid_choice": "Choose every update, or only some components."})
    components = forms.ModelMultipleChoiceField(
        StatusComponent.objects.all(), required=False, widget=forms.CheckboxSelectMultiple, label="Components",
        error_messages={"invalid_choice": "There is no component %(value)s; choose among those listed.",
                        "invalid_pk_value": "“%(pk)s” is not a component; choose among those listed."})

    def clean(self):
        data = super().clean()
        if data.get("scope") == CHOSEN and not data.get("components"):
            self.add_error("components", "Choose at least one component, or every update.")
        if data.get("scope") == ALL:
            data["components"] = []  # every update: none chosen
        return data


def subscribe(email: str, components) -> None:
    """Ask ``email`` to confirm a subscription to ``components`` (none: every update). An address that
    has not confirmed, or has unsubscribed, is asked again with the new choice (the email at most once
    per ``CONFIRMATION_INTERVAL``); a confirmed one is left as it is (its owner unsubscribes to choose
    again), and nothing tells the caller which it was."""
    now = timezone.now()
    with transaction.atomic():
        subscriber, _ = Subscriber.objects.select_for_update().get_or_create(email=email.lower())
        if subscriber.active:
            return
        subscriber.components.set(components)
        recently = subscriber.confirmation_sent_at and now - subscriber.confirmation_sent_at < CONFIRMATION_INTERVAL
        subscriber.confirmed_at = subscriber.unsubscribed_at = None
        subscriber.confirmation_sent_at = subscriber.confirmation_sent_at if recently else now
        subscriber.save(update_fields=["confirmed_at", "unsubscribed_at", "confirmation_sent_at"])
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
        raise


@require_http_methods(["GET", "POST"])
def subscribe_page(request):
    form = SubscribeForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            subscribe(form.cleaned_data["email"], form.cleaned_data["components"])
        except Exception:  # the mail server: the person can try again; nothing was half done that matters
            log.exception("the confirmation email could not be sent")
            form.add_error(None, "The confirmation email could not be sent just now; please try again in a few "
                                 "minutes.")
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

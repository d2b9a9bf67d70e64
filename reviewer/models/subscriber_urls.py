"""The URLs customers give for their webhook and Slack subscriptions (docs/status-page.md, 'Webhook and
Slack subscribers'). They are untrusted public input that the outbox will POST to, so a URL is taken
only when it cannot point the product at itself or its network: https, no user or password in it,
and a host whose every address is public (no private, loopback, link-local, reserved, multicast or
unspecified address). A Slack URL must be on one of ``SUBSCRIBER_SLACK_HOSTS``.

``SUBSCRIBER_PRIVATE_ALLOWED`` lists hosts and networks taken despite their private address (for
tests and a company's own receivers on its network); only those may use http. The check runs when the
form is sent and again before each send, as a host's addresses can change in between, and the send
connects to the address the check resolved (``post_to_subscriber_url``).
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

import requests
from django.conf import settings
from requests.adapters import HTTPAdapter

MAX_URL_CHARS = 2000


class UnsafeURL(ValueError):
    """The URL is refused; the message says why, for the person who typed it."""


def _allowed_despite_private(host: str, addresses: list) -> bool:
    """True when the host, or each of its addresses, is listed in ``SUBSCRIBER_PRIVATE_ALLOWED``."""
    allowed = [entry.strip().lower() for entry in settings.SUBSCRIBER_PRIVATE_ALLOWED if entry.strip()]
    if host in allowed:
        return True
    networks = []
    for entry in allowed:
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            continue  # a host name
    return bool(addresses and networks) and all(any(a in n for n in networks) for a in addresses)


def _addresses(host: str, port: int) -> list:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise UnsafeURL(f"We could not find the host {host}; check the address.") from None
    return [ipaddress.ip_address(info[4][0].split("%", 1)[0]) for info in infos]


def _public(address) -> bool:
    """A globally reachable unicast address: not private, shared (100.64/10), loopback, link-local,
    reserved, multicast or unspecified, an IPv4-mapped IPv6 address judged by its IPv4 one."""
    address = getattr(address, "ipv4_mapped", None) or address
    return address.is_global and not address.is_multicast


def _checked(url: str, kind: str) -> tuple[str, list]:
    """``url`` as it will be used and its host's addresses; raises :class:`UnsafeURL` saying why not."""
    url = url.strip()
    if len(url) > MAX_URL_CHARS:
        raise UnsafeURL(f"The address is too long (at most {MAX_URL_CHARS} characters).")
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        raise UnsafeURL("Enter a full address such as https://example.com/status-hook.") from None
    host = (parts.hostname or "").lower()
    if parts.scheme not in ("https", "http") or not host:
        raise UnsafeURL("Enter a full address such as https://example.com/status-hook.")
    if parts.username is not None or parts.password is not None:
        raise UnsafeURL("Leave the user name and password out of the address; we sign each request instead.")
    if kind == "slack" and host not in settings.SUBSCRIBER_SLACK_HOSTS:
        raise UnsafeURL("Enter a Slack incoming-webhook address, on " + " or ".join(settings.SUBSCRIBER_SLACK_HOSTS)
                        + ".")
    addresses = _addresses(host, port or (443 if parts.scheme == "https" else 80))
    exempt = _allowed_despite_private(host, addresses)
    if parts.scheme != "https" and not exempt:
        raise UnsafeURL("Use an https address: updates are not sent unencrypted.")
    if not exempt and not all(_public(address) for address in addresses):
        raise UnsafeURL(f"The host {host} has a private or reserved address; we only send to public addresses.")
    return url, addresses


def check_subscriber_url(url: str, kind: str) -> str:
    """``url`` as it will be used, for a subscriber of ``kind`` ("webhook" or "slack"); raises
    :class:`UnsafeURL` saying why it is refused."""
    return _checked(url, kind)[0]


class _PinnedAdapter(HTTPAdapter):
    """Connects to the address that was checked, while TLS names the URL's host (SNI, and the
    certificate is checked against it)."""

    def __init__(self, hostname: str):
        self.hostname = hostname
        super().__init__(max_retries=0)

    def init_poolmanager(self, *args, **kwargs):
        kwargs["server_hostname"] = self.hostname
        super().init_poolmanager(*args, **kwargs)


def post_to_subscriber_url(url: str, kind: str, **options) -> requests.Response:
    """POST to a subscriber's URL once it passes the checks, connecting to the very address the check
    resolved (so no second DNS answer can point it elsewhere), redirects not followed. Raises
    :class:`UnsafeURL`, or what ``requests`` raises."""
    url, addresses = _checked(url, kind)
    parts = urlsplit(url)
    address = addresses[0]
    ip = f"[{address}]" if address.version == 6 else str(address)
    pinned = parts._replace(netloc=f"{ip}:{parts.port}" if parts.port else ip).geturl()
    options["headers"] = {**options.get("headers", {}), "Host": parts.netloc}
    options["allow_redirects"] = False
    with requests.Session() as session:
        session.mount(f"{parts.scheme}://", _PinnedAdapter(parts.hostname))
        return session.post(pinned, **options)

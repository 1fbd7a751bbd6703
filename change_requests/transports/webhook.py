"""Signed webhooks: the notification's JSON payload POSTed to the channel's URL.

The body is signed with HMAC-SHA256 under the channel's `secret`: header
`X-Registry-Signature: sha256=<hex>`. `X-Registry-Delivery` carries the
notification id, so a receiver can drop a redelivery after a crash between
sending and marking.

A webhook URL is typed by a person, and the worker that follows it sits inside
the network, so a URL must not turn the worker into a probe of that network:

- a target must be a public address: loopback, private, link-local (the cloud
  metadata address 169.254.169.254 among them), shared, reserved, multicast and
  unspecified addresses are refused, unless they fall in WEBHOOK_ALLOWED_NETWORKS
  (for the odd internal receiver); an IPv6 address that carries an IPv4 one
  (IPv4-mapped, 6to4 2002::/16, NAT64 64:ff9b::/96) is judged by that IPv4
  address, and Teredo (2001::/32), local-use NAT64 (64:ff9b:1::/48),
  IPv4-translated, IPv4-compatible and site-local addresses are refused;
- the URL is checked when the channel is created (its literal host: no DNS
  lookup there, since admin saves run inside a transaction), and again at every
  delivery after DNS resolution, against every address the name resolves to; the
  connection then goes to the address that was checked, so a second lookup
  cannot answer differently (DNS rebinding);
- redirects are never followed (a 3xx is a failed delivery);
- a failure is stored as one of a few fixed sentences: refused, answered HTTP
  <status>, or no answer. "Connection refused", timeouts and resets read the
  same, so the stored error cannot tell an open port from a closed one.
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import ipaddress
import json
import logging
import socket
import ssl
from urllib.parse import urlsplit

from django.conf import settings as django_settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

LABEL = "Signed webhook"
TIMEOUT_SECONDS = 10
ALLOWLIST_SETTING = "WEBHOOK_ALLOWED_NETWORKS"

log = logging.getLogger(__name__)

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class DeliveryFailed(Exception):
    """A webhook was not delivered. The message is safe to store and show: it never
    says how the connection failed, only that it did."""


def recipient(settings: dict) -> str:
    return str(settings.get("url", ""))


def settings_problems(settings: dict) -> list[str]:
    problems = []
    url = settings.get("url", "")
    try:
        URLValidator(schemes=["http", "https"])(url)
    except ValidationError:
        problems.append('A webhook channel needs "url": an http(s) URL.')
    else:
        problems += url_problems(url)
    if not isinstance(settings.get("secret", ""), str):
        problems.append('A webhook\'s "secret" is a string (it signs each body).')
    return problems


# --- which targets a webhook may reach ---------------------------------------------

def allowed_networks() -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    return [ipaddress.ip_network(n, strict=False) for n in getattr(django_settings, ALLOWLIST_SETTING, [])]


# IPv6 ranges that carry an IPv4 address, or tunnel to one: the worker's packets would reach
# the IPv4 address inside (2002:7f00:1:: is 127.0.0.1 through a 6to4 relay).
_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # RFC 6052; DNS64 writes public IPv4-only hosts this way
_REFUSED_V6 = (  # judged whole: tunnels and translations that are no public receiver's address
    (ipaddress.ip_network("2001::/32"), "a Teredo"),
    (ipaddress.ip_network("64:ff9b:1::/48"), "a local-use NAT64"),
    (ipaddress.ip_network("::ffff:0:0:0/96"), "an IPv4-translated"),
    (ipaddress.ip_network("::/96"), "an IPv4-compatible"),
    (ipaddress.ip_network("fec0::/10"), "a site-local"),
)


def embedded_ipv4(address: IPAddress) -> tuple[str, ipaddress.IPv4Address] | None:
    """(the kind of IPv6 address, the IPv4 address it carries) for an IPv4-mapped,
    6to4 or NAT64 address, whose packets end at that IPv4 address; else None."""
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return "an IPv4-mapped", address.ipv4_mapped
    if address.sixtofour is not None:
        return "a 6to4", address.sixtofour
    if address in _NAT64:
        return "a NAT64", ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def address_problem(address: IPAddress) -> str:
    """What kind of non-public address `address` is ("a loopback address"), or "" when a
    webhook may reach it (a public address, or one in WEBHOOK_ALLOWED_NETWORKS). An IPv6
    address carrying an IPv4 one is judged by the IPv4 address it reaches."""
    if any(address in network for network in allowed_networks()):
        return ""
    carried = embedded_ipv4(address)
    if carried is not None:
        kind, inner = carried
        problem = address_problem(inner)
        return f"{kind} address of {inner}, {problem}" if problem else ""
    for network, kind in _REFUSED_V6:
        if address.version == 6 and address in network and not address.is_loopback and not address.is_unspecified:
            return f"{kind} address"
    for kind, is_it in (("a loopback", address.is_loopback), ("a link-local", address.is_link_local),
                        ("a private", address.is_private), ("a multicast", address.is_multicast),
                        ("an unspecified", address.is_unspecified), ("a reserved", address.is_reserved)):
        if is_it:
            return f"{kind} address"
    return "" if address.is_global else "a non-public address"


def literal_address(host: str) -> IPAddress | None:
    """The address a host names without DNS: an IP literal, including the IPv4
    shorthands the C resolver accepts ("127.1", "2130706433", "0x7f.0.0.1")."""
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


def url_problems(url: str) -> list[str]:
    """What is wrong with `url` as a webhook target, judged from the URL alone."""
    host = urlsplit(url).hostname or ""
    address = literal_address(host)
    if address is None and (host == "localhost" or host.endswith(".localhost")):
        address = ipaddress.ip_address("127.0.0.1")
    problem = address_problem(address) if address is not None else ""
    if problem:
        return [f"A webhook may not point at {host}: it is {problem}. Webhooks reach public addresses only "
                f"(an internal receiver's network can be listed in {ALLOWLIST_SETTING})."]
    return []


def resolve(host: str, port: int) -> list[IPAddress]:
    """Every address `host` resolves to, each allowed, first the one to connect to.
    DeliveryFailed when it does not resolve, or when any address is refused: a name
    with one public and one internal address is refused, whichever comes first."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        raise DeliveryFailed(f"{host} does not resolve") from None
    addresses = list(dict.fromkeys(ipaddress.ip_address(info[4][0].split("%")[0]) for info in infos))
    for address in addresses:
        problem = address_problem(address)
        if problem:
            raise DeliveryFailed(f"refused: {host} resolves to {problem}; webhooks reach public addresses only "
                                 f"(see {ALLOWLIST_SETTING})")
    if not addresses:
        raise DeliveryFailed(f"{host} does not resolve")
    return addresses


# --- sending -----------------------------------------------------------------------

class _PinnedHTTPConnection(http.client.HTTPConnection):
    """Connects to the address that was checked, whatever the name resolves to now."""

    def __init__(self, host: str, port: int, *, address: IPAddress, timeout: float):
        super().__init__(host, port, timeout=timeout)
        self._address = str(address)

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """HTTPS to the checked address; the certificate is verified against the URL's host name."""

    def __init__(self, host: str, port: int, *, address: IPAddress, timeout: float):
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self._address = str(address)

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def send(notification, settings: dict) -> None:
    """POST one notification; DeliveryFailed (a storable sentence) on any failure."""
    url = urlsplit(notification.recipient)
    host, scheme = url.hostname or "", url.scheme
    if scheme not in ("http", "https") or not host:
        raise DeliveryFailed("refused: not an http(s) URL")
    problems = url_problems(notification.recipient)
    if problems:
        raise DeliveryFailed("refused: " + problems[0])
    port = url.port or (443 if scheme == "https" else 80)
    address = resolve(host, port)[0]

    payload = {**notification.payload, "delivery": notification.pk}
    body = json.dumps(payload, sort_keys=True).encode()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "dataset-registry-webhook/1",
        "X-Registry-Event": payload.get("event", ""),
        "X-Registry-Delivery": str(notification.pk),
    }
    secret = settings.get("secret") or ""
    if secret:
        headers["X-Registry-Signature"] = sign(secret, body)
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    connection_class = _PinnedHTTPSConnection if scheme == "https" else _PinnedHTTPConnection
    connection = connection_class(host, port, address=address, timeout=TIMEOUT_SECONDS)
    try:
        connection.request("POST", path, body=body, headers=headers)
        status = connection.getresponse().status
    except Exception as exc:  # refused, reset, timed out, TLS: one sentence for all, the detail in the log only
        log.info("webhook to %s (%s) failed: %r", host, address, exc)
        raise DeliveryFailed(f"no answer from {host}: the connection failed or timed out") from None
    finally:
        connection.close()
    if 300 <= status < 400:
        raise DeliveryFailed(f"{host} answered HTTP {status}, a redirect; webhooks do not follow redirects")
    if not 200 <= status < 300:
        raise DeliveryFailed(f"{host} answered HTTP {status}")

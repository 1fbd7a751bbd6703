"""Where a team webhook may point (issue 15, point 11: webhook SSRF).

A webhook reaches public addresses only, checked when the channel is created and
again at delivery after DNS resolution; redirects are not followed; a failure is
stored without saying how the connection failed. The receivers here are real HTTP
servers on 127.0.0.1, so the tests that deliver let loopback through with
WEBHOOK_ALLOWED_NETWORKS, as an operator would for an internal receiver."""

from __future__ import annotations

import ipaddress
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.exceptions import ValidationError

from change_requests.models import Notification, TeamChannel
from change_requests.transports import webhook
from change_requests.workflows import open_change_request
from tests.servers import free_port

from .conftest import proposed_document, report_for
from .test_clock_and_notifications import Receiver

pytestmark = pytest.mark.django_db


class Redirector:
    """A real HTTP server on loopback that answers every POST with a redirect to `location`."""

    def __init__(self, location: str):
        self.calls = 0
        redirector = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                redirector.calls += 1
                self.rfile.read(int(self.headers["Content-Length"]))
                self.send_response(302)
                self.send_header("Location", location)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class RawListener:
    """A TCP port that accepts and then says nothing (silent) or hangs up at once (not HTTP)."""

    def __init__(self, *, hang_up: bool):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/hook"
        self.accepted: list[socket.socket] = []
        self.hang_up = hang_up
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            if self.hang_up:
                conn.close()
            else:
                self.accepted.append(conn)

    def close(self):
        for conn in self.accepted:
            conn.close()
        self.sock.close()


def open_request(contract, owner, capture):
    doc = proposed_document()
    with capture(execute=True):
        return open_change_request(contract, doc, by=owner, report=report_for(doc))


def errors_by_url() -> dict[str, str]:
    return dict(Notification.objects.filter(channel="webhook").values_list("recipient", "last_error"))


@pytest.mark.parametrize("url", [
    "http://127.0.0.1:8000/hook", "http://localhost/hook", "http://api.localhost/hook",
    "http://169.254.169.254/latest/meta-data/", "http://10.1.2.3/hook", "http://192.168.0.10/hook",
    "http://172.16.0.1/hook", "http://100.100.100.200/hook", "http://0.0.0.0/hook", "http://[::1]/hook",
    "http://[::ffff:127.0.0.1]/hook", "http://[fd00:ec2::254]/hook",
])
def test_a_webhook_to_an_internal_address_is_refused_when_the_channel_is_created(consumer_team, url):
    with pytest.raises(ValidationError) as refused:
        TeamChannel.objects.add_webhook(consumer_team, url=url)
    [message] = refused.value.message_dict["settings"]
    assert message.startswith("A webhook may not point at ") and "Webhooks reach public addresses only" in message
    assert "WEBHOOK_ALLOWED_NETWORKS" in message
    assert not TeamChannel.objects.exists()


@pytest.mark.parametrize("host", ["127.1", "2130706433", "0x7f.0.0.1"])
def test_shorthand_spellings_of_loopback_are_refused_too(consumer_team, host):
    with pytest.raises(ValidationError):
        TeamChannel.objects.add_webhook(consumer_team, url=f"http://{host}/hook")
    # and at delivery, should such a row exist: the resolver would read them as 127.0.0.1
    assert webhook.url_problems(f"http://{host}/hook") != []


@pytest.mark.parametrize("url", ["https://hooks.example.com/registry", "http://93.184.216.34/hook"])
def test_a_webhook_to_a_public_address_is_accepted(consumer_team, url):
    assert TeamChannel.objects.add_webhook(consumer_team, url=url).recipient == url


def test_the_allowlist_lets_exactly_its_networks_through(consumer_team, settings):
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.1/32", "10.20.0.0/16"]
    TeamChannel.objects.add_webhook(consumer_team, url="http://127.0.0.1:9000/hook")
    TeamChannel.objects.add_webhook(consumer_team, url="http://10.20.3.4/hook")
    for outside in ("http://127.0.0.2/hook", "http://10.21.0.1/hook", "http://169.254.169.254/"):
        with pytest.raises(ValidationError):
            TeamChannel.objects.add_webhook(consumer_team, url=outside)


def test_the_allowlist_setting_is_read_strictly(monkeypatch):
    from django.core.exceptions import ImproperlyConfigured

    from registry.env import env_networks

    monkeypatch.setenv("WEBHOOK_ALLOWED_NETWORKS", "10.20.0.0/16, 127.0.0.1")
    assert env_networks("WEBHOOK_ALLOWED_NETWORKS") == ["10.20.0.0/16", "127.0.0.1/32"]
    monkeypatch.setenv("WEBHOOK_ALLOWED_NETWORKS", "10.20.0.0/16,hooks.internal")
    with pytest.raises(ImproperlyConfigured, match="'hooks.internal' is not an IP network or address"):
        env_networks("WEBHOOK_ALLOWED_NETWORKS")


def test_a_channel_whose_address_is_no_longer_allowed_is_refused_at_delivery(
        contract, owner, consumer_team, settings, django_capture_on_commit_callbacks):
    receiver = Receiver()
    try:
        settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.1/32"]
        TeamChannel.objects.add_webhook(consumer_team, url=receiver.url)
        settings.WEBHOOK_ALLOWED_NETWORKS = []

        open_request(contract, owner, django_capture_on_commit_callbacks)

        assert receiver.calls == []
        hook = Notification.objects.get(channel="webhook")
        assert hook.sent_at is None
        assert hook.last_error == ("DeliveryFailed: refused: A webhook may not point at 127.0.0.1: it is a loopback "
                                   "address. Webhooks reach public addresses only (an internal receiver's network "
                                   "can be listed in WEBHOOK_ALLOWED_NETWORKS).")
    finally:
        receiver.close()


@pytest.fixture
def loopback_name(monkeypatch):
    """A host name (not an IP literal, not *localhost) that resolves to loopback. DNS is not
    ours to run in a test, so the resolver gets one record for a name under the reserved
    .test domain (which never resolves anywhere else); every other name resolves as usual."""
    name = "hooks.receiver.test"
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        return real("127.0.0.1" if host == name else host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return name


def test_a_name_that_resolves_to_an_internal_address_is_refused_after_resolution(
        contract, owner, consumer_team, loopback_name, django_capture_on_commit_callbacks):
    receiver = Receiver()
    try:
        url = receiver.url.replace("127.0.0.1", loopback_name)
        # A name is judged after DNS only: say it resolved to a public address when the channel
        # was created (the row is written as the creation check would have let it through).
        TeamChannel.objects.create(team=consumer_team, kind="webhook", settings={"url": url, "secret": ""})

        open_request(contract, owner, django_capture_on_commit_callbacks)

        assert receiver.calls == []
        assert errors_by_url() == {url: f"DeliveryFailed: refused: {loopback_name} resolves to a loopback address; "
                                        "webhooks reach public addresses only (see WEBHOOK_ALLOWED_NETWORKS)"}
    finally:
        receiver.close()


def test_an_allowed_name_is_delivered_to_the_address_that_was_checked(
        contract, owner, consumer_team, loopback_name, loopback_webhooks, django_capture_on_commit_callbacks):
    receiver = Receiver()
    try:
        url = receiver.url.replace("127.0.0.1", loopback_name)
        TeamChannel.objects.create(team=consumer_team, kind="webhook", settings={"url": url, "secret": "s3cret"})

        open_request(contract, owner, django_capture_on_commit_callbacks)

        [call] = receiver.calls
        assert call["headers"]["Host"] == f"{loopback_name}:{receiver.server.server_address[1]}"
        assert Notification.objects.get(channel="webhook").sent_at is not None
    finally:
        receiver.close()


def test_a_redirect_is_not_followed_even_to_an_allowed_host(
        contract, owner, consumer_team, loopback_webhooks, django_capture_on_commit_callbacks):
    inside = Receiver()
    redirector = Redirector(location=inside.url)
    try:
        TeamChannel.objects.add_webhook(consumer_team, url=redirector.url)

        open_request(contract, owner, django_capture_on_commit_callbacks)

        assert redirector.calls == 1 and inside.calls == []
        hook = Notification.objects.get(channel="webhook")
        assert hook.sent_at is None
        assert hook.last_error == ("DeliveryFailed: 127.0.0.1 answered HTTP 302, a redirect; "
                                   "webhooks do not follow redirects")
    finally:
        redirector.close()
        inside.close()


def test_the_stored_error_does_not_tell_an_open_port_from_a_closed_one(
        contract, owner, consumer_team, loopback_webhooks, monkeypatch, django_capture_on_commit_callbacks):
    monkeypatch.setattr(webhook, "TIMEOUT_SECONDS", 0.5)
    closed = f"http://127.0.0.1:{free_port()}/hook"  # nothing listens there
    silent, not_http = RawListener(hang_up=False), RawListener(hang_up=True)
    try:
        for url in (closed, silent.url, not_http.url):
            TeamChannel.objects.add_webhook(consumer_team, url=url)

        open_request(contract, owner, django_capture_on_commit_callbacks)

        errors = errors_by_url()
        assert set(errors) == {closed, silent.url, not_http.url}
        assert set(errors.values()) == {"DeliveryFailed: no answer from 127.0.0.1: the connection failed or timed out"}
    finally:
        silent.close()
        not_http.close()


SPECIAL_PURPOSE = {  # an IPv6 address the worker could be sent to, and what the refusal calls it
    "2002:7f00:1::": "a 6to4 address of 127.0.0.1, a loopback address",
    "2002:a9fe:a9fe::1": "a 6to4 address of 169.254.169.254, a link-local address",
    "2001:0:4136:e378:8000:63bf:3fff:fdd2": "a Teredo address",
    "64:ff9b::7f00:1": "a NAT64 address of 127.0.0.1, a loopback address",
    "64:ff9b::a00:1": "a NAT64 address of 10.0.0.1, a private address",
    "64:ff9b:1::808:808": "a local-use NAT64 address",
    "::ffff:169.254.169.254": "an IPv4-mapped address of 169.254.169.254, a link-local address",
    "::127.0.0.1": "an IPv4-compatible address",
    "::ffff:0:7f00:1": "an IPv4-translated address",
    "fec0::1": "a site-local address",
}


@pytest.mark.parametrize(("address", "kind"), SPECIAL_PURPOSE.items())
def test_ipv6_addresses_that_reach_an_internal_ipv4_one_are_refused_when_the_channel_is_created(
        consumer_team, address, kind):
    with pytest.raises(ValidationError) as refused:
        TeamChannel.objects.add_webhook(consumer_team, url=f"http://[{address}]/hook")
    [message] = refused.value.message_dict["settings"]
    assert f"it is {kind}." in message


@pytest.fixture
def names_for(monkeypatch):
    """Names under the reserved .test domain resolving to the addresses given (the resolver
    answers them as it answers an IP literal); every other name resolves as usual."""
    records: dict[str, str] = {}
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        return real(records.get(host, host), port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return records


@pytest.mark.parametrize(("address", "kind"), SPECIAL_PURPOSE.items())
def test_a_name_resolving_to_a_special_purpose_ipv6_address_is_refused_at_delivery(names_for, address, kind):
    names_for["hooks.receiver.test"] = address
    with pytest.raises(webhook.DeliveryFailed) as refused:
        webhook.resolve("hooks.receiver.test", 80)
    assert str(refused.value) == (f"refused: hooks.receiver.test resolves to {kind}; webhooks reach public "
                                  "addresses only (see WEBHOOK_ALLOWED_NETWORKS)")


@pytest.mark.parametrize("address", ["2002:5db8:d822::1", "64:ff9b::5db8:d822", "::ffff:93.184.216.34",
                                     "2606:2800:220:1:248:1893:25c8:1946"])
def test_ipv6_addresses_reaching_a_public_ipv4_one_are_delivered_to(names_for, address):
    """6to4 and NAT64 of a public address (DNS64 writes IPv4-only receivers this way) are public."""
    names_for["hooks.receiver.test"] = address
    assert webhook.resolve("hooks.receiver.test", 80) == [ipaddress.ip_address(address)]


def test_the_allowlist_also_lets_through_the_ipv6_forms_of_its_networks(settings):
    settings.WEBHOOK_ALLOWED_NETWORKS = ["10.20.0.0/16"]
    assert webhook.address_problem(ipaddress.ip_address("64:ff9b::a14:304")) == ""
    assert webhook.address_problem(ipaddress.ip_address("2002:a14:304::")) == ""
    assert webhook.address_problem(ipaddress.ip_address("2002:a15:304::")) != ""

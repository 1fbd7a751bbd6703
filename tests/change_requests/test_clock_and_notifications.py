"""The clock: notify on open, remind before the deadline, escalate after it, never twice."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import time_machine
from django.core import mail
from django.utils import timezone

from change_requests.models import ChangeRequest, Notification, ReviewPolicy, TeamChannel
from change_requests.workflows import open_change_request, run_clock
from registry.models import AuditEvent
from tests.conftest import make_user

from .conftest import proposed_document, report_for

pytestmark = pytest.mark.django_db(transaction=False)


@pytest.fixture
def start(db):
    """A fixed moment for the request to open; the clock is moved from there."""
    with time_machine.travel(datetime(2026, 3, 2, 9, 0, tzinfo=UTC), tick=False) as traveller:
        yield traveller


@pytest.fixture
def opened(start, contract, owner, django_capture_on_commit_callbacks):
    doc = proposed_document()
    with django_capture_on_commit_callbacks(execute=True):
        request = open_change_request(contract, doc, by=owner, report=report_for(doc))
    return request


class Receiver:
    """A real HTTP server on a free loopback port that records what it is sent."""

    def __init__(self, status: int = 200):
        self.calls: list[dict] = []
        self.status = status
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                status = receiver.status
                receiver.calls.append({"headers": dict(self.headers), "body": body, "status": status})
                self.send_response(status)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/registry"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver(loopback_webhooks):
    r = Receiver()
    yield r
    r.close()


def test_every_member_of_each_required_team_is_emailed_when_a_request_opens(opened, consumer, consumer_team):
    colleague = make_user("frank")
    consumer_team.memberships.create(user=colleague)  # joined after opening: not in this mail
    assert [m.to for m in mail.outbox] == [[consumer.email]]
    message = mail.outbox[0]
    assert "retail.checkout.order_placed" in message.subject
    assert f"/change-requests/{opened.pk}/" in message.body
    assert "2026-03-09 09:00 UTC" in message.body  # the 7-day default deadline
    assert Notification.objects.get().sent_at is not None


def test_the_team_webhook_receives_a_signed_body(start, contract, owner, consumer_team, receiver, django_capture_on_commit_callbacks):
    TeamChannel.objects.add_webhook(consumer_team, url=receiver.url, secret="s3cret")
    doc = proposed_document()
    with django_capture_on_commit_callbacks(execute=True):
        request = open_change_request(contract, doc, by=owner, report=report_for(doc))
    [call] = receiver.calls
    expected = "sha256=" + hmac.new(b"s3cret", call["body"], hashlib.sha256).hexdigest()
    assert call["headers"]["X-Registry-Signature"] == expected
    payload = json.loads(call["body"])
    assert payload["event"] == "change_request.opened"
    assert payload["team"] == "analytics"
    assert payload["change_request"]["id"] == request.pk
    assert call["headers"]["X-Registry-Delivery"] == str(payload["delivery"])


def test_nothing_is_sent_before_the_transaction_commits(start, contract, owner):
    doc = proposed_document()
    open_change_request(contract, doc, by=owner, report=report_for(doc))  # test transaction still open
    assert mail.outbox == []
    assert Notification.objects.unsent().count() == 1


def test_a_failed_webhook_is_retried_and_sent_once_it_answers(start, contract, owner, consumer_team, loopback_webhooks,
                                                              django_capture_on_commit_callbacks):
    from celery.exceptions import Retry

    from change_requests.tasks import deliver_change_request_notifications as deliver_task

    failing = Receiver(status=503)
    try:
        TeamChannel.objects.add_webhook(consumer_team, url=failing.url, secret="s3cret")
        doc = proposed_document()
        with django_capture_on_commit_callbacks(execute=True):
            request = open_change_request(contract, doc, by=owner, report=report_for(doc))
        hook = Notification.objects.get(channel="webhook")
        assert hook.sent_at is None and "503" in hook.last_error
        with pytest.raises(Retry):
            deliver_task.apply(args=[request.pk])
        hook.refresh_from_db()
        assert (hook.attempts, len(failing.calls)) == (2, 2)
        failing.status = 200
        assert deliver_task.apply(args=[request.pk]).get() == {"sent": 1}
        hook.refresh_from_db()
        assert hook.sent_at is not None and hook.attempts == 3
        assert deliver_task.apply(args=[request.pk]).get() == {"sent": 0}
        assert len(failing.calls) == 3  # never again once sent
        assert len(mail.outbox) == 1  # the e-mail went out once, whatever the webhook did
    finally:
        failing.close()


def test_the_waiting_teams_are_reminded_a_day_before_the_deadline(opened, start, consumer, django_capture_on_commit_callbacks):
    mail.outbox.clear()
    start.move_to(opened.deadline_at - timedelta(days=1, minutes=1))
    with django_capture_on_commit_callbacks(execute=True):
        assert run_clock().reminded == []
    start.move_to(opened.deadline_at - timedelta(hours=23))
    with django_capture_on_commit_callbacks(execute=True):
        assert run_clock().reminded == [opened.pk]
    assert [m.to for m in mail.outbox] == [[consumer.email]]
    assert mail.outbox[0].subject.startswith("[Dataset registry] Reminder")


def test_a_team_that_acknowledged_is_not_reminded(opened, start, consumer_team, consumer, dataset, other_team, outsider, django_capture_on_commit_callbacks):
    opened.acknowledge(consumer_team, by=consumer)
    assert opened.state == "approved"
    mail.outbox.clear()
    start.move_to(opened.deadline_at - timedelta(hours=1))
    with django_capture_on_commit_callbacks(execute=True):
        result = run_clock()
    assert result.reminded == []  # approved requests are not on the clock
    assert not any("Reminder" in m.subject for m in mail.outbox)


def test_after_the_deadline_the_request_escalates_to_admins_and_the_owner(opened, start, admin, owner, django_capture_on_commit_callbacks):
    start.move_to(opened.deadline_at + timedelta(seconds=1))
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        result = run_clock()
    assert result.escalated == [opened.pk]
    opened.refresh_from_db()
    assert opened.escalated_at == opened.deadline_at + timedelta(seconds=1)
    assert opened.state == "open"
    assert sorted(m.to[0] for m in mail.outbox) == sorted([admin.email, owner.email])
    assert all("Escalated" in m.subject and "analytics (waiting)" in m.body for m in mail.outbox)
    event = AuditEvent.objects.get(action="change_request.escalated")
    assert event.after["waiting_for"] == ["analytics"]


def test_running_the_clock_twice_sends_nothing_twice(opened, start, admin, django_capture_on_commit_callbacks):
    start.move_to(opened.deadline_at - timedelta(hours=2))
    for _ in range(2):
        with django_capture_on_commit_callbacks(execute=True):
            run_clock()
    start.move_to(opened.deadline_at + timedelta(minutes=5))
    for _ in range(2):
        with django_capture_on_commit_callbacks(execute=True):
            run_clock()
    events = list(Notification.objects.values_list("event", flat=True))
    assert sorted(events) == ["escalated", "escalated", "opened", "reminder"]
    assert len(mail.outbox) == 4
    assert AuditEvent.objects.filter(action="change_request.escalated").count() == 1
    assert AuditEvent.objects.filter(action="change_request.reminded").count() == 1


def test_queueing_the_same_event_again_stores_nothing_new(opened, start):
    from change_requests import notifications

    notifications.queue_opened(opened, [r.team for r in opened.reviews.all()])
    assert Notification.objects.filter(event="opened").count() == 1


def test_the_beat_task_is_scheduled_and_runs_the_clock(opened, start, settings):
    from change_requests.tasks import change_request_clock

    assert settings.CELERY_BEAT_SCHEDULE["change-requests-clock"]["task"] == "contracts_app.change_request_clock"
    start.move_to(opened.deadline_at + timedelta(minutes=1))
    assert change_request_clock.apply().get()["escalated"] == [opened.pk]


def test_a_dataset_review_period_sets_the_deadline(start, contract, dataset, owner):
    ReviewPolicy.objects.create(dataset=dataset, review_period=timedelta(days=14))
    doc = proposed_document()
    request = open_change_request(contract, doc, by=owner, report=report_for(doc))
    assert request.deadline_at == timezone.now() + timedelta(days=14)
    assert request.remind_at == request.deadline_at - timedelta(days=1)


def test_a_short_period_reminds_no_earlier_than_half_way(start, contract, dataset, owner):
    ReviewPolicy.objects.create(dataset=dataset, review_period=timedelta(hours=12))
    doc = proposed_document()
    request = open_change_request(contract, doc, by=owner, report=report_for(doc))
    assert request.remind_at == timezone.now() + timedelta(hours=6)


def test_a_request_with_a_deadline_of_its_own(start, contract, owner):
    doc = proposed_document()
    request = open_change_request(contract, doc, by=owner, report=report_for(doc), deadline=timedelta(days=3))
    assert ChangeRequest.objects.get().deadline_at == request.deadline_at == timezone.now() + timedelta(days=3)


def test_the_owner_team_hears_when_the_last_team_acknowledges(opened, consumer_team, consumer, owner, teammate, django_capture_on_commit_callbacks):
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        opened.acknowledge(consumer_team, by=consumer)
    assert sorted(m.to[0] for m in mail.outbox) == [owner.email, teammate.email]
    assert mail.outbox[0].subject.startswith("[Dataset registry] Approved")


def test_an_objection_does_not_tell_the_owner_it_is_approved(opened, consumer_team, consumer, django_capture_on_commit_callbacks):
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        opened.object(consumer_team, by=consumer, comment="Not yet.")
    assert mail.outbox == []


def test_the_clock_sends_what_a_lost_task_never_sent(start, contract, owner, consumer):
    doc = proposed_document()
    open_change_request(contract, doc, by=owner, report=report_for(doc))  # its task never runs
    assert run_clock().sent == 0  # fresh rows belong to their own task and its backoff
    start.shift(timedelta(minutes=16))
    assert run_clock().sent == 1
    assert [m.to for m in mail.outbox] == [[consumer.email]]
    assert run_clock().sent == 0

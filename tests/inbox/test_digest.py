"""The inbox's daily digest: one e-mail a day to each person with something waiting
(new items first), one message per team channel, never twice the same day."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core import mail
from django.utils import timezone

from change_requests.digest import InboxDigest, run_digest
from change_requests.notifications import TeamChannel
from tests.inbox.test_inbox import contract, contract_store, stale, waiting  # noqa: F401 - fixtures

pytestmark = pytest.mark.django_db


def test_carol_gets_one_email_a_day_naming_what_waits_and_what_is_new(waiting, consumer, owner, dataset, settings):  # noqa: F811
    settings.SITE_URL = "https://registry.example"
    mail.outbox.clear()
    assert run_digest() == {"queued": 1, "sent": 1, "failed": 0}  # alice's inbox is empty: no mail for her
    (message,) = mail.outbox
    assert message.to == ["carol@example.com"]
    assert message.subject == "[Dataset registry] Your inbox: 1 waiting, 1 new"
    assert "New since the last digest:" in message.body
    assert f"Analytics must answer change request #{waiting.pk}" in message.body
    assert f"https://registry.example/change-requests/{waiting.pk}/" in message.body

    assert run_digest() == {"queued": 0, "sent": 0, "failed": 0}  # the same day: nothing again
    mail.outbox.clear()
    stale(dataset)  # alice's team now has a stale dataset
    tomorrow = timezone.now() + timedelta(days=1)
    run_digest(tomorrow)
    by_person = {m.to[0]: m for m in mail.outbox}
    assert set(by_person) == {"carol@example.com", "alice@example.com", "bob@example.com"}
    carol = by_person["carol@example.com"]
    assert carol.subject.endswith("1 waiting, 0 new") and "Still waiting:" in carol.body
    assert "New since the last digest:" not in carol.body


def test_a_team_channel_gets_its_teams_inbox(waiting, consumer_team, settings, monkeypatch):  # noqa: F811
    sent = []
    from change_requests.transports import webhook

    monkeypatch.setattr(webhook, "send", lambda row, channel_settings: sent.append(row.payload))
    settings.WEBHOOK_ALLOWED_NETWORKS = ["10.0.0.0/8"]
    TeamChannel.objects.add_webhook(consumer_team, url="https://hooks.example/analytics")
    run_digest()
    (payload,) = sent
    assert payload["event"] == "inbox.digest" and payload["team"] == "analytics" and payload["count"] == 1
    assert payload["items"][0]["kind"] == "acknowledge" and payload["items"][0]["new"] is True
    assert InboxDigest.objects.filter(channel="webhook", sent_at__isnull=False).count() == 1


def test_a_failed_send_is_kept_and_tried_again(waiting, consumer, monkeypatch):  # noqa: F811
    from change_requests.transports import email

    def down(row, channel_settings):
        raise OSError("mail server down")

    monkeypatch.setattr(email, "send", down)
    assert run_digest()["failed"] == 1
    row = InboxDigest.objects.get()
    assert row.sent_at is None and "mail server down" in row.last_error
    monkeypatch.undo()
    assert run_digest() == {"queued": 0, "sent": 1, "failed": 0}


def test_beat_sends_the_digest_once_a_day_at_the_configured_hour(settings):
    import change_requests.tasks  # noqa: F401 - registers the task
    from registry.celery import app

    entry = app.conf.beat_schedule["inbox-digest"]
    assert entry["task"] == "change_requests.inbox_digest" and entry["task"] in app.tasks
    assert entry["schedule"].hour == {settings.INBOX_DIGEST_HOUR} and entry["schedule"].minute == {0}

"""Sunset reminders at 30, 7 and 1 day(s) to the teams still reading a lane, through their
channels (a real Celery worker sends them) and their inbox; and a sunset cannot undercut a
team's "migrating by" date without an audited override."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import date, timedelta

import pytest
import redis
from django.utils import timezone
from registry_client.compat import check_compatibility

from change_requests.models import TeamChannel
from change_requests.workflows import open_change_request
from lanes.models import Lane, LaneAction, LaneError, LaneNotice, LaneRead, LaneReminder
from lanes.reminders import due_step, queue_sunset_reminders
from registry.hooks import inbox_for
from registry.models import AuditEvent
from tests.celery_broker import ROOT, database_url, publishing_to, stop, wait_for
from tests.change_requests.test_clock_and_notifications import Receiver

from .conftest import optional_column, version, without_viability


def today() -> date:
    return timezone.localdate()


def reads_lane_2(contract, team, reader="token:1"):
    return LaneRead.objects.create(contract=contract, reader=reader, reader_label="nightly job", team=team, major=2,
                                   version="2.1", selector="2.x")


def test_the_step_due_is_the_nearest_one_not_below_the_days_left():
    sunset = date(2027, 1, 31)
    assert due_step(sunset, sunset - timedelta(days=31)) is None
    assert due_step(sunset, sunset - timedelta(days=30)) == 30
    assert due_step(sunset, sunset - timedelta(days=12)) == 30
    assert due_step(sunset, sunset - timedelta(days=7)) == 7
    assert due_step(sunset, sunset - timedelta(days=5)) == 7
    assert due_step(sunset, sunset - timedelta(days=1)) == 1
    assert due_step(sunset, sunset) is None


def test_teams_still_reading_are_reminded_once_per_step(two_lanes, owner, consumer_team, other_team, consumer):
    reads_lane_2(two_lanes, consumer_team)
    lane = Lane.of(two_lanes, 2)
    lane.set_dates(deprecation_date=today(), sunset_date=today() + timedelta(days=30), by=owner)
    assert len(queue_sunset_reminders(today())) == 1
    assert queue_sunset_reminders(today()) == []  # a second pass the same day sends nothing
    reminder = LaneReminder.objects.get()
    assert (reminder.team_id, reminder.days_before) == (consumer_team.pk, 30)
    notice = LaneNotice.objects.get(reminder=reminder)
    assert notice.recipient == consumer.email and "30 days" in notice.subject
    assert len(queue_sunset_reminders(today() + timedelta(days=23))) == 1
    assert len(queue_sunset_reminders(today() + timedelta(days=29))) == 1
    assert sorted(LaneReminder.objects.values_list("days_before", flat=True)) == [1, 7, 30]


def test_an_extension_starts_the_reminders_again(two_lanes, owner, admin, consumer_team):
    reads_lane_2(two_lanes, consumer_team)
    lane = Lane.of(two_lanes, 2)
    lane.set_dates(deprecation_date=today(), sunset_date=today() + timedelta(days=1), by=owner)
    queue_sunset_reminders(today())
    lane.extend(until=today() + timedelta(days=30), by=admin, reason="quarter close")
    assert len(queue_sunset_reminders(today())) == 1


def test_a_team_still_reading_a_deprecated_lane_has_it_in_its_inbox(two_lanes, owner, consumer, consumer_team,
                                                                   outsider, other_team):
    reads_lane_2(two_lanes, consumer_team)
    Lane.of(two_lanes, 2).set_dates(deprecation_date=today(), sunset_date=today() + timedelta(days=7), by=owner)
    items = inbox_for(consumer, [consumer_team.pk])
    lane_items = [i for i in items if i.kind.startswith("lane_")]
    assert len(lane_items) == 1
    item = lane_items[0]
    assert item.kind == "lane_sunset" and item.due == today() + timedelta(days=7) and item.team_id == consumer_team.pk
    assert item.url == "/contracts/lab.analytics.cell_count/lanes/"
    assert "Analytics must move off lab.analytics.cell_count 2.x" in item.title
    assert not [i for i in inbox_for(outsider, [other_team.pk]) if i.kind.startswith("lane_")]


def test_the_inbox_page_shows_a_sunset_day_like_any_deadline(two_lanes, owner, consumer, consumer_team, client):
    reads_lane_2(two_lanes, consumer_team)
    sunset = today() + timedelta(days=7)
    Lane.of(two_lanes, 2).set_dates(deprecation_date=today(), sunset_date=sunset, by=owner)
    client.force_login(consumer)
    page = client.get("/inbox/").content.decode()
    assert f"due {sunset:%Y-%m-%d} 00:00 UTC" in page


def test_a_lane_that_is_not_deprecated_is_not_in_the_inbox(two_lanes, consumer, consumer_team):
    reads_lane_2(two_lanes, consumer_team)
    assert not [i for i in inbox_for(consumer, [consumer_team.pk]) if i.kind.startswith("lane_")]


def test_a_sunset_before_a_team_s_migration_date_needs_an_admin_s_audited_override(
        two_lanes, owner, consumer, consumer_team, admin):
    document = without_viability("4.0")
    document["columns"].append(optional_column("operator"))
    base = version("2.1", extra=optional_column("operator"))
    request = open_change_request(two_lanes, document, by=owner,
                                  report=check_compatibility([base], document, "BACKWARD").to_dict())
    request.migrate_by(consumer_team, by=consumer, date=today() + timedelta(days=60))
    lane = Lane.of(two_lanes, 2)
    with pytest.raises(LaneError, match="migrating off lane 2.x .* by"):
        lane.set_dates(deprecation_date=today(), sunset_date=today() + timedelta(days=30), by=owner)
    lane.set_dates(deprecation_date=today(), sunset_date=today() + timedelta(days=60), by=owner)  # on the date: fine
    with pytest.raises(LaneError):
        lane.set_dates(deprecation_date=today(), sunset_date=today() + timedelta(days=30), by=admin)
    lane.set_dates(deprecation_date=today(), sunset_date=today() + timedelta(days=30), by=admin,
                   override_reason="the vendor contract ends")
    event = AuditEvent.objects.filter(action=LaneAction.DATES_SET).latest("id")
    assert "analytics's migration date" in event.after["override"] and "vendor" in event.after["override"]


BROKER = os.environ.get("TEST_LANES_BROKER_URL", "redis://127.0.0.1:6379/5")


@pytest.fixture
def worker(transactional_db, tmp_path, loopback_webhooks):
    """`celery worker -B` (solo pool) against the test database, the reminder pass every second."""
    redis.Redis.from_url(BROKER).flushdb()
    env = {
        **os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": BROKER, "LANE_REMINDER_INTERVAL": "1s", "CONTRACT_STORE": str(tmp_path / "store"),
        "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.1/32",
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "client")]),
    }
    log = open(tmp_path / "worker.log", "w")  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "registry.celery", "worker", "-B", "--pool", "solo", "--loglevel",
         "INFO", "--without-gossip", "--without-mingle", "--without-heartbeat", "-s", str(tmp_path / "beat-schedule")],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        with publishing_to(BROKER):
            yield process
    finally:
        stop(process)
        log.close()
        print((tmp_path / "worker.log").read_text()[-3000:])


@pytest.fixture
def loopback_webhooks(settings):
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.1/32"]


@pytest.mark.slow
def test_a_real_worker_sends_the_7_day_reminder_to_the_team_s_channel_once(two_lanes, owner, consumer_team, worker):
    receiver = Receiver()
    try:
        TeamChannel.objects.add_webhook(consumer_team, url=receiver.url, secret="s3cret")
        reads_lane_2(two_lanes, consumer_team)
        Lane.of(two_lanes, 2).set_dates(deprecation_date=today(), sunset_date=today() + timedelta(days=7), by=owner)
        assert wait_for(lambda: len(receiver.calls) >= 1), "timed out waiting for the reminder's webhook"
        assert wait_for(lambda: LaneNotice.objects.filter(channel="webhook", sent_at__isnull=False).exists())
        body = json.loads(receiver.calls[0]["body"])
        assert body["event"] == "lane.sunset_reminder" and body["days_before"] == 7 and body["team"] == "analytics"
        calls = len(receiver.calls)
        assert not wait_for(lambda: len(receiver.calls) > calls, timeout=3)  # beat keeps running: nothing twice
    finally:
        receiver.close()

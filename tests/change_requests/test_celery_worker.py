"""A real Celery worker with embedded beat, on Redis, sends what the request queued:
after commit, retried when the far side fails, and never twice however often beat runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import timedelta

import pytest
import redis
from django.utils import timezone

from change_requests.models import ChangeRequest, Notification, TeamChannel
from change_requests.workflows import open_change_request
from registry.models import AuditEvent
from tests.celery_broker import ROOT, database_url, publishing_to, stop, wait_for

from .conftest import proposed_document, report_for
from .test_clock_and_notifications import Receiver

pytestmark = pytest.mark.slow

BROKER = os.environ.get("TEST_CHANGE_REQUEST_BROKER_URL", "redis://127.0.0.1:6379/3")


@pytest.fixture
def worker(transactional_db, tmp_path, loopback_webhooks):
    """`celery worker -B` (solo pool) against the test database, beat every second."""
    redis.Redis.from_url(BROKER).flushdb()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": BROKER,
        "CHANGE_REQUEST_CLOCK_INTERVAL": "1s",
        "CHANGE_REQUEST_RETRY_BACKOFF": "1s",
        "CONTRACT_STORE": str(tmp_path / "store"),
        "WEBHOOK_ALLOWED_NETWORKS": "127.0.0.1/32",  # the test receiver listens on loopback
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "client")]),
    }
    log = open(tmp_path / "worker.log", "w")  # noqa: SIM115 - closed below
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "registry.celery", "worker", "-B", "--pool", "solo",
         "--loglevel", "INFO", "--without-gossip", "--without-mingle", "--without-heartbeat",
         "-s", str(tmp_path / "beat-schedule")],
        cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    try:
        with publishing_to(BROKER):
            yield process
    finally:
        stop(process)
        log.close()
        print((tmp_path / "worker.log").read_text()[-3000:])


def test_a_real_worker_retries_a_failing_webhook_and_beat_escalates_once(worker, contract, owner, owner_team, consumer_team, admin):
    receiver = Receiver(status=503)
    try:
        for team in (consumer_team, owner_team):
            TeamChannel.objects.add_webhook(team, url=receiver.url, secret="s3cret")
        doc = proposed_document()
        request = open_change_request(contract, doc, by=owner, report=report_for(doc))  # committed: the task is sent

        assert wait_for(lambda: len(receiver.calls) >= 1), "timed out after 30.0s waiting for the first webhook attempt"
        receiver.status = 200
        hook = Notification.objects.get(event="opened", channel="webhook")
        assert wait_for(lambda: Notification.objects.filter(pk=hook.pk, sent_at__isnull=False).exists()), \
            "timed out after 30.0s waiting for the retried webhook to be marked sent"
        opened_calls = list(receiver.calls)
        assert {json.loads(c["body"])["event"] for c in opened_calls} == {"change_request.opened"}
        assert {json.loads(c["body"])["delivery"] for c in opened_calls} == {hook.pk}
        # Refused at least once (by the task or the clock, whichever came first), then accepted once.
        assert [c["status"] for c in opened_calls][-1] == 200
        assert [c["status"] for c in opened_calls].count(200) == 1
        assert len(opened_calls) >= 2

        ChangeRequest.objects.filter(pk=request.pk).update(deadline_at=timezone.now() - timedelta(seconds=1))
        assert wait_for(lambda: any(json.loads(c["body"])["event"] == "change_request.escalated"
                                    for c in receiver.calls)), "timed out after 30.0s waiting for beat to escalate the request"
        time.sleep(3)  # three more beat ticks
        events = [json.loads(c["body"])["event"] for c in receiver.calls]
        assert events.count("change_request.escalated") == 1
        assert events.count("change_request.opened") == len(opened_calls)  # never again once accepted
        assert AuditEvent.objects.filter(action="change_request.escalated").count() == 1
        # the owner and the admin by e-mail, the owner team by webhook
        assert Notification.objects.filter(event="escalated", sent_at__isnull=False).count() == 3
    finally:
        receiver.close()

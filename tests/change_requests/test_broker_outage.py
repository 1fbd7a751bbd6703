"""A broker outage under a real worker: Redis (our own, on a free port) stops for 10 s
while deadline tasks wait in the worker and notifications wait to be sent, then comes
back. The worker rides it out; every breach is recorded, late by at most the outage
and a sweep; every notification goes out exactly once."""

from __future__ import annotations

import email
import email.policy
import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
import redis
from django.utils import timezone

from change_requests.models import Notification
from change_requests.workflows import open_change_request
from freshness.constants import FreshnessStatus
from freshness.evaluation import set_slo
from freshness.models import FreshnessTransition
from incidents.models import IncidentNotification
from tests.celery_broker import ROOT, database_url, publishing_to, stop, wait_for
from tests.freshness.conftest import announce_write, make_datasets
from tests.servers import free_port

from .conftest import proposed_document, report_for

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

OUTAGE = 10.0  # seconds
SWEEP = 1.0  # FRESHNESS_SWEEP_INTERVAL and CHANGE_REQUEST_CLOCK_INTERVAL below


class RedisServer:
    """redis-server on a free loopback port, keeping its data in `folder` across restarts."""

    def __init__(self, folder: Path):
        self.folder, self.port = folder, free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [shutil.which("redis-server") or "redis-server", "--port", str(self.port), "--bind", "127.0.0.1",
             "--dir", str(self.folder), "--appendonly", "yes", "--save", ""],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert wait_for(self._answers, timeout=10), "redis-server did not start"

    def _answers(self) -> bool:
        try:
            return redis.Redis.from_url(self.url, socket_timeout=0.5).ping()
        except redis.RedisError:
            return False

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=10)


@pytest.fixture
def broker(tmp_path):
    server = RedisServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        if server.process.poll() is None:
            server.stop()


@pytest.fixture
def worker(broker, tmp_path, contract):
    """`celery worker -B` (threads) on our Redis, beat every second, e-mail written to files."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": broker.url,
        "FRESHNESS_SWEEP_INTERVAL": f"{SWEEP:g}s",
        "CHANGE_REQUEST_CLOCK_INTERVAL": f"{SWEEP:g}s",
        "CHANGE_REQUEST_RETRY_BACKOFF": "1s",
        "TEST_EMAIL_BACKEND": "django.core.mail.backends.filebased.EmailBackend",
        "EMAIL_FILE_PATH": str(tmp_path / "mail"),
        "CONTRACT_STORE": str(tmp_path / "store"),
        "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "client")]),
    }
    log = tmp_path / "worker.log"
    with log.open("w") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "registry", "worker", "-B", "--pool", "threads",
             "--concurrency", "4", "--loglevel", "INFO", "--without-gossip", "--without-mingle",
             "--without-heartbeat", "-s", str(tmp_path / "beat-schedule")],
            cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    assert wait_for(lambda: "ready." in log.read_text(), timeout=60), log.read_text()[-3000:]
    try:
        with publishing_to(broker.url):
            yield process, log
    finally:
        stop(process)


def sent_mail(folder: Path) -> list[tuple[str, str]]:
    """(recipient, subject) of every message the worker wrote."""
    found = []
    for path in sorted(folder.glob("*.log")) if folder.exists() else []:
        for chunk in path.read_text().split("-" * 79):
            if chunk.strip():
                message = email.message_from_string(chunk.strip(), policy=email.policy.default)
                found.append((str(message["To"]), str(message["Subject"])))
    return found


def test_the_worker_rides_out_a_broker_restart_and_nothing_is_lost_or_sent_twice(
        broker, worker, contract, dataset, owner, consumer, admin, tmp_path):
    process, log = worker
    datasets = [dataset, *make_datasets(3)]
    for each in datasets:
        set_slo(each, max_age=timedelta(seconds=6), by=admin)
    written = timezone.now()
    for each in datasets:
        announce_write(each, at=written)  # deadline tasks for written + 6 s, held by the worker
    doc = proposed_document()
    before = open_change_request(contract, doc, by=owner, report=report_for(doc))  # its delivery is queued
    time.sleep(1)

    broker.stop()
    down_at = time.monotonic()
    # While the broker is down: the deadlines pass, and another request queues notifications
    # that cannot be handed to the broker (stored; the clock sends them once it is back).
    later_doc = proposed_document("3.0")
    before.withdraw(by=owner, comment="superseded by 3.0")
    during = open_change_request(contract, later_doc, by=owner, report=report_for(later_doc))
    time.sleep(max(0.0, OUTAGE - (time.monotonic() - down_at)))
    broker.start()
    back_at = timezone.now()

    def all_recorded() -> bool:
        return FreshnessTransition.objects.filter(dataset__in=datasets, to_status=FreshnessStatus.STALE).count() \
            == len(datasets)

    assert wait_for(all_recorded, timeout=60), (
        list(FreshnessTransition.objects.values_list("dataset_id", "to_status", "source", "at")),
        [d.pk for d in datasets], log.read_text()[-2000:])
    # The contract's dataset going stale is also an incident, told to its owners by e-mail.
    assert wait_for(lambda: not Notification.objects.unsent().exists()
                    and not IncidentNotification.objects.filter(sent_at__isnull=True).exists(),
                    timeout=60), log.read_text()[-4000:]
    time.sleep(3 * SWEEP)  # a few more sweeps and clock passes: nothing is recorded or sent again

    assert process.poll() is None, "the worker exited:\n" + log.read_text()[-4000:]
    for breach in FreshnessTransition.objects.filter(dataset__in=datasets, to_status=FreshnessStatus.STALE):
        assert breach.due_at == written + timedelta(seconds=6)
        # Late by at most the outage and one sweep (and the worker's reconnection back-off).
        assert breach.at - breach.due_at <= timedelta(seconds=OUTAGE + SWEEP + 5), breach
        assert breach.at <= back_at + timedelta(seconds=SWEEP + 5)
    assert FreshnessTransition.objects.filter(dataset__in=datasets, to_status=FreshnessStatus.STALE).count() \
        == len(datasets)

    by_mail = list(Notification.objects.filter(channel="email").values_list("recipient", "subject"))
    by_mail += IncidentNotification.objects.filter(channel="email").values_list("recipient", "subject")
    assert Notification.objects.filter(change_request=during).exists()
    assert sorted(sent_mail(tmp_path / "mail")) == sorted(by_mail)  # each one, once
    assert consumer.email in {to for to, _ in by_mail}

"""End to end with real parts: a Celery worker on Redis runs the deadline task."""

from __future__ import annotations

import os
from datetime import timedelta

import pytest
import redis
from django.utils import timezone

from freshness.constants import FreshnessStatus, TransitionSource
from freshness.evaluation import set_slo
from freshness.models import DatasetFreshness, FreshnessTransition
from tests.celery_broker import ROOT, database_url, publishing_to, start_celery, stop, wait_for
from tests.freshness.conftest import announce_write

BROKER = os.environ.get("FRESHNESS_TEST_BROKER_URL", "redis://127.0.0.1:6379/2")


def worker_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update({
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": BROKER,
        "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'client'}",
        **(extra or {}),
    })
    return env


@pytest.fixture
def broker():
    """Our Redis database, emptied, and this process publishing to it instead of running tasks eagerly."""
    client = redis.Redis.from_url(BROKER)
    client.flushdb()
    try:
        with publishing_to(BROKER):
            yield client
    finally:
        client.flushdb()
        client.close()


@pytest.fixture
def celery_worker(broker, tmp_path):
    process = start_celery(["worker", "--pool=threads", "--concurrency=2", "--without-gossip",
                            "--without-mingle", "--without-heartbeat"],
                           tmp_path / "worker.log", worker_env(), ready="ready.")
    yield tmp_path / "worker.log"
    stop(process)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_a_worker_records_the_breach_with_the_task_scheduled_for_the_deadline(celery_worker, dataset, owner):
    set_slo(dataset, max_age=timedelta(seconds=3), by=owner)
    written = timezone.now()
    announce_write(dataset, at=written)  # schedules the deadline task, after commit
    row = DatasetFreshness.objects.get(dataset=dataset)
    assert row.task_eta == row.next_check_at == written + timedelta(seconds=3)

    # No beat is running: only the deadline task can record this breach.
    assert wait_for(lambda: FreshnessTransition.objects.filter(
        dataset=dataset, to_status=FreshnessStatus.STALE).exists(), timeout=30), celery_worker.read_text()[-3000:]
    breach = FreshnessTransition.objects.get(dataset=dataset, to_status=FreshnessStatus.STALE)
    assert breach.source == TransitionSource.DEADLINE
    assert breach.due_at == written + timedelta(seconds=3)
    assert breach.at >= breach.due_at
    assert DatasetFreshness.objects.get(dataset=dataset).status == FreshnessStatus.STALE


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_beat_sweeps_on_its_interval_and_catches_a_deadline_whose_task_was_lost(broker, dataset, owner, tmp_path):
    set_slo(dataset, max_age=timedelta(seconds=1), by=owner)
    announce_write(dataset, at=timezone.now())
    broker.flushdb()  # the deadline task is lost with the broker's data
    env = worker_env({"FRESHNESS_SWEEP_INTERVAL": "1s"})
    worker = start_celery(["worker", "--pool=threads", "--concurrency=2", "--without-gossip", "--without-mingle",
                           "--without-heartbeat", "--beat", f"--schedule={tmp_path / 'beat-schedule'}"],
                          tmp_path / "worker.log", env, ready="ready.")
    try:
        assert wait_for(lambda: FreshnessTransition.objects.filter(
            dataset=dataset, to_status=FreshnessStatus.STALE).exists(), timeout=30), \
            (tmp_path / "worker.log").read_text()[-3000:]
    finally:
        stop(worker)
    assert FreshnessTransition.objects.get(dataset=dataset, to_status=FreshnessStatus.STALE).source == \
        TransitionSource.SWEEP

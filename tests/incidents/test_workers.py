"""With real processes: two ingest replicas failing the same check on the same
datasets at the same instant, each judging its results after its commit, open one
incident per dataset (the dataset's lock and the database's partial unique index
decide); a real Celery worker judges a failing result handed to it after the
ingest's commit, and the beat sweep judges one left behind by an ingest that died
between its commit and the hand-over; a real worker keeps a quality SLO's deadline
(an eta task, no polling) and sends the incident's messages after commit."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import timedelta

import pytest
import redis
from django.core import mail
from django.utils import timezone

from contracts_app.models import DatasetBinding
from incidents import pending
from incidents.models import Cause, Incident, IncidentNotification, QualitySLO
from incidents.quality_slo import set_quality_slo
from lineage.ingest import store_event
from lineage.signals import quality_results_waiting
from registry.models import Dataset
from tests.celery_broker import ROOT, database_url, publishing_to, start_celery, stop, wait_for

from .conftest import ALL_PASS, failed, report
from .conftest import test_event as dbt_test_event

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

FAILING = [*ALL_PASS[1:], failed("not_null", "order_id")]
BROKER = os.environ.get("TEST_INCIDENTS_BROKER_URL", "redis://127.0.0.1:6379/11")


def _env() -> dict[str, str]:
    return {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings", "DATABASE_URL": database_url(),
            "CELERY_BROKER_URL": BROKER, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "client")])}


def test_two_replicas_racing_open_one_incident_per_dataset(dataset, contract):
    datasets = [dataset] + [Dataset.objects.create(namespace=dataset.namespace, name=f"retail.public.orders_{i}",
                                                   owner_team=dataset.owner_team) for i in range(11)]
    for d in datasets[1:]:
        DatasetBinding.objects.create(dataset=d, contract=contract)
    start_at = time.time() + 3.0  # both import Django first, then start together
    args = [sys.executable, "-m", "tests.incidents.replica", str(start_at), *[str(d.pk) for d in datasets]]
    # No broker: each replica judges the results it stored right after its own commit.
    replicas = [subprocess.Popen(args, cwd=ROOT, env={**_env(), "CELERY_BROKER_URL": ""}, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True) for _ in range(2)]
    outputs = [p.communicate(timeout=120)[0] for p in replicas]
    assert all(p.returncode == 0 for p in replicas), outputs
    assert Incident.objects.count() == len(datasets)
    assert not quality_results_waiting().exists()
    for incident in Incident.objects.all():
        # The slower replica's evidence joined the open incident's timeline.
        assert [e.kind for e in incident.events.all()] == ["opened", "notified", "seen_again"]


@pytest.fixture
def worker(tmp_path):
    """A real worker with beat in it (freshness's sweep every second), on the tests' Redis."""
    redis.Redis.from_url(BROKER).flushdb()
    process = start_celery(["worker", "-B", "-s", str(tmp_path / "beat-schedule"), "--pool", "solo",
                            "--without-gossip", "--without-mingle", "--without-heartbeat"], tmp_path / "worker.log",
                           {**_env(), "FRESHNESS_SWEEP_INTERVAL": "1s"}, "ready", attempts=1200)
    try:
        with publishing_to(BROKER):
            yield process
    finally:
        stop(process)
        print((tmp_path / "worker.log").read_text()[-3000:])


def test_a_write_with_no_passing_checks_in_time_is_a_breach_found_at_its_deadline(worker, dataset, contract, owner,
                                                                                  consumer):
    set_quality_slo(dataset, timedelta(seconds=2), by=owner)
    written = timezone.now()
    event = {"eventType": "COMPLETE", "eventTime": written.isoformat(), "producer": "https://example.com/etl",
             "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
             "run": {"runId": "0193e1c4-0000-7000-8000-000000000001"}, "job": {"namespace": "etl", "name": "load"},
             "inputs": [], "outputs": [{"namespace": dataset.namespace, "name": dataset.name}]}
    store_event(event)
    slo = QualitySLO.objects.get(dataset=dataset)
    assert slo.due_at == written + timedelta(seconds=2) and slo.task_eta == slo.due_at  # an eta task, published
    incident = wait_for(lambda: Incident.objects.filter(cause=Cause.CHECK_LATE).first(), timeout=60)
    assert incident is not None and "did not pass within 0 min" in incident.summary
    assert incident.evidence["deadline"] == slo.due_at.isoformat()
    # The worker sent the owner's message after the deadline task's commit.
    assert wait_for(lambda: IncidentNotification.objects.filter(incident=incident, sent_at__isnull=False).exists(),
                    timeout=30)
    # A passing final result after the write ends the breach (judged by the worker).
    report(dataset, ALL_PASS, at=timezone.now())
    assert wait_for(lambda: Incident.objects.get(pk=incident.pk).state == "resolved", timeout=30)
    incident.refresh_from_db()
    assert incident.resolution == "automatic"


def test_checks_passing_before_the_deadline_leave_nothing_to_find(worker, dataset, contract, owner):
    set_quality_slo(dataset, timedelta(seconds=2), by=owner)
    written = timezone.now()
    store_event({"eventType": "COMPLETE", "eventTime": written.isoformat(), "producer": "https://example.com/etl",
                 "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
                 "run": {"runId": "0193e1c4-0000-7000-8000-000000000002"}, "job": {"namespace": "etl", "name": "load"},
                 "inputs": [], "outputs": [{"namespace": dataset.namespace, "name": dataset.name}]})
    report(dataset, ALL_PASS, at=timezone.now())
    assert wait_for(lambda: QualitySLO.objects.get(dataset=dataset).due_at is None, timeout=30)
    time.sleep(4)  # past the deadline: the task ran (or was moot) and found nothing
    assert not Incident.objects.exists()
    assert not mail.outbox


def test_a_failing_result_is_judged_by_a_worker_after_the_ingests_commit(worker, dataset, contract):
    store_event(dbt_test_event(dataset, FAILING, at=timezone.now()))
    # Committed, and handed over: the ingest itself judged nothing.
    incident = wait_for(lambda: Incident.objects.filter(dataset=dataset, cause=Cause.CHECK_FAILED).first(), timeout=30)
    assert incident is not None and incident.summary.startswith("not_null on order_id failed")
    assert wait_for(lambda: not quality_results_waiting().exists(), timeout=10)
    report(dataset, ALL_PASS, at=timezone.now())
    assert wait_for(lambda: Incident.objects.get(pk=incident.pk).state == "resolved", timeout=30)


def test_a_result_left_behind_by_a_crash_after_commit_is_judged_by_the_sweep(worker, dataset, contract,
                                                                            monkeypatch):
    # The ingest commits, then dies before it hands the dataset to a worker.
    monkeypatch.setattr(pending, "_wake", lambda dataset_id: None)
    store_event(dbt_test_event(dataset, FAILING, at=timezone.now()))
    assert quality_results_waiting().filter(dataset=dataset).count() == 1
    assert not Incident.objects.exists()
    # Beat's freshness sweep takes it over once it has waited SWEEP_AFTER.
    incident = wait_for(lambda: Incident.objects.filter(dataset=dataset, cause=Cause.CHECK_FAILED).first(),
                        timeout=pending.SWEEP_AFTER.total_seconds() + 30)
    assert incident is not None
    assert not quality_results_waiting().exists()
    assert [e.kind for e in incident.events.all()] == ["opened", "notified"]

"""With real processes: two ingest replicas failing the same check on the same
datasets at the same instant open one incident per dataset (the database's partial
unique index decides); a real Celery worker keeps a quality SLO's deadline (an eta
task, no polling) and sends the incident's messages after commit."""

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
from incidents.models import Cause, Incident, IncidentNotification, QualitySLO
from incidents.quality_slo import set_quality_slo
from lineage.ingest import store_event
from registry.models import Dataset
from tests.celery_broker import ROOT, database_url, publishing_to, start_celery, stop, wait_for

from .conftest import ALL_PASS, report

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

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
    replicas = [subprocess.Popen(args, cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                 text=True) for _ in range(2)]
    outputs = [p.communicate(timeout=120)[0] for p in replicas]
    assert all(p.returncode == 0 for p in replicas), outputs
    assert Incident.objects.count() == len(datasets)
    for incident in Incident.objects.all():
        # The slower replica's evidence joined the open incident's timeline.
        assert [e.kind for e in incident.events.all()] == ["opened", "notified", "seen_again"]


@pytest.fixture
def worker(tmp_path):
    redis.Redis.from_url(BROKER).flushdb()
    process = start_celery(["worker", "--pool", "solo", "--without-gossip", "--without-mingle",
                            "--without-heartbeat"], tmp_path / "worker.log", _env(), "ready", attempts=1200)
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
    # A passing final result after the write ends the breach.
    report(dataset, ALL_PASS, at=timezone.now())
    incident.refresh_from_db()
    assert incident.state == "resolved" and incident.resolution == "automatic"


def test_checks_passing_before_the_deadline_leave_nothing_to_find(worker, dataset, contract, owner):
    set_quality_slo(dataset, timedelta(seconds=2), by=owner)
    written = timezone.now()
    store_event({"eventType": "COMPLETE", "eventTime": written.isoformat(), "producer": "https://example.com/etl",
                 "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
                 "run": {"runId": "0193e1c4-0000-7000-8000-000000000002"}, "job": {"namespace": "etl", "name": "load"},
                 "inputs": [], "outputs": [{"namespace": dataset.namespace, "name": dataset.name}]})
    report(dataset, ALL_PASS, at=timezone.now())
    assert QualitySLO.objects.get(dataset=dataset).due_at is None
    time.sleep(4)  # past the deadline: the task ran (or was moot) and found nothing
    assert not Incident.objects.exists()
    assert not mail.outbox

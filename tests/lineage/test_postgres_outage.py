"""PostgreSQL crashes mid-ingest while the official openlineage-python client
posts with retries on: every event it was told was stored is stored exactly
once, no answer says "nothing was stored" of an event that was, and the server
serves again once the database is back, without a restart.

The test runs a cluster of its own (tests.servers.PostgresCluster), migrates a
database there and runs the production server (granian, as the Dockerfile does)
against it, so that it can crash the database (`pg_ctl stop -m immediate`)
without disturbing any other test."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
import requests
from django.conf import settings
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.transport.http import HttpConfig, HttpTransport

from tests.servers import PostgresCluster, free_port

from .conftest import run_event

PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python"
RUNS = 20  # a START and a COMPLETE each


def _environment(database_url: str) -> dict[str, str]:
    base = Path(settings.BASE_DIR)
    return {**os.environ, "DATABASE_URL": database_url, "SECRET_KEY": "outage-test", "DEBUG": "0",
            "ALLOWED_HOSTS": "127.0.0.1", "DJANGO_SETTINGS_MODULE": "registry.settings",
            "FRESHNESS_IN_PROCESS_EVALUATOR": "0", "CELERY_BROKER_URL": "",
            "PYTHONPATH": f"{base}{os.pathsep}{base / 'client'}"}


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=settings.BASE_DIR, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.fixture
def crashable_world():
    """(cluster, server URL, lineage token) against a database of its own; stopped afterwards."""
    with PostgresCluster() as cluster:
        cluster.psql("CREATE DATABASE registry")
        env = _environment(cluster.url("registry") + "?conn_max_age=60")
        _manage(env, "migrate", "--noinput", "-v0")
        secret = _manage(env, "shell", "-c", "from registry.models import ApiToken, Team; "
                         "t = Team.objects.create(name='Checkout', slug='checkout'); "
                         "print(ApiToken.issue('airflow', team=t)[1])").strip().splitlines()[-1]
        port = free_port()
        log = open(Path(cluster.tmp) / "server.log", "wb")  # noqa: SIM115 - closed below
        server = subprocess.Popen(
            [str(Path(sys.executable).parent / "granian"), "--interface", "wsgi", "registry.wsgi:application",
             "--host", "127.0.0.1", "--port", str(port), "--workers", "1", "--blocking-threads", "4"],
            cwd=settings.BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    requests.get(f"{url}/healthz", timeout=2)
                    break
                except requests.ConnectionError:
                    assert server.poll() is None and time.monotonic() < deadline, "the server did not start"
                    time.sleep(0.3)
            yield cluster, url, secret
        finally:
            server.terminate()
            try:
                server.wait(timeout=10)
            except subprocess.TimeoutExpired:
                server.kill()
            log.close()


def _events() -> list[RunEvent]:
    events = []
    for i in range(RUNS):
        run = Run(runId=str(uuid.uuid4()))
        job = Job(namespace="airflow", name=f"etl.load_{i}")
        outputs = [OutputDataset(namespace="postgres://warehouse:5432", name=f"mart.table_{i}")]
        for state in (RunState.START, RunState.COMPLETE):
            events.append(RunEvent(eventType=state, eventTime=f"2026-11-30T01:{i:02d}:00.000Z", run=run, job=job,
                                   outputs=outputs, producer=PRODUCER))
    return events


def _stored(cluster: PostgresCluster) -> dict[tuple[str, str], int]:
    rows = cluster.psql("SELECT run_uuid, event_type, count(*) FROM lineage_runevent GROUP BY 1, 2", "registry")
    return {(r.split("|")[0], r.split("|")[1]): int(r.split("|")[2]) for r in rows.split()}


def test_an_immediate_postgres_stop_mid_ingest_loses_and_doubles_nothing(crashable_world):
    cluster, url, secret = crashable_world
    config = HttpConfig.from_dict({
        "type": "http", "url": url, "endpoint": "api/v1/lineage", "compression": "gzip", "timeout": 30,
        "auth": {"type": "api_key", "apiKey": secret},
        "retry": {"total": 12, "backoff_factor": 0.3, "status_forcelist": [502, 503, 504],
                  "allowed_methods": ["POST"], "respect_retry_after_header": False},
    })
    client = OpenLineageClient(transport=HttpTransport(config))
    events = _events()
    acknowledged: list[tuple[str, str]] = []
    failed: list[tuple[tuple[str, str], BaseException]] = []

    def pipeline() -> None:
        for event in events:
            key = (event.run.runId, event.eventType.value)
            try:
                client.emit(event)
                acknowledged.append(key)
            except Exception as exc:  # noqa: BLE001 - retries exhausted: reported below
                failed.append((key, exc))
            time.sleep(0.02)

    sender = threading.Thread(target=pipeline)
    sender.start()
    deadline = time.monotonic() + 120
    while len(acknowledged) < 8 and sender.is_alive() and time.monotonic() < deadline:
        time.sleep(0.01)
    cluster.stop("immediate")  # mid-ingest: whatever is in flight is cut off
    # What a client without retries is told while the database is down.
    probes = []
    for _ in range(3):
        event = run_event("START", outputs=["mart.probe"])
        response = requests.post(f"{url}/api/v1/lineage", json=event, timeout=30,
                                 headers={"Authorization": f"Bearer {secret}"})
        probes.append((event["run"]["runId"], response.status_code, response.json()))
    time.sleep(1)
    cluster.resume()
    sender.join(timeout=240)
    assert not sender.is_alive()

    assert failed == [], failed
    stored = _stored(cluster)
    assert sorted(acknowledged) == sorted(stored), "an acknowledged event is missing, or one was stored unacknowledged"
    assert set(stored.values()) == {1}, "an event was stored twice"
    for run_id, status, body in probes:
        assert status == 503 and body["code"] == "database_unavailable", body
        assert "Retrying is safe" in body["detail"], body
        if "nothing was stored" in body["detail"]:
            assert (run_id, "START") not in stored
    # The same server serves again, without a restart: at most the request that
    # meets its lost connection fails.
    after = run_event("COMPLETE", outputs=["mart.after"])
    statuses = []
    for _ in range(3):
        statuses.append(requests.post(f"{url}/api/v1/lineage", json=after, timeout=30,
                                      headers={"Authorization": f"Bearer {secret}"}).status_code)
        if statuses[-1] == 201:
            break
    assert statuses[-1] == 201 and len(statuses) <= 2, statuses
    assert requests.get(f"{url}/healthz", timeout=10).status_code == 200

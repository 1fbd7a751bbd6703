"""Ingest under concurrency and with the database gone."""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections
from django.test import Client

from lineage.models import Job, JobDataset, RunEvent
from registry.models import AuditEvent, Dataset
from tests.servers import free_port

from .conftest import post, run_event


@pytest.mark.django_db(transaction=True)
def test_concurrent_events_first_seeing_the_same_datasets_all_succeed(lineage_secret):
    clients = 8
    barrier = threading.Barrier(clients)
    statuses: list[int] = []
    errors: list[BaseException] = []

    def send(i: int) -> None:
        try:
            event = run_event("START", job=f"etl.job_{i}", inputs=["raw.shared_a", "raw.shared_b"],
                              outputs=["mart.shared", f"mart.own_{i}"])
            barrier.wait()
            statuses.append(post(Client(), event, lineage_secret).status_code)
        except BaseException as exc:  # surfaced below, with the thread's own error
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=send, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert statuses == [201] * clients
    assert Dataset.objects.filter(name__in=["raw.shared_a", "raw.shared_b", "mart.shared"]).count() == 3
    assert Dataset.objects.count() == 3 + clients
    assert Job.objects.count() == clients and RunEvent.objects.count() == clients
    assert JobDataset.objects.count() == 4 * clients
    # Each dataset was announced as first seen exactly once, by whichever event won.
    assert AuditEvent.objects.filter(action="dataset.first_seen").count() == 3 + clients


@pytest.mark.django_db(transaction=True)
def test_an_unreachable_database_is_a_503_so_the_client_retries(client, lineage_secret):
    default = connections["default"]
    default.close()
    saved = default.settings_dict["PORT"]
    default.settings_dict["PORT"] = str(free_port())  # nothing listens there
    try:
        response = post(client, run_event(outputs=["mart.orders"]), lineage_secret)
    finally:
        default.close()
        default.settings_dict["PORT"] = saved
    assert response.status_code == 503
    assert response.json()["code"] == "database_unavailable"
    assert response["Retry-After"] == "5"
    # And once it is back, the retry is stored.
    assert post(client, run_event(outputs=["mart.orders"]), lineage_secret).status_code == 201

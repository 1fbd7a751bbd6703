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


@pytest.mark.django_db(transaction=True)
def test_a_database_lost_before_anything_was_written_says_nothing_was_stored(client, lineage_secret):
    default = connections["default"]
    default.close()
    saved = default.settings_dict["PORT"]
    default.settings_dict["PORT"] = str(free_port())
    try:
        response = post(client, run_event(outputs=["mart.orders"]), lineage_secret)
    finally:
        default.close()
        default.settings_dict["PORT"] = saved
    assert response.status_code == 503
    assert "nothing was stored" in response.json()["detail"]


@pytest.mark.django_db(transaction=True)
def test_a_database_lost_while_committing_says_the_event_may_not_have_been_stored(client, lineage_secret):
    """The connection dies between the event's last statement and its COMMIT: the
    server cannot know whether the commit happened, so it must not say it did not."""
    import psycopg

    from lineage.signals import dataset_written

    def lose_the_connection(**kwargs) -> None:
        pid = connection.connection.info.backend_pid
        params = connection.get_connection_params()
        with psycopg.connect(dbname=params["dbname"], user=params.get("user"), host=params.get("host"),
                             port=params.get("port"), autocommit=True) as other:
            other.execute("SELECT pg_terminate_backend(%s)", [pid])

    dataset_written.connect(lose_the_connection, dispatch_uid="lose-the-connection")
    try:
        response = post(client, run_event(outputs=["mart.orders"]), lineage_secret)
    finally:
        dataset_written.disconnect(dispatch_uid="lose-the-connection")
    assert response.status_code == 503, response.content
    detail = response.json()["detail"]
    assert "may not have been stored" in detail and "Retrying is safe" in detail
    assert "nothing was stored" not in detail
    # The server's next request has a working connection; the retry is stored once.
    retry = post(client, run_event(outputs=["mart.orders"]), lineage_secret)
    assert retry.status_code == 201 and RunEvent.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_batch_cut_short_by_the_database_says_how_many_events_are_stored(client, lineage_secret):
    from lineage.signals import dataset_written

    seen = []

    def lose_the_second(**kwargs) -> None:
        seen.append(kwargs["dataset"].name)
        if len(seen) == 2:
            connection.connection.close()  # the socket goes; the next statement fails

    dataset_written.connect(lose_the_second, dispatch_uid="lose-the-second")
    try:
        events = [run_event(outputs=[f"mart.t{i}"]) for i in range(3)]
        response = post(client, events, lineage_secret, path="/api/v1/lineage/batch")
    finally:
        dataset_written.disconnect(dispatch_uid="lose-the-second")
    assert response.status_code == 503, response.content
    assert response.json()["stored"] == 1
    assert "first 1 events of the batch are stored" in response.json()["detail"]
    assert post(client, events, lineage_secret, path="/api/v1/lineage/batch").json()["duplicates"] == 1
    assert RunEvent.objects.count() == 3

"""Event times the registry can hold: refused when outside years 1–9999 in UTC or
too far in the future for a run's state; and pages that read whatever is stored."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test import override_settings

from lineage.models import Job, Run, RunEvent
from registry.models import Dataset

from .conftest import PRODUCER, post, run_event

pytestmark = pytest.mark.django_db

OUT_OF_RANGE = ["9999-12-31T23:59:59-12:00", "0001-01-01T00:00:00+01:00", "9999-12-31T18:00:00.5-06:00"]


def iso(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


@pytest.mark.parametrize("event_time", OUT_OF_RANGE)
def test_an_event_time_outside_years_1_to_9999_in_utc_is_refused(client, lineage_secret, event_time):
    response = post(client, run_event(outputs=["mart.orders"], event_time=event_time), lineage_secret)
    assert response.status_code == 422, response.content
    assert [e["path"] for e in response.json()["errors"]] == ["eventTime"]
    assert "years 1–9999" in response.json()["detail"]
    assert RunEvent.objects.count() == 0 and Dataset.objects.count() == 0


@pytest.mark.parametrize("event_time", OUT_OF_RANGE[:2])
def test_dataset_and_job_events_with_such_times_are_refused_too(client, lineage_secret, event_time):
    dataset_event = {"eventTime": event_time, "producer": PRODUCER,
                     "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
                     "dataset": {"namespace": "postgres://warehouse:5432", "name": "mart.orders"}}
    job_event = {"eventTime": event_time, "producer": PRODUCER,
                 "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
                 "job": {"namespace": "airflow", "name": "etl.load"}}
    for event in (dataset_event, job_event):
        response = post(client, event, lineage_secret)
        assert response.status_code == 422, response.content
        assert response.json()["errors"][0]["path"] == "eventTime"
    batch = post(client, [run_event(), run_event(event_time=event_time)], lineage_secret, path="/api/v1/lineage/batch")
    assert batch.status_code == 422 and batch.json()["errors"][0]["path"] == "[1].eventTime"
    assert Dataset.objects.count() == 0 and Job.objects.count() == 0 and RunEvent.objects.count() == 0


def test_a_run_event_from_more_than_a_day_ahead_is_refused(client, lineage_secret):
    ahead = datetime.now(UTC) + timedelta(days=1, minutes=5)
    response = post(client, run_event("COMPLETE", event_time=iso(ahead)), lineage_secret)
    assert response.status_code == 422, response.content
    assert "LINEAGE_MAX_FUTURE_SKEW" in response.json()["detail"]
    assert response.json()["errors"][0]["path"] == "eventTime"
    assert Run.objects.count() == 0
    # A clock a little ahead is no reason to refuse.
    soon = datetime.now(UTC) + timedelta(hours=1)
    assert post(client, run_event("COMPLETE", event_time=iso(soon)), lineage_secret).status_code == 201


@override_settings(LINEAGE_MAX_FUTURE_SKEW=timedelta(minutes=5))
def test_the_future_skew_is_a_setting(client, lineage_secret):
    ahead = datetime.now(UTC) + timedelta(minutes=30)
    response = post(client, run_event("START", event_time=iso(ahead)), lineage_secret)
    assert response.status_code == 422 and "5 minutes" in response.json()["detail"]


def _set_every_lineage_time(value: str) -> None:
    """What an older release stored: every timestamp of the lineage tables out of Python's range."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = "
                       "current_schema() AND data_type = 'timestamp with time zone' AND "
                       "(table_name LIKE 'lineage\\_%%' OR table_name IN ('registry_columnread', 'registry_dataset'))")
        for table, column in cursor.fetchall():
            cursor.execute(f'UPDATE "{table}" SET "{column}" = %s::timestamptz WHERE "{column}" IS NOT NULL', [value])


@pytest.mark.parametrize("stored", ["9999-12-31T23:59:59-12:00", "0001-01-01T00:00:00+01:00"])
def test_every_page_reads_a_stored_time_outside_pythons_range(client, owner, lineage_secret, stored):
    run_id = "0190f3f2-0000-7000-8000-000000000001"
    for state in ("START", "COMPLETE"):
        assert post(client, run_event(state, run_id=run_id, inputs=["raw.orders"], outputs=["mart.orders"],
                                      row_count=5), lineage_secret).status_code == 201
    _set_every_lineage_time(stored)
    job = Job.objects.get()
    dataset = Dataset.objects.get(name="mart.orders")
    client.force_login(owner)
    for path in ("/lineage/jobs/", f"/lineage/jobs/{job.pk}/", f"/datasets/{dataset.pk}/", "/",
                 f"/api/v1/jobs/runs/{run_id}", f"/api/v1/jobs/runs/{run_id}/facets",
                 "/api/v1/events/lineage", "/api/v1/namespaces/airflow/jobs",
                 f"/api/v1/namespaces/airflow/jobs/{job.name}/runs",
                 f"/api/v1/lineage?nodeId=dataset:{dataset.namespace}:{dataset.name}", f"/api/v1/lineage?runId={run_id}",
                 f"/api/datasets/{dataset.pk}/", f"/api/datasets/{dataset.pk}/freshness/", "/freshness/"):
        response = client.get(path)
        assert response.status_code == 200, (path, response.status_code, response.content[:300])

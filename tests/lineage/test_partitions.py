"""Raw events partitioned by month of event time (PostgreSQL): the migration
keeps every stored event, beat makes the months ahead, retention drops whole
months (lineage.partitions, migration 0012)."""

from __future__ import annotations

import json
import threading
import uuid
from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection, connections
from django.test import override_settings
from django.utils import timezone

from lineage import partitions
from lineage.ingest import store_event
from lineage.models import RunEvent
from lineage.tasks import create_raw_event_partitions
from registry.models import AuditEvent
from tests.migrations import migrate, migrate_to_latest

from .conftest import run_event

BEFORE = [("lineage", "0011_field_edges_from_quality_checks")]
AFTER = [("lineage", "0012_raw_events_partitioned_by_event_time")]


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def names() -> list[str]:
    return [p.name for p in partitions.partitions()]


def month(moment: datetime) -> str:
    return partitions.month_name(partitions.month_start(moment))


def store_at(moment: datetime, job: str = "etl.load_orders") -> None:
    assert store_event(run_event("COMPLETE", job=job, outputs=["mart.orders"], event_time=iso(moment))).stored


def insert(checksum: str, moment: datetime, job: str) -> int | None:
    """A raw event as the ingest writes it (any event time: the ingest's own checks apart)."""
    with connection.cursor() as cursor:
        cursor.execute("INSERT INTO lineage_runevent (checksum, run_uuid, event_type, event_time, job_namespace,"
                       " job_name, payload, received_at) VALUES (%s, %s, 'COMPLETE', %s, 'airflow', %s, %s, now())"
                       " ON CONFLICT (checksum, event_time) DO NOTHING RETURNING id",
                       [checksum, uuid.uuid4(), moment, job, json.dumps({"eventTime": iso(moment)})])
        row = cursor.fetchone()
    return row[0] if row else None


@pytest.mark.django_db(transaction=True)
def test_the_migration_keeps_every_stored_event_and_retention_then_drops_the_old_table_whole():
    now = timezone.now()
    times = [now - timedelta(days=days) for days in (200, 95, 40, 3)] + [now]
    migrate(BEFORE)
    try:
        with connection.cursor() as cursor:
            for i, moment in enumerate(times):
                payload = json.dumps({"eventTime": iso(moment), "n": i})
                cursor.execute(
                    "INSERT INTO lineage_runevent (checksum, run_uuid, event_type, event_time, job_namespace, job_name,"
                    " payload, received_at) VALUES (%s, %s, 'COMPLETE', %s, 'airflow', %s, %s, %s)",
                    [f"sum-{i}", uuid.uuid4(), moment, f"job_{i}", payload, moment])
            cursor.execute("SELECT id, checksum, event_time FROM lineage_runevent ORDER BY id")
            before = cursor.fetchall()

        migrate(AFTER)

        # Every row, with its id, in the old table, now the partition of the past.
        assert list(RunEvent.objects.order_by("id").values_list("id", "checksum", "event_time")) == before
        found = partitions.partitions()
        legacy = found[0]
        assert (legacy.name, legacy.start, legacy.end) == (
            "lineage_runevent_legacy", None, partitions.add_months(partitions.month_start(now), 1))
        assert [p.name for p in found[1:]] == [month(partitions.add_months(legacy.end, i)) for i in range(3)] + [
            "lineage_runevent_default"]
        # New events take the next ids; a retry of an event stored before the migration stores nothing.
        store_at(now, job="after_the_migration")
        assert RunEvent.objects.get(job_name="after_the_migration").id > before[-1][0]
        assert insert("sum-1", times[1], "a retry") is None
        # Next month's event goes to its own partition; once the old table's every
        # time is past the window, retention drops it whole.
        next_month = legacy.end + timedelta(days=2)
        insert("next", next_month, "next_month")
        assert partitions.drop_before(legacy.end + timedelta(days=1)) == ["lineage_runevent_legacy"]
        assert list(RunEvent.objects.values_list("job_name", flat=True)) == ["next_month"]
    finally:
        # Back to the layout a new database gets, for the tests after this one.
        migrate(BEFORE)
        with connection.cursor() as cursor:
            cursor.execute("TRUNCATE lineage_runevent")
        migrate_to_latest()
    assert "lineage_runevent_legacy" not in names()


@pytest.mark.django_db(transaction=True)
def test_the_migration_uses_the_keys_and_bound_prepared_as_docs_operations_says():
    now = timezone.now()
    bound = partitions.add_months(partitions.month_start(now), 2)
    migrate(BEFORE)
    try:
        with connection.cursor() as cursor:
            cursor.execute("INSERT INTO lineage_runevent (checksum, run_uuid, event_type, event_time, job_namespace,"
                           " job_name, payload, received_at) VALUES ('old', %s, 'COMPLETE', %s, 'airflow', 'old', '{}',"
                           " now())", [uuid.uuid4(), now - timedelta(days=60)])
            # docs/operations.md, "Converting an existing table" (CONCURRENTLY apart: a test runs in a transaction).
            cursor.execute("CREATE UNIQUE INDEX lineage_runevent_legacy_pk ON lineage_runevent (id, event_time)")
            cursor.execute("CREATE UNIQUE INDEX lineage_runevent_legacy_checksum ON lineage_runevent (checksum, event_time)")
            cursor.execute("CREATE INDEX lineage_runevent_legacy_time ON lineage_runevent (event_time, id)")
            cursor.execute("ALTER TABLE lineage_runevent ADD CONSTRAINT lineage_runevent_legacy_bound"
                           f" CHECK (event_time < '{bound.isoformat()}') NOT VALID")
            cursor.execute("ALTER TABLE lineage_runevent VALIDATE CONSTRAINT lineage_runevent_legacy_bound")

        migrate(AFTER)

        legacy = partitions.partitions()[0]
        assert (legacy.name, legacy.end) == ("lineage_runevent_legacy", bound)
        with connection.cursor() as cursor:
            cursor.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'lineage_runevent_legacy' ORDER BY 1")
            assert [name for (name,) in cursor.fetchall()] == [
                "lineage_runevent_legacy_checksum", "lineage_runevent_legacy_pk", "lineage_runevent_legacy_run_uuid",
                "lineage_runevent_legacy_time"]
        assert list(RunEvent.objects.values_list("job_name", flat=True)) == ["old"]
        assert names()[1] == month(bound)
    finally:
        migrate(BEFORE)
        with connection.cursor() as cursor:
            cursor.execute("TRUNCATE lineage_runevent")
        migrate_to_latest()


@pytest.mark.django_db
def test_a_new_database_has_this_month_three_ahead_and_a_default_partition():
    start = partitions.month_start(timezone.now())
    # (A database kept from an earlier month has that month's partitions too.)
    assert names()[-5:] == [month(partitions.add_months(start, i)) for i in range(4)] + ["lineage_runevent_default"]


@pytest.mark.django_db
def test_events_land_in_the_month_of_their_event_time_or_the_default_partition():
    now = timezone.now()
    store_at(now, job="this_month")
    store_at(now - timedelta(days=400), job="long_ago")
    with connection.cursor() as cursor:
        cursor.execute("SELECT tableoid::regclass::text, job_name FROM lineage_runevent ORDER BY job_name")
        assert cursor.fetchall() == [("lineage_runevent_default", "long_ago"), (month(now), "this_month")]


@pytest.mark.django_db
@override_settings(LINEAGE_EVENT_PARTITIONS_AHEAD=5)
def test_beat_makes_the_months_ahead_once():
    start = partitions.month_start(timezone.now())
    partitions.create_ahead(ahead=3)  # as the migration did (a database kept from an earlier month lacks some)
    assert create_raw_event_partitions() == [month(partitions.add_months(start, 4)), month(partitions.add_months(start, 5))]
    assert create_raw_event_partitions() == []


@pytest.mark.django_db
def test_a_month_made_late_takes_its_events_from_the_default_partition():
    long_ago = timezone.now() - timedelta(days=400)
    store_at(long_ago)
    assert partitions.create_ahead(long_ago, ahead=0) == [month(long_ago)]
    with connection.cursor() as cursor:
        cursor.execute("SELECT tableoid::regclass::text FROM lineage_runevent")
        assert cursor.fetchall() == [(month(long_ago),)]


@pytest.mark.django_db(transaction=True)
def test_two_beats_at_once_make_each_month_once():
    long_ago = timezone.now() - timedelta(days=800)
    made, errors = [], []

    def beat():
        try:
            made.append(partitions.create_ahead(long_ago, ahead=2))
        except Exception as exc:  # noqa: BLE001 - the test reports any failure of either beat
            errors.append(exc)
        finally:
            connections.close_all()

    try:
        beats = [threading.Thread(target=beat) for _ in range(2)]
        for t in beats:
            t.start()
        for t in beats:
            t.join()
        assert errors == []
        expected = [month(partitions.add_months(partitions.month_start(long_ago), i)) for i in range(3)]
        assert sorted(made, key=len) == [[], expected]
    finally:
        for name in names():
            if name.startswith("lineage_runevent_p") and name < month(timezone.now()):
                with connection.cursor() as cursor:
                    cursor.execute(f"DROP TABLE {name}")


@pytest.mark.django_db
def test_retention_drops_the_months_wholly_past_the_window_and_deletes_the_edge_row_by_row():
    now = timezone.now()
    old_month = partitions.add_months(partitions.month_start(now), -3)
    partitions.create_ahead(old_month, ahead=0)
    for day in range(3):
        store_at(old_month + timedelta(days=day), job=f"old_{day}")
    store_at(now - timedelta(days=45), job="edge")  # the default partition, or the month the cutoff cuts
    store_at(now, job="recent")
    out = StringIO()
    call_command("prune_lineage_events", "--older-than", "30d", stdout=out)
    assert f"dropped partition {month(old_month)}" in out.getvalue()
    assert "Deleted 4 raw events" in out.getvalue()
    assert list(RunEvent.objects.values_list("job_name", flat=True)) == ["recent"]
    assert month(old_month) not in names()
    assert AuditEvent.objects.get(action="lineage.events_pruned").after["partitions_dropped"] == [month(old_month)]


@pytest.mark.django_db
def test_retention_takes_a_dropped_months_count_from_the_statistics_once_analyzed():
    now = timezone.now()
    old_month = partitions.add_months(partitions.month_start(now), -3)
    partitions.create_ahead(old_month, ahead=0)
    for day in range(3):
        store_at(old_month + timedelta(days=day), job=f"old_{day}")
    with connection.cursor() as cursor:
        cursor.execute(f"ANALYZE {month(old_month)}")
    out = StringIO()
    call_command("prune_lineage_events", "--older-than", "30d", stdout=out)
    assert f"dropped partition {month(old_month)} (about 3 events)" in out.getvalue()
    assert "Deleted about 3 raw events" in out.getvalue()
    audit = AuditEvent.objects.get(action="lineage.events_pruned").after
    assert (audit["deleted"], audit["deleted_exact"]) == (3, False)

"""python manage.py prune_lineage_events --older-than 30d"""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from lineage.graph import lineage_graph
from lineage.ingest import store_event
from lineage.models import Job, JobDataset, Run, RunDataset, RunEvent
from registry.models import AuditEvent, Dataset

from .conftest import WAREHOUSE, run_event

pytestmark = pytest.mark.django_db


@pytest.fixture
def old_and_new_events(db):
    for i in range(7):
        store_event(run_event("COMPLETE", job=f"old_{i}", inputs=["raw.orders"], outputs=[f"mart.t{i}"]))
    RunEvent.objects.update(event_time=timezone.now() - timedelta(days=45), received_at=timezone.now() - timedelta(days=45))
    store_event(run_event("START", job="recent", inputs=["raw.orders"], outputs=["mart.recent"]))


def prune(*args) -> str:
    out = StringIO()
    call_command("prune_lineage_events", *args, stdout=out)
    return out.getvalue()


def test_old_events_are_deleted_in_batches_and_the_lineage_stays(old_and_new_events):
    kept = {m: m.objects.count() for m in (Job, Run, Dataset, JobDataset, RunDataset)}
    output = prune("--older-than", "30d", "--batch-size", "3")
    assert RunEvent.objects.count() == 1 and RunEvent.objects.get().job_name == "recent"
    assert {m: m.objects.count() for m in kept} == kept
    assert "3/7 deleted" in output and "6/7 deleted" in output and "7/7 deleted" in output
    assert "Deleted 7 raw events" in output
    graph = lineage_graph(f"dataset:{WAREHOUSE}:raw.orders", depth=1).to_marquez()
    assert len(graph["graph"]) == 1 + 8 + 8  # raw.orders, 8 jobs, 8 outputs
    assert AuditEvent.objects.get(action="lineage.events_pruned").after["deleted"] == 7


def test_a_dry_run_only_counts(old_and_new_events):
    assert "7 events from before" in prune("--older-than", "30d", "--dry-run")
    assert RunEvent.objects.count() == 8


def test_a_bad_age_is_refused_with_an_example():
    with pytest.raises(CommandError, match="not a duration such as 15s"):
        prune("--older-than", "a month")


def test_the_demo_lineage_loads_once_and_validates(db):
    from lineage.demo import demo_events, demo_test_events, load_lineage_demo
    from lineage.validation import run_event_problems

    loaded_at = timezone.now()
    assert all(not run_event_problems(e) for e in demo_events(loaded_at) + demo_test_events(loaded_at))
    load_lineage_demo()
    counts = (RunEvent.objects.count(), Job.objects.count(), JobDataset.objects.count())
    load_lineage_demo()
    assert (RunEvent.objects.count(), Job.objects.count(), JobDataset.objects.count()) == counts
    # The eight pipelines' START and final event, and the two dbt test runs of retail.public.orders.
    assert counts[0] == 18 and Run.objects.filter(state="FAIL").count() == 1


def test_column_usage_older_than_the_usage_window_is_deleted_in_batches(db, settings):
    from lineage.models import FieldEdge
    from registry.usage import ColumnRead, InputSchema

    from .conftest import column_lineage_facet, dataset, input_field, schema_facet

    settings.COLUMN_USAGE_WINDOW = timedelta(days=30)
    facet = column_lineage_facet({"id": [input_field("raw.orders", "id", "DIRECT")],
                                  "total": [input_field("raw.orders", "amount", "DIRECT")]})
    for job in ("old_report", "new_report"):
        orders = dataset("raw.orders", schema=schema_facet(("id", "bigint"), ("amount", "numeric(10,2)")))
        store_event(run_event("COMPLETE", job=job, inputs=[orders], outputs=[dataset(f"mart.{job}", columnLineage=facet)]))
    long_ago = timezone.now() - timedelta(days=31)
    ColumnRead.objects.filter(job_name="old_report").update(last_seen_at=long_ago)
    FieldEdge.objects.filter(job__name="old_report").update(last_seen_at=long_ago)
    InputSchema.objects.filter(job_name="old_report").update(last_seen_at=long_ago)
    assert "2 column reads not seen within COLUMN_USAGE_WINDOW would be deleted" in prune("--older-than", "30d", "--dry-run")
    output = prune("--older-than", "30d", "--batch-size", "1")
    assert "2/2 column reads" in output and "2/2 field edges" in output and "1/1 input schemas" in output
    assert set(ColumnRead.objects.values_list("job_name", flat=True)) == {"new_report"}
    assert set(InputSchema.objects.values_list("job_name", flat=True)) == {"new_report"}
    assert set(FieldEdge.objects.values_list("job__name", flat=True)) == {"new_report"}
    assert AuditEvent.objects.get(action="lineage.events_pruned").after["column_reads_deleted"] == 2


def test_the_demo_lineage_shows_which_columns_the_retailers_sql_reads(db):
    from lineage.demo import load_lineage_demo
    from registry.usage import ColumnRead

    load_lineage_demo()
    orders = set(ColumnRead.objects.filter(dataset__name="retail.public.orders", job_name="finance.daily_revenue")
                 .values_list("column", "kind"))
    assert orders == {("created_at", "DIRECT"), ("channel", "DIRECT"), ("status", "INDIRECT"), ("id", "INDIRECT")}
    assert ColumnRead.objects.filter(dataset__name="retail.public.inventory", column="").exists()  # no SQL: unknown

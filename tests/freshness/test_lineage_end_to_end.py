"""From an OpenLineage RunEvent posted to /api/v1/lineage to the dataset's freshness."""

from __future__ import annotations

import uuid
from datetime import timedelta

from django.utils import timezone

from freshness.constants import FreshnessStatus
from freshness.evaluation import set_slo
from freshness.models import DatasetFreshness, FreshnessTransition
from tests.lineage import conftest as lineage_conftest
from tests.lineage.conftest import dataset as ol_dataset
from tests.lineage.conftest import post, run_event

lineage_secret = lineage_conftest.lineage_secret  # the fixture: the Checkout team's pipeline token

ORDERS = ol_dataset("retail.public.orders", namespace="postgres://retail-db:5432")


def event(event_type: str, *, at, rows: int | None, run_id: str | None = None) -> dict:
    return run_event(event_type, run_id=run_id, outputs=[dict(ORDERS)], row_count=rows,
                     event_time=at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"))


def test_a_posted_complete_event_refreshes_the_dataset_and_an_empty_one_does_not(client, dataset, owner,
                                                                                  lineage_secret):
    set_slo(dataset, max_age=timedelta(hours=1), by=owner)
    written = (timezone.now() - timedelta(minutes=10)).replace(microsecond=0)
    run = str(uuid.uuid4())

    assert post(client, event("START", at=written - timedelta(minutes=5), rows=None, run_id=run),
                lineage_secret).status_code < 300
    assert post(client, event("COMPLETE", at=written - timedelta(minutes=1), rows=0), lineage_secret).status_code < 300
    row = DatasetFreshness.objects.get(dataset=dataset)
    assert (row.status, row.last_write_at, row.last_empty_write_at) == (
        FreshnessStatus.UNKNOWN, None, written - timedelta(minutes=1))

    complete = event("COMPLETE", at=written, rows=1200, run_id=run)
    assert post(client, complete, lineage_secret).status_code < 300
    assert post(client, complete, lineage_secret).status_code < 300  # a retry of the same event
    row.refresh_from_db()
    assert (row.status, row.last_write_at, row.next_check_at) == (
        FreshnessStatus.FRESH, written, written + timedelta(hours=1))
    assert FreshnessTransition.objects.filter(dataset=dataset, to_status=FreshnessStatus.FRESH).count() == 1
    assert "successful write of 1200 rows by" in FreshnessTransition.objects.get(
        dataset=dataset, to_status=FreshnessStatus.FRESH).reason


def test_a_failed_run_posted_to_lineage_refreshes_nothing(client, dataset, owner, lineage_secret):
    set_slo(dataset, max_age=timedelta(hours=1), by=owner)
    assert post(client, event("FAIL", at=timezone.now() - timedelta(minutes=1), rows=50),
                lineage_secret).status_code < 300
    assert DatasetFreshness.objects.get(dataset=dataset).status == FreshnessStatus.UNKNOWN

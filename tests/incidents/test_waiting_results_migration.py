"""Results still waiting in the incidents app's own table when lineage takes the
queue over (incidents 0003) stay waiting, in their QualityCheck rows; the others
count as judged."""

from __future__ import annotations

import uuid

import pytest
from django.utils import timezone

from lineage.models import QualityCheck
from tests.migrations import migrate, migrate_to_latest

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("incidents", "0002_pending_quality_results"), ("lineage", "0012_raw_events_partitioned_by_event_time")]


def test_results_waiting_before_the_upgrade_wait_in_their_quality_check_rows():
    old = migrate(BEFORE).loader.project_state(BEFORE).apps
    try:
        Dataset = old.get_model("registry", "Dataset")
        Check = old.get_model("lineage", "QualityCheck")
        Pending = old.get_model("incidents", "PendingResult")
        orders = Dataset.objects.create(namespace="postgres://db", name="public.orders")
        now = timezone.now()
        waiting, judged = uuid.uuid4(), uuid.uuid4()
        for run in (waiting, judged):
            Check.objects.create(dataset=orders, run_uuid=run, event_type="COMPLETE", event_time=now, assertions=[])
        Check.objects.create(dataset=orders, run_uuid=None, event_type="", event_time=now, assertions=[])
        Pending.objects.create(dataset=orders, run_uuid=waiting, event_type="COMPLETE", event_time=now)
        Pending.objects.create(dataset=orders, run_uuid=None, event_type="", event_time=now)
    finally:
        migrate_to_latest()

    assert dict(QualityCheck.objects.values_list("run_uuid", "judged")) == {waiting: False, judged: True, None: False}

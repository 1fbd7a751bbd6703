"""Freshness tests: time is frozen with time-machine unless a real server is involved."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
import time_machine

from freshness.evaluation import set_slo
from lineage.signals import dataset_written
from registry.models import Dataset

T0 = datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)
HOUR = timedelta(hours=1)


@pytest.fixture
def clock():
    """Time stands still at T0 until the test moves it: clock.shift(timedelta) / clock.move_to(dt)."""
    with time_machine.travel(T0, tick=False) as traveller:
        yield traveller


def announce_write(dataset: Dataset, *, at: datetime, rows: int | None = 100, event_type: str = "COMPLETE") -> None:
    """What lineage ingest sends for each output dataset of a stored RunEvent."""
    dataset_written.send(
        sender=None, dataset=dataset, job=None, run=None, event_type=event_type, event_time=at,
        succeeded=event_type == "COMPLETE", row_count=rows, schema_facet=None,
    )


@pytest.fixture
def six_hour_slo(dataset, owner, clock):
    """retail.public.orders must be written every 6 h, with a warning after 4 h."""
    return set_slo(dataset, max_age=6 * HOUR, warn_after=4 * HOUR, by=owner)


def make_datasets(n: int, *, prefix: str = "ds") -> list[Dataset]:
    return Dataset.objects.bulk_create(
        [Dataset(namespace="bench://", name=f"{prefix}{i:05d}") for i in range(n)]
    )

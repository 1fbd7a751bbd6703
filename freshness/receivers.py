"""Freshness listens to lineage's announcement that a dataset was written."""

from __future__ import annotations

from django.dispatch import receiver
from django.utils import timezone

from freshness.evaluation import record_write
from lineage.signals import dataset_written


@receiver(dataset_written, dispatch_uid="freshness.on_dataset_written")
def on_dataset_written(sender, *, dataset, event_type: str, event_time, succeeded: bool,
                       row_count: int | None = None, job=None, run=None, sent_by=None, token=None,
                       **kwargs) -> None:
    # Only a COMPLETE run is a successful write; START/RUNNING/FAIL/ABORT refresh nothing.
    if not succeeded:
        return
    label = str(job) if job is not None else ""
    record_write(dataset, at=event_time or timezone.now(), row_count=row_count, run_label=label,
                 by=sent_by, token=token)

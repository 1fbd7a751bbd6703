"""Celery entry points: judging a dataset's new quality results, a quality deadline, and sending an
incident's messages."""

from __future__ import annotations

from django.utils import timezone

from incidents import notifications, pending, quality_slo
from registry.celery import app


@app.task(name=pending.TASK, ignore_result=True)
def evaluate_quality(dataset_ids: list[int] | int) -> int:
    """Published after the ingest's commit: judge the datasets' results waiting for them."""
    return pending.evaluate_pending(dataset_ids if isinstance(dataset_ids, list) else [dataset_ids])


@app.task(name=quality_slo.TASK, ignore_result=True)
def quality_deadline(dataset_id: int) -> int:
    """A quality SLO's deadline came (eta = the deadline): a breach unless the checks passed since."""
    return quality_slo.evaluate(timezone.now(), [dataset_id])


@app.task(name=notifications.DELIVER_TASK, bind=True, ignore_result=True, max_retries=8)
def deliver_notifications(self, incident_id: int) -> int:
    sent, failed = notifications.deliver_pending(incident_id)
    if failed:
        raise self.retry(countdown=min(2 ** self.request.retries, 300))
    return sent

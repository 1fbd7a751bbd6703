"""Celery tasks: a dataset's own deadline, and the beat sweep that catches what a lost task missed.

The entry points only: what they run is in freshness.evaluation and
freshness.scheduling, which publishes the deadline task by its name.
"""

from __future__ import annotations

import time
from datetime import timedelta

from django.utils import timezone

from freshness.constants import TransitionSource
from freshness.evaluation import PassResult, evaluate
from freshness.models import DatasetFreshness
from freshness.scheduling import DEADLINE_TASK, schedule_deadline_tasks, sweep
from registry.celery import app

# A worker's clock may run a hair behind the one that set the eta; wait that out
# rather than leave the breach to the next sweep.
EARLY_TOLERANCE = timedelta(seconds=2)


@app.task(name=DEADLINE_TASK, ignore_result=True)
def evaluate_dataset(dataset_id: int) -> dict:
    """Evaluate one dataset at its deadline (scheduled with eta = the deadline)."""
    deadline = DatasetFreshness.objects.filter(pk=dataset_id).values_list("next_check_at", flat=True).first()
    if deadline is None:
        return {"evaluated": 0, "transitions": 0}  # a write or an SLO edit made this task moot
    early = deadline - timezone.now()
    if timedelta(0) < early <= EARLY_TOLERANCE:
        time.sleep(early.total_seconds())
    now = timezone.now()
    result = evaluate(now, dataset_ids=[dataset_id], source=TransitionSource.DEADLINE)
    schedule_deadline_tasks(now, dataset_ids=[dataset_id])
    return _summary(result)


@app.task(name="freshness.sweep", ignore_result=True)
def sweep_task() -> dict:
    """The beat entry 'freshness-sweep' (every FRESHNESS_SWEEP_INTERVAL)."""
    return _summary(sweep())


def _summary(result: PassResult) -> dict:
    return {"evaluated": result.evaluated, "transitions": result.transitions}

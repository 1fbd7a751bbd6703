"""Keeping the deadlines: who evaluates a dataset when its deadline comes.

With a broker, a deadline within FRESHNESS_ETA_HORIZON gets a Celery task with
eta = the deadline (`schedule_deadline_tasks`), and the beat sweep (`sweep`)
evaluates whatever is due and schedules the deadlines entering the horizon.
Without one (tasks run eagerly), the in-process evaluator (freshness.runner)
sweeps in a loop and a write wakes it (`wake`).

Evaluation (freshness.evaluation) does not know any of this: after a write or
an SLO edit moves a deadline it tells its `on_deadlines_moved` listeners, and
this module is one. The Celery entry points (freshness.tasks) and the
in-process loop (freshness.runner) import this module, never the other way:
the deadline task is published by its registered name.

No network I/O happens inside a transaction: deadline tasks are published
with `transaction.on_commit`.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from freshness import deadlines as other_deadlines
from freshness.constants import TransitionSource
from freshness.evaluation import KnownDeadlines, PassResult, evaluate, on_deadlines_moved
from freshness.models import DatasetFreshness, EvaluatorState

log = logging.getLogger(__name__)

# The Celery task that evaluates one dataset at its deadline (freshness.tasks).
DEADLINE_TASK = "freshness.evaluate_dataset"

_wake = threading.Event()


def wake() -> None:
    """Tell a running in-process evaluator that a deadline may have moved nearer."""
    _wake.set()


other_deadlines.doorbell(wake)


def sleep_until_woken(seconds: float) -> None:
    """The in-process evaluator's wait between passes: `seconds`, or until `wake`."""
    _wake.clear()
    _wake.wait(seconds)


@on_deadlines_moved
def keep_moved_deadlines(now: datetime, dataset_ids: list[int], *, deadlines: KnownDeadlines | None = None) -> None:
    """Evaluation moved these deadlines (inside its transaction): schedule them.

    A routine write passes the row it left: only a deadline within the horizon
    that has no task yet is scheduled, so most writes cost no query here."""
    if deadlines is not None:
        until = now + settings.FRESHNESS_ETA_HORIZON
        dataset_ids = [i for i in dataset_ids if _needs_a_task(*deadlines[i], until)]
        if not dataset_ids:
            return
    schedule_deadline_tasks(now, dataset_ids=dataset_ids)


def _needs_a_task(next_check_at: datetime | None, task_eta: datetime | None, until: datetime) -> bool:
    """DatasetFreshnessQuerySet.needing_a_task for one row in hand."""
    return next_check_at is not None and task_eta != next_check_at and next_check_at <= until


def schedule_deadline_tasks(now: datetime, *, dataset_ids: list[int] | None = None) -> int:
    """Give every deadline within FRESHNESS_ETA_HORIZON a Celery task with that eta.

    Only near deadlines get a task: an eta task waits in a worker's memory, and a
    Redis broker redelivers unacknowledged tasks after its visibility timeout, so
    far deadlines wait for a later sweep to schedule them. Without a broker
    (tasks run eagerly) nothing is scheduled: the in-process evaluator covers it.
    """
    if settings.CELERY_TASK_ALWAYS_EAGER:
        transaction.on_commit(wake)
        return 0

    with transaction.atomic():
        pending = DatasetFreshness.objects.needing_a_task(now + settings.FRESHNESS_ETA_HORIZON)
        if dataset_ids is not None:
            pending = pending.filter(dataset_id__in=dataset_ids)
        due = list(pending.select_for_update(skip_locked=True).values_list("dataset_id", "next_check_at"))
        if not due:
            return 0
        for ids in _chunks([d for d, _ in due], 5000):
            # One UPDATE per chunk; task_eta takes the deadline the task is scheduled for.
            DatasetFreshness.objects.filter(dataset_id__in=ids).update(task_eta=F("next_check_at"))

        def publish() -> None:
            from registry.celery import (
                app,  # Celery loads in the processes that send, not at every start
            )

            for dataset_id, eta in due:
                try:
                    # By name: freshness.tasks defines it, and imports this module.
                    app.send_task(DEADLINE_TASK, args=[dataset_id], eta=eta, expires=eta + timedelta(minutes=5))
                except Exception:  # a broker outage must not fail the write; the sweep covers it
                    log.exception("could not schedule the deadline task of dataset %s", dataset_id)
                    break

        transaction.on_commit(publish)
    return len(due)


def _chunks(items: list, size: int):
    for start in range(0, len(items), size):
        yield items[start:start + size]


def sweep(now: datetime | None = None, *, source: str = TransitionSource.SWEEP) -> PassResult:
    """One beat sweep: evaluate everything due, note the sweep, schedule near deadlines."""
    started = time.perf_counter()
    now = now or timezone.now()
    result = evaluate(now, source=source)
    EvaluatorState.objects.update_or_create(pk=1, defaults={
        "last_sweep_at": now, "last_sweep_seconds": time.perf_counter() - started,
        "last_sweep_transitions": result.transitions,
    })
    schedule_deadline_tasks(now)
    # Other apps' deadlines (freshness.deadlines): the same sweep keeps them.
    other_deadlines.sweep_kinds(now)
    return result


def next_deadline() -> datetime | None:
    """The earliest pending deadline (freshness's or another app's), for the in-process evaluator's sleep."""
    own = (DatasetFreshness.objects.filter(next_check_at__isnull=False)
           .order_by("next_check_at").values_list("next_check_at", flat=True).first())
    other = other_deadlines.next_deadline()
    return min((d for d in (own, other) if d is not None), default=None)

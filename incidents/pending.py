"""Quality results are judged after the ingest commits, not inside it.

Judging a result takes several statements (the dataset's lock, its check results,
the binding and versions, the status row, the open incidents, the quality SLO).
Inside the ingest's transaction they cost every dbt test event most of its
throughput. So the ingest only stores the result, as it always does (lineage's
`QualityCheck` row, written "not judged"), and after commit hands the dataset to
the evaluator: a Celery task with a broker, published by a thread of the
process's own so that the ingest does not wait for the broker either (the
datasets waiting for it go in one task); without a broker, the same process
judges them at once. The ingest pays no statement of its own for this: the row it
writes anyway is the queue.

`evaluate_pending` judges a dataset's waiting results oldest first and marks them
judged in the same transaction, under the dataset's advisory lock: two evaluators
(two workers, a worker and the sweep) take turns, and a result is judged once. A
result that a later event of the run replaced meanwhile stays waiting, and is
judged again as it now reads. A crash between the ingest's commit and the
evaluation (the process ended before its thread published), or a broker that
refused the task, leaves the rows waiting; freshness's sweep (beat, or the
in-process loop without a broker) judges every result waiting longer than
`SWEEP_AFTER`, through the deadline kind registered here.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from datetime import datetime, timedelta
from functools import reduce
from operator import or_

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.db.models.query import QuerySet

from freshness.deadlines import DeadlineKind, deadline_kind
from incidents.evaluation import lock_dataset, record_quality
from lineage.signals import quality_results_waiting

log = logging.getLogger(__name__)

TASK = "incidents.evaluate_quality"
KIND = "quality_results"
# The task published after commit normally judges a result within milliseconds;
# the sweep leaves it that long before it takes over.
SWEEP_AFTER = timedelta(seconds=10)
# A result whose evaluation failed this often is left for an operator (its count in `judge_attempts`, the errors in the log).
MAX_ATTEMPTS = 5
# Results judged per dataset in one transaction (a backlog drains in several).
BATCH = 200


def waiting() -> QuerySet:
    """The stored quality results not judged yet (less those given up on)."""
    return quality_results_waiting().filter(judge_attempts__lt=MAX_ATTEMPTS).order_by()


def judge_after_commit(dataset_id: int) -> None:
    """Inside the ingest's transaction, which has stored the result: wake the
    evaluator once it is committed."""
    transaction.on_commit(lambda: _wake(dataset_id))


def _wake(dataset_id: int) -> None:
    # After commit: the result is stored whatever happens here, so nothing here may fail the ingest.
    if settings.CELERY_TASK_ALWAYS_EAGER:
        try:
            evaluate_pending([dataset_id])
        except Exception:
            log.exception("could not judge the quality results of dataset %s; the sweep will", dataset_id)
        return
    HAND_OVER.add(dataset_id)


class HandOver:
    """The datasets with new results, published to the workers by a daemon thread:
    a request's commit does not wait for a round trip to the broker, and a busy
    ingest publishes at most one task per `every` seconds, with every dataset that
    gathered meanwhile (a publish costs the process about as much CPU as storing
    an event: one per event would halve the ingest)."""

    def __init__(self, per_task: int = 100, every: float = 0.2) -> None:
        self.per_task, self.every = per_task, every
        self.lock = threading.Lock()
        self.waiting: set[int] = set()
        self.wake = threading.Event()
        self.thread: threading.Thread | None = None
        self.pid = 0

    def add(self, dataset_id: int) -> None:
        with self.lock:
            self.waiting.add(dataset_id)
            # A forked server process inherits no thread: it starts its own.
            if self.thread is None or self.pid != os.getpid() or not self.thread.is_alive():
                self.pid = os.getpid()
                self.thread = threading.Thread(target=self._run, name="incidents-hand-over", daemon=True)
                self.thread.start()
        self.wake.set()

    def _run(self) -> None:
        # Celery loads in the processes that send, not at every start.
        from registry.celery import app

        while True:
            self.wake.wait()
            self.wake.clear()
            with self.lock:
                ids, self.waiting = sorted(self.waiting), set()
            for start in range(0, len(ids), self.per_task):
                chunk = ids[start:start + self.per_task]
                try:
                    app.send_task(TASK, args=[chunk])
                except Exception:  # the broker is down: the rows wait for the sweep
                    log.exception("could not hand the quality results of datasets %s to a worker; the sweep will",
                                  chunk)
            time.sleep(self.every)


HAND_OVER = HandOver()


def evaluate_pending(dataset_ids: list[int] | None = None, *, before: datetime | None = None,
                     limit: int = 1000) -> int:
    """Judge the waiting results (of `dataset_ids`; stored before `before`), each
    dataset in its own transaction, oldest result first; how many were judged."""
    rows = waiting()
    if dataset_ids is not None:
        rows = rows.filter(dataset_id__in=dataset_ids)
    if before is not None:
        rows = rows.filter(checked_at__lt=before)
    ids = sorted(set(rows.values_list("dataset_id", flat=True)[:limit]))
    judged = 0
    for dataset_id in ids:
        try:
            judged += _evaluate_dataset(dataset_id)
        except Exception:
            log.exception("could not judge the quality results of dataset %s", dataset_id)
            waiting().filter(dataset_id=dataset_id).update(judge_attempts=F("judge_attempts") + 1)
    return judged


@transaction.atomic
def _evaluate_dataset(dataset_id: int) -> int:
    # The lock first: another evaluator of this dataset commits (and marks what it
    # judged) before these rows are read.
    lock_dataset(dataset_id)
    rows = list(waiting().filter(dataset_id=dataset_id).order_by("checked_at", "id")
                .only("run_uuid", "event_type", "event_time", "assertions", "job_name", "checked_at")[:BATCH])
    for row in rows:
        record_quality(dataset_id, run_uuid=row.run_uuid, event_type=row.event_type, event_time=row.event_time,
                       assertions=row.assertions, job_name=row.job_name)
    if rows:
        # Only the writes judged here: a row a later event replaced since waits to be judged as it now reads.
        quality_results_waiting().filter(reduce(or_, (Q(pk=row.pk, checked_at=row.checked_at) for row in rows))
                                         ).update(judged=True)
    return len(rows)


def _sweep(now: datetime) -> int:
    return evaluate_pending(before=now - SWEEP_AFTER)


def _next_due() -> datetime | None:
    oldest = waiting().order_by("checked_at").values_list("checked_at", flat=True).first()
    return oldest + SWEEP_AFTER if oldest else None


# Freshness's sweep takes what the published task missed. No task is scheduled
# ahead for these: the one published after commit is the fast path.
deadline_kind(DeadlineKind(name=KIND, task=TASK, evaluate=_sweep, unscheduled=lambda until: [],
                           next_deadline=_next_due))

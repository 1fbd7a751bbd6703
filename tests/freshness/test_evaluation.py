"""The evaluator: the deadline task, the sweep, transitions as rows and audit events,
exactly-once under concurrency, and set-based writes."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection

from freshness import evaluation
from freshness.constants import EVALUATOR_ACTOR, AuditAction, FreshnessStatus, TransitionSource
from freshness.evaluation import evaluate, record_write, set_slo
from freshness.models import DatasetFreshness, EvaluatorState, FreshnessTransition
from freshness.scheduling import sweep
from freshness.tasks import evaluate_dataset
from registry.models import AuditEvent
from tests.freshness.conftest import HOUR, T0, make_datasets

S6, W4 = 6 * HOUR, 4 * HOUR


def test_the_sweep_records_a_breach_as_a_transition_row_and_an_audit_event(dataset, six_hour_slo, clock):
    record_write(dataset, at=T0, row_count=10)
    result = sweep(T0 + S6 + timedelta(seconds=3))

    assert result.transitions == 1
    transition = FreshnessTransition.objects.get(dataset=dataset, to_status=FreshnessStatus.STALE)
    assert (transition.from_status, transition.source) == (FreshnessStatus.FRESH, TransitionSource.SWEEP)
    # It was due at the warning threshold, which the stale deadline overtook before anyone looked.
    assert transition.due_at == T0 + W4
    assert transition.reason == "last successful write 6h ago; the SLO allows 6h"
    audit = AuditEvent.objects.filter(action=AuditAction.TRANSITION, object_id=str(dataset.pk)).latest("id")
    assert audit.actor_label == EVALUATOR_ACTOR
    assert audit.object_repr == str(dataset)
    assert audit.before == {"status": "fresh"}
    assert audit.after["status"] == "stale" and audit.after["transition"] == transition.pk


def test_fresh_goes_to_warning_then_to_stale_each_at_its_own_deadline(dataset, six_hour_slo, clock):
    record_write(dataset, at=T0, row_count=10)
    evaluate(T0 + W4)
    evaluate(T0 + S6)
    steps = list(FreshnessTransition.objects.filter(dataset=dataset).order_by("id")
                 .values_list("from_status", "to_status", "due_at", "at"))
    assert steps == [
        ("no_slo", "unknown", None, T0),  # the SLO was set
        ("unknown", "fresh", None, T0),
        ("fresh", "warning", T0 + W4, T0 + W4),
        ("warning", "stale", T0 + S6, T0 + S6),
    ]
    assert DatasetFreshness.objects.get(dataset=dataset).next_check_at is None


def test_nothing_changes_before_the_deadline(dataset, six_hour_slo, clock):
    record_write(dataset, at=T0, row_count=10)
    assert evaluate(T0 + W4 - timedelta(microseconds=1)).evaluated == 0
    assert not FreshnessTransition.objects.filter(dataset=dataset, source=TransitionSource.SWEEP).exists()


def test_the_deadline_task_records_the_breach(dataset, owner, clock):
    set_slo(dataset, max_age=S6, by=owner)
    record_write(dataset, at=T0, row_count=10)
    clock.move_to(T0 + S6)
    evaluate_dataset(dataset.pk)
    transition = FreshnessTransition.objects.get(dataset=dataset, to_status=FreshnessStatus.STALE)
    assert (transition.source, transition.at, transition.lag) == (TransitionSource.DEADLINE, T0 + S6, timedelta(0))


@pytest.mark.parametrize("first", ["deadline task", "sweep"])
def test_the_deadline_task_and_the_sweep_record_a_transition_exactly_once(dataset, owner, clock, first):
    set_slo(dataset, max_age=S6, by=owner)
    record_write(dataset, at=T0, row_count=10)
    clock.move_to(T0 + S6 + timedelta(seconds=1))
    runs = [lambda: evaluate_dataset(dataset.pk), lambda: sweep()]
    for run in runs if first == "deadline task" else reversed(runs):
        run()
    assert FreshnessTransition.objects.filter(dataset=dataset, to_status=FreshnessStatus.STALE).count() == 1
    assert AuditEvent.objects.filter(action=AuditAction.TRANSITION, object_id=str(dataset.pk),
                                     after__status="stale").count() == 1


def test_a_deadline_task_made_moot_by_a_later_write_changes_nothing(dataset, owner, clock):
    set_slo(dataset, max_age=S6, by=owner)
    record_write(dataset, at=T0, row_count=10)
    clock.move_to(T0 + 5 * HOUR)
    record_write(dataset, at=T0 + 5 * HOUR, row_count=10)  # the deadline moved to T0 + 11 h
    clock.move_to(T0 + S6)
    evaluate_dataset(dataset.pk)
    assert DatasetFreshness.objects.get(dataset=dataset).status == FreshnessStatus.FRESH


def test_a_write_after_a_deadline_nobody_evaluated_yet_records_the_breach_first(dataset, owner, clock):
    """The deadline task runs late behind a busy worker; the next write arrives first.
    The dataset was stale from its deadline to that write: a breach all the same."""
    set_slo(dataset, max_age=S6, by=owner)
    record_write(dataset, at=T0, row_count=10)
    clock.move_to(T0 + S6 + HOUR)
    record_write(dataset, at=T0 + S6 + HOUR, row_count=10)
    *_, stale, fresh = FreshnessTransition.objects.filter(dataset=dataset).order_by("at", "id")
    assert (stale.to_status, stale.due_at, stale.source) == (FreshnessStatus.STALE, T0 + S6, TransitionSource.DEADLINE)
    assert (fresh.from_status, fresh.to_status, fresh.source) == (FreshnessStatus.STALE, FreshnessStatus.FRESH,
                                                                  TransitionSource.WRITE)
    clock.move_to(T0 + S6 + 2 * HOUR)
    evaluate_dataset(dataset.pk)  # the late task finds nothing left to do
    assert FreshnessTransition.objects.filter(dataset=dataset, to_status=FreshnessStatus.STALE).count() == 1


def test_a_sweep_notes_when_it_ran(dataset, six_hour_slo, clock):
    sweep(T0)
    state = EvaluatorState.objects.get()
    assert (state.last_sweep_at, state.last_sweep_transitions) == (T0, 0)


def test_a_sweep_records_every_transition_in_a_fixed_number_of_statements(db, owner, django_assert_num_queries):
    datasets = make_datasets(300)
    DatasetFreshness.objects.bulk_create([
        DatasetFreshness(dataset=d, max_age=S6, last_write_at=T0 - 7 * HOUR, status=FreshnessStatus.FRESH,
                         next_check_at=T0 - HOUR) for d in datasets
    ])
    # 1. SAVEPOINT (the batch's atomic block, inside the test's transaction)
    # 2. one statement: read the 300 due rows, UPDATE them, INSERT 300 transitions and 300 audit events
    # 3. the listeners of freshness.signals.status_changed: incidents asks, in one query, which of
    #    the 300 are bound to a contract (none here)
    # 4. RELEASE SAVEPOINT
    with django_assert_num_queries(4):
        result = evaluate(T0)
    assert result.transitions == 300
    assert FreshnessTransition.objects.filter(to_status=FreshnessStatus.STALE).count() == 300
    assert AuditEvent.objects.filter(action=AuditAction.TRANSITION).count() == 300


def test_a_sweep_drains_the_due_rows_in_batches(db):
    datasets = make_datasets(25)
    DatasetFreshness.objects.bulk_create([
        DatasetFreshness(dataset=d, max_age=S6, last_write_at=T0 - 7 * HOUR, status=FreshnessStatus.FRESH,
                         next_check_at=T0 - HOUR) for d in datasets
    ])
    result = evaluate(T0, batch_size=10)
    assert (result.evaluated, result.transitions, result.batches) == (25, 25, 3)


def test_the_portable_writer_of_the_sqlite_demo_records_the_same_transitions(dataset, six_hour_slo, clock, monkeypatch):
    monkeypatch.setattr(evaluation, "_batch_postgresql", evaluation._batch_portable)
    record_write(dataset, at=T0, row_count=10)
    evaluate(T0 + S6)
    evaluate(T0 + S6)
    transition = FreshnessTransition.objects.get(dataset=dataset, to_status=FreshnessStatus.STALE)
    assert (transition.from_status, transition.due_at) == (FreshnessStatus.FRESH, T0 + W4)
    audit = AuditEvent.objects.filter(action=AuditAction.TRANSITION, object_id=str(dataset.pk)).latest("id")
    assert audit.after["transition"] == transition.pk


@pytest.mark.django_db(transaction=True)
def test_two_sweeps_running_at_once_record_each_transition_once():
    datasets = make_datasets(400, prefix="race")
    DatasetFreshness.objects.bulk_create([
        DatasetFreshness(dataset=d, max_age=S6, last_write_at=T0 - 7 * HOUR, status=FreshnessStatus.FRESH,
                         next_check_at=T0 - HOUR) for d in datasets
    ])
    barrier = threading.Barrier(2)
    results = []

    def run() -> None:
        try:
            barrier.wait()
            results.append(evaluate(T0, batch_size=50))
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert sum(r.transitions for r in results) == 400
    assert FreshnessTransition.objects.count() == 400
    assert FreshnessTransition.objects.values("dataset").distinct().count() == 400
    assert AuditEvent.objects.filter(action=AuditAction.TRANSITION).count() == 400


@pytest.mark.django_db(transaction=True)
def test_a_sweep_skips_a_row_an_ingest_is_writing_instead_of_waiting_for_it():
    from django.db import transaction

    held, other = make_datasets(2, prefix="held")
    DatasetFreshness.objects.bulk_create([
        DatasetFreshness(dataset=d, max_age=S6, last_write_at=T0 - 7 * HOUR, status=FreshnessStatus.FRESH,
                         next_check_at=T0 - HOUR) for d in (held, other)
    ])
    locked, release = threading.Event(), threading.Event()

    def ingest_holding_the_row() -> None:
        try:
            with transaction.atomic():
                DatasetFreshness.objects.select_for_update().get(dataset=held)
                locked.set()
                release.wait(timeout=30)
        finally:
            connection.close()

    writer = threading.Thread(target=ingest_holding_the_row)
    writer.start()
    try:
        assert locked.wait(timeout=10)
        first = evaluate(T0)  # returns at once: the held row is skipped, not waited for
        assert (first.evaluated, first.transitions) == (1, 1)
    finally:
        release.set()
        writer.join()
    second = evaluate(T0)
    assert (second.evaluated, second.transitions) == (1, 1)
    assert FreshnessTransition.objects.filter(dataset__in=[held, other], to_status="stale").count() == 2

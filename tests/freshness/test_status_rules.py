"""The status rule, deadlines and what counts as a successful write."""

from __future__ import annotations

from datetime import timedelta

import pytest

from freshness.constants import FreshnessStatus
from freshness.evaluation import evaluate, record_write
from freshness.models import DatasetFreshness
from freshness.rules import deadline_for, human_duration, status_for
from tests.freshness.conftest import HOUR, T0, announce_write

S6, W4 = 6 * HOUR, 4 * HOUR


@pytest.mark.parametrize(("max_age", "warn_after", "written_ago", "expected"), [
    (None, None, timedelta(0), FreshnessStatus.NO_SLO),
    (S6, W4, None, FreshnessStatus.UNKNOWN),
    (S6, W4, 1 * HOUR, FreshnessStatus.FRESH),
    (S6, W4, 4 * HOUR, FreshnessStatus.WARNING),  # the warning threshold itself warns
    (S6, W4, 5 * HOUR, FreshnessStatus.WARNING),
    (S6, W4, 6 * HOUR, FreshnessStatus.STALE),  # the deadline itself is a breach
    (S6, None, 5 * HOUR, FreshnessStatus.FRESH),  # no warning threshold: fresh until stale
    (S6, None, 7 * HOUR, FreshnessStatus.STALE),
])
def test_each_status_follows_from_the_slo_and_the_age_of_the_last_write(max_age, warn_after, written_ago, expected):
    last_write = None if written_ago is None else T0 - written_ago
    assert status_for(max_age, warn_after, last_write, T0) == expected


def test_a_fresh_dataset_is_next_checked_at_its_warning_threshold_then_at_its_deadline():
    assert deadline_for(FreshnessStatus.FRESH, S6, W4, T0) == T0 + W4
    assert deadline_for(FreshnessStatus.WARNING, S6, W4, T0) == T0 + S6
    assert deadline_for(FreshnessStatus.FRESH, S6, None, T0) == T0 + S6
    assert deadline_for(FreshnessStatus.STALE, S6, W4, T0) is None
    assert deadline_for(FreshnessStatus.UNKNOWN, S6, W4, None) is None


def test_a_dataset_with_an_slo_and_no_write_is_unknown(six_hour_slo):
    assert six_hour_slo.status == FreshnessStatus.UNKNOWN
    assert six_hour_slo.next_check_at is None


def test_a_successful_write_makes_the_dataset_fresh_and_stores_its_next_deadline(dataset, six_hour_slo, clock):
    announce_write(dataset, at=T0 - timedelta(minutes=10))
    row = DatasetFreshness.objects.get(dataset=dataset)
    assert row.status == FreshnessStatus.FRESH
    assert row.last_write_at == T0 - timedelta(minutes=10)
    assert row.next_check_at == T0 - timedelta(minutes=10) + W4
    assert row.stale_at == T0 - timedelta(minutes=10) + S6


def test_a_complete_run_that_wrote_zero_rows_does_not_refresh_the_dataset(dataset, six_hour_slo, clock):
    announce_write(dataset, at=T0, rows=0)
    row = DatasetFreshness.objects.get(dataset=dataset)
    assert row.status == FreshnessStatus.UNKNOWN
    assert row.last_write_at is None
    assert row.last_empty_write_at == T0


def test_an_empty_write_counts_when_the_slo_says_so(dataset, owner, clock):
    from freshness.evaluation import set_slo

    set_slo(dataset, max_age=S6, empty_write_counts=True, by=owner)
    announce_write(dataset, at=T0, rows=0)
    assert DatasetFreshness.objects.get(dataset=dataset).status == FreshnessStatus.FRESH


def test_a_write_without_output_statistics_counts(dataset, six_hour_slo, clock):
    announce_write(dataset, at=T0, rows=None)
    assert DatasetFreshness.objects.get(dataset=dataset).status == FreshnessStatus.FRESH


@pytest.mark.parametrize("event_type", ["START", "RUNNING", "FAIL", "ABORT"])
def test_a_run_that_did_not_complete_refreshes_nothing(dataset, six_hour_slo, clock, event_type):
    announce_write(dataset, at=T0, event_type=event_type)
    assert DatasetFreshness.objects.get(dataset=dataset).status == FreshnessStatus.UNKNOWN


def test_an_older_event_arriving_late_does_not_move_the_last_write_back(dataset, six_hour_slo, clock,
                                                                       django_assert_num_queries):
    announce_write(dataset, at=T0)
    with django_assert_num_queries(1):  # found late by the routine statement itself
        announce_write(dataset, at=T0 - 2 * HOUR)
    assert DatasetFreshness.objects.get(dataset=dataset).last_write_at == T0


def test_a_late_empty_write_still_takes_the_full_path_to_be_remembered(dataset, six_hour_slo, clock):
    announce_write(dataset, at=T0)
    record_write(dataset, at=T0 - HOUR, row_count=0)
    row = DatasetFreshness.objects.get(dataset=dataset)
    assert (row.last_write_at, row.last_empty_write_at) == (T0, T0 - HOUR)


def test_a_producer_clock_ahead_of_ours_buys_no_future_freshness(dataset, six_hour_slo, clock):
    announce_write(dataset, at=T0 + 3 * HOUR)
    assert DatasetFreshness.objects.get(dataset=dataset).last_write_at == T0


def test_a_write_to_a_dataset_without_slo_is_remembered_for_when_an_slo_is_set(dataset, owner, clock):
    from freshness.evaluation import set_slo

    announce_write(dataset, at=T0 - 7 * HOUR)
    assert DatasetFreshness.objects.get(dataset=dataset).status == FreshnessStatus.NO_SLO
    row = set_slo(dataset, max_age=S6, by=owner)
    assert row.status == FreshnessStatus.STALE


def test_a_stale_dataset_becomes_fresh_again_on_its_next_write(dataset, six_hour_slo, clock):
    record_write(dataset, at=T0, row_count=5)
    evaluate(T0 + 7 * HOUR)
    assert DatasetFreshness.objects.get(dataset=dataset).status == FreshnessStatus.STALE
    clock.move_to(T0 + 8 * HOUR)
    announce_write(dataset, at=T0 + 8 * HOUR)
    row = DatasetFreshness.objects.get(dataset=dataset)
    assert (row.status, row.next_check_at) == (FreshnessStatus.FRESH, T0 + 8 * HOUR + W4)


def test_durations_read_like_a_person_would_say_them():
    assert [human_duration(d) for d in (timedelta(seconds=42), 6 * HOUR, timedelta(days=2, hours=3, minutes=5))] == [
        "42s", "6h", "2d 3h"]


def test_a_routine_write_costs_the_ingest_one_statement(dataset, six_hour_slo, clock, django_assert_num_queries):
    record_write(dataset, at=T0 - HOUR, row_count=10, now=T0 - HOUR)
    # 1. UPDATE … WHERE the write is newer, counts and leaves the status as it is
    with django_assert_num_queries(1):
        announce_write(dataset, at=T0)
    row = DatasetFreshness.objects.get(dataset=dataset)
    assert (row.status, row.last_write_at, row.next_check_at) == (FreshnessStatus.FRESH, T0, T0 + W4)



def test_a_routine_write_with_a_near_deadline_still_gets_its_deadline_task(
        dataset, owner, clock, settings, monkeypatch, django_capture_on_commit_callbacks):
    from freshness.evaluation import set_slo
    from freshness.scheduling import DEADLINE_TASK
    from registry.celery import app

    settings.CELERY_TASK_ALWAYS_EAGER = False  # as with a broker; publishing is captured below
    published = []
    monkeypatch.setattr(app, "send_task", lambda name, *, args, eta, expires: published.append((args, eta))
                        if name == DEADLINE_TASK else None)
    set_slo(dataset, max_age=timedelta(seconds=30), by=owner)
    record_write(dataset, at=T0 - timedelta(seconds=5), row_count=1, now=T0 - timedelta(seconds=5))
    with django_capture_on_commit_callbacks(execute=True):
        record_write(dataset, at=T0, row_count=1)  # the routine path: fresh stays fresh
    assert published == [([dataset.pk], T0 + timedelta(seconds=30))]


def test_durations_keep_their_seconds():
    assert [human_duration(timedelta(seconds=s)) for s in (90, 59, 60, 3600 + 2 * 60 + 5, 6 * 3600 + 3)] == [
        "1m 30s", "59s", "1m", "1h 2m", "6h"]


def test_the_slo_form_shows_a_duration_it_reads_back_unchanged():
    from freshness.forms import SLOForm

    for value in (timedelta(seconds=90), 27 * HOUR, timedelta(weeks=2), timedelta(seconds=1.5)):
        shown = SLOForm.base_fields["max_age"].prepare_value(value)
        form = SLOForm({"max_age": shown})
        assert form.is_valid() and form.cleaned_data["max_age"] == value, shown

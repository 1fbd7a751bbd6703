"""Freshness: each dataset's SLO, its current status and a row per status change.

The status rule lives in `freshness.rules` (and its SQL twin); every path that changes a
status (a write, a deadline task, the beat sweep, an SLO edit) goes through
`freshness.evaluation`, which applies it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.db import models
from django.utils import timezone

from freshness.constants import STATUS_CSS, FreshnessStatus, TransitionSource
from freshness.querysets import DatasetFreshnessQuerySet, TransitionQuerySet
from registry.models import Dataset


class DatasetFreshness(models.Model):
    """One row per dataset that has an SLO or has been written; no row means no SLO."""

    dataset = models.OneToOneField(Dataset, on_delete=models.CASCADE, primary_key=True, related_name="freshness")
    max_age = models.DurationField(
        null=True, blank=True,
        help_text="Maximum age since the last successful write before the dataset is stale. Empty: no SLO.",
    )
    warn_after = models.DurationField(
        null=True, blank=True, help_text="Optional: age after which the dataset shows a warning. Less than the maximum age."
    )
    empty_write_counts = models.BooleanField(
        default=False,
        help_text="Whether a COMPLETE run that wrote zero rows (outputStatistics.rowCount = 0) refreshes the dataset.",
    )
    status = models.CharField(max_length=16, choices=FreshnessStatus.choices, default=FreshnessStatus.NO_SLO)
    status_since = models.DateTimeField(default=timezone.now)
    last_write_at = models.DateTimeField(null=True, blank=True, help_text="The last successful write that counts.")
    last_empty_write_at = models.DateTimeField(null=True, blank=True, help_text="The last COMPLETE run that wrote no rows.")
    next_check_at = models.DateTimeField(
        null=True, blank=True, help_text="When the status next changes if nothing is written: the next deadline."
    )
    task_eta = models.DateTimeField(null=True, blank=True, help_text="The deadline a Celery task is scheduled for.")
    evaluated_at = models.DateTimeField(null=True, blank=True)

    objects = DatasetFreshnessQuerySet.as_manager()

    class Meta:
        verbose_name = "dataset freshness"
        verbose_name_plural = "dataset freshness"
        indexes = [
            # The evaluator polls on this column; only rows with a deadline are hot.
            models.Index(fields=["next_check_at"], name="freshness_next_check_idx",
                         condition=models.Q(next_check_at__isnull=False)),
            # The home page lists a status at a time, oldest write first (freshness.hooks.
            # most_urgent_first): each page seeks here rather than sorting every row, even
            # among thousands written at one moment (one run's outputs, an import).
            models.Index(fields=["status", "last_write_at", "dataset"], name="freshness_status_write_idx"),
            # The status view lists what needs attention, longest in its status first: its
            # pages seek here rather than sorting every stale and warning row.
            models.Index(fields=["status_since", "dataset"], name="freshness_attention_since_idx",
                         condition=models.Q(status__in=["stale", "warning"])),
            # /metrics reads the rows with an SLO each scrape; every written dataset has a row.
            models.Index(fields=["dataset"], name="freshness_slo_idx", condition=models.Q(max_age__isnull=False)),
        ]
        constraints = [
            models.CheckConstraint(condition=models.Q(max_age__isnull=True) | models.Q(max_age__gt=timedelta(0)),
                                   name="freshness_max_age_positive",
                                   violation_error_message="The maximum age must be longer than zero; leave it empty for no freshness SLO."),
            models.CheckConstraint(
                condition=models.Q(warn_after__isnull=True)
                | (models.Q(max_age__isnull=False) & models.Q(warn_after__gt=timedelta(0))
                   & models.Q(warn_after__lt=models.F("max_age"))),
                name="freshness_warn_before_max_age",
                violation_error_message="The warning age needs a maximum age, and must be longer than zero and shorter than the maximum age.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.dataset_id}: {self.status}"

    @property
    def stale_at(self) -> datetime | None:
        if self.max_age is None or self.last_write_at is None:
            return None
        return self.last_write_at + self.max_age

    def age_at(self, now: datetime) -> timedelta | None:
        return None if self.last_write_at is None else max(now - self.last_write_at, timedelta(0))



class FreshnessTransition(models.Model):
    """A status change: a row, never an update."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="freshness_transitions")
    from_status = models.CharField(max_length=16, choices=FreshnessStatus.choices)
    to_status = models.CharField(max_length=16, choices=FreshnessStatus.choices)
    at = models.DateTimeField()
    due_at = models.DateTimeField(null=True, blank=True, help_text="The deadline that caused it, when one did.")
    source = models.CharField(max_length=16, choices=TransitionSource.choices)
    reason = models.TextField()

    objects = TransitionQuerySet.as_manager()

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["dataset", "-at"], name="freshness_transition_ds_idx")]

    def __str__(self) -> str:
        return f"{self.dataset_id}: {self.from_status} → {self.to_status} at {self.at:%Y-%m-%d %H:%M:%S}"

    @property
    def lag(self) -> timedelta | None:
        """How long after its deadline the change was recorded."""
        return None if self.due_at is None else self.at - self.due_at

    @property
    def css(self) -> str:
        return STATUS_CSS.get(self.to_status, "")


class EvaluatorState(models.Model):
    """A single row: when the beat sweep last finished, for the 'evaluator not running' alert."""

    id = models.PositiveSmallIntegerField(primary_key=True, default=1)
    last_sweep_at = models.DateTimeField(null=True, blank=True)
    last_sweep_seconds = models.FloatField(default=0)
    last_sweep_transitions = models.PositiveIntegerField(default=0)

    def __str__(self) -> str:
        return f"last sweep {self.last_sweep_at}"

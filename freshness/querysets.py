from __future__ import annotations

from datetime import datetime

from django.db import models


class DatasetFreshnessQuerySet(models.QuerySet):
    def due(self, now: datetime) -> DatasetFreshnessQuerySet:
        """Rows whose next deadline has passed: their status may have changed."""
        return self.filter(next_check_at__lte=now)

    def needing_a_task(self, until: datetime) -> DatasetFreshnessQuerySet:
        """Deadlines before `until` that have no deadline task scheduled for them yet."""
        return (self.filter(next_check_at__lte=until)
                .exclude(task_eta__isnull=False, task_eta=models.F("next_check_at")))


class TransitionQuerySet(models.QuerySet):
    def for_dataset(self, dataset) -> TransitionQuerySet:
        return self.filter(dataset=dataset)

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import models
from django.utils import timezone

from lineage.validation import check_event


class RunQuerySet(models.QuerySet):
    def of_job(self, job) -> RunQuerySet:
        return self.filter(job=job)

    def recent(self, limit: int = 20) -> RunQuerySet:
        return self.order_by("-state_at")[:limit]

    def with_sender(self) -> RunQuerySet:
        """With the token that sent each run's latest event, and its team (joined, not a query per run)."""
        return self.select_related("token", "token_team")


class RunEventQuerySet(models.QuerySet):
    def from_before(self, moment: datetime) -> RunEventQuerySet:
        """Events whose event time is before `moment` (retention's rule: the
        time the table is partitioned by, so only the months it names are read)."""
        return self.filter(event_time__lt=moment)

    def dropped_facets_by_run(self, run_uuids: list) -> dict:
        """{run uuid: [(path, reason), …]}: the facets the ingest left out of
        these runs' stored events because they break their own schemas, found
        again in the raw events (1 query; the ingest keeps no other record).

        Not bounded in time: a run's events may carry any event time, so on
        PostgreSQL each month kept answers from its own run_uuid index (one
        probe per partition; retention keeps their number small)."""
        dropped: dict = {}
        for run_uuid, payload in self.filter(run_uuid__in=run_uuids).order_by("id").values_list("run_uuid", "payload"):
            for facet in check_event(payload).invalid_facets:
                path, message = facet.problems[0]
                dropped.setdefault(run_uuid, []).append((facet.path, f"{path}: {message}"))
        return dropped


class FieldEdgeQuerySet(models.QuerySet):
    def current(self, now: datetime | None = None) -> FieldEdgeQuerySet:
        """Edges seen within COLUMN_USAGE_WINDOW, as column reads count."""
        return self.filter(last_seen_at__gte=(now or timezone.now()) - settings.COLUMN_USAGE_WINDOW)

    def expired(self, now: datetime | None = None) -> FieldEdgeQuerySet:
        return self.filter(last_seen_at__lt=(now or timezone.now()) - settings.COLUMN_USAGE_WINDOW)


class QualityCheckQuerySet(models.QuerySet):
    def latest_per_job(self) -> QualityCheckQuerySet:
        """Each (dataset, job)'s latest check: a dataset's current quality state
        is what every job testing it found last (dbt runs one test job per model;
        several suites may test one table)."""
        latest = self.values("dataset", "job_namespace", "job_name").annotate(last=models.Max("id")).values("last")
        return self.filter(pk__in=latest)

    def failing(self) -> QualityCheckQuerySet:
        return self.filter(failed_count__gt=0)

    def waiting_to_be_judged(self) -> QualityCheckQuerySet:
        return self.filter(judged=False)

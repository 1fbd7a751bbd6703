from __future__ import annotations

from datetime import datetime

from django.db import models


class RunQuerySet(models.QuerySet):
    def of_job(self, job) -> RunQuerySet:
        return self.filter(job=job)

    def recent(self, limit: int = 20) -> RunQuerySet:
        return self.order_by("-state_at")[:limit]


class RunEventQuerySet(models.QuerySet):
    def received_before(self, moment: datetime) -> RunEventQuerySet:
        return self.filter(received_at__lt=moment)

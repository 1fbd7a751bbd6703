"""Schema drift: what a run's output looked like next to its dataset's contract.

One row per (dataset, run): the comparison of the OpenLineage `schema` facet
with the latest published version of the contract bound to the dataset. A row
with no findings says "this run matched"; the latest row per dataset is what the
dataset page, the API and the Prometheus metric show. See contracts_app/drift.py
and docs/schema-drift.md.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Max
from django.utils import timezone


class DriftSeverity(models.TextChoices):
    DRIFT = "drift", "Drift"
    NOTE = "note", "Note"


class SchemaDriftCheckQuerySet(models.QuerySet):
    def latest_per_dataset(self) -> SchemaDriftCheckQuerySet:
        latest_ids = self.values("dataset").annotate(last=Max("id")).values("last")
        return self.filter(pk__in=latest_ids)

    def drifted(self) -> SchemaDriftCheckQuerySet:
        return self.filter(drift_count__gt=0)


class SchemaDriftCheck(models.Model):
    dataset = models.ForeignKey("registry.Dataset", on_delete=models.CASCADE, related_name="drift_checks")
    contract_version = models.ForeignKey(
        "contracts_app.ContractVersion", null=True, on_delete=models.SET_NULL, related_name="drift_checks"
    )
    contract_name = models.CharField(max_length=300)
    version = models.CharField(max_length=50)
    run_uuid = models.UUIDField()
    job_namespace = models.CharField(max_length=500)
    job_name = models.CharField(max_length=500)
    event_type = models.CharField(max_length=16)
    event_time = models.DateTimeField()
    findings = models.JSONField(default=list, help_text="[{kind, field, severity, expected, actual, message}]")
    drift_count = models.PositiveIntegerField(default=0, help_text="Findings of severity 'drift'.")
    checked_at = models.DateTimeField(default=timezone.now)

    objects = SchemaDriftCheckQuerySet.as_manager()

    class Meta:
        ordering = ["-checked_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "run_uuid"], name="schema_drift_check_dataset_run_unique",
                                    violation_error_message="This run's schema is already checked for drift on this dataset."),
        ]
        indexes = [
            models.Index(fields=["dataset", "-id"], name="drift_dataset_recent_idx"),
            # The dataset page's history and its badge read the latest checks in this order.
            models.Index(fields=["dataset", "-checked_at", "-id"], name="drift_dataset_checked_idx"),
        ]

    def __str__(self) -> str:
        verdict = f"{self.drift_count} drift finding(s)" if self.drift_count else "matches"
        return f"{self.dataset_id} run {self.run_uuid}: {verdict} {self.contract_name} {self.version}"

    @property
    def drifted(self) -> bool:
        return self.drift_count > 0

"""Incidents listen: to lineage (quality results, writes), to contracts (schema
comparisons, bindings, versions) and to freshness (status changes)."""

from __future__ import annotations

from django.db import connection, transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from contracts_app.hooks import schema_compared
from contracts_app.models import ContractVersion, DatasetBinding
from freshness.signals import status_changed
from incidents import pending, quality_slo
from incidents.evaluation import record_condition, refresh_status
from incidents.models import Cause, ContractStatus, QualitySLO
from lineage.signals import dataset_flag, dataset_written, quality_reported

HAS_QUALITY_SLO = "has_quality_slo"


def register_dataset_flag() -> None:
    quote = connection.ops.quote_name
    dataset_flag(HAS_QUALITY_SLO,
                 f"EXISTS (SELECT 1 FROM {quote(QualitySLO._meta.db_table)} q WHERE q.dataset_id = t.id)")


@receiver(quality_reported, dispatch_uid="incidents.on_quality_reported")
def on_quality_reported(sender, *, dataset_id: int, **kwargs) -> None:
    # The ingest stored the result waiting to be judged; it is judged after the commit.
    pending.judge_after_commit(dataset_id)


@receiver(dataset_written, dispatch_uid="incidents.on_dataset_written")
def on_dataset_written(sender, *, dataset, event_time, succeeded: bool, **kwargs) -> None:
    # Most datasets have no quality SLO: the ingest fetched that fact with the row.
    has_slo = getattr(dataset, HAS_QUALITY_SLO, None)
    if not succeeded or has_slo is False:
        return
    if has_slo is None:
        # Not fetched with the row (a dataset the ingest has just created, or a
        # sender that did not select the flag): look after the commit, so that the
        # write's own transaction pays no statement for a dataset that mostly has
        # no SLO. Robust: the write is stored by then, its sender must not fail.
        dataset_id = dataset.pk
        transaction.on_commit(lambda: quality_slo.record_write(dataset_id, event_time), robust=True)
        return
    quality_slo.record_write(dataset.pk, event_time)


@receiver(schema_compared, dispatch_uid="incidents.on_schema_compared")
def on_schema_compared(sender, *, check, **kwargs) -> None:
    text = None
    if check.drift_count:
        first = "; ".join(f["message"] for f in check.findings if f.get("severity") == "drift")[:500]
        text = f"the written schema drifted from {check.contract_name} {check.version}: {first}"
    held = ContractStatus.objects.filter(dataset_id=check.dataset_id).values_list("facts", flat=True).first()
    if text is None and not (held and Cause.DRIFT in held):
        return  # matched, as before
    record_condition(check.dataset_id, Cause.DRIFT, text, evidence={
        "run_id": str(check.run_uuid), "job": check.job_name, "contract": check.contract_name,
        "version": check.version, "findings": check.findings[:20]})


@receiver(status_changed, dispatch_uid="incidents.on_freshness_changed")
def on_freshness_changed(sender, *, changes, **kwargs) -> None:
    relevant = [c for c in changes if c.to_status == "stale" or c.from_status == "stale"]
    if not relevant:
        return
    bound = set(DatasetBinding.objects.filter(dataset_id__in=[c.dataset_id for c in relevant])
                .values_list("dataset_id", flat=True))
    for change in relevant:
        if change.dataset_id not in bound:
            continue
        evidence = {"deadline": change.due_at.isoformat() if change.due_at else None, "reason": change.reason,
                    "at": change.at.isoformat()}
        text = f"stale: {change.reason}" if change.to_status == "stale" else None
        record_condition(change.dataset_id, Cause.STALE, text, now=change.at, evidence=evidence)


@receiver(post_save, sender=DatasetBinding, dispatch_uid="incidents.on_binding_saved")
def on_binding_saved(sender, instance: DatasetBinding, **kwargs) -> None:
    refresh_status(instance.dataset_id)


@receiver(post_delete, sender=DatasetBinding, dispatch_uid="incidents.on_binding_deleted")
def on_binding_deleted(sender, instance: DatasetBinding, **kwargs) -> None:
    ContractStatus.objects.filter(dataset_id=instance.dataset_id).delete()


@receiver(post_save, sender=ContractVersion, dispatch_uid="incidents.on_version_saved")
def on_version_saved(sender, instance: ContractVersion, created: bool, **kwargs) -> None:
    if created:
        for dataset_id in DatasetBinding.objects.filter(contract_id=instance.contract_id).values_list(
                "dataset_id", flat=True):
            refresh_status(dataset_id)

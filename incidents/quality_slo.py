"""The quality SLO: "the declared checks must pass within N minutes of each write".

A successful write of a dataset with an SLO sets its deadline (`record_write`);
every declared check passing in a final result after the write clears it
(incidents.evaluation.checks_passed). A deadline reached with no such result is a
breach: the `check_late` condition, and its incident. The deadlines are kept by
freshness's machinery (freshness.deadlines: an eta task, the beat sweep, the
in-process loop), registered here as the "quality" kind.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from freshness.deadlines import DeadlineKind, deadline_kind, keep
from incidents.evaluation import AuditAction, record_condition
from incidents.models import Cause, QualitySLO
from incidents.pending import evaluate_pending, waiting
from registry.models import AuditEvent, Dataset, acts_for, is_governance_admin

KIND = "quality"
TASK = "incidents.quality_deadline"


def human(delta: timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    return f"{minutes // 60}h{minutes % 60:02d}m" if minutes >= 60 else f"{minutes} min"


def record_write(dataset_id: int, at: datetime, now: datetime | None = None) -> None:
    """A successful write: the declared checks are due `within` after it."""
    now = now or timezone.now()
    # Its own transaction when called outside one (after a commit, or a sender
    # that holds none); inside the ingest's, no savepoint: no extra statement.
    with transaction.atomic(savepoint=False):
        slo = QualitySLO.objects.select_for_update().filter(dataset_id=dataset_id).first()
        if slo is None or (slo.last_write_at is not None and at <= slo.last_write_at):
            return
        if slo.due_at is not None and slo.due_at <= now:
            # The last write's deadline passed without its checks, and its task has not run
            # yet (a busy worker): a breach all the same, recorded before this write moves it.
            _breach(slo, now)
        slo.last_write_at, slo.due_at = at, at + slo.within
        slo.task_eta = slo.due_at if keep(KIND, dataset_id, slo.due_at, now) else None
        slo.save(update_fields=["last_write_at", "due_at", "task_eta"])


def evaluate(now: datetime, dataset_ids: list[int] | None = None) -> int:
    """Every deadline due at `now` (of `dataset_ids`) is a breach: open its incident."""
    # A passing result may have arrived and wait to be judged: judge it first, it may meet the deadline.
    due = QualitySLO.objects.filter(due_at__lte=now)
    if dataset_ids is not None:
        due = due.filter(dataset_id__in=dataset_ids)
    pending_ids = list(waiting().filter(dataset_id__in=due.values("dataset_id"))
                       .values_list("dataset_id", flat=True).distinct()[:1000])
    if pending_ids:
        evaluate_pending(pending_ids)
    with transaction.atomic():
        due = QualitySLO.objects.filter(due_at__lte=now)
        if dataset_ids is not None:
            due = due.filter(dataset_id__in=dataset_ids)
        rows = list(due.select_for_update(skip_locked=True).order_by("due_at")[:1000])
        for slo in rows:
            _breach(slo, now)
        if rows:
            QualitySLO.objects.filter(pk__in=[s.pk for s in rows]).update(due_at=None, task_eta=None)
    return len(rows)


def _breach(slo: QualitySLO, now: datetime) -> None:
    """The deadline `slo.due_at` passed without passing checks: the check_late condition (inside
    the caller's transaction, the row locked)."""
    breach = (f"its declared checks did not pass within {human(slo.within)} of the write at "
              f"{slo.last_write_at:%Y-%m-%d %H:%M:%S} UTC")
    record_condition(slo.dataset_id, Cause.CHECK_LATE, breach, now=now, evidence={
        "deadline": slo.due_at.isoformat(), "write": slo.last_write_at.isoformat() if slo.last_write_at else None})


def unscheduled(until: datetime) -> list[tuple[int, datetime]]:
    rows = list(QualitySLO.objects.filter(due_at__lte=until, due_at__isnull=False).exclude(task_eta=F("due_at"))
                .select_for_update(skip_locked=True).values_list("dataset_id", "due_at"))
    if rows:
        QualitySLO.objects.filter(pk__in=[pk for pk, _ in rows]).update(task_eta=F("due_at"))
    return rows


def next_deadline() -> datetime | None:
    return (QualitySLO.objects.filter(due_at__isnull=False).order_by("due_at")
            .values_list("due_at", flat=True).first())


deadline_kind(DeadlineKind(name=KIND, task=TASK, evaluate=evaluate, unscheduled=unscheduled,
                           next_deadline=next_deadline))


def can_edit(user, dataset: Dataset) -> bool:
    return is_governance_admin(user) or (dataset.owner_team_id is not None and acts_for(user, dataset.owner_team))


def set_quality_slo(dataset: Dataset, within: timedelta | None, *, by) -> QualitySLO | None:
    """The owner team (or an admin) sets or removes (None) the dataset's quality SLO; audited."""
    if not can_edit(by, dataset):
        raise PermissionDenied(f"Only the owner team of {dataset} can change its quality SLO.")
    if within is not None and within <= timedelta(0):
        raise ValueError("The quality SLO must be longer than zero, e.g. 30m.")
    with transaction.atomic():
        current = QualitySLO.objects.select_for_update().filter(dataset=dataset).first()
        before = {"within_s": current.within.total_seconds()} if current else None
        if within is None:
            if current:
                current.delete()
                AuditEvent.record(by, AuditAction.QUALITY_SLO, dataset, before=before, after=None)
            return None
        slo = current or QualitySLO(dataset=dataset)
        slo.within = within
        slo.save()
        AuditEvent.record(by, AuditAction.QUALITY_SLO, dataset, before=before, after={"within_s": within.total_seconds()})
        return slo

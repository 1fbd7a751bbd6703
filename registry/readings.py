"""Readers in bulk: what a team's jobs read of datasets it neither owns nor
consumes, and one action that registers it as a consumer of all of them."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import BigIntegerField, OuterRef, Subquery
from django.db.models.functions import Coalesce

from registry.constants import AuditAction
from registry.jobs import JobTeam
from registry.models import AuditEvent, Consumer, Dataset, RegistryError, Team, acts_for
from registry.usage import ALL_COLUMNS, ColumnRead, NamespaceTeam


def reader_team():
    """A column read's team, as registry.usage.attribute decides it, in SQL."""
    return Coalesce(
        Subquery(JobTeam.objects.filter(job_namespace=OuterRef("job_namespace"), job_name=OuterRef("job_name"))
                 .values("team_id")[:1]),
        Subquery(NamespaceTeam.objects.filter(namespace=OuterRef("job_namespace")).values("team_id")[:1]),
        "token_team_id", output_field=BigIntegerField())


@dataclass
class ReadingToConfirm:
    """A dataset the team's jobs read though the team neither owns nor consumes it."""

    dataset: Dataset
    columns: list[str] | None  # None: a job reads all or unknown columns
    jobs: list[str] = field(default_factory=list)

    @property
    def confirmable(self) -> bool:
        """A dataset no team owns yet takes no consumer (its owner claims it first)."""
        return self.dataset.owner_team_id is not None

    def to_dict(self) -> dict:
        return {"dataset": {"id": self.dataset.pk, "namespace": self.dataset.namespace, "name": self.dataset.name,
                            "owner_team": self.dataset.owner_team.slug if self.dataset.owner_team_id else None},
                "columns": self.columns, "jobs": self.jobs, "confirmable": self.confirmable}


def readings_to_confirm(team: Team) -> list[ReadingToConfirm]:
    """What `team`'s jobs read now of datasets it neither owns nor consumes, by
    dataset, with the columns read (two queries)."""
    rows = (ColumnRead.objects.current().annotate(reader=reader_team()).filter(reader=team.pk)
            .exclude(dataset__owner_team=team)
            .exclude(dataset_id__in=Consumer.objects.filter(team=team).values("dataset_id"))
            .order_by("dataset_id", "column", "job_namespace", "job_name")
            .values_list("dataset_id", "column", "job_namespace", "job_name"))
    found: dict[int, tuple[set[str] | None, dict[str, None]]] = {}
    for dataset_id, column, namespace, name in rows:
        columns, jobs = found.setdefault(dataset_id, (set(), {}))
        if column == ALL_COLUMNS or columns is None:
            found[dataset_id] = (None, jobs)
        else:
            columns.add(column)
        jobs[f"{namespace}/{name}"] = None
    datasets = Dataset.objects.select_related("owner_team").in_bulk(list(found))
    return sorted((ReadingToConfirm(datasets[pk], None if columns is None else sorted(columns), sorted(jobs))
                   for pk, (columns, jobs) in found.items()),
                  key=lambda r: (r.dataset.namespace, r.dataset.name))


@dataclass
class Confirmed:
    registered: list[Dataset]
    waiting_for_owner: list[Dataset]  # unowned: no consumer can register yet

    def to_dict(self) -> dict:
        return {"registered": [str(d) for d in self.registered],
                "waiting_for_owner": [str(d) for d in self.waiting_for_owner]}


def confirm_readings(team: Team, *, by, dataset_ids: list[int] | None = None) -> Confirmed:
    """Register `team` as a consumer of every dataset its jobs read (or those of
    `dataset_ids` among them), declaring the columns they read: one transaction,
    an audit row per registration and one for the whole confirmation."""
    if not acts_for(by, team):
        raise PermissionDenied(f"Only a member of team {team.slug} can confirm what its jobs read.")
    readings = readings_to_confirm(team)
    if dataset_ids is not None:
        wanted = set(dataset_ids)
        unknown = wanted - {r.dataset.pk for r in readings}
        if unknown:
            raise RegistryError(f"Team {team.slug}'s jobs are not seen reading dataset(s) "
                                f"{', '.join(map(str, sorted(unknown)))} without consuming them; nothing was registered.")
        readings = [r for r in readings if r.dataset.pk in wanted]
    done = Confirmed([], [r.dataset for r in readings if not r.confirmable])
    with transaction.atomic():
        for reading in readings:
            if reading.confirmable:
                reading.dataset.register_consumer(team, by=by, columns=reading.columns)
                done.registered.append(reading.dataset)
        if done.registered:
            AuditEvent.record(by, AuditAction.CONSUMPTION_CONFIRMED, team, after={
                "team": team.slug,
                "datasets": [{"dataset": str(r.dataset), "declared_columns": r.columns}
                             for r in readings if r.confirmable]})
    return done

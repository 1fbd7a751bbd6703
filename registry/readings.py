"""Readers in bulk: what a team's jobs read of datasets it neither owns nor
consumes, and one action that registers it as a consumer of all of them."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import BigIntegerField, Exists, OuterRef, QuerySet, Subquery
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


def read_by_team(team: Team) -> QuerySet:
    """The ids of the datasets `team`'s jobs read now, attributed as `reader_team` does,
    found from the team's side rather than by attributing every read of the registry:

    1. the reads of the jobs decided to be the team's (JobTeam's team index, then the
       reads' (job namespace, job name) index, column_read_job_idx);
    2. the reads of jobs of the team's namespaces that no job decision claims (the same
       index, by namespace);
    3. the reads the team's tokens posted of jobs neither decided nor mapped
       (column_read_token_team_idx).

    What this reads grows with what the team's jobs read, not with the registry."""
    current = ColumnRead.objects.current()
    decided = JobTeam.objects.filter(team__isnull=False, job_namespace=OuterRef("job_namespace"),
                                     job_name=OuterRef("job_name"))
    mapped = NamespaceTeam.objects.filter(namespace=OuterRef("job_namespace"))
    by_job = current.filter(Exists(JobTeam.objects.filter(team=team, job_namespace=OuterRef("job_namespace"),
                                                          job_name=OuterRef("job_name"))))
    by_namespace = (current.filter(job_namespace__in=NamespaceTeam.objects.filter(team=team).values("namespace"))
                    .exclude(Exists(decided)))
    by_token = current.filter(token_team=team).exclude(Exists(decided)).exclude(Exists(mapped))
    return by_job.values("dataset_id").union(by_namespace.values("dataset_id"), by_token.values("dataset_id"))


def datasets_to_confirm(team: Team) -> QuerySet:
    """The datasets `team`'s jobs read now that it neither owns nor consumes (unordered:
    a page orders them by namespace and name, registry.pagination).

    The ids the team's jobs read are fetched first (one query): given them as a list, the
    database finds the datasets through their primary key; given the subquery, it hashed
    it and scanned every dataset to join them."""
    ids = [row["dataset_id"] for row in read_by_team(team)]
    return (Dataset.objects.filter(pk__in=ids).exclude(owner_team=team)
            .exclude(pk__in=Consumer.objects.filter(team=team).values("dataset_id")).select_related("owner_team"))


def readings_of_datasets(team: Team, datasets: list[Dataset]) -> list[ReadingToConfirm]:
    """What `team`'s jobs read of each of `datasets` (columns, jobs), in their order
    (one query, through the reads' dataset index)."""
    rows = (ColumnRead.objects.current().filter(dataset_id__in=[d.pk for d in datasets])
            .annotate(reader=reader_team()).filter(reader=team.pk)
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
    return [ReadingToConfirm(d, None if found[d.pk][0] is None else sorted(found[d.pk][0]), sorted(found[d.pk][1]))
            for d in datasets if d.pk in found]


def readings_to_confirm(team: Team) -> list[ReadingToConfirm]:
    """What `team`'s jobs read now of datasets it neither owns nor consumes, by
    dataset (namespace, name), with the columns read (three queries)."""
    return readings_of_datasets(team, list(datasets_to_confirm(team).order_by("namespace", "name")))


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

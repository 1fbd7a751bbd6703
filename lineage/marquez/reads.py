"""Marquez's objects loaded from the registry, each read a fixed number of
queries whatever the number of rows (the tests pin the counts).

Lists take Marquez's `limit`/`offset` and return `totalCount`. A name that is
not there raises `Missing`, which the views answer with a JSON 404.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.db import connection
from django.db.models import F, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce, Greatest

from lineage.marquez import shapes
from lineage.models import Direction, Job, Run, RunDataset, RunEvent, RunState
from registry.models import Dataset, Team
from registry.usage import NamespaceTeam


class Missing(LookupError):
    """No such namespace, dataset, job, run or version; the message names it."""


@dataclass(frozen=True)
class Page:
    limit: int = 100
    offset: int = 0

    def of(self, queryset: QuerySet) -> QuerySet:
        return queryset[self.offset:self.offset + self.limit]


# --- datasets ---------------------------------------------------------------------

def _writes() -> QuerySet:
    """The runs that wrote the outer dataset, newest first (one probe of
    lineage_rundataset_latest_idx)."""
    return RunDataset.objects.filter(dataset=OuterRef("pk"), direction=Direction.OUTPUT).order_by("-run_id")


def _with_writes(datasets: QuerySet) -> QuerySet:
    writes = _writes()
    return datasets.annotate(
        latest_write_run=Subquery(writes.values("run__run_uuid")[:1]),
        latest_write_at=Subquery(writes.values("run__state_at")[:1]),
        last_modified_at=Subquery(writes.filter(run__state=RunState.COMPLETE).values("run__ended_at")[:1]),
    )


_DATASET_VALUES = ("pk", "namespace", "name", "description", "created_at", "owner_team__slug",
                   "lineage_schema__fields", "latest_write_run", "latest_write_at", "last_modified_at")


def _dataset_payloads(datasets: QuerySet) -> list[dict[str, Any]]:
    return [_dataset_payload(row) for row in _with_writes(datasets).values(*_DATASET_VALUES)]


def _dataset_payload(row: dict) -> dict[str, Any]:
    return shapes.dataset(
        namespace=row["namespace"], name=row["name"], description=row["description"],
        created_at=row["created_at"], columns=row["lineage_schema__fields"], owner_team=row["owner_team__slug"],
        latest_write_run=row["latest_write_run"], latest_write_at=row["latest_write_at"],
        last_modified_at=row["last_modified_at"])


def datasets(namespace: str, page: Page) -> dict[str, Any]:
    """The datasets of a namespace by name (2 queries: count, page; a third,
    the namespace's existence, only when it has no dataset)."""
    found = Dataset.objects.filter(namespace=namespace)
    total = found.count()
    if not total:
        _check_namespace(namespace)
    return {"datasets": _dataset_payloads(page.of(found.order_by("name"))), "totalCount": total}


def dataset(namespace: str, name: str) -> dict[str, Any]:
    """One dataset (1 query)."""
    found = _dataset_payloads(Dataset.objects.filter(namespace=namespace, name=name))
    if not found:
        raise Missing(f"No dataset {name!r} in namespace {namespace!r} has been seen.")
    return found[0]


def _dataset_row(namespace: str, name: str) -> dict:
    row = (Dataset.objects.filter(namespace=namespace, name=name)
           .values("pk", "namespace", "name", "description", "lineage_schema__fields").first())
    if row is None:
        raise Missing(f"No dataset {name!r} in namespace {namespace!r} has been seen.")
    return row


def dataset_versions(namespace: str, name: str, page: Page) -> dict[str, Any]:
    """The versions of a dataset, newest first: one per run that wrote it
    (3 queries: the dataset, count, page with its runs)."""
    row = _dataset_row(namespace, name)
    writes = RunDataset.objects.filter(dataset_id=row["pk"], direction=Direction.OUTPUT).order_by("-run_id")
    total = writes.count()
    listed = list(page.of(writes.select_related("run")))
    current = listed[0].run.run_uuid if listed and page.offset == 0 else None
    return {"versions": _versions_from(row, listed, current), "totalCount": total}


def dataset_version(namespace: str, name: str, version: str) -> dict[str, Any]:
    """One version of a dataset: the one written by run `version` (3 queries)."""
    row = _dataset_row(namespace, name)
    try:
        run_uuid = uuid.UUID(version)
    except ValueError:
        raise Missing(f"{version!r} is not a version of dataset {name!r}: versions are run ids (UUIDs).") from None
    writes = RunDataset.objects.filter(dataset_id=row["pk"], direction=Direction.OUTPUT).select_related("run")
    write = writes.filter(run__run_uuid=run_uuid).first()
    if write is None:
        raise Missing(f"No run {version} wrote dataset {name!r} in namespace {namespace!r}.")
    newest = writes.order_by("-run_id").values_list("run__run_uuid", flat=True).first()
    return _versions_from(row, [write], newest)[0]


def _versions_from(row: dict, writes: list[RunDataset], newest: uuid.UUID | None) -> list[dict[str, Any]]:
    versions = []
    for write in writes:
        run = write.run
        version = {
            "id": shapes.dataset_version_id(row["namespace"], row["name"], run.run_uuid),
            "type": shapes.DATASET_TYPE, "name": row["name"], "physicalName": row["name"],
            "createdAt": shapes.iso(run.created_at), "version": str(run.run_uuid),
            # No tags: Marquez's document types a version's tags as one string.
            "namespace": row["namespace"], "sourceName": row["namespace"],
            "description": row["description"], "facets": {},
            "createdByRun": shapes.run(run_uuid=run.run_uuid, state=run.state, created_at=run.created_at,
                                       state_at=run.state_at, started_at=run.started_at,
                                       ended_at=run.ended_at, facets=run.facets, with_facets=False),
        }
        # Only the latest schema is kept: the fields of older versions are unknown.
        if run.run_uuid == newest:
            version["fields"] = shapes.fields_of(row["lineage_schema__fields"])
        versions.append(version)
    return versions


# --- jobs and runs ----------------------------------------------------------------

def _run_summary(run: Run) -> dict[str, Any]:
    return shapes.run(run_uuid=run.run_uuid, state=run.state, created_at=run.created_at, state_at=run.state_at,
                      started_at=run.started_at, ended_at=run.ended_at, facets=run.facets, with_facets=False)


def _job_payloads(jobs: QuerySet) -> list[dict[str, Any]]:
    """Marquez's Jobs for `jobs` (3 queries: the jobs with their latest run's
    id, their edges as the graph shows them (seen in runs or declared by
    JobEvents), those runs)."""
    latest = Run.objects.filter(job=OuterRef("pk")).order_by("-state_at").values("pk")[:1]
    rows = list(jobs.annotate(latest_run_id=Subquery(latest)))
    if not rows:
        return []
    ids = [job.pk for job in rows]
    edges = {key: [{"namespace": e.namespace, "name": e.name} for e in found]
             for key, found in Job.edges_of(ids).items()}
    runs = {run.pk: run for run in Run.objects.filter(pk__in=[j.latest_run_id for j in rows if j.latest_run_id])}
    return [shapes.job(
        namespace=job.namespace, name=job.name, created_at=job.created_at, updated_at=job.updated_at,
        facets=job.facets, inputs=edges.get((job.pk, Direction.INPUT), []),
        outputs=edges.get((job.pk, Direction.OUTPUT), []),
        latest_run=_run_summary(runs[job.latest_run_id]) if job.latest_run_id in runs else None,
    ) for job in rows]


def jobs(namespace: str, page: Page) -> dict[str, Any]:
    """The jobs of a namespace by name (4 queries: count, page, edges, latest
    runs; a fifth, the namespace's existence, only when it has no job)."""
    found = Job.objects.filter(namespace=namespace)
    total = found.count()
    if not total:
        _check_namespace(namespace)
    return {"jobs": _job_payloads(page.of(found.order_by("name"))), "totalCount": total}


def job(namespace: str, name: str) -> dict[str, Any]:
    """One job (3 queries)."""
    found = _job_payloads(Job.objects.filter(namespace=namespace, name=name))
    if not found:
        raise Missing(f"No job {name!r} in namespace {namespace!r} has been seen.")
    return found[0]


def _run_payloads(runs: list[Run]) -> list[dict[str, Any]]:
    """Marquez's Runs, with the dataset versions each read and wrote (1 query:
    the runs' edges, each input with the version written last before the run).

    An output's version is the run itself. An input's is the latest version a
    run seen before this one wrote; an input no run was seen writing has no
    version, and is left out of inputDatasetVersions."""
    if not runs:
        return []
    read_version = (RunDataset.objects.filter(dataset=OuterRef("dataset"), direction=Direction.OUTPUT,
                                              run_id__lt=OuterRef("run_id"))
                    .order_by("-run_id").values("run__run_uuid")[:1])
    edges: dict[int, dict[str, list]] = {}
    for run_id, direction, namespace, name, version in (
            RunDataset.objects.filter(run_id__in=[r.pk for r in runs])
            .annotate(read_version=Subquery(read_version))
            .order_by("dataset__namespace", "dataset__name")
            .values_list("run_id", "direction", "dataset__namespace", "dataset__name", "read_version")):
        lists = edges.setdefault(run_id, {"in": [], "out": []})
        if direction == Direction.OUTPUT:
            lists["out"].append({"datasetVersionId": {"namespace": namespace, "name": name, "version": None},
                                 "facets": {}})
        elif version is not None:
            lists["in"].append({"datasetVersionId": shapes.dataset_version_id(namespace, name, version),
                                "facets": {}})
    payloads = []
    for run in runs:
        lists = edges.get(run.pk, {"in": [], "out": []})
        for out in lists["out"]:
            out["datasetVersionId"]["version"] = str(run.run_uuid)
        payload = shapes.run(run_uuid=run.run_uuid, state=run.state, created_at=run.created_at,
                             state_at=run.state_at, started_at=run.started_at, ended_at=run.ended_at,
                             facets=run.facets)
        payload["jobVersion"] = {"namespace": run.job.namespace, "name": run.job.name,
                                 "version": shapes.job_version(run.job.namespace, run.job.name)}
        payload["inputDatasetVersions"] = lists["in"]
        payload["outputDatasetVersions"] = lists["out"]
        payloads.append(payload)
    return payloads


def job_runs(namespace: str, name: str, page: Page) -> dict[str, Any]:
    """A job's runs, newest first (4 queries: the job, count, page, edges)."""
    found = Job.objects.filter(namespace=namespace, name=name).first()
    if found is None:
        raise Missing(f"No job {name!r} in namespace {namespace!r} has been seen.")
    runs = Run.objects.filter(job=found).order_by("-state_at", "-pk")
    total = runs.count()
    listed = list(page.of(runs))
    for run in listed:
        run.job = found
    return {"runs": _run_payloads(listed), "totalCount": total}


def _run(run_id: str) -> Run:
    try:
        run_uuid = uuid.UUID(run_id)
    except ValueError:
        raise Missing(f"No run {run_id!r}: run ids are UUIDs.") from None
    found = Run.objects.select_related("job").filter(run_uuid=run_uuid).first()
    if found is None:
        raise Missing(f"No run {run_id} has been seen in lineage.")
    return found


def run(run_id: str) -> dict[str, Any]:
    """One run (2 queries: the run with its job, its edges)."""
    return _run_payloads([_run(run_id)])[0]


FACET_SCHEMAS = {
    "run": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunFacet",
    "job": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobFacet",
}


def run_facets(run_id: str, kind: str, *, producer: str) -> dict[str, Any]:
    """The run's facets, or its job's (`kind` "run" | "job"), as of the latest
    event (1 query).

    Marquez's document types the answer's `facets` as one CustomFacet, which
    requires `_producer` and `_schemaURL`: they are sent beside the facets
    (OpenLineage's base fields start with "_", which no facet name does)."""
    found = _run(run_id)
    facets = found.facets if kind == "run" else found.job.facets
    return {"runId": str(found.run_uuid),
            "facets": {"_producer": producer, "_schemaURL": FACET_SCHEMAS[kind], **(facets or {})}}


# --- namespaces -------------------------------------------------------------------

def _namespace_sql(where: str = "") -> str:
    datasets, jobs = Dataset._meta.db_table, Job._meta.db_table
    mapping, teams = NamespaceTeam._meta.db_table, Team._meta.db_table
    return (
        f"SELECT x.ns, MIN(x.created), MAX(x.updated), MAX(t.slug) FROM ("
        f"SELECT namespace AS ns, created_at AS created, created_at AS updated FROM {datasets} {where} "
        f"UNION ALL SELECT namespace, created_at, updated_at FROM {jobs} {where}) AS x "
        f"LEFT JOIN {mapping} m ON m.namespace = x.ns LEFT JOIN {teams} t ON t.id = m.team_id "
        "GROUP BY x.ns ORDER BY x.ns"
    )


def _namespace_payload(row: tuple) -> dict[str, Any]:
    name, created, updated, owner = row
    return shapes.namespace(name=name, created_at=_aware(created), updated_at=_aware(updated), owner=owner)


def _aware(moment: datetime | str) -> datetime:
    # SQLite hands raw SQL its times as naive strings or datetimes.
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment


def namespaces(page: Page) -> dict[str, Any]:
    """Every namespace a dataset or job is in, by name (2 queries: count, page).
    Its createdAt is when its first dataset or job was seen, its updatedAt the
    newest of its datasets' first sightings and its jobs' latest events."""
    datasets, jobs = Dataset._meta.db_table, Job._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT COUNT(*) FROM (SELECT namespace FROM {datasets} "
                       f"UNION SELECT namespace FROM {jobs}) AS x")
        total = cursor.fetchone()[0]
        cursor.execute(_namespace_sql() + " LIMIT %s OFFSET %s", [page.limit, page.offset])
        rows = cursor.fetchall()
    return {"namespaces": [_namespace_payload(row) for row in rows], "totalCount": total}


def namespace(name: str) -> dict[str, Any]:
    """One namespace (1 query)."""
    with connection.cursor() as cursor:
        cursor.execute(_namespace_sql("WHERE namespace = %s"), [name, name])
        row = cursor.fetchone()
    if row is None:
        raise Missing(f"No dataset or job in namespace {name!r} has been seen.")
    return _namespace_payload(row)


def _check_namespace(name: str) -> None:
    if not (Dataset.objects.filter(namespace=name).exists() or Job.objects.filter(namespace=name).exists()):
        raise Missing(f"No dataset or job in namespace {name!r} has been seen.")


# --- search and events ------------------------------------------------------------

SEARCH_SORTS = ("name", "updated_at")
SEARCH_FILTERS = ("dataset", "job")


def like_pattern(query: str) -> str:
    """Marquez's search pattern (case-insensitive, `%` any run of characters,
    `_` one character, matched anywhere in the name) as a regular expression,
    which Django matches the same way on PostgreSQL and SQLite."""
    parts = []
    for char in query:
        parts.append(".*" if char == "%" else "." if char == "_" else re.escape(char))
    return "".join(parts)


def search(query: str, *, kind: str | None = None, sort: str = "name", limit: int = 100,
           namespace: str | None = None, before: datetime | None = None,
           after: datetime | None = None) -> dict[str, Any]:
    """Datasets and jobs whose name matches `query` (2 queries: count, page).
    before/after bound updatedAt; sort by name, or by updatedAt newest first."""
    pattern = like_pattern(query)
    newest_write = Subquery(_writes().values("run__state_at")[:1])
    parts = []
    if kind in (None, "dataset"):
        parts.append(Dataset.objects.filter(name__iregex=pattern)
                     .annotate(kind=Value("DATASET"), updated=Greatest("created_at", Coalesce(newest_write, "created_at"))))
    if kind in (None, "job"):
        parts.append(Job.objects.filter(name__iregex=pattern).annotate(kind=Value("JOB"), updated=F("updated_at")))
    bounded = []
    for part in parts:
        if namespace:
            part = part.filter(namespace=namespace)
        if before:
            part = part.filter(updated__lt=before)
        if after:
            part = part.filter(updated__gt=after)
        bounded.append(part.order_by().values_list("kind", "namespace", "name", "updated"))
    found = bounded[0].union(*bounded[1:], all=True) if len(bounded) > 1 else bounded[0]
    total = found.count()
    order = ("name", "namespace", "kind") if sort == "name" else ("-updated", "name", "namespace")
    results = [{"type": kind_, "name": name, "updatedAt": shapes.iso(_aware(updated)), "namespace": ns,
                "nodeId": f"{kind_.lower()}:{ns}:{name}"}
               for kind_, ns, name, updated in found.order_by(*order)[:limit]]
    return {"totalCount": total, "results": results}


def events(*, page: Page, ascending: bool = False, before: datetime | None = None,
           after: datetime | None = None) -> dict[str, Any]:
    """The raw OpenLineage events as received (2 queries: count, page), by the
    time the registry received them (the indexed column), newest first unless
    `ascending`. Events pruned by retention are gone."""
    found = RunEvent.objects.all()
    if before:
        found = found.filter(received_at__lt=before)
    if after:
        found = found.filter(received_at__gt=after)
    total = found.count()
    order = ("received_at", "id") if ascending else ("-received_at", "-id")
    return {"events": list(page.of(found.order_by(*order)).values_list("payload", flat=True)), "totalCount": total}

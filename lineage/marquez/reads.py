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
from django.db.models import F, Max, Min, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce, Greatest

from lineage.marquez import shapes
from lineage.models import DatasetFacet, Direction, Job, Run, RunDataset, RunEvent, RunState
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
           after: datetime | None = None, namespace: str | None = None) -> dict[str, Any]:
    """The raw OpenLineage events as received (2 queries: count, page), by
    event time as Marquez orders them, newest first unless `ascending`; with
    `namespace`, only the events of jobs in it. Events pruned by retention are
    gone. `before` and `after` bound the event time, which the table is
    partitioned by on PostgreSQL: only the months between them are read."""
    found = RunEvent.objects.all()
    if namespace is not None:
        found = found.filter(job_namespace=namespace)
    if before:
        found = found.filter(event_time__lt=before)
    if after:
        found = found.filter(event_time__gt=after)
    total = found.count()
    order = ("event_time", "id") if ascending else ("-event_time", "-id")
    return {"events": list(page.of(found.order_by(*order)).values_list("payload", flat=True)), "totalCount": total}


# --- job versions -----------------------------------------------------------------

def _job_version_payload(job_payload: dict[str, Any]) -> dict[str, Any]:
    """Marquez's JobVersion for a job's one version (the job as it is now)."""
    version = job_payload["currentVersion"]
    keys = ("name", "namespace", "createdAt", "location", "inputs", "outputs", "facets", "latestRun")
    return {"id": {**job_payload["id"], "version": version}, "version": version,
            **{key: job_payload[key] for key in keys if key in job_payload}}


def job_versions(namespace: str, name: str, page: Page) -> dict[str, Any]:
    """A job's versions: its one version (3 queries, as the job)."""
    found = job(namespace, name)
    versions = [_job_version_payload(found)][page.offset:page.offset + page.limit]
    return {"versions": versions, "totalCount": 1}


def job_version(namespace: str, name: str, version: str) -> dict[str, Any]:
    """The job's one version, when `version` names it (3 queries)."""
    found = job(namespace, name)
    if version.lower() != found["currentVersion"]:
        raise Missing(f"Job {name!r} in namespace {namespace!r} has one version, {found['currentVersion']}, "
                      f"not {version!r}: the registry keeps no job versions.")
    return _job_version_payload(found)


# --- sources and tags -------------------------------------------------------------

def _source_type(url: str) -> str:
    scheme, sep, _ = url.partition("://")
    return scheme.upper().replace("+", "_") if sep and scheme else "DEFAULT"


def _sources(name: str | None = None) -> list[dict[str, Any]]:
    """Marquez's Sources, by name (2 queries): each `dataSource` facet's name
    and uri, and each dataset namespace no facet names or locates (a namespace
    is where its datasets are: Marquez makes it their source, named and located
    by it)."""
    facets = DatasetFacet.objects.filter(name="dataSource")
    namespaces = Dataset.objects.all()
    if name is not None:
        facets = facets.filter(Q(facet__name=name) | Q(facet__uri=name))
        namespaces = namespaces.filter(namespace=name)
    found: dict[str, dict[str, Any]] = {}
    for source, url, created, updated in (
            facets.values_list(KT("facet__name"), KT("facet__uri")).annotate(first=Min("event_time"), last=Max("updated_at"))
            .order_by()):
        if not source:
            continue
        entry = found.setdefault(source, {"name": source, "connectionUrl": url or source,
                                          "created": created, "updated": updated})
        entry["created"], entry["updated"] = min(entry["created"], created), max(entry["updated"], updated)
    located = {entry["connectionUrl"] for entry in found.values()}
    for ns, created in namespaces.values_list("namespace").annotate(first=Min("created_at")).order_by():
        if ns not in found and ns not in located:
            found[ns] = {"name": ns, "connectionUrl": ns, "created": created, "updated": created}
    return [{"type": _source_type(entry["connectionUrl"]), "name": entry["name"],
             "createdAt": shapes.iso(entry["created"]), "updatedAt": shapes.iso(entry["updated"]),
             "connectionUrl": entry["connectionUrl"]}
            for entry in sorted(found.values(), key=lambda e: e["name"])]


def sources(page: Page) -> dict[str, Any]:
    """Every source by name (2 queries)."""
    found = _sources()
    return {"sources": found[page.offset:page.offset + page.limit], "totalCount": len(found)}


def source(name: str) -> dict[str, Any]:
    """One source (2 queries)."""
    found = [entry for entry in _sources(name) if entry["name"] == name]
    if not found:
        raise Missing(f"No source {name!r}: no dataSource facet names it and no dataset is in a namespace of that name.")
    return found[0]


def _tags_of(facet: Any) -> list[tuple[str, str | None]]:
    """(name, description) of each entry of a `tags` facet (TagsDatasetFacet,
    TagsJobFacet: {"tags": [{"key", "value", "source"}]}): Marquez names a tag
    by its key; the value, when it says more than the key, describes it."""
    entries = facet.get("tags") if isinstance(facet, dict) else None
    found = []
    for entry in entries if isinstance(entries, list) else []:
        key = entry.get("key") if isinstance(entry, dict) else None
        if isinstance(key, str) and key:
            value = entry.get("value")
            found.append((key, value if isinstance(value, str) and value and value.lower() not in (key.lower(), "true") else None))
    return found


def tags(page: Page) -> dict[str, Any]:
    """Every tag the events' dataset and job `tags` facets carry, by name (2
    queries: the datasets' kept tags facets, the jobs' latest tags facets)."""
    found: dict[str, str | None] = {}
    for facet in DatasetFacet.objects.filter(name="tags").values_list("facet", flat=True):
        for name, description in _tags_of(facet):
            found[name] = found.get(name) or description
    for facet in Job.objects.filter(facets__has_key="tags").values_list("facets__tags", flat=True):
        for name, description in _tags_of(facet):
            found[name] = found.get(name) or description
    listed = [{"name": name, **({"description": found[name]} if found[name] else {})} for name in sorted(found)]
    return {"tags": listed[page.offset:page.offset + page.limit], "totalCount": len(listed)}


# --- run lineage ------------------------------------------------------------------

RUN_LINEAGE_DEPTH = 20
RUN_LINEAGE_MAX_DEPTH = 100

def run_lineage_upstream(run_id: str, depth: int) -> dict[str, Any]:
    """Marquez's UpstreamRunLineage: the run, then the runs that wrote the
    dataset versions it read, and theirs, `depth` runs deep, in that order
    (2 queries, then 2 per level of runs: their edges, their rows). An input's
    version is the latest write before the run (as the run endpoint says)."""
    start = _run(run_id)
    read_version = (RunDataset.objects.filter(dataset=OuterRef("dataset"), direction=Direction.OUTPUT,
                                              run_id__lt=OuterRef("run_id"))
                    .order_by("-run_id").values("run_id")[:1])
    runs: dict[int, Run] = {start.pk: start}
    order, frontier, answers = [start.pk], [start.pk], {}
    level = 0
    while frontier:
        inputs: dict[int, list[tuple]] = {}
        for run_pk, namespace, name, producer in (
                RunDataset.objects.filter(run_id__in=frontier, direction=Direction.INPUT)
                .annotate(producer=Subquery(read_version))
                .order_by("dataset__namespace", "dataset__name")
                .values_list("run_id", "dataset__namespace", "dataset__name", "producer")):
            inputs.setdefault(run_pk, []).append((namespace, name, producer))
        for run_pk in frontier:
            answers[run_pk] = inputs.get(run_pk, [])
        level += 1
        producers = sorted({p for run_pk in frontier for _, _, p in answers[run_pk] if p is not None and p not in runs})
        if level > depth or not producers:
            break
        for found in Run.objects.select_related("job").filter(pk__in=producers):
            runs[found.pk] = found
        order += producers
        frontier = producers
    uuids = {pk: run.run_uuid for pk, run in runs.items()}
    missing = {p for pk in answers for _, _, p in answers[pk] if p is not None and p not in uuids}
    if missing:
        uuids.update(Run.objects.filter(pk__in=missing).values_list("pk", "run_uuid"))
    listed = []
    for pk in order:
        run_row = runs[pk]
        entry = {
            "job": {"namespace": run_row.job.namespace, "name": run_row.job.name,
                    "version": shapes.job_version(run_row.job.namespace, run_row.job.name)},
            "run": shapes._present({"id": str(run_row.run_uuid), "start": shapes.iso(run_row.started_at),
                                    "end": shapes.iso(run_row.ended_at),
                                    "status": shapes.RUN_STATES.get(run_row.state, run_row.state)}),
            "inputs": [shapes._present({"namespace": namespace, "name": name,
                                        "version": str(uuids[p]) if p is not None else None,
                                        "producedByRunId": str(uuids[p]) if p is not None else None})
                       for namespace, name, p in answers.get(pk, [])],
        }
        listed.append(entry)
    return {"runs": listed}

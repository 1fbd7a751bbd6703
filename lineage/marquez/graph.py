"""GET /api/v1/lineage with Marquez's full node payload.

The walk is lineage.graph's: one recursive statement bounded by depth, the
node id resolved inside it. On PostgreSQL the same statement also builds each
node's `data` as JSON — a dataset's fields, times and current version, a job's
inputs and outputs (seen in runs or declared) and latest run — so the answer stays one statement whose cost
follows the neighbourhood: every addition is an index probe per node (the
schema by primary key, the newest writing run on lineage_rundataset_latest_idx,
the latest run on lineage_run_job_recent_idx, a job's edges on the edge table's
unique index). Python links the nodes, lists a dataset's fields from the
stored {column: type} and drops the null keys (both cheaper there than as
JSON functions in the database).

`data.type` is the node's kind, DATASET or JOB: Marquez's OpenAPI document
selects the node's schema with it (its discriminator). The dataset and job
endpoints say DB_TABLE and BATCH/STREAM there instead, as Marquez does.

Elsewhere (SQLite, the embedded demo) the walk is lineage.graph's two
statements and the payload comes from the endpoints' own reads (six queries).
"""

from __future__ import annotations

from typing import Any

from django.db import connection

from lineage.graph import (
    DATASETS,
    DECLARED,
    EDGES,
    JOBS,
    NodeNotFound,
    among,
    check_request,
    lineage_graph,
    linked_nodes,
    neighbourhood_ctes,
    parse_node_id,
)
from lineage.marquez import reads
from lineage.models import DatasetSchema, Job, Run, RunDataset
from registry.collector import collector_paused
from registry.db import prepared_cursor
from registry.models import Dataset, Team

RUNS = Run._meta.db_table
RUN_EDGES = RunDataset._meta.db_table
SCHEMAS = DatasetSchema._meta.db_table
TEAMS = Team._meta.db_table

_RUN_STATE = ("CASE r.state WHEN 'COMPLETE' THEN 'COMPLETED' WHEN 'FAIL' THEN 'FAILED' WHEN 'ABORT' THEN 'ABORTED' "
              "WHEN 'NEW' THEN 'NEW' ELSE 'RUNNING' END")


_WRITES = (f"FROM {RUN_EDGES} rd JOIN {RUNS} r ON r.id = rd.run_id "
           "WHERE rd.dataset_id = d.id AND rd.direction = 'out'")
# The newest write; and when it did not complete (rare), the newest that did.
_NEWEST_WRITE = f"LEFT JOIN LATERAL (SELECT r.run_uuid, r.state, r.state_at, r.ended_at {_WRITES} " \
                "ORDER BY rd.run_id DESC LIMIT 1) w ON true"
_LAST_MODIFIED = (f"CASE WHEN w.state = 'COMPLETE' THEN w.ended_at WHEN w.state IS NOT NULL THEN "
                  f"(SELECT r.ended_at {_WRITES} AND r.state = 'COMPLETE' ORDER BY rd.run_id DESC LIMIT 1) END")


# Keys as in lineage.marquez.shapes.dataset/job (a test holds them equal), less
# what Marquez's graph leaves out: a dataset's facets and deleted flag, a job's
# facets and version.
DATASET_JSON = (
    "json_build_object("
    "'id', json_build_object('namespace', d.namespace, 'name', d.name), 'type', 'DATASET'::text, "
    "'name', d.name, 'physicalName', d.name, 'createdAt', d.created_at, "
    "'updatedAt', GREATEST(d.created_at, w.state_at), 'namespace', d.namespace, 'sourceName', d.namespace, "
    "'fields', COALESCE(s.fields, '{}'::jsonb), "
    f"'tags', '[]'::json, 'lastModifiedAt', {_LAST_MODIFIED}, 'description', d.description, "
    "'currentVersion', w.run_uuid, 'ownerTeam', t.slug)"
)


def _job_datasets(direction: str) -> str:
    # What runs showed and what JobEvents declared, as the walk follows both
    # (lineage.models.Job.edges_of, which the job endpoints read): each on its unique index.
    return (f"COALESCE((SELECT json_agg(json_build_object('namespace', x.namespace, 'name', x.name) "
            f"ORDER BY x.namespace, x.name) FROM {DATASETS} x WHERE x.id IN ("
            f"SELECT e.dataset_id FROM {EDGES} e WHERE e.job_id = j.id AND e.direction = '{direction}' UNION "
            f"SELECT e.dataset_id FROM {DECLARED} e WHERE e.job_id = j.id AND e.direction = '{direction}')), '[]'::json)")


JOB_JSON = (
    "json_build_object("
    "'id', json_build_object('namespace', j.namespace, 'name', j.name), 'type', 'JOB'::text, "
    "'name', j.name, 'simpleName', j.name, 'createdAt', j.created_at, 'updatedAt', j.updated_at, "
    f"'namespace', j.namespace, 'inputs', {_job_datasets('in')}, 'outputs', {_job_datasets('out')}, "
    "'location', j.facets->'sourceCodeLocation'->>'url', 'description', j.facets->'documentation'->>'description', "
    "'latestRun', CASE WHEN r.id IS NULL THEN NULL ELSE json_build_object("
    "'id', r.run_uuid, 'createdAt', r.created_at, 'updatedAt', r.state_at, "
    "'nominalStartTime', r.facets->'nominalTime'->>'nominalStartTime', "
    "'nominalEndTime', r.facets->'nominalTime'->>'nominalEndTime', "
    f"'state', {_RUN_STATE}, 'startedAt', r.started_at, 'endedAt', r.ended_at, "
    "'durationMs', FLOOR(EXTRACT(EPOCH FROM (r.ended_at - r.started_at)) * 1000)::bigint, "
    "'args', '{}'::json) END)"
)
# The keys of those objects that may be null: left out of the answer, as
# Marquez's document types none as nullable (dropped here: json_strip_nulls
# in the statement cost a fifth of it).
DATASET_NULLABLE = ("lastModifiedAt", "currentVersion", "ownerTeam")
JOB_NULLABLE = ("location", "description", "latestRun")
RUN_NULLABLE = ("nominalStartTime", "nominalEndTime", "startedAt", "endedAt", "durationMs")
# Every field of every dataset of a walk shares it, rendered `[]`: a list of its own per
# field was a third of the objects a large walk made, and half of its shaping time (the
# cyclic collector scanning them), for a value nobody changes.
NO_TAGS = ()


def full_neighbourhood_sql(kind: str, direction: str) -> str:
    """lineage.graph's walk (node id resolved inside, parameters %(namespaces)s,
    %(names)s, %(depth)s), its node rows carrying Marquez's `data` as JSON:

        ("s", pk, NULL, NULL, NULL, NULL)              the start node
        ("in" | "out", job pk, dataset pk, NULL, NULL, NULL)
        ("in" | "out", job pk, dataset pk, "declared", NULL, NULL)  declared by a JobEvent only
        ("d", pk, NULL, namespace, name, data)         a dataset
        ("j", pk, NULL, namespace, name, data)         a job
    """
    return (
        f"{neighbourhood_ctes(kind, direction, by_name=True)} "
        "SELECT 's', id, NULL, NULL, NULL, CAST(NULL AS json) FROM start "
        f"UNION ALL SELECT e.direction, e.job_id, e.dataset_id, NULL, NULL, NULL FROM {EDGES} e "
        f"WHERE {among('e.job_id', 'jb')} AND {among('e.dataset_id', 'ds')} "
        f"UNION ALL SELECT e.direction, e.job_id, e.dataset_id, 'declared', NULL, NULL FROM {DECLARED} e "
        f"WHERE {among('e.job_id', 'jb')} AND {among('e.dataset_id', 'ds')} AND NOT EXISTS "
        f"(SELECT 1 FROM {EDGES} o WHERE o.job_id = e.job_id AND o.direction = e.direction AND o.dataset_id = e.dataset_id) "
        f"UNION ALL SELECT 'd', d.id, NULL, d.namespace, d.name, {DATASET_JSON} FROM {DATASETS} d "
        f"LEFT JOIN {TEAMS} t ON t.id = d.owner_team_id LEFT JOIN {SCHEMAS} s ON s.dataset_id = d.id "
        f"{_NEWEST_WRITE} "
        f"WHERE {among('d.id', 'ds')} "
        f"UNION ALL SELECT 'j', j.id, NULL, j.namespace, j.name, {JOB_JSON} FROM {JOBS} j "
        f"LEFT JOIN LATERAL (SELECT * FROM {RUNS} r WHERE r.job_id = j.id ORDER BY r.state_at DESC LIMIT 1) r "
        f"ON true WHERE {among('j.id', 'jb')}"
    )


def marquez_graph(node_id: str, *, depth: int | str | None = 20, direction: str = "both") -> dict[str, Any]:
    """{"graph": [node, …]} around `node_id`, each node with Marquez's full
    `data`: one statement on PostgreSQL."""
    direction, depth = check_request(direction, depth)
    if connection.vendor != "postgresql":
        return _portable_graph(node_id, depth=depth, direction=direction)
    kind, splits = parse_node_id(node_id)
    params = {"namespaces": [ns for ns, _ in splits], "names": [name for _, name in splits], "depth": depth}
    # Reading and shaping a large walk makes tens of thousands of containers and no
    # cycle that outlives it: the collector's passes over them found nothing and were a
    # third of the shaping.
    with collector_paused():
        with prepared_cursor() as cursor:
            cursor.execute(full_neighbourhood_sql(kind, direction), params)
            rows = cursor.fetchall()
        if not rows:
            raise NodeNotFound(f"No {kind} with id {node_id!r} has been seen in lineage.")
        return linked(rows)


def linked(rows: list[tuple]) -> dict[str, Any]:
    """Marquez's graph from the walk's rows: nodes sorted by id, each node's
    edges sorted by origin then destination (as lineage.graph.Graph.to_marquez,
    which this mirrors with the data taken as it comes)."""
    datasets: dict[int, dict] = {}
    jobs: dict[int, dict] = {}
    links = []
    for row in rows:
        tag, pk, _ref, namespace, name, data = row
        if tag == "d":
            # The statement sends a dataset's fields as stored ({column: type}): listing
            # them here costs less than building them as JSON in the database.
            fields = data["fields"]
            if fields.__class__ is dict:
                data["fields"] = [{"name": column, "type": kind, "tags": NO_TAGS} for column, kind in fields.items()]
            for key in DATASET_NULLABLE:
                if key in data and data[key] is None:
                    del data[key]
            datasets[pk] = {"id": f"dataset:{namespace}:{name}", "type": "DATASET", "data": data,
                            "inEdges": [], "outEdges": []}
        elif tag == "j":
            for key in JOB_NULLABLE:
                if key in data and data[key] is None:
                    del data[key]
            run = data.get("latestRun")
            if run:
                for key in RUN_NULLABLE:
                    if key in run and run[key] is None:
                        del run[key]
            jobs[pk] = {"id": f"job:{namespace}:{name}", "type": "JOB", "data": data, "inEdges": [], "outEdges": []}
        elif tag == "in" or tag == "out":
            links.append(row)
    return {"graph": linked_nodes(datasets, jobs, links)}


_GRAPH_LEAVES_OUT = {"dataset": ("facets", "deleted"), "job": ("facets", "currentVersion")}


def _portable_graph(node_id: str, *, depth: int, direction: str) -> dict[str, Any]:
    graph = lineage_graph(node_id, depth=depth, direction=direction)
    dataset_pks = [pk for kind, pk in graph.nodes if kind == "dataset"]
    job_pks = [pk for kind, pk in graph.nodes if kind == "job"]
    data = {("dataset", (p["namespace"], p["name"])): p
            for p in reads._dataset_payloads(Dataset.objects.filter(pk__in=dataset_pks))}
    data.update({("job", (p["namespace"], p["name"])): p
                 for p in reads._job_payloads(Job.objects.filter(pk__in=job_pks))})
    rows = [row for row in graph.rows if row[0] in ("in", "out")]
    for (kind, pk), node in graph.nodes.items():
        # A start node deleted since the walk is still the graph's one node.
        payload = data.get((kind, (node.namespace, node.name))) or {
            "id": {"namespace": node.namespace, "name": node.name}, "name": node.name, "namespace": node.namespace}
        payload["type"] = kind.upper()
        for key in _GRAPH_LEAVES_OUT[kind]:
            payload.pop(key, None)
        rows.append(("d" if kind == "dataset" else "j", pk, None, node.namespace, node.name, payload))
    return linked(rows)

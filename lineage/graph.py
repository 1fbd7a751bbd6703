"""The lineage graph around one node, in Marquez's response shape.

The walk is one recursive SQL statement bounded by depth, so its cost follows
the size of the neighbourhood, not of the graph: each step is an index lookup
on the edge table (`lineage_edge_dataset_idx` for dataset→jobs, the unique
index for job→datasets).

Depth counts jobs crossed, as Marquez's does: depth 1 downstream of a dataset
is the jobs that read it and the datasets those jobs write.

Node ids are Marquez's: `dataset:<namespace>:<name>` and `job:<namespace>:<name>`.
Namespaces often hold colons (`postgres://db:5432`), so an id is resolved by
trying every split against the stored names.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from functools import cache
from typing import Any
from uuid import UUID

from django.db import connection
from django.db.models import Q

from lineage.models import Job, JobDataset, Run, RunDataset
from registry.models import Dataset

DIRECTIONS = ("upstream", "downstream", "both")
MAX_DEPTH = 100
DEFAULT_DEPTH = 20

EDGES = JobDataset._meta.db_table
DATASETS = Dataset._meta.db_table
JOBS = Job._meta.db_table


class GraphError(ValueError):
    """A bad graph request; the message says what to send instead."""


class NodeNotFound(LookupError):
    pass


@dataclass(frozen=True)
class Node:
    kind: str  # "dataset" | "job"
    pk: int
    namespace: str
    name: str

    @property
    def node_id(self) -> str:
        return f"{self.kind}:{self.namespace}:{self.name}"


@dataclass
class Graph:
    start: Node | None
    nodes: dict[tuple[str, int], Node] = field(default_factory=dict)
    edges: list[tuple[int, int, str]] = field(default_factory=list)  # (job pk, dataset pk, "in"|"out")
    extra: dict[tuple[str, int], dict] = field(default_factory=dict)

    def to_marquez(self) -> dict[str, Any]:
        """{"graph": [{"id", "type", "data", "inEdges", "outEdges"}]}, sorted by id.

        Built in one pass over sorted edges (so each node's edge lists come out
        sorted): this runs for every graph request and is most of its Python."""
        nodes, extra = self.nodes, self.extra
        ids = {key: node.node_id for key, node in nodes.items()}
        entries: dict[tuple[str, int], dict] = {}
        for key, node in nodes.items():
            data = {"namespace": node.namespace, "name": node.name, "id": {"namespace": node.namespace, "name": node.name}}
            more = extra.get(key)
            if more:
                data.update(more)
            entries[key] = {"id": ids[key], "type": _TYPES[node.kind], "data": data, "inEdges": [], "outEdges": []}
        edges = []
        for job_pk, dataset_pk, direction in self.edges:
            job, dataset = ("job", job_pk), ("dataset", dataset_pk)
            origin, destination = (dataset, job) if direction == "in" else (job, dataset)
            edges.append((ids[origin], ids[destination], origin, destination))
        edges.sort()
        for origin_id, destination_id, origin, destination in edges:
            edge = {"origin": origin_id, "destination": destination_id}
            entries[origin]["outEdges"].append(edge)
            entries[destination]["inEdges"].append(edge)
        return {"graph": [entry for _, entry in sorted((e["id"], e) for e in entries.values())]}

    def columns(self) -> dict[tuple[str, int], int]:
        """Each node's signed distance from the start (upstream negative), for drawing."""
        if self.start is None:
            return {}
        downstream: dict[tuple[str, int], list] = {}
        upstream: dict[tuple[str, int], list] = {}
        for job_pk, dataset_pk, direction in self.edges:
            job, dataset = ("job", job_pk), ("dataset", dataset_pk)
            origin, destination = (dataset, job) if direction == "in" else (job, dataset)
            downstream.setdefault(origin, []).append(destination)
            upstream.setdefault(destination, []).append(origin)
        start = (self.start.kind, self.start.pk)
        columns = {start: 0}
        for links, sign in ((downstream, 1), (upstream, -1)):
            queue = deque([start])
            seen = {start}
            while queue:
                key = queue.popleft()
                for nxt in links.get(key, ()):
                    if nxt not in seen:
                        seen.add(nxt)
                        columns.setdefault(nxt, columns[key] + sign)
                        queue.append(nxt)
        return columns


_TYPES = {"dataset": "DATASET", "job": "JOB"}


# --- resolving a node id ---------------------------------------------------------

def parse_node_id(node_id: str) -> tuple[str, list[tuple[str, str]]]:
    """('dataset' | 'job', every (namespace, name) split the id allows)."""
    kind, sep, rest = (node_id or "").partition(":")
    if not sep or kind not in ("dataset", "job") or ":" not in rest:
        raise GraphError(
            f"nodeId {node_id!r} is not of the form dataset:<namespace>:<name> or job:<namespace>:<name>."
        )
    splits = []
    for i, char in enumerate(rest):
        if char == ":" and 0 < i < len(rest) - 1:
            splits.append((rest[:i], rest[i + 1:]))
    if not splits:
        raise GraphError(f"nodeId {node_id!r} needs both a namespace and a name.")
    return kind, splits


def resolve_node(node_id: str) -> Node:
    """The stored dataset or job a Marquez node id names (one query)."""
    kind, splits = parse_node_id(node_id)
    model = Dataset if kind == "dataset" else Job
    q = Q()
    for namespace, name in splits:
        q |= Q(namespace=namespace, name=name)
    rows = list(model.objects.filter(q).values_list("pk", "namespace", "name")[:2])
    if not rows:
        raise NodeNotFound(f"No {kind} with id {node_id!r} has been seen in lineage.")
    # Two stored names could both match an ambiguous id; the longest namespace
    # wins, as URIs in namespaces are far more common than colons in names.
    pk, namespace, name = max(rows, key=lambda r: len(r[1]))
    return Node(kind, pk, namespace, name)


# --- the walk -------------------------------------------------------------------

def _walk_sql(name: str, kind: str, depth_param: str, *, downstream: bool) -> tuple[str, str]:
    """A recursive CTE over datasets (dataset_id, depth) and the SELECT of the
    jobs crossed, for one direction, from the node in the `start` CTE."""
    near, far = ("in", "out") if downstream else ("out", "in")
    if kind == "dataset":
        seed = "SELECT id, 0 FROM start"
    else:
        seed = (f"SELECT s.dataset_id, 1 FROM {EDGES} s JOIN start ON s.job_id = start.id "
                f"WHERE s.direction = '{far}' AND {depth_param} >= 1")
    cte = (
        f"{name}(dataset_id, depth) AS ("
        f"{seed} UNION "
        f"SELECT b.dataset_id, w.depth + 1 FROM {name} w "
        f"JOIN {EDGES} a ON a.dataset_id = w.dataset_id AND a.direction = '{near}' "
        f"JOIN {EDGES} b ON b.job_id = a.job_id AND b.direction = '{far}' "
        f"WHERE w.depth < {depth_param})"
    )
    jobs = (
        f"SELECT a.job_id FROM {name} w JOIN {EDGES} a ON a.dataset_id = w.dataset_id AND a.direction = '{near}' "
        f"WHERE w.depth < {depth_param}"
    )
    return cte, jobs


def neighbourhood_sql(kind: str, direction: str, *, by_name: bool = False) -> str:
    """One statement returning the start node's pk ('s'), then edge ('e'),
    dataset ('d') and job ('j') rows of its neighbourhood.

    Parameters: %(depth)s, and %(start)s (the start node's pk) or, with
    `by_name` (PostgreSQL), %(namespaces)s and %(names)s: the candidate splits
    of a node id, resolved in the same statement (longest namespace wins)."""
    table = DATASETS if kind == "dataset" else JOBS
    if by_name:
        start = (f"start(id) AS (SELECT n.id FROM {table} n JOIN unnest(CAST(%(namespaces)s AS text[]), "
                 "CAST(%(names)s AS text[])) AS k(ns, nm) ON n.namespace = k.ns AND n.name = k.nm "
                 "ORDER BY length(n.namespace) DESC LIMIT 1)")
    else:
        start = "start(id) AS (SELECT CAST(%(start)s AS BIGINT))"
    ctes, dataset_sets, job_sets = [start], [], []
    if direction in ("downstream", "both"):
        cte, jobs = _walk_sql("down", kind, "%(depth)s", downstream=True)
        ctes.append(cte)
        dataset_sets.append("SELECT dataset_id FROM down")
        job_sets.append(jobs)
    if direction in ("upstream", "both"):
        cte, jobs = _walk_sql("up", kind, "%(depth)s", downstream=False)
        ctes.append(cte)
        dataset_sets.append("SELECT dataset_id FROM up")
        job_sets.append(jobs)
    if kind == "job":
        job_sets.append("SELECT id FROM start")
    else:
        dataset_sets.append("SELECT id FROM start")
    ctes.append(f"ds(id) AS ({' UNION '.join(dataset_sets)})")
    ctes.append(f"jb(id) AS ({' UNION '.join(job_sets)})")
    return (
        f"WITH RECURSIVE {', '.join(ctes)} "
        "SELECT 's', id, NULL, NULL, NULL FROM start "
        f"UNION ALL SELECT 'e', e.job_id, CAST(e.dataset_id AS TEXT), e.direction, NULL FROM {EDGES} e "
        "WHERE e.job_id IN (SELECT id FROM jb) AND e.dataset_id IN (SELECT id FROM ds) "
        f"UNION ALL SELECT 'd', d.id, d.namespace, d.name, t.slug FROM {DATASETS} d "
        "LEFT JOIN registry_team t ON t.id = d.owner_team_id WHERE d.id IN (SELECT id FROM ds) "
        f"UNION ALL SELECT 'j', j.id, j.namespace, j.name, NULL FROM {JOBS} j WHERE j.id IN (SELECT id FROM jb)"
    )


def check_request(direction: str, depth: int | str | None) -> tuple[str, int]:
    if direction not in DIRECTIONS:
        raise GraphError(f"direction must be one of {', '.join(DIRECTIONS)}, not {direction!r}.")
    if depth in (None, ""):
        return direction, DEFAULT_DEPTH
    try:
        value = int(depth)
    except (TypeError, ValueError):
        raise GraphError(f"depth must be a whole number from 0 to {MAX_DEPTH}, not {depth!r}.") from None
    if not 0 <= value <= MAX_DEPTH:
        raise GraphError(f"depth must be from 0 to {MAX_DEPTH}, not {value}.")
    return direction, value


def lineage_graph(node_id: str, *, depth: int | str | None = DEFAULT_DEPTH, direction: str = "both") -> Graph:
    """The neighbourhood of `node_id` within `depth` jobs: one statement on
    PostgreSQL (resolve and walk), two elsewhere."""
    direction, depth = check_request(direction, depth)
    if connection.vendor != "postgresql":
        return graph_around(resolve_node(node_id), depth=depth, direction=direction)
    kind, splits = parse_node_id(node_id)
    params = {"namespaces": [ns for ns, _ in splits], "names": [name for _, name in splits], "depth": depth}
    with _walk_cursor() as cursor:
        cursor.execute(neighbourhood_sql(kind, direction, by_name=True), params)
        rows = cursor.fetchall()
    if not rows:
        raise NodeNotFound(f"No {kind} with id {node_id!r} has been seen in lineage.")
    return _graph_from_rows(kind, rows)


def graph_around(start: Node, *, depth: int, direction: str = "both") -> Graph:
    with _walk_cursor() as cursor:
        cursor.execute(neighbourhood_sql(start.kind, direction), {"start": start.pk, "depth": depth})
        rows = cursor.fetchall()
    graph = _graph_from_rows(start.kind, rows)
    # A start node that no longer exists is still the graph's one node.
    graph.nodes.setdefault((start.kind, start.pk), start)
    graph.start = graph.nodes[(start.kind, start.pk)]
    return graph


def _walk_cursor():
    """A cursor for the walk. On PostgreSQL, a server-binding cursor that
    prepares its statement: planning the recursive query costs more than
    running it on a small neighbourhood, and a prepared statement is planned
    once per connection. Wrapped by Django, so it is logged and counted."""
    if connection.vendor != "postgresql":
        return connection.cursor()
    connection.ensure_connection()
    return connection._prepare_cursor(_prepared_cursor_class()(connection.connection))


@cache
def _prepared_cursor_class():
    from django.db.backends.postgresql.base import ServerBindingCursor

    class PreparedCursor(ServerBindingCursor):
        def execute(self, query, params=None, *, prepare=None, binary=None):
            return super().execute(query, params, prepare=True, binary=binary)

    return PreparedCursor


def _graph_from_rows(kind: str, rows: list[tuple]) -> Graph:
    graph = Graph(start=None)
    nodes, extra, edges = graph.nodes, graph.extra, graph.edges
    start_pk = None
    for tag, pk, a, b, c in rows:
        if tag == "e":
            edges.append((pk, int(a), b))
        elif tag == "d":
            nodes[("dataset", pk)] = Node("dataset", pk, a, b)
            extra[("dataset", pk)] = {"ownerTeam": c}
        elif tag == "j":
            nodes[("job", pk)] = Node("job", pk, a, b)
        else:
            start_pk = pk
    graph.start = nodes.get((kind, start_pk))
    return graph


def run_graph(run_id: str) -> Graph:
    """Run-level lineage: the run's job and what this run read and wrote (two queries)."""
    try:
        run_uuid = UUID(run_id)
    except (TypeError, ValueError):
        raise GraphError(f"runId {run_id!r} is not a UUID.") from None
    run = Run.objects.select_related("job").filter(run_uuid=run_uuid).first()
    if run is None:
        raise NodeNotFound(f"No run {run_id} has been seen in lineage.")
    job = Node("job", run.job.pk, run.job.namespace, run.job.name)
    graph = Graph(start=job)
    graph.nodes[("job", job.pk)] = job
    graph.extra[("job", job.pk)] = {
        "run": {"runId": str(run.run_uuid), "state": run.state, "stateAt": run.state_at.isoformat(),
                "startedAt": run.started_at.isoformat() if run.started_at else None,
                "endedAt": run.ended_at.isoformat() if run.ended_at else None},
    }
    edges = RunDataset.objects.filter(run=run).values_list(
        "dataset_id", "direction", "dataset__namespace", "dataset__name", "dataset__owner_team__slug")
    for dataset_pk, direction, namespace, name, team in edges:
        graph.nodes[("dataset", dataset_pk)] = Node("dataset", dataset_pk, namespace, name)
        graph.extra[("dataset", dataset_pk)] = {"ownerTeam": team}
        graph.edges.append((job.pk, dataset_pk, direction))
    return graph

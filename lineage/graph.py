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
from functools import cached_property
from operator import itemgetter
from typing import Any, NamedTuple
from uuid import UUID

from django.db import connection
from django.db.models import Q

from lineage.models import DeclaredEdge, Job, JobDataset, Run, RunDataset
from registry.db import prepared_cursor
from registry.models import Dataset

DIRECTIONS = ("upstream", "downstream", "both")
MAX_DEPTH = 100
DEFAULT_DEPTH = 20

EDGES = JobDataset._meta.db_table
DECLARED = DeclaredEdge._meta.db_table
# The walk follows what runs showed and what JobEvents declared (static lineage):
# PostgreSQL pushes each step's conditions into both branches (an index look-up each).
WALKED = (f"(SELECT job_id, dataset_id, direction FROM {EDGES} "
          f"UNION ALL SELECT job_id, dataset_id, direction FROM {DECLARED})")
DATASETS = Dataset._meta.db_table
JOBS = Job._meta.db_table


class GraphError(ValueError):
    """A bad graph request; the message says what to send instead."""


class NodeNotFound(LookupError):
    pass


class Node(NamedTuple):
    # A tuple, not a dataclass: a drawing builds hundreds.
    kind: str  # "dataset" | "job"
    pk: int
    namespace: str
    name: str

    @property
    def node_id(self) -> str:
        return f"{self.kind}:{self.namespace}:{self.name}"


class Graph:
    """A lineage neighbourhood, kept as the rows the walk returns:

        ("d", pk, None, namespace, name, owner team slug)   a dataset
        ("j", pk, None, namespace, name, None)              a job
        ("in" | "out", job pk, dataset pk, None, None, None) an edge: the job reads | writes the dataset
        ("in" | "out", job pk, dataset pk, "declared", None, None)  the same, declared by a JobEvent only
        ("s", pk, None, None, None, None)                   the start node (of kind `start_kind`)

    The API turns these rows straight into Marquez's answer; `nodes`, `edges`
    and `start`, which the drawing needs, are built from them on first use.
    `extra` adds keys to a node's "data" (a run's state, for run graphs)."""

    def __init__(self, rows: list[tuple], *, start_kind: str | None = None,
                 extra: dict[tuple[str, int], dict] | None = None) -> None:
        self.rows = rows
        self.start_kind = start_kind
        self.extra = extra or {}

    @cached_property
    def nodes(self) -> dict[tuple[str, int], Node]:
        nodes = {}
        for tag, pk, _ref, namespace, name, _team in self.rows:
            kind = _KINDS.get(tag)
            if kind:
                nodes[(kind, pk)] = Node(kind, pk, namespace, name)
        return nodes

    @cached_property
    def edges(self) -> list[tuple[int, int, str]]:
        """(job pk, dataset pk, "in" | "out")"""
        return [(pk, ref, tag) for tag, pk, ref, *_ in self.rows if tag in _DIRECTIONS]

    @cached_property
    def declared(self) -> set[tuple[int, int, str]]:
        """The edges only a JobEvent declared (no run showed them)."""
        return {(pk, ref, tag) for tag, pk, ref, mark, *_ in self.rows if tag in _DIRECTIONS and mark == "declared"}

    @cached_property
    def start(self) -> Node | None:
        pk = next((row[1] for row in self.rows if row[0] == "s"), None)
        return self.nodes.get((self.start_kind, pk)) if pk is not None else None

    def to_marquez(self) -> dict[str, Any]:
        """{"graph": [{"id", "type", "data", "inEdges", "outEdges"}]}, sorted by
        id, each node's edges sorted by origin then destination.

        Built straight from the rows, with no objects in between: this runs for
        every graph request and was most of its Python."""
        datasets: dict[int, dict] = {}
        jobs: dict[int, dict] = {}
        links = []
        for row in self.rows:
            tag, pk, _ref, namespace, name, team = row
            if tag == "d":
                datasets[pk] = {
                    "id": f"dataset:{namespace}:{name}", "type": "DATASET",
                    "data": {"namespace": namespace, "name": name, "id": {"namespace": namespace, "name": name},
                             "ownerTeam": team},
                    "inEdges": [], "outEdges": [],
                }
            elif tag == "j":
                jobs[pk] = {
                    "id": f"job:{namespace}:{name}", "type": "JOB",
                    "data": {"namespace": namespace, "name": name, "id": {"namespace": namespace, "name": name}},
                    "inEdges": [], "outEdges": [],
                }
            elif tag == "in" or tag == "out":
                links.append(row)
        for (kind, pk), more in self.extra.items():
            node = (datasets if kind == "dataset" else jobs).get(pk)
            if node:
                node["data"].update(more)
        return {"graph": linked_nodes(datasets, jobs, links)}

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


_KINDS = {"d": "dataset", "j": "job"}
_DIRECTIONS = ("in", "out")
_BY_ID = itemgetter("id")


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
        seed = (f"SELECT s.dataset_id, 1 FROM {WALKED} s JOIN start ON s.job_id = start.id "
                f"WHERE s.direction = '{far}' AND {depth_param} >= 1")
    cte = (
        f"{name}(dataset_id, depth) AS ("
        f"{seed} UNION "
        f"SELECT b.dataset_id, w.depth + 1 FROM {name} w "
        f"JOIN {WALKED} a ON a.dataset_id = w.dataset_id AND a.direction = '{near}' "
        f"JOIN {WALKED} b ON b.job_id = a.job_id AND b.direction = '{far}' "
        f"WHERE w.depth < {depth_param})"
    )
    jobs = (
        f"SELECT a.job_id FROM {name} w JOIN {WALKED} a ON a.dataset_id = w.dataset_id AND a.direction = '{near}' "
        f"WHERE w.depth < {depth_param}"
    )
    return cte, jobs


def among(column: str, cte: str) -> str:
    """`column` is one of the ids the CTE `cte` (ds or jb) holds.

    On PostgreSQL as `= ANY(ARRAY(SELECT id FROM cte))`: the planner cannot size a
    recursive CTE (it guesses hundreds of thousands of rows, whatever the walk finds), so
    `IN (SELECT id FROM cte)` was joined by hashing the whole edge, job and dataset tables,
    a scan that grows with the world; an array is sized at a few elements, so each table is
    read through its index, once per node of the neighbourhood. SQLite (the demo) has no
    arrays, and looks an IN up by index anyway."""
    if connection.vendor == "postgresql":
        return f"{column} = ANY(ARRAY(SELECT id FROM {cte}))"
    return f"{column} IN (SELECT id FROM {cte})"


def neighbourhood_sql(kind: str, direction: str, *, by_name: bool = False) -> str:
    """One statement returning the start node's pk, then the edge, dataset and
    job rows of its neighbourhood, in the layout `Graph` keeps.

    Parameters: %(depth)s, and %(start)s (the start node's pk) or, with
    `by_name` (PostgreSQL), %(namespaces)s and %(names)s: the candidate splits
    of a node id, resolved in the same statement (longest namespace wins)."""
    return (
        f"{neighbourhood_ctes(kind, direction, by_name=by_name)} "
        "SELECT 's', id, NULL, NULL, NULL, NULL FROM start "
        f"UNION ALL SELECT e.direction, e.job_id, e.dataset_id, NULL, NULL, NULL FROM {EDGES} e "
        f"WHERE {among('e.job_id', 'jb')} AND {among('e.dataset_id', 'ds')} "
        f"UNION ALL SELECT e.direction, e.job_id, e.dataset_id, 'declared', NULL, NULL FROM {DECLARED} e "
        f"WHERE {among('e.job_id', 'jb')} AND {among('e.dataset_id', 'ds')} AND NOT EXISTS "
        f"(SELECT 1 FROM {EDGES} o WHERE o.job_id = e.job_id AND o.direction = e.direction AND o.dataset_id = e.dataset_id) "
        f"UNION ALL SELECT 'd', d.id, NULL, d.namespace, d.name, t.slug FROM {DATASETS} d "
        f"LEFT JOIN registry_team t ON t.id = d.owner_team_id WHERE {among('d.id', 'ds')} "
        f"UNION ALL SELECT 'j', j.id, NULL, j.namespace, j.name, NULL FROM {JOBS} j WHERE {among('j.id', 'jb')}"
    )


def neighbourhood_ctes(kind: str, direction: str, *, by_name: bool = False) -> str:
    """`WITH RECURSIVE start(id), …, ds(id), jb(id)`: the start node, and the
    datasets and jobs of its neighbourhood (parameters as `neighbourhood_sql`)."""
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
    return f"WITH RECURSIVE {', '.join(ctes)}"


def linked_nodes(datasets: dict[int, dict], jobs: dict[int, dict], links: list[tuple]) -> list[dict]:
    """Marquez's node list: `datasets` and `jobs` ({pk: node with empty edge lists})
    linked by the walk's edge rows (direction, job pk, dataset pk, "declared" or None, …),
    nodes sorted by id and each node's edges by origin, then destination.

    Each outEdges list first collects the destination nodes. Visiting the origins
    in id order, each with its destinations in id order, then fills every inEdges
    list in order too, without sorting the edges."""
    declared = set()
    for direction, job_pk, dataset_pk, mark, *_ in links:
        if direction == "in":
            datasets[dataset_pk]["outEdges"].append(jobs[job_pk])
        else:
            jobs[job_pk]["outEdges"].append(datasets[dataset_pk])
        if mark == "declared":
            declared.add((datasets[dataset_pk]["id"], jobs[job_pk]["id"]) if direction == "in"
                         else (jobs[job_pk]["id"], datasets[dataset_pk]["id"]))
    nodes = [*datasets.values(), *jobs.values()]
    nodes.sort(key=_BY_ID)
    for node in nodes:
        destinations = node["outEdges"]
        if destinations:
            if len(destinations) > 1:
                destinations.sort(key=_BY_ID)
            origin = node["id"]
            edges = node["outEdges"] = []
            for destination in destinations:
                edge = {"origin": origin, "destination": destination["id"]}
                if declared and (origin, destination["id"]) in declared:
                    edge["declared"] = True  # static lineage: a JobEvent said so, no run showed it
                edges.append(edge)
                destination["inEdges"].append(edge)
    return nodes


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
    return Graph(rows, start_kind=kind)


def graph_around(start: Node, *, depth: int, direction: str = "both") -> Graph:
    with _walk_cursor() as cursor:
        cursor.execute(neighbourhood_sql(start.kind, direction), {"start": start.pk, "depth": depth})
        rows = cursor.fetchall()
    tag = "d" if start.kind == "dataset" else "j"
    if not any(row[0] == tag and row[1] == start.pk for row in rows):
        # A start node that no longer exists is still the graph's one node.
        rows.append((tag, start.pk, None, start.namespace, start.name, None))
    return Graph(rows, start_kind=start.kind)


def _walk_cursor():
    # Planning the recursive query costs about as much as running it on a
    # small neighbourhood: prepared, it is planned once per connection.
    return prepared_cursor()


def run_sender(run: Run) -> dict[str, Any] | None:
    """Who sent the run's latest event: the token (by name and prefix) and its team; None for the registry itself."""
    if run.token_id is None:
        return None
    token = run.token
    return {"tokenId": run.token_id, "token": token.name if token else None,
            "tokenPrefix": token.key_prefix if token else None,
            "team": run.token_team.slug if run.token_team_id and run.token_team else None}


def run_graph(run_id: str) -> Graph:
    """Run-level lineage: the run's job and what this run read and wrote (two queries)."""
    try:
        run_uuid = UUID(run_id)
    except (TypeError, ValueError):
        raise GraphError(f"runId {run_id!r} is not a UUID.") from None
    run = Run.objects.select_related("job").with_sender().filter(run_uuid=run_uuid).first()
    if run is None:
        raise NodeNotFound(f"No run {run_id} has been seen in lineage.")
    job = run.job
    rows = [("s", job.pk, None, None, None, None), ("j", job.pk, None, job.namespace, job.name, None)]
    extra = {("job", job.pk): {
        "run": {"runId": str(run.run_uuid), "state": run.state, "stateAt": run.state_at.isoformat(),
                "startedAt": run.started_at.isoformat() if run.started_at else None,
                "endedAt": run.ended_at.isoformat() if run.ended_at else None,
                "sentBy": run_sender(run)},
    }}
    edges = RunDataset.objects.filter(run=run).values_list(
        "dataset_id", "direction", "dataset__namespace", "dataset__name", "dataset__owner_team__slug")
    for dataset_pk, direction, namespace, name, team in edges:
        rows.append(("d", dataset_pk, None, namespace, name, team))
        rows.append((direction, job.pk, dataset_pk, None, None, None))
    return Graph(rows, start_kind="job", extra=extra)

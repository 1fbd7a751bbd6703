"""Server-side layout of a lineage graph as SVG: columns by distance from the
start node (upstream left, downstream right), no JavaScript.

The drawing keeps its size: labels stay 12 px at any depth, and a wide graph
scrolls sideways inside its card (static/js/lineage.js brings the start node
into view). An edge pointing back (a cycle: a dataset both upstream and
downstream of the start) runs in a lane of its own below every node, so it is
never mistaken for an edge between the nodes it would otherwise cross."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.urls import reverse

from lineage.graph import Graph

NODE_W, NODE_H = 180, 34
COL_GAP, ROW_GAP, PAD = 225, 46, 12
MAX_LABEL = 26
LANE_GAP = 10  # between the lanes of the edges pointing back
SIDE = PAD + (COL_GAP - NODE_W) // 2  # room left and right for those edges' turns


@dataclass
class PlacedNode:
    x: int
    y: int
    label: str
    title: str
    url: str
    kind: str
    is_start: bool
    pk: int = 0
    # What other apps know of a dataset node's health (registry.hooks.statuses_of):
    # freshness, drift, failed checks, open change requests.
    statuses: list = field(default_factory=list)

    @property
    def status_words(self) -> str:
        return "; ".join(s.text for s in self.statuses)

    @property
    def worst(self) -> str:
        """The node's marker colour: its worst status."""
        found = {s.css for s in self.statuses}
        return next((css for css in ("bad", "warn", "good") if css in found), "")


@dataclass
class Drawing:
    width: int
    height: int
    nodes: list[PlacedNode]
    edges: list[str]  # SVG path data
    declared: list[str] = field(default_factory=list)  # path data of edges only a JobEvent declared
    node_w: int = NODE_W
    node_h: int = NODE_H


def _label(text: str) -> str:
    """Cut at the end: "retail.sales.ord…" keeps the part a person reads first (the title has it all)."""
    return text if len(text) <= MAX_LABEL else text[:MAX_LABEL - 1] + "…"


def _order_rows(graph: Graph, columns: dict, by_column: dict) -> dict:
    """Each node's rank within its column: by name in the start column, then,
    moving outwards, by the mean rank of its neighbours in the column before
    (the barycentre heuristic), which removes most edge crossings."""
    neighbours: dict[tuple[str, int], list] = {}
    for job_pk, dataset_pk, _direction in graph.edges:
        job, dataset = ("job", job_pk), ("dataset", dataset_pk)
        neighbours.setdefault(job, []).append(dataset)
        neighbours.setdefault(dataset, []).append(job)
    rank: dict[tuple[str, int], float] = {}
    for column in sorted(by_column, key=abs):
        members = by_column[column]
        inner = column - 1 if column > 0 else column + 1
        keyed = []
        for kind, namespace, name, key, _node in members:
            around = [rank[n] for n in neighbours.get(key, ()) if columns.get(n) == inner and n in rank]
            centre = sum(around) / len(around) if around and column != 0 else 0.0
            keyed.append((centre, kind, namespace, name, key))
        for position, (*_, key) in enumerate(sorted(keyed)):
            rank[key] = position
    return rank


def layout(graph: Graph) -> Drawing:
    columns = graph.columns()
    lowest = min(columns.values(), default=0)
    by_column: dict[int, list] = {}
    for key, node in graph.nodes.items():
        by_column.setdefault(columns.get(key, 0), []).append((node.kind, node.namespace, node.name, key, node))
    placed: dict[tuple[str, int], PlacedNode] = {}
    start_key = (graph.start.kind, graph.start.pk) if graph.start else None
    tallest = max((len(v) for v in by_column.values()), default=1)
    rows = _order_rows(graph, columns, by_column)
    for column, members in by_column.items():
        offset = (tallest - len(members)) * ROW_GAP // 2  # centre short columns
        for row, (_kind, _ns, _name, key, node) in enumerate(sorted(members, key=lambda m: rows[m[3]])):
            url = reverse("dataset-detail", args=[node.pk]) if node.kind == "dataset" else reverse("lineage-job-detail", args=[node.pk])
            placed[key] = PlacedNode(
                x=SIDE + (column - lowest) * COL_GAP, y=PAD + offset + row * ROW_GAP,
                label=_label(node.name), title=node.node_id, url=url, kind=node.kind, is_start=key == start_key,
                pk=node.pk,
            )
    edges, declared = [], []
    static = graph.declared
    nodes_bottom = PAD + (tallest - 1) * ROW_GAP + NODE_H
    half_gap = (COL_GAP - NODE_W) // 2
    lanes = 0
    for job_pk, dataset_pk, direction in graph.edges:
        drawn = declared if (job_pk, dataset_pk, direction) in static else edges
        job, dataset = placed.get(("job", job_pk)), placed.get(("dataset", dataset_pk))
        if job is None or dataset is None:
            continue
        origin, destination = (dataset, job) if direction == "in" else (job, dataset)
        x1, y1 = origin.x + NODE_W, origin.y + NODE_H // 2
        x2, y2 = destination.x, destination.y + NODE_H // 2
        if x2 <= x1:
            # Pointing back: out of the origin's right side, down the gap to a lane below
            # every node, along it, and up the gap into the destination's left side.
            lanes += 1
            lane = nodes_bottom + lanes * LANE_GAP
            drawn.append(f"M{x1},{y1} H{x1 + half_gap} V{lane} H{x2 - half_gap} V{y2} H{x2}")
            continue
        mid = (x1 + x2) // 2
        drawn.append(f"M{x1},{y1} C{mid},{y1} {mid},{y2} {x2},{y2}")
    width = SIDE * 2 + (max(columns.values(), default=0) - lowest) * COL_GAP + NODE_W
    height = nodes_bottom + max(ROW_GAP // 2, lanes * LANE_GAP + LANE_GAP) + PAD
    return Drawing(width=width, height=height, nodes=list(placed.values()), edges=edges, declared=declared)


def with_statuses(drawing: Drawing, statuses: dict) -> Drawing:
    """Give each dataset node its statuses ({dataset id: [DatasetStatus]})."""
    for node in drawing.nodes:
        if node.kind == "dataset":
            node.statuses = statuses.get(node.pk, [])
    return drawing

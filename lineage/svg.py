"""Server-side layout of a lineage graph as SVG: columns by distance from the
start node (upstream left, downstream right), no JavaScript."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.urls import reverse

from lineage.graph import Graph

NODE_W, NODE_H = 180, 34
COL_GAP, ROW_GAP, PAD = 225, 46, 12
MAX_LABEL = 26
# Scaled to the page width when that keeps text at least this large; wider
# drawings keep their size and scroll sideways.
MIN_SCALE = 0.55
PAGE_WIDTH = 1110


@dataclass
class PlacedNode:
    x: int
    y: int
    label: str
    title: str
    url: str
    kind: str
    is_start: bool


@dataclass
class Drawing:
    width: int
    height: int
    nodes: list[PlacedNode]
    edges: list[str]  # SVG path data
    declared: list[str] = field(default_factory=list)  # path data of edges only a JobEvent declared
    node_w: int = NODE_W
    node_h: int = NODE_H

    @property
    def fits(self) -> bool:
        return self.width * MIN_SCALE <= PAGE_WIDTH


def _label(text: str) -> str:
    return text if len(text) <= MAX_LABEL else "…" + text[-(MAX_LABEL - 1):]


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
                x=PAD + (column - lowest) * COL_GAP, y=PAD + offset + row * ROW_GAP,
                label=_label(node.name), title=node.node_id, url=url, kind=node.kind, is_start=key == start_key,
            )
    edges, declared = [], []
    static = graph.declared
    for job_pk, dataset_pk, direction in graph.edges:
        drawn = declared if (job_pk, dataset_pk, direction) in static else edges
        job, dataset = placed.get(("job", job_pk)), placed.get(("dataset", dataset_pk))
        if job is None or dataset is None:
            continue
        origin, destination = (dataset, job) if direction == "in" else (job, dataset)
        x1, y1 = origin.x + NODE_W, origin.y + NODE_H // 2
        x2, y2 = destination.x, destination.y + NODE_H // 2
        if x2 <= x1:  # an edge pointing back (a cycle): loop below the nodes
            x1, x2 = origin.x + NODE_W // 2, destination.x + NODE_W // 2
            y1, y2 = origin.y + NODE_H, destination.y + NODE_H
            low = max(y1, y2) + ROW_GAP // 2
            drawn.append(f"M{x1},{y1} C{x1},{low} {x2},{low} {x2},{y2}")
            continue
        mid = (x1 + x2) // 2
        drawn.append(f"M{x1},{y1} C{mid},{y1} {mid},{y2} {x2},{y2}")
    width = PAD * 2 + (max(columns.values(), default=0) - lowest) * COL_GAP + NODE_W
    height = PAD * 2 + (tallest - 1) * ROW_GAP + NODE_H + ROW_GAP // 2
    return Drawing(width=width, height=height, nodes=list(placed.values()), edges=edges, declared=declared)

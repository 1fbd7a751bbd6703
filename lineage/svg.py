"""Server-side layout of a lineage graph as SVG: columns by distance from the
start node (upstream left, downstream right), no JavaScript."""

from __future__ import annotations

from dataclasses import dataclass

from django.urls import reverse

from lineage.graph import Graph

NODE_W, NODE_H = 210, 34
COL_GAP, ROW_GAP, PAD = 270, 50, 12
MAX_LABEL = 30


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


def _label(text: str) -> str:
    return text if len(text) <= MAX_LABEL else "…" + text[-(MAX_LABEL - 1):]


def layout(graph: Graph) -> Drawing:
    columns = graph.columns()
    lowest = min(columns.values(), default=0)
    by_column: dict[int, list] = {}
    for key, node in graph.nodes.items():
        by_column.setdefault(columns.get(key, 0), []).append((node.kind, node.namespace, node.name, key, node))
    placed: dict[tuple[str, int], PlacedNode] = {}
    start_key = (graph.start.kind, graph.start.pk) if graph.start else None
    tallest = max((len(v) for v in by_column.values()), default=1)
    for column, members in by_column.items():
        members.sort()
        offset = (tallest - len(members)) * ROW_GAP // 2  # centre short columns
        for row, (_kind, _ns, _name, key, node) in enumerate(members):
            url = reverse("dataset-detail", args=[node.pk]) if node.kind == "dataset" else reverse("lineage-job-detail", args=[node.pk])
            placed[key] = PlacedNode(
                x=PAD + (column - lowest) * COL_GAP, y=PAD + offset + row * ROW_GAP,
                label=_label(node.name), title=node.node_id, url=url, kind=node.kind, is_start=key == start_key,
            )
    edges = []
    for job_pk, dataset_pk, direction in graph.edges:
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
            edges.append(f"M{x1},{y1} C{x1},{low} {x2},{low} {x2},{y2}")
            continue
        mid = (x1 + x2) // 2
        edges.append(f"M{x1},{y1} C{mid},{y1} {mid},{y2} {x2},{y2}")
    width = PAD * 2 + (max(columns.values(), default=0) - lowest) * COL_GAP + NODE_W
    height = PAD * 2 + (tallest - 1) * ROW_GAP + NODE_H + ROW_GAP // 2
    return Drawing(width=width, height=height, nodes=list(placed.values()), edges=edges)

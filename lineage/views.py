"""Lineage pages: the dataset-page sections (graph, column usage, current schema
and producers' facets, data quality), the dataset list's failed-checks badge,
and the job pages."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.db.models import Max, OuterRef, Q, Subquery, Sum
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.template.loader import render_to_string
from django.urls import reverse

from lineage.column_graph import column_lineage
from lineage.graph import DIRECTIONS, Graph, Node, NodeNotFound, graph_around
from lineage.models import (
    DatasetAlias,
    DatasetFacet,
    DatasetSchema,
    Direction,
    FieldEdge,
    Job,
    QualityCheck,
    Run,
    RunDataset,
    RunEvent,
)
from lineage.svg import layout, with_statuses
from registry.health import statuses_of
from registry.hooks import count_badge, dataset_list_badge, dataset_page_section
from registry.models import Consumer, Dataset
from registry.pagination import keyset_page_of
from registry.usage import UsageKind, column_readers, owner_annotations, owners_of

PAGE_DEPTHS = (1, 2, 3, 4, 5)
COLUMN_VIEW_DEPTH = 1  # one hop either way: a reader follows a column further by its links
DEFAULT_PAGE_DEPTH = 1
MAX_DRAWN_NODES = 300


def _graph_choice(request: HttpRequest) -> tuple[int, str]:
    # Depth 1 both ways (five columns) fits the page; deeper graphs keep their
    # size and scroll sideways inside their card (lineage.svg).
    try:
        depth = int(request.GET.get("depth", DEFAULT_PAGE_DEPTH))
    except ValueError:
        depth = DEFAULT_PAGE_DEPTH
    depth = min(max(depth, 1), PAGE_DEPTHS[-1])
    direction = request.GET.get("direction", "both")
    return depth, direction if direction in DIRECTIONS else "both"


def _drawing_context(request: HttpRequest, start: Node) -> dict:
    depth, direction = _graph_choice(request)
    graph: Graph = graph_around(start, depth=depth, direction=direction)
    too_many = len(graph.nodes) > MAX_DRAWN_NODES
    drawing = None
    if not too_many and len(graph.nodes) >= 2:
        # Every dataset node's health in a fixed number of queries, whatever the graph's size.
        drawing = with_statuses(layout(graph), statuses_of(
            [node.pk for node in graph.nodes.values() if node.kind == "dataset"]))
    return {
        "depth": depth, "direction": direction, "depths": PAGE_DEPTHS, "directions": DIRECTIONS,
        "node_count": len(graph.nodes), "too_many": too_many, "max_nodes": MAX_DRAWN_NODES,
        "drawing": drawing,
        "node_id": start.node_id,
    }


WRITES_SHOWN = 10
WRITES_LOOKED_AT = 100  # a run still writing after 100 newer ones started is not among the latest 10


@dataset_page_section(order=30)
def lineage_section(request: HttpRequest, dataset) -> str:
    """The dataset page's lineage: a server-drawn graph and the latest runs that wrote it."""
    start = Node("dataset", dataset.pk, dataset.namespace, dataset.name)
    ctx = _drawing_context(request, start)
    # The latest runs by their last event, among the newest runs that wrote it (by id, through
    # lineage_rundataset_latest_idx): a dataset written hourly for years has tens of thousands.
    newest = (RunDataset.objects.filter(dataset_id=dataset.pk, direction="out").order_by("-run_id")
              .values("run_id")[:WRITES_LOOKED_AT])
    ctx["writes"] = list(Run.objects.filter(pk__in=newest).select_related("job").order_by("-state_at")[:WRITES_SHOWN])
    ctx["anchor_url"] = dataset.get_absolute_url()
    ctx["columns_url"] = reverse("lineage-dataset-columns", args=[dataset.pk])
    return render_to_string("lineage/_section.html", ctx, request=request)


@dataset_page_section(order=35)
def column_usage_section(request: HttpRequest, dataset) -> str:
    """Who reads which columns of the dataset, from lineage (three queries: the
    reads with their token teams, the namespace teams, the registered consumers)."""
    readers = column_readers(dataset.pk)
    if not readers:
        return ""
    consumers = set(Consumer.objects.filter(dataset_id=dataset.pk).values_list("team_id", flat=True))
    return render_to_string("lineage/_column_usage.html", {
        "readers": readers, "consumer_team_ids": consumers, "owner_team_id": dataset.owner_team_id,
        "column_lineage_url": reverse("api-column-lineage"),
        "dataset_node": f"dataset:{dataset.namespace}:{dataset.name}",
        "window": _duration_words(settings.COLUMN_USAGE_WINDOW),
    }, request=request)


def _duration_words(window: timedelta) -> str:
    seconds = int(window.total_seconds())
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} seconds"


@login_required
def job_list(request: HttpRequest) -> HttpResponse:
    latest = Run.objects.filter(job=OuterRef("pk")).order_by("-state_at")
    jobs = Job.objects.annotate(
        last_state=Subquery(latest.values("state")[:1]), last_state_at=Subquery(latest.values("state_at")[:1]),
        last_token_team_id=Subquery(latest.values("token_team_id")[:1]), **owner_annotations(),
    )
    page = keyset_page_of(request, jobs, key=("namespace", "name"))  # lineage_job_namespace_name_unique
    for job, owner in zip(page.object_list, owners_of(page.object_list, lambda j: j.last_token_team_id), strict=True):
        job.owner = owner
    return render(request, "lineage/job_list.html", {"page": page})


@login_required
def job_detail(request: HttpRequest, pk: int) -> HttpResponse:
    latest = Run.objects.filter(job=OuterRef("pk")).order_by("-state_at")
    job = get_object_or_404(Job.objects.annotate(last_token_team_id=Subquery(latest.values("token_team_id")[:1]),
                                                 **owner_annotations()), pk=pk)
    (job.owner,) = owners_of([job], lambda j: j.last_token_team_id)
    start = Node("job", job.pk, job.namespace, job.name)
    ctx = _drawing_context(request, start)
    # What the graph shows: the datasets runs read and wrote, and those JobEvents declared.
    edges = job.edges()
    runs = list(Run.objects.of_job(job).with_sender().recent(20))
    # A note on each run stored without a facet that broke its own schema.
    dropped = RunEvent.objects.dropped_facets_by_run([run.run_uuid for run in runs])
    for run in runs:
        run.dropped_facets = dropped.get(run.run_uuid, [])
    ctx.update({"job": job, "runs": runs, "anchor_url": job.get_absolute_url(),
                "sides": [("reads", edges.get(Direction.INPUT, [])), ("writes", edges.get(Direction.OUTPUT, []))],
                "no_datasets": not edges})
    return render(request, "lineage/job_detail.html", ctx)


# --- what producers say about a dataset: its current schema, facets and quality ----------

PRODUCER_FACETS = ("documentation", "ownership", "symlinks", "lifecycleStateChange", "tags", "datasetType", "storage",
                   "dataSource", "version", "catalog", "hierarchy")
RECENT_CHECKS = 10


@dataset_page_section(order=25)
def schema_section(request: HttpRequest, dataset) -> str:
    """The current schema as a column table (each column's upstream fields from
    column lineage), where it came from, the producers' facets beside the
    registry's own fields, and the dataset's aliases. Four queries: the schema
    with its job, the facets, the aliases both ways, the field edges feeding it."""
    schema = DatasetSchema.objects.select_related("job").filter(dataset_id=dataset.pk).first()
    facets = {f.name: f for f in DatasetFacet.objects.filter(dataset_id=dataset.pk)}
    aliases = list(DatasetAlias.objects.filter(Q(dataset_id=dataset.pk) | Q(namespace=dataset.namespace, name=dataset.name))
                   .select_related("dataset"))
    if schema is None and not facets and not aliases:
        return ""
    fed_by: dict[str, list[str]] = {}
    if schema is not None:
        for field, name, input_field in (
                FieldEdge.objects.current().filter(dataset_id=dataset.pk, kind=UsageKind.DIRECT)
                .values_list("field", "input_dataset__name", "input_field")
                .order_by("field", "input_dataset__name", "input_field").distinct()):
            fed_by.setdefault(field, []).append(f"{name}.{input_field}")
    return render_to_string("lineage/_schema_section.html", {
        "dataset": dataset, "schema": schema,
        "columns": [dict(c, fed_by=fed_by.get(c["name"], [])) for c in schema.listed_columns()] if schema else [],
        "facets": [facets[name] for name in PRODUCER_FACETS if name in facets],
        "ownership": facets.get("ownership"), "documentation": facets.get("documentation"),
        "lifecycle": facets.get("lifecycleStateChange"),
        "aliases": [a for a in aliases if a.dataset_id == dataset.pk],
        "alias_of": [a for a in aliases if a.dataset_id != dataset.pk],
    }, request=request)


@dataset_page_section(order=33)
def quality_section(request: HttpRequest, dataset) -> str:
    """The dataset's quality state (each testing job's latest check, failed
    assertions first) and its recent checks. Two queries."""
    current = list(QualityCheck.objects.filter(dataset_id=dataset.pk).latest_per_job().order_by("-failed_count", "job_name"))
    if not current:
        return ""
    recent = list(QualityCheck.objects.filter(dataset_id=dataset.pk)[:RECENT_CHECKS])
    return render_to_string("lineage/_quality_section.html", {
        "current": current, "recent": recent, "failed": sum(c.failed_count for c in current),
        "api_url": reverse("api-dataset-quality", args=[dataset.pk]),
    }, request=request)


def _annotate_failed_assertions(datasets):
    """The listing's failed assertions: the sum over each testing job's latest check (a subquery)."""
    latest = (QualityCheck.objects.filter(dataset=OuterRef(OuterRef("pk"))).order_by()
              .values("job_namespace", "job_name").annotate(last=Max("id")).values("last"))
    total = (QualityCheck.objects.filter(dataset=OuterRef("pk"), pk__in=latest).order_by()
             .values("dataset").annotate(n=Sum("failed_count")).values("n"))
    return datasets.annotate(failed_assertions=Subquery(total[:1]))


_failed_assertions_badge = count_badge(
    "failed_assertions", "failed check", "bad",
    "Failed data-quality assertions in the latest checks (dbt tests, Great Expectations, Soda)", anchor="data-quality")


dataset_list_badge(_annotate_failed_assertions, _failed_assertions_badge)


@login_required
def dataset_columns(request: HttpRequest, pk: int) -> HttpResponse:
    """The column view: a dataset expanded to its columns, each with the columns that feed
    it and those it feeds (column lineage, both ways, a few hops), every one a link to its
    own dataset's column view, so a reader follows a column from table to table."""
    dataset = get_object_or_404(Dataset, pk=pk)
    try:
        graph = column_lineage(f"dataset:{dataset.namespace}:{dataset.name}", depth=COLUMN_VIEW_DEPTH,
                               with_downstream=True)["graph"]
    except NodeNotFound:
        graph = []
    ids = {(n["data"]["namespace"], n["data"]["dataset"]) for n in graph}
    pks = {(d.namespace, d.name): d.pk for d in Dataset.objects.filter(
        name__in=[name for _, name in ids]).only("pk", "namespace", "name")}
    by_id = {n["id"]: n["data"] for n in graph}

    def column(node_id: str) -> dict:
        data = by_id[node_id]
        other = pks.get((data["namespace"], data["dataset"]))
        url = reverse("lineage-dataset-columns", args=[other]) if other else ""
        return {"dataset": data["dataset"], "field": data["field"], "url": f"{url}#column-{data['field']}" if url else "",
                "here": other == dataset.pk}

    columns = [{"field": n["data"]["field"], "type": n["data"]["fieldType"],
                "fed_by": [column(e["origin"]) for e in n["inEdges"]],
                "feeds": [column(e["destination"]) for e in n["outEdges"]]}
               for n in graph if pks.get((n["data"]["namespace"], n["data"]["dataset"])) == dataset.pk]
    return render(request, "lineage/dataset_columns.html", {"dataset": dataset, "columns": columns})

"""Marquez's read API: thin DRF views over lineage.marquez.reads.

Read with a bearer token (any usable token, read-only ones too) or a session,
as the rest of the API. Errors are the API's JSON ({"detail", "code"}): 400
for a bad parameter, 404 for a name never seen. The endpoints are left out of
the registry's own OpenAPI document: their contract is Marquez's
(docs/lineage.md).
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from typing import Any

from django.utils.dateparse import parse_datetime
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lineage.marquez import reads
from lineage.marquez.paths import route

MAX_LIMIT = 10_000


class BadParameter(exceptions.ParseError):
    default_code = "bad_request"


class NotFound(exceptions.NotFound):
    default_code = "not_found"


def _whole(params, name: str, default: int, *, maximum: int | None = None) -> int:
    raw = params.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError:
        raise BadParameter(f"{name} must be a whole number, not {raw!r}.") from None
    if value < 0 or (maximum is not None and value > maximum):
        bound = f"from 0 to {maximum}" if maximum is not None else "0 or more"
        raise BadParameter(f"{name} must be {bound}, not {value}.")
    return value


def page_of(request: Request) -> reads.Page:
    """Marquez's limit (default 100) and offset (default 0)."""
    params = request.query_params
    return reads.Page(limit=_whole(params, "limit", 100, maximum=MAX_LIMIT), offset=_whole(params, "offset", 0))


def _moment(params, name: str, *, day_only: bool = False) -> datetime | None:
    """A date-time parameter (an ISO date counts as its midnight, UTC)."""
    raw = params.get(name)
    if not raw:
        return None
    moment = None if day_only else parse_datetime(raw)
    if moment is None:
        try:
            moment = datetime.combine(date.fromisoformat(raw), time.min)
        except ValueError:
            form = "YYYY-MM-DD" if day_only else "an ISO 8601 date-time or YYYY-MM-DD"
            raise BadParameter(f"{name} must be {form}, not {raw!r}.") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _answer(read, *args: Any, **kwargs: Any) -> Response:
    try:
        return Response(read(*args, **kwargs))
    except reads.Missing as missing:
        raise NotFound(str(missing)) from None


@extend_schema(exclude=True)
class NamespaceList(APIView):
    def get(self, request: Request) -> Response:
        return _answer(reads.namespaces, page_of(request))


@extend_schema(exclude=True)
class NamespaceTree(APIView):
    """/namespaces/{namespace}[/datasets[/{dataset}[/versions[/{version}]]] | /jobs[/{job}[/runs | /versions[/{version}]]]]"""

    def get(self, request: Request, rest: str) -> Response:
        where = route(rest)
        if where.resource == "namespace":
            return _answer(reads.namespace, where.namespace)
        if where.resource == "datasets":
            return _answer(reads.datasets, where.namespace, page_of(request))
        if where.resource == "dataset":
            return _answer(reads.dataset, where.namespace, where.name)
        if where.resource == "dataset_versions":
            return _answer(reads.dataset_versions, where.namespace, where.name, page_of(request))
        if where.resource == "dataset_version":
            return _answer(reads.dataset_version, where.namespace, where.name, where.version)
        if where.resource == "jobs":
            return _answer(reads.jobs, where.namespace, page_of(request))
        if where.resource == "job":
            return _answer(reads.job, where.namespace, where.name)
        if where.resource == "job_versions":
            return _answer(reads.job_versions, where.namespace, where.name, page_of(request))
        if where.resource == "job_version":
            return _answer(reads.job_version, where.namespace, where.name, where.version)
        return _answer(reads.job_runs, where.namespace, where.name, page_of(request))


@extend_schema(exclude=True)
class RunDetail(APIView):
    def get(self, request: Request, run_id: str) -> Response:
        return _answer(reads.run, run_id)


@extend_schema(exclude=True)
class RunFacets(APIView):
    def get(self, request: Request, run_id: str) -> Response:
        kind = request.query_params.get("type", "run")
        if kind not in reads.FACET_SCHEMAS:
            raise BadParameter(f"type must be run or job, not {kind!r}.")
        return _answer(reads.run_facets, run_id, kind, producer=request.build_absolute_uri("/"))


@extend_schema(exclude=True)
class Search(APIView):
    def get(self, request: Request) -> Response:
        params = request.query_params
        query = params.get("q", "")
        if not query:
            raise BadParameter("Send q=<pattern> (% matches any characters, _ one).")
        kind = params.get("filter") or None
        if kind is not None:
            kind = kind.lower()
            if kind not in reads.SEARCH_FILTERS:
                raise BadParameter(f"filter must be dataset or job, not {params['filter']!r}.")
        sort = (params.get("sort") or "name").lower()
        if sort not in reads.SEARCH_SORTS:
            raise BadParameter(f"sort must be name or updated_at, not {params['sort']!r}.")
        return _answer(reads.search, query, kind=kind, sort=sort,
                       limit=_whole(params, "limit", 100, maximum=MAX_LIMIT),
                       namespace=params.get("namespace") or None,
                       before=_moment(params, "before", day_only=True), after=_moment(params, "after", day_only=True))


@extend_schema(exclude=True)
class LineageEvents(APIView):
    """/events/lineage, and marquez-python's /events and /events/{namespace} (its jobs' events)."""

    def get(self, request: Request, namespace: str | None = None) -> Response:
        params = request.query_params
        direction = (params.get("sortDirection") or "desc").lower()
        if direction not in ("asc", "desc"):
            raise BadParameter(f"sortDirection must be asc or desc, not {params['sortDirection']!r}.")
        return _answer(reads.events, page=page_of(request), ascending=direction == "asc",
                       before=_moment(params, "before"), after=_moment(params, "after"), namespace=namespace)


@extend_schema(exclude=True)
class SourceList(APIView):
    def get(self, request: Request) -> Response:
        return _answer(reads.sources, page_of(request))


@extend_schema(exclude=True)
class SourceDetail(APIView):
    def get(self, request: Request, name: str) -> Response:
        return _answer(reads.source, name)


@extend_schema(exclude=True)
class TagList(APIView):
    def get(self, request: Request) -> Response:
        return _answer(reads.tags, page_of(request))


@extend_schema(exclude=True)
class RunLineageUpstream(APIView):
    def get(self, request: Request) -> Response:
        run_id = request.query_params.get("runId")
        if not run_id:
            raise BadParameter("Send runId=<uuid>: the run whose upstream runs to list.")
        depth = _whole(request.query_params, "depth", reads.RUN_LINEAGE_DEPTH, maximum=reads.RUN_LINEAGE_MAX_DEPTH)
        return _answer(reads.run_lineage_upstream, run_id, depth)

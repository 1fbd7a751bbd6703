"""Lineage test helpers: RunEvents as pipelines send them, and tokens."""

from __future__ import annotations

import gzip
import json
import os
import uuid
from pathlib import Path

import pytest
from django.conf import settings

from registry.models import ApiToken


def _openlineage_dir() -> Path:
    """../shared/openlineage next to the repository (CI), or next to a parent
    folder of it (a worktree); OPENLINEAGE_SHARED_DIR overrides both."""
    if os.environ.get("OPENLINEAGE_SHARED_DIR"):
        return Path(os.environ["OPENLINEAGE_SHARED_DIR"])
    for parent in Path(settings.BASE_DIR).parents:
        candidate = parent / "shared" / "openlineage"
        if candidate.is_dir():
            return candidate
    return Path(settings.BASE_DIR).parent / "shared" / "openlineage"


OPENLINEAGE_DIR = _openlineage_dir()
PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.20.0/client/python"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"
FACET_BASE = {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json"}

WAREHOUSE = "postgres://warehouse:5432"


def schema_facet(*fields: tuple[str, str]) -> dict:
    return {**FACET_BASE, "fields": [{"name": n, "type": t} for n, t in fields]}


def dataset(name: str, namespace: str = WAREHOUSE, **facets) -> dict:
    out = {"namespace": namespace, "name": name}
    if facets:
        out["facets"] = facets
    return out


def run_event(event_type: str = "START", *, run_id: str | None = None, job: str = "etl.load_orders",
              inputs=(), outputs=(), event_time: str = "2026-11-30T01:00:00.000Z", row_count: int | None = None,
              job_facets: dict | None = None, job_namespace: str = "airflow") -> dict:
    event = {
        "eventType": event_type,
        "eventTime": event_time,
        "producer": PRODUCER,
        "schemaURL": SCHEMA_URL,
        "run": {"runId": run_id or str(uuid.uuid4())},
        "job": {"namespace": job_namespace, "name": job},
        "inputs": [dataset(n) if isinstance(n, str) else n for n in inputs],
        "outputs": [dataset(n) if isinstance(n, str) else n for n in outputs],
    }
    if job_facets:
        event["job"]["facets"] = job_facets
    if row_count is not None:
        for out in event["outputs"]:
            out["outputFacets"] = {"outputStatistics": {
                "_producer": PRODUCER,
                "_schemaURL": "https://openlineage.io/spec/facets/1-0-2/OutputStatisticsOutputDatasetFacet.json",
                "rowCount": row_count}}
    return event


def sql_facet(query: str, dialect: str | None = None) -> dict:
    facet = {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-1-0/SQLJobFacet.json",
             "query": query}
    if dialect:
        facet["dialect"] = dialect
    return facet


def input_field(name: str, field: str, *kinds: str, namespace: str = WAREHOUSE) -> dict:
    """One entry of columnLineage's inputFields (or its dataset list); kinds like "DIRECT/IDENTITY"."""
    entry = {"namespace": namespace, "name": name, "field": field}
    if kinds:
        entry["transformations"] = [dict(zip(("type", "subtype"), kind.split("/"), strict=False)) for kind in kinds]
    return entry


def column_lineage_facet(fields: dict[str, list[dict]], dataset_level: list[dict] | None = None) -> dict:
    facet = {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json",
             "fields": {name: {"inputFields": inputs} for name, inputs in fields.items()}}
    if dataset_level is not None:
        facet["dataset"] = dataset_level
    return facet


def shared_event(file_name: str) -> dict:
    """An event from ../shared/openlineage/events, read in place, with the
    `producer` and `schemaURL` that older producers left out (2-0-2 requires them)."""
    event = json.loads((OPENLINEAGE_DIR / "events" / file_name).read_text())
    event.setdefault("producer", PRODUCER)
    event.setdefault("schemaURL", SCHEMA_URL)
    return event


def post(client, body, secret: str | None, *, path: str = "/api/v1/lineage", compress: bool = False, raw: bytes | None = None):
    data = raw if raw is not None else json.dumps(body).encode()
    headers = {}
    if secret is not None:
        headers["HTTP_AUTHORIZATION"] = f"Bearer {secret}"
    if compress:
        data = gzip.compress(data)
        headers["HTTP_CONTENT_ENCODING"] = "gzip"
    return client.generic("POST", path, data, content_type="application/json", **headers)


@pytest.fixture
def lineage_secret(owner_team) -> str:
    """A Checkout team token allowed to write lineage (what a pipeline holds)."""
    return ApiToken.issue("airflow", team=owner_team)[1]


@pytest.fixture
def read_only_secret(owner_team) -> str:
    return ApiToken.issue("dashboards", team=owner_team, scopes=["read"])[1]

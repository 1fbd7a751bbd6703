"""The embedded demo (SQLite) ingests through the same views and rules as PostgreSQL."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import json, uuid
from django.test import Client
from django.test.utils import setup_test_environment
setup_test_environment()
from lineage.models import JobDataset, Run, RunEvent
from registry.models import ApiToken, AuditEvent, Dataset, Team

team = Team.objects.create(slug="pipelines", name="Pipelines")
_, secret = ApiToken.issue("ingest", team=team)
_, reader = ApiToken.issue("reader", team=team, scopes=["read"])
client = Client()

def post(event, token=secret):
    return client.post("/api/v1/lineage", json.dumps(event), content_type="application/json",
                       HTTP_AUTHORIZATION=f"Bearer {token}").status_code

run_id = str(uuid.uuid4())
def event(kind):
    return {"eventType": kind, "eventTime": "2026-11-30T01:00:00Z", "producer": "https://example.com/p",
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": run_id}, "job": {"namespace": "airflow", "name": "load"},
            "inputs": [{"namespace": "demo://", "name": "raw"}], "outputs": [{"namespace": "demo://", "name": "mart"}]}

codes = [post(event("START")), post(event("COMPLETE")), post(event("COMPLETE")),
         post(event("COMPLETE"), token="nope"), post(event("COMPLETE"), token=reader), post({"eventType": "START"})]
counts = {"codes": codes, "events": RunEvent.objects.count(), "state": Run.objects.get().state,
          "edges": JobDataset.objects.count(), "datasets": Dataset.objects.count(),
          "first_seen": AuditEvent.objects.filter(action="dataset.first_seen").count()}

# Column usage: columnLineage for one input, SQL for another, a schema, twice (the upserts).
from lineage.models import DatasetSchema, FieldEdge
from registry.usage import ColumnRead
facet = {"_producer": "https://example.com/p", "_schemaURL": "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json",
         "fields": {"id": {"inputFields": [{"namespace": "demo://", "name": "raw", "field": "id"}]}}}
schema = {"_producer": "https://example.com/p", "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
          "fields": [{"name": "id", "type": "int"}]}
for attempt in range(2):
    rich = event("COMPLETE")
    rich["run"] = {"runId": str(uuid.uuid4())}
    rich["inputs"].append({"namespace": "demo://", "name": "lookup"})
    rich["outputs"][0]["facets"] = {"columnLineage": facet, "schema": schema}
    rich["job"]["facets"] = {"sql": {"_producer": "https://example.com/p", "_schemaURL": "https://openlineage.io/spec/facets/1-1-0/SQLJobFacet.json",
                                     "query": "select r.id from raw r join lookup l on l.code = r.code"}}
    codes.append(post(rich))
counts["reads"] = sorted(ColumnRead.objects.values_list("dataset__name", "column", "kind", "source"))
counts["field_edges"] = FieldEdge.objects.count()
counts["schemas"] = DatasetSchema.objects.count()
from lineage.column_graph import column_lineage
graph = column_lineage("datasetField:demo://:mart:id", with_downstream=True)["graph"]
counts["column_graph"] = [[n["id"], n["data"]["fieldType"], [e["origin"] for e in n["inEdges"]]] for n in graph]

# DatasetEvents and JobEvents, and the facets kept from them and from a dbt-like test run.
from lineage.models import DatasetAlias, DatasetFacet, DeclaredEdge, QualityCheck
base = {"_producer": "https://example.com/p", "_schemaURL": "https://example.com/s"}
static = {"eventTime": "2026-11-30T02:00:00Z", "producer": "https://example.com/p",
          "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/DatasetEvent",
          "dataset": {"namespace": "demo://", "name": "mart", "facets": {
              "ownership": {**base, "owners": [{"name": "team:pipelines"}]},
              "symlinks": {**base, "identifiers": [{"namespace": "hive://", "name": "mart", "type": "TABLE"}]}}}}
job = {"eventTime": "2026-11-30T02:00:00Z", "producer": "https://example.com/p",
       "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/JobEvent",
       "job": {"namespace": "airflow", "name": "declared"}, "inputs": [{"namespace": "hive://", "name": "mart"}], "outputs": []}
tested = event("COMPLETE")
tested["run"] = {"runId": str(uuid.uuid4())}
tested["inputs"][0]["inputFacets"] = {"dataQualityAssertions": {**base, "assertions": [{"assertion": "unique", "success": False}]}}
counts["static"] = [post(static), post(static), post(job), post(tested)]
counts["kept"] = [DatasetFacet.objects.count(), DatasetAlias.objects.count(), QualityCheck.objects.get().failed_count,
                  list(DeclaredEdge.objects.values_list("dataset__name", "direction"))]
print(json.dumps(counts))
"""


@pytest.mark.slow
def test_the_sqlite_demo_stores_events_refuses_bad_tokens_and_ignores_retries(tmp_path):
    env = {**os.environ, "DEBUG": "1", "DATABASE_URL": f"sqlite:///{tmp_path / 'demo.sqlite3'}",
           "DJANGO_SETTINGS_MODULE": "registry.settings", "CELERY_BROKER_URL": ""}
    env.pop("TEST_DATABASE_URL", None)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True, capture_output=True)
    out = subprocess.run([sys.executable, "manage.py", "shell", "-c", SCRIPT], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True)
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result == {"codes": [201, 201, 201, 401, 403, 422, 201, 201], "events": 2, "state": "COMPLETE", "edges": 2,
                      "datasets": 2, "first_seen": 2,
                      "reads": [["lookup", "code", "INDIRECT", "sql"], ["raw", "", "DIRECT", "input"], ["raw", "code", "INDIRECT", "sql"],
                                ["raw", "id", "DIRECT", "column_lineage"]],
                      # raw.id feeds mart.id; the join keys steer it (INDIRECT JOIN edges).
                      "field_edges": 3, "schemas": 1,
                      "column_graph": [["datasetField:demo://:lookup:code", None, []],
                                       ["datasetField:demo://:mart:id", "int", ["datasetField:demo://:lookup:code",
                                                                                 "datasetField:demo://:raw:code",
                                                                                 "datasetField:demo://:raw:id"]],
                                       ["datasetField:demo://:raw:code", None, []],
                                       ["datasetField:demo://:raw:id", None, []]],
                      # the alias resolves: the JobEvent's hive:// input is the demo:// dataset
                      "static": [201, 201, 201, 201], "kept": [2, 1, 1, [["mart", "in"]]]}

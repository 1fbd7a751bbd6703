"""Marquez's read API on the embedded demo (SQLite): the same answers, the
graph's payload taken from the endpoints' reads instead of one statement."""

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
from registry.models import ApiToken, Team

team = Team.objects.create(slug="pipelines", name="Pipelines")
_, secret = ApiToken.issue("ingest", team=team)
client = Client(HTTP_AUTHORIZATION=f"Bearer {secret}")
schema = {"_producer": "https://example.com/p", "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
          "fields": [{"name": "id", "type": "int"}]}
base = {"_producer": "https://example.com/p", "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/Facet.json"}
tags = {**base, "tags": [{"key": "PII", "value": "true", "source": "CONFIG"}]}
source = {**base, "name": "demo", "uri": "demo://"}
lineage = {**base, "fields": {"id": {"inputFields": [{"namespace": "demo://", "name": "raw", "field": "id"}]}}}
run_id = str(uuid.uuid4())
for kind in ("START", "COMPLETE"):
    event = {"eventType": kind, "eventTime": "2026-11-30T01:00:00Z", "producer": "https://example.com/p",
             "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
             "run": {"runId": run_id}, "job": {"namespace": "airflow", "name": "load"},
             "inputs": [{"namespace": "demo://", "name": "raw"}],
             "outputs": [{"namespace": "demo://", "name": "mart", "facets": {"schema": schema, "tags": tags,
                                                                              "dataSource": source, "columnLineage": lineage}}]}
    client.post("/api/v1/lineage", json.dumps(event), content_type="application/json")

def get(path, **params):
    response = client.get("/api/v1" + path, params)
    assert response.status_code == 200, (path, response.content)
    return response.json()

graph = get("/lineage/", nodeId="dataset:demo://:raw", depth=2)["graph"]
mart = get("/namespaces/demo%3A%2F%2F/datasets/mart")
print(json.dumps({
    "namespaces": [n["name"] for n in get("/namespaces")["namespaces"]],
    "datasets": [d["name"] for d in get("/namespaces/demo%3A%2F%2F/datasets")["datasets"]],
    "mart": [mart["fields"], mart["currentVersion"] == run_id, "lastModifiedAt" in mart],
    "versions": get("/namespaces/demo%3A%2F%2F/datasets/mart/versions")["totalCount"],
    "job": [get("/namespaces/airflow/jobs/load")["latestRun"]["state"], get("/namespaces/airflow/jobs")["totalCount"]],
    "run": get(f"/jobs/runs/{run_id}")["outputDatasetVersions"][0]["datasetVersionId"]["version"] == run_id,
    "graph": [[n["id"], n["data"]["type"], len(n["inEdges"]), len(n["outEdges"])] for n in graph],
    "graph_fields": [n["data"].get("fields") for n in graph if n["type"] == "DATASET"],
    "search": sorted(r["nodeId"] for r in get("/search", q="%a%", sort="updated_at")["results"]),
    "events": get("/events/lineage")["totalCount"],
    "tags": get("/tags")["tags"], "sources": [x["name"] for x in get("/sources/")["sources"]],
    "job_versions": get("/namespaces/airflow/jobs/load/versions")["totalCount"],
    "run_lineage": [r["job"]["name"] for r in get("/runlineage/upstream", runId=run_id)["runs"]],
    "column_lineage": [n["id"] for n in get("/column-lineage/", nodeId="job:airflow:load")["graph"]],
}))
"""


@pytest.mark.slow
def test_the_sqlite_demo_answers_marquez_read_api(tmp_path):
    env = {**os.environ, "DEBUG": "1", "DATABASE_URL": f"sqlite:///{tmp_path / 'demo.sqlite3'}",
           "DJANGO_SETTINGS_MODULE": "registry.settings", "CELERY_BROKER_URL": ""}
    env.pop("TEST_DATABASE_URL", None)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True, capture_output=True)
    out = subprocess.run([sys.executable, "manage.py", "shell", "-c", SCRIPT], cwd=ROOT, env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result == {
        "namespaces": ["airflow", "demo://"], "datasets": ["mart", "raw"],
        "mart": [[{"name": "id", "type": "int", "tags": []}], True, True], "versions": 1,
        "job": ["COMPLETED", 1], "run": True,
        "graph": [["dataset:demo://:mart", "DATASET", 1, 0], ["dataset:demo://:raw", "DATASET", 0, 1],
                  ["job:airflow:load", "JOB", 1, 1]],
        "graph_fields": [[{"name": "id", "type": "int", "tags": []}], []],
        "search": ["dataset:demo://:mart", "dataset:demo://:raw", "job:airflow:load"],
        "events": 2,
        "tags": [{"name": "PII"}], "sources": ["demo"], "job_versions": 1, "run_lineage": ["load"],
        "column_lineage": ["datasetField:demo://:mart:id", "datasetField:demo://:raw:id"],
    }

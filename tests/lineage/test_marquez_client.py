"""Marquez's own Python client (marquez-python 0.50.0) against a live server,
with a bearer token: what a tool built on Marquez does."""

from __future__ import annotations

import json

import pytest
from marquez_client import MarquezClient, errors
from marquez_client import client as marquez_client_module

from lineage.ingest import store_event
from lineage.models import Run

from .conftest import WAREHOUSE, run_event, schema_facet
from .marquez_tool import read_with_marquez_python


@pytest.fixture
def marquez(live_server, read_only_secret):
    """A MarquezClient pointed at the live server with a read-only team token
    (the client sends it as 'Authorization: Bearer …' from a module-level dict,
    put back afterwards so no other test inherits it)."""
    headers = dict(marquez_client_module._HEADERS)
    yield MarquezClient(url=live_server.url, api_key=read_only_secret)
    marquez_client_module._HEADERS.clear()
    marquez_client_module._HEADERS.update(headers)


@pytest.mark.django_db(transaction=True)
def test_marquez_python_lists_and_reads_namespaces_datasets_jobs_and_runs(marquez):
    store_event(run_event("COMPLETE", job="checkout.load_orders", inputs=["raw.orders"],
                          outputs=[{"namespace": WAREHOUSE, "name": "stage.orders",
                                    "facets": {"schema": schema_facet(("order_id", "BIGINT"))}}]))
    run = Run.objects.get()

    assert [n["name"] for n in marquez.list_namespaces()["namespaces"]] == ["airflow", WAREHOUSE]
    assert marquez.get_namespace(WAREHOUSE)["name"] == WAREHOUSE
    datasets = marquez.list_datasets(WAREHOUSE)
    assert [d["name"] for d in datasets["datasets"]] == ["raw.orders", "stage.orders"]
    assert datasets["totalCount"] == 2
    stage = marquez.get_dataset(WAREHOUSE, "stage.orders")
    assert stage["fields"] == [{"name": "order_id", "type": "BIGINT", "tags": []}]
    assert stage["currentVersion"] == str(run.run_uuid)
    assert marquez.list_dataset_versions(WAREHOUSE, "stage.orders")["versions"][0]["version"] == str(run.run_uuid)
    assert [j["name"] for j in marquez.list_jobs("airflow")["jobs"]] == ["checkout.load_orders"]
    job = marquez.get_job("airflow", "checkout.load_orders")
    assert job["outputs"] == [{"namespace": WAREHOUSE, "name": "stage.orders"}]
    assert job["latestRun"]["state"] == "COMPLETED"
    assert marquez.list_job_runs("airflow", "checkout.load_orders")["runs"][0]["id"] == str(run.run_uuid)
    assert marquez.get_job_run(str(run.run_uuid))["state"] == "COMPLETED"


@pytest.mark.django_db(transaction=True)
def test_marquez_python_sees_an_api_error_for_a_dataset_never_seen(marquez):
    with pytest.raises(errors.APIError) as raised:
        marquez.get_dataset(WAREHOUSE, "nothing")
    assert raised.value.__cause__.response.status_code == 404
    assert raised.value.__cause__.response.json()["code"] == "not_found"


# --- every read call of marquez-python, from its own virtualenv ---------------------

def _document_path(call: str, args: list) -> str:
    """The path of Marquez's OpenAPI document that a marquez-python call reads."""
    ns = "/namespaces/{ns}"
    return {
        "list_namespaces": "/namespaces", "get_namespace": ns, "list_sources": "/sources",
        "get_source": "/sources/{source}", "list_datasets": f"{ns}/datasets", "get_dataset": f"{ns}/datasets/{{d}}",
        "list_dataset_versions": f"{ns}/datasets/{{d}}/versions",
        "get_dataset_version": f"{ns}/datasets/{{d}}/versions/{{v}}", "list_jobs": f"{ns}/jobs",
        "get_job": f"{ns}/jobs/{{j}}", "list_job_runs": f"{ns}/jobs/{{j}}/runs", "get_job_run": "/jobs/runs/{id}",
        "get_column_lineage_by_dataset": "/column-lineage", "get_column_lineage_by_dataset_field": "/column-lineage",
        "get_column_lineage_by_job": "/column-lineage", "list_tags": "/tags", "list_events": "/events/lineage",
    }[call]


def _validate(call: str, args: list, answer: dict) -> None:
    """`answer` against Marquez's document, at the path the call reads (with
    placeholder segments: openapi-core matches the template)."""
    from openapi_core.testing import MockRequest, MockResponse

    from .test_marquez_api import MARQUEZ

    path = "/api/v1" + _document_path(call, args).replace("{ns}", "n").replace("{d}", "d").replace(
        "{j}", "j").replace("{v}", "00000000-0000-0000-0000-000000000000").replace("{id}", "00000000-0000-0000-0000-000000000000").replace("{source}", "s")
    MARQUEZ.validate_response(MockRequest("http://localhost:5000", "get", path),
                              MockResponse(json.dumps(answer).encode(), status_code=200, content_type="application/json"))


@pytest.mark.django_db(transaction=True)
def test_every_read_call_of_marquez_python_answers_in_marquez_shape(live_server, read_only_secret):
    from .conftest import PRODUCER, column_lineage_facet, input_field

    facet = {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/TagsDatasetFacet.json"}
    source = {**facet, "_schemaURL": "https://openlineage.io/spec/facets/1-0-0/DatasourceDatasetFacet.json",
              "name": "warehouse", "uri": WAREHOUSE}
    store_event(run_event("COMPLETE", job="checkout.load_orders", inputs=["raw.orders"], outputs=[{
        "namespace": WAREHOUSE, "name": "stage.orders",
        "facets": {"schema": schema_facet(("order_id", "BIGINT")), "dataSource": source,
                   "tags": {**facet, "tags": [{"key": "PII", "value": "true", "source": "CONFIG"}]},
                   "columnLineage": column_lineage_facet({"order_id": [input_field("raw.orders", "id", "DIRECT/IDENTITY")]})},
    }]))
    run = str(Run.objects.get().run_uuid)
    calls = [
        ("list_namespaces", [], {}), ("get_namespace", [WAREHOUSE], {}),
        ("list_sources", [], {}), ("get_source", ["warehouse"], {}),
        ("list_datasets", [WAREHOUSE], {}), ("get_dataset", [WAREHOUSE, "stage.orders"], {}),
        ("list_dataset_versions", [WAREHOUSE, "stage.orders"], {}),
        ("get_dataset_version", [WAREHOUSE, "stage.orders", run], {}),
        ("list_jobs", ["airflow"], {}), ("get_job", ["airflow", "checkout.load_orders"], {}),
        ("list_job_runs", ["airflow", "checkout.load_orders"], {}), ("get_job_run", [run], {}),
        ("get_column_lineage_by_dataset", [WAREHOUSE, "stage.orders"], {}),
        ("get_column_lineage_by_dataset_field", [WAREHOUSE, "stage.orders", "order_id"], {"with_downstream": True}),
        ("get_column_lineage_by_job", ["airflow", "checkout.load_orders"], {}),
        ("list_tags", [], {}), ("list_events", [], {}), ("list_events", ["airflow"], {}),
    ]
    results = read_with_marquez_python(live_server.url, read_only_secret, [list(c) for c in calls])
    assert [r for r in results if "answer" not in r] == []
    answers = {r["call"]: r["answer"] for r in results}
    for (call, args, _), result in zip(calls, results, strict=True):
        _validate(call, args, result["answer"])
    assert [s["name"] for s in answers["list_sources"]["sources"]] == ["warehouse"]
    assert answers["get_source"]["connectionUrl"] == WAREHOUSE
    assert answers["list_tags"]["tags"] == [{"name": "PII"}]
    assert [n["id"] for n in answers["get_column_lineage_by_job"]["graph"]] == [
        f"datasetField:{WAREHOUSE}:raw.orders:id", f"datasetField:{WAREHOUSE}:stage.orders:order_id"]
    assert answers["get_dataset_version"]["version"] == run
    assert len(answers["list_events"]["events"]) == 1

"""Marquez's own Python client (marquez-python 0.50.0) against a live server,
with a bearer token: what a tool built on Marquez does."""

from __future__ import annotations

import pytest
from marquez_client import MarquezClient, errors
from marquez_client import client as marquez_client_module

from lineage.ingest import store_event
from lineage.models import Run

from .conftest import WAREHOUSE, run_event, schema_facet


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

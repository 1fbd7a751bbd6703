"""The official openlineage-python client, HTTP transport with api_key auth and
gzip, against a live server: what a real pipeline does."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest
from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import output_statistics_output_dataset, schema_dataset
from openlineage.client.transport.http import HttpConfig, HttpTransport

from contracts_app.models import Contract, ContractVersion, DatasetBinding, SchemaDriftCheck
from lineage.models import JobDataset
from lineage.models import Run as StoredRun
from lineage.models import RunEvent as StoredEvent
from registry.models import Dataset

from .conftest import WAREHOUSE

PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python"


def events(run_id: str) -> list[RunEvent]:
    schema = schema_dataset.SchemaDatasetFacet(fields=[
        schema_dataset.SchemaDatasetFacetFields(name="order_id", type="BIGINT"),
        schema_dataset.SchemaDatasetFacetFields(name="amount", type="VARCHAR"),
    ])
    stats = output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet(rowCount=1200, size=53_000)
    job = Job(namespace="airflow", name="checkout.load_orders")
    inputs = [InputDataset(namespace=WAREHOUSE, name="raw.orders"), InputDataset(namespace=WAREHOUSE, name="raw.payments")]
    out = OutputDataset(namespace="postgres://retail-db:5432", name="retail.public.orders", facets={"schema": schema},
                        outputFacets={"outputStatistics": stats})
    now = datetime.now(UTC).isoformat()
    return [
        RunEvent(eventType=state, eventTime=now, run=Run(runId=run_id), job=job, inputs=inputs, outputs=[out],
                 producer=PRODUCER)
        for state in (RunState.START, RunState.COMPLETE)
    ]


@pytest.mark.django_db(transaction=True)
def test_the_openlineage_python_client_posts_with_api_key_and_gzip(live_server, lineage_secret, dataset):
    contract = Contract.objects.create(name="retail.checkout.orders", domain="retail", entity="orders", schema_type="dataframe")
    ContractVersion.objects.create(contract=contract, version="1.0", checksum="x", document={
        "schema": {"schema_type": "dataframe"}, "config": {"strict": True},
        "columns": [{"name": "order_id", "dtype": "int64"}, {"name": "amount", "dtype": "float64"}]})
    DatasetBinding.objects.create(dataset=dataset, contract=contract)

    config = HttpConfig.from_dict({
        "type": "http", "url": live_server.url, "endpoint": "api/v1/lineage", "compression": "gzip",
        "auth": {"type": "api_key", "apiKey": lineage_secret}, "retry": {"total": 0},
    })
    client = OpenLineageClient(transport=HttpTransport(config))
    run_id = str(uuid.uuid4())
    for event in events(run_id):
        client.emit(event)
    assert client.transport.compression.value == "gzip"
    client.transport.close()

    assert StoredEvent.objects.count() == 2
    run = StoredRun.objects.get(run_uuid=run_id)
    assert run.state == "COMPLETE" and run.job.name == "checkout.load_orders"
    assert set(JobDataset.objects.values_list("dataset__name", "direction")) == {
        ("raw.orders", "in"), ("raw.payments", "in"), ("retail.public.orders", "out")}
    assert Dataset.objects.get(name="raw.orders").owner_team is None
    # The owned dataset kept its owner, and its contract noticed the string amount.
    dataset.refresh_from_db()
    assert dataset.owner_team is not None
    check = SchemaDriftCheck.objects.get(dataset=dataset)
    assert [(f["kind"], f["field"]) for f in check.findings] == [("type_mismatch", "amount")]


@pytest.mark.django_db(transaction=True)
def test_the_client_sees_an_http_error_for_a_token_that_may_not_write(live_server, read_only_secret):
    import requests

    config = HttpConfig.from_dict({"type": "http", "url": live_server.url, "compression": "gzip",
                                   "auth": {"type": "api_key", "apiKey": read_only_secret}, "retry": {"total": 0}})
    transport = HttpTransport(config)
    with pytest.raises(requests.HTTPError) as raised:
        transport.emit(events(str(uuid.uuid4()))[0])
    assert raised.value.response.status_code == 403
    assert not StoredEvent.objects.exists()

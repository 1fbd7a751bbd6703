"""Golden events from a real `dbt-ol run` and `dbt-ol test` (tests/lineage/golden,
recorded by golden/record_dbt.py), once without a catalog and once after
`dbt docs generate`. No dbt runs here: the tests read the committed files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contracts_app.models import Contract, ContractVersion, DatasetBinding, SchemaDriftCheck
from lineage.models import DatasetFacet, DatasetSchema, QualityCheck
from registry.models import Dataset

from .conftest import post
from .test_drift import dataframe_document

pytestmark = pytest.mark.django_db

GOLDEN = Path(__file__).resolve().parent / "golden"
NAMESPACE = "postgres://127.0.0.1:5432"
STG_ORDERS = "golden_shop.analytics_mart.stg_orders"
TOTALS = "golden_shop.analytics_mart.customer_totals"


def golden(name: str) -> list[dict]:
    return [json.loads(line) for line in (GOLDEN / name).read_text().splitlines() if line.strip()]


@pytest.fixture
def stg_orders_contract(owner_team):
    """stg_orders bound to a contract that requires its five columns, as the warehouse has them."""
    dataset = Dataset.objects.create(namespace=NAMESPACE, name=STG_ORDERS, owner_team=owner_team)
    contract = Contract.objects.create(name="retail.checkout.orders", domain="retail", subdomains=["checkout"],
                                       entity="orders", schema_type="dataframe", owner_team=owner_team)
    columns = [("order_id", "int32", True), ("customer_id", "int32", True), ("status", "str", True),
               ("amount_cents", "int32", True), ("ordered_at", "datetime64[ns]", True)]
    ContractVersion.objects.create(contract=contract, version="1.0", document=dataframe_document("1.0", columns),
                                   checksum="a")
    DatasetBinding.objects.create(dataset=dataset, contract=contract)
    return dataset


def post_all(client, secret, events):
    for event in events:
        response = post(client, event, secret)
        assert response.status_code == 201, response.content


@pytest.mark.parametrize("name", ["dbt_no_catalog.jsonl", "dbt_with_catalog.jsonl"])
def test_every_golden_dbt_event_is_stored(client, lineage_secret, name):
    events = golden(name)
    assert len(events) == 12
    post_all(client, lineage_secret, events)


def test_dbt_without_a_catalog_sends_a_partial_schema_that_drifts_nowhere(client, lineage_secret, stg_orders_contract):
    post_all(client, lineage_secret, golden("dbt_no_catalog.jsonl"))
    schema = DatasetSchema.objects.get(dataset=stg_orders_contract)
    assert schema.fields == {"order_id": "", "status": ""} and not schema.complete
    assert schema.columns[0] == {"name": "order_id", "type": "", "description": "The order's id."}
    findings = SchemaDriftCheck.objects.filter(dataset=stg_orders_contract).latest("event_time").findings
    assert {f["kind"] for f in findings} == {"not_checked"}
    assert not [f for f in findings if f["severity"] == "drift"]
    messages = " ".join(f["message"] for f in findings)
    assert "customer_id, amount_cents, ordered_at" in messages  # the required fields it could not check
    assert "no type for order_id, status" in messages
    assert "None" not in messages


def test_dbt_with_a_catalog_sends_the_whole_table_and_is_compared_in_full(client, lineage_secret, stg_orders_contract):
    post_all(client, lineage_secret, golden("dbt_with_catalog.jsonl"))
    schema = DatasetSchema.objects.get(dataset=stg_orders_contract)
    assert schema.complete and schema.fields == {
        "order_id": "integer", "customer_id": "integer", "status": "text", "amount_cents": "integer",
        "ordered_at": "timestamp without time zone"}
    assert schema.origin == "run" and schema.job.name == "golden_shop.analytics_mart.shop.stg_orders"
    check = SchemaDriftCheck.objects.filter(dataset=stg_orders_contract).latest("event_time")
    assert check.findings == [] and not check.drifted


def test_a_later_run_without_the_catalog_keeps_the_complete_schema(client, lineage_secret, stg_orders_contract):
    post_all(client, lineage_secret, golden("dbt_with_catalog.jsonl"))
    post_all(client, lineage_secret, golden("dbt_no_catalog.jsonl"))
    schema = DatasetSchema.objects.get(dataset=stg_orders_contract)
    assert schema.complete and len(schema.fields) == 5


def test_dbt_tests_become_quality_checks_with_the_failed_assertion_named(client, lineage_secret):
    post_all(client, lineage_secret, golden("dbt_no_catalog.jsonl"))
    stg = QualityCheck.objects.get(dataset__name=STG_ORDERS)
    assert stg.job_name == f"{STG_ORDERS.replace('stg_orders', 'shop.stg_orders')}.test"
    assert stg.event_type == "COMPLETE" and stg.assertion_count == 3 and stg.failed_count == 1
    [failed] = stg.failed_assertions
    assert failed["assertion"] == "accepted_values" and failed["column"] == "status" and failed["severity"] == "warn"
    totals = QualityCheck.objects.get(dataset__name=TOTALS)
    assert totals.assertion_count == 2 and totals.failed_count == 0


def test_dbt_documentation_is_kept_for_the_dataset(client, lineage_secret):
    post_all(client, lineage_secret, golden("dbt_no_catalog.jsonl"))
    doc = DatasetFacet.objects.get(dataset__name=STG_ORDERS, name="documentation")
    assert doc.facet["description"] == "One row per order, renamed from the raw table."
    assert doc.origin == "run" and doc.job_name.endswith("shop.stg_orders")

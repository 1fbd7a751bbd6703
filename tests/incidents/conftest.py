"""The incidents' world: retail.public.orders (Checkout's, consumed by Analytics)
bound to retail.checkout.orders, whose 1.0 declares three checks: order_id not
null and unique, amount within a range. Quality results arrive as dbt-ol sends
them: a test job reading the dataset, its assertions on the input."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.test import TestCase

from contracts_app.models import Contract, ContractVersion, DatasetBinding
from lineage.ingest import store_event

PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/integration/dbt"
T0 = datetime(2026, 12, 1, 6, 0, 0, tzinfo=UTC)
MINUTE = timedelta(minutes=1)


def orders_document(version: str = "1.0") -> dict:
    return {
        "schema": {"name": "retail.checkout.orders", "domain": "retail", "subdomains": ["checkout"],
                   "entity": "orders", "version": version, "owner": "checkout", "schema_type": "dataframe"},
        "config": {"strict": True, "coerce": True},
        "columns": [
            {"name": "order_id", "dtype": "int64", "nullable": False, "unique": True, "required": True, "checks": []},
            {"name": "amount", "dtype": "float64", "nullable": True, "unique": False, "required": True,
             "checks": [{"ge": 0}]},
            {"name": "region", "dtype": "str", "nullable": True, "unique": False, "required": False, "checks": []},
        ],
    }


@pytest.fixture
def contract(dataset, owner_team):
    """retail.checkout.orders 1.0, bound to retail.public.orders."""
    c = Contract.objects.create(name="retail.checkout.orders", domain="retail", subdomains=["checkout"],
                                entity="orders", schema_type="dataframe", owner_team=owner_team)
    ContractVersion.objects.create(contract=c, version="1.0", document=orders_document(), checksum="a")
    DatasetBinding.objects.create(dataset=dataset, contract=c)
    return c


def passed(kind: str, column: str, name: str = "") -> dict:
    return {"assertion": kind, "column": column, "success": True, "name": name or f"{kind}_orders_{column}"}


def failed(kind: str, column: str, name: str = "", actual: str = "3") -> dict:
    return {"assertion": kind, "column": column, "success": False, "name": name or f"{kind}_orders_{column}",
            "actual": actual, "expected": "0"}


def errored(kind: str, column: str) -> dict:
    return {"assertion": kind, "column": column, "name": f"{kind}_orders_{column}"}


ALL_PASS = [passed("not_null", "order_id"), passed("unique", "order_id"), passed("dbt_utils.accepted_range", "amount")]


def test_event(dataset, assertions: list[dict], *, event_type: str = "COMPLETE", run_id: str | None = None,
               at: datetime = T0, job: str = "impact_wh.retail.orders.test") -> dict:
    """What dbt-ol sends for a model's tests: a TEST job reading the dataset, the assertions on the input."""
    return {
        "eventType": event_type, "eventTime": at.isoformat().replace("+00:00", "Z"), "producer": PRODUCER,
        "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
        "run": {"runId": run_id or str(uuid.uuid4())},
        "job": {"namespace": "dbt", "name": job},
        "inputs": [{"namespace": dataset.namespace, "name": dataset.name, "inputFacets": {"dataQualityAssertions": {
            "_producer": PRODUCER,
            "_schemaURL": "https://openlineage.io/spec/facets/1-1-0/DataQualityAssertionsDatasetFacet.json",
            "assertions": assertions}}}],
        "outputs": [],
    }


def report(dataset, assertions: list[dict], **kwargs) -> str:
    """Store a test run's event through the ingest, and let what follows its commit
    happen (the evaluation of its results, without a broker); its run id."""
    event = test_event(dataset, assertions, **kwargs)
    ingest(event)
    return event["run"]["runId"]


def ingest(event: dict) -> None:
    """store_event, then its after-commit work even inside a test's transaction
    (where nothing commits): what a real commit would run."""
    with TestCase.captureOnCommitCallbacks(execute=True):
        store_event(event)


def status_of(dataset):
    from incidents.models import ContractStatus

    return ContractStatus.objects.get(dataset=dataset)

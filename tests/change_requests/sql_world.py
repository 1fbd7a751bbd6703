"""A dataframe contract over a warehouse table, and consumer jobs whose compiled SQL
the lineage saw: what type-checking and verification read.

`retail.public.orders` (Checkout's) is bound to the dataframe contract
`retail.checkout.orders` 1.0; `retail.public.customers` is another table the
consumers join to. Each consumer job is ingested as a real OpenLineage COMPLETE
event: its `sql` facet, its inputs with their schema facets (warehouse types).
"""

from __future__ import annotations

import copy
import uuid

from registry_client.compat import check_compatibility

from contracts_app.publishing import record_version
from lineage.ingest import store_event
from registry.models import Dataset
from registry.usage import NamespaceTeam

WAREHOUSE = "postgres://retail-db:5432"
PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.20.0/client/python"
SCHEMA_URL = "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent"

ORDERS = [("order_id", "bigint"), ("customer_id", "bigint"), ("amount", "numeric"), ("status", "integer"),
          ("placed_at", "timestamp without time zone"), ("paid", "boolean")]
CUSTOMERS = [("id", "bigint"), ("name", "text"), ("segment", "text")]
DTYPES = {"bigint": "int64", "integer": "int32", "numeric": "float64", "timestamp without time zone": "datetime64[ns]",
          "boolean": "bool", "text": "str"}


def orders_document(version: str = "1.0", *, retype: dict[str, str] | None = None, drop: tuple[str, ...] = ()) -> dict:
    """The contract of retail.public.orders; `retype` {column: dtype}, `drop` columns: a proposed version."""
    columns = []
    for name, sql_type in ORDERS:
        if name in drop:
            continue
        columns.append({"name": name, "dtype": (retype or {}).get(name, DTYPES[sql_type]), "nullable": False,
                        "coerce": True, "required": True, "unique": False, "checks": []})
    return {
        "schema": {"name": "retail.checkout.orders", "domain": "retail", "subdomains": ["checkout"],
                   "entity": "orders", "version": version, "owner": "checkout", "schema_type": "dataframe",
                   "description": "Orders as the checkout service writes them."},
        "meta": {},
        "config": {"strict": "filter", "coerce": True, "drop_invalid_rows": False, "ordered": False, "unique": None,
                   "add_missing_columns": False, "unique_column_names": False},
        "columns": columns,
    }


def report_of(document: dict) -> dict:
    return check_compatibility([orders_document()], document, "FULL").to_dict()


def publish_orders(dataset: Dataset, owner) -> None:
    """Version 1.0 recorded and bound to `dataset` (FULL: consumers read new data with old expectations)."""
    version = record_version(orders_document(), by=owner)
    version.contract.bind(dataset, by=owner)
    Dataset.objects.filter(pk=dataset.pk).update(compatibility_mode="FULL")


def _schema(fields) -> dict:
    return {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-1-1/SchemaDatasetFacet.json",
            "fields": [{"name": n, "type": t} for n, t in fields]}


def _input(name: str, fields) -> dict:
    return {"namespace": WAREHOUSE, "name": name, "facets": {"schema": _schema(fields)}}


def job_ran(team, job: str, query: str, *, dialect: str | None = "postgres", reads_customers: bool = False,
            output: str | None = None) -> None:
    """`team`'s job `job` ran `query` over retail.public.orders (and customers): its COMPLETE event, ingested."""
    NamespaceTeam.objects.get_or_create(namespace=team.slug, defaults={"team": team})
    inputs = [_input("retail.public.orders", ORDERS)]
    if reads_customers:
        inputs.append(_input("retail.public.customers", CUSTOMERS))
    facet = {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-1-0/SQLJobFacet.json",
             "query": query}
    if dialect:
        facet["dialect"] = dialect
    store_event({
        "eventType": "COMPLETE", "eventTime": "2026-11-30T01:00:00.000Z", "producer": PRODUCER,
        "schemaURL": SCHEMA_URL, "run": {"runId": str(uuid.uuid4())},
        "job": {"namespace": team.slug, "name": job, "facets": {"sql": facet}},
        "inputs": inputs,
        "outputs": [{"namespace": WAREHOUSE, "name": output or f"marts.{team.slug}.{job}"}],
    })


def job_ran_on(team, job: str, query: str, source: str, fields, *, output: str | None = None) -> None:
    """`team`'s job `job` ran `query` over `source` ({name, type} `fields`), another job's output."""
    NamespaceTeam.objects.get_or_create(namespace=team.slug, defaults={"team": team})
    facet = {"_producer": PRODUCER, "_schemaURL": "https://openlineage.io/spec/facets/1-1-0/SQLJobFacet.json",
             "query": query, "dialect": "postgres"}
    store_event({
        "eventType": "COMPLETE", "eventTime": "2026-11-30T02:00:00.000Z", "producer": PRODUCER,
        "schemaURL": SCHEMA_URL, "run": {"runId": str(uuid.uuid4())},
        "job": {"namespace": team.slug, "name": job, "facets": {"sql": facet}},
        "inputs": [_input(source, fields)],
        "outputs": [{"namespace": WAREHOUSE, "name": output or f"marts.{team.slug}.{job}"}],
    })


def proposed(**changes) -> dict:
    return copy.deepcopy(orders_document("2.0", **changes))

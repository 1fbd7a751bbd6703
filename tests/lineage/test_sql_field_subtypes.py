"""How each input column reaches a result column of a query: unchanged (IDENTITY),
computed (TRANSFORMATION), aggregated (AGGREGATION), and whether only `SELECT *`
passes it on, never naming it (so a column removed upstream silently vanishes)."""

from __future__ import annotations

from lineage.sql_usage import FieldInput, TableRef, sql_reading

ORDERS = TableRef(("raw", "orders"))
SCHEMAS = {ORDERS: ("id", "customer_id", "amount", "status")}


def fields(query: str) -> dict[str, list[FieldInput]]:
    return {name: list(inputs) for name, inputs in sql_reading(query, "postgres", SCHEMAS).fields}


def test_a_named_column_is_an_identity_an_expression_a_transformation_an_aggregate_an_aggregation():
    found = fields("select customer_id as customer, amount * 100 as cents, sum(amount) as total "
                   "from raw.orders group by customer_id")
    assert found["customer"] == [FieldInput(ORDERS, "customer_id", "IDENTITY", False)]
    assert found["cents"] == [FieldInput(ORDERS, "amount", "TRANSFORMATION", False)]
    assert found["total"] == [FieldInput(ORDERS, "amount", "AGGREGATION", False)]


def test_select_star_through_ctes_passes_every_column_on_without_naming_it():
    found = fields("with source as (select * from raw.orders), paid as (select * from source) select * from paid")
    assert found["customer_id"] == [FieldInput(ORDERS, "customer_id", "IDENTITY", True)]


def test_a_column_named_anywhere_on_the_way_is_not_passed_by_star_alone():
    found = fields("with source as (select id, customer_id from raw.orders) select * from source")
    assert found["customer_id"] == [FieldInput(ORDERS, "customer_id", "IDENTITY", False)]
    found = fields("with source as (select * from raw.orders) select customer_id from source")
    assert found["customer_id"] == [FieldInput(ORDERS, "customer_id", "IDENTITY", False)]


def test_steps_compose_an_aggregate_of_an_expression_is_an_aggregation():
    found = fields("with s as (select amount * 2 as doubled from raw.orders) select max(doubled) as top from s")
    assert found["top"] == [FieldInput(ORDERS, "amount", "AGGREGATION", False)]
    found = fields("with s as (select sum(amount) as total from raw.orders) select total from s")
    assert found["total"] == [FieldInput(ORDERS, "amount", "AGGREGATION", False)]

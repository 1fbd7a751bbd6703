"""Warehouse column types -> canonical dtypes (registry_client.warehouse_types): one table for
six dialects, parameterised spellings read sensibly, and a type it cannot map named, never guessed."""

from __future__ import annotations

from pathlib import Path

import pytest
from registry_client.dtypes import CANONICAL_DTYPES
from registry_client.warehouse_types import (
    DIALECTS,
    TYPE_TABLE,
    UnmappableType,
    canonical_dtype,
    dialect_of_adapter,
    dialect_of_namespace,
    markdown_table,
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "drafting-contracts.md"


@pytest.mark.parametrize(("dialect", "spelled", "dtype"), [
    ("postgres", "integer", "int32"), ("postgres", "bigint", "int64"), ("postgres", "double precision", "float64"),
    ("postgres", "varchar(20)", "str"), ("postgres", "character varying(255)", "str"), ("postgres", "numeric(10,2)", "float64"),
    ("postgres", "numeric(12)", "int64"), ("postgres", "timestamp with time zone", "datetime64[ns]"),
    ("postgres", "timestamp(3) without time zone", "datetime64[ns]"), ("postgres", "text[]", "List[str]"),
    ("postgres", "_int4", "List[int64]"), ("postgres", "boolean", "bool"), ("postgres", "uuid", "str"),
    ("snowflake", "NUMBER(38,0)", "int64"), ("snowflake", "NUMBER(18,4)", "float64"), ("snowflake", "VARCHAR(16777216)", "str"),
    ("snowflake", "TIMESTAMP_NTZ(9)", "datetime64[ns]"), ("snowflake", "FLOAT", "float64"), ("snowflake", "INT", "int64"),
    ("bigquery", "INT64", "int64"), ("bigquery", "FLOAT64", "float64"), ("bigquery", "STRING", "str"),
    ("bigquery", "NUMERIC(38, 9)", "float64"), ("bigquery", "ARRAY<STRING>", "List[str]"), ("bigquery", "BOOL", "bool"),
    ("bigquery", "TIMESTAMP", "datetime64[ns]"),
    ("spark", "int", "int32"), ("spark", "float", "float32"), ("spark", "decimal(38,0)", "int64"),
    ("spark", "array<string>", "List[str]"), ("spark", "array<int>", "List[int64]"), ("spark", "array<double>", "List[float64]"),
    ("spark", "timestamp_ntz", "datetime64[ns]"),
    ("duckdb", "INTEGER", "int32"), ("duckdb", "FLOAT", "float32"), ("duckdb", "DOUBLE", "float64"),
    ("duckdb", "VARCHAR[]", "List[str]"), ("duckdb", "TIMESTAMP WITH TIME ZONE", "datetime64[ns]"),
    ("trino", "varchar(32)", "str"), ("trino", "real", "float32"), ("trino", "array(bigint)", "List[int64]"),
    ("trino", "timestamp(6) with time zone", "datetime64[ns]"), ("trino", "decimal(10,2)", "float64"),
])
def test_each_dialect_maps_its_spellings_onto_canonical_dtypes(dialect, spelled, dtype):
    assert canonical_dtype(spelled, dialect) == dtype


@pytest.mark.parametrize(("dialect", "spelled", "why"), [
    ("postgres", "jsonb", "a JSON document has no column dtype"),
    ("snowflake", "VARIANT", "a VARIANT has no single dtype"),
    ("bigquery", "STRUCT<a INT64>", "a struct has no column dtype"),
    ("spark", "map<string,int>", "a map has no column dtype"),
    ("duckdb", "HUGEINT", "a 128-bit integer does not fit int64"),
    ("trino", "time(3)", "the vocabulary has no time-of-day dtype"),
    ("postgres", "bytea", "the vocabulary has no binary dtype"),
    ("bigquery", "GEOGRAPHY", "the vocabulary has no spatial dtype"),
    ("spark", "array<timestamp>", "lists of datetime64[ns] are not in the vocabulary"),
    ("bigquery", "INTEGER", "bigquery has no integer type in the table"),  # legacy SQL's name: not guessed
    ("postgres", "frobnicate", "it is not in the type table"),
    ("postgres", "", "the warehouse gave no type"),
])
def test_a_type_it_cannot_map_is_named_in_a_clear_error(dialect, spelled, why):
    with pytest.raises(UnmappableType) as caught:
        canonical_dtype(spelled, dialect, where="column 'x' of shop.orders")
    message = str(caught.value)
    assert message.startswith(f"column 'x' of shop.orders: {dialect} type {spelled!r} has no canonical dtype ({why}")
    assert "nothing was guessed" in message


def test_every_entry_of_the_table_is_canonical_and_names_a_known_dialect():
    for name, row in TYPE_TABLE.items():
        assert name == name.lower().strip()
        assert set(row) <= set(DIALECTS), name
        assert set(row.values()) <= set(CANONICAL_DTYPES), name


def test_an_unknown_dialect_is_refused():
    with pytest.raises(ValueError, match="unknown dialect 'oracle'"):
        canonical_dtype("number", "oracle")


def test_adapters_and_namespaces_name_their_dialect():
    assert dialect_of_adapter("databricks") == "spark" and dialect_of_adapter("postgres") == "postgres"
    assert dialect_of_adapter("redshift") is None
    assert dialect_of_namespace("postgres://127.0.0.1:5432") == "postgres"
    assert dialect_of_namespace("snowflake://acme-xy123") == "snowflake"
    assert dialect_of_namespace("bigquery") == "bigquery"
    assert dialect_of_namespace("kafka://broker:9092") is None


def test_the_docs_print_the_same_table_as_the_code():
    assert markdown_table() in DOCS.read_text(encoding="utf-8")

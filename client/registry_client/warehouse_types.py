"""Warehouse column types -> canonical dtypes, for drafting contracts from what a
warehouse reports (a lineage schema facet, dbt's catalog.json, a dbt model contract).

`TYPE_TABLE` is the one table: each row is a base type name (lower case, without
its parameters) and what it means in each dialect; a dialect that has no such type
(or where it means something the vocabulary cannot hold) has no entry. The same
table is printed in docs/drafting-contracts.md (a test keeps the two equal).

How a spelling is read (`canonical_dtype`):

1. lower-cased, with runs of whitespace folded to one space;
2. lists: `array<T>` (Spark, BigQuery, DuckDB's `T[]`, PostgreSQL's `T[]` and
   `_T`, Trino's `array(T)`) become `List[<T's dtype>]`; the vocabulary lists only
   str, int64, float64 and bool, so int32 and float32 elements widen to their
   64-bit kind (no value is lost), and anything else is refused;
3. parameters are read, not dropped blindly: `numeric(p, 0)` / `decimal(p, 0)` /
   `number(p, 0)` are whole numbers (int64; Snowflake spells every INTEGER
   NUMBER(38,0)), `numeric(p, s>0)` is float64; `varchar(20)`, `timestamp(3)`,
   `timestamp(6) with time zone` keep their base type;
4. the base type is looked up in the dialect's column of TYPE_TABLE.

A type with no row, or no entry for the dialect, raises UnmappableType naming the
type, the dialect and the column; nothing is guessed.
"""

from __future__ import annotations

import re

__all__ = ["DIALECTS", "TYPE_TABLE", "UnmappableType", "canonical_dtype", "dialect_of_adapter", "dialect_of_namespace"]

DIALECTS: tuple[str, ...] = ("postgres", "snowflake", "bigquery", "spark", "duckdb", "trino")

def _in(dtype: str, *dialects: str) -> dict[str, str]:
    return {dialect: dtype for dialect in (dialects or DIALECTS)}


# base type name -> {dialect: canonical dtype}. Where dialects disagree on a name the
# row says so: FLOAT is 64-bit in PostgreSQL, Snowflake and Trino's `double`, but
# 32-bit in Spark and DuckDB; INT is 32-bit except in Snowflake (NUMBER(38,0)).
TYPE_TABLE: dict[str, dict[str, str]] = {
    # text
    "text": _in("str", "postgres", "snowflake", "duckdb"),
    "varchar": _in("str", "postgres", "snowflake", "spark", "duckdb", "trino"),
    "character varying": _in("str", "postgres"),
    "char": _in("str", "postgres", "snowflake", "spark", "duckdb", "trino"),
    "character": _in("str", "postgres", "snowflake"),
    "bpchar": _in("str", "postgres", "duckdb"),
    "string": _in("str", "snowflake", "bigquery", "spark", "duckdb"),
    "uuid": _in("str", "postgres", "duckdb", "trino"),
    "citext": _in("str", "postgres"),
    "name": _in("str", "postgres"),
    # whole numbers
    "smallint": {**_in("int32", "postgres", "spark", "duckdb", "trino"), "snowflake": "int64"},
    "int2": _in("int32", "postgres", "duckdb"),
    "tinyint": {**_in("int32", "spark", "duckdb", "trino"), "snowflake": "int64"},
    "byte": _in("int32", "spark"),
    "short": _in("int32", "spark"),
    "integer": {**_in("int32", "postgres", "spark", "duckdb", "trino"), "snowflake": "int64"},
    "int": {**_in("int32", "postgres", "spark", "duckdb"), "snowflake": "int64"},
    "int4": _in("int32", "postgres", "duckdb"),
    "serial": _in("int32", "postgres"),
    "bigint": _in("int64", "postgres", "snowflake", "spark", "duckdb", "trino"),
    "int8": _in("int64", "postgres", "duckdb"),
    "long": _in("int64", "spark"),
    "bigserial": _in("int64", "postgres"),
    "int64": _in("int64", "bigquery"),
    "byteint": _in("int64", "snowflake"),
    # fractional numbers (a decimal with a scale is read as float64: the vocabulary has no decimal)
    "real": _in("float32", "postgres", "duckdb", "trino"),
    "float4": _in("float32", "postgres", "duckdb"),
    "float": {**_in("float64", "postgres", "snowflake", "bigquery"), **_in("float32", "spark", "duckdb")},
    "float8": _in("float64", "postgres", "duckdb", "snowflake"),
    "float64": _in("float64", "bigquery"),
    "double": _in("float64", "snowflake", "spark", "duckdb", "trino"),
    "double precision": _in("float64", "postgres", "snowflake", "duckdb"),
    "numeric": _in("float64", "postgres", "snowflake", "bigquery", "duckdb"),
    "decimal": _in("float64", "postgres", "snowflake", "spark", "duckdb", "trino"),
    "number": _in("float64", "snowflake"),
    "bignumeric": _in("float64", "bigquery"),
    # booleans
    "boolean": _in("bool", "postgres", "snowflake", "spark", "duckdb", "trino"),
    "bool": _in("bool", "postgres", "bigquery", "duckdb"),
    # dates and instants (timezone-aware instants are read as their UTC wall time)
    "date": _in("datetime64[ns]"),
    "timestamp": _in("datetime64[ns]"),
    "timestamp without time zone": _in("datetime64[ns]", "postgres", "duckdb", "trino"),
    "timestamp with time zone": _in("datetime64[ns]", "postgres", "duckdb", "trino"),
    "timestamptz": _in("datetime64[ns]", "postgres", "duckdb"),
    "timestamp_ntz": _in("datetime64[ns]", "snowflake", "spark"),
    "timestamp_ltz": _in("datetime64[ns]", "snowflake", "spark"),
    "timestamp_tz": _in("datetime64[ns]", "snowflake"),
    "datetime": _in("datetime64[ns]", "snowflake", "bigquery", "duckdb"),
}

# Spellings no row holds on purpose, with why (the error says it).
_REFUSED_WHY = {
    "json": "a JSON document has no column dtype", "jsonb": "a JSON document has no column dtype",
    "variant": "a VARIANT has no single dtype", "object": "an OBJECT has no single dtype",
    "struct": "a struct has no column dtype (flatten it into columns)", "row": "a ROW has no column dtype",
    "record": "a RECORD has no column dtype", "map": "a map has no column dtype",
    "time": "the vocabulary has no time-of-day dtype", "interval": "the vocabulary has no duration dtype",
    "bytea": "the vocabulary has no binary dtype", "binary": "the vocabulary has no binary dtype",
    "bytes": "the vocabulary has no binary dtype", "blob": "the vocabulary has no binary dtype",
    "varbinary": "the vocabulary has no binary dtype", "geography": "the vocabulary has no spatial dtype",
    "geometry": "the vocabulary has no spatial dtype", "hugeint": "a 128-bit integer does not fit int64",
}

_ADAPTERS = {
    "postgres": "postgres", "postgresql": "postgres", "snowflake": "snowflake", "bigquery": "bigquery",
    "spark": "spark", "databricks": "spark", "duckdb": "duckdb", "trino": "trino", "starburst": "trino",
}

_LIST_ELEMENT = {"str": "str", "int32": "int64", "int64": "int64", "float32": "float64", "float64": "float64",
                 "bool": "bool"}

_ARRAY_FORMS = (
    re.compile(r"^array\s*<\s*(?P<element>.+)\s*>$"),   # spark, bigquery, snowflake-free spellings
    re.compile(r"^array\s*\(\s*(?P<element>.+)\s*\)$"),  # trino
    re.compile(r"^(?P<element>.+?)\s*\[\s*\]$"),          # postgres, duckdb
)
_PARAMS = re.compile(r"^(?P<base>[a-z_][a-z0-9_ ]*?)\s*\((?P<params>[^()]*)\)(?P<rest>.*)$")


class UnmappableType(ValueError):
    """A warehouse type this table does not map onto the canonical vocabulary."""

    def __init__(self, type_name: str, dialect: str, why: str = "", where: str = "") -> None:
        self.type_name, self.dialect, self.where = type_name, dialect, where
        at = f"{where}: " if where else ""
        reason = f" ({why})" if why else ""
        super().__init__(
            f"{at}{dialect} type {type_name!r} has no canonical dtype{reason}; nothing was guessed: "
            "declare the column's dtype yourself in the draft, or leave the column out")


def dialect_of_adapter(adapter: str) -> str | None:
    """The type table's dialect for a dbt adapter type ("databricks" -> "spark"), or None."""
    return _ADAPTERS.get(str(adapter or "").strip().lower())


def dialect_of_namespace(namespace: str) -> str | None:
    """The dialect an OpenLineage dataset namespace names (`postgres://host:5432` -> postgres), or None."""
    scheme = str(namespace or "").split("://", 1)[0].split(":", 1)[0].strip().lower()
    if scheme in ("hive", "databricks", "dbfs", "s3", "s3a", "abfss", "gs", "hdfs", "file"):
        return "spark" if scheme in ("hive", "databricks", "dbfs") else None
    return _ADAPTERS.get(scheme)


def _base_and_params(spelled: str) -> tuple[str, list[str]]:
    match = _PARAMS.match(spelled)
    if not match:
        return spelled, []
    rest = match.group("rest").strip()
    base = match.group("base").strip() + (f" {rest}" if rest else "")
    return base, [p.strip() for p in match.group("params").split(",") if p.strip()]


def canonical_dtype(type_name: str, dialect: str, *, where: str = "") -> str:
    """The canonical dtype of warehouse type `type_name` in `dialect`, or UnmappableType.

    `where` (e.g. "column 'amount' of shop.orders") is put in front of the error."""
    if dialect not in DIALECTS:
        raise ValueError(f"unknown dialect {dialect!r}; the type table knows {', '.join(DIALECTS)}")
    original = str(type_name or "")
    spelled = " ".join(original.lower().split())
    if not spelled:
        raise UnmappableType(original, dialect, "the warehouse gave no type", where)
    for form in _ARRAY_FORMS:
        match = form.match(spelled)
        if match:
            element = canonical_dtype(match.group("element"), dialect, where=where)
            if element not in _LIST_ELEMENT:
                raise UnmappableType(original, dialect, f"lists of {element} are not in the vocabulary", where)
            return f"List[{_LIST_ELEMENT[element]}]"
    if spelled.startswith("_") and spelled[1:] in TYPE_TABLE and dialect == "postgres":
        return canonical_dtype(f"{spelled[1:]}[]", dialect, where=where)  # pg_catalog's array names
    base, params = _base_and_params(spelled)
    if base in ("numeric", "decimal", "number", "bignumeric") and len(params) == 2:
        if dialect not in TYPE_TABLE[base]:
            raise UnmappableType(original, dialect, f"{dialect} has no {base} type", where)
        try:
            scale = int(params[1])
        except ValueError:
            raise UnmappableType(original, dialect, f"its scale {params[1]!r} is not a number", where) from None
        return "int64" if scale == 0 else "float64"
    if base in ("numeric", "decimal", "number") and len(params) == 1 and dialect in TYPE_TABLE[base]:
        return "int64"  # a precision alone means scale 0
    row = TYPE_TABLE.get(base)
    if row and dialect in row:
        return row[dialect]
    head = re.match(r"[a-z_]*", base).group(0)
    why = _REFUSED_WHY.get(base) or _REFUSED_WHY.get(head) or (
        f"{dialect} has no {base} type in the table" if row is not None else "it is not in the type table")
    raise UnmappableType(original, dialect, why, where)


def markdown_table() -> str:
    """TYPE_TABLE as the Markdown table docs/drafting-contracts.md prints (a test keeps them equal)."""
    lines = ["| warehouse type | " + " | ".join(DIALECTS) + " |", "|---|" + "---|" * len(DIALECTS)]
    for name, row in TYPE_TABLE.items():
        lines.append(f"| `{name}` | " + " | ".join(f"`{row[d]}`" if d in row else "—" for d in DIALECTS) + " |")
    return "\n".join(lines)

"""What a contract declares it checks, and what a reported assertion checks: both
as (column, kind), so that one can be matched to the other.

A contract declares checks in three places, all read here:
- a dataframe contract's columns: `nullable: false` (not_null), `unique: true`
  (unique), and the entries of `checks` (`isin`: accepted_values; `ge`, `gt`,
  `le`, `lt`, `in_range`: range; `str_matches`: pattern; any other: its own name);
- `quality` entries on a column or property (ODCS: `metric` nullValues,
  duplicateValues, invalidValues, or the older `rule`);
- a top-level `quality` list whose entries name their `column` (or `property`);
  an entry naming none is a check on the whole dataset ("").

Reported assertions (OpenLineage `dataQualityAssertions`: dbt tests, Great
Expectations, Soda) name their kind in `assertion`; `kind_of` folds the names
the producers use onto the same kinds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

NOT_NULL, UNIQUE, ACCEPTED_VALUES, RANGE, PATTERN, ROW_COUNT, STR_LENGTH = (
    "not_null", "unique", "accepted_values", "range", "pattern", "row_count", "str_length")

_KINDS = {
    # dbt generic tests
    "not_null": NOT_NULL, "unique": UNIQUE, "accepted_values": ACCEPTED_VALUES,
    "dbt_utils.accepted_range": RANGE, "accepted_range": RANGE,
    "dbt_expectations.expect_column_values_to_match_regex": PATTERN,
    "dbt_expectations.expect_column_value_lengths_to_be_between": STR_LENGTH,
    # Great Expectations
    "expect_column_values_to_not_be_null": NOT_NULL, "expect_column_values_to_be_unique": UNIQUE,
    "expect_column_values_to_be_in_set": ACCEPTED_VALUES, "expect_column_values_to_be_between": RANGE,
    "expect_column_values_to_match_regex": PATTERN, "expect_table_row_count_to_be_between": ROW_COUNT,
    "expect_column_value_lengths_to_be_between": STR_LENGTH,
    # Soda
    "missing_count": NOT_NULL, "duplicate_count": UNIQUE, "invalid_count": ACCEPTED_VALUES, "row_count": ROW_COUNT,
    # ODCS metrics and rules
    "nullvalues": NOT_NULL, "notnull": NOT_NULL, "duplicatevalues": UNIQUE, "invalidvalues": ACCEPTED_VALUES,
    "validvalues": ACCEPTED_VALUES, "rowcount": ROW_COUNT,
    # pandera checks
    "isin": ACCEPTED_VALUES, "ge": RANGE, "gt": RANGE, "le": RANGE, "lt": RANGE, "in_range": RANGE,
    "greater_than_or_equal_to": RANGE, "less_than_or_equal_to": RANGE, "str_matches": PATTERN,
}


def kind_of(name: str) -> str:
    """The kind of check a name means ("expect_column_values_to_not_be_null" -> "not_null")."""
    folded = (name or "").strip().lower()
    return _KINDS.get(folded) or _KINDS.get(folded.replace("_", "")) or folded


@dataclass(frozen=True)
class DeclaredCheck:
    column: str  # "" for a check on the whole dataset
    kind: str
    source: str  # where the contract says it, e.g. "columns[order_id].nullable"

    @property
    def key(self) -> str:
        return check_key(self.column, self.kind)


def check_key(column: str, kind: str) -> str:
    return f"{column.casefold()}:{kind}"


def _quality_kind(entry: dict) -> str | None:
    name = entry.get("metric") or entry.get("rule") or entry.get("assertion") or entry.get("name")
    return kind_of(str(name)) if name else None


def declared_checks(document: dict[str, Any]) -> list[DeclaredCheck]:
    """Every check the contract document declares, once per (column, kind), in document order."""
    found: dict[str, DeclaredCheck] = {}

    def add(column: str, kind: str | None, source: str) -> None:
        if kind:
            check = DeclaredCheck(column, kind, source)
            found.setdefault(check.key, check)

    for column in document.get("columns") or []:
        if not isinstance(column, dict) or not isinstance(column.get("name"), str):
            continue
        name = column["name"]
        if column.get("nullable") is False:
            add(name, NOT_NULL, f"columns[{name}].nullable")
        if column.get("unique") is True:
            add(name, UNIQUE, f"columns[{name}].unique")
        for entry in column.get("checks") or []:
            if isinstance(entry, dict) and entry:
                add(name, kind_of(next(iter(entry))), f"columns[{name}].checks")
        for entry in column.get("quality") or []:
            if isinstance(entry, dict):
                add(name, _quality_kind(entry), f"columns[{name}].quality")
    for schema in document.get("schema") or [] if isinstance(document.get("schema"), list) else []:
        for prop in (schema.get("properties") or []) if isinstance(schema, dict) else []:
            if isinstance(prop, dict) and isinstance(prop.get("name"), str):
                for entry in prop.get("quality") or []:
                    if isinstance(entry, dict):
                        add(prop["name"], _quality_kind(entry), f"schema.properties[{prop['name']}].quality")
    for entry in document.get("quality") or []:
        if isinstance(entry, dict):
            column = entry.get("column") or entry.get("property") or ""
            add(str(column), _quality_kind(entry), "quality")
    return list(found.values())


def assertion_key(assertion: dict) -> tuple[str, str]:
    """(column, kind) of a reported assertion."""
    return str(assertion.get("column") or ""), kind_of(str(assertion.get("assertion") or ""))

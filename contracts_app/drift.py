"""Schema drift: the contracts side's reaction to lineage.

Lineage announces every output dataset it stores (`lineage.signals.dataset_written`,
inside the ingest transaction). When the dataset is bound to a contract and the
output carries the OpenLineage `schema` facet, `check_written_schema` compares the
facet's fields with the contract's latest published version and records one
`SchemaDriftCheck` per (dataset, run):

- `missing_required`: a field the contract requires is not in the output;
- `unknown_field`: the output has a field a closed contract does not allow
  (dataframe `strict: true`, or an event payload with `additionalProperties: false`);
- `type_mismatch`: the facet's type, mapped to the contract vocabulary by
  `canonical_dtype` (docs/schema-drift.md has the table), differs from the
  contract's, other than a narrower integer or float of the same family;
- notes (not drift): a type we cannot map, a field the contract filters out
  (`strict: filter`), a contract kind we do not compare (api), and what a
  partial facet (one with an untyped field, or no fields) could not check:
  such a facet never yields `missing_required` or `type_mismatch`.

Database work only, in the ingest transaction; no network I/O.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from django.db import DatabaseError, connection
from django.db.models import OuterRef, Subquery
from django.dispatch import receiver
from django.template.loader import render_to_string
from registry_client.versions import latest_release

from contracts_app.hooks import schema_compared
from contracts_app.models import (
    Contract,
    ContractVersion,
    DatasetBinding,
    SchemaDriftCheck,
    version_of,
)
from contracts_app.models.drift import DriftSeverity
from lineage.signals import dataset_flag, dataset_written
from registry.hooks import Badge, dataset_list_badge, dataset_page_section
from registry.models import Dataset

log = logging.getLogger(__name__)

# --- the type mapping ----------------------------------------------------------------

_SCALARS: dict[str, str] = {}
for _dtype, _spellings in {
    "str": ["string", "str", "text", "varchar", "char", "character", "character varying", "nvarchar", "nchar",
            "bpchar", "uuid", "object", "utf8", "large_string", "enum", "citext", "json", "jsonb", "variant"],
    "int32": ["int32", "int", "integer", "int4", "smallint", "int2", "int16", "tinyint", "short", "byte",
              "int8_t", "mediumint", "serial", "smallserial"],
    "int64": ["int64", "bigint", "long", "int8", "bigserial", "hugeint"],
    "float32": ["float32", "float", "real", "float4"],
    "float64": ["float64", "double", "double precision", "float8", "decimal", "numeric", "number", "bignumeric",
                "money"],
    "bool": ["bool", "boolean", "bit"],
    "datetime64[ns]": ["datetime64[ns]", "datetime64", "timestamp", "timestamptz", "timestamp_ntz", "timestamp_ltz",
                       "timestamp_tz", "datetime", "timestamp without time zone", "timestamp with time zone",
                       "date", "date32", "date64", "datetime2", "smalldatetime"],
}.items():
    for _spelling in _spellings:
        _SCALARS[_spelling] = _dtype

# Pandas' int8 is one byte, PostgreSQL's eight: a facet's "int8" comes from a
# database far more often than from a DataFrame, so it maps to int64 (above).
_LIST_PATTERNS = [re.compile(p) for p in (r"^array\s*<\s*(.+?)\s*>$", r"^list\s*<\s*(.+?)\s*>$",
                                          r"^list\[\s*(.+?)\s*\]$", r"^(.+?)\s*\[\]$", r"^_(.+)$")]
_WIDTH = {"int32": ("int", 32), "int64": ("int", 64), "float32": ("float", 32), "float64": ("float", 64)}

_JSON_TYPES = {"str": "string", "int32": "integer", "int64": "integer", "float32": "number", "float64": "number",
               "bool": "boolean", "datetime64[ns]": "string"}


def canonical_dtype(facet_type: Any) -> str | None:
    """The contract dtype a schema-facet type means, or None if we cannot tell.

    Case-insensitive; parameters are ignored (`varchar(255)` → str,
    `decimal(10,2)` → float64, `timestamp(6) with time zone` → datetime64[ns]);
    lists are `array<x>`, `list<x>`, `x[]`, PostgreSQL's `_x` → List[<x>]."""
    if not isinstance(facet_type, str) or not facet_type.strip():
        return None
    text = " ".join(facet_type.strip().lower().split())
    for pattern in _LIST_PATTERNS:
        match = pattern.match(text)
        if match:
            inner = canonical_dtype(match.group(1))
            return f"List[{inner}]" if inner and not inner.startswith("List[") else None
    base = re.sub(r"\(.*?\)", "", text).strip()
    base = re.sub(r"\s+", " ", base)
    return _SCALARS.get(base)


def _type_fits(actual: str, expected: str) -> bool:
    """Whether values of `actual` fit a column declared `expected`."""
    if actual == expected:
        return True
    if actual.startswith("List[") and expected.startswith("List["):
        return _type_fits(actual[5:-1], expected[5:-1])
    a, e = _WIDTH.get(actual), _WIDTH.get(expected)
    return bool(a and e and a[0] == e[0] and a[1] <= e[1])


# --- what the contract expects ---------------------------------------------------------

class ExpectedField:
    __slots__ = ("name", "dtype", "json_type", "required")

    def __init__(self, name: str, *, dtype: str | None = None, json_type: str | None = None, required: bool = True):
        self.name, self.dtype, self.json_type, self.required = name, dtype, json_type, required


def expected_fields(document: dict) -> tuple[list[ExpectedField], str, list[str]]:
    """(fields, openness, notes) of a contract document.
    openness: "closed" (unknown fields are drift), "filter" (dropped), "open"."""
    schema_type = (document.get("schema") or {}).get("schema_type")
    if schema_type == "dataframe" or "columns" in document:
        config = document.get("config") or {}
        strict = config.get("strict")
        openness = "closed" if strict is True else "filter" if strict == "filter" else "open"
        fields = [
            ExpectedField(str(c["name"]), dtype=c.get("dtype"), required=c.get("required", True) is not False)
            for c in document.get("columns") or [] if isinstance(c, dict) and "name" in c
        ]
        return fields, openness, []
    if schema_type == "event" or "payload" in document:
        payload = document.get("payload") or {}
        required = set(payload.get("required") or [])
        props = payload.get("properties") or {}
        openness = "closed" if payload.get("additionalProperties") is False or payload.get("unevaluatedProperties") is False else "open"
        fields = []
        for name, spec in props.items():
            json_type = spec.get("type") if isinstance(spec, dict) else None
            if isinstance(json_type, list):  # ["string", "null"]: the non-null one
                json_type = next((t for t in json_type if t != "null"), None)
            fields.append(ExpectedField(name, json_type=json_type, required=name in required))
        return fields, openness, []
    return [], "open", [f"{schema_type or 'this'} contracts describe no dataset columns; the schema is not compared"]


# --- the comparison -------------------------------------------------------------------

def _finding(kind: str, field: str, message: str, *, severity: str = DriftSeverity.DRIFT,
             expected: Any = None, actual: Any = None) -> dict:
    return {"kind": kind, "field": field, "severity": str(severity), "expected": expected, "actual": actual,
            "message": message}


def facet_fields(schema_facet: dict) -> list[tuple[str, Any]]:
    """(name, type) of the facet's top-level fields, skipping malformed entries."""
    fields = schema_facet.get("fields")
    if not isinstance(fields, list):
        return []
    return [(f["name"], f.get("type")) for f in fields if isinstance(f, dict) and isinstance(f.get("name"), str)]


def is_complete(fields: list[tuple[str, Any]]) -> bool:
    """Whether a schema facet may be taken as the whole table: it lists fields and
    every one has a type. The spec has no flag for "these are all the columns";
    a facet from a catalog or the database types every field, while dbt without
    `dbt docs generate` lists only the documented columns, untyped."""
    return bool(fields) and all(isinstance(t, str) and t.strip() for _, t in fields)


def compare(schema_facet: dict, document: dict) -> list[dict]:
    """Every way the facet's fields drift from the contract document.

    A partial facet (see `is_complete`) never yields `missing_required`, and an
    untyped field never `type_mismatch`: a `not_checked` note says what could
    not be checked instead."""
    expected, openness, notes = expected_fields(document)
    findings = [_finding("not_compared", "", note, severity=DriftSeverity.NOTE) for note in notes]
    if notes:
        return findings
    actual = facet_fields(schema_facet)
    complete = is_complete(actual)
    by_name = {name: ftype for name, ftype in actual}
    by_folded = {name.casefold(): name for name, _ in actual}
    matched: set[str] = set()
    unlisted, untyped = [], []
    for field in expected:
        name = field.name if field.name in by_name else by_folded.get(field.name.casefold())
        if name is None:
            if field.required and complete:
                findings.append(_finding("missing_required", field.name,
                                         f"'{field.name}' is required by the contract but the output has no such field.",
                                         expected=field.dtype or field.json_type))
            elif field.required:
                unlisted.append(field.name)
            continue
        matched.add(name)
        facet_type = by_name[name]
        want = field.dtype or field.json_type
        if want is None:
            continue
        if not (isinstance(facet_type, str) and facet_type.strip()):
            untyped.append(field.name)
            continue
        mapped = canonical_dtype(facet_type)
        if mapped is None:
            findings.append(_finding("unmapped_type", field.name,
                                     f"'{field.name}' has type {facet_type!r}, which has no contract dtype; not compared.",
                                     severity=DriftSeverity.NOTE, expected=want, actual=facet_type))
            continue
        if field.dtype:
            ok = _type_fits(mapped, field.dtype)
        else:
            ok = ("array" if mapped.startswith("List[") else _JSON_TYPES.get(mapped)) == field.json_type or (
                field.json_type == "number" and _JSON_TYPES.get(mapped) == "integer")
        if not ok:
            findings.append(_finding("type_mismatch", field.name,
                                     f"'{field.name}' is {facet_type!r} ({mapped}) in the output; the contract says {want}.",
                                     expected=want, actual=facet_type))
    if unlisted:
        why = ("lists no fields" if not actual else
               "does not list every column (a field without a type: a producer without the table's catalog, "
               "such as dbt without `dbt docs generate`)")
        findings.append(_finding("not_checked", "", f"The schema facet {why}, so required fields it leaves out "
                                 f"were not checked: {', '.join(unlisted)}.", severity=DriftSeverity.NOTE,
                                 expected=unlisted))
    if untyped:
        findings.append(_finding("not_checked", "", f"The schema facet gives no type for {', '.join(untyped)}; "
                                 "their types were not checked.", severity=DriftSeverity.NOTE, actual=untyped))
    for name, facet_type in actual:
        if name in matched:
            continue
        if openness == "closed":
            findings.append(_finding("unknown_field", name,
                                     f"'{name}' is not in the contract, which allows no other fields.", actual=facet_type))
        elif openness == "filter":
            findings.append(_finding("filtered_field", name,
                                     f"'{name}' is not in the contract; readers drop it (strict: filter).",
                                     severity=DriftSeverity.NOTE, actual=facet_type))
    return findings


def bound_versions(dataset_pk: int) -> list[ContractVersion]:
    """The versions of the contract bound to the dataset (one query).

    Plain SQL: it runs for every output with a schema facet, mostly to find
    nothing, and compiling the ORM join would cost more than running it."""
    quote = connection.ops.quote_name
    v, b, c = (ContractVersion._meta.db_table, DatasetBinding._meta.db_table, Contract._meta.db_table)
    sql = (f"SELECT v.id, v.version, v.document, c.name FROM {quote(v)} v "
           f"JOIN {quote(b)} b ON b.contract_id = v.contract_id JOIN {quote(c)} c ON c.id = v.contract_id "
           "WHERE b.dataset_id = %s")
    with connection.cursor() as cursor:
        cursor.execute(sql, [dataset_pk])
        rows = cursor.fetchall()
    versions = []
    for pk, version, document, contract_name in rows:
        obj = ContractVersion(pk=pk, version=version, document=json.loads(document) if isinstance(document, str) else document)
        obj._state.adding = False
        obj.contract_name = contract_name
        versions.append(obj)
    return versions


def check_written_schema(*, dataset, run, job, event_type: str, event_time, schema_facet: dict) -> SchemaDriftCheck | None:
    """Compare and record; None when the dataset has no contract with a published version."""
    versions = bound_versions(dataset.pk)
    version = latest_release(versions, key=version_of)
    if version is None:
        return None
    findings = compare(schema_facet, version.document or {})
    check = SchemaDriftCheck(
        dataset_id=dataset.pk, contract_version=version, contract_name=version.contract_name,
        version=version.version, run_uuid=run.run_uuid, job_namespace=job.namespace, job_name=job.name,
        event_type=event_type, event_time=event_time, findings=findings,
        drift_count=sum(f["severity"] == DriftSeverity.DRIFT for f in findings),
    )
    # One row per run: a later event of the same run (COMPLETE after START)
    # replaces the comparison, in one statement whatever runs concurrently.
    SchemaDriftCheck.objects.bulk_create(
        [check], update_conflicts=True, unique_fields=["dataset", "run_uuid"],
        update_fields=["contract_version", "contract_name", "version", "event_type", "event_time", "findings",
                       "drift_count", "checked_at"],
    )
    schema_compared.send(sender=SchemaDriftCheck, check=check)
    return check


@receiver(dataset_written, dispatch_uid="contracts_app.drift.on_dataset_written")
def on_dataset_written(sender, *, dataset, run, job, event_type, event_time, schema_facet=None, **kwargs) -> None:
    # Most written datasets have no contract: the ingest fetched that fact with
    # the dataset (see register_dataset_flag), which spares a query per output.
    if schema_facet is None or getattr(dataset, HAS_CONTRACT, None) is False:
        return
    check_written_schema(dataset=dataset, run=run, job=job, event_type=event_type, event_time=event_time,
                         schema_facet=schema_facet)


# --- the dataset page ------------------------------------------------------------------

@dataset_page_section(order=40)
def drift_section(request, dataset) -> str:
    checks = list(SchemaDriftCheck.objects.filter(dataset=dataset)[:10])
    if not checks:
        return ""
    return render_to_string("contracts_app/_drift_section.html",
                            {"latest": checks[0], "history": checks}, request=request)


def _annotate_drift(datasets):
    """The listing's drift: the findings of each dataset's latest schema check (a subquery)."""
    latest = SchemaDriftCheck.objects.filter(dataset=OuterRef("pk")).order_by("-checked_at", "-id")
    return datasets.annotate(drift_findings=Subquery(latest.values("drift_count")[:1]))


def _drift_badge(dataset) -> Badge | None:
    findings = getattr(dataset, "drift_findings", None)
    if not findings:
        return None
    return Badge("schema drift", "bad",
                 f"The latest run's output schema differs from the contract: {findings} "
                 f"finding{'s' if findings != 1 else ''}", anchor="schema-drift")


dataset_list_badge(_annotate_drift, _drift_badge)


# --- Prometheus -----------------------------------------------------------------------

def drift_metrics() -> list[tuple[dict[str, str], int]]:
    """(labels, drift findings in the latest check) per bound dataset that has been checked.

    Three queries, each as long as the bindings, not as the checks' history: each binding's
    latest check id, the dataset page's latest (a probe of drift_dataset_checked_idx: ordered
    by id alone, PostgreSQL may walk the primary key backwards past other datasets' checks),
    those checks by id, and the datasets' names by id (Dataset.labels_of)."""
    latest = (SchemaDriftCheck.objects.filter(dataset=OuterRef("dataset_id")).order_by("-checked_at", "-id")
              .values("pk")[:1])
    ids = [pk for pk in DatasetBinding.objects.annotate(check_id=Subquery(latest)).values_list("check_id", flat=True)
           if pk is not None]
    rows = list(SchemaDriftCheck.objects.filter(pk__in=ids).values_list(
        "dataset_id", "contract_name", "version", "drift_count").order_by())
    labels_of = Dataset.objects.labels_of(dataset_id for dataset_id, *_ in rows)
    return [({"namespace": labels_of[dataset_id][0], "name": labels_of[dataset_id][1], "contract": contract,
              "version": version}, count)
            for dataset_id, contract, version, count in rows if dataset_id in labels_of]


class DriftCollector:
    """registry_schema_drift_findings{namespace,name,contract,version}, read at scrape time."""

    def collect(self):
        from prometheus_client.core import GaugeMetricFamily

        gauge = GaugeMetricFamily(
            "registry_schema_drift_findings",
            "Drift findings in the latest schema check of each dataset bound to a contract (0 = matches).",
            labels=["namespace", "name", "contract", "version"],
        )
        try:
            for labels, count in drift_metrics():
                gauge.add_metric([labels["namespace"], labels["name"], labels["contract"], labels["version"]], count)
        except DatabaseError as exc:  # a scrape must not fail because the database is down
            log.warning("drift metrics unavailable: %s", exc)
        yield gauge

    def describe(self):
        return []


_collector: DriftCollector | None = None


HAS_CONTRACT = "has_contract"


def register_dataset_flag() -> None:
    quote = connection.ops.quote_name
    dataset_flag(HAS_CONTRACT, f"EXISTS (SELECT 1 FROM {quote(DatasetBinding._meta.db_table)} b WHERE b.dataset_id = t.id)")


def register_collector() -> None:
    global _collector
    if _collector is None:
        from prometheus_client import REGISTRY

        _collector = DriftCollector()
        REGISTRY.register(_collector)

"""Integration specs: where a contract version's rows physically live.

A spec is authored beside the contracts, at
`integrations/source_specs/<domain>/<sub…>/<entity>/v1_0/spec.yaml`
(the folder is the contract version it maps):

    spec:
      contract: lab.analytics.cell_count
      version: "1.0"                 # the contract version
      description: LIMS assay table   # optional
    source:
      system: lims                   # optional, informative
      schema: lims
      table: cell_counts
      created_column: created_at     # used for date partitioning
      modified_column: modified_at   # optional
    field_to_source:                 # contract column -> source column (unlisted: same name)
      viability: viab_fraction

`load_query(spec, start, end)` composes the parameterized SQL that loads the
contract's rows for a date range, with identifiers quoted by psycopg.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from django.db import transaction
from psycopg import sql

from contracts_app.models import (
    AuditAction,
    ContentChanged,
    ContractVersion,
    IntegrationSpec,
    document_checksum,
)
from contracts_app.store import Store, spec_key
from contracts_app.yamlio import dump_plain_yaml
from registry.models import AuditEvent, RegistryError

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_$ ]*$")


class InvalidSpec(RegistryError):
    def __init__(self, where: str, errors: list[str]):
        self.errors = errors
        super().__init__(f"Integration spec {where} is invalid: " + "; ".join(errors))


def spec_errors(document: Any, contract_document: dict | None = None) -> list[str]:
    """Every problem with a spec, in one list (empty when it is valid)."""
    if not isinstance(document, dict):
        return ["the spec is not a mapping"]
    errors: list[str] = []
    head, source = document.get("spec"), document.get("source")
    if not isinstance(head, dict) or not head.get("contract") or not isinstance(head.get("version"), str):
        errors.append("`spec` needs `contract` (a dotted name) and `version` (a string like \"1.0\")")
    if not isinstance(source, dict):
        return [*errors, "`source` needs `schema`, `table` and `created_column`"]
    for key in ("schema", "table", "created_column"):
        if not isinstance(source.get(key), str) or not _IDENT.match(source[key]):
            errors.append(f"source.{key} must be a plain SQL identifier, got {source.get(key)!r}")
    if source.get("modified_column") is not None and not _IDENT.match(str(source["modified_column"])):
        errors.append(f"source.modified_column must be a plain SQL identifier, got {source['modified_column']!r}")
    mapping = document.get("field_to_source") or {}
    if not isinstance(mapping, dict):
        errors.append("field_to_source must map contract columns to source columns")
        mapping = {}
    for field_name, column in mapping.items():
        if not isinstance(column, str) or not _IDENT.match(column):
            errors.append(f"field_to_source.{field_name}: source column {column!r} is not a plain SQL identifier")
    if contract_document is not None and contract_document.get("schema", {}).get("schema_type") == "dataframe":
        columns = {c["name"] for c in contract_document.get("columns") or []}
        for field_name in mapping:
            if field_name not in columns:
                errors.append(f"field_to_source.{field_name}: the contract has no column {field_name!r}")
    return errors


def record_spec(document: dict, *, by, yaml_text: str = "", store: Store | None = None) -> tuple[IntegrationSpec, bool]:
    """Record a spec for a published contract version and schedule its upload.

    Returns (spec, created). The same content again is a no-op; different
    content for a published spec is refused, as for contract versions.
    """
    head = document.get("spec") if isinstance(document, dict) else None
    where = f"{head.get('contract')} {head.get('version')}" if isinstance(head, dict) else "<unnamed>"
    errors = spec_errors(document)
    if errors:
        raise InvalidSpec(where, errors)
    cv = ContractVersion.objects.select_related("contract").filter(
        contract__name=head["contract"], version=head["version"]
    ).first()
    if cv is None:
        raise InvalidSpec(where, [f"contract {head['contract']} has no published version {head['version']}; publish it first"])
    errors = spec_errors(document, cv.document)
    if errors:
        raise InvalidSpec(where, errors)
    checksum = document_checksum(document)
    source = document["source"]
    with transaction.atomic():
        existing = IntegrationSpec.objects.select_for_update().filter(contract_version=cv, version=cv.version).first()
        if existing is not None:
            if existing.checksum != checksum:
                raise ContentChanged(f"the integration spec of {where} is already published with different content")
            if existing.uploaded_at is None:
                _schedule(existing.pk, store)
            return existing, False
        spec = IntegrationSpec.objects.create(
            contract_version=cv, version=cv.version, document=document, source_schema=source["schema"],
            source_table=source["table"], field_to_source=document.get("field_to_source") or {},
            created_column=source["created_column"], modified_column=source.get("modified_column") or "",
            checksum=checksum, store_key=spec_key(cv.contract.path_parts, cv.version), yaml_text=yaml_text or dump_plain_yaml(document),
        )
        AuditEvent.record(by, AuditAction.SPEC_PUBLISHED, spec, after={"contract": cv.contract.name, "version": cv.version,
                                                                      "table": f"{spec.source_schema}.{spec.source_table}"})
        _schedule(spec.pk, store)
    return spec, True


def _schedule(spec_pk: int, store: Store | None) -> None:
    from contracts_app.publishing import upload_spec

    transaction.on_commit(lambda: upload_spec(spec_pk, store=store))


@dataclass(frozen=True)
class LoadQuery:
    query: sql.Composed
    params: dict[str, Any]

    def as_string(self, context=None) -> str:
        return self.query.as_string(context)


def load_query(spec: IntegrationSpec | dict, start: date | datetime, end: date | datetime,
               columns: list[str] | None = None) -> LoadQuery:
    """SELECT the contract's columns (renamed from their source columns) for rows
    created or modified in [start, end).

    `columns` defaults to the contract version's columns (dataframe contracts)
    or the spec's mapped fields.
    """
    if isinstance(spec, IntegrationSpec):
        document, contract_document = spec.document, spec.contract_version.document
    else:
        document, contract_document = spec, None
    if columns is None:
        if contract_document and contract_document.get("columns"):
            columns = [c["name"] for c in contract_document["columns"]]
        else:
            columns = list((document.get("field_to_source") or {}).keys())
    if not columns:
        raise InvalidSpec(str(document.get("spec")), ["no columns to load: the spec maps none and no contract columns are known"])
    if start >= end:
        raise ValueError(f"the date range is empty: start {start} is not before end {end}")
    mapping = document.get("field_to_source") or {}
    source = document["source"]
    select = sql.SQL(", ").join(
        sql.SQL("{} AS {}").format(sql.Identifier(mapping.get(c, c)), sql.Identifier(c)) for c in columns
    )
    created = sql.Identifier(source["created_column"])
    window = sql.SQL("({col} >= %(start)s AND {col} < %(end)s)")
    where = window.format(col=created)
    if source.get("modified_column"):
        where = sql.SQL("{} OR {}").format(where, window.format(col=sql.Identifier(source["modified_column"])))
    query = sql.SQL("SELECT {select} FROM {table} WHERE {where} ORDER BY {created}").format(
        select=select, table=sql.Identifier(source["schema"], source["table"]), where=where, created=created,
    )
    return LoadQuery(query=query, params={"start": start, "end": end})

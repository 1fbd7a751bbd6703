"""Column usage from a RunEvent: which columns its job reads of each input, and
which input columns fed each output column.

The ingest asks in two steps, around its first statement:

1. `UsagePlan.of(parsed)` (before it): the datasets the event's column
   evidence names beyond its inputs and outputs (the tables its SQL reads, the
   sources its facets name), as candidate (namespace, name) keys to look up
   with the event's own datasets, and whether their stored schemas are needed
   (to resolve `SELECT *`).
2. `plan.resolve(found)` (after it) picks, for each SQL table, the dataset it
   names; `plan.rows(datasets, schemas)` then gives the rows to upsert with the
   job and run: column reads, field edges and the schemas the event carries.

For each input dataset the most trusted source that gives column evidence for
it wins, and its name is kept with the facts:

1. the explicit lineage facets (`lineage` on an output dataset, a
   LineageDatasetFacet; `lineage` on the job, a LineageJobFacet with entries);
2. the `columnLineage` facet of the outputs (field-level `inputFields`, and the
   dataset-level `dataset` list, which is INDIRECT usage: filters, joins, …);
3. data-quality checks: the columns a `dataQualityAssertions` or
   `dataQualityMetrics` facet of an input checks (a dbt test reads them);
4. the `sql` job facet, parsed with sqlglot (lineage.sql_usage): for a SQL
   model also how each input column's values reach each output column (field
   edges: DIRECT with the expression and what it absorbs, INDIRECT with the
   clause — JOIN, GROUP_BY, FILTER, WINDOW, CONDITIONAL — that changes them).

An input no source speaks about with columns is read "all or unknown" (column
"", source `input`); so is every input when the SQL cannot be parsed. Missing
a reader is the one error the change-request side cannot afford, so every
doubt resolves to "".
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, NamedTuple

from django.conf import settings

from lineage.sql_usage import ALL_COLUMNS as SQL_ALL
from lineage.sql_usage import (
    SqlNotUnderstood,
    SqlReading,
    TableRef,
    ValueStep,
    dialect_for,
    sql_reading,
    sql_tables,
)
from registry.usage import ALL_COLUMNS, UsageKind, UsageSource, schema_fingerprint

if TYPE_CHECKING:
    from lineage.ingest import ParsedEvent

log = logging.getLogger(__name__)

DatasetKey = tuple[str, str]  # (namespace, name)

DIRECT, INDIRECT = UsageKind.DIRECT.value, UsageKind.INDIRECT.value
MAX_NAME = 500  # the name columns' max_length: a longer column reads all/unknown, a longer dataset is ignored
MAX_SUBTYPE = 50
MAX_DESCRIPTION = 2000
MAX_CANDIDATES = 8  # (namespace, name) spellings tried per SQL table


# Rows are tuples (the ingest builds a dozen per event): their order is the lock order.

class ColumnReadRow(NamedTuple):
    dataset_id: int
    column: str
    kind: str
    source: str


class FieldEdgeRow(NamedTuple):
    dataset_id: int
    field: str
    input_dataset_id: int
    input_field: str
    kind: str
    subtype: str
    description: str
    masking: bool
    source: str
    through_star: bool | None  # None: the sources do not say (see sql_usage.FieldInput)


@dataclass
class UsageRows:
    column_reads: list[ColumnReadRow] = field(default_factory=list)
    field_edges: list[FieldEdgeRow] = field(default_factory=list)
    # (dataset id, {column: type} as JSON text, whether the event writes the dataset,
    #  whether the facet is complete, [{name, type, description}] as JSON text)
    schemas: list[tuple[int, str, bool, bool, str]] = field(default_factory=list)
    inputs: list[DatasetKey] = field(default_factory=list)  # every dataset read, listed by the event or not
    # What the job sees of its inputs (registry.usage.InputSchema): (dataset id, fingerprint,
    #  {column: type} as JSON text, whether the facet is complete)
    input_schemas: list[tuple[int, str, str, bool]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.column_reads or self.field_edges or self.schemas or self.input_schemas)


class _Edge(NamedTuple):
    field: str
    input_key: DatasetKey
    input_field: str
    kind: str
    subtype: str = ""
    description: str = ""
    masking: bool = False
    through_star: bool | None = None


@dataclass
class _Evidence:
    """What one source says: columns read per input, field edges per output."""

    reads: dict[DatasetKey, set[tuple[str, str]]] = field(default_factory=dict)
    mentioned: set[DatasetKey] = field(default_factory=set)  # named without a column
    edges: dict[DatasetKey, list[_Edge]] = field(default_factory=dict)

    def read(self, key: DatasetKey, column: Any, kind: str) -> None:
        if not isinstance(column, str) or not column or len(column) > MAX_NAME:
            column = ALL_COLUMNS  # not a usable name: all or unknown
        self.reads.setdefault(key, set()).add((column, kind))

    def mention(self, key: DatasetKey) -> None:
        self.mentioned.add(key)

    def edge(self, output: DatasetKey, edge: _Edge) -> None:
        if 0 < len(edge.field) <= MAX_NAME and 0 < len(edge.input_field) <= MAX_NAME:
            self.edges.setdefault(output, []).append(edge)

    def sources(self) -> set[DatasetKey]:
        return set(self.reads) | self.mentioned


def _key_of(obj: Any) -> DatasetKey | None:
    """The dataset a facet entry names; None for one the registry could not store
    (a facet's own fields are not part of the RunEvent check)."""
    if isinstance(obj, dict):
        namespace, name = obj.get("namespace"), obj.get("name")
        if (isinstance(namespace, str) and isinstance(name, str)
                and 0 < len(namespace) <= MAX_NAME and 0 < len(name) <= MAX_NAME):
            return (namespace, name)
    return None


def _kind(transformations: Any, default: str) -> tuple[str, str, str, bool]:
    """(kind, subtype, description, masking) of an input's transformations: DIRECT
    when any is DIRECT, else INDIRECT when any is given, else `default`."""
    if type(transformations) is not list or not transformations:
        return default, "", "", False
    if len(transformations) == 1 and type(transformations[0]) is dict:
        # The usual shape, without the general case's sets.
        only = transformations[0]
        kind, subtype, description = only.get("type"), only.get("subtype"), only.get("description")
        kind = kind.upper() if type(kind) is str else ""
        return (DIRECT if kind == DIRECT else INDIRECT if kind else default,
                subtype[:MAX_SUBTYPE] if type(subtype) is str else "",
                description[:MAX_DESCRIPTION] if type(description) is str else "", only.get("masking") is True)
    items = [t for t in transformations if isinstance(t, dict)]
    types = {str(t.get("type") or "").upper() for t in items}
    kind = DIRECT if DIRECT in types else INDIRECT if types - {""} else default
    first = next((t for t in items if str(t.get("type") or "").upper() == kind), items[0] if items else {})
    subtype, description = first.get("subtype"), first.get("description")
    return (kind, subtype[:MAX_SUBTYPE] if isinstance(subtype, str) else "",
            description[:MAX_DESCRIPTION] if isinstance(description, str) else "",
            any(t.get("masking") is True for t in items))


# --- source 1: the explicit lineage facets -------------------------------------------

def _lineage_target(evidence: _Evidence, target: DatasetKey | None, facet: dict) -> None:
    """A LineageDatasetFacet, or a LineageDatasetEntry of the job facet, for `target`."""
    for source in facet.get("inputs") or []:
        key = _key_of(source)
        if key is None or (source.get("type") not in (None, "DATASET")):
            continue
        if source.get("field") is None:
            evidence.mention(key)
        else:
            # A field at dataset level affects the whole target: a filter, a join, a sort.
            evidence.read(key, source.get("field"), _kind(source.get("transformations"), INDIRECT)[0])
    fields = facet.get("fields")
    if not isinstance(fields, dict):
        return
    for target_field, entry in fields.items():
        for source in (entry.get("inputs") if isinstance(entry, dict) else None) or []:
            key = _key_of(source)
            if key is None or source.get("type") not in (None, "DATASET"):
                continue
            column = source.get("field")
            kind, subtype, description, masking = _kind(source.get("transformations"), DIRECT)
            if column is None:
                evidence.read(key, ALL_COLUMNS, kind)  # the field comes from the source as a whole
                continue
            evidence.read(key, column, kind)
            if target is not None and isinstance(column, str) and isinstance(target_field, str):
                evidence.edge(target, _Edge(target_field, key, column, kind, subtype, description, masking))


def _lineage_facets(parsed: ParsedEvent) -> _Evidence:
    evidence = _Evidence()
    outputs = {(o["namespace"], o["name"]) for o in parsed.outputs}
    for out in parsed.outputs:
        facet = (out.get("facets") or {}).get("lineage")
        if isinstance(facet, dict):
            _lineage_target(evidence, (out["namespace"], out["name"]), facet)
    facet = parsed.job_facets.get("lineage")
    entries = facet.get("entries") if isinstance(facet, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        if entry.get("type") == "DATASET":
            target = _key_of(entry)
            _lineage_target(evidence, target if target in outputs else None, entry)
        elif entry.get("type") == "JOB" and _is_own_job(entry, parsed):
            for source in entry.get("inputs") or []:
                key = _key_of(source)
                if key is None or source.get("type") not in (None, "DATASET"):
                    continue
                if source.get("field") is None:
                    evidence.mention(key)
                else:
                    evidence.read(key, source.get("field"), _kind(source.get("transformations"), INDIRECT)[0])
    return evidence


def _is_own_job(entry: dict, parsed: ParsedEvent) -> bool:
    if entry.get("namespace") is None and entry.get("name") is None:
        return True
    return entry.get("namespace") == parsed.job_namespace and entry.get("name") == parsed.job_name


# --- source 2: the columnLineage facet ------------------------------------------------

def _column_lineage(parsed: ParsedEvent) -> _Evidence:
    """Input fields count only when they name one of the event's datasets: dbt-ol names
    the CTE an output column came from (`orders`, `totals`) as if it were a dataset,
    which would be column usage of nothing real; the SQL source speaks for those.

    The ingest's hot loop (one pass per input field of every output column): the
    usual shape, one transformation given as a dict, is read inline."""
    evidence = _Evidence()
    own = {k for k in (*parsed.inputs, *((o["namespace"], o["name"]) for o in parsed.outputs))
           if 0 < len(k[0]) <= MAX_NAME and 0 < len(k[1]) <= MAX_NAME}
    reads, edges = evidence.reads, evidence.edges
    for out in parsed.outputs:
        facet = (out.get("facets") or {}).get("columnLineage")
        if type(facet) is not dict:
            continue
        target = (out["namespace"], out["name"])
        fields = facet.get("fields")
        for out_field, entry in (fields.items() if type(fields) is dict else ()):
            if type(entry) is not dict or type(out_field) is not str:
                continue
            # Producers before facet 1-1-0 describe the field, not each input.
            legacy_type, legacy_description = entry.get("transformationType"), entry.get("transformationDescription")
            field_fits = 0 < len(out_field) <= MAX_NAME
            for source in entry.get("inputFields") or ():
                if type(source) is not dict:
                    continue
                namespace, name = source.get("namespace"), source.get("name")
                if type(namespace) is not str or type(name) is not str or (namespace, name) not in own:
                    continue
                key = (namespace, name)
                kind, subtype, description, masking = _kind(source.get("transformations"), DIRECT)
                if not subtype and type(legacy_type) is str:
                    subtype = legacy_type[:MAX_SUBTYPE]
                    masking = masking or legacy_type.upper() == "MASKED"
                if not description and type(legacy_description) is str:
                    description = legacy_description[:MAX_DESCRIPTION]
                column = source.get("field")
                usable = type(column) is str and 0 < len(column) <= MAX_NAME
                found = reads.get(key)
                if found is None:
                    found = reads[key] = set()
                found.add((column if usable else ALL_COLUMNS, kind))
                if usable and field_fits:
                    edges.setdefault(target, []).append(_Edge(out_field, key, column, kind, subtype, description, masking))
        for source in facet.get("dataset") or []:
            key = _key_of(source)
            if key is not None and key in own:
                evidence.read(key, source.get("field"), _kind(source.get("transformations"), INDIRECT)[0])
    return evidence


# --- source 3: data-quality checks -------------------------------------------------------

def _quality_checks(parsed: ParsedEvent) -> _Evidence:
    """A check reads the columns it checks: each assertion of a `dataQualityAssertions`
    facet that names a column (dbt-ol reports a model's tests so, on the tested input),
    and each column of a `dataQualityMetrics` facet's `columnMetrics` (null counts,
    distinct counts, …). INDIRECT: a check feeds no output, it judges the values. The
    tables a check's compiled SQL reads besides (a `relationships` test's other model,
    a singular test's every model) come from the `sql` job facet, as any job's."""
    evidence = _Evidence()
    for dataset in parsed.payload.get("inputs") or ():
        key = _key_of(dataset)
        if key is None:
            continue
        for group in ("inputFacets", "facets"):
            facets = dataset.get(group)
            if not isinstance(facets, dict):
                continue
            assertions = facets.get("dataQualityAssertions")
            for item in (assertions.get("assertions") if isinstance(assertions, dict) else None) or ():
                if isinstance(item, dict) and isinstance(item.get("column"), str) and item["column"]:
                    evidence.read(key, item["column"], INDIRECT)
            metrics = facets.get("dataQualityMetrics")
            columns = metrics.get("columnMetrics") if isinstance(metrics, dict) else None
            for column in columns if isinstance(columns, dict) else ():
                evidence.read(key, column, INDIRECT)
    return evidence


# --- source 4: the sql job facet -------------------------------------------------------

def _sql_facet(parsed: ParsedEvent) -> tuple[str, str | None] | None:
    facet = parsed.job_facets.get("sql")
    if not isinstance(facet, dict) or not isinstance(facet.get("query"), str) or not facet["query"].strip():
        return None
    namespaces = [o["namespace"] for o in parsed.outputs] + [ns for ns, _ in parsed.inputs]
    dialect = facet.get("dialect") if isinstance(facet.get("dialect"), str) else None
    return facet["query"], dialect_for(dialect, namespaces[0] if namespaces else None)


def _split(name: str) -> tuple[str, ...]:
    return tuple(part for part in name.split(".") if part)


@dataclass
class UsagePlan:
    """What the ingest needs to know before its first statement, then the rows."""

    parsed: ParsedEvent
    facet_evidence: list[tuple[str, _Evidence]]
    query: str | None = None
    dialect: str | None = None
    sql_read: tuple[TableRef, ...] = ()
    sql_target: TableRef | None = None
    sql_failed: bool = False
    candidates: dict[TableRef, list[DatasetKey]] = field(default_factory=dict)
    resolved: dict[TableRef, DatasetKey] = field(default_factory=dict)

    @classmethod
    def of(cls, parsed: ParsedEvent) -> UsagePlan:
        plan = cls(parsed, [(UsageSource.LINEAGE_FACET.value, _lineage_facets(parsed)),
                            (UsageSource.COLUMN_LINEAGE.value, _column_lineage(parsed)),
                            (UsageSource.QUALITY_CHECK.value, _quality_checks(parsed))])
        found = _sql_facet(parsed)
        if found is not None:
            plan.query, plan.dialect = found
            try:
                tables = sql_tables(plan.query, plan.dialect, max_bytes=settings.LINEAGE_SQL_MAX_BYTES)
            except SqlNotUnderstood as exc:
                plan.sql_failed = True
                log.info("column usage: the sql facet of %s/%s is not understood: %s",
                         parsed.job_namespace, parsed.job_name, exc)
            else:
                plan.sql_read, plan.sql_target = tables.reads, tables.target
                plan.candidates = {ref: plan._candidates(ref) for ref in (*tables.reads, *filter(None, [tables.target]))}
        return plan

    @property
    def has_sql(self) -> bool:
        return bool(self.sql_read)

    def _candidates(self, ref: TableRef) -> list[DatasetKey]:
        """The datasets a SQL table name may be, most likely first: in the outputs'
        namespaces, then the inputs', qualified like their names (dbt names a
        dataset `database.schema.table`, its SQL often `schema.table` or `table`)."""
        parsed = self.parsed
        known = [(o["namespace"], o["name"]) for o in parsed.outputs] + list(parsed.inputs)
        namespaces = list(dict.fromkeys(ns for ns, _ in known))
        names = []
        for _, name in known:
            prefix = _split(name)[:-1]
            if len(ref.parts) <= len(prefix):
                names.append(".".join(prefix[:len(prefix) - len(ref.parts) + 1] + ref.parts))
        names.append(ref.name)
        names = [name for name in dict.fromkeys(names) if len(name) <= MAX_NAME]
        return [(ns, name) for ns in namespaces for name in names][:MAX_CANDIDATES]

    def lookup_keys(self) -> list[DatasetKey]:
        """Every dataset key to look up with the event's first statement."""
        keys = set(self.parsed.dataset_keys)
        for _, evidence in self.facet_evidence:
            keys |= evidence.sources() | set(evidence.edges)
        for found in self.candidates.values():
            keys.update(found)
        return sorted(keys)

    def resolve(self, found: Iterable[DatasetKey]) -> list[DatasetKey]:
        """Choose each SQL table's dataset: one the event names, else one already
        known, else the likeliest candidate (created unowned, like any dataset
        first seen). Returns every dataset key the rows need."""
        existing = set(found)
        own = set(self.parsed.dataset_keys)
        for ref, candidates in self.candidates.items():
            if not candidates:
                continue
            self.resolved[ref] = (next((k for k in candidates if k in own), None)
                                  or next((k for k in candidates if k in existing), None) or candidates[0])
        keys = set(self.parsed.dataset_keys)
        for _, evidence in self.facet_evidence:
            keys |= evidence.sources()
            keys |= {k for k in evidence.edges if k in own}
        keys.update(self.resolved[ref] for ref in self.sql_read if ref in self.resolved)
        return sorted(keys)

    # the rows

    def _sql_evidence(self, schemas: dict[DatasetKey, dict[str, str]]) -> _Evidence | None:
        evidence = _Evidence()
        tables = [ref for ref in self.sql_read if ref in self.resolved]
        if not tables:
            return evidence
        # A partial schema (untyped: dbt without a catalog lists only documented
        # columns) cannot say what `*` is; the star then reads all/unknown.
        known = {ref: tuple(schemas[self.resolved[ref]]) for ref in tables
                 if schemas.get(self.resolved[ref]) and all(schemas[self.resolved[ref]].values())}
        try:
            reading: SqlReading = sql_reading(self.query, self.dialect, known, max_bytes=settings.LINEAGE_SQL_MAX_BYTES)
        except SqlNotUnderstood as exc:
            log.info("column usage: the sql facet of %s/%s is not understood: %s",
                     self.parsed.job_namespace, self.parsed.job_name, exc)
            for ref in tables:
                evidence.read(self.resolved[ref], ALL_COLUMNS, DIRECT)
            return evidence
        for ref in reading.tables:
            key = self.resolved.get(ref)
            if key is None:
                continue
            for kind, columns in ((DIRECT, reading.direct[ref]), (INDIRECT, reading.indirect[ref])):
                for column in columns:
                    evidence.read(key, ALL_COLUMNS if column == SQL_ALL else column, kind)
        output = self._sql_output(reading.target)
        if output is not None:
            spelled = {c.lower(): c for c in schemas.get(output, {})}
            steps = {(name, step.table, step.column, step.kind): step for name, found in reading.steps for step in found}
            keyed = reading.keyed if self._rebuilt_whole(output) else frozenset()
            for name, inputs in reading.fields:
                for found in inputs:
                    key = self.resolved.get(found.table)
                    if key is not None:
                        step = steps.get((name, found.table, found.column, DIRECT))
                        text = step_description(step) if step else ""
                        if name in keyed and not (step and step.absorbs):
                            text = keyed_description(text)
                        evidence.edge(output, _Edge(spelled.get(name.lower(), name), key, found.column, DIRECT,
                                                    found.subtype, text, through_star=found.through_star))
            # The INDIRECT uses that change results (a join key, a group key, a filter, a
            # window's partition, a CASE condition): an edge to each result they change,
            # its clause as the subtype and the clause's SQL as the description.
            for name, found in reading.steps:
                for step in found:
                    key = self.resolved.get(step.table)
                    if key is not None and step.kind == INDIRECT:
                        evidence.edge(output, _Edge(spelled.get(name.lower(), name), key, step.column, INDIRECT,
                                                    step.subtype, step_description(step)))
        return evidence

    def _rebuilt_whole(self, output: DatasetKey) -> bool:
        """The job writes `output` whole on every run, as its `dbt_model` facet says (a table
        or a view; an incremental model or a snapshot adds rows to those already there)."""
        for obj in self.parsed.outputs:
            if (obj["namespace"], obj["name"]) == output:
                facet = (obj.get("facets") or {}).get("dbt_model")
                config = facet.get("config") if isinstance(facet, dict) else None
                return isinstance(config, dict) and config.get("materialized") in REBUILT_WHOLE
        return False

    def _sql_output(self, target: TableRef | None) -> DatasetKey | None:
        """The output the query's result goes to: the table it writes, else the event's one output."""
        outputs = [(o["namespace"], o["name"]) for o in self.parsed.outputs]
        if target is not None and self.resolved.get(target) in outputs:
            return self.resolved[target]
        return outputs[0] if len(outputs) == 1 else None

    def rows(self, datasets: dict[DatasetKey, Any], stored_schemas: dict[DatasetKey, dict[str, str]]) -> UsageRows:
        """The rows for the ingest statement (`datasets`: every key of `resolve` → its dataset)."""
        carried = event_schemas(self.parsed)
        schemas = {**stored_schemas, **carried}
        sources = list(self.facet_evidence)
        if self.query is not None and not self.sql_failed:
            sources.append((UsageSource.SQL.value, self._sql_evidence(schemas)))
        inputs = list(dict.fromkeys([*self.parsed.inputs,
                                     *(self.resolved[r] for r in self.sql_read if r in self.resolved),
                                     *(k for _, e in sources for k in sorted(e.sources()))]))
        inputs = [k for k in inputs if k in datasets]
        rows = UsageRows(inputs=inputs)
        reads: set[ColumnReadRow] = set()
        # Every source adds what it shows (a producer's facet is often partial: dbt-ol's
        # columnLineage leaves out filters and columns a CTE selects but does not pass on,
        # which still break the job when renamed); each read is labelled with the most
        # trusted source that shows it, sources being listed most trusted first.
        for key in inputs:
            dataset_id = datasets[key].pk
            shown: dict[tuple[str, str], str] = {}
            for name, e in sources:
                for column_kind in e.reads.get(key, ()):
                    shown.setdefault(column_kind, name)
            if not shown:
                reads.add(ColumnReadRow(dataset_id, ALL_COLUMNS, DIRECT, UsageSource.INPUT.value))
                continue
            reads.update(ColumnReadRow(dataset_id, column, kind, name) for (column, kind), name in shown.items())
        # One row per (dataset, column, kind): an event naming a dataset and its alias gives two.
        rows.column_reads = sorted({(r.dataset_id, r.column, r.kind): r for r in sorted(reads)}.values())
        edges: dict[tuple, FieldEdgeRow] = {}
        for out in self.parsed.outputs:
            key = (out["namespace"], out["name"])
            if key not in datasets:
                continue
            for name, e in sources:  # as reads: every source adds, the most trusted labels
                for edge in e.edges.get(key, ()):
                    if edge.input_key not in datasets:
                        continue
                    row = FieldEdgeRow(datasets[key].pk, edge.field, datasets[edge.input_key].pk, edge.input_field,
                                       edge.kind, edge.subtype, edge.description, edge.masking, name,
                                       edge.through_star)
                    row_key = (row.dataset_id, row.field, row.input_dataset_id, row.input_field, row.kind)
                    kept = edges.setdefault(row_key, row)
                    if kept is not row and (kept.through_star is None or not kept.subtype or not kept.description):
                        # Only the parsed SQL knows whether a column is passed on by name or
                        # by `SELECT *`, and the expression that carries it; a facet rarely says.
                        edges[row_key] = kept._replace(
                            through_star=row.through_star if kept.through_star is None else kept.through_star,
                            subtype=kept.subtype or row.subtype, description=kept.description or row.description)
        rows.field_edges = [edges[k] for k in sorted(edges)]
        # An output's schema is its writer's word and replaces the stored one; an
        # input's only fills a gap (rewriting it would make every reader of a
        # popular dataset wait on its row).
        outputs = {(o["namespace"], o["name"]) for o in self.parsed.outputs}
        listed = schema_columns(self.parsed)
        schema_rows: dict[int, tuple] = {}
        for k, fields in carried.items():
            if k in datasets:
                row = (datasets[k].pk, json.dumps(fields, sort_keys=True), k in outputs, all(fields.values()),
                       json.dumps(listed.get(k) or []))
                # An event naming a dataset and its alias: one row per dataset, the written one.
                if row[0] not in schema_rows or row[2]:
                    schema_rows[row[0]] = row
        rows.schemas = sorted(schema_rows.values())
        # The schema each input carries is also what this job sees of it: which of a
        # contract's lanes the job reads (lanes.evidence). Kept per (dataset, job).
        seen: dict[int, tuple[int, str, str, bool]] = {}
        for k, fields in _schemas_in(self.parsed.payload.get("inputs") or []).items():
            if k in datasets:
                text, fingerprint = schema_fingerprint(fields)
                seen[datasets[k].pk] = (datasets[k].pk, fingerprint, text, all(fields.values()))
        rows.input_schemas = sorted(seen.values())
        return rows


ABSORBS = "absorbs "


def step_description(step: ValueStep) -> str:
    """An edge's description: the expression that carries the values (or the clause that
    uses them), led by the value changes it provably absorbs ("absorbs nulls:
    coalesce(amount, 0)"; of a join that pads nothing into the result, "absorbs nulls:
    o.customer_id = c.customer_id": a lost match drops the row), which
    lineage.column_graph reads back (`absorbed_by`); an INDIRECT one whose input's NULLs
    only drop rows says so after it ("drops rows: WHERE status <> 'cancelled'", `drops_rows`)."""
    text = step.fragment
    if step.drops:
        text = f"{DROPS}: {text}" if text else DROPS
    if step.absorbs:
        text = f"{ABSORBS}{','.join(sorted(step.absorbs))}: {text}"
    return text[:MAX_DESCRIPTION]


# An INDIRECT edge whose input's NULLs only drop rows of its output, the rows left as
# they were ("drops rows: WHERE status <> 'cancelled'"; lineage.sql_usage.ValueStep.drops).
DROPS = "drops rows"


def drops_rows(description: str) -> bool:
    """The edge's description says its input's NULLs only drop rows (`step_description`)."""
    if description.startswith(ABSORBS):
        description = description.partition(": ")[2]
    return description == DROPS or description.startswith(f"{DROPS}: ")


# dbt materializations written whole on every run (dbt-ol's `dbt_model` facet).
REBUILT_WHOLE = frozenset({"table", "view", "materialized_view"})
KEYED = "one row per value"


def keyed_description(text: str) -> str:
    """A DIRECT edge's description into a column its job's output holds one row per value
    of (it groups by that column alone and writes the output whole: `is_keyed`)."""
    return (f"{KEYED}: {text}" if text else KEYED)[:MAX_DESCRIPTION]


def is_keyed(description: str) -> bool:
    return description == KEYED or description.startswith(f"{KEYED}: ")


def absorbed_by(description: str) -> frozenset[str]:
    """The value changes an edge's description says it absorbs (`step_description`)."""
    if not description.startswith(ABSORBS):
        return frozenset()
    head, sep, _ = description[len(ABSORBS):].partition(": ")
    return frozenset(head.split(",")) if sep else frozenset()


def event_schemas(parsed: ParsedEvent) -> dict[DatasetKey, dict[str, str]]:
    """{dataset key: {column: type}} from the event's `schema` facets (inputs and
    outputs; an empty or malformed field list says nothing)."""
    return _schemas_in([*(parsed.payload.get("inputs") or []), *parsed.outputs])


def _schemas_in(datasets: list) -> dict[DatasetKey, dict[str, str]]:
    found: dict[DatasetKey, dict[str, str]] = {}
    for dataset in datasets:
        facet = (dataset.get("facets") or {}).get("schema") if isinstance(dataset, dict) else None
        fields = facet.get("fields") if isinstance(facet, dict) else None
        if not isinstance(fields, list):
            continue
        columns = {}
        for item in fields:
            if isinstance(item, dict) and isinstance(item.get("name"), str) and 0 < len(item["name"]) <= MAX_NAME:
                kind = item.get("type")
                columns[item["name"]] = kind if isinstance(kind, str) else ""
        key = _key_of(dataset)
        if columns and key is not None:
            found[key] = columns
    return found


def schema_columns(parsed: ParsedEvent) -> dict[DatasetKey, list[dict[str, str]]]:
    """{dataset key: [{name, type, description}]} from the event's `schema` facets, in their order."""
    found: dict[DatasetKey, list[dict[str, str]]] = {}
    for dataset in [*(parsed.payload.get("inputs") or []), *parsed.outputs]:
        facet = (dataset.get("facets") or {}).get("schema") if isinstance(dataset, dict) else None
        fields = facet.get("fields") if isinstance(facet, dict) else None
        if not isinstance(fields, list):
            continue
        listed = [{"name": item["name"], "type": item["type"] if isinstance(item.get("type"), str) else "",
                   "description": item["description"][:MAX_DESCRIPTION] if isinstance(item.get("description"), str) else ""}
                  for item in fields if isinstance(item, dict) and isinstance(item.get("name"), str)
                  and 0 < len(item["name"]) <= MAX_NAME]
        key = _key_of(dataset)
        if listed and key is not None:
            found[key] = listed
    return found


class RecentlyWritten:
    """The usage rows this process committed less than `refresh` seconds ago,
    left out of the next events' statements: within that time the database
    would leave them as they are anyway, and a statement with no row for a
    table does not touch that table (each table a statement touches costs
    PostgreSQL CPU per event). A pipeline sends the same facts run after run,
    so in steady state its events write no usage at all.

    It also remembers each job's last event read for usage (what `usage_said`
    gives of it) with the inputs it gave: an event of the job that says the
    same again (a run's COMPLETE after its START, the next run of a scheduled
    job) is not read for usage at all while every row of that event stays fresh.

    Remembered only after the event commits (a rolled-back event's rows are
    not taken as written); at most `size` facts, the oldest forgotten first.
    An output's schema counts as written only if unchanged (its column list);
    an input's (which only fills a gap) once any schema of the
    dataset was written or seen."""

    def __init__(self, refresh: float, size: int = 100_000) -> None:
        self.refresh, self.size = refresh, size
        self.facts: dict[tuple, float] = {}
        # job -> (when the oldest row of its last event was written, what that event said, its input keys)
        self.events: dict[tuple[str, str], tuple[float, list, tuple[DatasetKey, ...]]] = {}
        self.lock = threading.Lock()

    def repeated(self, job: tuple[str, str], said: list) -> tuple[DatasetKey, ...] | None:
        """The input keys of the job's last event if it said the same and its rows are all still fresh; else None."""
        found = self.events.get(job)
        if found is None or time.monotonic() - found[0] >= self.refresh or found[1] != said:
            return None
        return found[2]

    def to_write(self, rows: UsageRows, job: tuple[str, str], said: list | None = None,
                 ) -> tuple[UsageRows, Callable[[], None] | None]:
        """(the rows still to write, what to call once they are committed)."""
        now, facts, refresh = time.monotonic(), self.facts, self.refresh
        # The oldest write among the rows left out: an event saying the same again is
        # skipped only until the first of them is due again.
        oldest = now

        def due(key: tuple) -> bool:
            nonlocal oldest
            at = facts.get(key)
            if at is not None and now - at < refresh:
                oldest = min(oldest, at)
                return False
            return True

        reads = [(r, k) for r in rows.column_reads if due(k := ("r", *job, r.dataset_id, r.column, r.kind))]
        edges = [(e, k) for e in rows.field_edges if due(k := ("e", *job, *e[:5]))]
        schemas = [(s, k) for s in rows.schemas if due(k := ("s", s[0], s[1], s[4]) if s[2] else ("s", s[0]))]
        seen = [(s, k) for s in rows.input_schemas if due(k := ("i", *job, s[0], s[1]))]
        kept = replace(rows, column_reads=[r for r, _ in reads], field_edges=[e for e, _ in edges],
                       schemas=[s for s, _ in schemas], input_schemas=[s for s, _ in seen])
        if not (reads or edges or schemas or seen or said is not None):
            return kept, None
        # A written output's schema also counts as a schema of the dataset seen (what an input's key asks).
        keys = [*(k for _, k in (*reads, *edges, *schemas, *seen)), *(("s", s[0]) for s, _ in schemas if s[2])]
        inputs = tuple(rows.inputs)

        def remember() -> None:
            at = time.monotonic()
            with self.lock:
                for key in keys:
                    self.facts.pop(key, None)
                    self.facts[key] = at
                if said is not None:
                    self.events.pop(job, None)
                    self.events[job] = (min(oldest, at), said, inputs)
                if len(self.facts) > self.size:
                    # Rebuilt at once, not trimmed one by one: deleting a dict's oldest
                    # entries leaves holes that every next look-up for the oldest scans.
                    self.facts = dict([(k, t) for k, t in self.facts.items() if at - t < self.refresh][-self.size // 2:])
                if len(self.events) > self.size // 50:
                    # Each holds its event's facets: the jobs of the last `refresh` at most, fewer if many.
                    self.events = dict([(k, v) for k, v in self.events.items()
                                        if at - v[0] < self.refresh][-self.size // 100:])

        return kept, remember

    def clear(self) -> None:
        with self.lock:
            self.facts.clear()
            self.events.clear()


def usage_said(parsed: ParsedEvent) -> list:
    """Everything of an event that its usage rows are read from, beyond its job: its
    datasets and their schema, lineage and columnLineage facets, and its sql and
    lineage job facets. Two events of a job saying the same give the same rows."""
    def facets(dataset: Any, *names: str, group: str = "facets") -> list:
        found = dataset.get(group) if isinstance(dataset, dict) else None
        return [found.get(name) for name in names] if isinstance(found, dict) else []

    quality = ("dataQualityAssertions", "dataQualityMetrics")
    return [parsed.inputs,
            [(o["namespace"], o["name"], facets(o, "schema", "columnLineage", "lineage")) for o in parsed.outputs],
            [(facets(i, "schema", *quality), facets(i, *quality, group="inputFacets"))
             for i in parsed.payload.get("inputs") or ()],
            parsed.job_facets.get("sql"), parsed.job_facets.get("lineage")]

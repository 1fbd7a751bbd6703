"""Column lineage around a dataset field, in the shape of Marquez's
`GET /api/v1/column-lineage?nodeId=…&depth=…&withDownstream=…`.

The walk follows field edges (lineage.models.FieldEdge: an output field and the
input fields that fed it) from the start field upstream — and downstream with
`withDownstream` — for `depth` field hops, in one recursive SQL statement that
also resolves the node id, so its cost follows the neighbourhood, as the
dataset graph's does (lineage.graph). Edges older than COLUMN_USAGE_WINDOW do
not count, as column reads do not.

Node ids are Marquez's: `datasetField:<namespace>:<name>:<field>`,
`dataset:<namespace>:<name>` for every field of a dataset that has lineage, or
`job:<namespace>:<name>` for every field the job fed (its outputs' fields).
Namespaces and names may hold colons, so every split is tried against the
stored datasets (the longest namespace, then the longest name, wins).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Q
from django.utils import timezone

from lineage.column_usage import DROPS, KEYED, absorbed_by, drops_rows, is_keyed
from lineage.graph import GraphError, NodeNotFound
from lineage.models import DatasetSchema, FieldEdge, Job
from registry.db import prepared_cursor
from registry.models import Dataset
from registry.usage import ColumnRead, Effect, FlowStep, UsageKind, UsageSource, carried

MAX_DEPTH = 100
DEFAULT_DEPTH = 20
MAX_SPLITS = 200  # node id splits tried; an id with dozens of colons is not a real one

EDGES = FieldEdge._meta.db_table
DATASETS = Dataset._meta.db_table
SCHEMAS = DatasetSchema._meta.db_table
JOBS = Job._meta.db_table


@dataclass(frozen=True)
class ColumnNodeId:
    kind: str  # "datasetField" | "dataset" | "job"
    splits: list[tuple[str, str, str | None]]  # (namespace, name, field or None)


def parse_column_node_id(node_id: str) -> ColumnNodeId:
    """Every (namespace, name, field) a column-lineage node id allows."""
    kind, sep, rest = (node_id or "").partition(":")
    if not sep or kind not in ("datasetField", "dataset", "job"):
        raise GraphError(f"nodeId {node_id!r} is not of the form datasetField:<namespace>:<name>:<field>, "
                         "dataset:<namespace>:<name> or job:<namespace>:<name>.")
    # marquez-python appends "#<version>" when asked for a version: only the current lineage is kept.
    rest = rest.split("#", 1)[0] if kind != "datasetField" else rest
    colons = [i for i, char in enumerate(rest) if char == ":" and 0 < i < len(rest) - 1]
    splits: list[tuple[str, str, str | None]] = []
    if kind in ("dataset", "job"):
        splits = [(rest[:i], rest[i + 1:], None) for i in colons]
    else:
        for a, first in enumerate(colons):
            for second in colons[a + 1:]:
                if second > first + 1:
                    splits.append((rest[:first], rest[first + 1:second], rest[second + 1:]))
    if not splits:
        raise GraphError(f"nodeId {node_id!r} needs a namespace, a name{' and a field' if kind == 'datasetField' else ''}.")
    return ColumnNodeId(kind, splits[:MAX_SPLITS])


def check_request(depth: int | str | None, with_downstream: bool | str | None) -> tuple[int, bool]:
    if depth in (None, ""):
        depth = DEFAULT_DEPTH
    try:
        value = int(depth)
    except (TypeError, ValueError):
        raise GraphError(f"depth must be a whole number from 0 to {MAX_DEPTH}, not {depth!r}.") from None
    if not 0 <= value <= MAX_DEPTH:
        raise GraphError(f"depth must be from 0 to {MAX_DEPTH}, not {value}.")
    if isinstance(with_downstream, bool):
        return value, with_downstream
    text = (with_downstream or "false").strip().lower()
    if text not in ("true", "false", "1", "0"):
        raise GraphError(f"withDownstream must be true or false, not {with_downstream!r}.")
    return value, text in ("true", "1")


@cache
def column_walk_sql(vendor: str, kind: str = "dataset") -> str:
    """One statement: resolve the start fields, walk the field edges up (and down),
    and return the edge and node rows of the neighbourhood:

        ("s", dataset id, field, …)                                      a start field
        ("e", dataset id, field, input dataset id, input field, kind, subtype, description, masking)
        ("n", dataset id, field, NULL, namespace, name, field type, …)   a node

    Parameters: %(namespaces)s, %(names)s, %(fields)s (the candidate splits; a
    NULL field: every field of the dataset), %(depth)s, %(downstream)s, %(since)s.
    With `kind` "job" the candidates name a job, and the start fields are those
    its field edges feed."""
    if vendor == "postgresql":
        candidates = ("cand(ns, nm, f) AS (SELECT * FROM unnest(CAST(%(namespaces)s AS text[]), "
                      "CAST(%(names)s AS text[]), CAST(%(fields)s AS text[]))), ")
        field_type = "s.fields ->> n.field"
    else:  # SQLite: the candidates come as a JSON array of [namespace, name, field]
        candidates = ("cand(ns, nm, f) AS (SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]'), "
                      "json_extract(value, '$[2]') FROM json_each(%(candidates)s)), ")
        field_type = "json_extract(s.fields, '$.\"' || n.field || '\"')"
    known_field = (f"(EXISTS (SELECT 1 FROM {EDGES} x WHERE x.dataset_id = d.id AND x.field = c.f) "
                   f"OR EXISTS (SELECT 1 FROM {EDGES} x WHERE x.input_dataset_id = d.id AND x.input_field = c.f))")
    if kind == "job":
        # The job the id names (longest namespace, then longest name, wins), and the fields it feeds.
        resolve = (f"jb(id) AS (SELECT j.id FROM {JOBS} j JOIN cand c ON j.namespace = c.ns AND j.name = c.nm "
                   "ORDER BY length(j.namespace) DESC, length(j.name) DESC LIMIT 1), "
                   f"start(dataset_id, field) AS (SELECT DISTINCT e.dataset_id, e.field FROM {EDGES} e "
                   "JOIN jb ON e.job_id = jb.id WHERE e.last_seen_at >= %(since)s), ")
    else:
        resolve = None
    return (
        "WITH RECURSIVE " + candidates
        + (resolve if resolve else
        # The dataset the id names (longest namespace, then longest name, wins) …
        f"ds(id, f) AS (SELECT d.id, c.f FROM {DATASETS} d JOIN cand c ON d.namespace = c.ns AND d.name = c.nm "
        f"WHERE c.f IS NULL OR {known_field} "
        "ORDER BY length(d.namespace) DESC, length(d.name) DESC LIMIT 1), "
        # … and its start fields: the one named, or every field with lineage.
        "start(dataset_id, field) AS (SELECT ds.id, ds.f FROM ds WHERE ds.f IS NOT NULL "
        f"UNION SELECT e.dataset_id, e.field FROM {EDGES} e JOIN ds ON e.dataset_id = ds.id WHERE ds.f IS NULL "
        f"UNION SELECT e.input_dataset_id, e.input_field FROM {EDGES} e JOIN ds ON e.input_dataset_id = ds.id "
        "WHERE ds.f IS NULL), ")
        + "up(dataset_id, field, depth) AS (SELECT dataset_id, field, 0 FROM start UNION "
        f"SELECT e.input_dataset_id, e.input_field, u.depth + 1 FROM up u JOIN {EDGES} e "
        "ON e.dataset_id = u.dataset_id AND e.field = u.field "
        "WHERE u.depth < %(depth)s AND e.last_seen_at >= %(since)s), "
        "down(dataset_id, field, depth) AS (SELECT dataset_id, field, 0 FROM start WHERE %(downstream)s UNION "
        f"SELECT e.dataset_id, e.field, w.depth + 1 FROM down w JOIN {EDGES} e "
        "ON e.input_dataset_id = w.dataset_id AND e.input_field = w.field "
        "WHERE w.depth < %(depth)s AND e.last_seen_at >= %(since)s), "
        "nodes(dataset_id, field) AS (SELECT dataset_id, field FROM up UNION SELECT dataset_id, field FROM down) "
        "SELECT 's', dataset_id, field, NULL, NULL, NULL, NULL, NULL, NULL FROM start "
        "UNION ALL SELECT 'e', e.dataset_id, e.field, e.input_dataset_id, e.input_field, e.kind, e.subtype, "
        f"e.description, e.masking FROM {EDGES} e "
        "JOIN nodes a ON a.dataset_id = e.dataset_id AND a.field = e.field "
        "JOIN nodes b ON b.dataset_id = e.input_dataset_id AND b.field = e.input_field "
        "WHERE e.last_seen_at >= %(since)s "
        f"UNION ALL SELECT 'n', n.dataset_id, n.field, NULL, d.namespace, d.name, {field_type}, NULL, NULL "
        f"FROM nodes n JOIN {DATASETS} d ON d.id = n.dataset_id LEFT JOIN {SCHEMAS} s ON s.dataset_id = n.dataset_id"
    )


def column_lineage(node_id: str, *, depth: int | str | None = DEFAULT_DEPTH,
                   with_downstream: bool | str | None = False) -> dict[str, Any]:
    """The column lineage around `node_id` in Marquez's shape (one statement).
    Raises GraphError for a bad request, NodeNotFound for an unknown field."""
    depth, downstream = check_request(depth, with_downstream)
    parsed = parse_column_node_id(node_id)
    params: dict[str, Any] = {"depth": depth, "downstream": downstream,
                              "since": timezone.now() - settings.COLUMN_USAGE_WINDOW}
    if connection.vendor == "postgresql":
        params.update(namespaces=[s[0] for s in parsed.splits], names=[s[1] for s in parsed.splits],
                      fields=[s[2] for s in parsed.splits])
    else:
        import json

        params["candidates"] = json.dumps(parsed.splits)
    with prepared_cursor() as cursor:
        cursor.execute(column_walk_sql(connection.vendor, "job" if parsed.kind == "job" else "dataset"), params)
        rows = cursor.fetchall()
    if not any(row[0] == "s" for row in rows):
        what = "job" if parsed.kind == "job" else "dataset field"
        raise NodeNotFound(f"No {what} with id {node_id!r} has column lineage.")
    return to_marquez(rows)


def _field_id(namespace: str, name: str, field: str) -> str:
    return f"datasetField:{namespace}:{name}:{field}"


def to_marquez(rows: list[tuple]) -> dict[str, Any]:
    """{"graph": [{"id", "type": "DATASET_FIELD", "data", "inEdges", "outEdges"}]}, sorted
    by id; an edge goes from an input field (origin) to the field it feeds
    (destination) and is listed in both nodes' edges."""
    names: dict[int, tuple[str, str]] = {}
    nodes: dict[tuple[int, str], dict] = {}
    for tag, dataset_id, field, _, namespace, name, field_type, _, _ in rows:
        if tag == "n":
            names[dataset_id] = (namespace, name)
            nodes[(dataset_id, field)] = {
                "id": _field_id(namespace, name, field), "type": "DATASET_FIELD",
                "data": {"type": "DATASET_FIELD", "namespace": namespace, "dataset": name, "field": field,
                         "fieldType": field_type or None, "transformationDescription": None,
                         "transformationType": None, "inputFields": []},
                "inEdges": [], "outEdges": [],
            }
    links: dict[tuple, list[tuple]] = {}
    for tag, dataset_id, field, input_dataset_id, input_field, kind, subtype, description, masking in rows:
        if tag == "e" and (dataset_id, field) in nodes and (input_dataset_id, input_field) in nodes:
            # Several jobs may feed the same field from the same input: one edge, every transformation.
            links.setdefault(((dataset_id, field), (input_dataset_id, input_field)), []).append(
                (kind, subtype or "", description or "", bool(masking)))
    for (output, source), transformations in sorted(links.items(), key=lambda item: (nodes[item[0][0]]["id"],
                                                                                        nodes[item[0][1]]["id"])):
        target_node, input_node = nodes[output], nodes[source]
        transformations = sorted(set(transformations))
        main = next((t for t in transformations if t[0] == "DIRECT"), transformations[0])
        namespace, name = names[source[0]]
        target_node["data"]["inputFields"].append({
            "namespace": namespace, "dataset": name, "field": source[1],
            "transformationDescription": main[2] or None, "transformationType": main[0],
            "transformations": [{"type": k, "subtype": s or None, "description": d or None, "masking": m}
                                for k, s, d, m in transformations],
        })
        edge = {"origin": input_node["id"], "destination": target_node["id"]}
        input_node["outEdges"].append(edge)
        target_node["inEdges"].append(edge)
    for node in nodes.values():
        data = node["data"]
        direct = [f for f in data["inputFields"] if f["transformationType"] == "DIRECT"]
        if direct:
            data["transformationType"] = "DIRECT"
            data["transformationDescription"] = direct[0]["transformationDescription"]
        elif data["inputFields"]:
            data["transformationType"] = "INDIRECT"
        node["inEdges"].sort(key=lambda e: e["origin"])
        node["outEdges"].sort(key=lambda e: e["destination"])
    return {"graph": sorted(nodes.values(), key=lambda n: n["id"])}


def fed_steps(sources: dict[int, dict[str, set[str]] | None], now=None) -> list[FlowStep]:
    """One hop downstream for registry.hooks.column_steps: the output columns that the
    `sources` columns reach, through DIRECT field edges (their values flow into them,
    unless the edge's expression absorbs the change) and INDIRECT ones that change
    results (a join key, a group key, a filter, …), with the effects each carries
    (registry.usage.carries) and the SQL fragment of the edge. One query."""
    condition = Q()
    for dataset_id, columns in sources.items():
        condition |= Q(input_dataset_id=dataset_id) if columns is None else Q(
            input_dataset_id=dataset_id, input_field__in=sorted(columns))
    if not condition:
        return []
    steps: list[FlowStep] = []
    rows = (FieldEdge.objects.current(now).filter(condition)
            .values_list("input_dataset_id", "input_field", "dataset_id", "field", "kind", "subtype", "through_star",
                         "description", "job__namespace", "job__name"))
    for input_id, input_field, dataset_id, field_, kind, subtype, through_star, description, ns, name in rows.distinct():
        columns = sources[input_id]
        effects = Effect.ALL if columns is None else columns.get(input_field, ())
        absorbs = absorbed_by(description or "")
        found = carried(effects, subtype or "", through_star, kind=kind, absorbs=absorbs,
                        drops=drops_rows(description or ""))
        if Effect.RETYPED in found and kind == UsageKind.DIRECT and (subtype or "").upper() != "IDENTITY" \
                and not keeps_nulls(_shown(description or "")):
            # An expression of a new type may compute a NULL where it computed none (`NULLIF(code,
            # '0')` once '00' reads as 0): only a copy, or one that keeps NULLs, makes none.
            found = found | {Effect.NULLS}
        if found:
            steps.append(FlowStep(input_id, input_field, dataset_id, field_, f"{ns}/{name}", kind, subtype or "",
                                  _shown(description or ""), found))
    steps.sort(key=lambda s: (s.dataset_id, s.column, s.kind != UsageKind.DIRECT, s.job, s.input_dataset_id,
                              s.input_column))
    return steps


def _shown(description: str) -> str:
    """The SQL of an edge's description, without the absorbed changes or the one row per
    value it leads with."""
    if absorbed_by(description):
        description = description.partition(": ")[2]
    if description in (KEYED, DROPS):
        return ""
    if is_keyed(description) or drops_rows(description):
        return description.partition(": ")[2]
    return description


def _widened(absorbs: frozenset[str]) -> frozenset[str]:
    """What absorbs any new values absorbs narrowed ones too."""
    return absorbs | {Effect.NARROWED} if Effect.VALUES in absorbs else absorbs


def absorbing_jobs(touched: dict[int, dict[str, set[str]]], now=None) -> dict[tuple[int, str, str, str], str]:
    """For registry.hooks.column_absorbers: the jobs whose every use of a touched column
    absorbs every effect on it — each of their field edges from the column is DIRECT
    and its expression absorbs them (lineage.column_usage.absorbed_by), and no INDIRECT
    read of it was seen (a filter, a join, a check) — with the expression. Two queries."""
    wanted = {(d, c): set(e) for d, columns in touched.items() for c, e in (columns or {}).items()
              if e and not (set(e) - {Effect.RETYPED, Effect.NULLS, Effect.VALUES, Effect.NARROWED})}
    if not wanted:
        return {}
    condition = Q()
    for dataset_id, column in wanted:
        condition |= Q(input_dataset_id=dataset_id, input_field=column)
    uses: dict[tuple[int, str, str, str], list[tuple[str, str]]] = {}
    for dataset_id, column, kind, description, ns, name in (
            FieldEdge.objects.current(now).filter(condition)
            .values_list("input_dataset_id", "input_field", "kind", "description", "job__namespace", "job__name")):
        uses.setdefault((dataset_id, column, ns, name), []).append((kind, description or ""))
    read_condition = Q()
    for dataset_id, column in wanted:
        read_condition |= Q(dataset_id=dataset_id, column=column)
    steering = set(ColumnRead.objects.current(now).filter(read_condition, kind=UsageKind.INDIRECT)
                   .values_list("dataset_id", "column", "job_namespace", "job_name"))
    found = {}
    for key, edges in uses.items():
        effects = wanted[(key[0], key[1])]
        if key in steering or any(kind != UsageKind.DIRECT or not effects <= _widened(absorbed_by(text))
                                  for kind, text in edges):
            continue
        found[key] = "; ".join(sorted({_shown(text) for _, text in edges}))
    return found


# What in an edge's SQL may fail, or change meaning, once a column's values change while
# keeping their type (an enum narrowed, precision or length lost): a value named in a
# comparison or a list (`status = 'returned'`, `IN (…)`, `LIKE`), a division (a value
# rounded to 0 divides by zero), a cast to anything but text (cut text may no longer
# read as a number or a date).
_NAMES_A_VALUE = re.compile(r"(?:=|<>|!=|<|>|\bIN\s*\(|\bLIKE\b|\bBETWEEN\b)\s*(?:'|-?\d|\(\s*'|\(\s*-?\d)"
                            r"|(?:'|\b\d+)\s*(?:=|<>|!=|<|>)", re.IGNORECASE)
_DIVIDES = re.compile(r"/|\bDIV\b|\bMOD\b|%")
_CASTS = re.compile(r"\bCAST\s*\(.*?\bAS\s+(?!TEXT\b|VARCHAR\b|CHAR\b|STRING\b|CHARACTER\b)\w+|::\s*(?!TEXT\b|VARCHAR\b)\w+",
                    re.IGNORECASE | re.DOTALL)


# The expressions whose result is NULL exactly when an input is (or never): a copy, arithmetic
# but division (a divisor turned 0 is NULL in some engines), concatenation, the aggregates
# that skip NULLs, COALESCE, a cast to text. Anything else may turn a value into NULL.
_KEEPS_NULLS = ("Column", "Identifier", "Literal", "Null", "Boolean", "Alias", "Paren", "Dot", "Add", "Sub", "Mul",
                "Neg", "DPipe", "Sum", "Min", "Max", "Avg", "Coalesce")


@cache
def keeps_nulls(fragment: str) -> bool:
    """Is `fragment` (a DIRECT edge's SQL: `SUM(i.quantity) AS units`) NULL exactly where its
    inputs make it so, whatever their type: built only of `_KEEPS_NULLS` and casts to text?
    False when it cannot be parsed, or is empty (nothing says what it computes)."""
    from lineage.sql_usage import sqlglot

    if not fragment.strip():
        return False
    try:
        tree = sqlglot.parse_one(fragment)
    except (sqlglot.errors.SqlglotError, RecursionError, ValueError):
        return False
    for node in tree.walk():
        if isinstance(node, sqlglot.exp.Cast):
            if node.to.this not in (sqlglot.exp.DataType.Type.TEXT, sqlglot.exp.DataType.Type.VARCHAR) \
                    or node.to.expressions:
                return False
        elif isinstance(node, sqlglot.exp.DataType):
            continue
        elif type(node).__name__ not in _KEEPS_NULLS:
            return False
    return True


def depends_on_values(description: str) -> str | None:
    """Why an edge's SQL depends on its input's values beyond carrying them (None: it only carries them)."""
    text = _shown(description)
    if _NAMES_A_VALUE.search(text):
        return "names a value"
    if _DIVIDES.search(text):
        return "divides"
    if _CASTS.search(text):
        return "casts"
    return None


# What each kind of data-quality assertion can notice (dbt's generic tests, as dbt-ol
# names them): `not_null` only NULLs; `unique` values that merge (new or narrowed ones);
# `accepted_values` only new values (NULLs and a narrowed enum pass it: dbt skips NULLs);
# `relationships` new or narrowed values of the child (dbt skips NULL children). Any
# other assertion (a singular test, an expectation) may notice anything.
NOTICES = {
    "not_null": frozenset({Effect.NULLS}),
    "unique": frozenset({Effect.VALUES, Effect.NARROWED, Effect.RETYPED}),
    "accepted_values": frozenset({Effect.VALUES, Effect.RETYPED}),
    "relationships": frozenset({Effect.VALUES, Effect.NARROWED, Effect.RETYPED}),
}
_SAID = {Effect.NULLS: "NULLs", Effect.VALUES: "new values", Effect.NARROWED: "narrowed values",
         Effect.DROPPED: "dropped rows", Effect.RETYPED: "a new type"}


def _checks_of(keys: set[tuple[int, str, str, str]], now=None) -> tuple[
        dict[tuple[int, str, str, str], list[str] | None], dict[tuple[int, str, str], list[str]]]:
    """The assertions each check job's latest run made of each column (None: it also
    measured the column without asserting, or asserted on the whole dataset), and the
    column-less assertions of each check job that a test job of their own answers for
    (`_reported_alone`). One query, two when an assertion names no column."""
    from lineage.models import QualityCheck

    if not keys:
        return {}, {}
    condition = Q()
    for dataset_id, _column, ns, name in keys:
        condition |= Q(dataset_id=dataset_id, job_namespace=ns, job_name=name)
    latest: dict[tuple[int, str, str], QualityCheck] = {}
    for check in QualityCheck.objects.filter(condition).order_by("dataset_id", "job_namespace", "job_name",
                                                                  "-event_time", "-id"):
        latest.setdefault((check.dataset_id, check.job_namespace, check.job_name), check)
    found: dict[tuple[int, str, str, str], list[str] | None] = {}
    reported = _reported_alone({(dataset_id, str(a.get("name") or "")) for (dataset_id, _, _), check in latest.items()
                                for a in check.assertions if isinstance(a, dict) and not a.get("column")}, now)
    for dataset_id, column, ns, name in keys:
        check = latest.get((dataset_id, ns, name))
        if check is None or (check.metrics or {}).get("columnMetrics", {}).get(column) is not None:
            found[(dataset_id, column, ns, name)] = None
            continue
        asserted = [a for a in check.assertions if isinstance(a, dict)
                    and (a.get("column") or (dataset_id, str(a.get("name") or "")) not in reported)]
        if any(not a.get("column") for a in asserted):
            found[(dataset_id, column, ns, name)] = None
            continue
        found[(dataset_id, column, ns, name)] = sorted({str(a.get("assertion") or "") for a in asserted
                                                         if a.get("column") == column})
    moved = {}
    for (dataset_id, ns, name), check in latest.items():
        alone = sorted({str(a.get("name")) for a in check.assertions if isinstance(a, dict) and not a.get("column")
                        and (dataset_id, str(a.get("name") or "")) in reported})
        if alone:
            moved[(dataset_id, ns, name)] = alone
    return found, moved


def _reported_alone(assertions: set[tuple[int, str]], now=None) -> set[tuple[int, str]]:
    """The (dataset id, assertion name) of the column-less assertions that are also a test job
    of their own reading that dataset: dbt-ol attaches a singular test's result, with no
    column, to the test job of one model it reads, and reports the test again as the job
    `test.<project>.<name>`, with its own team and its own reading of every model it selects
    from. That job answers for the test; the model's check job answers for its column
    assertions. One query, none when no assertion lacks a column."""
    named = {(dataset_id, name) for dataset_id, name in assertions if name}
    if not named:
        return set()
    condition = Q()
    for dataset_id, name in named:
        condition |= Q(dataset_id=dataset_id, job_name__startswith="test.", job_name__endswith=f".{name}")
    return {(dataset_id, job_name.rpartition(".")[2]) for dataset_id, job_name in
            ColumnRead.objects.current(now).filter(condition).values_list("dataset_id", "job_name")} & named


def _noticed_by(assertion: str, one_row_per_value: bool) -> frozenset[str]:
    """What an assertion of a column can notice; `unique` nothing when the column holds one
    row per value by construction (`_keyed_columns`), whatever values reach it."""
    return frozenset() if assertion == "unique" and one_row_per_value else NOTICES[assertion]


def _keyed_columns(dataset_ids: set[int], now=None) -> set[tuple[int, str]]:
    """The columns of `dataset_ids` that hold one row per value whatever their values: one
    job writes the dataset (every current field edge into it is that job's), its SQL groups
    by the column alone and its producer says it writes the dataset whole on every run
    (lineage.column_usage.is_keyed). One query."""
    if not dataset_ids:
        return set()
    writers: dict[int, set[int]] = {}
    marked: set[tuple[int, str]] = set()
    for dataset_id, field_, job_id, kind, description in (
            FieldEdge.objects.current(now).filter(dataset_id__in=sorted(dataset_ids))
            .values_list("dataset_id", "field", "job_id", "kind", "description")):
        writers.setdefault(dataset_id, set()).add(job_id)
        if kind == UsageKind.DIRECT and is_keyed(description or ""):
            marked.add((dataset_id, field_))
    return {(d, f) for d, f in marked if len(writers[d]) == 1}


def passing_jobs(touched: dict[int, dict[str, set[str]]], now=None) -> dict[tuple[int, str, str, str], str]:
    """For registry.hooks.column_passers: the jobs that read a column whose values changed
    with its type kept — NULLs allowed, an enum narrowed, precision lost — and that
    nothing of theirs would notice it, with how the values go on (or why not noticed):

    - a job that only carries the values on: every read of the column was seen in its
      SQL and feeds a field edge of one of its outputs (a value, a join, group or filter
      key, a window), and no edge's SQL depends on the values (`depends_on_values`; for
      NULLs nothing does: SQL passes them on). The change reaches its outputs
      (registry.usage.value_flow), where whoever checks or depends on them is asked. A
      job with no outputs is where values end up: it is never passing.
    - a check whose every assertion of the column cannot fail on the change (`NOTICES`:
      a `not_null` of values that were narrowed, an `accepted_values` of NULLs).

    A `unique` assertion of a column that holds one row per value by construction (its
    job groups by it alone and writes the dataset whole: `_keyed_columns`) cannot fail.

    A column-less assertion that a test job of its own also reports (dbt-ol's singular test:
    `_reported_alone`) is that job's to answer for, not the check job's it is attached to.

    Returns {(dataset id, column, job namespace, job name): how}. Three queries, one more when
    a check asserts `unique`, one more when an assertion names no column."""
    wanted = {(d, c): set(e) for d, columns in touched.items() for c, e in (columns or {}).items()
              if e and not (set(e) - {Effect.NULLS, Effect.VALUES, Effect.NARROWED, Effect.DROPPED, Effect.RETYPED})}
    if not wanted:
        return {}
    condition = Q()
    for dataset_id, column in wanted:
        condition |= Q(input_dataset_id=dataset_id, input_field=column)
    uses: dict[tuple[int, str, str, str], list[tuple[str, str, str, str]]] = {}
    for dataset_id, column, kind, subtype, description, output, ns, name in (
            FieldEdge.objects.current(now).filter(condition)
            .values_list("input_dataset_id", "input_field", "kind", "subtype", "description", "dataset__name",
                         "job__namespace", "job__name").distinct()):
        uses.setdefault((dataset_id, column, ns, name), []).append((kind, subtype or "", description or "", output))
    read_condition = Q()
    for dataset_id, column in wanted:
        read_condition |= Q(dataset_id=dataset_id, column=column)
    checked = set(ColumnRead.objects.current(now).filter(read_condition, source=UsageSource.QUALITY_CHECK)
                  .values_list("dataset_id", "column", "job_namespace", "job_name"))
    found = {}
    checks, moved = _checks_of(checked - set(uses), now)
    keyed = _keyed_columns({k[0] for k, a in checks.items() if a and "unique" in a}, now)
    for key, assertions in checks.items():
        effects = wanted[(key[0], key[1])]
        one_row = (key[0], key[1]) in keyed
        if assertions and all(a in NOTICES and not (effects & _noticed_by(a, one_row)) for a in assertions):
            said = " or ".join(_SAID[e] for e in sorted(effects))
            found[key] = f"checks {key[1]} only by {', '.join(assertions)}, which {said} cannot fail" + (
                f" ({key[1]} holds one row per value: the job writing it groups by it alone)"
                if one_row and "unique" in assertions else "") + (
                f" ({', '.join(moved[(key[0], key[2], key[3])])}, with no column, is answered for by its own test job)"
                if (key[0], key[2], key[3]) in moved else "")
    for key, edges in uses.items():
        if key in checked:
            continue
        effects = wanted[(key[0], key[1])]
        if Effect.RETYPED in effects:
            continue  # a job's SQL on a new type is judged per expression (change_requests.typecheck)
        if effects & {Effect.VALUES, Effect.NARROWED} and any(depends_on_values(text) for _, _, text, _ in edges):
            continue
        # Rows dropped leave every row's values as they were, but an aggregate of fewer
        # rows may be the 0 something is divided by.
        if Effect.DROPPED in effects and any(depends_on_values(text) == "divides" for _, _, text, _ in edges):
            continue
        ways = sorted({f"{'its values' if kind == UsageKind.DIRECT else (subtype or kind).lower().replace('_', ' ') + ' key'}"
                       f" into {output}" + (f" (`{_shown(text)}`)" if _shown(text) else "")
                       for kind, subtype, text, output in edges})
        found[key] = f"carries {key[1]} on as " + "; ".join(ways[:3]) + (
            f"; and {len(ways) - 3} more" if len(ways) > 3 else "")
    return found

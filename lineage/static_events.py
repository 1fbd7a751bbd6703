"""Storing DatasetEvents and JobEvents: static metadata, outside any run.

`store_static_event(parsed, by=actor)` takes an event that passed
`lineage.validation.check_event` as a DatasetEvent or a JobEvent and, in one
transaction:

1. checks the gate (the bearer token), then inserts the raw event keyed by the
   SHA-256 of its canonical JSON; a retry stores nothing else;
2. finds or creates (unowned, audited) the datasets it names, aliases resolved;
3. a DatasetEvent: sets the dataset's current schema from its `schema` facet
   and keeps its other facets (lineage.facets) — ownership, documentation,
   symlinks, lifecycle state, data quality;
   a JobEvent: upserts the job and its facets, and when it lists `inputs` or
   `outputs`, replaces the job's declared lineage (DeclaredEdge) with them;
   its datasets' facets are kept as a DatasetEvent's are.

The token may write only the datasets it may (registry.auth.LineageWriter): a
DatasetEvent's dataset or a JobEvent output it may not write refuses the
event; a JobEvent *input* it may not write keeps its declared edge, and the
facets that would change that dataset (its schema, quality, aliases, …:
lineage.facets.STATE_FACETS) are dropped, counted and logged.

Nothing is announced: `dataset_written` means a run wrote data, and these
events write none (so no freshness, no drift check). Rarer than RunEvents, so
plain ORM statements rather than the run path's single round trip.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.utils import timezone

from lineage.facet_schemas import without_facets
from lineage.facets import (
    Provenance,
    facet_rows,
    facets_refused,
    invalid_facet_warnings,
    record_facets,
    report_refused,
)
from lineage.ingest import (
    Gate,
    StoredEvent,
    _job_sql,
    _prep,
    check_outputs,
    datasets_for,
    keep_job_facts,
    own_transaction,
    parse_event_time,
    refuse_foreign_aliases,
    unwritable,
)
from lineage.models import DatasetSchema, DeclaredEdge, Direction, Job, Origin, StaticEvent
from lineage.validation import EventKind
from registry.auth import LineageWriter

MAX_DESCRIPTION = 2000


@dataclass(frozen=True)
class ParsedStatic:
    """The parts of a valid DatasetEvent or JobEvent the stored rows need."""

    kind: str  # Origin.DATASET or Origin.JOB
    checksum: str
    event_time: datetime
    namespace: str  # the dataset's (DatasetEvent) or the job's (JobEvent)
    name: str
    payload: dict  # the event the registry acts on: as sent, less its invalid facets
    canonical: str  # the event as sent, stored raw
    invalid: tuple = ()  # lineage.facet_schemas.InvalidFacet: the facets left out of `payload`

    @classmethod
    def of(cls, event: dict, kind: str, invalid: Iterable = ()) -> ParsedStatic:
        canonical = json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        invalid = tuple(invalid)
        event = without_facets(event, list(invalid))
        named = event["dataset"] if kind == EventKind.DATASET else event["job"]
        return cls(kind=Origin.DATASET if kind == EventKind.DATASET else Origin.JOB,
                   checksum=hashlib.sha256(canonical.encode()).hexdigest(),
                   event_time=parse_event_time(event["eventTime"]), namespace=named["namespace"],
                   name=named["name"], payload=event, canonical=canonical, invalid=invalid)


def store_static_event(parsed: ParsedStatic, *, by=None, gate: Gate | None = None,
                       writer: LineageWriter | None = None) -> StoredEvent:
    """Store one DatasetEvent or JobEvent in its own transaction (see the module
    docstring). The token (the `gate`'s, else `writer`) may write only the
    datasets it may (lineage.ingest.check_outputs): a DatasetEvent's dataset,
    a JobEvent's outputs; a JobEvent's inputs it may not write lose their state facets."""
    refused = invalid_facet_warnings(parsed.invalid, parsed.payload.get("producer", "")) if parsed.invalid else []
    with own_transaction():
        if gate is not None:
            with connection.cursor() as cursor:
                writer = gate.run_alone(cursor)
        if not _insert_raw(parsed):
            return StoredEvent(stored=False, run_id=None, kind=parsed.kind, refused=refused)
        if parsed.kind == Origin.DATASET:
            created, written = _apply_dataset_event(parsed, by, writer)
        else:
            created, written = _apply_job_event(parsed, by, writer)
        refused += written
    report_refused(refused, where=f"{'DatasetEvent of dataset' if parsed.kind == Origin.DATASET else 'JobEvent of job'} "
                                  f"{parsed.namespace}/{parsed.name}")
    return StoredEvent(stored=True, run_id=None, kind=parsed.kind, datasets_created=created, refused=refused)


def _insert_raw(parsed: ParsedStatic) -> bool:
    table = StaticEvent._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (checksum, kind, event_time, namespace, name, payload, received_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (checksum) DO NOTHING RETURNING id",
            [parsed.checksum, parsed.kind, _prep(StaticEvent, "event_time", parsed.event_time), parsed.namespace,
             parsed.name, parsed.canonical, _prep(StaticEvent, "received_at", timezone.now())])
        return cursor.fetchone() is not None


def _apply_dataset_event(parsed: ParsedStatic, by, writer: LineageWriter | None) -> tuple[int, list]:
    """(datasets created, the aliases dropped: names of datasets the token may not write)."""
    dataset = parsed.payload["dataset"]
    key = (dataset["namespace"], dataset["name"])
    datasets, created = datasets_for([key], by=by)
    check_outputs(writer, [key], datasets)
    set_schema(datasets[key].pk, (dataset.get("facets") or {}).get("schema"), Origin.DATASET, parsed.event_time)
    rows = facet_rows([dataset])
    refused = refuse_foreign_aliases(writer, rows, {"dataset": [dataset]})
    if rows:
        record_facets(rows, datasets, Provenance(Origin.DATASET, parsed.event_time))
    return created, refused


def _apply_job_event(parsed: ParsedStatic, by, writer: LineageWriter | None) -> tuple[int, list]:
    """(datasets created, the facets dropped: inputs' writes the token may not make)."""
    event = parsed.payload
    inputs = [d for d in event.get("inputs") or []]
    outputs = [d for d in event.get("outputs") or []]
    keys = sorted({(d["namespace"], d["name"]) for d in inputs + outputs})
    datasets, created = datasets_for(keys, by=by)
    check_outputs(writer, sorted({(d["namespace"], d["name"]) for d in outputs}), datasets)
    foreign = unwritable(writer, {(d["namespace"], d["name"]) for d in inputs}, datasets)
    refused = facets_refused(inputs, "inputs", foreign, writer.key_prefix) if foreign else []
    job_facets = event["job"].get("facets") or {}
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(_job_sql(), {"job_namespace": parsed.namespace, "job_name": parsed.name,
                                    "job_facets": _prep(Job, "facets", job_facets), "has_job_facets": bool(job_facets),
                                    "now": _prep(Job, "updated_at", now)})
        job_id = cursor.fetchone()[0]
    keep_job_facts((parsed.namespace, parsed.name), job_facets, None)
    if "inputs" in event or "outputs" in event:
        declare_lineage(job_id, {(datasets[(d["namespace"], d["name"])].pk, Direction.INPUT.value) for d in inputs}
                        | {(datasets[(d["namespace"], d["name"])].pk, Direction.OUTPUT.value) for d in outputs},
                        parsed.event_time)
    for out in outputs:
        set_schema(datasets[(out["namespace"], out["name"])].pk, (out.get("facets") or {}).get("schema"),
                   Origin.JOB, parsed.event_time, job_id=job_id)
    # The declared edges above keep every input; only their writes are dropped.
    inputs = [d for d in inputs if (d["namespace"], d["name"]) not in foreign]
    for inp in inputs:
        set_schema(datasets[(inp["namespace"], inp["name"])].pk, (inp.get("facets") or {}).get("schema"),
                   Origin.JOB, parsed.event_time, job_id=job_id, only_if_missing=True)
    written = {(d["namespace"], d["name"]) for d in outputs}
    rows = facet_rows(inputs + outputs, read_only={(d["namespace"], d["name"]) for d in inputs} - written)
    refused += refuse_foreign_aliases(writer, rows, {"inputs": event.get("inputs") or [], "outputs": outputs})
    if rows:
        record_facets(rows, datasets, Provenance(Origin.JOB, parsed.event_time, parsed.namespace, parsed.name))
    return created, refused


def declare_lineage(job_id: int, edges: set[tuple[int, str]], declared_at: datetime) -> None:
    """The job's declared lineage becomes `edges` ({(dataset pk, direction)})."""
    keep = DeclaredEdge.objects.filter(job_id=job_id)
    stale = [pk for pk, dataset_id, direction in keep.values_list("pk", "dataset_id", "direction")
             if (dataset_id, direction) not in edges]
    if stale:
        DeclaredEdge.objects.filter(pk__in=stale).delete()
    if edges:
        DeclaredEdge.objects.bulk_create(
            [DeclaredEdge(job_id=job_id, dataset_id=d, direction=direction, declared_at=declared_at)
             for d, direction in sorted(edges)],
            update_conflicts=True, unique_fields=["job", "direction", "dataset"], update_fields=["declared_at"])


def schema_of(facet: dict) -> tuple[dict[str, str], list[dict[str, str]]]:
    """({column: type or ''}, [{name, type, description}] in order) of a schema facet's top-level fields."""
    fields, columns = {}, []
    for item in facet.get("fields") or []:
        name = item.get("name")
        if not isinstance(name, str) or not 0 < len(name) <= 500:
            continue
        fields[name] = item.get("type") if isinstance(item.get("type"), str) else ""
        description = item.get("description") if isinstance(item.get("description"), str) else ""
        columns.append({"name": name, "type": fields[name], "description": description[:MAX_DESCRIPTION]})
    return fields, columns


def set_schema(dataset_id: int, facet: dict | None, origin: str, event_time: datetime, *, job_id: int | None = None,
               only_if_missing: bool = False) -> None:
    """Make `facet` the dataset's current schema (a `_deleted` facet forgets it).
    A partial schema (an untyped field) never replaces a complete one."""
    if not isinstance(facet, dict):
        return
    if facet.get("_deleted") is True:
        if not only_if_missing:
            DatasetSchema.objects.filter(dataset_id=dataset_id).delete()
        return
    fields, columns = schema_of(facet)
    if not fields:
        return
    complete = all(fields.values())
    current = DatasetSchema.objects.select_for_update().filter(dataset_id=dataset_id).first()
    if current is not None and (only_if_missing or (current.complete and not complete)):
        return
    DatasetSchema.objects.update_or_create(dataset_id=dataset_id, defaults={
        "fields": fields, "complete": complete, "columns": columns, "origin": origin, "job_id": job_id,
        "run_uuid": None, "event_time": event_time, "updated_at": timezone.now()})

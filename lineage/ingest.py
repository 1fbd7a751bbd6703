"""Storing RunEvents: one transaction per event.

`store_event(event, by=actor)` takes an event that already passed
`lineage.validation.run_event_problems` and, in one transaction:

1. inserts the raw event, keyed by the SHA-256 of its canonical JSON; if that
   key exists the event is a retry and nothing else is written or announced;
2. finds the event's datasets and inserts the missing ones unowned
   (`INSERT … ON CONFLICT DO NOTHING`, in a fixed order, so concurrent events
   that first see the same dataset neither fail nor deadlock), with an audit
   row for each dataset this event created;
3. upserts the job and the run (the run's state follows eventType; a late
   START never undoes a COMPLETE);
4. inserts the job→dataset and run→dataset edges (`ON CONFLICT DO NOTHING`);
5. sends `lineage.signals.dataset_written` once per output dataset.

Lineage therefore appears at START or RUNNING, not only at COMPLETE. Every
write is an upsert, never read-then-insert, and the statements are portable
between PostgreSQL and SQLite (the embedded demo).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from uuid import UUID

from django.db import OperationalError, connection, transaction
from django.utils import timezone

from lineage.models import Direction, Job, JobDataset, Run, RunDataset, RunEvent, RunState
from lineage.signals import dataset_written
from registry.models import AuditEvent, Dataset

DATASET_FIRST_SEEN = "dataset.first_seen"

# A later event may only move a run forward: START < RUNNING < a final state.
_STATE_RANK = {RunState.NEW: 0, RunState.START: 1, RunState.RUNNING: 2,
               RunState.COMPLETE: 3, RunState.FAIL: 3, RunState.ABORT: 3}
_RETRYABLE_SQLSTATES = {"40P01", "40001"}  # deadlock detected, serialization failure
_RETRIES = 3


@dataclass
class StoredEvent:
    stored: bool  # False: an identical event was stored before (a retry)
    run_id: str
    datasets_created: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"status": "stored" if self.stored else "duplicate", "runId": self.run_id,
                "datasetsCreated": self.datasets_created}


@dataclass(frozen=True)
class ParsedEvent:
    """The parts of a valid RunEvent that the stored rows need."""

    checksum: str
    run_uuid: UUID
    event_type: str
    event_time: datetime
    job_namespace: str
    job_name: str
    job_facets: dict
    run_facets: dict
    inputs: list[tuple[str, str]]
    outputs: list[dict]  # the output dataset objects, as sent
    payload: dict

    @classmethod
    def of(cls, event: dict) -> ParsedEvent:
        canonical = json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        seen: set[tuple[str, str]] = set()
        outputs = []
        for out in event.get("outputs") or []:
            key = (out["namespace"], out["name"])
            if key not in seen:
                seen.add(key)
                outputs.append(out)
        inputs = sorted({(i["namespace"], i["name"]) for i in event.get("inputs") or []})
        return cls(
            checksum=hashlib.sha256(canonical.encode()).hexdigest(),
            run_uuid=UUID(event["run"]["runId"]),
            event_type=event.get("eventType") or "",
            event_time=parse_event_time(event["eventTime"]),
            job_namespace=event["job"]["namespace"],
            job_name=event["job"]["name"],
            job_facets=event["job"].get("facets") or {},
            run_facets=event["run"].get("facets") or {},
            inputs=inputs,
            outputs=outputs,
            payload=event,
        )

    @property
    def dataset_keys(self) -> list[tuple[str, str]]:
        return sorted(set(self.inputs) | {(o["namespace"], o["name"]) for o in self.outputs})


def parse_event_time(value: str) -> datetime:
    """An RFC 3339 date-time (already validated) as an aware datetime."""
    text = value.upper()
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        # RFC 3339 allows a leap second, which datetime cannot hold.
        return datetime.fromisoformat(text.replace(":60", ":59", 1))


def store_event(event: dict, *, by=None) -> StoredEvent:
    """Store one valid RunEvent in its own transaction (see the module docstring)."""
    parsed = ParsedEvent.of(event)
    attempt = 0
    while True:
        try:
            with transaction.atomic():
                return _store(parsed, by)
        except OperationalError as exc:
            attempt += 1
            sqlstate = getattr(exc.__cause__, "sqlstate", None)
            if sqlstate not in _RETRYABLE_SQLSTATES or attempt >= _RETRIES or connection.in_atomic_block:
                raise
            time.sleep(0.01 * attempt)


def store_events(events: Iterable[dict], *, by=None) -> list[StoredEvent]:
    """A batch: each event in its own transaction, in order."""
    return [store_event(event, by=by) for event in events]


# --- the statements ----------------------------------------------------------

def _prep(model, field_name: str, value: Any) -> Any:
    return model._meta.get_field(field_name).get_db_prep_save(value, connection)


def _store(parsed: ParsedEvent, by) -> StoredEvent:
    now = timezone.now()
    run_uuid = str(parsed.run_uuid)
    found = _insert_raw_event(parsed, now)
    if found is None:
        return StoredEvent(stored=False, run_id=run_uuid)

    datasets, created = datasets_for(parsed.dataset_keys, by=by, found=found)
    if connection.vendor == "postgresql":
        job, run = _upsert_job_run_and_edges(parsed, datasets, now)
    else:
        job = _upsert_job(parsed, now)
        run = _upsert_run(parsed, job, now)
        _insert_edges(job, run, parsed, datasets, now)

    succeeded = parsed.event_type == RunState.COMPLETE
    for out in parsed.outputs:
        facets = out.get("facets") or {}
        stats = (out.get("outputFacets") or {}).get("outputStatistics") or {}
        row_count = stats.get("rowCount")
        dataset_written.send(
            sender=RunEvent,
            dataset=datasets[(out["namespace"], out["name"])],
            job=job,
            run=run,
            event_type=parsed.event_type or "OTHER",
            event_time=parsed.event_time,
            succeeded=succeeded,
            # The facet's own fields are not part of the RunEvent check: a
            # rowCount sent as a string is ignored rather than trusted.
            row_count=row_count if isinstance(row_count, int) and not isinstance(row_count, bool) else None,
            schema_facet=facets.get("schema") if isinstance(facets.get("schema"), dict) else None,
        )
    return StoredEvent(stored=True, run_id=run_uuid, datasets_created=created)


def _insert_raw_event(parsed: ParsedEvent, now: datetime) -> dict[tuple[str, str], Dataset] | None:
    """Insert the raw event; None if it was stored before, else the event's
    datasets that already exist (on PostgreSQL found by the same statement)."""
    sql = (
        f"INSERT INTO {RunEvent._meta.db_table} "
        "(checksum, run_uuid, event_type, event_time, job_namespace, job_name, payload, received_at) "
        "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (checksum) DO NOTHING RETURNING id"
    )
    params = [
        parsed.checksum,
        _prep(RunEvent, "run_uuid", parsed.run_uuid),
        parsed.event_type,
        _prep(RunEvent, "event_time", parsed.event_time),
        parsed.job_namespace,
        parsed.job_name,
        _prep(RunEvent, "payload", parsed.payload),
        _prep(RunEvent, "received_at", now),
    ]
    keys = parsed.dataset_keys
    if connection.vendor != "postgresql" or not keys:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            if cursor.fetchone() is None:
                return None
        return _select_datasets(keys) if keys else {}
    # One round trip: no rows = a duplicate; a row of NULLs = no dataset known yet.
    select, select_params = _datasets_sql(keys, alias="d")
    combined = (f"WITH ev AS ({sql}) SELECT ev.id, d.* FROM ev LEFT JOIN ({select}) d ON true")
    with connection.cursor() as cursor:
        cursor.execute(combined, params + select_params)
        rows = cursor.fetchall()
    if not rows:
        return None
    return _datasets_from_rows([row[1:] for row in rows if row[1] is not None])


def datasets_for(keys: list[tuple[str, str]], *, by=None,
                 found: dict[tuple[str, str], Dataset] | None = None) -> tuple[dict[tuple[str, str], Dataset], int]:
    """The datasets named by (namespace, name), creating missing ones unowned.
    Returns them by key and how many this call created. `found`: those
    already looked up."""
    if not keys:
        return {}, 0
    found = dict(found) if found is not None else _select_datasets(keys)
    missing = [k for k in keys if k not in found]
    if not missing:
        return found, 0
    created = _insert_unowned_datasets(missing)
    found.update({(d.namespace, d.name): d for d in created})
    still_missing = [k for k in missing if k not in found]
    if still_missing:
        # Created by a concurrent event that committed after our statement
        # began: a new statement sees them.
        found.update(_select_datasets(still_missing))
    if created:
        AuditEvent.objects.bulk_create([
            AuditEvent(**AuditEvent.fields_for(by, DATASET_FIRST_SEEN, d, after={"namespace": d.namespace, "name": d.name, "owner_team": None}))
            for d in created
        ])
    return found, len(created)


def _datasets_sql(keys: list[tuple[str, str]], alias: str = "t") -> tuple[str, list]:
    fields = Dataset._meta.concrete_fields
    quote = connection.ops.quote_name
    where = " OR ".join(["(namespace = %s AND name = %s)"] * len(keys))
    sql = f"SELECT {', '.join(quote(f.column) for f in fields)} FROM {quote(Dataset._meta.db_table)} WHERE {where}"
    return sql, [v for key in keys for v in key]


def _select_datasets(keys: list[tuple[str, str]]) -> dict[tuple[str, str], Dataset]:
    # Plain SQL over every column: this runs for every event, and compiling
    # the equivalent ORM query costs more than the query itself.
    sql, params = _datasets_sql(keys)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return _datasets_from_rows(cursor.fetchall())


def _datasets_from_rows(rows: list) -> dict[tuple[str, str], Dataset]:
    fields = Dataset._meta.concrete_fields
    names = [f.attname for f in fields]
    columns = [f.get_col(Dataset._meta.db_table) for f in fields]
    # Backend converters (SQLite's text datetimes); none apply on PostgreSQL.
    converters = [(i, col, connection.ops.get_db_converters(col) + fields[i].get_db_converters(connection))
                  for i, col in enumerate(columns)]
    converters = [c for c in converters if c[2]]
    found = {}
    for row in rows:
        values = list(row)
        for i, col, funcs in converters:
            for func in funcs:
                values[i] = func(values[i], col, connection)
        obj = Dataset.from_db(connection.alias, names, values)
        found[(obj.namespace, obj.name)] = obj
    return found


def _insert_unowned_datasets(keys: list[tuple[str, str]]) -> list[Dataset]:
    # Built from the model's fields so that columns added to Dataset later get
    # their Python defaults here too.
    fields = [f for f in Dataset._meta.concrete_fields if not f.primary_key]
    rows, params = [], []
    for namespace, name in keys:  # sorted: concurrent inserts take locks in one order
        obj = Dataset(namespace=namespace, name=name)
        rows.append("(" + ", ".join(["%s"] * len(fields)) + ")")
        params.extend(f.get_db_prep_save(f.pre_save(obj, True), connection) for f in fields)
    quote = connection.ops.quote_name
    sql = (
        f"INSERT INTO {quote(Dataset._meta.db_table)} ({', '.join(quote(f.column) for f in fields)}) "
        f"VALUES {', '.join(rows)} ON CONFLICT (namespace, name) DO NOTHING RETURNING id, namespace, name"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        returned = cursor.fetchall()
    by_key = {}
    for pk, namespace, name in returned:
        obj = Dataset(namespace=namespace, name=name)
        obj.pk = pk
        obj._state.adding = False
        obj._state.db = connection.alias
        by_key[(namespace, name)] = obj
    return [by_key[k] for k in keys if k in by_key]


def _job_sql(parsed: ParsedEvent, now: datetime) -> tuple[str, list]:
    table = Job._meta.db_table
    sql = (
        f"INSERT INTO {table} (namespace, name, facets, created_at, updated_at) VALUES (%s, %s, %s, %s, %s) "
        "ON CONFLICT (namespace, name) DO UPDATE SET "
        f"facets = CASE WHEN %s THEN EXCLUDED.facets ELSE {table}.facets END, updated_at = EXCLUDED.updated_at "
        "RETURNING id, facets, created_at"
    )
    stamp = _prep(Job, "updated_at", now)
    return sql, [parsed.job_namespace, parsed.job_name, _prep(Job, "facets", parsed.job_facets), stamp, stamp,
                 bool(parsed.job_facets)]


def _job_from(parsed: ParsedEvent, pk: int, facets: Any, created: Any, now: datetime) -> Job:
    return _loaded(Job, id=pk, namespace=parsed.job_namespace, name=parsed.job_name,
                   facets=parsed.job_facets or _decode(facets), created_at=created, updated_at=now)


def _upsert_job(parsed: ParsedEvent, now: datetime) -> Job:
    sql, params = _job_sql(parsed, now)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        pk, facets, created = cursor.fetchone()
    return _job_from(parsed, pk, facets, created, now)


def _upsert_job_run_and_edges(parsed: ParsedEvent, datasets: dict, now: datetime) -> tuple[Job, Run]:
    """PostgreSQL: the job, the run and both edge sets in one statement (one
    round trip instead of four; each costs more than the statement's work)."""
    job_sql, job_params = _job_sql(parsed, now)
    run_sql, run_params = _run_sql(parsed, now, job_id_from="job")
    edges = _edges(parsed, datasets)
    directions = [direction for _, direction in edges]
    dataset_ids = [dataset_id for dataset_id, _ in edges]
    sql = (
        f"WITH job AS ({job_sql}), run AS ({run_sql}), "
        f"je AS (INSERT INTO {JobDataset._meta.db_table} (job_id, direction, dataset_id, first_seen_at) "
        "SELECT job.id, e.direction, e.dataset_id, %s FROM job, unnest(%s::varchar[], %s::bigint[]) AS e(direction, dataset_id) "
        "ORDER BY e.dataset_id, e.direction ON CONFLICT (job_id, direction, dataset_id) DO NOTHING), "
        f"re AS (INSERT INTO {RunDataset._meta.db_table} (run_id, direction, dataset_id) "
        "SELECT run.id, e.direction, e.dataset_id FROM run, unnest(%s::varchar[], %s::bigint[]) AS e(direction, dataset_id) "
        "ORDER BY e.dataset_id, e.direction ON CONFLICT (run_id, direction, dataset_id) DO NOTHING) "
        "SELECT job.id, job.facets, job.created_at, run.id, run.state, run.state_at, run.started_at, run.ended_at, "
        "run.created_at FROM job, run"
    )
    params = [*job_params, *run_params, _prep(JobDataset, "first_seen_at", now), directions, dataset_ids,
              directions, dataset_ids]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        job_pk, facets, job_created, *run_row = cursor.fetchone()
    job = _job_from(parsed, job_pk, facets, job_created, now)
    names = ["id", "state", "state_at", "started_at", "ended_at", "created_at"]
    run = _loaded(Run, run_uuid=parsed.run_uuid, job_id=job_pk, **dict(zip(names, run_row, strict=True)))
    run.job = job
    return job, run


def _loaded(model, **values):
    """An instance of rows we just wrote, without reading them back."""
    obj = model(**values)
    obj._state.adding = False
    obj._state.db = connection.alias
    return obj


def _decode(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _run_sql(parsed: ParsedEvent, now: datetime, *, job_id_from: str | int) -> tuple[str, list]:
    """The run upsert; `job_id_from` is the job's pk, or the name of a CTE holding it."""
    table = Run._meta.db_table
    state = parsed.event_type if parsed.event_type in _STATE_RANK and parsed.event_type != RunState.NEW else None
    rank = _STATE_RANK.get(state, -1)
    old_rank = " ".join(f"WHEN '{s}' THEN {r}" for s, r in _STATE_RANK.items())
    # Whether this event moves the run: a higher rank, or the same rank and not older.
    moves = (f"(%s > (CASE {table}.state {old_rank} ELSE 0 END) OR "
             f"(%s = (CASE {table}.state {old_rank} ELSE 0 END) AND EXCLUDED.state_at >= {table}.state_at))")
    event_time = _prep(Run, "state_at", parsed.event_time)
    is_start = parsed.event_type in (RunState.START, RunState.RUNNING)
    values = [
        _prep(Run, "run_uuid", parsed.run_uuid), state or RunState.NEW, event_time,
        event_time if is_start else None, event_time if rank == 3 else None,
        _prep(Run, "facets", parsed.run_facets), _prep(Run, "created_at", now),
    ]
    if isinstance(job_id_from, str):
        source = f"SELECT %s, {job_id_from}.id, %s, %s, %s, %s, %s, %s FROM {job_id_from}"
        params = values
    else:
        source = "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
        params = [values[0], job_id_from, *values[1:]]
    sql = (
        f"INSERT INTO {table} (run_uuid, job_id, state, state_at, started_at, ended_at, facets, created_at) "
        f"{source} "
        "ON CONFLICT (run_uuid) DO UPDATE SET "
        f"state = CASE WHEN {moves} THEN EXCLUDED.state ELSE {table}.state END, "
        f"state_at = CASE WHEN {moves} THEN EXCLUDED.state_at ELSE {table}.state_at END, "
        f"started_at = CASE WHEN {table}.started_at IS NULL OR EXCLUDED.started_at < {table}.started_at "
        f"THEN COALESCE(EXCLUDED.started_at, {table}.started_at) ELSE {table}.started_at END, "
        f"ended_at = COALESCE(EXCLUDED.ended_at, {table}.ended_at), "
        f"facets = CASE WHEN %s THEN EXCLUDED.facets ELSE {table}.facets END "
        "RETURNING id, job_id, state, state_at, started_at, ended_at, created_at"
    )
    return sql, [*params, rank, rank, rank, rank, bool(parsed.run_facets)]


def _upsert_run(parsed: ParsedEvent, job: Job, now: datetime) -> Run:
    sql, params = _run_sql(parsed, now, job_id_from=job.pk)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    names = ["id", "job_id", "state", "state_at", "started_at", "ended_at", "created_at"]
    run = _loaded(Run, run_uuid=parsed.run_uuid, **dict(zip(names, row, strict=True)))
    # SQLite hands back text; the model's converters make datetimes of it.
    if isinstance(run.state_at, str):
        run.refresh_from_db(fields=["state_at", "started_at", "ended_at", "created_at"])
    run.job = job
    return run


def _edges(parsed: ParsedEvent, datasets: dict) -> list[tuple[int, str]]:
    """(dataset pk, direction), sorted: concurrent inserts take locks in one order."""
    return sorted({(datasets[k].pk, Direction.INPUT.value) for k in parsed.inputs}
                  | {(datasets[(o["namespace"], o["name"])].pk, Direction.OUTPUT.value) for o in parsed.outputs})


def _insert_edges(job: Job, run: Run, parsed: ParsedEvent, datasets: dict, now: datetime) -> None:
    edges = _edges(parsed, datasets)
    if not edges:
        return
    stamp = _prep(JobDataset, "first_seen_at", now)
    job_rows = ", ".join(["(%s, %s, %s, %s)"] * len(edges))
    run_rows = ", ".join(["(%s, %s, %s)"] * len(edges))
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {JobDataset._meta.db_table} (job_id, direction, dataset_id, first_seen_at) VALUES {job_rows} "
            "ON CONFLICT (job_id, direction, dataset_id) DO NOTHING",
            [v for dataset_id, direction in edges for v in (job.pk, direction, dataset_id, stamp)],
        )
        cursor.execute(
            f"INSERT INTO {RunDataset._meta.db_table} (run_id, direction, dataset_id) VALUES {run_rows} "
            "ON CONFLICT (run_id, direction, dataset_id) DO NOTHING",
            [v for dataset_id, direction in edges for v in (run.pk, direction, dataset_id)],
        )

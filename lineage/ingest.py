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
   and upserts the columns the job read of each input, the field edges
   (column lineage) and the schemas the event carries (lineage.column_usage:
   one multi-row `INSERT … ON CONFLICT DO UPDATE` per table, inside the same
   statement on PostgreSQL);
5. sends `lineage.signals.dataset_written` once per output dataset.

An event sent with a token (a `gate`, or a `writer` already checked) records
the token and its team on the raw event and the run, and is refused
(`WriteRefused`, which rolls back all it wrote) when one of its outputs is a
dataset the token may not write (registry.auth.LineageWriter). A facet that
changes an *input* it may not write (its schema, quality checks, aliases,
ownership, documentation, …: lineage.facets.STATE_FACETS) is a write too, and
is dropped rather than the event: the reader's edges and column usage are
stored, the facet is counted and logged, and the answer lists it under
`warnings`. The owners come with the dataset rows the statement in step 1
reads anyway, so the decision costs no query.

Lineage therefore appears at START or RUNNING, not only at COMPLETE. Every
write is an upsert, never read-then-insert, and the statements are portable
between PostgreSQL and SQLite (the embedded demo).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import cache
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, InterfaceError, OperationalError, connection, transaction
from django.utils import timezone

from lineage.column_usage import RecentlyWritten, UsagePlan, UsageRows, usage_said
from lineage.facet_schemas import without_facets
from lineage.facets import (
    FacetRows,
    Provenance,
    RefusedFacet,
    facet_rows,
    facets_refused,
    invalid_facet_warnings,
    record_facets,
    refuse_aliases,
    report_refused,
)
from lineage.models import (
    DatasetAlias,
    DatasetSchema,
    Direction,
    FieldEdge,
    Job,
    JobDataset,
    Origin,
    Run,
    RunDataset,
    RunEvent,
    RunState,
)
from lineage.signals import dataset_flags, dataset_written
from registry.auth import LineageWriter
from registry.db import on_postgresql, prepared_cursor
from registry.models import AuditEvent, Dataset
from registry.ownership import NO_FACTS, JobFacts, job_facts, record_job_facts
from registry.usage import ColumnRead, InputSchema

DATASET_FIRST_SEEN = "dataset.first_seen"

# A later event may only move a run forward: START < RUNNING < a final state.
_STATE_RANK = {RunState.NEW: 0, RunState.START: 1, RunState.RUNNING: 2,
               RunState.COMPLETE: 3, RunState.FAIL: 3, RunState.ABORT: 3}
_RETRYABLE_SQLSTATES = {"40P01", "40001"}  # deadlock detected, serialization failure
_RETRIES = 3
# A column read or field edge seen again sooner than this keeps its row (and its
# evidence) as it is: a job running every few seconds would otherwise rewrite
# every row and its index entries per event, for an age that counts in days.
USAGE_REFRESH = timedelta(minutes=1)
# What this process wrote within USAGE_REFRESH is not sent again.
RECENT_USAGE = RecentlyWritten(USAGE_REFRESH.total_seconds())


@dataclass
class StoredEvent:
    stored: bool  # False: an identical event was stored before (a retry)
    run_id: str | None  # None for a DatasetEvent or JobEvent
    datasets_created: int = 0
    kind: str = "run"  # lineage.models.Origin
    # Facets left out: writes to datasets the token may not write (lineage.facets).
    refused: list[RefusedFacet] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        answer = {"status": "stored" if self.stored else "duplicate", "datasetsCreated": self.datasets_created}
        if self.run_id is not None:
            answer["runId"] = self.run_id
        else:
            answer["eventKind"] = "DatasetEvent" if self.kind == "dataset" else "JobEvent"
        if self.refused:
            answer["warnings"] = [facet.to_dict() for facet in self.refused]
        return answer


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
    payload: dict  # the event the registry acts on: as sent, less its invalid facets
    canonical: str  # the event as sent, as canonical JSON text, stored as the raw payload
    invalid: tuple = ()  # lineage.facet_schemas.InvalidFacet: the facets left out of `payload`

    @classmethod
    def of(cls, event: dict, invalid: Iterable = ()) -> ParsedEvent:
        """The event as sent; `invalid`: its facets that break their own schemas,
        kept in the raw event and left out of everything else."""
        canonical = json.dumps(event, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        invalid = tuple(invalid)
        event = without_facets(event, list(invalid))
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
            canonical=canonical,
            invalid=invalid,
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


@contextmanager
def own_transaction() -> Iterator[None]:
    """`transaction.atomic()` for one event, and what a database failure in it
    means. One before COMMIT was sent stored nothing (PostgreSQL rolls back what
    a lost connection left open): the exception is marked `nothing_stored`. One
    during the COMMIT is not: the commit may have happened and only its answer
    been lost, so no one can say the event was not stored (a retry is safe
    either way: it is a duplicate or it is stored)."""
    committing = False
    try:
        with transaction.atomic():
            yield
            committing = True  # the block ended (a return included): leaving it commits
    except (OperationalError, InterfaceError) as exc:
        if not committing:
            exc.nothing_stored = True
        raise


@dataclass(frozen=True)
class Gate:
    """A check an event must pass in its own transaction: the bearer token of
    the request that sent it. `sql` returns at most one row whose first column
    is never NULL, with columns `id` (the token) and `team_id` (its team, or
    NULL), which the raw event row records; on PostgreSQL it travels with the
    event's first statement (one round trip fewer per event). `check(row or
    None)` runs right after and raises to refuse the event, which rolls back
    all it wrote; else it returns the LineageWriter the event is checked
    against and attributed to."""

    sql: str
    params: list
    check: Callable[[tuple | None], LineageWriter]

    def run_alone(self, cursor) -> LineageWriter:
        """The gate as a query of its own (SQLite, or before reading a body); the check's writer."""
        cursor.execute(self.sql, self.params)
        return self.check(cursor.fetchone())


def store_event(event: dict | ParsedEvent, *, by=None, gate: Gate | None = None,
                writer: LineageWriter | None = None, token=None) -> StoredEvent:
    """Store one valid RunEvent in its own transaction (see the module docstring).
    `writer`: the token that sent it, when no `gate` says so; `token`: that
    ApiToken (loaded lazily), which listeners of dataset_written receive."""
    parsed = event if isinstance(event, ParsedEvent) else ParsedEvent.of(event)
    attempt = 0
    while True:
        try:
            with own_transaction():
                stored = _store(parsed, by, gate, writer, token)
            if parsed.invalid:
                stored.refused[:0] = invalid_facet_warnings(parsed.invalid, parsed.payload.get("producer", ""))
            report_refused(stored.refused, where=f"run {stored.run_id} of job {parsed.job_namespace}/{parsed.job_name}")
            return stored
        except OperationalError as exc:
            attempt += 1
            sqlstate = getattr(exc.__cause__, "sqlstate", None)
            if sqlstate not in _RETRYABLE_SQLSTATES or attempt >= _RETRIES or connection.in_atomic_block:
                raise
            time.sleep(0.01 * attempt)


def store_events(events: Iterable[dict | ParsedEvent], *, by=None, writer: LineageWriter | None = None) -> list[StoredEvent]:
    """A batch: each event in its own transaction, in order."""
    return [store_event(event, by=by, writer=writer) for event in events]


# --- what a job's facets say of its owner (registry.ownership) ----------------------

class RecentJobFacts:
    """The ownership facts (registry.ownership.JobFacts) this process last
    committed for each job: an event saying the same again writes nothing, so
    a job's steady stream of events costs no statement for them. At most `size`
    jobs are remembered; then the memory starts again."""

    def __init__(self, size: int = 100_000) -> None:
        self.size, self.facts = size, {}

    def clear(self) -> None:
        self.facts = {}

    def remember(self, job: tuple[str, str], facts: JobFacts) -> None:
        if len(self.facts) >= self.size:
            self.facts = {}
        self.facts[job] = facts


RECENT_JOB_FACTS = RecentJobFacts()


def keep_job_facts(job: tuple[str, str], job_facets: dict, new_job: bool | None) -> None:
    """Keep what the event says for the job's ownership (its dbt_node and
    ownership facets) when the job is new (`new_job`; None: not known) or they
    may have changed, and decide its team again if so (registry.ownership)."""
    facts = job_facts(job_facets) if job_facets else NO_FACTS
    if new_job is False and (not facts.said or RECENT_JOB_FACTS.facts.get(job) == facts):
        return
    if new_job is None and RECENT_JOB_FACTS.facts.get(job) == facts:
        return
    record_job_facts(job[0], job[1], facts)
    transaction.on_commit(lambda: RECENT_JOB_FACTS.remember(job, facts))


# --- who may write what (registry.auth.LineageWriter) ----------------------------

class WriteRefused(Exception):
    """An event names as its output a dataset its token may not write; raised
    inside the event's transaction, so nothing of the event is stored."""

    def __init__(self, writer: LineageWriter, dataset: Dataset):
        self.dataset = (dataset.namespace, dataset.name)
        super().__init__(
            f"Token {writer.key_prefix}… may not write dataset {dataset.namespace}/{dataset.name}: another team owns it. "
            "A token writes its team's datasets and unowned ones; a platform-wide ingest token "
            "(scope lineage:write:any) writes any.")


def check_outputs(writer: LineageWriter | None, keys: Iterable[tuple[str, str]], datasets: dict) -> None:
    """Refuse the event if `writer` may not write one of the datasets `keys` name
    (`datasets`: by key, with owner_team_id loaded)."""
    if writer is None or writer.any_dataset:
        return
    for key in keys:
        dataset = datasets[key]
        if not writer.may_write(dataset.owner_team_id):
            raise WriteRefused(writer, dataset)


def unwritable(writer: LineageWriter | None, keys: Iterable[tuple[str, str]], datasets: dict) -> set[tuple[str, str]]:
    """Those of `keys` naming a dataset `writer` may not write (`datasets`: by key,
    with owner_team_id loaded): the facets an event carries for them are dropped."""
    if writer is None or writer.any_dataset:
        return set()
    return {key for key in keys if not writer.may_write(datasets[key].owner_team_id)}


def refuse_foreign_aliases(writer: LineageWriter | None, rows: FacetRows, sides: dict[str, list[dict]]) -> list[RefusedFacet]:
    """Take out of `rows` the aliases naming a dataset `writer` may not write (an
    alias is shown on the dataset whose name it takes, and a name is claimed
    once): one query, for the events that carry aliases."""
    if writer is None or writer.any_dataset or not rows.aliases:
        return []
    named = _select_datasets(sorted(rows.alias_keys()))
    names = {key for key, dataset in named.items() if not writer.may_write(dataset.owner_team_id)}
    return refuse_aliases(rows, sides, names, writer.key_prefix) if names else []


def written_keys(parsed) -> list[tuple[str, str]]:
    """The datasets an event writes: a RunEvent's or JobEvent's outputs, a DatasetEvent's dataset."""
    if isinstance(parsed, ParsedEvent):
        return [(o["namespace"], o["name"]) for o in parsed.outputs]
    payload = parsed.payload
    if "dataset" in payload:
        return [(payload["dataset"]["namespace"], payload["dataset"]["name"])]
    return [(o["namespace"], o["name"]) for o in payload.get("outputs") or []]


def refuse_foreign_outputs(writer: LineageWriter, events: list) -> None:
    """Before storing a batch, refuse it for an output its token may not write
    (one query for the batch; each event checks again as it is stored)."""
    if writer.any_dataset:
        return
    keys = sorted({key for parsed in events for key in written_keys(parsed)})
    if keys:
        found = _select_datasets(keys)
        check_outputs(writer, [k for k in keys if k in found], found)


# --- the statements ----------------------------------------------------------

def _prep(model, field_name: str, value: Any) -> Any:
    """A value as the database takes it. psycopg adapts datetimes and UUIDs
    itself (most of the ingest's values), so on PostgreSQL only JSON goes
    through the field; SQLite needs the field's conversions to text."""
    if isinstance(value, datetime | UUID) and on_postgresql():
        return value
    return model._meta.get_field(field_name).get_db_prep_save(value, connection)


def _store(parsed: ParsedEvent, by, gate: Gate | None, writer: LineageWriter | None, token) -> StoredEvent:
    now = timezone.now()
    run_uuid = str(parsed.run_uuid)
    job_key = (parsed.job_namespace, parsed.job_name)
    said = usage_said(parsed) if settings.LINEAGE_COLUMN_USAGE else None
    # An event saying what its job's last one did within USAGE_REFRESH has nothing
    # to write but the inputs it gave, for the run's edges.
    repeated = RECENT_USAGE.repeated(job_key, said) if said is not None else None
    plan = UsagePlan.of(parsed) if said is not None and repeated is None else None
    keys = plan.lookup_keys() if plan else sorted({*parsed.dataset_keys, *(repeated or ())})
    found, schemas, gate_writer = _insert_raw_event(parsed, now, gate, keys, writer,
                                                    with_schemas=bool(plan and plan.has_sql))
    writer = gate_writer if gate is not None else writer
    if found is None:
        return StoredEvent(stored=False, run_id=run_uuid)

    datasets, created = datasets_for(plan.resolve(found) if plan else keys, by=by, found=found)
    check_outputs(writer, written_keys(parsed), datasets)
    # Inputs the token may not write: the reading is stored, their state facets are not.
    foreign = unwritable(writer, parsed.inputs, datasets)
    inputs = parsed.payload.get("inputs") or []
    refused = facets_refused(inputs, "inputs", foreign, writer.key_prefix) if foreign else []
    usage = plan.rows(datasets, schemas) if plan else UsageRows(inputs=list(repeated or ()))
    if refused:
        inputs = [i for i in inputs if (i["namespace"], i["name"]) not in foreign]
        foreign_ids = {datasets[key].pk for key in foreign}
        if any(row[0] in foreign_ids for row in usage.schemas):
            usage.schemas = [row for row in usage.schemas if row[0] not in foreign_ids]
            # Not remembered as said: the dataset's writer saying the same must still be heard.
            said = None
    if usage:
        usage, remember = RECENT_USAGE.to_write(usage, job_key, said)
        if remember is not None:
            transaction.on_commit(remember)
    team = writer.team_id if writer is not None else None
    if on_postgresql():
        with prepared_cursor() as cursor:
            job_pk, run_pk, new_job = _upsert_job_run_and_edges(cursor, parsed, datasets, now, usage, writer)
    else:
        job_pk, run_pk = _upsert_job_and_run(parsed, now, writer)
        new_job = None  # not known: the facts are written unless this process wrote the same
        _insert_edges(job_pk, run_pk, parsed, datasets, now, usage)
        _upsert_usage(job_pk, parsed, usage, now, team)
    keep_job_facts(job_key, parsed.job_facets, new_job)
    # Ownership, documentation, symlinks, data quality, …: most events carry none.
    kept = facet_rows([*inputs, *parsed.outputs],
                      read_only=set(parsed.inputs) - {(o["namespace"], o["name"]) for o in parsed.outputs})
    if kept.aliases:
        refused += refuse_foreign_aliases(writer, kept, {"inputs": parsed.payload.get("inputs") or [],
                                                         "outputs": parsed.payload.get("outputs") or []})
    if kept:
        record_facets(kept, datasets, Provenance(Origin.RUN, parsed.event_time, parsed.job_namespace, parsed.job_name,
                                                 parsed.run_uuid, parsed.event_type))
    # What listeners need; the rest of each row loads on first access.
    job = Job.from_db(DEFAULT_DB_ALIAS, ["id", "namespace", "name"], [job_pk, parsed.job_namespace, parsed.job_name])
    run = Run.from_db(DEFAULT_DB_ALIAS, ["id", "run_uuid", "job_id"], [run_pk, parsed.run_uuid, job_pk])
    run.job = job

    succeeded = parsed.event_type == RunState.COMPLETE
    for out in parsed.outputs:
        facets = out.get("facets") or {}
        output_facets = out.get("outputFacets") or {}
        stats = output_facets.get("outputStatistics") or {}
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
            facets=facets,
            output_facets=output_facets,
            sent_by=by,
            token=token,
        )
    return StoredEvent(stored=True, run_id=run_uuid, datasets_created=created, refused=refused)


def _insert_raw_event(parsed: ParsedEvent, now: datetime, gate: Gate | None, keys: list[tuple[str, str]],
                      writer: LineageWriter | None = None, *, with_schemas: bool = False,
                      ) -> tuple[dict[tuple[str, str], Dataset] | None, dict[tuple[str, str], dict], LineageWriter | None]:
    """Insert the raw event once the gate passes, with the token that sent it
    (the gate's, else `writer`'s). Returns (None if it was stored before, else
    those of `keys` that name existing datasets; with `with_schemas`, their
    stored columns; the gate's writer). On PostgreSQL the datasets (and
    schemas) are found, and the gate checked, by the same statement."""
    params = [
        parsed.checksum,
        _prep(RunEvent, "run_uuid", parsed.run_uuid),
        parsed.event_type,
        _prep(RunEvent, "event_time", parsed.event_time),
        parsed.job_namespace,
        parsed.job_name,
        # Already serialized for the checksum: the database parses it (jsonb
        # on PostgreSQL, text on SQLite) rather than Python dumping it again.
        parsed.canonical,
        _prep(RunEvent, "received_at", now),
    ]
    if not on_postgresql():
        with connection.cursor() as cursor:
            if gate is not None:
                writer = gate.run_alone(cursor)
            cursor.execute(_raw_event_sql(), [*params, *_sender(writer)])
            if cursor.fetchone() is None:
                return None, {}, writer
        found = _select_datasets(keys) if keys else {}
        return found, _select_schemas(found) if with_schemas and found else {}, writer
    names = [json.dumps(keys)]
    with prepared_cursor() as cursor:
        if gate is None:
            cursor.execute(_raw_event_and_datasets_sql(with_schemas), [*params, *_sender(writer), *names])
        else:
            cursor.execute(_gated_raw_event_and_datasets_sql(gate.sql, with_schemas), [*gate.params, *params, *names])
        rows = cursor.fetchall()
    width = 1 + len(_DATASET_FIELDS) + len(dataset_flags())
    extra = 1 if with_schemas else 0
    if gate is not None:
        gate_row = rows[0][width + extra:]
        writer = gate.check(gate_row if gate_row[0] is not None else None)
        if rows[0][0] is not None and writer.team_id != writer.token_team_id:
            # A person's token, attributed to their only team: the statement
            # knew the token's team (none) only; person tokens pay this one.
            _attribute_raw_event(rows[0][0], parsed.event_time, writer.team_id)
    if not rows or rows[0][0] is None:
        return None, {}, writer
    found = _datasets_from_rows([row[1:width] for row in rows if row[1] is not None])
    schemas = {}
    if with_schemas:
        for row in rows:
            if row[1] is not None and row[width] is not None:
                fields = row[width]
                schemas[(row[2], row[3])] = json.loads(fields) if isinstance(fields, str) else fields
    return found, schemas, writer


def _sender(writer: LineageWriter | None) -> list[int | None]:
    """The raw event's token and team columns."""
    return [writer.token_id, writer.team_id] if writer is not None else [None, None]


def _attribute_raw_event(event_id: int, event_time: datetime, team_id: int) -> None:
    # With its event time, the update reads the one partition holding the row.
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {RunEvent._meta.db_table} SET token_team_id = %s WHERE id = %s AND event_time = %s",
                       [team_id, event_id, event_time])


def _select_schemas(found: dict[tuple[str, str], Dataset]) -> dict[tuple[str, str], dict]:
    keys = {d.pk: key for key, d in found.items()}
    return {keys[pk]: fields for pk, fields in
            DatasetSchema.objects.filter(dataset_id__in=list(keys)).values_list("dataset_id", "fields")}


@cache
def _raw_event_sql(*, gated: bool = False) -> str:
    # The sender: the gate's token and its team (at most one row), else two parameters.
    columns = "checksum, run_uuid, event_type, event_time, job_namespace, job_name, payload, received_at, token_id, token_team_id"
    values = ("SELECT %s, %s, %s, %s, %s, %s, %s, %s, gate.id, gate.team_id FROM gate" if gated
              else "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)")
    return (f"INSERT INTO {RunEvent._meta.db_table} ({columns}) {values} "
            # The raw events' unique key holds the partition key (lineage.models.RunEvent).
            "ON CONFLICT (checksum, event_time) DO NOTHING RETURNING id")


def _datasets_by_name_sql(with_schemas: bool = False) -> str:
    # The names go as one JSON array of [namespace, name] pairs so that the
    # statement's text is the same whatever the number of datasets, and so
    # that PostgreSQL keeps one generic plan for it: it estimates the rows of
    # json_array_elements alike with or without the value, where it counts
    # the elements of a known array for unnest; with the flags' subqueries
    # per dataset, an unnest of arrays never made the generic plan look cheap
    # enough, and the statement was planned again for every event (about a
    # quarter of a millisecond of PostgreSQL CPU). The stored schemas only
    # join in for an event whose SQL may need them (every table a statement
    # touches costs PostgreSQL CPU).
    schemas = (f", s.fields AS lineage_fields FROM {connection.ops.quote_name(Dataset._meta.db_table)} t "
               f"LEFT JOIN {DatasetSchema._meta.db_table} s ON s.dataset_id = t.id" if with_schemas
               else f" FROM {connection.ops.quote_name(Dataset._meta.db_table)} t")
    return (f"SELECT {_dataset_columns()}{schemas} "
            "JOIN json_array_elements(CAST(%s AS json)) AS k(v) ON t.namespace = k.v->>0 AND t.name = k.v->>1")


@cache
def _raw_event_and_datasets_sql(with_schemas: bool = False) -> str:
    # One prepared round trip: no rows = a duplicate; a row of NULLs = no dataset known yet.
    return (f"WITH ev AS ({_raw_event_sql()}) SELECT ev.id, d.* FROM ev "
            f"LEFT JOIN ({_datasets_by_name_sql(with_schemas)}) d ON true")


@cache
def _gated_raw_event_and_datasets_sql(gate_sql: str, with_schemas: bool = False) -> str:
    # Always one row at least, ending with the gate's columns (NULLs when it found nothing).
    return (
        f"WITH gate AS ({gate_sql}), ev AS ({_raw_event_sql(gated=True)}) "
        "SELECT ev.id, d.*, g.* FROM (SELECT 1) AS one LEFT JOIN gate g ON true LEFT JOIN ev ON true "
        f"LEFT JOIN ({_datasets_by_name_sql(with_schemas)}) d ON ev.id IS NOT NULL"
    )


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
    # A name no dataset has may be another's alias (its symlinks): resolve it to that one.
    found.update(_select_aliased(missing))
    missing = [k for k in missing if k not in found]
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


# What the ingest reads of a dataset; the rest of the row loads on first access.
# owner_team_id: whether the event's token may write it (check_outputs).
_DATASET_FIELDS = ["id", "namespace", "name", "owner_team_id"]


@cache
def _dataset_columns() -> str:
    """The select list over a dataset row `t`: the fields above, then the
    flags other apps asked for (lineage.signals.dataset_flag), so that their
    listeners need not query again."""
    quote = connection.ops.quote_name
    return ", ".join([f"t.{quote(f)}" for f in _DATASET_FIELDS]
                     + [f"({sql}) AS {quote(name)}" for name, sql in dataset_flags().items()])


def _select_datasets(keys: list[tuple[str, str]]) -> dict[tuple[str, str], Dataset]:
    # Plain SQL: this runs for every event on SQLite, and compiling the
    # equivalent ORM query costs more than the query itself.
    where = " OR ".join(["(t.namespace = %s AND t.name = %s)"] * len(keys))
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {_dataset_columns()} FROM {connection.ops.quote_name(Dataset._meta.db_table)} t WHERE {where}",
                       [v for key in keys for v in key])
        return _datasets_from_rows(cursor.fetchall())


def _select_aliased(keys: list[tuple[str, str]]) -> dict[tuple[str, str], Dataset]:
    """{alias key: the dataset it names} for those of `keys` that are aliases."""
    where = " OR ".join(["(a.namespace = %s AND a.name = %s)"] * len(keys))
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT a.namespace, a.name, {_dataset_columns()} FROM {DatasetAlias._meta.db_table} a "
                       f"JOIN {quote(Dataset._meta.db_table)} t ON t.id = a.dataset_id WHERE {where}",
                       [v for key in keys for v in key])
        rows = cursor.fetchall()
    datasets = _datasets_from_rows([row[2:] for row in rows])
    by_pk = {d.pk: d for d in datasets.values()}
    return {(row[0], row[1]): by_pk[row[2]] for row in rows}


def _datasets_from_rows(rows: list) -> dict[tuple[str, str], Dataset]:
    flags = list(dataset_flags())
    width = len(_DATASET_FIELDS)
    found = {}
    for row in rows:
        obj = Dataset.from_db(DEFAULT_DB_ALIAS, _DATASET_FIELDS, row[:width])
        for name, value in zip(flags, row[width:], strict=True):
            setattr(obj, name, bool(value))
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
    by_key = {(namespace, name): Dataset.from_db(DEFAULT_DB_ALIAS, _DATASET_FIELDS, (pk, namespace, name, None))
              for pk, namespace, name in returned}
    return [by_key[k] for k in keys if k in by_key]


# The job and run statements take named parameters: a name used twice is sent once.

@cache
def _job_sql(*, inserted: bool = False) -> str:
    """The job upsert; with `inserted` (PostgreSQL) it also returns whether the row is new."""
    table = Job._meta.db_table
    return (
        f"INSERT INTO {table} (namespace, name, facets, created_at, updated_at) "
        "VALUES (%(job_namespace)s, %(job_name)s, %(job_facets)s, %(now)s, %(now)s) "
        "ON CONFLICT (namespace, name) DO UPDATE SET "
        f"facets = CASE WHEN %(has_job_facets)s THEN EXCLUDED.facets ELSE {table}.facets END, "
        "updated_at = EXCLUDED.updated_at RETURNING id" + (",xmax=0 AS new" if inserted else "")
    )


@cache
def _run_sql(*, job_from_cte: bool) -> str:
    """The run upsert; its job id comes from the CTE `job`, or is %(job_id)s."""
    # The stored run is `o`, and the rank of its state a short CASE (every state
    # but these three is final): this statement shares psycopg's 4 KiB parse
    # cache with the column usage written alongside it.
    old_rank = "CASE o.state WHEN 'NEW' THEN 0 WHEN 'START' THEN 1 WHEN 'RUNNING' THEN 2 ELSE 3 END"
    # Whether this event moves the run: a higher rank, or the same rank and not older.
    moves = f"(%(rank)s>{old_rank} OR (%(rank)s={old_rank} AND EXCLUDED.state_at>=o.state_at))"
    values = ("%(run_uuid)s,{job},%(state)s,%(state_at)s,%(started_at)s,%(ended_at)s,%(run_facets)s,%(now)s,"
              "%(token_id)s,CAST(%(token_team)s AS bigint)")
    source = (f"SELECT {values.format(job='job.id')} FROM job" if job_from_cte
              else f"VALUES ({values.format(job='%(job_id)s')})")
    return (
        f"INSERT INTO {Run._meta.db_table} AS o(run_uuid,job_id,state,state_at,started_at,ended_at,facets,created_at,"
        "token_id,token_team_id) "
        f"{source} "
        "ON CONFLICT (run_uuid) DO UPDATE SET "
        f"state=CASE WHEN {moves} THEN EXCLUDED.state ELSE o.state END,"
        f"state_at=CASE WHEN {moves} THEN EXCLUDED.state_at ELSE o.state_at END,"
        "started_at=CASE WHEN o.started_at IS NULL OR EXCLUDED.started_at<o.started_at "
        "THEN COALESCE(EXCLUDED.started_at,o.started_at) ELSE o.started_at END,"
        "ended_at=COALESCE(EXCLUDED.ended_at,o.ended_at),"
        "facets=CASE WHEN %(has_run_facets)s THEN EXCLUDED.facets ELSE o.facets END,"
        # The sender of the latest event stored.
        "token_id=EXCLUDED.token_id,token_team_id=EXCLUDED.token_team_id "
        "RETURNING id"
    )


def _job_and_run_params(parsed: ParsedEvent, now: datetime, writer: LineageWriter | None = None) -> dict[str, Any]:
    state = parsed.event_type if parsed.event_type in _STATE_RANK and parsed.event_type != RunState.NEW else None
    rank = _STATE_RANK.get(state, -1)
    event_time = _prep(Run, "state_at", parsed.event_time)
    return {
        "job_namespace": parsed.job_namespace, "job_name": parsed.job_name,
        "job_facets": _prep(Job, "facets", parsed.job_facets), "has_job_facets": bool(parsed.job_facets),
        "now": _prep(Run, "created_at", now),
        "run_uuid": _prep(Run, "run_uuid", parsed.run_uuid), "state": state or RunState.NEW, "rank": rank,
        "state_at": event_time,
        "started_at": event_time if parsed.event_type in (RunState.START, RunState.RUNNING) else None,
        "ended_at": event_time if rank == 3 else None,
        "run_facets": _prep(Run, "facets", parsed.run_facets), "has_run_facets": bool(parsed.run_facets),
        "token_id": writer.token_id if writer is not None else None,
        "token_team": writer.team_id if writer is not None else None,
    }


@cache
def _job_run_and_edges_sql(reads: bool = False, field_edges: bool = False) -> str:
    """The job, the run, both edge sets and, when the event has them, its column
    reads and field edges: one statement, one round trip (schemas, when the
    event changes one, follow in a statement of their own)."""
    usage = _usage_ctes((reads, field_edges))
    return (
        f"WITH job AS ({_job_sql(inserted=True)}), run AS ({_run_sql(job_from_cte=True)}), "
        # Terse from here on: psycopg caches the parsing of statements up to 4 KiB.
        f"je AS (INSERT INTO {JobDataset._meta.db_table}(job_id,direction,dataset_id,first_seen_at) "
        "SELECT job.id,e.d,e.i,%(now)s FROM job,unnest(%(directions)s::varchar[],%(dataset_ids)s::bigint[]) e(d,i) "
        "ORDER BY e.i,e.d ON CONFLICT(job_id,direction,dataset_id) DO NOTHING),"
        f"re AS (INSERT INTO {RunDataset._meta.db_table}(run_id,direction,dataset_id) "
        "SELECT run.id,e.d,e.i FROM run,unnest(%(directions)s::varchar[],%(dataset_ids)s::bigint[]) e(d,i) "
        "ORDER BY e.i,e.d ON CONFLICT(run_id,direction,dataset_id) DO NOTHING)"
        + "".join(f",{cte}" for cte in usage)
        + " SELECT job.id, run.id, job.new FROM job, run"
    )


def _upsert_job_run_and_edges(cursor, parsed: ParsedEvent, datasets: dict, now: datetime, usage: UsageRows,
                              writer: LineageWriter | None) -> tuple[int, int]:
    """PostgreSQL: the job, the run, both edge sets and the column usage in one
    statement (one round trip instead of four or more; each costs more than the
    statement's work). Returns the job's and the run's pk, and whether the job is new."""
    edges = _edges(parsed, datasets, usage)
    params = _job_and_run_params(parsed, now, writer)
    params["directions"] = [direction for _, direction in edges]
    params["dataset_ids"] = [dataset_id for dataset_id, _ in edges]
    if usage:
        params.update(_usage_params(usage, now, params["token_team"]))
    cursor.execute(_job_run_and_edges_sql(bool(usage.column_reads), bool(usage.field_edges)), params)
    job_pk, run_pk, new_job = cursor.fetchone()
    if usage.schemas or usage.input_schemas:
        cursor.execute(_schemas_statement(bool(usage.schemas), bool(usage.input_schemas)), {**params, "job_id": job_pk})
    return job_pk, run_pk, new_job


def _upsert_job_and_run(parsed: ParsedEvent, now: datetime, writer: LineageWriter | None = None) -> tuple[int, int]:
    """Elsewhere (SQLite): the job, then the run."""
    params = _job_and_run_params(parsed, now, writer)
    with connection.cursor() as cursor:
        cursor.execute(_job_sql(), params)
        params["job_id"] = cursor.fetchone()[0]
        cursor.execute(_run_sql(job_from_cte=False), params)
        return params["job_id"], cursor.fetchone()[0]


def _edges(parsed: ParsedEvent, datasets: dict, usage: UsageRows) -> list[tuple[int, str]]:
    """(dataset pk, direction), sorted: concurrent inserts take locks in one order.
    The inputs include those only the column evidence names (the tables an
    event's SQL reads that it does not list: dbt leaves out seeds)."""
    return sorted({(datasets[k].pk, Direction.INPUT.value) for k in {*parsed.inputs, *usage.inputs}}
                  | {(datasets[(o["namespace"], o["name"])].pk, Direction.OUTPUT.value) for o in parsed.outputs})


def _insert_edges(job_id: int, run_id: int, parsed: ParsedEvent, datasets: dict, now: datetime, usage: UsageRows) -> None:
    edges = _edges(parsed, datasets, usage)
    if not edges:
        return
    stamp = _prep(JobDataset, "first_seen_at", now)
    job_rows = ", ".join(["(%s, %s, %s, %s)"] * len(edges))
    run_rows = ", ".join(["(%s, %s, %s)"] * len(edges))
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {JobDataset._meta.db_table} (job_id, direction, dataset_id, first_seen_at) VALUES {job_rows} "
            "ON CONFLICT (job_id, direction, dataset_id) DO NOTHING",
            [v for dataset_id, direction in edges for v in (job_id, direction, dataset_id, stamp)],
        )
        cursor.execute(
            f"INSERT INTO {RunDataset._meta.db_table} (run_id, direction, dataset_id) VALUES {run_rows} "
            "ON CONFLICT (run_id, direction, dataset_id) DO NOTHING",
            [v for dataset_id, direction in edges for v in (run_id, direction, dataset_id)],
        )


# --- column usage: reads, field edges, schemas (lineage.column_usage) ------------------
#
# Each table's rows travel as one JSON parameter, an array of arrays (json.dumps
# is C; a dozen typed arrays cost psycopg more than the statement's work), and
# are written by one multi-row upsert: on PostgreSQL a CTE of the job/run
# statement (the JSON read once into typed rows), elsewhere a statement of its
# own. Upserts, not an UPDATE joined to the rows: the conflict is found through
# the unique index whatever the planner thinks of the table.
#
# A column read or field edge seen again within USAGE_REFRESH is left as it is,
# evidence included. (Its row is still locked until the event commits, as
# ON CONFLICT DO UPDATE does: only events of the same job share those rows.)
# A schema is written by the events that write its dataset and replaces the
# stored one when it differs; an event reading the dataset only fills a gap,
# with DO NOTHING, which locks nothing — else every reader of a popular dataset
# would queue on its row. The SQL is terse on purpose: psycopg caches the
# parsing of statements up to 4 KiB (a test pins it).
#
# The rows come sorted (lineage.column_usage): the order they are locked in.

_READ_TYPES = (("d", "bigint"), ("c", ""), ("k", ""), ("s", ""))
_EDGE_TYPES = (("d", "bigint"), ("f", ""), ("i", "bigint"), ("j", ""), ("k", ""), ("t", ""), ("x", ""),
               ("m", "boolean"), ("s", ""), ("p", "boolean"))
_SCHEMA_TYPES = (("d", "bigint"), ("f", "jsonb"), ("o", "boolean"), ("c", "boolean"), ("x", "jsonb"))
_READER_TYPES = (("d", "bigint"), ("h", ""), ("f", "jsonb"), ("c", "boolean"))


def _usage_sql(table: str, param: str, types: tuple, columns: str, select: str, conflict: str,
               update: str | None, *, where: str = "", job: bool = False) -> str:
    """One usage upsert. `select` names the rows' cells as x.<letter>; on
    PostgreSQL the rows come from the typed CTE `param`, on SQLite from json_each."""
    if on_postgresql():
        source = f"{'job,' if job else ''}{param} x"
    else:
        cells = ",".join(f"json_extract(r.value,'$[{i}]') AS {c}" for i, (c, _) in enumerate(types))
        source = f"(SELECT {cells} FROM json_each(%({param})s) r) x"
        select = select.replace("job.id", "%(job_id)s")
    # SQLite needs the WHERE to tell that ON CONFLICT belongs to the INSERT.
    sql = (f"INSERT INTO {table} AS t({columns}) SELECT {select} FROM {source} WHERE {where or 'true'} "
           f"ON CONFLICT({conflict}) ")
    return sql + (f"DO UPDATE SET {update}" if update else "DO NOTHING")


def _typed_rows(name: str, types: tuple) -> str:
    """PostgreSQL: a CTE `name` of the JSON parameter `name`'s rows, typed, read once."""
    cells = ",".join(f"(r.value->>{i})::{sql_type}" if sql_type else f"r.value->>{i}"
                     for i, (_, sql_type) in enumerate(types))
    return f"{name}({','.join(c for c, _ in types)}) AS (SELECT {cells} FROM json_array_elements(%({name})s::json) r)"


def _column_reads_sql() -> list[str]:
    team = "CAST(%(token_team)s AS bigint)"
    return [_usage_sql(
        ColumnRead._meta.db_table, "cr", _READ_TYPES,
        'dataset_id,job_namespace,job_name,"column",kind,source,token_team_id,run_uuid,event_time,first_seen_at,last_seen_at',
        f"x.d,%(job_namespace)s,%(job_name)s,x.c,x.k,x.s,{team},%(run_uuid)s,%(state_at)s,%(now)s,%(now)s",
        'dataset_id,job_namespace,job_name,"column",kind',
        "last_seen_at=EXCLUDED.last_seen_at,source=EXCLUDED.source,run_uuid=EXCLUDED.run_uuid,"
        "event_time=EXCLUDED.event_time,token_team_id=EXCLUDED.token_team_id WHERE t.last_seen_at<%(refresh_before)s")]


def _field_edges_sql() -> list[str]:
    return [_usage_sql(
        FieldEdge._meta.db_table, "fe", _EDGE_TYPES,
        "job_id,dataset_id,field,input_dataset_id,input_field,kind,subtype,description,masking,source,"
        "through_star,first_seen_at,last_seen_at",
        "job.id,x.d,x.f,x.i,x.j,x.k,x.t,x.x,x.m,x.s,x.p,%(now)s,%(now)s",
        "dataset_id,field,input_dataset_id,input_field,job_id,kind",
        "last_seen_at=EXCLUDED.last_seen_at,subtype=EXCLUDED.subtype,description=EXCLUDED.description,"
        "masking=EXCLUDED.masking,source=EXCLUDED.source,through_star=EXCLUDED.through_star "
        "WHERE t.last_seen_at<%(refresh_before)s", job=True)]


def _schemas_sql() -> list[str]:
    # With the columns, where they came from: this event's job, run and time.
    # A partial schema (x.c false: a field without a type) never replaces a complete one.
    # A statement of its own, after the job's (whose id it takes): schemas seldom
    # change, so most events send none, and the job/run statement stays under 4 KiB.
    table = DatasetSchema._meta.db_table
    fields, notes = ("x.f", "x.x") if on_postgresql() else ("json(x.f)", "json(x.x)")
    common = (table, "sc", _SCHEMA_TYPES, "dataset_id,fields,complete,columns,origin,job_id,run_uuid,event_time,updated_at",
              f"x.d,{fields},x.c,{notes},'run',%(job_id)s,%(run_uuid)s,%(state_at)s,%(now)s", "dataset_id")
    return [_usage_sql(*common, "fields=EXCLUDED.fields,complete=EXCLUDED.complete,columns=EXCLUDED.columns,"
                       "origin='run',job_id=EXCLUDED.job_id,run_uuid=EXCLUDED.run_uuid,event_time=EXCLUDED.event_time,"
                       "updated_at=EXCLUDED.updated_at WHERE t.columns<>EXCLUDED.columns AND (EXCLUDED.complete OR NOT t.complete)", where="x.o"),
            _usage_sql(*common, None, where="NOT x.o")]


def _input_schemas_sql() -> list[str]:
    # What a job sees of its inputs: rewritten only when the fingerprint changes, or to
    # move its last sighting on once USAGE_REFRESH has passed (what ages it out).
    fields = "x.f" if on_postgresql() else "json(x.f)"
    return [_usage_sql(
        InputSchema._meta.db_table, "rs", _READER_TYPES,
        "dataset_id,job_namespace,job_name,fingerprint,fields,complete,token_team_id,run_uuid,event_time,"
        "first_seen_at,last_seen_at",
        f"x.d,%(job_namespace)s,%(job_name)s,x.h,{fields},x.c,CAST(%(token_team)s AS bigint),%(run_uuid)s,"
        "%(state_at)s,%(now)s,%(now)s",
        "dataset_id,job_namespace,job_name",
        "fingerprint=EXCLUDED.fingerprint,fields=EXCLUDED.fields,complete=EXCLUDED.complete,"
        "token_team_id=EXCLUDED.token_team_id,run_uuid=EXCLUDED.run_uuid,event_time=EXCLUDED.event_time,"
        "last_seen_at=EXCLUDED.last_seen_at WHERE t.fingerprint<>EXCLUDED.fingerprint OR t.last_seen_at<%(refresh_before)s")]


@cache
def _schemas_statement(schemas: bool = True, readers: bool = False) -> str:
    """PostgreSQL: the schema upserts and the readers' input schemas that have rows, one
    statement over the typed rows (most events have neither: no statement at all)."""
    ctes = []
    if schemas:
        writer, filler = _schemas_sql()
        ctes += [_typed_rows("sc", _SCHEMA_TYPES), f"sc0 AS ({writer})", f"sc1 AS ({filler})"]
    if readers:
        ctes += [_typed_rows("rs", _READER_TYPES), f"rs0 AS ({_input_schemas_sql()[0]})"]
    return f"WITH {', '.join(ctes)} SELECT 1"


_USAGE = (("column_reads", "cr", _READ_TYPES, _column_reads_sql), ("field_edges", "fe", _EDGE_TYPES, _field_edges_sql),
          ("schemas", "sc", _SCHEMA_TYPES, _schemas_sql), ("input_schemas", "rs", _READER_TYPES, _input_schemas_sql))


def _usage_ctes(wanted: tuple[bool, bool]) -> list[str]:
    """PostgreSQL: the CTEs writing the column reads and field edges, for the tables that have rows."""
    ctes = []
    for (_, param, types, statements), has_rows in zip(_USAGE[:2], wanted, strict=True):
        if has_rows:
            ctes.append(_typed_rows(param, types))
            ctes.extend(f"{param}{i} AS ({sql})" for i, sql in enumerate(statements()))
    return ctes


def _usage_params(usage: UsageRows, now: datetime, team_id: int | None) -> dict[str, Any]:
    return {"token_team": team_id, "refresh_before": _prep(ColumnRead, "last_seen_at", now - USAGE_REFRESH),
            "cr": json.dumps(usage.column_reads), "fe": json.dumps(usage.field_edges), "sc": json.dumps(usage.schemas),
            "rs": json.dumps(usage.input_schemas)}


def _upsert_usage(job_id: int, parsed: ParsedEvent, usage: UsageRows, now: datetime, team_id: int | None) -> None:
    """Elsewhere (SQLite): the upserts of the usage tables that have rows, one statement each."""
    if not usage:
        return
    params = {**_job_and_run_params(parsed, now), **_usage_params(usage, now, team_id), "job_id": job_id}
    with connection.cursor() as cursor:
        for attribute, _, _, statements in _USAGE:
            if getattr(usage, attribute):
                for sql in statements():
                    cursor.execute(sql, params)

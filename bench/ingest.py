"""Ingest throughput: the app under its production server vs the same rows
written straight into PostgreSQL with psycopg.

    python bench/ingest.py [--clients 32] [--seconds 20] [--rounds 4]
                           [--warmup 3] [--server granian|gunicorn] [--workers 2] [--threads 8]
                           [--column-lineage off|on|both]

1. Creates a scratch database (BENCH_DATABASE_URL, default
   postgres://postgres@127.0.0.1:5432/reg_lineage_bench), migrates it, issues a
   lineage token, and starts the production server on a free port: granian
   (WSGI, as in the Dockerfile) or, for comparison, gunicorn (gthread workers).
2. `--clients` concurrent clients (threads spread over a few processes, each
   with a keep-alive connection) POST realistic RunEvents for `--seconds`: a
   START and a COMPLETE per run, 2 inputs, 1 output with the schema and
   outputStatistics facets, over a pool of 300 datasets, after `--warmup`
   seconds that are not counted (the first events create the datasets).
   With `--column-lineage on` the output also carries a columnLineage facet
   (5 fields from both inputs, 3 dataset-level INDIRECT inputs: 8 column
   reads and 6 field edges per event instead of 2 all/unknown reads); `both`
   runs a slice of each kind per round, on both sides, and prints their ratio.
   `--column-usage both` starts a second server with LINEAGE_COLUMN_USAGE=0
   and alternates slices between the two: the feature's own cost, as a ratio.
3. Counts acknowledged (201) events missing from the database (`lost`), at the end.
4. Writes the same rows for the same time straight into PostgreSQL with
   psycopg, from the same number of connections, one transaction per event,
   with the statements the app sends (raw event + dataset look-up, job + run +
   edges + column reads, field edges and schema, and on a COMPLETE the
   freshness row of the output; the raw event and the run name the token that
   sent them, as the app's rows do; the app's token check is not a row written,
   so the writer leaves it out). Column usage rows written less than a minute
   before are left out, as the app's server processes leave them out: the
   writers keep what the previous slices' writers wrote. Steps 2 and 4 alternate
   in `--rounds` slices, each side first in every other round, so that load from
   other processes on a shared machine falls on both alike, and so do the first
   rows of each job and dataset, which the side that runs first writes.

Prints a human summary with the CPU each side used per event (app server,
PostgreSQL, load generators; Linux), then one JSON line (last):
{"clients", "events_per_s", "p50_ms", "p99_ms", "errors", "lost",
 "db_direct_events_per_s", "ratio"}, and with `both` also
 "column_lineage_events_per_s", "column_lineage_db_direct_events_per_s",
 "column_lineage_psycopg_ratio" and "column_lineage_ratio" (events/s through
 the app with the facet over events/s without it); with `--column-usage both`
 "usage_off_events_per_s" and "column_usage_ratio" (events/s with column usage
 on over off, for the last kind of events).
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import multiprocessing as mp
import os
import pickle
import queue
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
from psycopg.types.json import Jsonb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, django_env, free_port, fresh_database, percentile, plain_url  # noqa: E402

PRODUCER = "https://github.com/OpenLineage/OpenLineage/tree/1.54.0/client/python"
FACET = "https://openlineage.io/spec/facets/1-2-0/SchemaDatasetFacet.json#/$defs/SchemaDatasetFacet"
STATS = "https://openlineage.io/spec/facets/1-0-2/OutputStatisticsOutputDatasetFacet.json"
DATASET_POOL = 300
NAMESPACE = "postgres://warehouse:5432"


COLUMN_LINEAGE = "https://openlineage.io/spec/facets/1-2-0/ColumnLineageDatasetFacet.json#/$defs/ColumnLineageDatasetFacet"


def column_lineage_facet(inputs: list[dict]) -> dict:
    """What Spark's integration sends for a join of two tables, filtered and aggregated."""
    def field(source: dict, name: str, kind: str, subtype: str) -> dict:
        return {"namespace": source["namespace"], "name": source["name"], "field": name,
                "transformations": [{"type": kind, "subtype": subtype, "description": "", "masking": False}]}
    orders, customers = inputs
    return {"_producer": PRODUCER, "_schemaURL": COLUMN_LINEAGE, "fields": {
        "id": {"inputFields": [field(orders, "id", "DIRECT", "IDENTITY")]},
        "customer_id": {"inputFields": [field(customers, "id", "DIRECT", "IDENTITY")]},
        "amount": {"inputFields": [field(orders, "amount", "DIRECT", "AGGREGATION")]},
        "status": {"inputFields": [field(orders, "status", "DIRECT", "IDENTITY"),
                                   field(customers, "segment", "DIRECT", "TRANSFORMATION")]},
        "created_at": {"inputFields": [field(orders, "created_at", "DIRECT", "IDENTITY")]},
    }, "dataset": [field(orders, "customer_id", "INDIRECT", "JOIN"), field(customers, "id", "INDIRECT", "JOIN"),
                   field(orders, "status", "INDIRECT", "FILTER")]}


def make_events(rng: random.Random, client: int, seq: int, column_lineage: bool = False) -> list[dict]:
    """START and COMPLETE of one run: 2 inputs, 1 output with schema + outputStatistics
    (and columnLineage)."""
    run_id = str(uuid.uuid4())
    job = {"namespace": "airflow", "name": f"pipeline_{client % 16}.task_{seq % 8}"}
    picks = rng.sample(range(DATASET_POOL), 3)
    inputs = [{"namespace": NAMESPACE, "name": f"analytics.public.table_{i}"} for i in picks[:2]]
    schema = {"_producer": PRODUCER, "_schemaURL": FACET, "fields": [
        {"name": "id", "type": "BIGINT"}, {"name": "customer_id", "type": "BIGINT"},
        {"name": "amount", "type": "DOUBLE PRECISION"}, {"name": "status", "type": "VARCHAR"},
        {"name": "created_at", "type": "TIMESTAMP"}]}
    now = datetime.now(UTC)
    events = []
    for event_type in ("START", "COMPLETE"):
        output = {"namespace": NAMESPACE, "name": f"analytics.public.table_{picks[2]}", "facets": {"schema": schema}}
        if column_lineage:
            output["facets"]["columnLineage"] = column_lineage_facet(inputs)
        if event_type == "COMPLETE":
            output["outputFacets"] = {"outputStatistics": {"_producer": PRODUCER, "_schemaURL": STATS,
                                                           "rowCount": rng.randint(1, 10**6), "size": rng.randint(1, 10**9)}}
        events.append({
            "eventType": event_type, "eventTime": now.isoformat(), "producer": PRODUCER,
            "schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
            "run": {"runId": run_id, "facets": {"nominalTime": {"_producer": PRODUCER,
                    "_schemaURL": "https://openlineage.io/spec/facets/1-0-1/NominalTimeRunFacet.json",
                    "nominalStartTime": now.isoformat()}}},
            "job": job, "inputs": inputs, "outputs": [output],
        })
    return events


# --- the load: processes of client threads, events built before the clock starts ---------

def _events_for(index: int, seconds: float, seed: int, column_lineage: bool) -> list[dict]:
    """More events than one client sends in `seconds` (at most 150 a second),
    built before the slice starts so that building them costs neither side."""
    rng = random.Random(seed + index)
    return [e for seq in range(max(2, int(seconds * 75))) for e in make_events(rng, index, seq, column_lineage)]


def _spread(clients: int) -> list[int]:
    processes = min(4, clients)
    return [clients // processes + (1 if i < clients % processes else 0) for i in range(processes)]


def _load(worker, args: tuple, clients: int, seconds: float) -> tuple[list, float]:
    """Run `worker(*args, threads, first_client, seconds, ready, go, out)` in a few
    processes; the clock starts once every process has built its events."""
    ready, out = mp.Queue(), mp.Queue()
    go = mp.Event()
    procs, first = [], 0
    for threads in _spread(clients):
        p = mp.Process(target=worker, args=(*args, threads, first, seconds, ready, go, out))
        p.start()
        procs.append(p)
        first += threads
    def fail(message: str) -> SystemExit:
        # The others would wait for the start (or the clock) forever.
        for p in procs:
            p.terminate()
        return SystemExit(message)

    for _ in procs:
        try:
            ready.get(timeout=120)
        except queue.Empty:
            raise fail("a load process died before starting; see its traceback above") from None
    started = time.time()
    go.set()
    try:
        results = [out.get(timeout=seconds + 120) for _ in procs]
    except queue.Empty:
        raise fail("a load process died; see its traceback above") from None
    elapsed = max(time.time() - started, seconds)
    for p in procs:
        p.join()
    return results, elapsed


def _in_threads(client, prepare, threads: int, first_client: int, seconds: float, seed: int, column_lineage: bool,
                ready: mp.Queue, go: mp.Event) -> tuple[list, float]:
    """Build each thread's events and `prepare(events)` them (encode, connect), wait for
    the start, run `client(index, prepared, deadline)` in every thread; returns their
    results and the CPU this process used meanwhile."""
    work = {first_client + i: prepare(_events_for(first_client + i, seconds, seed, column_lineage)) for i in range(threads)}
    ready.put(True)
    go.wait()
    cpu_before, deadline = time.process_time(), time.time() + seconds
    results: list = [None] * threads

    def run(i: int) -> None:
        try:
            results[i] = client(first_client + i, work[first_client + i], deadline)
        except Exception as exc:  # noqa: BLE001 - report it, don't hang the run
            results[i] = exc

    pool = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    failed = [r for r in results if isinstance(r, Exception)]
    if failed:
        raise SystemExit(f"a client failed: {failed[0]!r}")
    return results, time.process_time() - cpu_before


# --- phase 1: through the app -------------------------------------------------------

class KeepAlive:
    """A minimal HTTP/1.1 client on one kept-alive connection: the request's bytes
    are built ahead, so the load generator takes as little of the shared CPU as it
    can (http.client took about 0.3 ms a request)."""

    def __init__(self, port: int):
        self.port, self.sock, self.buffer = port, None, b""

    def connect(self) -> None:
        self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def send(self, request: bytes) -> int:
        if self.sock is None:
            self.connect()
        self.sock.sendall(request)
        while b"\r\n\r\n" not in self.buffer:
            self.buffer += self._recv()
        head, _, rest = self.buffer.partition(b"\r\n\r\n")
        fields = dict(line.lower().split(b":", 1) for line in head.split(b"\r\n")[1:])
        if fields.get(b"transfer-encoding", b"").strip() == b"chunked":
            while b"0\r\n\r\n" not in rest:
                rest += self._recv()
            self.buffer = rest[rest.index(b"0\r\n\r\n") + 5:]
        else:
            length = int(fields.get(b"content-length", 0))
            while len(rest) < length:
                rest += self._recv()
            self.buffer = rest[length:]
        if fields.get(b"connection", b"").strip() == b"close":
            self.close()
        return int(head[9:12])

    def _recv(self) -> bytes:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        return chunk

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None


def _http_worker(port: int, secret: str, column_lineage: bool, threads: int, first_client: int, seconds: float,
                 ready: mp.Queue, go: mp.Event, out: mp.Queue) -> None:
    head = (f"POST /api/v1/lineage HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
            f"Authorization: Bearer {secret}\r\nContent-Length: ")

    def prepare(events: list[dict]) -> tuple[KeepAlive, list[tuple[dict, bytes]]]:
        conn = KeepAlive(port)
        conn.connect()
        return conn, [(e, (head + f"{len(body)}\r\n\r\n").encode() + body)
                      for e, body in ((e, json.dumps(e).encode()) for e in events)]

    def client(index: int, work: tuple, deadline: float) -> tuple[list, list, list]:
        conn, requests = work
        latencies, acked, errors = [], [], []
        for event, request in requests:
            if time.time() >= deadline:
                break
            started = time.perf_counter()
            try:
                status = conn.send(request)
            except OSError as exc:
                conn.close()
                errors.append(type(exc).__name__)
                continue
            latencies.append((time.perf_counter() - started) * 1000)
            if status == 201:
                acked.append((event["run"]["runId"], event["eventType"]))
            else:
                errors.append(str(status))
        conn.close()
        return latencies, acked, errors

    results, cpu = _in_threads(client, prepare, threads, first_client, seconds, 0, column_lineage, ready, go)
    out.put(([x for r in results for x in r[0]], [x for r in results for x in r[1]], [x for r in results for x in r[2]], cpu))


def through_the_app(port: int, secret: str, clients: int, seconds: float, column_lineage: bool = False) -> dict:
    results, elapsed = _load(_http_worker, (port, secret, column_lineage), clients, seconds)
    return {"latencies": [x for r in results for x in r[0]], "acked": [x for r in results for x in r[1]],
            "errors": [x for r in results for x in r[2]], "elapsed": elapsed, "client_cpu": sum(r[3] for r in results)}


# --- phase 2: straight into PostgreSQL -------------------------------------------------

def _direct_worker(url: str, freshness_sql: str, sender: tuple[int, int], team_id: int | None, column_lineage: bool,
                   written_dir: str, threads: int, first_client: int, seconds: float, ready: mp.Queue, go: mp.Event,
                   out: mp.Queue) -> None:
    def writer(index: int, work: tuple, deadline: float) -> tuple[int, float]:
        conn, events = work
        n = 0
        with conn:
            for event in events:
                if time.time() >= deadline:
                    break
                with conn.transaction():
                    write_event(conn, event, freshness_sql, team_id, sender)
                n += 1
            # The connection's server process lives as long as it: read its CPU before closing.
            return n, process_cpu(conn.info.backend_pid)

    # Connected before the clock starts, as the app's server keeps its connections.
    results, cpu = _in_threads(writer, lambda events: (psycopg.connect(url), events), threads, first_client, seconds,
                               10_000, column_lineage, ready, go)
    out.put((sum(r[0] for r in results), cpu, sum(r[1] for r in results)))
    # What this process wrote lately, for the next slice's writers (after the clock: not timed).
    now = time.monotonic()
    with open(Path(written_dir) / f"{os.getpid()}.pickle", "wb") as f:
        pickle.dump({key: at for key, at in _written.items() if now - at < 60}, f)


DATASET_COLUMNS = "t.id, t.namespace, t.name"
RANKS = "WHEN 'NEW' THEN 0 WHEN 'START' THEN 1 WHEN 'RUNNING' THEN 2 WHEN 'COMPLETE' THEN 3 WHEN 'FAIL' THEN 3 WHEN 'ABORT' THEN 3"


def usage_rows(event: dict, found: dict) -> tuple[list[tuple], list[tuple], list[tuple]]:
    """The column reads, field edges and schemas the app writes for these events
    (lineage.column_usage, for the two shapes the load sends)."""
    reads, edges = set(), set()
    schemas = []
    for out in event["outputs"]:
        facets = out.get("facets") or {}
        out_id = found[(out["namespace"], out["name"])]
        if facets.get("schema"):
            fields = {f["name"]: f["type"] for f in facets["schema"]["fields"]}
            listed = [{"name": f["name"], "type": f["type"], "description": ""} for f in facets["schema"]["fields"]]
            schemas.append((out_id, json.dumps(fields, sort_keys=True), True, all(fields.values()), json.dumps(listed)))
        facet = facets.get("columnLineage")
        if not facet:
            continue
        for name, entry in facet["fields"].items():
            for source in entry["inputFields"]:
                t = source["transformations"][0]
                in_id = found[(source["namespace"], source["name"])]
                reads.add((in_id, source["field"], t["type"], "column_lineage"))
                edges.add((out_id, name, in_id, source["field"], t["type"], t["subtype"], t["description"],
                           t["masking"], "column_lineage"))
        for source in facet["dataset"]:
            reads.add((found[(source["namespace"], source["name"])], source["field"], "INDIRECT", "column_lineage"))
    spoken = {r[0] for r in reads}
    reads |= {(found[(d["namespace"], d["name"])], "", "DIRECT", "input") for d in event["inputs"]
              if found[(d["namespace"], d["name"])] not in spoken}
    # As the app does (lineage.column_usage.RecentlyWritten): what this process wrote
    # less than a minute ago is not sent again.
    job, at = (event["job"]["namespace"], event["job"]["name"]), time.monotonic()
    fresh = [r for r in reads if not _recent(("r", *job, r[0], r[1], r[2]), at)]
    new_edges = [e for e in edges if not _recent(("e", *job, *e[:5]), at)]
    new_schemas = [x for x in schemas if not _recent(("s", x[0], x[1]), at)]
    return (sorted(fresh, key=lambda r: (r[0], r[1], r[2])),
            sorted(new_edges, key=lambda e: (e[0], e[1], e[2], e[3], e[4])), sorted(new_schemas))


_written: dict[tuple, float] = {}
_written_dir: str | None = None


def _recent(key: tuple, at: float) -> bool:
    """Whether this writer process wrote `key` less than a minute ago; remembers it if not."""
    seen = _written.get(key)
    if seen is not None and at - seen < 60:
        return True
    _written[key] = at
    return False


def _usage_sql(reads: bool, edges: bool, schemas: bool) -> str:
    """The app's usage CTEs (lineage.ingest), positional: rows as one JSON parameter per
    table, typed once, upserted (a row seen within a minute left as it is)."""
    ctes = []
    if reads:
        ctes += [
            "cr(d,c,k,s) AS (SELECT (r.value->>0)::bigint,r.value->>1,r.value->>2,r.value->>3 "
            "FROM json_array_elements(%s::json) r)",
            'cr0 AS (INSERT INTO registry_columnread AS t(dataset_id,job_namespace,job_name,"column",kind,source,'
            "token_team_id,run_uuid,event_time,first_seen_at,last_seen_at) "
            "SELECT x.d,%s,%s,x.c,x.k,x.s,%s::bigint,%s,%s,%s,%s FROM cr x "
            'ON CONFLICT(dataset_id,job_namespace,job_name,"column",kind) DO UPDATE SET '
            "last_seen_at=EXCLUDED.last_seen_at,source=EXCLUDED.source,run_uuid=EXCLUDED.run_uuid,"
            "event_time=EXCLUDED.event_time,token_team_id=EXCLUDED.token_team_id WHERE t.last_seen_at<%s)"]
    if edges:
        ctes += [
            "fe(d,f,i,j,k,t,x,m,s) AS (SELECT (r.value->>0)::bigint,r.value->>1,(r.value->>2)::bigint,r.value->>3,"
            "r.value->>4,r.value->>5,r.value->>6,(r.value->>7)::boolean,r.value->>8 FROM json_array_elements(%s::json) r)",
            "fe0 AS (INSERT INTO lineage_fieldedge AS t(job_id,dataset_id,field,input_dataset_id,input_field,kind,"
            "subtype,description,masking,source,first_seen_at,last_seen_at) "
            "SELECT job.id,x.d,x.f,x.i,x.j,x.k,x.t,x.x,x.m,x.s,%s,%s FROM job,fe x "
            "ON CONFLICT(dataset_id,field,input_dataset_id,input_field,job_id,kind) DO UPDATE SET "
            "last_seen_at=EXCLUDED.last_seen_at,subtype=EXCLUDED.subtype,description=EXCLUDED.description,"
            "masking=EXCLUDED.masking,source=EXCLUDED.source WHERE t.last_seen_at<%s)"]
    if schemas:
        ctes += [
            "sc(d,f,o,c,x) AS (SELECT (r.value->>0)::bigint,(r.value->>1)::jsonb,(r.value->>2)::boolean,"
            "(r.value->>3)::boolean,(r.value->>4)::jsonb FROM json_array_elements(%s::json) r)",
            "sc0 AS (INSERT INTO lineage_datasetschema AS t(dataset_id,fields,complete,columns,origin,job_id,"
            "run_uuid,event_time,updated_at) SELECT x.d,x.f,x.c,x.x,'run',job.id,%s,%s,%s FROM job,sc x "
            "WHERE x.o ON CONFLICT(dataset_id) DO UPDATE SET fields=EXCLUDED.fields,complete=EXCLUDED.complete,"
            "columns=EXCLUDED.columns,origin='run',job_id=EXCLUDED.job_id,run_uuid=EXCLUDED.run_uuid,"
            "event_time=EXCLUDED.event_time,updated_at=EXCLUDED.updated_at WHERE t.columns<>EXCLUDED.columns "
            "AND (EXCLUDED.complete OR NOT t.complete))",
            "sc1 AS (INSERT INTO lineage_datasetschema AS t(dataset_id,fields,complete,columns,origin,job_id,"
            "run_uuid,event_time,updated_at) SELECT x.d,x.f,x.c,x.x,'run',job.id,%s,%s,%s FROM job,sc x "
            "WHERE NOT x.o ON CONFLICT(dataset_id) DO NOTHING)"]
    return "".join(f", {cte}" for cte in ctes)


def _usage_params(event: dict, rows: tuple, team_id: int, now: datetime, event_time: datetime) -> list:
    reads, edges, schemas = rows
    refresh = now - timedelta(minutes=1)
    params: list = []
    if reads:
        params += [json.dumps(reads), event["job"]["namespace"], event["job"]["name"], team_id, event["run"]["runId"],
                   event_time, now, now, refresh]
    if edges:
        params += [json.dumps(edges), now, now, refresh]
    if schemas:
        run_id = event["run"]["runId"]
        params += [json.dumps(schemas), run_id, event_time, now, run_id, event_time, now]
    return params


def write_event(conn: psycopg.Connection, event: dict, freshness_sql: str, team_id: int | None,
                sender: tuple[int | None, int | None] = (None, None)) -> None:
    """The rows the app writes for one event, with the statements it sends on
    PostgreSQL, prepared as it prepares them: raw event + dataset look-up,
    missing datasets (rarely), job + run + edges + column usage as one
    statement, and on a COMPLETE the freshness row of each output with the
    app's own statement (`freshness_sql`, read from the app). `team_id` None:
    column usage is off, its rows are left out. `sender`: the token and its
    team, which the raw event and the run record as the app's rows do."""
    now = datetime.now(UTC)
    checksum = hashlib.sha256(json.dumps(event, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    run_id = event["run"]["runId"]
    event_time = datetime.fromisoformat(event["eventTime"])
    keys = sorted({(d["namespace"], d["name"]) for d in event["inputs"] + event["outputs"]})
    where = " OR ".join(["(namespace = %s AND name = %s)"] * len(keys))
    key_params = [v for k in keys for v in k]
    rows = conn.execute(
        "WITH ev AS (INSERT INTO lineage_runevent (checksum, run_uuid, event_type, event_time, job_namespace, job_name, "
        "payload, received_at, token_id, token_team_id) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
        "ON CONFLICT (checksum, event_time) DO NOTHING RETURNING id) "
        f"SELECT ev.id, d.* FROM ev LEFT JOIN (SELECT {DATASET_COLUMNS} FROM registry_dataset t "
        "JOIN json_array_elements(CAST(%s AS json)) AS k(v) ON t.namespace = k.v->>0 AND t.name = k.v->>1) d ON true",
        (checksum, run_id, event["eventType"], event_time, event["job"]["namespace"], event["job"]["name"],
         Jsonb(event), now, *sender, json.dumps(keys)), prepare=True).fetchall()
    if not rows:
        return
    found = {(r[2], r[3]): r[1] for r in rows if r[1] is not None}
    missing = [k for k in keys if k not in found]
    if missing:
        values = ", ".join(["(%s, %s, '', NULL, NULL, 'BACKWARD', %s)"] * len(missing))
        for r in conn.execute(
            "INSERT INTO registry_dataset (namespace, name, description, owner_team_id, owner_id, compatibility_mode, "
            f"created_at) VALUES {values} ON CONFLICT (namespace, name) DO NOTHING RETURNING id, namespace, name",
            [v for k in missing for v in (*k, now)],
        ):
            found[(r[1], r[2])] = r[0]
        if any(k not in found for k in keys):
            for r in conn.execute(f"SELECT id, namespace, name FROM registry_dataset WHERE {where}", key_params):
                found[(r[1], r[2])] = r[0]
    edges = sorted({(found[(d["namespace"], d["name"])], "in") for d in event["inputs"]}
                   | {(found[(d["namespace"], d["name"])], "out") for d in event["outputs"]})
    directions, dataset_ids = [e[1] for e in edges], [e[0] for e in edges]
    state = event["eventType"]
    rank = {"START": 1, "RUNNING": 2, "COMPLETE": 3, "FAIL": 3, "ABORT": 3}.get(state, -1)
    moves = (f"(%s > (CASE lineage_run.state {RANKS} ELSE 0 END) OR "
             f"(%s = (CASE lineage_run.state {RANKS} ELSE 0 END) AND EXCLUDED.state_at >= lineage_run.state_at))")
    run_facets = event["run"].get("facets") or {}
    usage = usage_rows(event, found) if team_id is not None else ([], [], [])
    job_and_run = conn.execute(
        "WITH job AS (INSERT INTO lineage_job (namespace, name, facets, created_at, updated_at) VALUES (%s, %s, %s, %s, %s) "
        "ON CONFLICT (namespace, name) DO UPDATE SET facets = CASE WHEN %s THEN EXCLUDED.facets ELSE lineage_job.facets END, "
        "updated_at = EXCLUDED.updated_at RETURNING id, facets, created_at), "
        "run AS (INSERT INTO lineage_run (run_uuid, job_id, state, state_at, started_at, ended_at, facets, created_at, "
        "token_id, token_team_id) SELECT %s, job.id, %s, %s, %s, %s, %s, %s, %s, %s FROM job ON CONFLICT (run_uuid) DO UPDATE SET "
        f"state = CASE WHEN {moves} THEN EXCLUDED.state ELSE lineage_run.state END, "
        f"state_at = CASE WHEN {moves} THEN EXCLUDED.state_at ELSE lineage_run.state_at END, "
        "started_at = CASE WHEN lineage_run.started_at IS NULL OR EXCLUDED.started_at < lineage_run.started_at "
        "THEN COALESCE(EXCLUDED.started_at, lineage_run.started_at) ELSE lineage_run.started_at END, "
        "ended_at = COALESCE(EXCLUDED.ended_at, lineage_run.ended_at), "
        "facets = CASE WHEN %s THEN EXCLUDED.facets ELSE lineage_run.facets END, "
        "token_id = EXCLUDED.token_id, token_team_id = EXCLUDED.token_team_id "
        "RETURNING id, job_id, state, state_at, started_at, ended_at, created_at), "
        "je AS (INSERT INTO lineage_jobdataset (job_id, direction, dataset_id, first_seen_at) "
        "SELECT job.id, e.direction, e.dataset_id, %s FROM job, unnest(%s::varchar[], %s::bigint[]) AS e(direction, dataset_id) "
        "ORDER BY e.dataset_id, e.direction ON CONFLICT (job_id, direction, dataset_id) DO NOTHING), "
        "re AS (INSERT INTO lineage_rundataset (run_id, direction, dataset_id) "
        "SELECT run.id, e.direction, e.dataset_id FROM run, unnest(%s::varchar[], %s::bigint[]) AS e(direction, dataset_id) "
        "ORDER BY e.dataset_id, e.direction ON CONFLICT (run_id, direction, dataset_id) DO NOTHING)"
        + _usage_sql(*(bool(rows) for rows in usage))
        + " SELECT job.id, job.facets, job.created_at, run.id, run.state, run.state_at, run.started_at, run.ended_at, "
        "run.created_at FROM job, run",
        (event["job"]["namespace"], event["job"]["name"], Jsonb({}), now, now, False,
         run_id, state, event_time, event_time if rank in (1, 2) else None, event_time if rank == 3 else None,
         Jsonb(run_facets), now, *sender, rank, rank, rank, rank, bool(run_facets),
         now, directions, dataset_ids, directions, dataset_ids, *_usage_params(event, usage, team_id, now, event_time)),
        prepare=True).fetchone()
    assert job_and_run is not None
    if state == "COMPLETE":
        # The freshness row of each output (freshness.evaluation._record_routine_write).
        for d in event["outputs"]:
            stats = (d.get("outputFacets") or {}).get("outputStatistics") or {}
            conn.execute(freshness_sql, {"id": found[(d["namespace"], d["name"])], "at": min(event_time, now),
                                           "now": now, "rows": stats.get("rowCount")}, prepare=True).fetchone()



def straight_into_postgres(url: str, freshness_sql: str, sender: tuple[int, int], team_id: int | None, clients: int,
                           seconds: float, column_lineage: bool = False) -> dict:
    global _written_dir
    if _written_dir is None:
        _written_dir = tempfile.mkdtemp(prefix="ingest-bench-")
    results, elapsed = _load(_direct_worker, (url, freshness_sql, sender, team_id, column_lineage, _written_dir),
                             clients, seconds)
    # The app's server processes keep what they wrote (lineage.column_usage.RecentlyWritten) from
    # one slice to the next; the writers are new processes each slice, so they inherit what the
    # last slice's wrote, all of it (a little more than each server process knows).
    for path in Path(_written_dir).glob("*.pickle"):
        with open(path, "rb") as f:
            for key, at in pickle.load(f).items():
                _written[key] = max(at, _written.get(key, at))
        path.unlink()
    return {"events": sum(r[0] for r in results), "elapsed": elapsed, "client_cpu": sum(r[1] for r in results),
            "db_cpu": sum(r[2] for r in results)}


# --- where the CPU goes ------------------------------------------------------------------

_TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid: int | str) -> tuple[str, list[str]] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return None
    return stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) a live process has used (Linux /proc; 0 elsewhere)."""
    found = _stat(pid)
    return (int(found[1][11]) + int(found[1][12])) / _TICK if found else 0.0


def group_cpu(pgrp: int) -> float:
    """CPU seconds used so far by the live processes of a process group (the app server and its workers)."""
    pids = [p for p in os.listdir("/proc") if p.isdigit()] if os.path.isdir("/proc") else []
    return sum(process_cpu(int(p)) for p in pids if (found := _stat(p)) and int(found[1][2]) == pgrp)


def backends_cpu(database: str) -> float:
    """CPU seconds used so far by the live PostgreSQL server processes connected to `database`."""
    total = 0.0
    for pid in (p for p in os.listdir("/proc") if p.isdigit()) if os.path.isdir("/proc") else []:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                title = f.read().decode(errors="replace")
        except OSError:
            continue
        if title.startswith("postgres: ") and f" {database} " in title:
            total += process_cpu(int(pid))
    return total


# --- the run ----------------------------------------------------------------------------

def from_the_app(env: dict) -> tuple[str, str, int, int]:
    """A lineage token for the clients, and the app's freshness statement, the
    token and its team (which the raw events, runs and column usage record) for the writer."""
    code = ("import json\n"
            "from freshness.evaluation import _ROUTINE_WRITE_SQL\n"
            "from registry.models import ApiToken, Team\n"
            "team, _ = Team.objects.get_or_create(slug='pipelines', defaults={'name': 'Pipelines'})\n"
            "token, secret = ApiToken.issue('bench', team=team)\n"
            "print(json.dumps([secret, _ROUTINE_WRITE_SQL, token.pk, team.pk]))")
    out = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env, check=True,
                         capture_output=True, text=True)
    secret, freshness_sql, token_id, team_id = json.loads(out.stdout.strip().splitlines()[-1])
    return secret, freshness_sql, token_id, team_id


def wait_until_up(port: int, proc: subprocess.Popen, timeout: float = 120) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with {proc.returncode}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"the server did not answer /healthz within {timeout:.0f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=20, help="per phase, split over the rounds")
    parser.add_argument("--rounds", type=int, default=4,
                        help="alternate app and psycopg slices this many times, so load from other processes "
                             "on a shared machine falls on both alike (default 4)")
    parser.add_argument("--warmup", type=float, default=3, help="seconds of each side run first and not counted")
    parser.add_argument("--server", choices=["granian", "gunicorn"], default="granian",
                        help="granian (production, see the Dockerfile) or gunicorn with gthread workers")
    parser.add_argument("--workers", type=int, default=2, help="server worker processes (default 2: one per core)")
    parser.add_argument("--threads", type=int, default=8, help="threads per worker (granian blocking threads, "
                        "gunicorn gthread threads); default 8")
    parser.add_argument("--column-usage", choices=["on", "off", "both"], default="on",
                        help="the app's column usage (LINEAGE_COLUMN_USAGE): on (default), off (neither side writes "
                             "its rows), or both: two servers, one each way, in alternate slices (prints the ratio)")
    parser.add_argument("--column-lineage", choices=["off", "on", "both"], default="off",
                        help="events carry a columnLineage facet: never (default), always, or in alternate slices "
                             "of each kind (prints the ratio of their throughputs)")
    parser.add_argument("--smoke", action="store_true", help="4 clients, 1 worker, 1 s in 1 round: seconds, for CI")
    args = parser.parse_args()
    if args.smoke:
        args.clients, args.seconds, args.rounds, args.warmup, args.workers, args.threads = 4, 1.0, 1, 0.5, 1, 2
    kinds = {"off": [False], "on": [True], "both": [False, True]}[args.column_lineage]
    usages = {"on": [True], "off": [False], "both": [True, False]}[args.column_usage]
    variants = [(usage, kind) for usage in usages for kind in kinds]

    url = os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/reg_lineage_bench")
    print(f"Preparing {plain_url(url)} …", flush=True)
    fresh_database(plain_url(url))
    envs = {usage: django_env(plain_url(url) + "?conn_max_age=600", LINEAGE_COLUMN_USAGE=str(int(usage)))
            for usage in usages}
    secret, freshness_sql, token_id, team_id = from_the_app(envs[usages[0]])
    sender = (token_id, team_id)
    servers: dict[bool, tuple[subprocess.Popen, int]] = {}
    for usage in usages:
        port = free_port()
        if args.server == "granian":
            command = [sys.executable, "-m", "granian", "--interface", "wsgi", "registry.wsgi:application",
                       "--host", "127.0.0.1", "--port", str(port), "--workers", str(args.workers),
                       "--blocking-threads", str(args.threads), "--blocking-threads-idle-timeout", "600",
                       "--backlog", "2048", "--log-level", "warning"]
        else:
            command = [sys.executable, "-m", "gunicorn", "registry.wsgi:application", "--bind", f"127.0.0.1:{port}",
                       "--worker-class", "gthread", "--workers", str(args.workers), "--threads", str(args.threads),
                       "--backlog", "2048", "--keep-alive", "30", "--log-level", "warning"]
        servers[usage] = (subprocess.Popen(command, cwd=ROOT, env=envs[usage], start_new_session=True), port)
    slice_seconds = args.seconds / args.rounds
    apps = {v: {"latencies": [], "acked": [], "errors": [], "elapsed": 0.0, "client_cpu": 0.0, "server_cpu": 0.0,
                "db_cpu": 0.0} for v in variants}
    directs = {v: {"events": 0, "elapsed": 0.0, "client_cpu": 0.0, "db_cpu": 0.0} for v in variants}
    database = urlsplit(plain_url(url)).path.lstrip("/")

    def label(variant: tuple[bool, bool]) -> str:
        usage, kind = variant
        return " ".join(filter(None, ["+columnLineage" if kind else "",
                                      "(usage off)" if not usage and len(usages) > 1 else ""]))

    def writer_team(usage: bool) -> int | None:
        return team_id if usage else None  # None tells the writer to leave the column usage rows out

    try:
        for proc, port in servers.values():
            wait_until_up(port, proc)
        print(f"{args.server} ({args.workers} workers × {args.threads} threads) ×{len(servers)}; {args.clients} clients; "
              f"{args.rounds} rounds of {slice_seconds:.1f}s per variant, through the app, then straight into "
              f"PostgreSQL; column usage {args.column_usage}, columnLineage {args.column_lineage}", flush=True)
        if args.warmup > 0:
            # Not counted: the first events create the datasets, their freshness
            # rows and each connection's prepared statements.
            for usage, kind in variants:
                through_the_app(servers[usage][1], secret, args.clients, args.warmup, kind)
                straight_into_postgres(plain_url(url), freshness_sql, sender, writer_team(usage), args.clients, args.warmup,
                                       kind)

        def app_slice(variant: tuple[bool, bool]) -> str:
            usage, kind = variant
            app = apps[variant]
            server, port = servers[usage]
            server_before, db_before = group_cpu(server.pid), backends_cpu(database)
            part = through_the_app(port, secret, args.clients, slice_seconds, kind)
            app["server_cpu"] += group_cpu(server.pid) - server_before
            app["db_cpu"] += backends_cpu(database) - db_before
            for key in ("latencies", "acked", "errors"):
                app[key].extend(part[key])
            for key in ("elapsed", "client_cpu"):
                app[key] += part[key]
            return f"app{' ' + label(variant) if label(variant) else ''} {len(part['acked']) / part['elapsed']:.0f}/s"

        def direct_slice(variant: tuple[bool, bool]) -> str:
            usage, kind = variant
            part_direct = straight_into_postgres(plain_url(url), freshness_sql, sender, writer_team(usage), args.clients,
                                                 slice_seconds, kind)
            for key in ("events", "elapsed", "client_cpu", "db_cpu"):
                directs[variant][key] += part_direct[key]
            return (f"psycopg{' ' + label(variant) if label(variant) else ''} "
                    f"{part_direct['events'] / part_direct['elapsed']:.0f}/s")

        for round_no in range(1, args.rounds + 1):
            # Each variant first in every other round, so a drift of the machine's speed falls on all alike;
            # and each side: both write into one database, whose first rows of each job and dataset
            # (column reads, edges, schemas) the side that runs first pays for, the other then finds.
            order = variants if round_no % 2 else variants[::-1]
            sides = [app_slice, direct_slice] if round_no % 2 else [direct_slice, app_slice]
            line = [side(variant) for side in sides for variant in order]
            print(f"  round {round_no}: {', '.join(line)}", flush=True)
    finally:
        if _written_dir is not None:
            for path in Path(_written_dir).glob("*.pickle"):
                path.unlink()
            os.rmdir(_written_dir)
        for proc, _ in servers.values():
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                # A server that did not come up may not stop either; its workers must not outlive the run.
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()

    with psycopg.connect(plain_url(url)) as conn:
        stored = set(conn.execute("SELECT run_uuid::text, event_type FROM lineage_runevent").fetchall())
    figures = {v: _summary(apps[v], directs[v], stored, label(v)) for v in variants}
    result = {"clients": args.clients, **figures[variants[0]]}
    if args.column_lineage == "on":
        result["column_lineage"] = True
    if args.column_usage == "off":
        result["column_usage"] = False

    def ratio(a: tuple[bool, bool], b: tuple[bool, bool]) -> float | None:
        return round(figures[a]["events_per_s"] / figures[b]["events_per_s"], 3) if figures[b]["events_per_s"] else None

    usage = usages[0]
    if args.column_lineage == "both":
        with_facet = figures[(usage, True)]
        result.update({
            "column_lineage_events_per_s": with_facet["events_per_s"],
            "column_lineage_db_direct_events_per_s": with_facet["db_direct_events_per_s"],
            "column_lineage_psycopg_ratio": with_facet["ratio"],
            "column_lineage_errors": with_facet["errors"], "column_lineage_lost": with_facet["lost"],
            "column_lineage_ratio": ratio((usage, True), (usage, False)),
        })
        print(f"columnLineage events through the app: {result['column_lineage_ratio']} × the throughput of events "
              "without the facet")
    if args.column_usage == "both":
        kind = kinds[-1]
        off = figures[(False, kind)]
        result.update({
            "usage_off_events_per_s": off["events_per_s"], "usage_off_errors": off["errors"], "usage_off_lost": off["lost"],
            "column_usage_ratio": ratio((True, kind), (False, kind)),
        })
        print(f"{'columnLineage ' if kind else ''}events through the app with column usage on: "
              f"{result['column_usage_ratio']} × the throughput with it off (target ≥ 0.9)")
    print(json.dumps(result))


def _summary(app: dict, direct: dict, stored: set, label: str) -> dict:
    """Print one kind's figures; return its JSON fields."""
    lost = sum(1 for key in app["acked"] if key not in stored)
    events_per_s = len(app["acked"]) / app["elapsed"] if app["elapsed"] else 0.0
    direct_per_s = direct["events"] / direct["elapsed"] if direct["elapsed"] else 0.0
    suffix = f" ({label})" if label else ""
    print(f"app{suffix}: {len(app['acked'])} events in {app['elapsed']:.1f}s = {events_per_s:.0f}/s, "
          f"p50 {percentile(app['latencies'], 50):.1f} ms, p99 {percentile(app['latencies'], 99):.1f} ms, "
          f"{len(app['errors'])} errors, {lost} lost")
    if app["errors"]:
        print(f"  first errors: {app['errors'][:5]}")
    print(f"psycopg{suffix}: {direct['events']} events in {direct['elapsed']:.1f}s = {direct_per_s:.0f}/s")
    if app["acked"] and direct["events"]:
        per_app = {k: 1000 * app[k] / len(app["acked"]) for k in ("server_cpu", "db_cpu", "client_cpu")}
        per_direct = {k: 1000 * direct[k] / direct["events"] for k in ("db_cpu", "client_cpu")}
        print(f"CPU per event{suffix}: app server {per_app['server_cpu']:.2f} ms + PostgreSQL {per_app['db_cpu']:.2f} ms "
              f"+ HTTP clients {per_app['client_cpu']:.2f} ms; psycopg writers {per_direct['client_cpu']:.2f} ms "
              f"+ PostgreSQL {per_direct['db_cpu']:.2f} ms")
    return {
        "events_per_s": round(events_per_s, 1),
        "p50_ms": round(percentile(app["latencies"], 50), 2),
        "p99_ms": round(percentile(app["latencies"], 99), 2),
        "errors": len(app["errors"]),
        "lost": lost,
        "db_direct_events_per_s": round(direct_per_s, 1),
        "ratio": round(events_per_s / direct_per_s, 3) if direct_per_s else None,
    }


if __name__ == "__main__":
    main()

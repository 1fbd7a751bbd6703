"""A scale world: a registry the size of a large estate, built set-based in PostgreSQL.

    python bench/world.py --datasets 1000000 --events 10000000 --jobs 100000 [--smoke]

Re-creates BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/reg_world_bench),
migrates it, then fills it with `INSERT … SELECT … FROM generate_series` statements (no row
crosses the wire: minutes at a million datasets, not hours), in this shape:

- teams: one per 1,000 datasets (10 to 500), a member each; 50 warehouse namespaces;
- datasets: `postgres://wh<k>` / `schema<s>.table_<i>`, four in five owned by a team,
  one in three with a registered consumer team; a 20-column schema each;
- jobs (`--jobs`): a layered DAG like bench/lineage.py's — job j reads dataset j (and one
  in ten an earlier one) and writes datasets 3j+1..3j+3 — each with a completed run, its
  outputs, and column usage (3 columns read per input, DIRECT and INDIRECT);
- raw events (`--events`): START/COMPLETE pairs of those jobs' runs, spread over the last
  90 days, each a realistic OpenLineage payload (two inputs, one output with a schema);
- 2% of datasets with a freshness SLO (a fifth of them stale).

Prints each step's time and the last line is JSON: {"datasets", "events", "jobs", "seconds",
"database_mb"}. `build(url, …)` does the same for bench/scale.py.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import fresh_database, plain_url  # noqa: E402

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/reg_world_bench"
NAMESPACES = 50
COLUMNS = [f"col_{c:02d}" for c in range(20)]


def steps(datasets: int, events: int, jobs: int) -> list[tuple[str, str]]:
    teams = max(10, min(500, datasets // 1000))
    jobs = min(jobs, max(1, (datasets - 1) // 3))
    fields = json.dumps({c: ("BIGINT" if i == 0 else "VARCHAR" if i % 3 else "NUMERIC") for i, c in enumerate(COLUMNS)})
    columns = json.dumps([{"name": c, "type": "VARCHAR", "description": ""} for c in COLUMNS])
    payload = ("jsonb_build_object('eventType', CASE WHEN e % 2 = 0 THEN 'START' ELSE 'COMPLETE' END, "
               "'eventTime', to_char(t, 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'), "
               "'producer', 'https://github.com/OpenLineage/OpenLineage/tree/1.20.0/integration/airflow', "
               "'run', jsonb_build_object('runId', r.run_uuid), "
               "'job', jsonb_build_object('namespace', 'airflow', 'name', j.name), "
               "'inputs', jsonb_build_array(jsonb_build_object('namespace', d.namespace, 'name', d.name)), "
               f"'outputs', jsonb_build_array(jsonb_build_object('namespace', d.namespace, 'name', d.name || '_out', "
               f"'facets', jsonb_build_object('schema', jsonb_build_object('fields', '{columns}'::jsonb)))))")
    return [
        ("teams", f"""INSERT INTO registry_team (name, slug, description, created_at)
            SELECT 'Team ' || t, 'team-' || t, '', now() FROM generate_series(1, {teams}) t"""),
        ("datasets", f"""INSERT INTO registry_dataset (namespace, name, description, compatibility_mode, created_at, owner_team_id)
            SELECT 'postgres://wh' || (i % {NAMESPACES}), 'schema' || (i % 100) || '.table_' || lpad(i::text, 7, '0'),
                   'Table ' || i || ' of the warehouse, loaded nightly', 'BACKWARD', now() - (i % 1000) * interval '1 hour',
                   CASE WHEN i % 5 = 0 THEN NULL ELSE 1 + i % {teams} END
              FROM generate_series(0, {datasets - 1}) i"""),
        ("consumers", f"""INSERT INTO registry_consumer (registered_at, dataset_id, team_id)
            SELECT now(), d.id, 1 + (d.id + 7) % {teams} FROM registry_dataset d
             WHERE d.id % 3 = 0 AND d.owner_team_id IS DISTINCT FROM 1 + (d.id + 7) % {teams}"""),
        ("schemas", f"""INSERT INTO lineage_datasetschema (dataset_id, fields, updated_at, complete, columns, origin)
            SELECT id, '{fields}'::jsonb, now(), true, '[]'::jsonb, 'run' FROM registry_dataset"""),
        ("jobs", f"""INSERT INTO lineage_job (namespace, name, facets, created_at, updated_at)
            SELECT 'airflow', 'dag_' || (j % 200) || '.task_' || lpad(j::text, 7, '0'), '{{}}'::jsonb, now(), now()
              FROM generate_series(0, {jobs - 1}) j"""),
        ("job edges", f"""INSERT INTO lineage_jobdataset (job_id, direction, dataset_id, first_seen_at)
            SELECT id, 'in', id, now() FROM lineage_job
            UNION ALL
            SELECT id, 'in', 1 + (id * 7919) % (3 * (id - 1) + 1), now() FROM lineage_job
             WHERE id % 10 = 0 AND id > 1 AND 1 + (id * 7919) % (3 * (id - 1) + 1) <> id
            UNION ALL
            SELECT j.id, 'out', 3 * (j.id - 1) + k + 1, now() FROM lineage_job j, generate_series(1, 3) k
             WHERE 3 * (j.id - 1) + k + 1 <= {datasets}"""),
        ("runs", """INSERT INTO lineage_run (run_uuid, job_id, state, state_at, started_at, ended_at, facets, created_at)
            SELECT gen_random_uuid(), id, 'COMPLETE', now(), now() - interval '5 minutes', now(), '{}'::jsonb, now()
              FROM lineage_job"""),
        ("run outputs", """INSERT INTO lineage_rundataset (run_id, direction, dataset_id)
            SELECT r.id, 'out', e.dataset_id FROM lineage_run r JOIN lineage_jobdataset e ON e.job_id = r.job_id
             WHERE e.direction = 'out'"""),
        ("column usage", """INSERT INTO registry_columnread (job_namespace, job_name, "column", kind, source, run_uuid,
                                event_time, first_seen_at, last_seen_at, dataset_id)
            SELECT j.namespace, j.name, 'col_' || lpad(((e.dataset_id + c) % 20)::text, 2, '0'),
                   CASE WHEN c = 0 THEN 'DIRECT' ELSE 'INDIRECT' END, 'column_lineage', r.run_uuid, now(), now(), now(),
                   e.dataset_id
              FROM lineage_jobdataset e JOIN lineage_job j ON j.id = e.job_id JOIN lineage_run r ON r.job_id = j.id,
                   generate_series(0, 2) c
             WHERE e.direction = 'in'"""),
        # The months the events span get their partitions first, as beat would have made them
        # (else they all land in the default partition).
        ("raw event months", """SELECT lineage_runevent_add_month(m AT TIME ZONE 'UTC')
              FROM generate_series(date_trunc('month', (now() - interval '90 days') AT TIME ZONE 'UTC'),
                                   now() AT TIME ZONE 'UTC', interval '1 month') AS m
             WHERE to_regclass('lineage_runevent_p' || to_char(m, 'YYYYMM')) IS NULL"""),
        ("raw events", f"""INSERT INTO lineage_runevent (checksum, run_uuid, event_type, event_time, job_namespace, job_name,
                                payload, received_at)
            SELECT md5(e::text) || md5((e + 1)::text), r.run_uuid, CASE WHEN e % 2 = 0 THEN 'START' ELSE 'COMPLETE' END,
                   t, 'airflow', j.name, {payload}, t
              FROM generate_series(0, {events - 1}) e
              CROSS JOIN LATERAL (SELECT now() - (e::float / {max(events, 1)}) * interval '90 days' AS t) tt
              JOIN lineage_run r ON r.id = 1 + (e / 2) % {jobs}
              JOIN lineage_job j ON j.id = r.job_id
              JOIN registry_dataset d ON d.id = j.id"""),
        ("freshness SLOs", """INSERT INTO freshness_datasetfreshness (dataset_id, max_age, warn_after, empty_write_counts,
                                status, status_since, last_write_at, next_check_at)
            SELECT id, interval '1 day', interval '12 hours', false,
                   CASE WHEN id % 250 = 0 THEN 'stale' ELSE 'fresh' END, now(),
                   now() - CASE WHEN id % 250 = 0 THEN interval '2 days' ELSE interval '1 hour' END,
                   now() + interval '1 hour'
              FROM registry_dataset WHERE id % 50 = 0"""),
        ("analyze", "ANALYZE"),
    ]


def build(url: str, *, datasets: int, events: int, jobs: int, log=print) -> dict:
    """Re-create `url`'s database, migrate it and fill it; the figures of the build."""
    started = time.perf_counter()
    log(f"re-creating {plain_url(url).rsplit('/', 1)[1]} and migrating…")
    fresh_database(plain_url(url))
    with psycopg.connect(plain_url(url), autocommit=True) as conn:
        # The statements name rows by id from 1 (team 1 + i % teams, job j's dataset j): a
        # database copied from a template may have used ids already.
        for table in ("registry_team", "registry_dataset", "lineage_job", "lineage_run"):
            conn.execute(f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), 1, false)")
        for label, sql in steps(datasets, events, jobs):
            step = time.perf_counter()
            rows = conn.execute(sql).rowcount
            log(f"  {label}: {rows if rows >= 0 else ''} rows in {time.perf_counter() - step:.1f} s")
        size = conn.execute("SELECT pg_database_size(current_database())").fetchone()[0]
    return {"datasets": datasets, "events": events, "jobs": jobs,
            "seconds": round(time.perf_counter() - started, 1), "database_mb": round(size / 2**20)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=1_000_000)
    parser.add_argument("--events", type=int, default=10_000_000)
    parser.add_argument("--jobs", type=int, default=100_000)
    parser.add_argument("--smoke", action="store_true", help="1,000 datasets, 5,000 events, 100 jobs: seconds, for CI")
    args = parser.parse_args()
    if args.smoke:
        args.datasets, args.events, args.jobs = 1_000, 5_000, 100
    url = os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL)
    print(json.dumps(build(url, datasets=args.datasets, events=args.events, jobs=args.jobs,
                           log=lambda line: print(line, flush=True))))


if __name__ == "__main__":
    main()

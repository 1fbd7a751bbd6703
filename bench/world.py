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
- 2% of datasets with a freshness SLO (a fifth of them stale);
- 2% of datasets (owned ones) bound to a dataframe contract of their 20 columns, version 1.0
  published, each with a consumer team, each with its contract status (one in ten failing, with an open incident whose
  owner team and a consumer team are told); one contract in twenty has an open change request
  dropping a column, waiting for its dataset's consumer team.

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
sys.path.insert(1, str(Path(__file__).resolve().parent.parent / "client"))
from _common import fresh_database, plain_url  # noqa: E402
from registry_client.compat import check_compatibility  # noqa: E402

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/reg_world_bench"
NAMESPACES = 50
COLUMNS = [f"col_{c:02d}" for c in range(20)]


def contract_documents() -> tuple[dict, dict, dict]:
    """A dataframe contract of the world's 20 columns (its name filled in per dataset by SQL),
    the version 2.0 a change request proposes (the last column dropped), and the checker's
    report of that change, as the publish gate stores it."""
    dtypes = {"BIGINT": "int64", "VARCHAR": "str", "NUMERIC": "float64"}
    columns = [{"name": c, "dtype": dtypes["BIGINT" if i == 0 else "VARCHAR" if i % 3 else "NUMERIC"],
                "nullable": i != 0, "required": True, "unique": i == 0, "coerce": False, "checks": []}
               for i, c in enumerate(COLUMNS)]
    base = {"schema": {"name": "warehouse.tables.table", "domain": "warehouse", "subdomains": ["tables"],
                       "entity": "table", "version": "1.0", "owner": "team", "schema_type": "dataframe",
                       "description": "A warehouse table."},
            "meta": {"tier": "silver", "contract_type": "internal"},
            "config": {"strict": False, "coerce": False}, "columns": columns}
    proposed = {**base, "schema": {**base["schema"], "version": "2.0"}, "columns": columns[:-1]}
    return base, proposed, check_compatibility([base], proposed, "BACKWARD").to_dict()


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
        *contract_steps(),
        ("analyze", "ANALYZE"),
    ]


def contract_steps() -> list[tuple[str, str]]:
    """Contracts, their statuses and incidents, and open change requests (see the module's doc)."""
    base, proposed, report = (json.dumps(d).replace("'", "''") for d in contract_documents())
    # Each contract is named after its dataset: warehouse.<schema>.table_<n>.
    document = ("jsonb_set(jsonb_set(jsonb_set(jsonb_set('{doc}'::jsonb, '{{schema,name}}', to_jsonb('warehouse.' || "
                "split_part(d.name, '.', 1) || '.' || split_part(d.name, '.', 2))), '{{schema,subdomains}}', "
                "jsonb_build_array(split_part(d.name, '.', 1))), '{{schema,entity}}', to_jsonb(split_part(d.name, '.', 2))), "
                "'{{schema,owner}}', to_jsonb(t.slug))")
    owned, chosen = "FROM registry_dataset d JOIN registry_team t ON t.id = d.owner_team_id", "WHERE d.id % 50 = 2"
    contract_name = "'warehouse.' || split_part(d.name, '.', 1) || '.' || split_part(d.name, '.', 2)"
    return [
        ("contracts", f"""INSERT INTO contracts_app_contract (name, domain, subdomains, entity, schema_type, meta, owner_label,
                                description, created_at, owner_team_id, compatibility_mode)
            SELECT {contract_name}, 'warehouse', jsonb_build_array(split_part(d.name, '.', 1)), split_part(d.name, '.', 2),
                   'dataframe', '{{"tier": "silver", "contract_type": "internal"}}'::jsonb, t.slug, 'A warehouse table.',
                   now(), d.owner_team_id, 'BACKWARD' {owned} {chosen}"""),
        ("contract versions", f"""INSERT INTO contracts_app_contractversion (version, document, checksum, published_at,
                                store_key, uploaded_at, contract_id, upload_error, yaml_text)
            SELECT '1.0', doc, md5(doc::text), now() - interval '30 days', '', NULL, c.id, '', ''
              FROM (SELECT {document.format(doc=base)} AS doc {owned} {chosen}) x
              JOIN contracts_app_contract c ON c.name = x.doc #>> '{{schema,name}}'"""),
        ("bindings", f"""INSERT INTO contracts_app_datasetbinding (bound_at, contract_id, dataset_id)
            SELECT now() - interval '30 days', c.id, d.id {owned} JOIN contracts_app_contract c ON c.name = {contract_name}
             {chosen}"""),
        # A contract is there for its readers: every bound dataset has a consumer team.
        ("contract consumers", """INSERT INTO registry_consumer (registered_at, dataset_id, team_id)
            SELECT now(), d.id, CASE WHEN d.owner_team_id = 1 THEN 2 ELSE 1 END
              FROM contracts_app_datasetbinding b JOIN registry_dataset d ON d.id = b.dataset_id
             WHERE NOT EXISTS (SELECT 1 FROM registry_consumer c WHERE c.dataset_id = d.id)"""),
        ("contract statuses", """INSERT INTO incidents_contractstatus (dataset_id, contract_id, version, status, running, reasons,
                                checks, facts, evaluated_at)
            SELECT b.dataset_id, b.contract_id, '1.0', CASE WHEN b.dataset_id % 500 = 2 THEN 'failing' ELSE 'passing' END,
                   false, CASE WHEN b.dataset_id % 500 = 2 THEN '["col_01: not_null failed"]'::jsonb ELSE '[]'::jsonb END,
                   '[]'::jsonb, '{}'::jsonb, now() - interval '1 hour'
              FROM contracts_app_datasetbinding b"""),
        ("incidents", """INSERT INTO incidents_incident (dataset_id, cause, key, "column", state, summary, evidence, opened_at,
                                resolution)
            SELECT b.dataset_id, 'check_failed', 'col_01:not_null', 'col_01', 'open', 'not_null failed on col_01',
                   '{}'::jsonb, now() - interval '1 hour', ''
              FROM contracts_app_datasetbinding b WHERE b.dataset_id % 500 = 2"""),
        ("incident teams", """INSERT INTO incidents_incidentteam (incident_id, team_id, owner, paths)
            SELECT i.id, d.owner_team_id, true, '[]'::jsonb
              FROM incidents_incident i JOIN registry_dataset d ON d.id = i.dataset_id
            UNION ALL
            SELECT i.id, c.team_id, false, jsonb_build_array(jsonb_build_array(d.namespace || '/' || d.name))
              FROM incidents_incident i JOIN registry_dataset d ON d.id = i.dataset_id
              JOIN registry_consumer c ON c.dataset_id = d.id"""),
        ("open change requests", f"""INSERT INTO change_requests_changerequest (state, proposed_version, proposed_document,
                                report, summary, opened_by_label, opened_at, deadline_at, remind_at, finished_by_label,
                                closing_comment, base_version_id, contract_id, owner_team_id, routing_note, touched_columns)
            SELECT 'open', '2.0', jsonb_set(jsonb_set(v.document, '{{schema,version}}', '"2.0"'), '{{columns}}',
                   jsonb_path_query_array(v.document, '$.columns[0 to 18]')), '{report}'::jsonb, 'Drop col_19.',
                   'bench', now() - interval '1 day', now() + interval '6 days', now() + interval '4 days', '', '',
                   v.id, c.id, c.owner_team_id, '', '["col_19"]'::jsonb
              FROM contracts_app_contract c JOIN contracts_app_contractversion v ON v.contract_id = c.id
             WHERE c.id % 20 = 0"""),
        ("reviews", """INSERT INTO change_requests_teamreview (change_request_id, team_id, status, comment, responded_by_label,
                                block_overridden_by_label, block_override_reason)
            SELECT r.id, cons.team_id, 'pending', '', '', '', ''
              FROM change_requests_changerequest r JOIN contracts_app_datasetbinding b ON b.contract_id = r.contract_id
              JOIN registry_consumer cons ON cons.dataset_id = b.dataset_id"""),
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

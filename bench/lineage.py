"""Lineage graph queries: cost follows the neighbourhood, not the graph.

    python bench/lineage.py [--samples 200] [--smoke]

For each size (100, 1,000 and 10,000 datasets) a scratch database
(BENCH_DATABASE_URL + "_<size>", default
postgres://postgres@127.0.0.1:5432/reg_lineage_bench_<size>) gets a layered
graph: dataset i is read by job i, which writes the next three
datasets (fan-out 3); one job in ten also reads an earlier dataset chosen at
random, so the graph is a DAG (not a tree) about log3(n) layers deep. Every
dataset has a five-column schema and every job one completed run that wrote
its outputs, so each node carries Marquez's full payload (fields, times,
current version, a job's inputs, outputs and latest run).

It then times, interleaving the sizes in rounds, 1-hop downstream queries from
random datasets that have something downstream and 5-hop ones from datasets in
the upper layers:
- "api": `lineage.marquez.graph.marquez_graph(nodeId, depth, "downstream")`,
  the code behind GET /api/v1/lineage (node id resolution, the recursive walk,
  the nodes' full data, the Marquez-shaped answer);
- "raw_sql": the same statement (node resolution and the nodes' data
  included) sent with psycopg, prepared as the app prepares it, rows fetched and their
  json values decoded as the app's connections decode them (registry.db).

Prints a table, then one JSON line (last):
{"sizes": {"100": {"hop1_p50_ms", "hop1_p95_ms", "hop5_p50_ms", "hop5_p95_ms",
 "raw_hop5_p50_ms", "hop5_nodes_median"}, …}, "hop5_p50_ms_10000",
 "hop1_ratio_10000_vs_100", "api_vs_raw_sql_ratio"}
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import sys
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, fresh_database, percentile, plain_url  # noqa: E402

SIZES = (100, 1_000, 10_000)
NAMESPACE = "postgres://warehouse:5432"


def build(conn: psycopg.Connection, n: int, rng: random.Random) -> list[int]:
    """Write the layered graph; return the dataset pks that have something downstream."""
    conn.execute("TRUNCATE lineage_rundataset, lineage_jobdataset, lineage_run, lineage_runevent, lineage_job, "
                 "lineage_datasetschema, registry_dataset RESTART IDENTITY CASCADE")
    now = datetime.now(UTC)
    with conn.cursor() as cur:
        with cur.copy("COPY registry_dataset (namespace, name, description, compatibility_mode, created_at) FROM STDIN") as copy:
            for i in range(n):
                copy.write_row((NAMESPACE, f"warehouse.layered.table_{i:05d}", "", "BACKWARD", now))
        jobs = (n - 1) // 3
        with cur.copy("COPY lineage_job (namespace, name, facets, created_at, updated_at) FROM STDIN") as copy:
            for j in range(jobs):
                copy.write_row(("airflow", f"layered.job_{j:05d}", "{}", now, now))
        buffer = io.StringIO()
        for j in range(jobs):
            job_pk, reads = j + 1, {j}
            first_child = 3 * j + 1
            if first_child > 1 and rng.random() < 0.1:
                reads.add(rng.randrange(0, first_child))
            for d in sorted(reads):
                buffer.write(f"{job_pk}\tin\t{d + 1}\t{now.isoformat()}\n")
            for d in range(first_child, min(first_child + 3, n)):
                buffer.write(f"{job_pk}\tout\t{d + 1}\t{now.isoformat()}\n")
        with cur.copy("COPY lineage_jobdataset (job_id, direction, dataset_id, first_seen_at) FROM STDIN") as copy:
            copy.write(buffer.getvalue())
        columns = json.dumps({"id": "BIGINT", "amount": "NUMERIC", "created_at": "TIMESTAMP",
                              "customer": "VARCHAR", "status": "VARCHAR"})
        # Every field is typed: a complete schema; the columns the ORM defaults have no database default.
        with cur.copy("COPY lineage_datasetschema (dataset_id, fields, updated_at, complete, columns, origin) "
                      "FROM STDIN") as copy:
            for i in range(n):
                copy.write_row((i + 1, columns, now, True, "[]", "run"))
        with cur.copy("COPY lineage_run (run_uuid, job_id, state, state_at, started_at, ended_at, facets, "
                      "created_at) FROM STDIN") as copy:
            for j in range(jobs):
                copy.write_row((uuid.UUID(int=rng.getrandbits(128), version=4), j + 1, "COMPLETE", now, now, now,
                                "{}", now))
        with cur.copy("COPY lineage_rundataset (run_id, direction, dataset_id) FROM STDIN") as copy:
            for j in range(jobs):
                for d in range(3 * j + 1, min(3 * j + 4, n)):
                    copy.write_row((j + 1, "out", d + 1))
    for table in ("lineage_datasetschema", "lineage_run", "lineage_rundataset"):
        conn.execute(f"ANALYZE {table}")
    conn.execute("ANALYZE registry_dataset")
    conn.execute("ANALYZE lineage_jobdataset")
    conn.execute("ANALYZE lineage_job")
    conn.commit()
    return [j + 1 for j in range(jobs)]  # dataset j is read by job j: all of these have a downstream


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=200, help="queries per size, depth and kind")
    parser.add_argument("--rounds", type=int, default=5,
                        help="interleave the sizes in this many rounds, so load from other processes on a "
                             "shared machine falls on every size alike (default 5)")
    parser.add_argument("--smoke", action="store_true", help="sizes 100 and 300, 10 samples, 1 round: seconds, for CI")
    args = parser.parse_args()
    sizes = (100, 300) if args.smoke else SIZES
    if args.smoke:
        args.samples, args.rounds = 10, 1

    base = plain_url(os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/reg_lineage_bench"))
    urls = {n: f"{base}_{n}" for n in sizes}
    os.environ.update({"DATABASE_URL": urls[sizes[0]] + "?conn_max_age=600", "DEBUG": "0",
                       "SECRET_KEY": "bench-only-secret", "DJANGO_SETTINGS_MODULE": "registry.settings",
                       "LOG_LEVEL": "WARNING"})
    rng = random.Random(7)
    starts: dict[int, list[int]] = {}
    for n in sizes:
        print(f"Preparing {urls[n]} with {n} datasets …", flush=True)
        fresh_database(urls[n])
        with psycopg.connect(urls[n]) as conn:
            starts[n] = build(conn, n, rng)
    sys.path.insert(0, str(ROOT))
    # Load the app as the production server does (registry.wsgi: set-up, then gc.freeze()).
    from django.db import connection

    import registry.wsgi  # noqa: F401
    from lineage.graph import parse_node_id
    from lineage.marquez.graph import full_neighbourhood_sql, marquez_graph
    from registry.db import decode_json_with_orjson

    # JIT off, as the app's connections have it (registry.settings).
    raw = {n: psycopg.connect(urls[n], autocommit=True, options="-c jit=off") for n in sizes}
    for conn in raw.values():
        decode_json_with_orjson(conn.adapters)  # as the app's connections decode json values
    sql = full_neighbourhood_sql("dataset", "downstream")
    timings = {n: {"hop1": [], "hop5": [], "raw5": [], "nodes5": []} for n in sizes}
    per_round = max(1, args.samples // args.rounds)

    def node_id(pk: int) -> str:
        return f"dataset:{NAMESPACE}:warehouse.layered.table_{pk - 1:05d}"

    for round_no in range(1, args.rounds + 1):
        for n in sizes:
            connection.close()
            connection.settings_dict["NAME"] = urls[n].rsplit("/", 1)[1]
            top = starts[n][: max(10, len(starts[n]) // 20)]  # upper layers: five layers to go
            for pk in starts[n][:5]:  # warm the caches and prepare the statements
                marquez_graph(node_id(pk), depth=1, direction="downstream")
                marquez_graph(node_id(pk), depth=5, direction="downstream")
            for _ in range(per_round):
                pk = rng.choice(starts[n])
                started = time.perf_counter()
                marquez_graph(node_id(pk), depth=1, direction="downstream")
                timings[n]["hop1"].append((time.perf_counter() - started) * 1000)

                pk = rng.choice(top)
                started = time.perf_counter()
                answer = marquez_graph(node_id(pk), depth=5, direction="downstream")
                timings[n]["hop5"].append((time.perf_counter() - started) * 1000)
                timings[n]["nodes5"].append(len(answer["graph"]))

                _, splits = parse_node_id(node_id(pk))
                params = {"namespaces": [s[0] for s in splits], "names": [s[1] for s in splits], "depth": 5}
                started = time.perf_counter()
                raw[n].execute(sql, params, prepare=True).fetchall()
                timings[n]["raw5"].append((time.perf_counter() - started) * 1000)
        print(f"  round {round_no}/{args.rounds} done", flush=True)
    for conn in raw.values():
        conn.close()

    results: dict[str, dict] = {}
    for n in sizes:
        t = timings[n]
        figures = {
            "hop1_p50_ms": round(percentile(t["hop1"], 50), 3), "hop1_p95_ms": round(percentile(t["hop1"], 95), 3),
            "hop5_p50_ms": round(percentile(t["hop5"], 50), 3), "hop5_p95_ms": round(percentile(t["hop5"], 95), 3),
            "raw_hop5_p50_ms": round(percentile(t["raw5"], 50), 3), "raw_hop5_p95_ms": round(percentile(t["raw5"], 95), 3),
            "hop5_nodes_median": percentile(t["nodes5"], 50),
        }
        results[str(n)] = figures
        print(f"{n:>6} datasets: 1 hop p50 {figures['hop1_p50_ms']:.2f} ms p95 {figures['hop1_p95_ms']:.2f} | "
              f"5 hops p50 {figures['hop5_p50_ms']:.2f} ms p95 {figures['hop5_p95_ms']:.2f} "
              f"({figures['hop5_nodes_median']:.0f} nodes) | raw SQL 5 hops p50 {figures['raw_hop5_p50_ms']:.2f} ms")
    big, small = results[str(sizes[-1])], results[str(sizes[0])]
    print(json.dumps({
        "sizes": results,
        "hop5_p50_ms_10000": big["hop5_p50_ms"],
        "hop1_ratio_10000_vs_100": round(big["hop1_p50_ms"] / small["hop1_p50_ms"], 3),
        "api_vs_raw_sql_ratio": round(big["hop5_p50_ms"] / big["raw_hop5_p50_ms"], 3),
    }))


if __name__ == "__main__":
    main()

"""Every path at 10k, 100k (and 1M) datasets: does its cost follow the page or the world?

    python bench/scale.py [--sizes 10000,100000,1000000] [--samples 30] [--ingest-seconds 8] [--smoke]

For each size, builds a world with bench/world.py (`--events` 10 per dataset, `--jobs` one per
10 datasets; database BENCH_DATABASE_URL + "_<size>", dropped and re-created), then times in
this process, through Django's test client as a logged-in person (`registry.wsgi` loaded as
production loads it, DEBUG off), `--samples` requests of each:

- `home_first` / `home_page_100`: the home page's dataset list, first page and its 100th page
  (reached by following its Next link 99 times, untimed);
- `api_first` / `api_page_100`: `GET /api/datasets/?limit=100`, and its 100th page (reached
  by following `next` 99 times, untimed);
- `search_api` / `search_home`: a name fragment that matches one dataset, through the API
  and the home page's search box;
- `dataset_page`: `/datasets/<pk>/` of random datasets;
- `lineage_5hop_api` / `lineage_5hop_raw_sql`: the Marquez lineage of a dataset five hops
  downstream (`lineage.marquez.graph.marquez_graph`) and the same statement sent with psycopg,
  its json values decoded as the app's connections decode them, in the same run (as
  bench/lineage.py): what the API adds is the shaping of Marquez's payload;
- `metrics`: one `/metrics` scrape;
- `inbox`: the inbox page of a member of the first team (its waiting reviews and incidents);
- `impact`: the impact preview of one change (`POST /api/contracts/<name>/impact/`: a column
  dropped from a contract bound to a dataset with a consumer), as a member of the owner team;
- `preflight`: `GET /api/preflight?dataset=<id>` of random bound datasets, with a bearer token;
- `readings`: the readings page (`/readings/`) of that member, whose team is given 300 jobs of
  the world (`JobTeam`, the same number at every size: about three pages of datasets it reads);
- `catalogue`: the contract catalogue's first page (`/contracts/`, 2% of the datasets have one);
- `freshness_totals`: the freshness view (`/freshness/`): its totals by status and its first page;

and once, at the end, ingest events/s through the production server with the
database-direct floor in the same run (bench/ingest.py, short: its own database).

With `--buffers`, each path's figures add `buffers`: the shared buffers the statements of its
first (untimed) request touch, summed from an EXPLAIN (ANALYZE, BUFFERS) of each SELECT, after
the timed samples (JIT off, as the app's connections): the database's work, which the machine's
load does not move (for `dataset_page`, of the first random dataset).

Prints a line per figure and per size one JSON line {"size", "world", "p50_ms", "p95_ms",
"queries"}; the last line is JSON with every size and the ingest figures.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, percentile, plain_url  # noqa: E402
from world import build  # noqa: E402

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/reg_scale_bench"
METRICS_TOKEN = "bench-metrics-token"  # noqa: S105 - a scratch database's scraper


def timed(samples: int, fn) -> list[float]:
    fn()  # warm: caches, prepared statements
    out = []
    for _ in range(samples):
        started = time.perf_counter()
        fn()
        out.append((time.perf_counter() - started) * 1000)
    return out


def buffers_of(statements: list[tuple[str, object]]) -> int:
    """The shared buffers (hit or read) the SELECTs among `statements` touch, run again under
    EXPLAIN (ANALYZE, BUFFERS): a top node's count holds its children's."""
    from django.db import connection

    total = 0
    with connection.cursor() as cursor:
        cursor.execute("SET jit = off")
        for sql, params in statements:
            if not sql.lstrip().upper().startswith(("SELECT", "WITH", "(")):
                continue
            cursor.execute("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) " + sql, params)
            plan = cursor.fetchone()[0]
            top = (json.loads(plan) if isinstance(plan, str) else plan)[0]["Plan"]
            total += top.get("Shared Hit Blocks", 0) + top.get("Shared Read Blocks", 0)
    return total


def measure(url: str, size: int, samples: int, rng: random.Random, *, buffers: bool = False) -> dict:
    from django.db import connection
    from django.test import Client

    from contracts_app.models import Contract, DatasetBinding
    from lineage.graph import parse_node_id
    from lineage.marquez.graph import full_neighbourhood_sql, marquez_graph
    from lineage.models import Job
    from registry.db import decode_json_with_orjson
    from registry.jobs import JobTeam
    from registry.models import ApiToken, Dataset, Membership, Team

    connection.close()
    connection.settings_dict["NAME"] = plain_url(url).rsplit("/", 1)[1]
    # Each size starts as a server worker does (registry/wsgi.py): what is alive now,
    # earlier sizes' leftovers included, is frozen out of the collector's passes. Left
    # in them, they made each full collection of the later sizes slower (about 12 ms more
    # on a p95 at 1M, measured after 10k and 100k, than in a process of its own).
    gc.collect()
    gc.freeze()
    from django.contrib.auth import get_user_model

    # A run measuring a reused world finds the person an earlier run made.
    user, _ = get_user_model().objects.get_or_create(username=f"bench{size}")
    Membership.objects.get_or_create(team=Team.objects.order_by("pk").first(), user=user)
    client = Client()
    client.force_login(user)
    figures: dict[str, dict] = {}

    def record(name: str, fn, check=lambda r: r.status_code == 200) -> None:
        queries: list[tuple[str, object, bool]] = []  # counted by a wrapper: the test client's request_started empties queries_log

        def count(execute, sql, params, many, context):
            queries.append((sql, params, many))
            return execute(sql, params, many, context)

        with connection.execute_wrapper(count):
            response = fn()
        assert check(response), (name, getattr(response, "status_code", response))
        times = timed(samples, fn)
        figures[name] = {"p50_ms": round(statistics.median(times), 2), "p95_ms": round(percentile(times, 95), 2),
                         "queries": len(queries)}
        if buffers:
            figures[name]["buffers"] = buffers_of([(sql, params) for sql, params, many in queries if not many])
        print(f"  {size:>8} {name:<24} p50 {figures[name]['p50_ms']:>9.2f} ms  p95 {figures[name]['p95_ms']:>9.2f} ms"
              f"  {len(queries)} queries" + (f"  {figures[name]['buffers']} buffers" if buffers else ""), flush=True)

    record("home_first", lambda: client.get("/"))
    home_100 = "/"
    for _ in range(99):  # the home page's 100th page: its Next link followed 99 times, untimed
        found = re.search(r'href="\?([^"]*after=[^"]+)" rel="next"', client.get(home_100).content.decode())
        if not found:
            break
        home_100 = "/?" + found.group(1).replace("&amp;", "&")
    record("home_page_100", lambda: client.get(home_100))
    record("api_first", lambda: client.get("/api/datasets/?limit=100"))
    next_url = "/api/datasets/?limit=100"
    for _ in range(99):
        body = client.get(next_url).json()
        if not body.get("next"):
            break
        next_url = body["next"]
    record("api_page_100", lambda: client.get(next_url))
    target = Dataset.objects.order_by("pk")[size // 2]
    fragment = target.name.rsplit("_", 1)[1]  # the zero-padded number: one dataset
    record("search_api", lambda: client.get(f"/api/datasets/?search={fragment}"),
           check=lambda r: r.status_code == 200 and len(r.json()["results"]) >= 1)
    record("search_home", lambda: client.get(f"/?q={fragment}"))
    pks = list(Dataset.objects.order_by("?").values_list("pk", flat=True)[:50])
    record("dataset_page", lambda: client.get(f"/datasets/{rng.choice(pks)}/"))
    record("inbox", lambda: client.get("/inbox/"))
    contract = Contract.objects.filter(change_requests__isnull=True, bindings__isnull=False).order_by("pk").first()
    owner = get_user_model().objects.get_or_create(username=f"bench{size}-owner")[0]
    Membership.objects.get_or_create(team=contract.owner_team, user=owner)
    as_owner = Client()
    as_owner.force_login(owner)
    document = contract.versions.order_by("-published_at").first().document
    proposed = {**document, "schema": {**document["schema"], "version": "2.0"}, "columns": document["columns"][:-1]}
    record("impact", lambda: as_owner.post(f"/api/contracts/{contract.name}/impact/", proposed,
                                           content_type="application/json"),
           check=lambda r: r.status_code == 200 and r.json().get("affected") is not None)
    secret = ApiToken.issue(f"bench {size} preflight", team=contract.owner_team)[1]
    bound = list(DatasetBinding.objects.order_by("?").values_list("dataset_id", flat=True)[:50])
    record("preflight", lambda: client.get(f"/api/preflight?dataset={rng.choice(bound)}",
                                           HTTP_AUTHORIZATION=f"Bearer {secret}"),
           check=lambda r: r.status_code == 200 and "safe" in r.json())
    record("metrics", lambda: client.get("/metrics", HTTP_AUTHORIZATION=f"Bearer {METRICS_TOKEN}"))
    # The member's team reads what 300 jobs read, at every size: the page should cost the same.
    team = Team.objects.order_by("pk").first()
    for namespace, name in Job.objects.order_by("pk").values_list("namespace", "name")[:300]:
        JobTeam.objects.update_or_create(job_namespace=namespace, job_name=name,
                                         defaults={"team": team, "rule": "rules_file"})
    record("readings", lambda: client.get("/readings/"))
    record("catalogue", lambda: client.get("/contracts/"))
    record("freshness_totals", lambda: client.get("/freshness/"))

    # Five hops downstream from the upper layers (dataset j is read by job j, which writes 3j+1..3j+3).
    top = list(Dataset.objects.filter(pk__lte=12).order_by("pk").values_list("namespace", "name"))
    node_ids = [f"dataset:{ns}:{name}" for ns, name in top]
    # Both sides walk from the same start nodes, each as often (their walks differ in size):
    # each side's timed samples are one whole turn of the cycle, whatever calls went before.
    starts = [rng.choice(node_ids) for _ in range(samples)]
    api_starts, raw_starts = itertools.cycle(starts), itertools.cycle(starts)
    record("lineage_5hop_api", lambda: marquez_graph(next(api_starts), depth=5, direction="downstream"),
           check=lambda r: len(r["graph"]) > 1)
    sql = full_neighbourhood_sql("dataset", "downstream")
    # JIT off, as the app's connections have it (registry.settings): with it on, compiling
    # this statement cost ten times what running it does.
    with psycopg.connect(plain_url(url), autocommit=True, options="-c jit=off") as raw:
        # json values decoded as the app's connections decode them: the ratio is the shaping.
        decode_json_with_orjson(raw.adapters)

        def raw_walk():
            _, splits = parse_node_id(next(raw_starts))
            return raw.execute(sql, {"namespaces": [s[0] for s in splits], "names": [s[1] for s in splits], "depth": 5},
                               prepare=True).fetchall()
        times = timed(samples, raw_walk)
    figures["lineage_5hop_raw_sql"] = {"p50_ms": round(statistics.median(times), 2),
                                       "p95_ms": round(percentile(times, 95), 2), "queries": 1}
    print(f"  {size:>8} {'lineage_5hop_raw_sql':<24} p50 {figures['lineage_5hop_raw_sql']['p50_ms']:>9.2f} ms  "
          f"p95 {figures['lineage_5hop_raw_sql']['p95_ms']:>9.2f} ms", flush=True)
    return figures


def existing_world(url: str) -> int | None:
    """How many datasets the world at `url` holds, or None when there is no such database."""
    try:
        with psycopg.connect(plain_url(url)) as conn:
            return conn.execute("SELECT count(*) FROM registry_dataset").fetchone()[0]
    except psycopg.Error:
        return None


def ingest(url: str, seconds: float) -> dict:
    """bench/ingest.py, short, column usage on: the app's events/s and the database-direct floor."""
    env = {**os.environ, "BENCH_DATABASE_URL": plain_url(url) + "_ingest"}
    # A warm-up of 3 s, as bench/ingest.py's own: after 1 s each server process was still writing the
    # first rows of its datasets and jobs (their schemas, column reads, edges), and the app's first slice
    # ran at a third of its later rate (docs/benchmarks.md, "Ingest against its floor").
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "ingest.py"), "--seconds", str(seconds), "--rounds", "2",
                           "--warmup", str(min(3.0, seconds)), "--clients", "16"], env=env, capture_output=True, text=True,
                          check=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return {key: result.get(key) for key in ("events_per_s", "db_direct_events_per_s", "ratio", "errors", "lost")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--ingest-seconds", type=float, default=8)
    parser.add_argument("--reuse-worlds", action="store_true",
                        help="measure worlds a previous run built (same sizes) instead of building them again")
    parser.add_argument("--skip-ingest", action="store_true", help="leave out the ingest figures")
    parser.add_argument("--buffers", action="store_true",
                        help="add each path's shared buffers (EXPLAIN (ANALYZE, BUFFERS) of its SELECTs)")
    parser.add_argument("--smoke", action="store_true", help="one world of 1,000 datasets, 3 samples, 1 s of ingest")
    args = parser.parse_args()
    if args.smoke:
        args.sizes, args.samples, args.ingest_seconds = "1000", 3, 1
    base = plain_url(os.environ.get("BENCH_DATABASE_URL", DEFAULT_URL))
    sizes = [int(s) for s in args.sizes.split(",")]
    worlds = {}
    for size in sizes:
        if args.reuse_worlds and existing_world(f"{base}_{size}") == size:
            worlds[size] = {"datasets": size, "reused": True}
            continue
        worlds[size] = build(f"{base}_{size}", datasets=size, events=10 * size, jobs=max(10, size // 10),
                             log=lambda line: print(line, flush=True))
    os.environ.update({"DATABASE_URL": f"{base}_{sizes[0]}?conn_max_age=600", "DEBUG": "0",
                       "SECRET_KEY": "bench-only-secret", "DJANGO_SETTINGS_MODULE": "registry.settings",
                       "LOG_LEVEL": "WARNING", "ALLOWED_HOSTS": "testserver,127.0.0.1,localhost",
                       "METRICS_TOKEN": METRICS_TOKEN, "METRICS_CACHE_SECONDS": "0"})
    sys.path[:0] = [str(ROOT), str(ROOT / "client")]
    import registry.wsgi  # noqa: F401 - set up as the production server does

    rng = random.Random(7)
    results = {}
    for size in sizes:
        figures = measure(f"{base}_{size}", size, args.samples, rng, buffers=args.buffers)
        results[str(size)] = {"world": worlds[size], **figures}
        print(json.dumps({"size": size, "world": worlds[size], **figures}), flush=True)
    ingest_figures = None
    if not args.skip_ingest:
        print("ingest (bench/ingest.py, column usage on, its own database)…", flush=True)
        ingest_figures = ingest(base, args.ingest_seconds)
        print(f"  ingest {ingest_figures['events_per_s']}/s, database-direct floor "
              f"{ingest_figures['db_direct_events_per_s']}/s, ratio {ingest_figures['ratio']}", flush=True)
    if len(sizes) > 1:
        small, big = results[str(sizes[0])], results[str(sizes[-1])]
        growth = {name: round(big[name]["p95_ms"] / small[name]["p95_ms"], 2)
                  for name in small if name != "world" and name in big and small[name]["p95_ms"]}
    else:
        growth = {}
    print(json.dumps({"sizes": results, "p95_growth_largest_vs_smallest": growth, "ingest": ingest_figures}))


if __name__ == "__main__":
    main()
